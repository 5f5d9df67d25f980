//! The one error type of the tool: every failure becomes one line on
//! standard error and a non-zero exit code.

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
    Shard(#[from] crate::shard::ShardError),
    /// A statistic failed.
    #[error(transparent)]
    Stats(#[from] partalloc::simkit::StatsError),
}

/// Most characters of a path a message repeats: real paths stay whole, a
/// megabyte of path (an experiment file's `output`) does not flood stderr.
const PATH_CHARS: usize = 512;

/// `path` as a message shows it: whole up to [`PATH_CHARS`] characters,
/// else its start and `…`.
pub(crate) fn shown(path: &Path) -> String {
    let text = path.display().to_string();
    match text.char_indices().nth(PATH_CHARS) {
        None => text,
        Some((end, _)) => format!("{}…", &text[..end]),
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
