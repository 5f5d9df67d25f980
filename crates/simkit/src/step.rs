//! The run loop with the decisions left to the caller.
//!
//! A [`Stepper`] holds a machine, an allocator and a job source like a
//! [`Simulation`](crate::Simulation), but has no scheduler: between events
//! the caller looks at the waiting jobs ([`Stepper::waiting`]), asks which
//! could start now ([`Stepper::can_start`]), starts the one it chooses
//! ([`Stepper::start`]) and, when it wants no more starts, moves on to the
//! next event time ([`Stepper::advance`]). This is the loop a learned
//! scheduler is trained in: one call per decision and nothing else to do
//! per event.
//!
//! At an event time, departures are processed before arrivals; every job
//! that arrives at that time is queued before the caller decides.
//!
//! [`Stepper::backfill`] reserves a waiting job as EASY backfilling
//! reserves a blocked head and starts the others that do not delay it, by
//! the rule of [`partalloc_schedulers::easy`].
//!
//! ```
//! use partalloc_simkit::step::Stepper;
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let alloc = partalloc_allocators::registry::build("buddy", &machine)?;
//! let jobs = [(1, 0.0, 1, 2.0), (2, 0.0, 2, 1.0)].map(|(id, arrival, dim, service)| {
//!     Job::new(id, arrival, JobShape::Cube { dim }, service)
//! });
//! let mut s = Stepper::new(alloc, jobs)?;
//! s.advance()?; // t = 0: both jobs wait.
//! assert_eq!(s.waiting().len(), 2);
//! // Shortest job first: J2 (the whole 2-cube, 1 time unit) then J1.
//! assert!(s.start(1)?);
//! assert!(!s.can_start(0)?); // the machine is full
//! s.advance()?; // t = 1: J2 leaves.
//! assert!(s.start(0)?);
//! while s.advance()? {}
//! assert!(s.is_done());
//! assert_eq!(s.completions()[1].start, 1.0);
//! assert_eq!(s.now(), 3.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::{AllocError, Allocator, AllocatorWrapper, Partition, Request};
use partalloc_schedulers::easy::RunningEstimates;
use partalloc_schedulers::{RequestMapping, ScheduleError};
use partalloc_workload::Job;

use crate::engine::{Engine, EventSink, Running};
use crate::report::JobRecord;
use crate::run::SimError;
use crate::slowdown::SlowdownBound;

/// A waiting job and its request, with the last answer to "can it start?".
#[derive(Debug, Clone, Copy)]
struct Waiting {
    job: Job,
    request: Request,
    /// `Some(answer)` while the machine has not changed since it was asked.
    placeable: Option<bool>,
}

/// The caller's allocator as the engine holds it: every call forwarded.
#[derive(Debug)]
struct Plain(Box<dyn Allocator>);

impl AllocatorWrapper for Plain {
    fn inner(&self) -> &dyn Allocator {
        self.0.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn Allocator {
        self.0.as_mut()
    }
}

/// What the stepper keeps beside the engine: the waiting jobs (the
/// caller decides which start), the completions and the running jobs'
/// estimated ends.
#[derive(Debug)]
struct Queue {
    mapping: RequestMapping,
    waiting: Vec<Waiting>,
    completions: Vec<JobRecord>,
    /// The running jobs' estimated ends, for [`Stepper::backfill`].
    estimates: RunningEstimates,
    /// Whether a job departed during the current advance.
    changed: bool,
}

impl Queue {
    fn invalidate(&mut self) {
        for w in &mut self.waiting {
            w.placeable = None;
        }
    }
}

impl EventSink<Plain, ()> for Queue {
    fn departed(
        &mut self,
        _alloc: &mut Plain,
        _slot: u32,
        r: &Running<()>,
        now: f64,
    ) -> Result<(), SimError> {
        self.estimates.departed(r.job.id);
        self.completions.push(JobRecord::new(
            &r.job,
            &r.grant,
            r.start,
            now,
            SlowdownBound::default(),
        ));
        self.changed = true;
        Ok(())
    }

