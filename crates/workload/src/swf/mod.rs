//! The Standard Workload Format (SWF) of the Parallel Workloads Archive.
//!
//! An SWF file (Chapin et al., "Benchmarks and Standards for the
//! Evaluation of Parallel Job Schedulers", JSSPP 1999; format description
//! at <https://www.cs.huji.ac.il/labs/parallel/workload/swf.html>) is a
//! header of comment lines starting with `;` — `; Key: value` pairs such as
//! `MaxNodes` and `MaxProcs`, with indented continuation lines — followed by
//! one line per job of 18 whitespace-separated fields. −1 marks an unknown
//! value; blank lines are ignored.
//!
//! [`SwfReader`] streams records from any `BufRead`, one line buffer at a
//! time, so traces of any length are read in constant memory. Every
//! malformed line is an [`SwfError`] naming the line and the field; with
//! [`SwfReader::lenient`] such lines are skipped and counted instead.
//! [`SwfWriter`] writes a header and records back; reading what it wrote
//! gives the same records. [`SwfRecord::to_job`] (or [`SwfReader::jobs`]
//! for a whole trace) turns a record into a [`Job`](crate::Job) on a machine through a
//! [`ShapeMapping`](crate::ShapeMapping).
//!
//! ```
//! use partalloc_workload::ShapeMapping;
//! use partalloc_workload::swf::SwfReader;
//! use partalloc_topology::Topology;
//!
//! let text = "; MaxNodes: 128\n; MaxProcs: 128\n\n\
//!             1 0 -1 1451 128 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n\
//!             2 1460 -1 3726 32 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n";
//! let mut reader = SwfReader::new(text.as_bytes())?;
//! assert_eq!(reader.header().max_nodes()?, Some(128));
//! let records = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(records[1].run_time, Some(3726.0));
//! let mapping = ShapeMapping::for_topology(&"hypercube:7".parse::<Topology>()?);
//! let job = records[1].to_job(&mapping)?;
//! assert_eq!(job.shape.to_string(), "Q_5");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod fast;
mod field;
mod header;
mod reader;
mod record;
mod writer;

pub use error::SwfError;
pub use field::SwfField;
pub use header::SwfHeader;
pub use reader::{SwfJobs, SwfReader};
pub use record::SwfRecord;
pub use writer::SwfWriter;

/// The largest time an SWF line may give, in seconds (1e12 s, about
/// 31,700 years): submit, wait, run, CPU, requested and think times above
/// it are refused when read, so that sums and products of times (loads,
/// waits, areas) stay finite.
pub const MAX_SECONDS: f64 = 1e12;

/// The largest processor count an SWF line may give (2^40), allocated or
/// requested; larger counts are refused when read.
pub const MAX_PROCESSORS: u64 = 1 << 40;

/// The longest line [`SwfReader`] reads (1 MiB); header comments in the
/// archive's logs are a few hundred bytes.
pub const MAX_LINE_BYTES: u64 = 1 << 20;

#[cfg(test)]
mod tests;
