//! The one error type of reading what a run is made of.

use thiserror::Error;

/// Why a machine, a trace or a file could not be read. Every message is
/// one line naming the input and what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A file could not be read whole (missing, too large, a directory,
    /// not UTF-8).
    #[error(transparent)]
    File(#[from] partalloc_topology::files::FileError),
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
    pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| {
            Self::File(partalloc_topology::files::FileError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    }
}
