//! Reading Standard Workload Format traces as jobs: whole (sorted by
//! submit time) or streamed as a simulation pulls them.

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use partalloc::workload::Job;
use partalloc::workload::ShapeMapping;
use partalloc::workload::swf::{SwfError, SwfHeader, SwfJobs, SwfReader};

use crate::error::CliError;

/// Opens a trace and reads its header.
fn open(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<SwfJobs<BufReader<fs::File>>, CliError> {
    let file = fs::File::open(path).map_err(CliError::io(path))?;
    let reader = SwfReader::new(BufReader::with_capacity(1 << 16, file))
        .map_err(|source| CliError::Swf {
            path: path.to_path_buf(),
            source,
        })?
        .lenient(lenient);
    Ok(reader.jobs(mapping))
}

/// The error of a trace item, with the line for the errors that name only
/// the job.
fn item_error(path: &Path, line: u64, e: SwfError) -> CliError {
    match e {
        e @ (SwfError::Unusable { .. } | SwfError::Mapping { .. }) => {
            CliError::input(format!("{}: line {line}: {e}", path.display()))
        }
        source => CliError::Swf {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Reads a whole trace as jobs on `mapping`, with line-numbered errors.
pub(crate) fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<(Vec<Job>, SwfHeader, u64), CliError> {
    let mut jobs = open(path, mapping, lenient)?;
    let header = jobs.reader().header().clone();
    let mut out = Vec::new();
    while let Some(j) = jobs.next() {
        out.push(j.map_err(|e| item_error(path, jobs.reader().line(), e))?);
    }
    let skipped = jobs.reader().skipped();
    // Traces are sorted by submit time; make sure, keeping ties in file order.
    out.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok((out, header, skipped))
}

/// A trace read lazily, one job at a time, as a simulation pulls it, so
/// memory does not grow with the trace: the source of a streamed replay.
///
/// It yields the jobs of [`read_trace`] truncated to `limit` as long as the
/// file is sorted by submit time (in the order of `f64::total_cmp`, the
/// order `read_trace` sorts by). At the first job out of order, or the
/// first malformed line, it stops yielding; [`TraceStream::finish`] then
/// reads the rest of the file and tells the caller whether the streamed
/// run stands, so that errors and results are those of reading the whole
/// trace first.
#[derive(Debug)]
pub(crate) struct TraceStream {
    jobs: SwfJobs<BufReader<fs::File>>,
    path: PathBuf,
    limit: usize,
    /// Jobs read so far (yielded or not).
    read: usize,
    last_arrival: f64,
    unsorted: bool,
    error: Option<CliError>,
}

/// How a streamed trace ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// The file is sorted: the jobs yielded are exactly the first `jobs`
    /// of the sorted trace.
    Sorted {
        /// Jobs in the trace, at most the limit.
        jobs: usize,
        /// Malformed lines skipped (lenient mode).
        skipped: u64,
    },
    /// A job is submitted before an earlier line's: read the whole trace
    /// and sort it instead.
    Unsorted,
}

impl TraceStream {
    /// Opens `path` (reading its header) to stream at most `limit` jobs.
    pub(crate) fn open(
        path: &Path,
        mapping: ShapeMapping,
        lenient: bool,
        limit: usize,
    ) -> Result<Self, CliError> {
        Ok(Self {
            jobs: open(path, mapping, lenient)?,
            path: path.to_path_buf(),
            limit,
            read: 0,
            last_arrival: f64::NEG_INFINITY,
            unsorted: false,
            error: None,
        })
    }

    /// The next job of the file, checking the order; `None` at the end or
    /// at the first error (kept for [`finish`](Self::finish)).
    fn read_one(&mut self) -> Option<Job> {
        if self.error.is_some() {
            return None;
        }
        match self.jobs.next()? {
            Ok(j) => {
                if j.arrival.total_cmp(&self.last_arrival).is_lt() {
                    self.unsorted = true;
                }
                self.last_arrival = j.arrival;
                self.read += 1;
                Some(j)
            }
            Err(e) => {
                self.error = Some(item_error(&self.path, self.jobs.reader().line(), e));
                None
            }
        }
    }

    /// Reads the rest of the file (without keeping it) and reports how the
    /// stream ended.
    ///
    /// # Errors
    /// The first malformed line of the whole file, as [`read_trace`]
    /// reports it.
    pub(crate) fn finish(mut self) -> Result<StreamEnd, CliError> {
        while self.read_one().is_some() {}
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.unsorted {
            return Ok(StreamEnd::Unsorted);
        }
        Ok(StreamEnd::Sorted {
            jobs: self.read.min(self.limit),
            skipped: self.jobs.reader().skipped(),
        })
    }
}

impl Iterator for TraceStream {
    type Item = Job;

    fn next(&mut self) -> Option<Job> {
        if self.read >= self.limit || self.unsorted {
            return None;
        }
        let job = self.read_one()?;
        // A job out of order ends the stream: the run is redone on the
        // sorted trace.
        (!self.unsorted).then_some(job)
    }
}
