//! The RL benchmark protocol of RLScheduler (Zhang et al., SC'20): a policy
//! is scored by the mean bounded slowdown of sequences of N jobs (256 by
//! default) cut from a trace, each replayed alone on the trace's machine.
//!
//! Three parts, each a faithful reading of RLScheduler's simulator
//! (DIR-LAB/deep-batch-scheduler, `job.py`, `cluster.py`,
//! `HPCSimPickJobs.py`), which is the oracle: on the same sequences the
//! heuristics' bounded slowdowns here equal the simulator's (the goldens in
//! `data/rlscheduler-oracle/`, docs/rl-benchmark.md).
//!
//! - **The trace** ([`BenchTrace`]) is read as `job.py` reads it: the
//!   processor count is the larger of SWF fields 5 and 8, the estimate is
//!   field 9 or, when unknown, the run time; a negative run time becomes 10
//!   s and a job whose run time is then 0 is dropped; jobs are sorted by
//!   job number. The machine has `MaxNodes` nodes (else `MaxProcs`) of one
//!   processor each.
//! - **A sequence** is the N jobs from a start index on. RLScheduler draws
//!   the start uniformly from [N, jobs − N − 1) (`reset_for_test`); so does
//!   [`sample_starts`], with a generator of partalloc's own
//!   (`ChaCha8Rng::seed_from_u64(seed)`), so the seed → start mapping is not
//!   the simulator's (that one goes through gym's seed hashing). Explicit
//!   starts ([`BenchmarkConfig::starts`]) replay any sequence, the goldens'
//!   included.
//! - **The replay** ([`run_sequence`]) starts at the first job's submit
//!   time with that job queued and handles **one event per step**: the next
//!   arrival if it comes no later than the next release, else the release
//!   of the running job that ends first (ties in start order), asking the
//!   policy to schedule after each. The simulator steps exactly so (its
//!   `skip_for_resources_greedy`, `moveforward_for_resources_backfill_greedy`
//!   and `moveforward_for_job`), and the order matters: jobs arriving at the
//!   same time are seen one at a time, a backfill pass runs between an
//!   arrival and a release at the same time. The replay runs on
//!   partalloc's one engine in its one-event-per-step mode (its batched
//!   mode handles all simultaneous events before scheduling); jobs come in
//!   job-number order, so a submit time may be earlier than the clock, and
//!   such a job arrives at the current time. The replay ends when the last
//!   job starts; a job's bounded slowdown is max(1, (wait + run)/max(run,
//!   τ)) with τ = 10 s by default, and the sequence's score is Σ (bsld/N)
//!   summed in start order, the simulator's own sum, so the score is equal
//!   to the bit.
//!
//! The heuristics ([`heuristic`]) are `rlscheduler[order=…,backfill=…]`
//! (`partalloc_schedulers::rlscheduler`), the simulator's decision
//! procedure; any other policy spec runs through the same replay.
//!
//! ```
//! use partalloc_simkit::benchmark::{self, BenchTrace, BenchmarkConfig};
//! let mut swf = String::from("; MaxNodes: 4\n");
//! for i in 1..=40u32 {
//!     let line = format!("{i} {} -1 {} {} -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
//!         i * 50, 100 + (i * 37) % 300, 1 + i % 4);
//!     swf.push_str(&line);
//! }
//! let trace = BenchTrace::from_reader(swf.as_bytes())?;
//! let policies = [benchmark::heuristic("fcfs", false)?, benchmark::heuristic("sjf", true)?];
//! let config = BenchmarkConfig { length: 8, sequences: 3, ..BenchmarkConfig::default() };
//! let table = benchmark::run(&trace, &policies, &config)?;
//! assert_eq!(table.starts.len(), 3);
//! assert!(table.rows.iter().all(|r| r.mean >= 1.0 && r.per_sequence.len() == 3));
//! // Unknown heuristics and sequences too long for the trace are refused.
//! assert!(benchmark::heuristic("fifo", false).is_err());
//! let long = BenchmarkConfig { length: 20, ..BenchmarkConfig::default() };
//! assert!(benchmark::run(&trace, &policies, &long).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use partalloc_allocators::paging::Paging;
use partalloc_allocators::strategy::Managed;
use partalloc_allocators::{BuildError, StrategySpec};
use partalloc_schedulers::order::{ORDERS, Order};
use partalloc_schedulers::registry::{POLICIES, PolicySpec};
use partalloc_schedulers::{PolicyBuildError, ScheduleError, Scheduler, Started};
use partalloc_topology::{Grid, Topology, TopologyError};
use partalloc_workload::swf::{SwfError, SwfReader};
use partalloc_workload::{Job, JobShape};
use rand::RngExt;
use rand::SeedableRng;
use thiserror::Error;

