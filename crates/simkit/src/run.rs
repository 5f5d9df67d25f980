//! The run loop: workload → scheduler → allocator.
//!
//! A [`Simulation`] owns an allocator, a scheduler and a job source (any
//! iterator of [`Job`]s in non-decreasing arrival order: a generator or a
//! replayed trace). It runs on the one event loop that the
//! [`Stepper`](crate::Stepper) runs on too (the crate's engine: the source
//! pulled one job ahead, running jobs in a slab, their departures in a
//! [`Calendar`](crate::Calendar)), with a scheduler making the decisions
//! and measuring observers watching. At every event time it
//!
//! 1. processes every event at that time: each departure (in start order
//!    for equal end times) releases the job's grant and tells the
//!    scheduler ([`Scheduler::departed`]), then each arrival (in source
//!    order) is submitted to the scheduler;
//! 2. asks the scheduler once to start jobs ([`Scheduler::schedule`]) and
//!    schedules each started job's departure at start + service;
//! 3. records the state until the next event for the time averages, and
//!    shows it to the observers ([`observe`](crate::observe)).
//!
//! Events at the same time are simultaneous: the scheduler sees all of
//! them before deciding (a batch of jobs arriving at t = 0 is queued
//! before any is started).
//!
//! A Standard Workload Format trace becomes a source through
//! `partalloc_workload::swf::SwfReader::jobs`, whose items are
//! `Result<Job, SwfError>`: collect them first (`collect::<Result<Vec<_>,
//! _>>()?`, so a malformed line is reported with its number) or stream them
//! with `map_while(Result::ok)`.
//!
//! The run stops when the stop rule is met ([`Stop`]) or when the source is
//! exhausted and the machine is empty. The first [`SimConfig::warmup`]
//! completed jobs are excluded from every statistic, and the time averages
//! start when the last of them completes. The statistics are defined in
//! [`report`](crate::report).
//!
//! ```
//! use partalloc_simkit::run::{SimConfig, Simulation, Stop};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let sched = partalloc_schedulers::registry::build("fcfs", &machine)?;
//! let jobs = [(1, 0.0, 3, 2.0), (2, 0.0, 2, 1.0), (3, 1.0, 1, 1.0)].map(|(id, arrival, count, service)| {
//!     Job::new(id, arrival, JobShape::Nodes { count }, service)
//! });
//! let report = Simulation::new(machine, alloc, sched, jobs, SimConfig::default())?.run()?;
//! // J1 runs 0–2; J2 (2 nodes) waits for it and blocks J3 (FCFS): 2–3 both.
//! assert_eq!(report.results.completed, 3);
//! assert_eq!(report.results.mean_response, (2.0 + 3.0 + 2.0) / 3.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

use partalloc_allocators::registry::AllocatorSpec;
use partalloc_allocators::{
    AllocError, Allocator, AllocatorWrapper, Grant, Partition, ReleaseError, Request,
};
use partalloc_schedulers::registry::PolicySpec;
use partalloc_schedulers::{Preemption, ScheduleError, Scheduler, Started};
use partalloc_topology::Topology;
use partalloc_workload::Job;
use thiserror::Error;

use crate::engine::{Engine, EventSink, Running};
use crate::measure::{MeasureNotApplicable, MeasureObservers, MeasureSet};
use crate::observe::{Departure, Observer};
use crate::report::{JobRecord, Report, Results, SearchTime};
use crate::runtime_model::{Dilation, RuntimeModel, RuntimeModelError};
use crate::slowdown::{SlowdownBound, SlowdownBoundError, bounded_slowdown};
use crate::{CalendarError, StatsError, TimeWeighted};

/// When a run stops (whichever comes first; with neither, it runs until the
/// source is exhausted and every job has completed).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stop {
    /// Stop once this many jobs have completed after the warm-up.
    pub jobs: Option<u64>,
    /// Stop at this simulated time (events after it are not processed).
    pub time: Option<f64>,
}

/// The most measured jobs a run keeps a [`JobRecord`] of
/// ([`SimConfig::record_jobs`]): checked by the front ends before a run
/// that records its jobs.
pub const MAX_RECORDED_JOBS: u64 = 10_000_000;

/// Options of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SimConfig {
    /// When to stop.
    pub stop: Stop,
    /// Number of first completed jobs excluded from the statistics.
    pub warmup: u64,
    /// Keep a [`JobRecord`] per measured job.
    pub record_jobs: bool,
    /// Measure the wall-clock time spent in allocate and release (sampled
    /// for fast allocators: see [`SearchTime`]).
    pub measure_search_time: bool,
    /// The threshold τ of the bounded slowdown ([`crate::slowdown`]; 10 by
    /// default).
    pub slowdown_bound: SlowdownBound,
    /// The measures taken beyond the basic quantities ([`crate::measure`];
    /// the machine's own by default).
    pub measures: MeasureSet,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            stop: Stop::default(),
            warmup: 0,
            record_jobs: false,
            measure_search_time: true,
            slowdown_bound: SlowdownBound::default(),
            measures: MeasureSet::AUTO,
        }
    }
}

impl SimConfig {
    /// The same options with the bounded slowdown's threshold τ set to
    /// `seconds`.
    ///
    /// ```
    /// use partalloc_simkit::SimConfig;
    /// let c = SimConfig::default().with_slowdown_bound(60.0)?;
    /// assert_eq!(c.slowdown_bound.seconds(), 60.0);
    /// assert_eq!(
    ///     SimConfig::default().with_slowdown_bound(0.0).unwrap_err().to_string(),
    ///     "slowdown bound 0 must be above 0 seconds (the usual bound is 10)"
    /// );
    /// # Ok::<(), partalloc_simkit::SlowdownBoundError>(())
    /// ```
    ///
    /// # Errors
    /// A bound that is not finite or not above 0.
    pub fn with_slowdown_bound(mut self, seconds: f64) -> Result<Self, SlowdownBoundError> {
        self.slowdown_bound = SlowdownBound::new(seconds)?;
        Ok(self)
    }
}

