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
/// experiment): the library's bound, which Python enforces too.
pub(crate) const MAX_SEEDS: u64 = partalloc::simkit::MAX_REPLICATIONS;

/// Most jobs whose records are kept for `simulate --jobs-csv`: the
/// library's bound, which Python enforces too.
pub(crate) const MAX_RECORDED_JOBS: u64 = partalloc::simkit::MAX_RECORDED_JOBS;

/// Most worker threads (`--threads`): each costs a stack and start-up
/// time before any work, and results never depend on the count.
pub(crate) const MAX_THREADS: usize = 1024;

/// Most jobs `generate` writes; the trace is built in memory and renamed
/// into place.
pub(crate) const MAX_GENERATED_JOBS: u64 = 10_000_000;

/// Largest pod a command builds strategies for (2^16 chips, seven times
/// the largest pods built so far). Pod strategies keep counts per
/// catalogue orientation and chip, and a request costs time in the pod's
/// size: a pod of 2^22 chips took a minute for 20 jobs.
pub(crate) const MAX_POD_CHIPS: usize = 1 << 16;

/// Refuses a machine above `max` nodes for `what` (e.g. "simulate"), and
/// a pod above [`MAX_POD_CHIPS`].
pub(crate) fn check_machine(what: &str, topology: &Topology, max: usize) -> Result<(), CliError> {
    let nodes = topology.num_nodes();
    if topology.as_pod().is_some() && nodes > MAX_POD_CHIPS {
        return Err(CliError::input(format!(
            "{topology} has {nodes} chips, too many for {what}: pods of at most {MAX_POD_CHIPS} chips (2^16) are accepted"
        )));
    }
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

/// Largest configuration file read whole: an experiment, a pod file, a
/// Slurm `topology.conf` / `topology.yaml` (16 MiB; the largest real ones
/// are a few hundred KiB).
pub(crate) const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Largest `sacct` dump or shard file read whole (1 GiB, a few million
/// jobs or points).
pub(crate) const MAX_DATA_BYTES: u64 = 1 << 30;

/// What a file read whole is, for the message that refuses an oversized one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// An experiment, pod or topology file.
    Config,
    /// A `sacct` dump.
    Sacct,
    /// A sweep shard's CSV or record.
    Shard,
}

impl FileKind {
    fn max(self) -> u64 {
        match self {
            Self::Config => MAX_CONFIG_BYTES,
            Self::Sacct | Self::Shard => MAX_DATA_BYTES,
        }
    }

    fn advice(self) -> &'static str {
        match self {
            Self::Config => "is this the file you meant?",
            Self::Sacct => "split the dump by time (sacct -S/-E) and replay the parts",
            Self::Shard => "split the sweep into more shards",
        }
    }
}

/// Reads `path` whole, refusing it past `kind`'s size before reading
/// (from its metadata) and while reading (a device or FIFO has no size),
/// so `/dev/zero` or a multi-gigabyte file costs no memory.
pub(crate) fn read_bytes(path: &std::path::Path, kind: FileKind) -> Result<Vec<u8>, CliError> {
    use std::io::Read as _;
    let max = kind.max();
    let too_big = || {
        CliError::input(format!(
            "{}: larger than {} MiB, the most read for this kind of file; {}",
            crate::error::shown(path),
            max >> 20,
            kind.advice()
        ))
    };
    let file = std::fs::File::open(path).map_err(CliError::io(path))?;
    crate::output::register_input(path, &file);
    let meta = file.metadata().map_err(CliError::io(path))?;
    if meta.is_dir() {
        return Err(CliError::input(format!(
            "{}: a directory, not a file",
            crate::error::shown(path)
        )));
    }
    if meta.len() > max {
        return Err(too_big());
    }
    // The metadata length is a hint for regular files only; cap the
    // initial capacity either way.
    let hint = usize::try_from(meta.len().min(max)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(hint);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(CliError::io(path))?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub(crate) fn read_text(path: &std::path::Path, kind: FileKind) -> Result<String, CliError> {
    let bytes = read_bytes(path, kind)?;
    String::from_utf8(bytes).map_err(|e| {
        CliError::input(format!(
            "{}: not UTF-8 text (byte {} is invalid)",
            crate::error::shown(path),
            e.utf8_error().valid_up_to()
        ))
    })
}
