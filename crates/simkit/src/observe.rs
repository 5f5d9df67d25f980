//! Watching a run as it goes: an [`Observer`] sees every arrival, start
//! and departure of a [`Simulation`](crate::Simulation) and the machine
//! after every decision, so a measure beyond [`Results`](crate::Results)
//! is taken during the one run instead of by running it again.
//!
//! Observers are passed to
//! [`Simulation::run_observed`](crate::Simulation::run_observed) (or
//! [`Replications::simulate`](crate::Replications::simulate))
//! as a generic, so an observer costs nothing where it does nothing and a
//! run without one (`()`) is the plain run. Several compose as a tuple
//! `(a, b)`; `Option<O>` observes only when `Some`.
//!
//! [`GrantLog`] is the observer behind the pod and Slurm measures
//! ([`crate::pod`], [`crate::slurm`]): it keeps the measured jobs'
//! grants, so that the machine's state can be sampled over the run.
//!
//! A measure of one's own, the mean granted nodes per started job:
//!
//! ```
//! use partalloc_allocators::registry::ALLOCATORS;
//! use partalloc_schedulers::registry::POLICIES;
//! use partalloc_allocators::Grant;
//! use partalloc_simkit::observe::Observer;
//! use partalloc_simkit::{SimConfig, Simulation};
//! use partalloc_workload::{Job, JobShape};
//!
//! #[derive(Default)]
//! struct Granted { jobs: u64, nodes: u64 }
//!
//! impl Observer for Granted {
//!     fn started(&mut self, _slot: u32, _job: &Job, grant: &Grant, _now: f64) {
//!         self.jobs += 1;
//!         self.nodes += grant.granted_nodes();
//!     }
//! }
//!
//! let jobs = (0..4).map(|i| Job::new(i, f64::from(i as u32), JobShape::Cube { dim: 1 }, 1.5));
//! let (buddy, fcfs) = (ALLOCATORS.spec("buddy")?, POLICIES.spec("fcfs")?);
//! let sim = Simulation::from_specs("hypercube:3".parse()?, &buddy, &fcfs, jobs, SimConfig::default())?;
//! let mut granted = Granted::default();
//! let report = sim.run_observed(&mut granted, None)?;
//! assert_eq!((granted.jobs, granted.nodes), (4, 8));
//! assert_eq!(report.results.completed, 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::{Allocator, Grant, Partition, PlacementRules};
use partalloc_topology::pod::Wiring;
use partalloc_topology::{NodeSet, Topology};
use partalloc_workload::Job;

/// A job that has left the machine.
#[derive(Debug, Clone, Copy)]
pub struct Departure<'a> {
    /// The slot it ran in (the one [`Observer::started`] was given).
    pub slot: u32,
    /// The job.
    pub job: &'a Job,
    /// What it held (already released).
    pub grant: &'a Grant,
    /// When it started.
    pub start: f64,
    /// When it left.
    pub end: f64,
    /// Whether it counts in the statistics (it completed after the
    /// warm-up).
    pub measured: bool,
    /// Whether a preemption put it back in the queue (it is not complete:
    /// it will start again).
    pub requeued: bool,
}

/// Watches a run (see the [module docs](self)). Every method does nothing
/// by default.
pub trait Observer {
    /// The run begins on `topology` with `alloc`, fresh: read here what the
    /// allocator reports about itself (e.g.
    /// [`Allocator::placement_rules`]).
    fn begin(&mut self, topology: &Topology, alloc: &dyn Allocator) {
        let _ = (topology, alloc);
    }

    /// `job` arrived at `now` and was queued.
    fn arrived(&mut self, job: &Job, now: f64) {
        let _ = (job, now);
    }

    /// `job` started at `now` on `grant`. `slot` names it until it departs
    /// (a departed job's slot is given to a later one): a small dense
    /// number to keep per-running-job state in a vector.
    fn started(&mut self, slot: u32, job: &Job, grant: &Grant, now: f64) {
        let _ = (slot, job, grant, now);
    }

