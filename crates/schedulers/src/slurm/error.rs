//! The one error type of the Slurm inputs: a file, a line and what to fix.

use thiserror::Error;

/// Why a Slurm input (slurm.conf, an association or QOS dump, a job table)
/// was refused: `file:line: what is wrong and what to do`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}:{line}: {kind}")]
pub struct InputError {
    /// The file (or other source) read.
    pub file: String,
    /// The 1-based line (0 for the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub kind: InputErrorKind,
}

impl InputError {
    /// An error at `file:line`.
    pub(crate) fn at(file: &str, line: usize, kind: InputErrorKind) -> Self {
        Self {
            file: partalloc_topology::echo(file),
            line,
            kind,
        }
    }
}

/// What is wrong in a Slurm input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum InputErrorKind {
    /// A word that is not `Key=Value`.
    #[error("expected Key=Value, found {0:?}")]
    NotKeyValue(String),
    /// A value that cannot be read.
    #[error("{key}: {value:?} {reason}")]
    BadValue {
        /// The option.
        key: String,
        /// The text found.
        value: String,
        /// What a valid value looks like.
        reason: String,
    },
    /// A name used but never defined (a partition, account or QOS).
    #[error("unknown {what} {name:?}; define it in {hint}")]
    Unknown {
        /// What kind of name.
        what: &'static str,
        /// The name.
        name: String,
        /// Where it must be defined.
        hint: &'static str,
    },
    /// A name defined twice.
    #[error("{what} {name:?} is defined twice; keep one line")]
    Duplicate {
        /// What kind of name.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// An association tree that is not a tree.
    #[error("account {0:?} is its own ancestor; fix its parent (ParentName)")]
    Cycle(String),
    /// An association whose parent disagrees with another line.
    #[error("{0}")]
    Contradiction(String),
    /// A limit no job can meet.
    #[error("{0}")]
    Impossible(String),
    /// A header without a needed column.
    #[error("no {0} column in the header")]
    MissingColumn(&'static str),
    /// A line with a different number of fields than the header.
    #[error("{found} fields, the header has {want} (fields are separated by |)")]
    FieldCount {
        /// Fields found.
        found: usize,
        /// Columns of the header.
        want: usize,
    },
    /// The configuration does not fit the machine simulated.
    #[error("{0}")]
    Machine(String),
    /// A file that cannot be read.
    #[error("cannot read it: {0}")]
    Io(String),
}