/// Why a run could not be set up or failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    /// The run-time model stretched a job's run time past every finite
    /// time.
    #[error(
        "the run-time model gives job {job} a run time of {run_time:e}, past any finite time; lower the model's coefficients"
    )]
    RunTimeOverflow {
        /// The job.
        job: u64,
        /// The run time the model gave.
        run_time: f64,
    },
    /// The allocator manages another machine than the one given.
    #[error("the allocator manages {allocator}, but the simulation is for {machine}")]
    TopologyMismatch {
        /// The allocator's machine.
        allocator: String,
        /// The machine given.
        machine: String,
    },
    /// The stop time is not a finite number above 0.
    #[error(
        "stop time {0} must be a finite number above 0; a run that stops at 0 measures nothing"
    )]
    BadStopTime(f64),
    /// The allocator could not be built by name.
    #[error(transparent)]
    Allocator(#[from] partalloc_allocators::BuildError),
    /// The scheduler could not be built by name.
    #[error(transparent)]
    Scheduler(#[from] partalloc_schedulers::PolicyBuildError),
    /// A job arrived before the previous one.
    #[error(
        "job {id} arrives at {arrival}, before the previous job ({previous}); sort the source by arrival"
    )]
    Unordered {
        /// The job's id.
        id: u64,
        /// Its arrival time.
        arrival: f64,
        /// The previous arrival time.
        previous: f64,
    },
    /// Two jobs share an id.
    #[error("job id {0} is used twice; job ids must be unique")]
    DuplicateId(u64),
    /// A job has a non-finite or negative arrival or service time, or the
    /// scheduler could not serve a job.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// An event time was refused.
    #[error(transparent)]
    Calendar(#[from] CalendarError),
    /// A statistic refused an observation.
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// The allocator refused to take back a grant it issued.
    #[error("the allocator refused a release: {0}")]
    Release(#[from] ReleaseError),
    /// The run-time model does not fit the machine.
    #[error(transparent)]
    RuntimeModel(#[from] RuntimeModelError),
    /// A measure was asked of a machine that does not have it.
    #[error(transparent)]
    Measure(#[from] MeasureNotApplicable),
    /// More jobs wait than [`MAX_WAITING`]: the machine cannot keep up.
    #[error(
        "{waiting} jobs wait at time {time}, more than the {max} a run holds: the offered load is more than the machine serves; lower the load or the number of jobs",
        max = MAX_WAITING
    )]
    Saturated {
        /// Jobs waiting.
        waiting: usize,
        /// When the queue passed the bound.
        time: f64,
    },
}

/// Most jobs a run lets wait at once (2^21, a few hundred MB of queued
/// jobs). A run past it is saturated: more work arrives than the machine
/// serves, so the queue, and the memory it holds, would grow with the
/// length of the run. It stops with [`SimError::Saturated`] instead.
pub const MAX_WAITING: usize = 1 << 21;

/// A multiplicative hash for job ids (the Fx hash's step): the waiting-job
/// map is looked up twice per job, and job ids need no defence against
/// chosen collisions, so SipHash's cost buys nothing here. Lookups only:
/// iteration order never reaches the results.
#[derive(Debug, Default, Clone, Copy)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// Counts allocation attempts and misses and times allocator calls.
#[derive(Debug, Default, Clone, Copy)]
struct Meter {
    measuring: bool,
    timing: bool,
    attempts: u64,
    valid: u64,
    misses: u64,
    allocate: CallClock,
}

/// The longest stride [`CallClock`] samples with.
const MAX_STRIDE: u32 = 1024;

/// The timed calls of a stride should take this many times the cost of
/// one clock read, so that the stride's two reads stay within about 1% of
/// the time spent in its calls.
const CALL_TIME_PER_READ: u32 = 200;

/// A sampled call counts at most this many times the mean of the timed
/// calls (see [`CallClock::stop`]).
const OUTLIER: u32 = 16;

/// The least time the timed calls of a stride should take, whatever the
/// clock costs.
const MIN_SAMPLED_PER_STRIDE: Duration = Duration::from_micros(2);

/// The time the timed calls of a stride should add up to: a multiple of
/// one read of the monotonic clock, measured once per process (tens of
/// nanoseconds on most machines, several times that in some virtual
/// machines).
fn sampled_per_stride() -> Duration {
    static ONCE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *ONCE.get_or_init(|| {
        let read = (0..16)
            .map(|_| Instant::now().elapsed())
            .min()
            .unwrap_or(Duration::ZERO);
        (read * CALL_TIME_PER_READ).max(MIN_SAMPLED_PER_STRIDE)
    })
}

/// A sampled estimate of the time spent in one kind of allocator call.
///
/// Timing every call of a fast allocator (tens of nanoseconds) with two
/// clock reads would cost as much as the call. So one call in `stride` is
/// timed and stands for `stride` calls; the stride grows (up to
/// [`MAX_STRIDE`]) while the timed calls are short and is 1 for calls of
/// [`sampled_per_stride`] or more, which are then all timed. The gap to the
/// next timed call is drawn uniformly from 1..=2·stride − 1 (mean
/// `stride`), so a scheduler's regular pattern of cheap and costly calls
/// cannot line up with the samples. The draws use a generator of their
/// own: timing never touches the simulation's randomness or results.
#[derive(Debug, Clone, Copy)]
struct CallClock {
    /// Calls left before the next timed one.
    skip: u32,
    stride: u32,
    /// xorshift64 state for the gaps.
    gaps: u64,
    timed: Duration,
    timed_calls: u64,
    /// Σ duration × stride over the timed calls.
    estimate: Duration,
}

impl Default for CallClock {
    fn default() -> Self {
        Self {
            skip: 0,
            stride: 1,
            gaps: 0x9E37_79B9_7F4A_7C15,
            timed: Duration::ZERO,
            timed_calls: 0,
            estimate: Duration::ZERO,
        }
    }
}

impl CallClock {
    /// The start of this call if it is one of the timed ones.
    #[inline]
    fn start(&mut self) -> Option<Instant> {
        if self.skip == 0 {
            Some(Instant::now())
        } else {
            self.skip -= 1;
            None
        }
    }

    /// Records a timed call that started at `t0`.
    fn stop(&mut self, t0: Instant) {
        let mut d = t0.elapsed();
        if self.stride > 1 && self.timed_calls > 0 {
            // A call that stands for others counts at most OUTLIER times
            // the mean so far: a preemption of the thread inside one
            // sampled call (milliseconds on a loaded machine) would
            // otherwise be multiplied by the stride.
            d = d.min(self.timed / u32::try_from(self.timed_calls).unwrap_or(u32::MAX) * OUTLIER);
        }
        self.estimate += d * self.stride;
        self.timed += d;
        self.timed_calls += 1;
        let mean = self.timed.as_nanos() / u128::from(self.timed_calls);
        let wanted = sampled_per_stride().as_nanos() / mean.max(1);
        self.stride = u32::try_from(wanted)
            .unwrap_or(MAX_STRIDE)
            .clamp(1, MAX_STRIDE);
        self.gaps ^= self.gaps << 13;
        self.gaps ^= self.gaps >> 7;
        self.gaps ^= self.gaps << 17;
        // Both at most 2·MAX_STRIDE, so the cast is exact.
        self.skip = (self.gaps % u64::from(2 * self.stride - 1)) as u32;
    }
}

/// The allocator as the engine holds it during a run: every call is
/// forwarded (by [`AllocatorWrapper`]); `allocate` is counted and timed,
/// `release` timed.
#[derive(Debug)]
struct Metered {
    inner: Box<dyn Allocator>,
    meter: Meter,
    release: CallClock,
}

impl Metered {
    #[inline]
    fn timing(&self) -> bool {
        self.meter.timing && self.meter.measuring
    }
}

impl Metered {
    /// One allocation call (the strategy's own choice or a chosen
    /// placement), timed and counted: an attempt, valid when enough nodes
    /// are free, a miss when a valid attempt finds no room.
    #[inline]
    fn metered(
        &mut self,
        request: &Request,
        call: impl FnOnce(&mut dyn Allocator) -> Result<Grant, AllocError>,
    ) -> Result<Grant, AllocError> {
        let free = self.inner.free_nodes() as u64;
        let t0 = if self.timing() {
            self.meter.allocate.start()
        } else {
            None
        };
        let r = call(self.inner.as_mut());
        if let Some(t0) = t0 {
            self.meter.allocate.stop(t0);
        }
        if self.meter.measuring {
            self.meter.attempts += 1;
            if free >= request.node_count() {
                self.meter.valid += 1;
                if matches!(r, Err(AllocError::NoRoom { .. })) {
                    self.meter.misses += 1;
                }
            }
        }
        r
    }
}

impl AllocatorWrapper for Metered {
    fn inner(&self) -> &dyn Allocator {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn Allocator {
        self.inner.as_mut()
    }
    fn wrapped_allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        self.metered(request, |inner| inner.allocate(request))
    }
    fn wrapped_allocate_at(
        &mut self,
        request: &Request,
        at: &Partition,
    ) -> Result<Grant, AllocError> {
        self.metered(request, |inner| inner.allocate_at(request, at))
    }
    fn wrapped_release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let t0 = if self.timing() {
            self.release.start()
        } else {
            None
        };
        self.inner.release(grant)?;
        if let Some(t0) = t0 {
            self.release.stop(t0);
        }
        Ok(())
    }
}

