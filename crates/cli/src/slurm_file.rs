//! Slurm machines named by file: `blocks:FILE`, `tree:FILE`, `ring:FILE`
//! and `torus3d:FILE` read a `topology.conf` or (`.yaml`, `.yml`)
//! `topology.yaml` file here (a torus only from `topology.yaml`), since
//! the text form of `Topology` never touches files. A YAML file with
//! several topologies takes `FILE#NAME`; without a name, its cluster
//! default. The machine keeps the path as its source, so it prints back as
//! the same `blocks:FILE`.

use std::path::Path;

use partalloc::topology::capacity::CapacityMachine;
use partalloc::topology::slurm::SlurmMachine;
use partalloc::topology::{Topology, TopologyKind};

use crate::error::CliError;

/// The Slurm machine a `--topology` value names, if it is `blocks:…`,
/// `tree:…`, `ring:…` or `torus3d:…`.
pub(crate) fn load(text: &str) -> Option<Result<Topology, CliError>> {
    let (family, rest) = text.trim().split_once(':')?;
    let kind = match family.trim().to_ascii_lowercase().as_str() {
        "blocks" => TopologyKind::Blocks,
        "tree" => TopologyKind::Tree,
        "ring" => TopologyKind::Ring,
        "torus3d" => TopologyKind::Torus3d,
        _ => return None,
    };
    Some(read(kind, rest.trim()))
}

/// `FILE,Ngpu`: the file and the GPUs per node of a capacity machine made
/// from a Slurm block or tree file, if `spec` ends so.
pub(crate) fn gpus_suffix(spec: &str) -> Option<(&str, &str)> {
    let (file, gpus) = spec.rsplit_once(',')?;
    let count = gpus.trim().strip_suffix("gpu")?;
    Some((file.trim(), count))
}

fn read(kind: TopologyKind, spec: &str) -> Result<Topology, CliError> {
    if matches!(kind, TopologyKind::Blocks | TopologyKind::Tree)
        && let Some((file, count)) = gpus_suffix(spec)
    {
        return read_with_gpus(kind, spec, file, count);
    }
    let is_yaml = |p: &str| {
        Path::new(p)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
    };
    let (file, name) = match spec.rsplit_once('#') {
        Some((f, n)) if is_yaml(f) => (f, Some(n)),
        _ => (spec, None),
    };
    if file.is_empty() {
        let example = match kind {
            TopologyKind::Tree => "tree-2level.conf",
            TopologyKind::Ring => "ring-4x8.conf",
            TopologyKind::Torus3d => "torus3d-4x4x4.yaml",
            _ => "blocks-8x18.conf",
        };
        return Err(CliError::input(format!(
            "--topology {kind}:FILE needs a topology.conf or topology.yaml file, e.g. {kind}:examples/{example}"
        )));
    }
    let path = Path::new(file);
    let body = crate::limits::read_text(path, crate::limits::FileKind::Config)?;
    let machine = if is_yaml(file) {
        SlurmMachine::parse_yaml(&body, spec, name)
    } else {
        SlurmMachine::parse_conf(&body, spec)
    }
    .map_err(|e| CliError::input(e.to_string()))?;
    let topology = Topology::from(machine);
    if topology.kind() != kind {
        return Err(CliError::input(format!(
            "{file} describes a {} machine; name it {}:{spec}",
            topology.kind(),
            topology.kind()
        )));
    }
    Ok(topology)
}

/// A capacity machine from a Slurm block or tree file (`blocks:FILE,4gpu`):
/// the file's nodes with `count` GPUs each, under its levels.
fn read_with_gpus(
    kind: TopologyKind,
    spec: &str,
    file: &str,
    count: &str,
) -> Result<Topology, CliError> {
    let gpus: i64 = count
        .trim()
        .parse()
        .ok()
        .filter(|&g| g >= 1)
        .ok_or_else(|| {
            CliError::input(format!(
                "--topology {kind}:{}: {:?} is not a GPU count; write FILE,Ngpu with N at least 1, e.g. {kind}:examples/blocks-8x18.conf,4gpu",
                partalloc::topology::echo(spec),
                partalloc::topology::echo(count)
            ))
        })?;
    let slurm = match read(kind, file)? {
        Topology::Slurm(m) => m,
        _ => {
            return Err(CliError::input(format!(
                "{file} is not a Slurm topology file"
            )));
        }
    };
    let machine = CapacityMachine::from_slurm(
        &slurm,
        &[(partalloc::topology::capacity::GPU_RESOURCE, gpus)],
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    Ok(machine
        .with_source(format!("{kind}:{file},{gpus}gpu"))
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> String {
        format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn conf_and_yaml_files_load_as_the_same_machine() {
        let conf = load(&format!("blocks:{}", example("blocks-8x18.conf")))
            .unwrap()
            .unwrap();
        let yaml = load(&format!("blocks:{}", example("blocks-8x18.yaml")))
            .unwrap()
            .unwrap();
        assert_eq!(conf.kind(), TopologyKind::Blocks);
        assert_eq!(
            conf.as_slurm().unwrap().to_conf(),
            yaml.as_slurm().unwrap().to_conf()
        );
        assert!(conf.to_string().ends_with("examples/blocks-8x18.conf"));
        let named = load(&format!("blocks:{}#racks", example("blocks-8x18.yaml")))
            .unwrap()
            .unwrap();
        assert_eq!(named.num_nodes(), 144);
        let tree = load(&format!("tree:{}", example("tree-2level.yaml")))
            .unwrap()
            .unwrap();
        assert_eq!((tree.kind(), tree.num_nodes()), (TopologyKind::Tree, 64));
    }

    #[test]
    fn ring_and_torus3d_files_load_with_their_prefixes() {
        let ring = load(&format!("ring:{}", example("ring-4x8.conf")))
            .unwrap()
            .unwrap();
        let yaml = load(&format!("ring:{}", example("ring-4x8.yaml")))
            .unwrap()
            .unwrap();
        assert_eq!((ring.kind(), ring.num_nodes()), (TopologyKind::Ring, 32));
        assert_eq!(
            ring.as_slurm().unwrap().to_conf(),
            yaml.as_slurm().unwrap().to_conf()
        );
        let torus = load(&format!("torus3d:{}", example("torus3d-4x4x4.yaml")))
            .unwrap()
            .unwrap();
        assert_eq!(
            (torus.kind(), torus.num_nodes()),
            (TopologyKind::Torus3d, 64)
        );
        assert!(torus.to_string().starts_with("torus3d:"));
        let e = load(&format!("tree:{}", example("ring-4x8.conf")))
            .unwrap()
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("describes a ring machine; name it ring:"),
            "{e}"
        );
    }

    #[test]
    fn wrong_family_missing_file_and_bad_text_are_one_line_errors() {
        assert!(load("mesh:4x4").is_none());
        let e = load(&format!("tree:{}", example("blocks-8x18.conf")))
            .unwrap()
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("describes a blocks machine; name it blocks:"),
            "{e}"
        );
        let e = load(&format!("blocks:{}#nope", example("blocks-8x18.yaml")))
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("no topology named \"nope\""), "{e}");
        assert!(load("blocks:").unwrap().is_err());
        assert!(load("blocks:/no/such/file.conf").unwrap().is_err());
    }
}
