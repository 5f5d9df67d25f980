//! The one error type of reading what a run is made of.

use std::io;
use std::path::PathBuf;

use partalloc_topology::echo_path;
use thiserror::Error;

/// Why a machine, a trace or a file could not be read. Every message is
/// one line naming the input and what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A file could not be opened or read.
    #[error("{}: {source}", echo_path(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A file is larger than its kind is read.
    #[error("{}: larger than {} MiB, the most read for this kind of file; {advice}", echo_path(.path), .max >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound in bytes.
        max: u64,
        /// What to do instead.
        advice: &'static str,
    },
    /// A directory was named where a file is read.
    #[error("{}: a directory, not a file", echo_path(.path))]
    Directory {
        /// The path.
        path: PathBuf,
    },
    /// A text file holds bytes that are not UTF-8.
    #[error("{}: not UTF-8 text (byte {byte} is invalid)", echo_path(.path))]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The offset of the first invalid byte.
        byte: usize,
    },
    /// A machine larger than the run accepts (checked before it is built
    /// into strategies).
    #[error(
        "{machine} has {nodes} nodes, too many for {what}: machines of at most {max} nodes (2^{}) are accepted",
        .max.trailing_zeros()
    )]
    TooManyNodes {
        /// The machine, as it prints.
        machine: String,
        /// Its nodes.
        nodes: usize,
        /// What it was for (a command, `simulate`).
        what: String,
        /// The bound.
        max: usize,
    },
    /// A pod larger than the run accepts.
    #[error(
        "{machine} has {chips} chips, too many for {what}: pods of at most {max} chips (2^16) are accepted"
    )]
    TooManyChips {
        /// The pod, as it prints.
        machine: String,
        /// Its chips.
        chips: usize,
        /// What it was for.
        what: String,
        /// The bound.
        max: usize,
    },
    /// A machine description that is malformed; the message starts with
    /// the description (a front end adds the option or argument that gave
    /// it: `--topology`, `topology=`).
    #[error("{}{reason}", if .given.is_empty() { String::new() } else { format!("{:?}: ", .given) })]
    Description {
        /// The description as given, cut for echoing (empty when the
        /// reason repeats it).
        given: String,
        /// What is wrong and what to write instead.
        reason: String,
    },
    /// A machine description or file that does not describe a machine; the
    /// message names the input and the fix.
    #[error("{0}")]
    Machine(String),
    /// A trace that cannot be read as the format says; the message names
    /// the file, the line and the field.
    #[error("{0}")]
    Trace(String),
}

impl SourceError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