    /// A job left the machine (its grant already released).
    fn departed(&mut self, departure: &Departure<'_>) {
        let _ = departure;
    }

    /// The decisions at `now` are made: the machine (`alloc`) and the
    /// `waiting` jobs stay as they are until the next event.
    fn settled(&mut self, now: f64, alloc: &dyn Allocator, waiting: usize) {
        let _ = (now, alloc, waiting);
    }

    /// The measurement window opens at `now`: the last warm-up job has
    /// completed, and time averages over the window start here (the
    /// state settled at `now` is its first). Not called without a
    /// warm-up: the window then opens at time 0.
    fn window_opened(&mut self, now: f64) {
        let _ = now;
    }

    /// The run is over at `end` (the end of its measurement window).
    fn finish(&mut self, end: f64) {
        let _ = end;
    }
}

/// No observer: the plain run.
impl Observer for () {}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn begin(&mut self, topology: &Topology, alloc: &dyn Allocator) {
        (**self).begin(topology, alloc);
    }
    fn arrived(&mut self, job: &Job, now: f64) {
        (**self).arrived(job, now);
    }
    fn started(&mut self, slot: u32, job: &Job, grant: &Grant, now: f64) {
        (**self).started(slot, job, grant, now);
    }
    fn departed(&mut self, departure: &Departure<'_>) {
        (**self).departed(departure);
    }
    fn settled(&mut self, now: f64, alloc: &dyn Allocator, waiting: usize) {
        (**self).settled(now, alloc, waiting);
    }
    fn window_opened(&mut self, now: f64) {
        (**self).window_opened(now);
    }
    fn finish(&mut self, end: f64) {
        (**self).finish(end);
    }
}

/// Observes only when present.
impl<O: Observer> Observer for Option<O> {
    fn begin(&mut self, topology: &Topology, alloc: &dyn Allocator) {
        if let Some(o) = self {
            o.begin(topology, alloc);
        }
    }
    fn arrived(&mut self, job: &Job, now: f64) {
        if let Some(o) = self {
            o.arrived(job, now);
        }
    }
    fn started(&mut self, slot: u32, job: &Job, grant: &Grant, now: f64) {
        if let Some(o) = self {
            o.started(slot, job, grant, now);
        }
    }
    fn departed(&mut self, departure: &Departure<'_>) {
        if let Some(o) = self {
            o.departed(departure);
        }
    }
    fn settled(&mut self, now: f64, alloc: &dyn Allocator, waiting: usize) {
        if let Some(o) = self {
            o.settled(now, alloc, waiting);
        }
    }
    fn window_opened(&mut self, now: f64) {
        if let Some(o) = self {
            o.window_opened(now);
        }
    }
    fn finish(&mut self, end: f64) {
        if let Some(o) = self {
            o.finish(end);
        }
    }
}

/// Both observe, the first first.
impl<A: Observer, B: Observer> Observer for (A, B) {
    fn begin(&mut self, topology: &Topology, alloc: &dyn Allocator) {
        self.0.begin(topology, alloc);
        self.1.begin(topology, alloc);
    }
    fn arrived(&mut self, job: &Job, now: f64) {
        self.0.arrived(job, now);
        self.1.arrived(job, now);
    }
    fn started(&mut self, slot: u32, job: &Job, grant: &Grant, now: f64) {
        self.0.started(slot, job, grant, now);
        self.1.started(slot, job, grant, now);
    }
    fn departed(&mut self, departure: &Departure<'_>) {
        self.0.departed(departure);
        self.1.departed(departure);
    }
    fn settled(&mut self, now: f64, alloc: &dyn Allocator, waiting: usize) {
        self.0.settled(now, alloc, waiting);
        self.1.settled(now, alloc, waiting);
    }
    fn window_opened(&mut self, now: f64) {
        self.0.window_opened(now);
        self.1.window_opened(now);
    }
    fn finish(&mut self, end: f64) {
        self.0.finish(end);
        self.1.finish(end);
    }
}