use crate::SimError;
use crate::engine::{Engine, EventSink, Running};
use crate::replicate::SimRng;
use crate::slowdown::{SlowdownBound, bounded_slowdown};

/// RLScheduler's sequence length (`JOB_SEQUENCE_SIZE`).
pub const DEFAULT_LENGTH: usize = 256;
/// The number of sequences of RLScheduler's comparison script
/// (`compare-pick-jobs.py`, `--iter`).
pub const DEFAULT_SEQUENCES: usize = 10;
/// The most sequences [`sample_starts`] draws.
pub const MAX_SEQUENCES: usize = 1_000_000;
/// The heuristics of RLScheduler's table, in its order, as partalloc's
/// order names (the papers' WFP3 and UNICEP; the simulator's computations
/// are `wfp3-rlscheduler` and `unicep-rlscheduler`).
pub const DEFAULT_HEURISTICS: [&str; 5] = ["fcfs", "wfp3", "unicep", "sjf", "f1"];

/// Why a benchmark could not be run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BenchmarkError {
    /// The trace file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The trace is not valid SWF.
    #[error("{}{source}", path_prefix(path.as_deref()))]
    Swf {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// The cause.
        source: SwfError,
    },
    /// A job has no submit time.
    #[error("job {job} has no submit time (field 2); the benchmark needs every job's submit time")]
    NoSubmitTime {
        /// The job number.
        job: u64,
    },
    /// The header gives no machine size.
    #[error(
        "the trace header gives neither MaxNodes nor MaxProcs; add one to give the machine's size"
    )]
    NoMachineSize,
    /// The header gives several processors per node.
    #[error(
        "the trace header gives MaxProcs {procs} on MaxNodes {nodes}; the benchmark replays machines of one processor per node only"
    )]
    ProcessorsPerNode {
        /// `MaxNodes`.
        nodes: u64,
        /// `MaxProcs`.
        procs: u64,
    },
    /// A job needs no processor or more than the machine has.
    #[error(
        "job {job} asks for {procs} processors; the machine has {nodes} (1 to {nodes} are usable)"
    )]
    JobSize {
        /// The job number.
        job: u64,
        /// Its processor count.
        procs: i64,
        /// The machine's nodes.
        nodes: u64,
    },
    /// Two jobs share a job number.
    #[error("job number {job} appears twice; the benchmark needs every job numbered once")]
    DuplicateJob {
        /// The job number.
        job: u64,
    },
    /// More sequences than the benchmark draws.
    #[error("{sequences} sequences asked for; at most {MAX_SEQUENCES} are drawn")]
    TooManySequences {
        /// The number asked for.
        sequences: usize,
    },
    /// Sequences of length 0 or no sequences were asked for.
    #[error("{what} must be at least 1")]
    Zero {
        /// `length` or `sequences`.
        what: &'static str,
    },
    /// The trace is too short to draw sequences of this length.
    #[error(
        "sequences of {length} jobs need a trace of at least {} jobs; this trace has {jobs}, enough for sequences of at most {}",
        length.saturating_mul(2).saturating_add(2),
        jobs.saturating_sub(2) / 2
    )]
    TraceTooShort {
        /// The sequence length.
        length: usize,
        /// The trace's jobs.
        jobs: usize,
    },
    /// A given start leaves too few jobs after it.
    #[error("a sequence of {length} jobs from index {start} runs past the trace's {jobs} jobs")]
    StartOutOfRange {
        /// The start index.
        start: usize,
        /// The sequence length.
        length: usize,
        /// The trace's jobs.
        jobs: usize,
    },
    /// A heuristic name that is not a queue order.
    #[error("unknown heuristic {given:?}; known heuristics: {known}")]
    UnknownHeuristic {
        /// The name given (at most 40 characters, then `…`).
        given: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A backfilling setting that is not `off`, `on` or `both`.
    #[error("backfill {0:?}: use off, on or both")]
    UnknownBackfill(String),
    /// The machine could not be made.
    #[error("machine of {nodes} nodes: {source}")]
    Machine {
        /// Its nodes.
        nodes: u64,
        /// The cause.
        source: TopologyError,
    },
    /// A job's end could not be scheduled.
    #[error("job {job} has run time {run}; give a finite run time of at least 0")]
    RunTime {
        /// The job number.
        job: u64,
        /// Its run time.
        run: f64,
    },
    /// The allocator could not be built.
    #[error(transparent)]
    Allocator(#[from] BuildError),
    /// The policy could not be built.
    #[error(transparent)]
    Policy(#[from] PolicyBuildError),
    /// The policy failed during a replay.
    #[error("sequence from index {start}: {source}")]
    Schedule {
        /// The sequence's start index.
        start: usize,
        /// The cause.
        source: ScheduleError,
    },
    /// The engine refused an event (a job's arrival time, or a release the
    /// allocator refused).
    #[error("sequence from index {start}: {source}")]
    Engine {
        /// The sequence's start index.
        start: usize,
        /// The cause.
        source: SimError,
    },
    /// Jobs were left waiting with nothing running and nothing to come.
    #[error(
        "sequence from index {start}: policy {policy} left {waiting} jobs waiting on an idle machine"
    )]
    Stalled {
        /// The sequence's start index.
        start: usize,
        /// The policy.
        policy: String,
        /// The jobs left.
        waiting: usize,
    },
}

