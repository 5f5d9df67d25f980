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

/// Largest machine a command builds strategies for (the library's bound,
/// [`partalloc_experiment::machine::MAX_MACHINE_NODES`]).
pub(crate) const MAX_MACHINE_NODES: usize = partalloc_experiment::machine::MAX_MACHINE_NODES;

/// Largest machine `show` draws (2^20 nodes: a 1024×1024 mesh); its text
/// picture has one character per node.
pub(crate) const MAX_SHOW_NODES: usize = 1 << 20;

/// Largest number of cells `show --svg` draws one by one (a 128×128 mesh);
/// above it the SVG holds a summary instead.
pub(crate) const MAX_SVG_CELLS: usize = 1 << 14;

/// Most jobs `show` simulates to reach its `--at` time.
pub(crate) const MAX_SHOW_JOBS: usize = 1_000_000;

/// Most replications of one point (`simulate --seeds`, `seeds` of an
/// experiment): the library's bound, which Python enforces too.
pub(crate) const MAX_SEEDS: u64 = partalloc::simkit::MAX_REPLICATIONS;

/// Most worker threads (`--threads`): each costs a stack and start-up
/// time before any work, and results never depend on the count.
pub(crate) const MAX_THREADS: usize = 1024;

/// Most jobs `generate` writes and a model draws per run (the library's
/// bound, which Python enforces too).
pub(crate) const MAX_GENERATED_JOBS: u64 = partalloc_experiment::experiment::MAX_GENERATED_JOBS;

/// Refuses a machine above `max` nodes for `what` (e.g. "show"), and a
/// pod above the library's bound.
pub(crate) fn check_machine(what: &str, topology: &Topology, max: usize) -> Result<(), CliError> {
    Ok(partalloc_experiment::machine::check_machine(
        what, topology, max,
    )?)
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

/// Reads a machine (the library's [`partalloc_experiment::MachineSource`])
/// and refuses it above [`MAX_MACHINE_NODES`].
pub(crate) fn machine(what: &str, text: &str) -> Result<Topology, CliError> {
    Ok(partalloc_experiment::MachineSource::parse(text).load(what, MAX_MACHINE_NODES)?)
}

pub(crate) use partalloc_experiment::files::FileKind;

/// Reads `path` whole within `kind`'s bound, as an input of the run
/// ([`partalloc_experiment::files::read_bytes`]).
pub(crate) fn read_bytes(path: &std::path::Path, kind: FileKind) -> Result<Vec<u8>, CliError> {
    Ok(partalloc_experiment::files::read_bytes(path, kind)?)
}

/// [`read_bytes`] as UTF-8 text.
pub(crate) fn read_text(path: &std::path::Path, kind: FileKind) -> Result<String, CliError> {
    Ok(partalloc_experiment::files::read_text(path, kind)?)
}