/// One held partition: from `start` to `end` (infinite while the job was
/// still running when the log closed).
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// When the job started.
    pub start: f64,
    /// When it left (`f64::INFINITY` if it had not when the log closed).
    pub end: f64,
    /// What it held.
    pub partition: Partition,
}

/// The grants of a run's measured jobs, kept as the run goes, for measures
/// of the machine's state over time ([`crate::pod`], [`crate::slurm`]).
///
/// It keeps each measured job's start, end and partition in completion
/// order, up to `cap` jobs; when the cap is reached or the run ends, the
/// jobs still running are kept with an open end, so that every busy node
/// is known at every time between the first and the last logged
/// completion (every warm-up job has ended by the first). It also keeps
/// the allocator's [`PlacementRules`], which decide how the state is
/// judged.
#[derive(Debug, Clone, Default)]
pub struct GrantLog {
    cap: usize,
    rules: Option<PlacementRules>,
    /// Node ids and boxes the logged partitions hold, and their bound.
    items: usize,
    max_items: usize,
    done: Vec<Held>,
    open: Vec<Held>,
    /// Per slot: the running job's start and partition, until closed.
    running: Vec<Option<(f64, Partition)>>,
    closed: bool,
}

/// What a partition costs the log: its listed node ids or boxes.
fn items(p: &Partition) -> usize {
    match p {
        Partition::Nodes(ids) => ids.len(),
        Partition::Boxes(boxes) => boxes.len(),
        _ => 1,
    }
}

impl GrantLog {
    /// A log of at most `cap` measured jobs (memory stays bounded however
    /// long the run).
    #[must_use]
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            max_items: usize::MAX,
            ..Self::default()
        }
    }

    /// The log that also keeps at most `max` node ids and boxes in all:
    /// on a machine of millions of nodes a job granted node by node holds
    /// millions of ids, so the job count alone does not bound the memory.
    /// The log closes when the next job would pass it, as when `cap` jobs
    /// are logged.
    ///
    /// ```
    /// use partalloc_allocators::registry::ALLOCATORS;
    /// use partalloc_schedulers::registry::POLICIES;
    /// use partalloc_simkit::observe::GrantLog;
    /// use partalloc_simkit::{SimConfig, Simulation};
    /// use partalloc_workload::{Job, JobShape};
    /// let machine: partalloc_topology::Topology = "mesh:4x4".parse()?;
    /// let jobs = (0..40).map(|i| Job::new(i, f64::from(i as u32), JobShape::Nodes { count: 4 }, 0.5));
    /// let (paging, fcfs) = (ALLOCATORS.spec("paging")?, POLICIES.spec("fcfs")?);
    /// let sim = Simulation::from_specs(machine, &paging, &fcfs, jobs, SimConfig::default())?;
    /// let mut log = GrantLog::new(usize::MAX).with_max_items(10);
    /// sim.run_observed(&mut log, None)?;
    /// // Two grants of 4 node ids each; a third would make 12.
    /// assert_eq!(log.completed().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_max_items(mut self, max: usize) -> Self {
        self.max_items = max;
        self
    }

    /// The completed measured jobs, in completion order.
    #[must_use]
    pub fn completed(&self) -> &[Held] {
        &self.done
    }

    /// The jobs still running when the log closed (open ends).
    #[must_use]
    pub fn still_running(&self) -> &[Held] {
        &self.open
    }

    /// What the allocator reported about its placement rules.
    #[must_use]
    pub fn rules(&self) -> Option<PlacementRules> {
        self.rules
    }

    /// The wiring the allocator places by (static if it reports none).
    #[must_use]
    pub fn wiring(&self) -> Wiring {
        match self.rules {
            Some(PlacementRules::Pod(w)) => w,
            _ => Wiring::Static,
        }
    }

    /// The segment size the allocator places jobs in, if any.
    #[must_use]
    pub fn segment(&self) -> Option<u32> {
        match self.rules {
            Some(PlacementRules::Slurm { segment }) => segment,
            _ => None,
        }
    }

    fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        for (start, partition) in self.running.drain(..).flatten() {
            self.open.push(Held {
                start,
                end: f64::INFINITY,
                partition,
            });
        }
    }

    /// Calls `f` with the busy nodes of `topology` at `samples` evenly
    /// spaced times (at least one) from the first to the last logged
    /// completion. Returns the number of samples, or `None` without a
    /// logged completion.
    pub fn for_each_sampled_state(
        &self,
        topology: &Topology,
        samples: usize,
        f: impl FnMut(&NodeSet),
    ) -> Option<usize> {
        let held = self
            .done
            .iter()
            .chain(&self.open)
            .map(|h| (h.start, h.end, &h.partition));
        let ends = self.done.iter().map(|h| h.end);
        sample_states(topology, held, ends, samples, f)
    }
}