    fn arrived(&mut self, job: Job, _now: f64) -> Result<(), SimError> {
        self.waiting.push(Waiting {
            job,
            request: self.mapping.request(&job.shape),
            placeable: None,
        });
        Ok(())
    }
}

/// The run loop stepped by the caller's decisions (see the [module
/// docs](self)).
#[derive(Debug)]
pub struct Stepper<I: Iterator<Item = Job>> {
    engine: Engine<I, Plain, ()>,
    queue: Queue,
}

impl<I: Iterator<Item = Job>> Stepper<I> {
    /// A stepper over `source` (jobs in non-decreasing arrival order) on the
    /// allocator's machine, at time 0 with nothing queued: call
    /// [`advance`](Self::advance) to reach the first arrival.
    ///
    /// # Errors
    /// The first job has a bad arrival time.
    pub fn new(
        alloc: Box<dyn Allocator>,
        source: impl IntoIterator<IntoIter = I>,
    ) -> Result<Self, SimError> {
        Ok(Self {
            engine: Engine::new(Plain(alloc), source.into_iter(), f64::INFINITY, true)?,
            queue: Queue {
                mapping: RequestMapping::default(),
                waiting: Vec::new(),
                completions: Vec::new(),
                estimates: RunningEstimates::default(),
                changed: false,
            },
        })
    }

    /// Box requests accept any orientation when `rotate` is set.
    #[must_use]
    pub fn with_mapping(mut self, mapping: RequestMapping) -> Self {
        self.queue.mapping = mapping;
        for w in &mut self.queue.waiting {
            w.request = mapping.request(&w.job.shape);
            w.placeable = None;
        }
        self
    }

    /// The allocator (to look at the machine; decisions go through the
    /// stepper).
    #[must_use]
    pub fn allocator(&self) -> &dyn Allocator {
        self.engine.alloc().inner()
    }

    /// The current simulated time.
    #[must_use]
    pub fn now(&self) -> f64 {
        self.engine.now()
    }

    /// The waiting jobs in arrival order.
    pub fn waiting(&self) -> impl ExactSizeIterator<Item = &Job> + '_ {
        self.queue.waiting.iter().map(|w| &w.job)
    }

    /// The number of waiting jobs.
    #[must_use]
    pub fn waiting_len(&self) -> usize {
        self.queue.waiting.len()
    }

    /// The `index`-th waiting job.
    #[must_use]
    pub fn waiting_job(&self, index: usize) -> Option<&Job> {
        self.queue.waiting.get(index).map(|w| &w.job)
    }

    /// The request the `index`-th waiting job makes of the allocator (its
    /// shape under the stepper's [`RequestMapping`]): what
    /// [`start_at`](Self::start_at)'s partition must fit.
    #[must_use]
    pub fn waiting_request(&self, index: usize) -> Option<&Request> {
        self.queue.waiting.get(index).map(|w| &w.request)
    }

    /// The jobs started and not yet completed.
    #[must_use]
    pub fn running_len(&self) -> usize {
        self.engine.running_len()
    }

    /// Nodes held by running jobs.
    #[must_use]
    pub fn busy_nodes(&self) -> u64 {
        self.engine.busy_nodes()
    }

    /// Busy node·time from time 0 to [`now`](Self::now).
    #[must_use]
    pub fn busy_area(&self) -> f64 {
        self.engine.busy_area()
    }

    /// The arrival time of the next job not yet queued.
    #[must_use]
    pub fn next_arrival(&self) -> Option<f64> {
        self.engine.next_arrival().map(|j| j.arrival)
    }

    /// The completed jobs, in completion order.
    #[must_use]
    pub fn completions(&self) -> &[JobRecord] {
        &self.queue.completions
    }

    /// Whether events remain: a job still to arrive or one running.
    #[must_use]
    pub fn has_events(&self) -> bool {
        self.engine.has_events()
    }

