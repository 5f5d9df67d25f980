//! Why an SWF line or trace was refused.

use std::io;

use thiserror::Error;

use super::SwfField;
use crate::WorkloadError;

/// Why an SWF line or trace was refused.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SwfError {
    /// A line longer than [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES): not an
    /// SWF line, and reading it whole could exhaust memory (a binary file,
    /// a file with no line breaks). Stops the read in lenient mode too.
    #[error("line {line}: longer than {max} bytes; an SWF line is 18 numbers")]
    LineTooLong {
        /// 1-based line number.
        line: u64,
        /// The bound, `MAX_LINE_BYTES`.
        max: u64,
    },
    /// The input could not be read.
    #[error("line {line}: cannot read the trace: {source}")]
    Io {
        /// 1-based line number being read.
        line: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// The output could not be written (a full disk, a closed pipe).
    #[error("line {line}: cannot write the trace: {source}")]
    Write {
        /// 1-based line number being written.
        line: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// A job line that is not UTF-8 text (a malformed line: skipped and
    /// counted in lenient mode).
    #[error("line {line}: not UTF-8 text")]
    NotUtf8 {
        /// 1-based line number.
        line: u64,
    },
    /// A job line does not have 18 fields.
    #[error("line {line}: {found} fields, an SWF job line has 18")]
    FieldCount {
        /// 1-based line number.
        line: u64,
        /// Number of fields found.
        found: usize,
    },
    /// A field's value is not acceptable.
    #[error("line {line}: {field}: {value:?} {reason}")]
    Field {
        /// 1-based line number.
        line: u64,
        /// The field.
        field: SwfField,
        /// The text found.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A numeric header value cannot be parsed.
    #[error("line {line}: header {key}: {value:?} is not a non-negative integer")]
    Header {
        /// 1-based line number (0 when unknown).
        line: u64,
        /// The header key.
        key: String,
        /// The text found.
        value: String,
    },
    /// A record lacks what a job needs.
    #[error("job {job}: {reason}")]
    Unusable {
        /// The record's job number.
        job: u64,
        /// What is missing.
        reason: String,
    },
    /// A record value that the format cannot hold: a negative, NaN or
    /// infinite time or amount (only a missing value is written as −1).
    #[error("job {job}: {field}: {value} cannot be written; {reason}")]
    Unwritable {
        /// The record's job number.
        job: u64,
        /// The field.
        field: SwfField,
        /// The value given.
        value: f64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A header line that would not stay one comment line.
    #[error("header line {text:?} contains a line break; it would be read back as more lines")]
    HeaderLineBreak {
        /// The header line.
        text: String,
    },
    /// The mapping onto the machine failed.
    #[error("job {job}: {source}")]
    Mapping {
        /// The record's job number.
        job: u64,
        /// Why the shape does not fit.
        source: WorkloadError,
    },
}