impl Observer for GrantLog {
    fn begin(&mut self, _topology: &Topology, alloc: &dyn Allocator) {
        self.rules = alloc.placement_rules();
    }

    fn started(&mut self, slot: u32, _job: &Job, grant: &Grant, now: f64) {
        if self.closed {
            return;
        }
        let i = slot as usize;
        if self.running.len() <= i {
            self.running.resize(i + 1, None);
        }
        self.running[i] = Some((now, grant.partition().clone()));
    }

    fn departed(&mut self, d: &Departure<'_>) {
        if self.closed {
            return;
        }
        let Some((start, partition)) = self.running.get_mut(d.slot as usize).and_then(Option::take)
        else {
            return;
        };
        if !d.measured {
            return;
        }
        let weight = items(&partition);
        if self.done.len() >= self.cap || self.items.saturating_add(weight) > self.max_items {
            self.close();
            return;
        }
        self.items += weight;
        self.done.push(Held {
            start,
            end: d.end,
            partition,
        });
        if self.done.len() >= self.cap {
            self.close();
        }
    }

    fn finish(&mut self, _end: f64) {
        self.close();
    }
}

/// Calls `f` with the busy nodes of `topology` at `samples` (at least 1)
/// evenly spaced times between the least and the greatest of `ends` (the
/// window), the busy nodes being the union of the `held` partitions
/// (start, end, partition) with start ≤ t < end. Returns the number of
/// samples, or `None` when `ends` is empty or not finite.
pub(crate) fn sample_states<'a>(
    topology: &Topology,
    held: impl Iterator<Item = (f64, f64, &'a Partition)>,
    ends: impl Iterator<Item = f64>,
    samples: usize,
    mut f: impl FnMut(&NodeSet),
) -> Option<usize> {
    let (lo, hi) = ends.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), e| {
        (lo.min(e), hi.max(e))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let samples = samples.max(1);
    let held: Vec<(f64, f64, &Partition)> = held.collect();
    // One sweep through the starts and ends in time order (an end before a
    // start at the same time) instead of a pass over every job per sample:
    // at sample t the jobs applied are those with start <= t, less those
    // with end <= t, which is start <= t < end. Holders are counted per
    // node, so the set is the union of the running jobs' nodes whatever
    // the records hold.
    let mut events: Vec<(f64, bool, usize)> = held
        .iter()
        .enumerate()
        .flat_map(|(i, j)| [(j.0, true, i), (j.1, false, i)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut holders = vec![0u32; topology.num_nodes()];
    let mut busy = NodeSet::new(topology.num_nodes());
    let mut next = 0;
    for i in 0..samples {
        let t = lo + (hi - lo) * (i as f64 + 0.5) / samples as f64;
        while let Some(&(time, start, j)) = events.get(next)
            && time <= t
        {
            next += 1;
            // A recorded partition was granted on this machine.
            let _ = held[j].2.for_each_node(topology, |c| {
                let Some(h) = holders.get_mut(c as usize) else {
                    return;
                };
                if start {
                    *h += 1;
                    if *h == 1 {
                        let _ = busy.insert(c);
                    }
                } else if *h > 0 {
                    *h -= 1;
                    if *h == 0 {
                        let _ = busy.remove(c);
                    }
                }
            });
        }
        f(&busy);
    }
    Some(samples)
}