/// A simulation of one machine, one allocator, one scheduler and one job
/// stream.
#[derive(Debug)]
pub struct Simulation<I> {
    topology: Topology,
    alloc: Box<dyn Allocator>,
    sched: Box<dyn Scheduler>,
    source: I,
    config: SimConfig,
    runtime: Option<Dilation>,
}

/// What the run keeps beside a running job: its numerical delay (the
/// measures' observers keep what they need per running slot).
#[derive(Debug, Clone, Copy)]
struct Extra {
    numerical: f64,
}

/// Running sums of the measured jobs.
#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    completed: u64,
    response: f64,
    wait: f64,
    service: f64,
    numerical: f64,
    topological: f64,
    bounded_slowdown: f64,
    requested: f64,
    granted: f64,
    fragmentation: f64,
}

impl<I: Iterator<Item = Job>> Simulation<I> {
    /// A simulation of `topology` with this allocator (which must manage
    /// `topology`), scheduler and job source.
    ///
    /// # Errors
    /// [`SimError::TopologyMismatch`], or a stop time that is not a finite
    /// number above 0.
    pub fn new(
        topology: Topology,
        alloc: Box<dyn Allocator>,
        sched: Box<dyn Scheduler>,
        source: impl IntoIterator<IntoIter = I>,
        config: SimConfig,
    ) -> Result<Self, SimError> {
        if *alloc.topology() != topology {
            return Err(SimError::TopologyMismatch {
                allocator: alloc.topology().to_string(),
                machine: topology.to_string(),
            });
        }
        if let Some(t) = config.stop.time
            && !(t.is_finite() && t > 0.0)
        {
            return Err(SimError::BadStopTime(t));
        }
        Ok(Self {
            topology,
            alloc,
            sched,
            source: source.into_iter(),
            config,
            runtime: None,
        })
    }

