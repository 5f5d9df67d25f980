//! What `show` adds on a Slurm block or tree machine at a moment: its
//! stranded nodes (free in partly busy racks or leaf switches; a run's
//! time average is the `slurm` measure of `partalloc_simkit::measure`).

use partalloc::simkit::slurm::stranded_nodes;
use partalloc::topology::{NodeSet, Topology};

/// For `show` on a Slurm machine: "; 12 stranded nodes (free in partly
/// busy racks or leaf switches)" for the nodes `owner` marks busy.
pub(crate) fn state_line(topology: &Topology, owner: &[Option<usize>]) -> Option<String> {
    let machine = topology.as_slurm()?;
    let mut busy = NodeSet::new(owner.len());
    for (n, o) in owner.iter().enumerate() {
        if o.is_some() {
            let _ = busy.insert(u32::try_from(n).ok()?);
        }
    }
    let domains = if machine.tree().is_some() {
        "leaf switches"
    } else {
        "base blocks"
    };
    let n = stranded_nodes(machine, &busy);
    Some(format!(
        "; {n} stranded node{} (free in partly busy {domains})",
        if n == 1 { "" } else { "s" }
    ))
}
