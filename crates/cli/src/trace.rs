//! Reading traces as jobs: Standard Workload Format, whole (sorted by
//! submit time) or streamed as a simulation pulls them, and Slurm
//! accounting dumps.

use std::fs;
use std::io::BufReader;
use std::path::Path;
use std::sync::mpsc::SyncSender;

use partalloc::simkit::TraceError;
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
    crate::output::register_input(path, &file);
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
            CliError::input(format!("{}: line {line}: {e}", crate::error::shown(path)))
        }
        source => CliError::Swf {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Reads a whole trace as jobs on `mapping`, sorted by arrival, with
/// line-numbered errors (`partalloc_simkit::trace`).
pub(crate) fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<(Vec<Job>, SwfHeader, u64), CliError> {
    let trace = partalloc::simkit::read_trace(path, mapping, lenient).map_err(|e| match e {
        TraceError::Io { path, source } => CliError::Io { path, source },
        TraceError::Swf { path, source } => CliError::Swf { path, source },
        e => CliError::input(e.to_string()),
    })?;
    Ok((trace.jobs, trace.header, trace.skipped))
}

/// Jobs the reading thread hands over at a time.
const BATCH: usize = 4096;

/// Batches in flight between the reading thread and the run: with
/// [`BATCH`], memory for at most this many × 4096 jobs.
const BATCHES_IN_FLIGHT: usize = 4;

/// What the reading thread sends: jobs in file order, then how the file
/// ended.
#[derive(Debug)]
enum Chunk {
    Jobs(Vec<Job>),
    End(Result<FileEnd, CliError>),
}

/// The whole file's verdict, from the reading thread.
#[derive(Debug, Clone, Copy)]
struct FileEnd {
    jobs: usize,
    skipped: u64,
    unsorted: bool,
}

/// A trace read lazily as a simulation pulls it, so memory does not grow
/// with the trace: the source of a streamed replay.
///
/// A thread parses the file (the other half of a replay's work) and hands
/// jobs over in batches through a bounded channel. The stream yields the
/// jobs of [`read_trace`] truncated to `limit` as long as the file is
/// sorted by submit time (in the order of `f64::total_cmp`, the order
/// `read_trace` sorts by); at the first job out of order, or the first
/// malformed line, it stops yielding. The thread always reads the whole
/// file, and [`TraceStream::finish`] tells the caller whether the
/// streamed run stands, so that errors and results are those of reading
/// the whole trace first.
#[derive(Debug)]
pub(crate) struct TraceStream {
    chunks: std::sync::mpsc::Receiver<Chunk>,
    reader: Option<std::thread::JoinHandle<()>>,
    batch: std::vec::IntoIter<Job>,
    limit: usize,
    yielded: usize,
    last_arrival: f64,
    /// Out of order or malformed: yield nothing more.
    stopped: bool,
    end: Option<Result<FileEnd, CliError>>,
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

/// Reads every job of `jobs`, sending them in batches, then the verdict.
fn read_all(mut jobs: SwfJobs<BufReader<fs::File>>, path: &Path, out: &SyncSender<Chunk>) {
    let mut batch = Vec::with_capacity(BATCH);
    let (mut count, mut last, mut unsorted) = (0usize, f64::NEG_INFINITY, false);
    let end = loop {
        match jobs.next() {
            None => {
                break Ok(FileEnd {
                    jobs: count,
                    skipped: jobs.reader().skipped(),
                    unsorted,
                });
            }
            Some(Ok(j)) => {
                unsorted |= j.arrival.total_cmp(&last).is_lt();
                last = j.arrival;
                count += 1;
                batch.push(j);
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if out.send(Chunk::Jobs(full)).is_err() {
                        return; // The stream was dropped: nobody waits.
                    }
                }
            }
            Some(Err(e)) => break Err(item_error(path, jobs.reader().line(), e)),
        }
    };
    if !batch.is_empty() && out.send(Chunk::Jobs(batch)).is_err() {
        return;
    }
    let _ = out.send(Chunk::End(end));
}

impl TraceStream {
    /// Opens `path` (reading its header here, so its errors come at once)
    /// and starts reading it to stream at most `limit` jobs.
    pub(crate) fn open(
        path: &Path,
        mapping: ShapeMapping,
        lenient: bool,
        limit: usize,
    ) -> Result<Self, CliError> {
        let jobs = open(path, mapping, lenient)?;
        let (tx, rx) = std::sync::mpsc::sync_channel(BATCHES_IN_FLIGHT);
        let owned = path.to_path_buf();
        let reader = std::thread::Builder::new()
            .name("trace reader".to_owned())
            .spawn(move || read_all(jobs, &owned, &tx))
            .map_err(|e| CliError::input(format!("cannot start reading the trace: {e}")))?;
        Ok(Self {
            chunks: rx,
            reader: Some(reader),
            batch: Vec::new().into_iter(),
            limit,
            yielded: 0,
            last_arrival: f64::NEG_INFINITY,
            stopped: false,
            end: None,
        })
    }

    /// The next job in file order, `None` once the file is done.
    fn next_in_file(&mut self) -> Option<Job> {
        loop {
            if let Some(j) = self.batch.next() {
                return Some(j);
            }
            if self.end.is_some() {
                return None;
            }
            match self.chunks.recv() {
                Ok(Chunk::Jobs(v)) => self.batch = v.into_iter(),
                Ok(Chunk::End(end)) => self.end = Some(end),
                // The thread ended without a verdict: it panicked.
                Err(_) => {
                    self.end = Some(Err(CliError::input(
                        "reading the trace stopped unexpectedly",
                    )));
                }
            }
        }
    }

    /// Lets the reading thread finish the file and reports how the stream
    /// ended.
    ///
    /// # Errors
    /// The first malformed line of the whole file, as [`read_trace`]
    /// reports it.
    pub(crate) fn finish(mut self) -> Result<StreamEnd, CliError> {
        while self.next_in_file().is_some() {}
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
        let end = self
            .end
            .take()
            .unwrap_or_else(|| Err(CliError::input("reading the trace stopped unexpectedly")))?;
        if end.unsorted {
            return Ok(StreamEnd::Unsorted);
        }
        Ok(StreamEnd::Sorted {
            jobs: end.jobs.min(self.limit),
            skipped: end.skipped,
        })
    }
}

impl Iterator for TraceStream {
    type Item = Job;

    fn next(&mut self) -> Option<Job> {
        if self.stopped || self.yielded >= self.limit {
            return None;
        }
        let Some(job) = self.next_in_file() else {
            self.stopped = true;
            return None;
        };
        // A job out of order ends the stream: the run is redone on the
        // sorted trace.
        if job.arrival.total_cmp(&self.last_arrival).is_lt() {
            self.stopped = true;
            return None;
        }
        self.last_arrival = job.arrival;
        self.yielded += 1;
        Some(job)
    }
}

/// Reads a `sacct --parsable2` dump as jobs on `topology`
/// ([`partalloc_experiment::trace::read_sacct`]).
pub(crate) fn read_sacct(
    path: &Path,
    topology: &partalloc::topology::Topology,
    lenient: bool,
) -> Result<(Vec<Job>, u64), CliError> {
    Ok(partalloc_experiment::trace::read_sacct(
        path, topology, lenient,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc::allocators::registry::ALLOCATORS;
    use partalloc::schedulers::registry::POLICIES;
    use partalloc::simkit::{Report, SimConfig, Simulation};
    use partalloc::topology::Topology;
    use proptest::prelude::*;
    use std::fmt::Write as _;

    /// An SWF trace of `(submit, run, processors)` jobs, plus raw lines.
    fn trace_text(jobs: &[(f64, f64, u64)], extra: &str) -> String {
        let mut s = String::from("; MaxNodes: 16\n");
        for (i, (submit, run, p)) in jobs.iter().enumerate() {
            let _ = writeln!(
                s,
                "{} {submit} -1 {run} {p} -1 -1 {p} -1 -1 1 -1 -1 -1 -1 -1 -1 -1",
                i + 1
            );
        }
        s.push_str(extra);
        s
    }

    fn run(jobs: impl Iterator<Item = Job>, scheduler: &str) -> Report {
        let config = SimConfig {
            record_jobs: true,
            measure_search_time: false,
            ..SimConfig::default()
        };
        Simulation::from_specs(
            "mesh:4x4".parse::<Topology>().unwrap(),
            &ALLOCATORS.spec("paging").unwrap(),
            &POLICIES.spec(scheduler).unwrap(),
            jobs,
            config,
        )
        .unwrap()
        .run()
        .unwrap()
    }

    /// Streams `text` and compares with reading it whole: same errors, same
    /// report when sorted; `Unsorted` exactly when sorting moves a job.
    fn check(
        text: &str,
        limit: usize,
        lenient: bool,
        scheduler: &str,
    ) -> Result<(), TestCaseError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.swf");
        fs::write(&path, text).unwrap();
        let mapping = ShapeMapping::Nodes { total: 16 };
        let whole = read_trace(&path, mapping, lenient);
        let mut stream = TraceStream::open(&path, mapping, lenient, limit).unwrap();
        let streamed = run(&mut stream, scheduler);
        let end = stream.finish();
        match (whole, end) {
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (Ok((mut jobs, _, skipped)), Ok(end)) => {
                let in_file = read_file_order(&path, lenient);
                let sorted = in_file.iter().zip(&jobs).all(|(a, b)| a.id == b.id);
                jobs.truncate(limit);
                if sorted {
                    prop_assert_eq!(
                        end,
                        StreamEnd::Sorted {
                            jobs: jobs.len(),
                            skipped
                        }
                    );
                    prop_assert_eq!(streamed, run(jobs.into_iter(), scheduler));
                } else {
                    prop_assert_eq!(end, StreamEnd::Unsorted);
                }
            }
            (a, b) => prop_assert!(false, "whole {a:?}, streamed {b:?}"),
        }
        Ok(())
    }

    /// The jobs in file order.
    fn read_file_order(path: &Path, lenient: bool) -> Vec<Job> {
        open(path, ShapeMapping::Nodes { total: 16 }, lenient)
            .unwrap()
            .map_while(Result::ok)
            .collect()
    }

    fn job() -> impl Strategy<Value = (f64, f64, u64)> {
        (0u32..40, 0u32..20, 1u64..=16)
            .prop_map(|(s, r, p)| (f64::from(s) / 2.0, f64::from(r) / 4.0, p))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Sorted traces stream to the report of the whole-file run, with
        /// any limit and either policy.
        #[test]
        fn streamed_runs_equal_whole_runs(
            mut jobs in proptest::collection::vec(job(), 0..60),
            limit in 0usize..70, easy in any::<bool>(), shuffle in any::<bool>(),
        ) {
            if !shuffle {
                jobs.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let scheduler = if easy { "easy-backfilling" } else { "fcfs" };
            check(&trace_text(&jobs, ""), limit, false, scheduler)?;
        }

        /// A malformed line, even after the limit or after a job out of
        /// order, is the error of the whole-file reading; lenient mode
        /// skips and counts it the same way.
        #[test]
        fn late_errors_and_skips_agree(
            jobs in proptest::collection::vec(job(), 1..30),
            limit in 0usize..35, lenient in any::<bool>(),
            bad in prop_oneof![Just("x 1 2\n"), Just("99 5 -1 1 99 -1 -1 99 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")],
        ) {
            let mut sorted = jobs.clone();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            check(&trace_text(&sorted, bad), limit, lenient, "fcfs")?;
            check(&trace_text(&jobs, bad), limit, lenient, "fcfs")?;
        }
    }

    #[test]
    fn negative_zero_counts_as_out_of_order_as_the_sort_does() {
        let text = trace_text(
            &[],
            "1 0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n2 -0 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
        );
        check(&text, usize::MAX, false, "fcfs").unwrap();
    }
}