    /// Whether the run is over: nothing waits, runs or remains to arrive.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.queue.waiting.is_empty() && !self.has_events()
    }

    /// Whether the `index`-th waiting job could start now. The allocator is
    /// asked at most once per job between two changes of the machine (see
    /// [`probe`](Self::probe)); a job asking for more nodes than are free
    /// is refused without asking.
    ///
    /// # Errors
    /// The allocator refuses to take back its own grant.
    pub fn can_start(&mut self, index: usize) -> Result<bool, SimError> {
        let alloc = self.engine.alloc_mut().inner_mut();
        let free = alloc.free_nodes() as u64;
        let Some(w) = self.queue.waiting.get_mut(index) else {
            return Ok(false);
        };
        if let Some(answer) = w.placeable {
            return Ok(answer);
        }
        let answer = w.request.node_count() <= free && would_grant(alloc, &w.request)?;
        w.placeable = Some(answer);
        Ok(answer)
    }

    /// Whether the allocator could grant `request` now: to measure the
    /// machine, e.g. its largest free partition. A probe never changes a
    /// later choice: it asks [`Allocator::can_allocate`], and only a
    /// strategy that cannot answer that is probed by allocating and at once
    /// releasing.
    ///
    /// # Errors
    /// The allocator refuses to take back its own grant.
    pub fn probe(&mut self, request: &Request) -> Result<bool, SimError> {
        let alloc = self.engine.alloc_mut().inner_mut();
        if request.node_count() > alloc.free_nodes() as u64 {
            return Ok(false);
        }
        would_grant(alloc, request)
    }

    /// Starts the `index`-th waiting job now if the allocator grants it a
    /// partition; `false` (and nothing changed) if not, or if there is no
    /// such job.
    ///
    /// # Errors
    /// A departure time the calendar refuses.
    pub fn start(&mut self, index: usize) -> Result<bool, SimError> {
        self.start_if(index, |_| true)
    }

    /// Starts the `index`-th waiting job now on `at`, a partition the
    /// caller chose rather than the strategy ([`Allocator::allocate_at`]:
    /// the strategy records the grant as its own choice of `at` would, so
    /// its later choices see it). `false`, and nothing changed, if there
    /// is no such job, or `at` is busy or not a partition the strategy
    /// grants for the job's request (one of its
    /// [`recognizable`](Allocator::recognizable) partitions).
    ///
    /// # Errors
    /// A strategy that cannot grant a chosen partition
    /// ([`AllocError::PlacementUnsupported`]; which can is listed at
    /// [`Allocator::allocate_at`]'s implementors) or that refuses the
    /// job's request, as
    /// [`ScheduleError::Unservable`]; a departure time the calendar
    /// refuses.
    ///
    /// ```
    /// use partalloc_allocators::{Partition, registry};
    /// use partalloc_simkit::Stepper;
    /// use partalloc_topology::{Coords, GridBox, Topology};
    /// use partalloc_workload::{Job, JobShape};
    ///
    /// let mesh: Topology = "mesh:4x4".parse()?;
    /// let boxed = |id, sides: &[u32]| -> Result<Job, partalloc_topology::TopologyError> {
    ///     Ok(Job::new(id, 0.0, JobShape::Box { sides: Coords::new(sides)? }, 5.0))
    /// };
    /// let jobs = vec![boxed(0, &[2, 2])?, boxed(1, &[4, 2])?];
    /// let mut run = Stepper::new(registry::build("fsl", &mesh)?, jobs)?;
    /// run.advance()?;
    /// // The 2x2 goes to the far corner, not where fsl would put it.
    /// let corner = Partition::Box(GridBox::new(&[2, 2], &[2, 2])?);
    /// assert!(run.start_at(0, &corner)?);
    /// // fsl's own choice for the 4x2 sees it: the lower half.
    /// assert!(run.start(0)?);
    /// assert_eq!(run.allocator().free_nodes(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_at(&mut self, index: usize, at: &Partition) -> Result<bool, SimError> {
        self.start_with(index, Some(at), |_| true)
    }

    /// [`start`](Self::start), keeping the grant only if `keep` accepts its
    /// granted node count; a grant it refuses is handed back at once and
    /// the job keeps waiting (`false`).
    fn start_if(&mut self, index: usize, keep: impl FnOnce(u64) -> bool) -> Result<bool, SimError> {
        self.start_with(index, None, keep)
    }

    /// [`start_if`](Self::start_if) on the strategy's own choice, or on
    /// `at`.
    fn start_with(
        &mut self,
        index: usize,
        at: Option<&Partition>,
        keep: impl FnOnce(u64) -> bool,
    ) -> Result<bool, SimError> {
        let Some(w) = self.queue.waiting.get(index) else {
            return Ok(false);
        };
        // The strategy's own search has failed since the machine last
        // changed; a chosen partition is checked by the strategy itself.
        if at.is_none() && w.placeable == Some(false) {
            return Ok(false);
        }
        let alloc = self.engine.alloc_mut();
        let granted = match at {
            None => alloc.allocate(&w.request),
            Some(at) => alloc.allocate_at(&w.request, at),
        };
        let grant = match granted {
            Ok(g) => g,
            Err(AllocError::NoRoom { .. }) => {
                self.queue.waiting[index].placeable = Some(false);
                return Ok(false);
            }
            // A chosen partition that is taken, or that the strategy would
            // never grant: the job may still start elsewhere.
            Err(AllocError::PartitionBusy { .. } | AllocError::Unrecognized { .. }) => {
                return Ok(false);
            }
            Err(source) => {
                return Err(ScheduleError::Unservable {
                    job: w.job.id,
                    source,
                }
                .into());
            }
        };
        if !keep(grant.granted_nodes()) {
            alloc.release(&grant)?;
            return Ok(false);
        }
        let job = self.queue.waiting.remove(index).job;
        self.queue.invalidate();
        self.queue
            .estimates
            .started(&job, grant.granted_nodes(), self.engine.now());
        self.engine.launch(job, grant, ())?;
        Ok(true)
    }

    /// EASY backfilling around the `reserved`-th waiting job, which keeps
    /// waiting: it gets the reservation EASY gives a blocked head (its
    /// shadow time and the extra nodes free then, from the running jobs'
    /// estimated ends), and every other waiting job, in arrival order, is
    /// started if the allocator grants it now and it does not delay that
    /// reservation, by the rule of
    /// [`partalloc_schedulers::easy`] (the same code). Returns how many
    /// jobs started; none if there is no such job.
    ///
    /// Deciding to start the oldest job whenever it can start and else to
    /// backfill around it, at every event time, is EASY backfilling: the
    /// same starts at the same times as the `easy-backfilling` policy in
    /// the run loop.
    ///
    /// # Errors
    /// As [`start`](Self::start), and an allocator that refuses to take
    /// back a grant too large to keep.
    pub fn backfill(&mut self, reserved: usize) -> Result<usize, SimError> {
        let Some(head) = self.queue.waiting.get(reserved) else {
            return Ok(0);
        };
        let mut reserved = reserved;
        let need = head.request.node_count();
        let free = self.engine.alloc().free_nodes() as u64;
        let now = self.engine.now();
        let mut reservation = self.queue.estimates.reservation(need, free, now);
        let (mut i, mut started) = (0, 0);
        while i < self.queue.waiting.len() {
            let w = &self.queue.waiting[i];
            let admission = if i == reserved {
                None
            } else {
                reservation.admits(&w.job, w.request.node_count())
            };
            let Some(admission) = admission else {
                i += 1;
                continue;
            };
            if self.start_if(i, |granted| reservation.keep(admission, granted))? {
                started += 1;
                if i < reserved {
                    reserved -= 1;
                }
            } else {
                i += 1;
            }
        }
        Ok(started)
    }

    /// Moves to the next event time and processes every event at it
    /// (departures, then arrivals). Returns `false`, changing nothing, when
    /// no event remains.
    ///
    /// # Errors
    /// A job out of arrival order or with bad times, or an allocator that
    /// refuses to take back its own grant.
    pub fn advance(&mut self) -> Result<bool, SimError> {
        self.queue.changed = false;
        let moved = self.engine.advance(&mut self.queue);
        if self.queue.changed {
            self.queue.invalidate();
        }
        moved
    }
}