    /// A simulation with the allocator and the scheduler built from specs
    /// parsed once (a built-in registry's, a registry value extended with
    /// one's own strategies, or [`Spec::from_fn`](partalloc_allocators::registry::Spec::from_fn)):
    /// the allocator is built first, then the scheduler.
    ///
    /// ```
    /// use partalloc_allocators::registry::ALLOCATORS;
    /// use partalloc_schedulers::registry::POLICIES;
    /// use partalloc_simkit::{SimConfig, Simulation};
    /// use partalloc_workload::{Job, JobShape};
    /// let (paging, fcfs) = (ALLOCATORS.spec("paging")?, POLICIES.spec("fcfs")?);
    /// for count in [4, 8] {
    ///     let jobs = vec![Job::new(1, 0.0, JobShape::Nodes { count }, 1.0)];
    ///     let sim = Simulation::from_specs("mesh:4x4".parse()?, &paging, &fcfs, jobs, SimConfig::default())?;
    ///     let r = sim.run()?;
    ///     assert_eq!(r.results.utilization, f64::from(count) / 16.0);
    ///     assert_eq!(r.scheduler, "fcfs");
    /// }
    /// // A name no registry knows is refused when parsed.
    /// assert!(POLICIES.spec("fifo").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// What building either refuses (its machine family, parameters or
    /// their values), and as [`Simulation::new`].
    pub fn from_specs(
        topology: Topology,
        allocator: &AllocatorSpec,
        scheduler: &PolicySpec,
        source: impl IntoIterator<IntoIter = I>,
        config: SimConfig,
    ) -> Result<Self, SimError> {
        let alloc = allocator.build(&topology)?;
        let sched = scheduler.build(&topology)?;
        Self::new(topology, alloc, sched, source, config)
    }

    /// The same simulation with job run times from `model`
    /// ([`runtime_model`](crate::runtime_model)): each started job runs
    /// for the model's time on its grant instead of its service time.
    ///
    /// ```
    /// use partalloc_allocators::registry::ALLOCATORS;
    /// use partalloc_schedulers::registry::POLICIES;
    /// use partalloc_simkit::{RuntimeModel, SimConfig, Simulation};
    /// use partalloc_workload::{Job, JobShape};
    /// // Paging hands the 4 nodes of a 4×4 mesh's first row: a row of 4,
    /// // whose distances sum to 10 where the baseline 2×2 square's sum to 8.
    /// let jobs = vec![Job::new(1, 0.0, JobShape::Nodes { count: 4 }, 100.0)];
    /// let model: RuntimeModel = "linear:0.5".parse()?;
    /// let (paging, fcfs) = (ALLOCATORS.spec("paging")?, POLICIES.spec("fcfs")?);
    /// let r = Simulation::from_specs("mesh:4x4".parse()?, &paging, &fcfs, jobs, SimConfig::default())?
    ///     .with_runtime_model(model)?
    ///     .run()?;
    /// assert_eq!(r.results.mean_service, 100.0 * (1.0 + 0.5 * (10.0 / 8.0 - 1.0)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SimError::RuntimeModel`] on a machine without hop distances.
    pub fn with_runtime_model(mut self, model: RuntimeModel) -> Result<Self, SimError> {
        self.runtime = Some(Dilation::new(model, &self.topology)?);
        Ok(self)
    }

    /// Runs the simulation to its stop rule and reports.
    ///
    /// # Errors
    /// A job out of arrival order, a duplicate id, a job with bad times or
    /// one the allocator can never serve, or an allocator that refuses to
    /// take back its own grant.
    pub fn run(self) -> Result<Report, SimError> {
        self.run_observed(&mut (), None)
    }