fn path_prefix(path: Option<&Path>) -> String {
    path.map(|p| format!("{}: ", p.display()))
        .unwrap_or_default()
}

/// A trace as RLScheduler's simulator reads it (see the
/// [module docs](self)): its jobs sorted by job number and its machine's
/// node count.
#[derive(Debug, Clone)]
pub struct BenchTrace {
    jobs: Vec<Job>,
    nodes: u64,
}

impl BenchTrace {
    /// Reads the SWF file at `path`.
    ///
    /// # Errors
    /// As [`from_reader`](Self::from_reader), plus [`BenchmarkError::Io`].
    pub fn read(path: &Path) -> Result<Self, BenchmarkError> {
        let file = File::open(path).map_err(|source| BenchmarkError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_reader(BufReader::new(file)).map_err(|e| match e {
            BenchmarkError::Swf { path: None, source } => BenchmarkError::Swf {
                path: Some(path.to_owned()),
                source,
            },
            e => e,
        })
    }

    /// Reads an SWF text.
    ///
    /// # Errors
    /// [`BenchmarkError::Swf`] for malformed SWF, `NoMachineSize`,
    /// `ProcessorsPerNode`, `NoSubmitTime`, `JobSize` (see
    /// [`BenchmarkError`]).
    pub fn from_reader<R: BufRead>(input: R) -> Result<Self, BenchmarkError> {
        let swf = |source| BenchmarkError::Swf { path: None, source };
        let mut reader = SwfReader::new(input).map_err(swf)?;
        let mut records = Vec::new();
        for record in reader.by_ref() {
            records.push(record.map_err(swf)?);
        }
        let header = reader.header();
        let max_nodes = header.max_nodes().map_err(swf)?.filter(|&n| n > 0);
        let max_procs = header.max_procs().map_err(swf)?.filter(|&n| n > 0);
        let nodes = match (max_nodes, max_procs) {
            (Some(n), Some(p)) if n != p => {
                return Err(BenchmarkError::ProcessorsPerNode { nodes: n, procs: p });
            }
            (Some(n), _) | (None, Some(n)) => n,
            (None, None) => return Err(BenchmarkError::NoMachineSize),
        };
        let mut jobs = Vec::with_capacity(records.len());
        for r in &records {
            let job = r.job_number;
            let known = |v: Option<u64>| v.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX));
            let procs = known(r.allocated_processors).max(known(r.requested_processors));
            // job.py: the estimate is read before the run time is mended.
            let raw_run = r.run_time.unwrap_or(-1.0);
            let estimate = r.requested_time.unwrap_or(raw_run);
            let run = if raw_run < 0.0 { 10.0 } else { raw_run };
            if run <= 0.0 {
                continue;
            }
            let arrival = r.submit_time.ok_or(BenchmarkError::NoSubmitTime { job })?;
            let count = u32::try_from(procs)
                .ok()
                .filter(|&p| p >= 1 && u64::from(p) <= nodes);
            let count = count.ok_or(BenchmarkError::JobSize { job, procs, nodes })?;
            let estimate = (estimate >= 0.0).then_some(estimate);
            jobs.push(
                Job::new(job, arrival, JobShape::Nodes { count }, run).with_estimate(estimate),
            );
        }
        jobs.sort_by_key(|j| j.id);
        if let Some(w) = jobs.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(BenchmarkError::DuplicateJob { job: w[0].id });
        }
        Ok(Self { jobs, nodes })
    }

    /// The jobs, sorted by job number.
    #[must_use]
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// The machine's node count.
    #[must_use]
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The index of the job numbered `id`, if any.
    #[must_use]
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.jobs.binary_search_by_key(&id, |j| j.id).ok()
    }

    /// The `length` jobs from index `start` on.
    ///
    /// # Errors
    /// [`BenchmarkError::Zero`] for length 0,
    /// [`BenchmarkError::StartOutOfRange`] past the trace's end.
    pub fn sequence(&self, start: usize, length: usize) -> Result<&[Job], BenchmarkError> {
        if length == 0 {
            return Err(BenchmarkError::Zero { what: "length" });
        }
        start
            .checked_add(length)
            .and_then(|end| self.jobs.get(start..end))
            .ok_or(BenchmarkError::StartOutOfRange {
                start,
                length,
                jobs: self.jobs.len(),
            })
    }
}

