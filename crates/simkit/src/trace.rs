//! A Standard Workload Format trace file read whole as the jobs of a run.
//!
//! [`read_trace`] opens the file, maps every record to a job and sorts the
//! jobs by arrival (ties keep the file's order), with errors that name the
//! file and, for a record that cannot become a job, its line. The command
//! line and the Python package both set up a trace run with it.
//!
//! ```
//! use partalloc_simkit::trace::read_trace;
//! use partalloc_topology::Topology;
//! use partalloc_workload::ShapeMapping;
//!
//! let path = std::env::temp_dir().join(format!("trace-doc-{}.swf", std::process::id()));
//! std::fs::write(
//!     &path,
//!     "; MaxProcs: 8\n\
//!      2 5 -1 10 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n\
//!      1 0 -1 20 8 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
//! )?;
//! let machine: Topology = "hypercube:3".parse()?;
//! let trace = read_trace(&path, ShapeMapping::for_topology(&machine), false)?;
//! std::fs::remove_file(&path)?;
//! // Sorted by arrival: job 1 (submitted at 0) first.
//! let ids: Vec<u64> = trace.jobs.iter().map(|j| j.id).collect();
//! assert_eq!(ids, [1, 2]);
//! assert_eq!((trace.skipped, trace.header.max_procs()?), (0, Some(8)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use partalloc_workload::swf::{SwfError, SwfHeader, SwfReader};
use partalloc_workload::{Job, ShapeMapping};
use thiserror::Error;

/// A trace's jobs, sorted by arrival, with its header.
#[derive(Debug, Clone)]
pub struct TraceJobs {
    /// The jobs in arrival order (ties in the file's order).
    pub jobs: Vec<Job>,
    /// The header comment lines.
    pub header: SwfHeader,
    /// Malformed lines skipped (only when reading leniently).
    pub skipped: u64,
}

/// Why a trace could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A line is malformed (its error names the line and field).
    #[error("{}: {source}", path.display())]
    Swf {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: SwfError,
    },
    /// A well-formed record cannot become a job (no size, a size the
    /// mapping cannot serve).
    #[error("{}: line {line}: {source}", path.display())]
    Job {
        /// The file.
        path: PathBuf,
        /// The record's line.
        line: u64,
        /// The cause, naming the job.
        source: SwfError,
    },
}

/// Reads the trace at `path` as jobs on `mapping`; `lenient` skips
/// malformed lines (counted in [`TraceJobs::skipped`]) instead of stopping
/// at the first.
///
/// # Errors
/// The file cannot be read, a line is malformed (unless `lenient`), or a
/// record cannot become a job.
pub fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<TraceJobs, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let swf = |source| TraceError::Swf {
        path: path.to_path_buf(),
        source,
    };
    let file = fs::File::open(path).map_err(io)?;
    let reader = SwfReader::new(BufReader::new(file))
        .map_err(swf)?
        .lenient(lenient);
    let header = reader.header().clone();
    let mut jobs = reader.jobs(mapping);
    let mut out = Vec::new();
    while let Some(j) = jobs.next() {
        match j {
            Ok(j) => out.push(j),
            Err(e @ (SwfError::Unusable { .. } | SwfError::Mapping { .. })) => {
                // These name the job, not the line: add it.
                return Err(TraceError::Job {
                    path: path.to_path_buf(),
                    line: jobs.reader().line(),
                    source: e,
                });
            }
            Err(e) => return Err(swf(e)),
        }
    }
    let skipped = jobs.reader().skipped();
    // Traces are sorted by submit time; make sure, keeping ties in file order.
    out.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok(TraceJobs {
        jobs: out,
        header,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc_topology::Topology;

    fn write(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("simkit-{}-{name}.swf", std::process::id()));
        fs::write(&path, text).unwrap_or_else(|e| unreachable!("{e}"));
        path
    }

    fn cube() -> ShapeMapping {
        let t: Topology = "hypercube:3".parse().unwrap_or_else(|_| unreachable!());
        ShapeMapping::for_topology(&t)
    }

    const LINE: &str = "-1 10 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1";

    #[test]
    fn jobs_are_sorted_by_arrival_keeping_ties_in_file_order() {
        let text = format!("3 7 {LINE}\n1 5 {LINE}\n2 5 {LINE}\n");
        let path = write("sorted", &text);
        let t = read_trace(&path, cube(), false).unwrap_or_else(|e| unreachable!("{e}"));
        let _ = fs::remove_file(&path);
        let order: Vec<(u64, f64)> = t.jobs.iter().map(|j| (j.id, j.arrival)).collect();
        assert_eq!(order, [(1, 5.0), (2, 5.0), (3, 7.0)]);
    }

    #[test]
    fn errors_name_the_file_and_line_and_lenient_reading_skips() {
        let path = write("bad", &format!("1 0 {LINE}\n2 x {LINE}\n"));
        let shown = path.display().to_string();
        let e = read_trace(&path, cube(), false).map(|_| ()).unwrap_err();
        assert!(matches!(e, TraceError::Swf { .. }), "{e}");
        assert!(e.to_string().starts_with(&format!("{shown}: ")), "{e}");
        assert!(e.to_string().contains("line 2"), "{e}");
        // A well-formed record with no size names its job; the line is added.
        let unusable = "3 9 -1 10 -1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1";
        let sizeless = write("sizeless", &format!("1 0 {LINE}\n{unusable}\n"));
        let e = read_trace(&sizeless, cube(), false)
            .map(|_| ())
            .unwrap_err();
        let shown = sizeless.display().to_string();
        assert!(matches!(e, TraceError::Job { line: 2, .. }), "{e}");
        assert!(
            e.to_string().starts_with(&format!("{shown}: line 2: ")),
            "{e}"
        );
        let _ = fs::remove_file(&sizeless);
        let t = read_trace(&path, cube(), true).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!((t.jobs.len(), t.skipped), (1, 1));
        let _ = fs::remove_file(&path);
        let missing = std::env::temp_dir().join("simkit-no-such-trace.swf");
        let e = read_trace(&missing, cube(), false).map(|_| ()).unwrap_err();
        assert!(matches!(e, TraceError::Io { .. }), "{e}");
    }
}
