//! The one error type of the tool: every failure becomes one line on
//! standard error and a non-zero exit code. A leaf: the error types of
//! the other modules live here too, so that this module depends on none of
//! them.

use std::io;
use std::path::{Path, PathBuf};

use partalloc::workload::swf::SwfError;
use thiserror::Error;

/// Why a command failed. Every message is one line.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum CliError {
    /// Bad input from the command line or a file.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error("{}: {source}", shown(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// An output path cannot be written (checked before any work).
    #[error("{flag} {}: {reason}", shown(.path))]
    OutputPath {
        /// The option that names it.
        flag: String,
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An output path is one of the command's inputs.
    #[error(
        "{flag} {}: that is the input {}; write the output to another file",
        shown(.path), shown(.input)
    )]
    OutputIsInput {
        /// The option that names the output.
        flag: String,
        /// The output.
        path: PathBuf,
        /// The input it is.
        input: PathBuf,
    },
    /// Two outputs are the same file.
    #[error(
        "{second} {}: the same file as {first}; give each output its own file",
        shown(.path)
    )]
    SameOutput {
        /// The first option naming the file.
        first: String,
        /// The second one.
        second: String,
        /// The path.
        path: PathBuf,
    },
    /// A trace line is malformed.
    #[error("{}: {source}", shown(.path))]
    Swf {
        /// The trace.
        path: PathBuf,
        /// The cause, with line and field.
        source: SwfError,
    },
    /// A simulation failed.
    #[error(transparent)]
    Sim(#[from] partalloc::simkit::SimError),
    /// A sweep file could not be opened, extended or finished.
    #[error(transparent)]
    Sweep(#[from] partalloc::simkit::SweepError),
    /// Shards could not be chosen or merged.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A statistic failed.
    #[error(transparent)]
    Stats(#[from] partalloc::simkit::StatsError),
}

/// Why a shard could not be chosen or the shards could not be merged.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum ShardError {
    /// `--shard` names more shards than the grid has points.
    #[error(
        "--shard {index}/{count}: the grid has only {points} points; use at most {points} shards"
    )]
    TooManyShards {
        /// The shard asked for.
        index: usize,
        /// The number of shards.
        count: usize,
        /// Points of the grid.
        points: usize,
    },
    /// A shard's record is absent: the shard has not finished.
    #[error(
        "{}: no shard record {}; the shard has not finished: run its --shard command again",
        shown(.file), shown(.record)
    )]
    NoRecord {
        /// The shard's CSV.
        file: PathBuf,
        /// The record expected beside it.
        record: PathBuf,
    },
    /// A shard's record cannot be read or contradicts itself.
    #[error("{}: {reason}", shown(.file))]
    BadRecord {
        /// The record.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Two shards come from different experiments.
    #[error(
        "{}: a shard of another experiment than {} (other grid or settings); merge shards of one experiment",
        shown(.file), shown(.first)
    )]
    Foreign {
        /// The odd shard.
        file: PathBuf,
        /// The first shard given.
        first: PathBuf,
    },
    /// Two shards split the grid differently.
    #[error(
        "{}: one of {count} shards, but {} is one of {first_count}; merge shards of one split",
        shown(.file), shown(.first)
    )]
    OtherSplit {
        /// The odd shard.
        file: PathBuf,
        /// Its number of shards.
        count: usize,
        /// The first shard given.
        first: PathBuf,
        /// Its number of shards.
        first_count: usize,
    },
    /// The same shard is given twice.
    #[error(
        "{}: shard {index} of {count} again (already given as {}); give each shard once",
        shown(.file), shown(.first)
    )]
    Duplicate {
        /// The second file.
        file: PathBuf,
        /// The shard index.
        index: usize,
        /// The number of shards.
        count: usize,
        /// The first file of that index.
        first: PathBuf,
    },
    /// Some shards are not given.
    #[error("{} of {count} shards missing: {names}", .missing)]
    Missing {
        /// How many are missing.
        missing: usize,
        /// The number of shards.
        count: usize,
        /// Their file names, comma-separated.
        names: String,
    },
    /// A shard's CSV differs from what its record says.
    #[error(
        "{}: changed since its shard finished (it does not match {}); run the shard again",
        shown(.file), shown(.record)
    )]
    Stale {
        /// The shard's CSV.
        file: PathBuf,
        /// Its record.
        record: PathBuf,
    },
    /// A shard's CSV cannot be parsed or has other columns.
    #[error("{}: {reason}", shown(.file))]
    BadCsv {
        /// The shard's CSV.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A Slurm option cannot go into a script.
    #[error("{option} {value:?}: {reason}")]
    BadOption {
        /// The option.
        option: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// `path` as a message shows it (the library's one sanitiser for paths,
/// [`partalloc::topology::echo_path`]).
pub(crate) fn shown(path: &Path) -> String {
    partalloc::topology::echo_path(path)
}

impl From<partalloc::topology::files::FileError> for CliError {
    fn from(e: partalloc::topology::files::FileError) -> Self {
        match e {
            partalloc::topology::files::FileError::Io { path, source } => Self::Io { path, source },
            e => Self::Input(e.to_string()),
        }
    }
}

impl From<partalloc_experiment::SourceError> for CliError {
    /// A machine description's own fault names the option that gave it.
    fn from(e: partalloc_experiment::SourceError) -> Self {
        use partalloc_experiment::SourceError;
        match e {
            SourceError::File(e) => e.into(),
            e @ SourceError::Description { .. } => Self::Input(format!("--topology {e}")),
            e => Self::Input(e.to_string()),
        }
    }
}

impl CliError {
    pub(crate) fn input(msg: impl Into<String>) -> Self {
        Self::Input(msg.into())
    }

    pub(crate) fn io(path: &Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn swf(path: &Path) -> impl FnOnce(SwfError) -> Self + '_ {
        move |source| Self::Swf {
            path: path.to_path_buf(),
            source,
        }
    }
}