/// `count` sequence starts for sequences of `length` jobs in a trace of
/// `jobs` jobs: uniform on RLScheduler's range [length, jobs − length − 1),
/// drawn with `ChaCha8Rng::seed_from_u64(seed)` (independent draws, as the
/// simulator's).
///
/// # Errors
/// [`BenchmarkError::Zero`] for a length or count of 0,
/// [`BenchmarkError::TraceTooShort`] when the range is empty.
pub fn sample_starts(
    jobs: usize,
    length: usize,
    count: usize,
    seed: u64,
) -> Result<Vec<usize>, BenchmarkError> {
    if length == 0 {
        return Err(BenchmarkError::Zero { what: "length" });
    }
    if count == 0 {
        return Err(BenchmarkError::Zero { what: "sequences" });
    }
    if count > MAX_SEQUENCES {
        return Err(BenchmarkError::TooManySequences { sequences: count });
    }
    let high = length
        .checked_add(1)
        .and_then(|l| jobs.checked_sub(l))
        .filter(|&h| h > length);
    let high = high.ok_or(BenchmarkError::TraceTooShort { length, jobs })?;
    let mut rng = SimRng::seed_from_u64(seed);
    Ok((0..count).map(|_| rng.random_range(length..high)).collect())
}

/// One replayed sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceRun {
    /// The mean bounded slowdown, summed as the simulator sums it.
    pub bounded_slowdown: f64,
    /// Each job's wait (start − submit), in sequence order.
    pub waits: Vec<f64>,
}