    /// Runs like [`run`](Self::run) with `observer` watching every event
    /// (see [`observe`](crate::observe); `()` for none), and with each
    /// measured job's record handed to `records`, if given, as the job
    /// completes instead of kept in [`Report::jobs`] (left empty), whatever
    /// [`SimConfig::record_jobs`] says: with a streamed source, memory then
    /// stays flat in the number of jobs. The results are those of `run`: an
    /// observer only watches.
    ///
    /// ```
    /// use partalloc_allocators::registry::ALLOCATORS;
    /// use partalloc_schedulers::registry::POLICIES;
    /// use partalloc_simkit::{SimConfig, Simulation};
    /// use partalloc_workload::{Job, JobShape};
    /// let jobs = (0..3).map(|i| Job::new(i, f64::from(i as u32), JobShape::Nodes { count: 4 }, 1.0));
    /// let (paging, fcfs) = (ALLOCATORS.spec("paging")?, POLICIES.spec("fcfs")?);
    /// let mut ids = Vec::new();
    /// let sim = Simulation::from_specs("mesh:4x4".parse()?, &paging, &fcfs, jobs, SimConfig::default())?;
    /// let r = sim.run_observed(&mut (), Some(&mut |rec| ids.push(rec.id)))?;
    /// assert_eq!((ids, r.jobs.len()), (vec![0, 1, 2], 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn run_observed<O: Observer>(
        self,
        observer: &mut O,
        records: Option<&mut dyn FnMut(JobRecord)>,
    ) -> Result<Report, SimError> {
        let Self {
            topology,
            alloc,
            mut sched,
            source,
            config: cfg,
            mut runtime,
        } = self;
        let stop_time = cfg.stop.time.unwrap_or(f64::INFINITY);
        let metered = Metered {
            inner: alloc,
            meter: Meter {
                measuring: cfg.warmup == 0,
                timing: cfg.measure_search_time,
                ..Meter::default()
            },
            release: CallClock::default(),
        };
        // The source is pulled one job ahead; none after the stop time.
        let taken = cfg.measures.resolve(&topology)?;
        let mut engine: Engine<I, Metered, Extra> = Engine::new(metered, source, stop_time, false)?;
        // The taken measures' observers (the run-time model needs each
        // grant's dispersal, asked for or not), then the caller's.
        let mut observer = (
            MeasureObservers::new(&topology, taken, runtime.is_some()),
            &mut *observer,
        );
        observer.begin(&topology, engine.alloc().inner());
        let mut measures = Measures::new(&topology, &cfg, records)?;
        let mut started: Vec<Started> = Vec::new();
        let mut preempted: Vec<Preemption> = Vec::new();
        let mut stopped_by_jobs = false;
        while let Some(t) = engine.next_time() {
            if t > stop_time {
                break;
            }
            measures.advance_to(t);
            // 1. Every event at time t: departures, then arrivals.
            engine.advance_to(
                t,
                &mut Driver {
                    sched: sched.as_mut(),
                    measures: &mut measures,
                    observer: &mut observer,
                },
            )?;
            // 2. One scheduling decision for the batch; the jobs it
            // preempts end now, and the policy decides again.
            started.clear();
            sched.schedule(t, engine.alloc_mut(), &mut started)?;
            loop {
                for mut s in started.drain(..) {
                    let numerical = measures.started(&s);
                    if let Some(model) = runtime.as_mut() {
                        let dispersal = observer.0.dispersal_ahead(s.grant.partition());
                        s.job.service = model.run_time(s.job.service, s.job.id, dispersal.as_ref());
                        if !(t + s.job.service).is_finite() {
                            return Err(SimError::RunTimeOverflow {
                                job: s.job.id,
                                run_time: s.job.service,
                            });
                        }
                    }
                    let extra = Extra { numerical };
                    let slot = engine.launch(s.job, s.grant, extra)?;
                    if let Some(r) = engine.running_at(slot) {
                        observer.started(slot, &r.job, &r.grant, t);
                    }
                }
                sched.take_preemptions(&mut preempted);
                if preempted.is_empty() {
                    break;
                }
                for p in preempted.drain(..) {
                    let Some((slot, r)) = engine.preempt(p.job)? else {
                        continue;
                    };
                    Driver {
                        sched: sched.as_mut(),
                        measures: &mut measures,
                        observer: &mut observer,
                    }
                    .preempted(engine.alloc_mut(), slot, &r, t, p.requeue);
                }
                sched.schedule(t, engine.alloc_mut(), &mut started)?;
            }
            engine.set_wakeup(sched.next_wakeup());
            // 3. The state until the next event.
            let alloc = engine.alloc().inner();
            let waiting = sched.queue_len();
            let held = (engine.busy_nodes(), engine.running_len() as u64);
            measures.settled(t, sched.head(), alloc, waiting, held)?;
            observer.settled(t, alloc, waiting);
            if cfg.stop.jobs.is_some_and(|n| measures.sums.completed >= n) {
                stopped_by_jobs = true;
                break;
            }
        }
        // Stopped by the clock with work left: the window ends at T.
        let mut end = measures.end;
        if let Some(t) = cfg.stop.time
            && !stopped_by_jobs
            && engine.has_events()
        {
            end = end.max(t);
        }
        observer.finish(end);
        let allocator = engine.alloc().name();
        let Metered { meter, release, .. } = engine.into_alloc();
        let (mut results, jobs) = measures.results(end, &meter)?;
        observer.0.report(&topology, &mut results, end);
        let n = results.completed as f64;
        let search = SearchTime {
            measured: cfg.measure_search_time,
            mean_seconds_per_job: if n > 0.0 {
                (meter.allocate.estimate + release.estimate).as_secs_f64() / n
            } else {
                0.0
            },
        };
        Ok(Report {
            allocator,
            scheduler: sched.name(),
            topology: topology.to_string(),
            results,
            search_time: search,
            jobs,
        })
    }
}

/// The scheduler, the measures and the observers (the taken measures'
/// and the caller's), told of each event by the engine.
struct Driver<'a, 's, O> {
    sched: &'a mut dyn Scheduler,
    measures: &'a mut Measures<'s>,
    observer: &'a mut (MeasureObservers, O),
}

impl<O: Observer> EventSink<Metered, Extra> for Driver<'_, '_, O> {
    #[inline]
    fn departed(
        &mut self,
        alloc: &mut Metered,
        slot: u32,
        r: &Running<Extra>,
        now: f64,
    ) -> Result<(), SimError> {
        self.ended(alloc, slot, r, now, false);
        Ok(())
    }

    #[inline]
    fn arrived(&mut self, job: Job, now: f64) -> Result<(), SimError> {
        self.sched.submit(job, now)?;
        self.measures.arrived(&job)?;
        self.observer.arrived(&job, now);
        Ok(())
    }
}

