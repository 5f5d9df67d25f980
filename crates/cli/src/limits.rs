//! Bounds on what input can make the tool allocate.
//!
//! The topology parser accepts machines of up to 2^31 nodes, and counts on
//! the command line are 64-bit; the strategies keep per-node state, `show`
//! draws per node, and replications and recorded jobs are kept in memory.
//! Each size that comes from input is checked against a bound here before
//! anything of that size is allocated, so an oversized request ends with
//! one line naming what is too big and what is accepted (exit code 1)
//! rather than an aborted process.

use partalloc::topology::Topology;

use crate::error::CliError;

/// Largest machine a command builds strategies for (2^22 nodes: a
/// 2048×2048 mesh or a 22-cube). The strategies keep a few bytes to a few
/// dozen bytes per node, and `replay` and `sweep` hold several at once.
pub(crate) const MAX_MACHINE_NODES: usize = 1 << 22;

/// Largest machine `show` draws (2^20 nodes: a 1024×1024 mesh); its text
/// picture has one character per node.
pub(crate) const MAX_SHOW_NODES: usize = 1 << 20;

/// Largest number of cells `show --svg` draws one by one (a 128×128 mesh);
/// above it the SVG holds a summary instead.
pub(crate) const MAX_SVG_CELLS: usize = 1 << 14;

/// Most jobs `show` simulates to reach its `--at` time.
pub(crate) const MAX_SHOW_JOBS: usize = 1_000_000;

/// Most replications of one point (`simulate --seeds`, `seeds` of an
/// experiment); every replication's results are kept until the summary.
pub(crate) const MAX_SEEDS: u64 = 100_000;

/// Most jobs whose records are kept for `simulate --jobs-csv`.
pub(crate) const MAX_RECORDED_JOBS: u64 = 10_000_000;

/// Most jobs `generate` writes; the trace is built in memory and renamed
/// into place.
pub(crate) const MAX_GENERATED_JOBS: u64 = 10_000_000;

/// Refuses a machine above `max` nodes for `what` (e.g. "simulate").
pub(crate) fn check_machine(what: &str, topology: &Topology, max: usize) -> Result<(), CliError> {
    let nodes = topology.num_nodes();
    if nodes > max {
        return Err(CliError::input(format!(
            "{topology} has {nodes} nodes, too many for {what}: machines of at most {max} nodes (2^{}) are accepted",
            max.trailing_zeros()
        )));
    }
    Ok(())
}

/// Refuses a count above `max` given by `flag`.
pub(crate) fn check_count(flag: &str, value: u64, max: u64) -> Result<(), CliError> {
    if value > max {
        return Err(CliError::input(format!(
            "{flag} {value} is too large: at most {max} is accepted"
        )));
    }
    Ok(())
}

/// Parses a machine with [`crate::run::parse_topology`] and refuses it
/// above [`MAX_MACHINE_NODES`].
pub(crate) fn machine(what: &str, text: &str) -> Result<Topology, CliError> {
    let topology = crate::run::parse_topology(text)?;
    check_machine(what, &topology, MAX_MACHINE_NODES)?;
    Ok(topology)
}