/// Replays `jobs` (a sequence) under `policy` on a machine of `nodes`
/// nodes (any free nodes serve a job: `paging`), one event per step as
/// RLScheduler's simulator does (see the [module docs](self)).
///
/// # Errors
/// [`BenchmarkError::Zero`] for no jobs, `Machine`, `Policy`, `Schedule`
/// or `Stalled` (see [`BenchmarkError`]); `start` only labels them.
pub fn run_sequence(
    jobs: &[Job],
    nodes: u64,
    policy: &PolicySpec,
    bound: SlowdownBound,
    start: usize,
) -> Result<SequenceRun, BenchmarkError> {
    let machine_err = |source| BenchmarkError::Machine { nodes, source };
    let side = u32::try_from(nodes).map_err(|_| {
        machine_err(TopologyError::InvalidSides {
            text: nodes.to_string(),
            reason: "more nodes than a mesh side holds".to_owned(),
        })
    })?;
    let topology = Topology::Grid(Grid::mesh(&[side]).map_err(machine_err)?);
    let alloc = Paging::new(topology.clone())?;
    let mut sched = policy.build(&topology)?;
    if jobs.is_empty() {
        return Err(BenchmarkError::Zero { what: "length" });
    }
    let sched_err = |source| BenchmarkError::Schedule { start, source };
    let engine_err = |e| match e {
        SimError::Schedule(source) => sched_err(source),
        source => BenchmarkError::Engine { start, source },
    };
    let index: HashMap<u64, usize> = jobs.iter().enumerate().map(|(i, j)| (j.id, i)).collect();
    let mut waits = vec![f64::NAN; jobs.len()];
    let mut order = Vec::with_capacity(jobs.len());
    let mut started: Vec<Started> = Vec::new();
    let mut engine: Engine<_, Managed<Paging>, ()> =
        Engine::one_event_per_step(alloc, jobs.iter().copied()).map_err(engine_err)?;
    // The first step is the first job's arrival; the policy schedules
    // after every step, until the last job has started.
    loop {
        let mut replay = Replay {
            sched: sched.as_mut(),
        };
        if !engine.step(&mut replay).map_err(engine_err)? {
            return Err(BenchmarkError::Stalled {
                start,
                policy: sched.name(),
                waiting: sched.queue_len(),
            });
        }
        let now = engine.now();
        started.clear();
        sched
            .schedule(now, engine.alloc_mut(), &mut started)
            .map_err(sched_err)?;
        for s in started.drain(..) {
            let i = index.get(&s.job.id).copied().unwrap_or(0);
            waits[i] = now - jobs[i].arrival;
            order.push(i);
            engine
                .launch(s.job, s.grant, ())
                .map_err(|_| BenchmarkError::RunTime {
                    job: jobs[i].id,
                    run: jobs[i].service,
                })?;
        }
        if engine.next_arrival().is_none() && sched.queue_len() == 0 {
            break;
        }
    }
    let n = jobs.len() as f64;
    let bounded_slowdown = order.iter().fold(0.0, |sum, &i| {
        let j = &jobs[i];
        let begin = j.arrival + waits[i];
        sum + bounded_slowdown(j.arrival, begin, begin + j.service, bound) / n
    });
    Ok(SequenceRun {
        bounded_slowdown,
        waits,
    })
}

/// The policy, told of each event of a replay by the engine.
struct Replay<'a> {
    sched: &'a mut dyn Scheduler,
}

impl EventSink<Managed<Paging>, ()> for Replay<'_> {
    fn departed(
        &mut self,
        _alloc: &mut Managed<Paging>,
        _slot: u32,
        run: &Running<()>,
        now: f64,
    ) -> Result<(), SimError> {
        self.sched.departed(&run.job, now);
        Ok(())
    }

    fn arrived(&mut self, job: Job, now: f64) -> Result<(), SimError> {
        Ok(self.sched.submit(job, now)?)
    }
}

/// The known heuristic names: every queue order.
fn known_heuristics() -> String {
    ORDERS.map(|(name, _)| name).join(", ")
}

/// The heuristic `name` (a queue order: `fcfs`, `sjf`, `wfp3`, `unicep`,
/// `f1`, `wfp3-rlscheduler`, …) with or without backfilling, as RLScheduler's
/// simulator runs it: `rlscheduler[order=name,backfill=…]`.
///
/// # Errors
/// [`BenchmarkError::UnknownHeuristic`] for a name that is no order.
pub fn heuristic(name: &str, backfill: bool) -> Result<PolicySpec, BenchmarkError> {
    let order: Order = name.parse().map_err(|_| BenchmarkError::UnknownHeuristic {
        given: partalloc_topology::echo(name),
        known: known_heuristics(),
    })?;
    let spec = StrategySpec::bare("rlscheduler")
        .with("order", order)
        .with("backfill", backfill);
    Ok(POLICIES.resolve(spec)?)
}

/// With which backfilling settings the heuristics run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Backfill {
    /// Without backfilling only.
    Off,
    /// With backfilling only.
    On,
    /// Both: each heuristic twice, without then with.
    #[default]
    Both,
}

impl Backfill {
    /// The settings, in order.
    #[must_use]
    pub fn settings(self) -> &'static [bool] {
        match self {
            Self::Off => &[false],
            Self::On => &[true],
            Self::Both => &[false, true],
        }
    }
}

impl Backfill {
    /// Every setting, in the order messages list them.
    pub const ALL: [Backfill; 3] = [Self::Off, Self::On, Self::Both];

    /// Its name, as `--backfill` and Python's `backfill=` spell it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::On => "on",
            Self::Both => "both",
        }
    }
}