impl<O: Observer> Driver<'_, '_, O> {
    /// `r` left at `now`, at its departure or `cancelled` by preemption.
    fn ended(
        &mut self,
        alloc: &mut Metered,
        slot: u32,
        r: &Running<Extra>,
        now: f64,
        cancelled: bool,
    ) {
        self.sched.departed(&r.job, now);
        let (completed, preempted) = self.measures.departed(r, now, cancelled);
        let measured = match completed {
            Completed::Measured => {
                if let Some(mut record) = self.measures.record(r, now, preempted) {
                    self.observer.0.fill_record(slot, &mut record);
                    self.measures.keep(record);
                }
                true
            }
            Completed::WarmUp => false,
            Completed::LastWarmUp => {
                alloc.meter.measuring = true;
                self.observer.window_opened(now);
                false
            }
        };
        self.observer.departed(&Departure {
            slot,
            job: &r.job,
            grant: &r.grant,
            start: r.start,
            end: now,
            measured,
            requeued: false,
        });
    }

    /// The scheduler preempted `r` at `now` (its grant is already back
    /// with `alloc`): cancelled, it leaves the system as a completed job
    /// whose record says so; requeued, its run is lost and it waits again
    /// (its record, at its last run's end, counts the runs lost).
    fn preempted(
        &mut self,
        alloc: &mut Metered,
        slot: u32,
        r: &Running<Extra>,
        now: f64,
        requeue: bool,
    ) {
        if !requeue {
            self.ended(alloc, slot, r, now, true);
            return;
        }
        self.sched.departed(&r.job, now);
        self.measures.requeued(r);
        self.observer.departed(&Departure {
            slot,
            job: &r.job,
            grant: &r.grant,
            start: r.start,
            end: now,
            measured: false,
            requeued: true,
        });
    }
}

/// What a completion was to the statistics.
enum Completed {
    /// A warm-up job, not the last.
    WarmUp,
    /// The last warm-up job: the measurement window opens.
    LastWarmUp,
    /// A measured job.
    Measured,
}

/// The measuring observer of every run: the sums, clocks and time averages
/// that [`Results`] is made from, and the measured jobs' records.
struct Measures<'s> {
    nodes: f64,
    warmup: u64,
    slowdown_bound: SlowdownBound,
    /// Keep the records (in `records`, or handed to `sink`).
    record: bool,
    sink: Option<&'s mut dyn FnMut(JobRecord)>,
    records: Vec<JobRecord>,
    /// The numerical-delay clock: time during which the head of the queue
    /// needed more nodes than were free.
    num_clock: f64,
    num_at_arrival: HashMap<u64, f64, BuildHasherDefault<IdHasher>>,
    head_numerical: bool,
    last_t: f64,
    busy: TimeWeighted,
    useful: TimeWeighted,
    queue: TimeWeighted,
    in_system: TimeWeighted,
    useful_now: u64,
    window_start: f64,
    reset_pending: bool,
    completions: u64,
    sums: Sums,
    /// The last event time.
    end: f64,
    /// The runs preemption ended, per job still in the system.
    requeues: HashMap<u64, u32, BuildHasherDefault<IdHasher>>,
    /// Runs of measured jobs preemption ended.
    preempted: u64,
    /// Pods share nodes (a GPU-sharing cluster): a node counts as busy,
    /// and usefully so, while any pod runs there.
    shared_nodes: bool,
}

impl<'s> Measures<'s> {
    fn new(
        topology: &Topology,
        cfg: &SimConfig,
        sink: Option<&'s mut dyn FnMut(JobRecord)>,
    ) -> Result<Self, SimError> {
        Ok(Self {
            nodes: topology.num_nodes() as f64,
            warmup: cfg.warmup,
            slowdown_bound: cfg.slowdown_bound,
            record: cfg.record_jobs || sink.is_some(),
            sink,
            records: Vec::new(),
            num_clock: 0.0,
            num_at_arrival: HashMap::default(),
            head_numerical: false,
            last_t: 0.0,
            busy: TimeWeighted::new(0.0, 0.0)?,
            useful: TimeWeighted::new(0.0, 0.0)?,
            queue: TimeWeighted::new(0.0, 0.0)?,
            in_system: TimeWeighted::new(0.0, 0.0)?,
            useful_now: 0,
            window_start: 0.0,
            reset_pending: false,
            completions: 0,
            sums: Sums::default(),
            end: 0.0,
            requeues: HashMap::default(),
            preempted: 0,
            shared_nodes: topology.as_gpushare().is_some(),
        })
    }

    /// The clock moves to `t`, the next event time.
    #[inline]
    fn advance_to(&mut self, t: f64) {
        if self.head_numerical {
            self.num_clock += t - self.last_t;
        }
        self.last_t = t;
        self.end = t;
    }

    #[inline]
    fn arrived(&mut self, job: &Job) -> Result<(), SimError> {
        if self.num_at_arrival.insert(job.id, self.num_clock).is_some() {
            return Err(SimError::DuplicateId(job.id));
        }
        Ok(())
    }

    /// A job starts: returns its numerical delay.
    #[inline]
    fn started(&mut self, s: &Started) -> f64 {
        let numerical = self.num_clock
            - self
                .num_at_arrival
                .remove(&s.job.id)
                .unwrap_or(self.num_clock);
        self.useful_now += s.grant.requested_nodes();
        numerical
    }

    /// A running job was preempted and requeued: its nodes are free, it
    /// waits again, and its numerical delay so far is kept.
    fn requeued(&mut self, r: &Running<Extra>) {
        self.useful_now -= r.grant.requested_nodes();
        self.num_at_arrival
            .insert(r.job.id, self.num_clock - r.extra.numerical);
        *self.requeues.entry(r.job.id).or_insert(0) += 1;
    }

