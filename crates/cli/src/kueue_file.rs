//! Kueue machines named by file: `kueue:TOPOLOGY,NODES` reads a Kueue
//! `Topology` (its `spec.levels`) and a node list as `kubectl get nodes -o
//! yaml` prints it (`examples/kueue/topology.yaml`,
//! `examples/kueue/nodes.yaml`), since the text form of `Topology` never
//! touches files. The machine prints back as the same `kueue:…` text; its
//! nodes are its GPUs (see `CapacityMachine::unit_resource`).

use std::path::{Path, PathBuf};

use partalloc::topology::Topology;
use partalloc::topology::capacity::CapacityMachine;

use crate::error::CliError;

/// The two files of a `kueue:TOPOLOGY,NODES` value, if it is one.
pub(crate) fn files(text: &str) -> Option<(&str, &str)> {
    let (family, rest) = text.trim().split_once(':')?;
    if !family.trim().eq_ignore_ascii_case("kueue") {
        return None;
    }
    let (topology, nodes) = rest.split_once(',').unwrap_or((rest, ""));
    Some((topology.trim(), nodes.trim()))
}

/// The capacity machine a `--topology` value names, if it is `kueue:…`.
pub(crate) fn load(text: &str) -> Option<Result<Topology, CliError>> {
    let (topology, nodes) = files(text)?;
    Some(read(topology, nodes))
}

/// The node list a `kueue:…` value reads (the input an output must not
/// replace; the Topology file is a few lines).
pub(crate) fn nodes_file(text: &str) -> Option<PathBuf> {
    files(text).map(|(_, nodes)| PathBuf::from(nodes))
}

fn read(topology: &str, nodes: &str) -> Result<Topology, CliError> {
    if topology.is_empty() || nodes.is_empty() {
        return Err(CliError::input(
            "--topology kueue:TOPOLOGY,NODES needs a Kueue Topology file and a node list, e.g. kueue:examples/kueue/topology.yaml,examples/kueue/nodes.yaml",
        ));
    }
    let kind = crate::limits::FileKind::Config;
    let levels = crate::limits::read_text(Path::new(topology), kind)?;
    let list = crate::limits::read_text(Path::new(nodes), kind)?;
    let machine = CapacityMachine::from_kueue_yaml(&levels, topology, &list, nodes)
        .map_err(|e| CliError::input(e.to_string()))?;
    Ok(machine
        .with_source(format!("kueue:{topology},{nodes}"))
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_two_files_and_refuses_one() {
        assert_eq!(files("kueue:a.yaml,b.yaml"), Some(("a.yaml", "b.yaml")));
        assert_eq!(files("mesh:4x4"), None);
        let e = load("kueue:a.yaml").unwrap().unwrap_err().to_string();
        assert!(
            e.contains("needs a Kueue Topology file and a node list"),
            "{e}"
        );
    }
}