impl core::fmt::Display for Backfill {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for Backfill {
    type Err = BenchmarkError;
    fn from_str(s: &str) -> Result<Self, BenchmarkError> {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == s.trim())
            .ok_or_else(|| BenchmarkError::UnknownBackfill(partalloc_topology::echo(s)))
    }
}

/// One policy of a benchmark: its spec and how the table names it.
#[derive(Debug, Clone)]
pub struct BenchPolicy {
    /// The heuristic's name, or the policy's spec as it prints.
    pub label: String,
    /// The heuristic's backfilling setting (`None` for another policy).
    pub backfill: Option<bool>,
    /// What runs.
    pub spec: PolicySpec,
}

/// The policies of a benchmark: each heuristic (a queue order, see
/// [`heuristic`]) under each of `backfill`'s settings, then each policy
/// spec of `schedulers`.
///
/// # Errors
/// [`BenchmarkError::UnknownHeuristic`], or [`BenchmarkError::Policy`]
/// for a spec that does not parse.
pub fn policies<H: AsRef<str>, S: AsRef<str>>(
    heuristics: &[H],
    backfill: Backfill,
    schedulers: &[S],
) -> Result<Vec<BenchPolicy>, BenchmarkError> {
    let mut out = Vec::new();
    for name in heuristics {
        let name = name.as_ref().trim();
        for &b in backfill.settings() {
            out.push(BenchPolicy {
                label: name.to_owned(),
                backfill: Some(b),
                spec: heuristic(name, b)?,
            });
        }
    }
    for text in schedulers {
        let spec = POLICIES.spec(text.as_ref())?;
        out.push(BenchPolicy {
            label: spec.to_string(),
            backfill: None,
            spec,
        });
    }
    Ok(out)
}

/// What to run: sequence length and count, the seed of the starts (or the
/// starts themselves) and τ.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkConfig {
    /// Jobs per sequence (256).
    pub length: usize,
    /// Sequences (10), ignored when `starts` is given.
    pub sequences: usize,
    /// Seed of [`sample_starts`] (0).
    pub seed: u64,
    /// Explicit start indices, instead of drawn ones.
    pub starts: Option<Vec<usize>>,
    /// The bounded slowdown's threshold (10 s).
    pub bound: SlowdownBound,
}

impl Default for BenchmarkConfig {
    fn default() -> Self {
        Self {
            length: DEFAULT_LENGTH,
            sequences: DEFAULT_SEQUENCES,
            seed: 0,
            starts: None,
            bound: SlowdownBound::default(),
        }
    }
}

/// One policy's scores.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyScores {
    /// The policy as its spec prints.
    pub policy: String,
    /// The mean bounded slowdown of each sequence, in start order.
    pub per_sequence: Vec<f64>,
    /// Their mean.
    pub mean: f64,
}

/// A benchmark's results.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkTable {
    /// The sequences' start indices.
    pub starts: Vec<usize>,
    /// One row per policy, in the order given.
    pub rows: Vec<PolicyScores>,
}