    /// A job left at `t`: at its departure, or `cancelled` by preemption.
    /// Returns what it was to the statistics and the runs preemption
    /// ended (for its record: see [`record`](Self::record)).
    #[inline]
    fn departed(&mut self, r: &Running<Extra>, t: f64, cancelled: bool) -> (Completed, u32) {
        let requested = r.grant.requested_nodes();
        self.useful_now -= requested;
        self.completions += 1;
        let preempted = if self.requeues.is_empty() {
            u32::from(cancelled)
        } else {
            self.requeues.remove(&r.job.id).unwrap_or(0) + u32::from(cancelled)
        };
        if self.completions > self.warmup {
            self.preempted += u64::from(preempted);
            let numerical = r.extra.numerical;
            let wait = r.start - r.job.arrival;
            let granted = r.grant.granted_nodes();
            let bsld = bounded_slowdown(r.job.arrival, r.start, t, self.slowdown_bound);
            let sums = &mut self.sums;
            sums.completed += 1;
            sums.response += t - r.job.arrival;
            sums.wait += wait;
            sums.service += t - r.start;
            sums.numerical += numerical;
            sums.topological += (wait - numerical).max(0.0);
            sums.bounded_slowdown += bsld;
            sums.requested += requested as f64;
            sums.granted += granted as f64;
            sums.fragmentation += r.grant.internal_fragmentation() as f64;
            (Completed::Measured, preempted)
        } else if self.completions == self.warmup {
            // The measurement window opens now.
            self.window_start = t;
            self.reset_pending = true;
            (Completed::LastWarmUp, preempted)
        } else {
            (Completed::WarmUp, preempted)
        }
    }

    /// The record of the measured job `r` that left at `t`, if records are
    /// kept (the measures' observers fill in their fields, then
    /// [`keep`](Self::keep)).
    fn record(&self, r: &Running<Extra>, t: f64, preempted: u32) -> Option<JobRecord> {
        self.record.then(|| JobRecord {
            numerical_delay: r.extra.numerical,
            preempted,
            ..JobRecord::new(&r.job, &r.grant, r.start, t, self.slowdown_bound)
        })
    }

    /// Keeps a measured job's record (or hands it to the sink).
    fn keep(&mut self, record: JobRecord) {
        match self.sink.as_mut() {
            Some(sink) => sink(record),
            None => self.records.push(record),
        }
    }

    /// The decisions at `t` are made: `head` waits first on `alloc`'s
    /// machine, `waiting` jobs wait and `running` jobs hold `busy` nodes
    /// until the next event.
    #[inline]
    fn settled(
        &mut self,
        t: f64,
        head: Option<&Job>,
        alloc: &dyn Allocator,
        waiting: usize,
        (busy, running): (u64, u64),
    ) -> Result<(), SimError> {
        self.head_numerical =
            head.is_some_and(|h| h.shape.node_count() > alloc.free_nodes() as u64);
        if waiting > MAX_WAITING {
            return Err(SimError::Saturated { waiting, time: t });
        }
        let waiting = waiting as u64;
        if self.shared_nodes {
            let in_use = alloc.total_nodes().saturating_sub(alloc.free_nodes()) as f64;
            self.busy.update(t, in_use)?;
            self.useful.update(t, in_use)?;
        } else {
            self.busy.update(t, busy as f64)?;
            self.useful.update(t, self.useful_now as f64)?;
        }
        self.queue.update(t, waiting as f64)?;
        self.in_system.update(t, (waiting + running) as f64)?;
        if self.reset_pending {
            self.reset_pending = false;
            self.busy.reset_at(t)?;
            self.useful.reset_at(t)?;
            self.queue.reset_at(t)?;
            self.in_system.reset_at(t)?;
        }
        Ok(())
    }