/// Whether `alloc` would grant `request` now; a refusal of any kind is
/// `false`, as it is for [`Stepper::start`].
fn would_grant(alloc: &mut dyn Allocator, request: &Request) -> Result<bool, SimError> {
    match alloc.can_allocate(request) {
        Ok(answer) => Ok(answer),
        Err(AllocError::ProbeUnsupported { .. }) => match alloc.allocate(request) {
            Ok(g) => {
                alloc.release(&g)?;
                Ok(true)
            }
            Err(_) => Ok(false),
        },
        Err(_) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SimConfig, Simulation};
    use partalloc_allocators::registry::ALLOCATORS;
    use partalloc_schedulers::registry::POLICIES;
    use partalloc_topology::{Coords, Topology};
    use partalloc_workload::JobShape;

    fn job(id: u64, arrival: f64, dim: u32, service: f64) -> Job {
        Job::new(id, arrival, JobShape::Cube { dim }, service)
    }

    fn stepper(jobs: Vec<Job>) -> Stepper<std::vec::IntoIter<Job>> {
        let machine: Topology = "hypercube:3".parse().unwrap_or_else(|_| unreachable!());
        let alloc = partalloc_allocators::registry::build("buddy", &machine)
            .unwrap_or_else(|_| unreachable!());
        Stepper::new(alloc, jobs).unwrap_or_else(|_| unreachable!())
    }

    /// A chosen placement is granted when free and recognised, the
    /// strategy's later choices see it, and a refused one changes nothing.
    #[test]
    fn start_at_grants_chosen_subcubes_and_refuses_the_rest_unchanged()
    -> Result<(), Box<dyn std::error::Error>> {
        use partalloc_topology::Subcube;
        let cube = |pattern: &str| -> Result<Partition, Box<dyn std::error::Error>> {
            Ok(Partition::Subcube(pattern.parse::<Subcube>()?))
        };
        let jobs = vec![
            job(1, 0.0, 1, 5.0),
            job(2, 0.0, 2, 5.0),
            job(3, 0.0, 1, 5.0),
        ];
        let mut s = stepper(jobs);
        s.advance()?;
        // Job 1 (a Q1) on the highest pair, where buddy would not put it.
        assert!(s.start_at(0, &cube("11*")?)?);
        // Buddy's own choice for the Q2 is the lower half.
        assert!(s.start(0)?);
        assert_eq!(s.allocator().free_nodes(), 2);
        // Taken, not aligned, the wrong size: refused, nothing changed.
        for refused in [cube("11*")?, Partition::Nodes(vec![3, 4]), cube("1**")?] {
            assert!(!s.start_at(0, &refused)?, "{refused:?}");
            assert_eq!((s.waiting_len(), s.allocator().free_nodes()), (1, 2));
        }
        assert!(s.start_at(0, &cube("10*")?)?);
        assert_eq!(s.allocator().free_nodes(), 0);
        while s.advance()? {}
        let mut starts: Vec<(u64, f64)> = s.completions().iter().map(|c| (c.id, c.start)).collect();
        starts.sort_by_key(|x| x.0);
        assert_eq!(starts, [(1, 0.0), (2, 0.0), (3, 0.0)]);
        // No such job: false. A strategy that cannot place: an error.
        assert!(!s.start_at(0, &cube("0**")?)?);
        let machine: Topology = "hypercube:3".parse()?;
        let free_list = partalloc_allocators::registry::build("buddy-free-list", &machine)?;
        let mut t = Stepper::new(free_list, vec![job(1, 0.0, 1, 5.0)])?;
        t.advance()?;
        assert!(matches!(
            t.start_at(0, &cube("11*")?),
            Err(SimError::Schedule(ScheduleError::Unservable { job: 1, .. }))
        ));
        assert_eq!(t.waiting_len(), 1);
        Ok(())
    }

    /// Starting the head whenever it fits is FCFS: the stepper must give
    /// the run loop's own FCFS results on a mixed stream.
    #[test]
    fn head_first_decisions_reproduce_the_fcfs_run_loop() -> Result<(), Box<dyn std::error::Error>>
    {
        let jobs: Vec<Job> = (0..200u64)
            .map(|i| {
                job(
                    i + 1,
                    (i / 3) as f64 * 0.7,
                    (i * 7 % 4) as u32,
                    1.0 + (i * 13 % 5) as f64,
                )
            })
            .collect();
        let mut s = stepper(jobs.clone());
        while s.advance()? {
            while s.waiting_len() > 0 && s.start(0)? {}
        }
        assert!(s.is_done());
        let machine: Topology = "hypercube:3".parse()?;
        let report = Simulation::from_specs(
            machine,
            &ALLOCATORS.spec("buddy")?,
            &POLICIES.spec("fcfs")?,
            jobs.clone(),
            SimConfig {
                measure_search_time: false,
                record_jobs: true,
                ..SimConfig::default()
            },
        )?
        .run()?;
        assert_eq!(s.completions().len(), 200);
        let mut mine: Vec<(u64, f64, f64)> = s
            .completions()
            .iter()
            .map(|c| (c.id, c.start, c.end))
            .collect();
        let mut theirs: Vec<(u64, f64, f64)> =
            report.jobs.iter().map(|r| (r.id, r.start, r.end)).collect();
        mine.sort_by_key(|x| x.0);
        theirs.sort_by_key(|x| x.0);
        assert_eq!(mine, theirs);
        let util = s.busy_area() / (8.0 * s.now());
        assert!((util - report.results.utilization).abs() < 1e-12);
        // The environment's reward (the mean of the completions' bounded
        // slowdowns, summed in completion order) is the run loop's mean,
        // to the bit, for any bound.
        for bound in [0.5, 3.0, 10.0] {
            let tau = SlowdownBound::new(bound)?;
            let sum: f64 = s
                .completions()
                .iter()
                .map(|c| c.bounded_slowdown_under(tau))
                .sum();
            let config = SimConfig {
                measure_search_time: false,
                slowdown_bound: tau,
                ..SimConfig::default()
            };
            let r = Simulation::from_specs(
                "hypercube:3".parse()?,
                &ALLOCATORS.spec("buddy")?,
                &POLICIES.spec("fcfs")?,
                jobs.clone(),
                config,
            )?
            .run()?;
            assert_eq!(
                sum / 200.0,
                r.results.mean_bounded_slowdown,
                "bound {bound}"
            );
        }
        assert!(report.results.mean_bounded_slowdown > 1.0);
        Ok(())
    }

    /// Starts and ends of every job, by id.
    type Times = Vec<(u64, f64, f64)>;

    /// The oldest job started whenever it can start, else backfilled
    /// around, at every event time.
    fn easy_by_steps(
        machine: &str,
        strategy: &str,
        jobs: &[Job],
    ) -> Result<Times, Box<dyn std::error::Error>> {
        let machine: Topology = machine.parse()?;
        let alloc = partalloc_allocators::registry::build(strategy, &machine)?;
        let mut s = Stepper::new(alloc, jobs.to_vec())?;
        let mut backfilled = 0;
        while s.advance()? {
            while s.waiting_len() > 0 && s.start(0)? {}
            backfilled += s.backfill(0)?;
        }
        assert!(s.is_done());
        // The stream must exercise backfilling, not only head starts.
        assert!(backfilled > 10, "only {backfilled} jobs backfilled");
        let mut t: Times = s
            .completions()
            .iter()
            .map(|c| (c.id, c.start, c.end))
            .collect();
        t.sort_by_key(|x| x.0);
        Ok(t)
    }

    fn easy_run_loop(
        machine: &str,
        strategy: &str,
        jobs: &[Job],
    ) -> Result<Times, Box<dyn std::error::Error>> {
        let config = SimConfig {
            measure_search_time: false,
            record_jobs: true,
            ..SimConfig::default()
        };
        let report = Simulation::from_specs(
            machine.parse()?,
            &ALLOCATORS.spec(strategy)?,
            &POLICIES.spec("easy-backfilling")?,
            jobs.to_vec(),
            config,
        )?
        .run()?;
        let mut t: Times = report.jobs.iter().map(|r| (r.id, r.start, r.end)).collect();
        t.sort_by_key(|x| x.0);
        Ok(t)
    }

    /// Boxes that the k-ary buddy rounds up to powers of 4 nodes (so
    /// some backfilled grants are too large and handed back), with
    /// over-estimates on some, and boxes on FSL: the stepper's backfilling
    /// must give the policy's own starts.
    #[test]
    fn head_first_then_backfill_reproduces_the_easy_run_loop()
    -> Result<(), Box<dyn std::error::Error>> {
        let jobs: Vec<Job> = (0..300u64)
            .map(|i| {
                let sides = Coords::new(&[1 + (i * 7 % 4) as u32, 1 + (i * 5 % 3) as u32, 1])
                    .unwrap_or_else(|_| unreachable!());
                let shape = JobShape::Box { sides };
                let service = 1.0 + (i * 13 % 7) as f64;
                let estimate = (i % 3 == 0).then_some(service * 2.0);
                Job::new(i + 1, (i / 3) as f64 * 0.9, shape, service).with_estimate(estimate)
            })
            .collect();
        assert_eq!(
            easy_by_steps("kary:4^3", "extended-buddy", &jobs)?,
            easy_run_loop("kary:4^3", "extended-buddy", &jobs)?
        );
        let boxes: Vec<Job> = (0..300u64)
            .map(|i| {
                let sides = Coords::new(&[1 + (i * 5 % 8) as u32, 1 + (i * 3 % 6) as u32])
                    .unwrap_or_else(|_| unreachable!());
                let service = 1.0 + (i * 11 % 9) as f64;
                Job::new(
                    i + 1,
                    (i / 2) as f64 * 0.8,
                    JobShape::Box { sides },
                    service,
                )
            })
            .collect();
        assert_eq!(
            easy_by_steps("mesh:8x6", "fsl", &boxes)?,
            easy_run_loop("mesh:8x6", "fsl", &boxes)?
        );
        Ok(())
    }

    #[test]
    fn a_refused_start_changes_nothing_and_probes_agree_with_starts()
    -> Result<(), Box<dyn std::error::Error>> {
        let mut s = stepper(vec![
            job(1, 0.0, 3, 5.0),
            job(2, 0.0, 0, 1.0),
            job(3, 1.0, 3, 1.0),
        ]);
        assert!(s.advance()?);
        assert_eq!(s.now(), 0.0);
        assert!(s.can_start(0)? && s.can_start(1)?);
        assert!(s.start(1)?);
        // The 3-cube no longer fits once a node is taken.
        assert!(!s.can_start(0)?);
        assert!(!s.start(0)?);
        assert!(!s.start(7)?);
        assert!(s.probe(&Request::subcube(2))? && !s.probe(&Request::subcube(3))?);
        assert_eq!(s.allocator().free_nodes(), 7);
        assert_eq!(
            (s.waiting_len(), s.running_len(), s.busy_nodes()),
            (1, 1, 1)
        );
        assert!(s.advance()?); // t = 1: J2 leaves, J3 arrives.
        assert_eq!(s.now(), 1.0);
        assert_eq!(s.waiting().map(|j| j.id).collect::<Vec<_>>(), [1, 3]);
        assert!(s.can_start(1)?);
        assert!(s.start(1)?);
        assert!(!s.can_start(0)?);
        assert!(s.advance()?);
        assert!(s.start(0)?);
        assert!(s.advance()?);
        assert!(!s.advance()?);
        assert!(s.is_done());
        assert_eq!(s.now(), 7.0);
        // J1 waited 2 for 5 of service: slowdown 7/5; J2 none.
        let one = SlowdownBound::new(1.0)?;
        assert_eq!(s.completions()[2].bounded_slowdown_under(one), 7.0 / 5.0);
        assert_eq!(
            s.completions()[0].bounded_slowdown_under(SlowdownBound::default()),
            1.0
        );
        Ok(())
    }

    /// FSL reorders its free lists on release, so a probe that allocated
    /// and released could change later choices: probing every waiting job
    /// and a ladder of squares before each decision must leave every grant
    /// as in a run without probes.
    #[test]
    fn probes_never_change_later_grants_on_fsl() -> Result<(), Box<dyn std::error::Error>> {
        let machine: Topology = "mesh:12x10".parse()?;
        let mut jobs = Vec::new();
        for i in 0..400u64 {
            let sides = Coords::new(&[1 + (i * 7 % 6) as u32, 1 + (i * 5 % 7) as u32])?;
            let shape = JobShape::Box { sides };
            let service = 1.0 + (i * 13 % 9) as f64;
            jobs.push(Job::new(i + 1, (i / 4) as f64 * 0.5, shape, service));
        }
        type Grants = Vec<(u64, f64, Vec<u32>)>;
        let run = |probing: bool| -> Result<Grants, Box<dyn std::error::Error>> {
            let alloc = partalloc_allocators::registry::build("fsl", &machine)?;
            let mut s = Stepper::new(alloc, jobs.clone())?;
            let mut grants = Vec::new();
            while s.advance()? {
                loop {
                    if probing {
                        for i in 0..s.waiting_len() {
                            s.can_start(i)?;
                        }
                        for a in 1..=16 {
                            for b in [1, 2, 3, 5] {
                                s.probe(&Request::boxed(&[a, b])?)?;
                            }
                        }
                    }
                    // Shortest job first among those waiting, started if granted.
                    let Some(i) = (0..s.waiting_len()).min_by(|&a, &b| {
                        let (a, b) = (s.waiting_job(a), s.waiting_job(b));
                        let key = |j: Option<&Job>| j.map_or(0.0, |j| j.service);
                        key(a).total_cmp(&key(b))
                    }) else {
                        break;
                    };
                    let before = s.allocator().busy_nodes();
                    let id = s.waiting_job(i).map_or(0, |j| j.id);
                    if !s.start(i)? {
                        break;
                    }
                    let after = s.allocator().busy_nodes();
                    let nodes: Vec<u32> = after.iter().filter(|&n| !before.contains(n)).collect();
                    grants.push((id, s.now(), nodes));
                }
            }
            assert!(s.is_done());
            Ok(grants)
        };
        let plain = run(false)?;
        assert_eq!(plain.len(), 400);
        assert_eq!(run(true)?, plain);
        Ok(())
    }

    #[test]
    fn bad_jobs_are_refused_with_the_run_loops_errors() {
        let machine: Topology = "hypercube:3".parse().unwrap_or_else(|_| unreachable!());
        let alloc = || {
            partalloc_allocators::registry::build("buddy", &machine)
                .unwrap_or_else(|_| unreachable!())
        };
        let e = Stepper::new(alloc(), vec![job(1, -1.0, 0, 1.0)]).err();
        assert!(e.is_some_and(|e| e.to_string().contains("arrival time")));
        let mut s = Stepper::new(alloc(), vec![job(1, 2.0, 0, 1.0), job(2, 1.0, 0, 1.0)])
            .unwrap_or_else(|_| unreachable!());
        let e = s.advance().err();
        assert!(e.is_some_and(|e| e.to_string().contains("sort the source by arrival")));
        let mut s =
            Stepper::new(alloc(), vec![job(1, 0.0, 4, 1.0)]).unwrap_or_else(|_| unreachable!());
        assert!(s.advance().is_ok());
        assert!(s.start(0).is_err());
    }
}