/// Scores every policy on the same sequences of `trace`.
///
/// # Errors
/// Any [`BenchmarkError`] of sampling, of [`BenchTrace::sequence`] or of
/// [`run_sequence`].
pub fn run(
    trace: &BenchTrace,
    policies: &[PolicySpec],
    config: &BenchmarkConfig,
) -> Result<BenchmarkTable, BenchmarkError> {
    let starts = match &config.starts {
        Some(s) => s.clone(),
        None => sample_starts(
            trace.jobs.len(),
            config.length,
            config.sequences,
            config.seed,
        )?,
    };
    if starts.is_empty() {
        return Err(BenchmarkError::Zero { what: "sequences" });
    }
    let sequences = starts
        .iter()
        .map(|&s| trace.sequence(s, config.length))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows = Vec::with_capacity(policies.len());
    for policy in policies {
        let per_sequence = sequences
            .iter()
            .zip(&starts)
            .map(|(jobs, &s)| {
                run_sequence(jobs, trace.nodes, policy, config.bound, s).map(|r| r.bounded_slowdown)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mean = per_sequence.iter().sum::<f64>() / per_sequence.len() as f64;
        rows.push(PolicyScores {
            policy: policy.to_string(),
            per_sequence,
            mean,
        });
    }
    Ok(BenchmarkTable { starts, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: u32, submit: u32, run: i64, alloc: i64, req_procs: i64, req_time: i64) -> String {
        format!(
            "{id} {submit} -1 {run} {alloc} -1 -1 {req_procs} {req_time} -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        )
    }

    fn trace(header: &str, lines: &[String]) -> Result<BenchTrace, BenchmarkError> {
        BenchTrace::from_reader(format!("{header}{}", lines.concat()).as_bytes())
    }

    #[test]
    fn the_trace_is_read_as_job_py_reads_it() {
        let t = trace(
            "; MaxNodes: 8\n",
            &[
                line(3, 20, 50, 2, 4, -1), // 4 processors (field 8), estimate = run
                line(1, 0, 0, 1, -1, 9),   // run time 0: dropped
                line(2, 10, -1, 3, -1, 7), // run −1 → 10, estimate 7 kept
            ],
        )
        .unwrap();
        let got: Vec<_> = t
            .jobs()
            .iter()
            .map(|j| (j.id, j.nodes(), j.service, j.estimate))
            .collect();
        assert_eq!(got, [(2, 3, 10.0, Some(7.0)), (3, 4, 50.0, Some(50.0))]);
        assert_eq!(
            (t.nodes(), t.index_of(3), t.index_of(1)),
            (8, Some(1), None)
        );
    }

    #[test]
    fn bad_traces_are_refused_with_one_line() {
        let msg = |header: &str, l: String| trace(header, &[l]).unwrap_err().to_string();
        assert_eq!(
            msg("; MaxNodes: 8\n; MaxProcs: 16\n", line(1, 0, 5, 1, -1, -1)),
            "the trace header gives MaxProcs 16 on MaxNodes 8; the benchmark replays machines of one processor per node only"
        );
        assert!(msg("", line(1, 0, 5, 1, -1, -1)).contains("neither MaxNodes nor MaxProcs"));
        assert_eq!(
            msg("; MaxProcs: 8\n", line(4, 0, 5, 9, -1, -1)),
            "job 4 asks for 9 processors; the machine has 8 (1 to 8 are usable)"
        );
        let m = msg("; MaxProcs: 8\n", line(4, 0, 5, -1, -1, -1));
        assert!(
            m.contains("asks for -1 processors") && !m.contains('\n'),
            "{m}"
        );
    }

    #[test]
    fn starts_are_seeded_uniform_on_the_simulators_range() {
        let a = sample_starts(1000, 100, 50, 7).unwrap();
        assert_eq!(a, sample_starts(1000, 100, 50, 7).unwrap());
        assert_ne!(a, sample_starts(1000, 100, 50, 8).unwrap());
        assert!(a.iter().all(|&s| (100..899).contains(&s)), "{a:?}");
        // The smallest trace leaves one start: N.
        assert_eq!(sample_starts(2 * 5 + 2, 5, 3, 1).unwrap(), [5, 5, 5]);
        let short = sample_starts(2 * 5 + 1, 5, 3, 1).unwrap_err();
        assert_eq!(
            short.to_string(),
            "sequences of 5 jobs need a trace of at least 12 jobs; this trace has 11, enough for sequences of at most 4"
        );
        assert_eq!(
            sample_starts(100, 0, 3, 1).unwrap_err().to_string(),
            "length must be at least 1"
        );
        assert_eq!(
            sample_starts(100, 5, 0, 1).unwrap_err().to_string(),
            "sequences must be at least 1"
        );
        assert_eq!(
            sample_starts(100, 5, usize::MAX, 1)
                .unwrap_err()
                .to_string(),
            format!(
                "{} sequences asked for; at most 1000000 are drawn",
                usize::MAX
            )
        );
    }

    #[test]
    fn duplicate_job_numbers_and_unknown_backfill_settings_are_refused() {
        let twice = [line(1, 0, 5, 1, -1, -1), line(1, 3, 5, 1, -1, -1)];
        let e = trace("; MaxNodes: 2\n", &twice).unwrap_err().to_string();
        assert_eq!(
            e,
            "job number 1 appears twice; the benchmark needs every job numbered once"
        );
        assert_eq!(
            "both".parse::<Backfill>().unwrap().settings(),
            [false, true]
        );
        assert_eq!(
            "maybe".parse::<Backfill>().unwrap_err().to_string(),
            "backfill \"maybe\": use off, on or both"
        );
        let list = policies(&["sjf", "f1"], Backfill::On, &["fcfs"]).unwrap();
        let got: Vec<_> = list
            .iter()
            .map(|p| (p.label.as_str(), p.backfill))
            .collect();
        assert_eq!(
            got,
            [("sjf", Some(true)), ("f1", Some(true)), ("fcfs", None)]
        );
        assert_eq!(
            list[1].spec.to_string(),
            "rlscheduler[order=f1,backfill=true]"
        );
    }

    #[test]
    fn explicit_starts_past_the_end_and_unknown_heuristics_are_refused() {
        let lines: Vec<String> = (1..=10).map(|i| line(i, i * 10, 5, 1, -1, -1)).collect();
        let t = trace("; MaxNodes: 2\n", &lines).unwrap();
        assert_eq!(
            t.sequence(8, 3).unwrap_err().to_string(),
            "a sequence of 3 jobs from index 8 runs past the trace's 10 jobs"
        );
        let e = heuristic("fifo", true).unwrap_err().to_string();
        assert!(
            e.starts_with("unknown heuristic \"fifo\"; known heuristics: fcfs,"),
            "{e}"
        );
        let config = BenchmarkConfig {
            starts: Some(vec![0, 8]),
            length: 3,
            ..BenchmarkConfig::default()
        };
        let policies = [heuristic("fcfs", false).unwrap()];
        assert!(matches!(
            run(&t, &policies, &config),
            Err(BenchmarkError::StartOutOfRange { start: 8, .. })
        ));
    }

    /// Jobs come in job-number order, so job 2's submit time (5) is
    /// before the clock (10, job 1's): it arrives then, and starts at 10
    /// on the free node, waiting 5 from its own submit time. (Refusing it
    /// or moving the clock back to 5 would fail this.)
    #[test]
    fn a_submit_time_before_the_clock_arrives_at_the_clock() {
        let jobs = [
            Job::new(1, 10.0, JobShape::Nodes { count: 1 }, 20.0),
            Job::new(2, 5.0, JobShape::Nodes { count: 1 }, 10.0),
        ];
        let fcfs = heuristic("fcfs", false).unwrap();
        let run = run_sequence(&jobs, 2, &fcfs, SlowdownBound::default(), 0).unwrap();
        assert_eq!(run.waits, [0.0, 5.0]);
        assert_eq!(run.bounded_slowdown, 1.0 / 2.0 + (15.0 / 10.0) / 2.0);
        // A job too large for the machine leaves the queue stuck.
        let stuck = [Job::new(1, 0.0, JobShape::Nodes { count: 3 }, 1.0)];
        let e = run_sequence(&stuck, 2, &fcfs, SlowdownBound::default(), 7).unwrap_err();
        assert!(e.to_string().starts_with("sequence from index 7: "), "{e}");
    }

    /// Two jobs arriving together are seen one at a time, as in the
    /// simulator: the long 2-node job arrives first and becomes the chosen
    /// head while job 1 runs, so SJF starts it at 10 ahead of the short job
    /// that arrived at the same time, which waits until 110. (Scheduling
    /// once per batch of events would start the short one first.)
    #[test]
    fn simultaneous_arrivals_are_seen_one_at_a_time() {
        let jobs = [
            Job::new(1, 0.0, JobShape::Nodes { count: 2 }, 10.0),
            Job::new(2, 5.0, JobShape::Nodes { count: 2 }, 100.0),
            Job::new(3, 5.0, JobShape::Nodes { count: 1 }, 1.0),
        ];
        let sjf = heuristic("sjf", false).unwrap();
        let run = run_sequence(&jobs, 2, &sjf, SlowdownBound::default(), 0).unwrap();
        assert_eq!(run.waits, [0.0, 5.0, 105.0]);
        let expected = 1.0 / 3.0 + (105.0 / 100.0) / 3.0 + (106.0 / 10.0) / 3.0;
        assert_eq!(run.bounded_slowdown, expected);
        // τ moves the third job's bound: 106 / max(1, 50).
        let tau = SlowdownBound::new(50.0).unwrap();
        let run = run_sequence(&jobs, 2, &sjf, tau, 0).unwrap();
        assert_eq!(
            run.bounded_slowdown,
            1.0 / 3.0 + (105.0 / 100.0) / 3.0 + (106.0 / 50.0) / 3.0
        );
    }
}