    /// The results of a run whose window ends at `end`, and the kept
    /// records.
    fn results(self, end: f64, meter: &Meter) -> Result<(Results, Vec<JobRecord>), SimError> {
        let sums = self.sums;
        let span = (end - self.window_start).max(0.0);
        let n = sums.completed as f64;
        let per_job = |x: f64| if n > 0.0 { x / n } else { 0.0 };
        let mean_over = |tw: &TimeWeighted| -> Result<f64, StatsError> {
            if span > 0.0 {
                Ok(tw.integral_until(end)? / span)
            } else {
                Ok(0.0)
            }
        };
        let results = Results {
            completed: sums.completed,
            span,
            mean_response: per_job(sums.response),
            mean_wait: per_job(sums.wait),
            mean_service: per_job(sums.service),
            mean_numerical_delay: per_job(sums.numerical),
            mean_topological_delay: per_job(sums.topological),
            mean_bounded_slowdown: per_job(sums.bounded_slowdown),
            utilization: mean_over(&self.busy)? / self.nodes,
            useful_utilization: mean_over(&self.useful)? / self.nodes,
            attempts: meter.attempts,
            valid_attempts: meter.valid,
            misses: meter.misses,
            miss_rate: if meter.valid > 0 {
                meter.misses as f64 / meter.valid as f64
            } else {
                0.0
            },
            mean_requested: per_job(sums.requested),
            mean_granted: per_job(sums.granted),
            mean_internal_fragmentation: per_job(sums.fragmentation),
            mean_queue_length: mean_over(&self.queue)?,
            mean_in_system: mean_over(&self.in_system)?,
            throughput: if span > 0.0 { n / span } else { 0.0 },
            preempted: self.preempted,
            ..Results::default()
        };
        Ok((results, self.records))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc_allocators::registry::ALLOCATORS;
    use partalloc_schedulers::registry::POLICIES;

    fn meter() -> Meter {
        Meter {
            measuring: true,
            timing: false,
            attempts: 0,
            valid: 0,
            misses: 0,
            allocate: CallClock::default(),
        }
    }

    /// Three jobs on a 2×2 mesh under FCFS, by hand: J1 (4 nodes, 20 s)
    /// runs 0–20; J2 (2 nodes, 5 s, arrived 0) and J3 (2 nodes, 40 s,
    /// arrived 10) wait for it and run 20–25 and 20–60. With τ = 10 the
    /// bounded slowdowns are 20/20 = 1, 25/max(5, 10) = 2.5 and 50/40 =
    /// 1.25; with τ = 1, J2's is 25/5 = 5; with τ = 100 every one is 1.
    #[test]
    fn bounded_slowdown_of_three_jobs_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        use partalloc_workload::JobShape;
        let jobs = [(1, 0.0, 4, 20.0), (2, 0.0, 2, 5.0), (3, 10.0, 2, 40.0)].map(
            |(id, arrival, count, service)| {
                Job::new(id, arrival, JobShape::Nodes { count }, service)
            },
        );
        let mesh: Topology = "mesh:2x2".parse()?;
        let run = |config: SimConfig| {
            Simulation::from_specs(
                mesh.clone(),
                &ALLOCATORS.spec("paging")?,
                &POLICIES.spec("fcfs")?,
                jobs,
                config,
            )?
            .run()
        };
        let config = SimConfig {
            record_jobs: true,
            measure_search_time: false,
            ..SimConfig::default()
        };
        let report = run(config)?;
        let per_job: Vec<(u64, f64)> = report
            .jobs
            .iter()
            .map(|j| (j.id, j.bounded_slowdown))
            .collect();
        assert_eq!(per_job, [(1, 1.0), (2, 2.5), (3, 1.25)]);
        assert_eq!(
            report.results.mean_bounded_slowdown,
            (1.0 + 2.5 + 1.25) / 3.0
        );
        let tight = run(config.with_slowdown_bound(1.0)?)?;
        assert_eq!(
            tight.results.mean_bounded_slowdown,
            (1.0 + 5.0 + 1.25) / 3.0
        );
        let loose = run(config.with_slowdown_bound(100.0)?)?;
        assert_eq!(loose.results.mean_bounded_slowdown, 1.0);
        // The other results do not depend on τ.
        let mut same = tight.results;
        same.mean_bounded_slowdown = report.results.mean_bounded_slowdown;
        assert_eq!(same, report.results);
        #[cfg(feature = "csv")]
        {
            let mut csv = Vec::new();
            report.write_jobs_csv(&mut csv)?;
            let text = String::from_utf8(csv)?;
            let mut lines = text.lines();
            assert!(lines.next().is_some_and(|h| {
                h.ends_with(",pieces,bounded_slowdown,domains_per_level,holding_level")
            }));
            // A mesh is not a capacity machine: the last two cells are empty.
            let last: Vec<&str> = lines.filter_map(|l| l.rsplit(',').nth(2)).collect();
            assert_eq!(last, ["1", "2.5", "1.25"]);
        }
        for bad in [0.0, -10.0, f64::NAN, f64::INFINITY] {
            assert!(config.with_slowdown_bound(bad).is_err(), "{bad}");
        }
        Ok(())
    }

    /// The metering layer answers every question as the allocator it wraps
    /// does: a hand-written forwarding once dropped `can_allocate`, and a
    /// scheduler probing through it was told probing was unsupported.
    #[test]
    fn the_metering_layer_forwards_every_question() -> Result<(), Box<dyn std::error::Error>> {
        let topology: Topology = "mesh:4x4".parse()?;
        let mut plain = partalloc_allocators::registry::build("fsl", &topology)?;
        let inner = partalloc_allocators::registry::build("fsl", &topology)?;
        let mut metered = Metered {
            inner,
            meter: meter(),
            release: CallClock::default(),
        };
        let big = Request::boxed(&[4, 4])?;
        let small = Request::boxed(&[2, 2])?;
        let g = metered.allocate(&small)?;
        let h = plain.allocate(&small)?;
        assert_eq!(metered.can_allocate(&big)?, plain.can_allocate(&big)?);
        assert!(metered.can_allocate(&small)?);
        assert_eq!(metered.recognizable(&small)?, plain.recognizable(&small)?);
        // A chosen placement reaches the strategy (fsl grants it) instead
        // of the trait's default refusal, and is metered as an attempt.
        let at = partalloc_allocators::Partition::Box(partalloc_topology::GridBox::from_corners(
            &[2, 2],
            &[3, 3],
        )?);
        let gm = metered.allocate_at(&small, &at)?;
        let gp = plain.allocate_at(&small, &at)?;
        assert_eq!((gm.partition(), gp.partition()), (&at, &at));
        assert_eq!(metered.busy_nodes(), plain.busy_nodes());
        assert_eq!(
            metered.allocate_at(&small, &at),
            plain.allocate_at(&small, &at)
        );
        metered.release(&gm)?;
        plain.release(&gp)?;
        assert_eq!(metered.busy_nodes(), plain.busy_nodes());
        assert_eq!(metered.free_nodes(), plain.free_nodes());
        assert_eq!(metered.live_grants(), 1);
        assert_eq!(
            metered.mark_faulty(15).is_ok(),
            plain.mark_faulty(15).is_ok()
        );
        assert_eq!(metered.faulty_nodes(), plain.faulty_nodes());
        metered.release(&g)?;
        plain.release(&h)?;
        assert_eq!(metered.name(), plain.name());
        // Attempts: the allocation, the chosen placement and its busy
        // repeat (a refusal, but not for want of room: no miss).
        let m = metered.meter;
        assert_eq!((m.attempts, m.valid, m.misses), (3, 3, 0));
        Ok(())
    }
}
