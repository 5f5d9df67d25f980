//! The `Scheduler` trait, the job → request mapping and the shared types.

use core::fmt;
use core::ops::Index;
use std::collections::VecDeque;

use partalloc_allocators::{AllocError, Allocator, Grant, ReleaseError, Request};
use partalloc_workload::{Job, JobShape};
use thiserror::Error;

/// A job that a scheduler has just started, with the partition it holds.
///
/// The run loop keeps the grant and hands it back to the allocator when the
/// job departs; then it calls [`Scheduler::departed`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Started {
    /// The job.
    pub job: Job,
    /// What the allocator granted it.
    pub grant: Grant,
}

/// Why a scheduler could not serve a job at all.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// The allocator refused the job's request as unsupported or invalid
    /// (for example larger than the machine, or a box on a hypercube). The
    /// job has been removed from the queue; fix the workload or the
    /// strategy and resubmit.
    #[error("job {job} can never be started: {source}")]
    Unservable {
        /// The job's id.
        job: u64,
        /// The allocator's refusal.
        source: AllocError,
    },
    /// The allocator refused to take back a grant the scheduler had just
    /// received from it (a backfilled job whose grant turned out too large
    /// is handed back).
    #[error("job {job}: the allocator refused to take back its grant: {source}")]
    Release {
        /// The job's id.
        job: u64,
        /// The allocator's refusal.
        source: ReleaseError,
    },
    /// A policy from outside the workspace (written in another language,
    /// say) failed or answered something unusable; the run cannot go on.
    #[error("the scheduling policy {policy} failed: {reason}")]
    Policy {
        /// The policy's name.
        policy: String,
        /// What went wrong.
        reason: String,
    },
    /// A submitted job has a non-finite or negative arrival time or service
    /// demand. It was not queued.
    #[error("job {job}: {what} must be finite and non-negative, got {value}")]
    BadJob {
        /// The job's id.
        job: u64,
        /// Which field.
        what: &'static str,
        /// The value given.
        value: f64,
    },
}

/// How a job's shape becomes an allocator request.
///
/// | shape | request |
/// |---|---|
/// | `JobShape::Cube { dim }` | `Request::Subcube { dim }` |
/// | `JobShape::Box { sides }` | `Request::Box { sides, rotate }` with the mapping's `rotate` |
/// | `JobShape::Nodes { count }` | `Request::Nodes { count }` |
/// | `JobShape::Pod { request }` | `Request::Pod { request }` |
///
/// ```
/// use partalloc_allocators::Request;
/// use partalloc_schedulers::RequestMapping;
/// use partalloc_topology::Coords;
/// use partalloc_workload::JobShape;
/// let m = RequestMapping { rotate: true };
/// let shape = JobShape::Box { sides: Coords::new(&[3, 2])? };
/// assert_eq!(m.request(&shape), Request::boxed(&[3, 2])?.any_orientation());
/// assert_eq!(m.request(&JobShape::Cube { dim: 2 }), Request::subcube(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RequestMapping {
    /// Whether box requests accept any orientation (default: no).
    pub rotate: bool,
}

impl RequestMapping {
    /// The request for a job shape.
    #[must_use]
    pub fn request(&self, shape: &JobShape) -> Request {
        match *shape {
            JobShape::Cube { dim } => Request::Subcube { dim },
            JobShape::Box { sides } => Request::Box {
                sides,
                rotate: self.rotate,
            },
            JobShape::Nodes { count } => Request::Nodes { count },
            JobShape::Pod { request } => Request::Pod { request },
            // `JobShape` is non-exhaustive; any future shape is served as
            // a plain node count.
            _ => Request::Nodes {
                count: u32::try_from(shape.node_count()).unwrap_or(u32::MAX),
            },
        }
    }
}

/// The size class of a job for the policies that keep one queue per size
/// (Scan, static partitioning, lazy).
///
/// A cube job's class is its dimension (Mohapatra §2.3: "one for each
/// possible cube dimension"); any other shape's class is ⌈log₂ nodes⌉, the
/// dimension of the smallest subcube that would hold it (docs/baselines.md#size-classes: "the
/// dimension becomes the size class").
///
/// ```
/// use partalloc_schedulers::size_class;
/// use partalloc_workload::JobShape;
/// assert_eq!(size_class(&JobShape::Cube { dim: 3 }), 3);
/// assert_eq!(size_class(&JobShape::Nodes { count: 5 }), 3);
/// assert_eq!(size_class(&JobShape::Nodes { count: 1 }), 0);
/// ```
#[must_use]
pub fn size_class(shape: &JobShape) -> usize {
    match *shape {
        JobShape::Cube { dim } => dim as usize,
        _ => {
            let n = shape.node_count().max(1);
            (u64::BITS - (n - 1).leading_zeros()) as usize
        }
    }
}

/// The number of size classes on a machine of `nodes` nodes: classes
/// 0 ..= ⌈log₂ nodes⌉.
#[must_use]
pub fn class_count(nodes: usize) -> usize {
    let n = (nodes.max(1) - 1) as u64;
    (u64::BITS - n.leading_zeros()) as usize + 1
}

/// A job scheduling policy: owns the waiting queue(s) and decides which
/// waiting jobs to start.
///
/// The trait is object safe, so a policy can be chosen by name at run time
/// ([`registry::build`](crate::registry::build)).
///
/// # Protocol
///
/// A run loop calls, per event:
/// - on an arrival: [`submit`](Scheduler::submit), then
///   [`schedule`](Scheduler::schedule);
/// - on a departure: release the job's grant to the allocator, call
///   [`departed`](Scheduler::departed), then
///   [`schedule`](Scheduler::schedule).
///
/// `schedule` appends every job it starts to `started` (which the caller
/// clears and reuses, so a steady run does not allocate). A policy never
/// starts a job except through the allocator it is given, and never keeps a
/// job in its queue after starting it.
///
/// After the jobs a `schedule` call started are running, the loop asks
/// [`take_preemptions`](Scheduler::take_preemptions) for running jobs to
/// end now; it ends each (releases its grant, calls `departed`), then
/// calls `schedule` again at the same time, until none is named.
pub trait Scheduler: Send + fmt::Debug {
    /// The policy's canonical name with its parameters, as the registry
    /// parses it (e.g. `m-fcfs[threshold=dynamic]`).
    fn name(&self) -> String;

    /// Queues a job that arrived at `now`.
    ///
    /// # Errors
    /// [`ScheduleError::BadJob`] for a non-finite or negative arrival or
    /// service time; the job is not queued.
    fn submit(&mut self, job: Job, now: f64) -> Result<(), ScheduleError>;

    /// Starts the waiting jobs the policy chooses at time `now`, appending
    /// them to `started`.
    ///
    /// # Errors
    /// [`ScheduleError::Unservable`] if the allocator refuses a job as
    /// unsupported or invalid; that job is dropped from the queue, the jobs
    /// started before it stay started (they are in `started`).
    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError>;

    /// Tells the policy that `job` finished at `now` (its grant has already
    /// been released).
    ///
    /// The default does nothing: right for a policy that keeps no record of
    /// running jobs (its next [`schedule`](Scheduler::schedule) sees the
    /// freed nodes through the allocator).
    fn departed(&mut self, job: &Job, now: f64) {
        let _ = (job, now);
    }

    /// Number of waiting jobs.
    fn queue_len(&self) -> usize;

    /// The job at the head of the queue: the one the policy would serve
    /// next. For policies with one queue per size class it is the oldest
    /// waiting job (lowest arrival time, then lowest id).
    fn head(&self) -> Option<&Job>;

    /// The next time the policy wants [`schedule`](Scheduler::schedule)
    /// called although no job arrives or departs then (a periodic pass),
    /// or `None`. The run loop asks after each `schedule` and, when the
    /// time is later than now and earlier than the next event, calls
    /// `schedule` at it. The default asks for none: right for a policy
    /// that decides only at arrivals and departures.
    fn next_wakeup(&self) -> Option<f64> {
        None
    }

    /// Appends to `out` the running jobs the policy preempted in its last
    /// [`schedule`](Scheduler::schedule) call, and forgets them. The run
    /// loop ends each now: releases its grant, calls
    /// [`departed`](Scheduler::departed) (a policy that requeues the job
    /// queues it again there), and calls `schedule` again at the same
    /// time. The default preempts nothing.
    fn take_preemptions(&mut self, out: &mut Vec<Preemption>) {
        let _ = out;
    }
}

/// A running job a policy ends before its departure
/// ([`Scheduler::take_preemptions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preemption {
    /// The job's id.
    pub job: u64,
    /// Whether the policy queues it again (it runs again from the start
    /// later); otherwise it is cancelled and leaves the system.
    pub requeue: bool,
}

/// Checks a submitted job's times: what every policy's
/// [`submit`](Scheduler::submit) does before queueing.
///
/// ```
/// use partalloc_schedulers::{check_job, ScheduleError};
/// use partalloc_workload::{Job, JobShape};
/// let job = Job::new(7, 0.0, JobShape::Nodes { count: 2 }, 1.0);
/// assert_eq!(check_job(&job), Ok(()));
/// let late = job.with_arrival(f64::NAN);
/// assert!(matches!(check_job(&late), Err(ScheduleError::BadJob { job: 7, .. })));
/// ```
///
/// # Errors
/// [`ScheduleError::BadJob`] for a non-finite or negative arrival time,
/// service time or runtime estimate.
pub fn check_job(job: &Job) -> Result<(), ScheduleError> {
    for (what, value) in [("arrival time", job.arrival), ("service time", job.service)] {
        if !value.is_finite() || value < 0.0 {
            return Err(ScheduleError::BadJob {
                job: job.id,
                what,
                value,
            });
        }
    }
    if let Some(e) = job.estimate
        && (!e.is_finite() || e < 0.0)
    {
        return Err(ScheduleError::BadJob {
            job: job.id,
            what: "runtime estimate",
            value: e,
        });
    }
    Ok(())
}

/// The outcome of one allocation attempt ([`try_start`], [`start_queued`],
/// [`ClassQueues::start_front`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Attempt {
    /// Started; the job and its grant are in `started`.
    Started,
    /// No room now; the job waits.
    Blocked,
}

/// Tries to start `job` through `alloc`: on success pushes it with its
/// grant to `started`.
///
/// ```
/// use partalloc_schedulers::{try_start, Attempt, RequestMapping};
/// use partalloc_workload::{Job, JobShape};
/// let machine = "hypercube:2".parse()?;
/// let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
/// let (three, two) = (JobShape::Nodes { count: 3 }, JobShape::Nodes { count: 2 });
/// let mut started = Vec::new();
/// let map = RequestMapping::default();
/// let a = try_start(&Job::new(1, 0.0, three, 1.0), map, alloc.as_mut(), &mut started)?;
/// let b = try_start(&Job::new(2, 0.0, two, 1.0), map, alloc.as_mut(), &mut started)?;
/// assert_eq!((a, b, started.len()), (Attempt::Started, Attempt::Blocked, 1));
/// // A job the machine can never hold is an error, not a wait.
/// let huge = Job::new(3, 0.0, JobShape::Nodes { count: 5 }, 1.0);
/// assert!(try_start(&huge, map, alloc.as_mut(), &mut started).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`ScheduleError::Unservable`] if the allocator refuses the request as
/// unsupported or invalid (anything but "no room").
pub fn try_start(
    job: &Job,
    mapping: RequestMapping,
    alloc: &mut dyn Allocator,
    started: &mut Vec<Started>,
) -> Result<Attempt, ScheduleError> {
    match alloc.allocate(&mapping.request(&job.shape)) {
        Ok(grant) => {
            started.push(Started { job: *job, grant });
            Ok(Attempt::Started)
        }
        Err(AllocError::NoRoom { .. }) => Ok(Attempt::Blocked),
        Err(source) => Err(ScheduleError::Unservable {
            job: job.id,
            source,
        }),
    }
}

/// Tries to start `queue[i]` as [`try_start`] does. The job leaves the
/// queue unless it is blocked: when it started and when the allocator
/// refused it. An index past the end starts nothing (`Blocked`).
///
/// ```
/// use std::collections::VecDeque;
/// use partalloc_schedulers::{start_queued, Attempt, RequestMapping};
/// use partalloc_workload::{Job, JobShape};
/// let machine = "hypercube:2".parse()?;
/// let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
/// let mut queue: VecDeque<Job> = [3, 1]
///     .map(|n| Job::new(n, 0.0, JobShape::Nodes { count: n as u32 }, 1.0))
///     .into();
/// let mut started = Vec::new();
/// let map = RequestMapping::default();
/// // Start the second job first, then the first no longer fits.
/// assert_eq!(start_queued(&mut queue, 1, map, alloc.as_mut(), &mut started)?, Attempt::Started);
/// assert_eq!(start_queued(&mut queue, 0, map, alloc.as_mut(), &mut started)?, Attempt::Started);
/// assert_eq!((queue.len(), started.len()), (0, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`try_start`]; the refused job has left the queue.
pub fn start_queued(
    queue: &mut VecDeque<Job>,
    i: usize,
    mapping: RequestMapping,
    alloc: &mut dyn Allocator,
    started: &mut Vec<Started>,
) -> Result<Attempt, ScheduleError> {
    let Some(job) = queue.get(i) else {
        return Ok(Attempt::Blocked);
    };
    let attempt = try_start(job, mapping, alloc, started);
    if !matches!(attempt, Ok(Attempt::Blocked)) {
        queue.remove(i);
    }
    attempt
}

/// Starts queued jobs from the front of `queue`, each as [`start_queued`],
/// until the queue is empty or its front job is blocked: the serving loop
/// of every policy whose head blocks the queue (FCFS, and the priority
/// orders once the queue is sorted).
///
/// ```
/// use std::collections::VecDeque;
/// use partalloc_schedulers::{start_in_order, RequestMapping};
/// use partalloc_workload::{Job, JobShape};
/// let machine = "hypercube:2".parse()?;
/// let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
/// let mut queue: VecDeque<Job> = [1, 4, 1]
///     .map(|n| Job::new(n, 0.0, JobShape::Nodes { count: n as u32 }, 1.0))
///     .into();
/// let mut started = Vec::new();
/// start_in_order(&mut queue, RequestMapping::default(), alloc.as_mut(), &mut started)?;
/// // The 4-node job is blocked by the first; the last waits behind it.
/// assert_eq!((started.len(), queue.len()), (1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`start_queued`]: the refused job has left the queue, the jobs
/// started before it are in `started`.
pub fn start_in_order(
    queue: &mut VecDeque<Job>,
    mapping: RequestMapping,
    alloc: &mut dyn Allocator,
    started: &mut Vec<Started>,
) -> Result<(), ScheduleError> {
    while !queue.is_empty() {
        if start_queued(queue, 0, mapping, alloc, started)? == Attempt::Blocked {
            break;
        }
    }
    Ok(())
}

/// Writes the [`Scheduler`] methods `submit`, `queue_len` and `head` of a
/// policy whose waiting jobs are one `VecDeque<Job>` field, served from
/// its front: `submit` checks the job ([`check_job`]) and appends it.
/// The policy writes `name` and `schedule` (and `departed` if it keeps
/// running jobs) and calls this macro with the queue field's name inside
/// its `impl Scheduler` block.
///
/// ```
/// use std::collections::VecDeque;
/// use partalloc_allocators::Allocator;
/// use partalloc_schedulers::{queue_methods, start_in_order, RequestMapping, ScheduleError,
///     Scheduler, Started};
/// use partalloc_workload::Job;
///
/// /// Serves the queue in arrival order.
/// #[derive(Debug, Default)]
/// struct InOrder {
///     queue: VecDeque<Job>,
/// }
///
/// impl Scheduler for InOrder {
///     fn name(&self) -> String {
///         "in-order".into()
///     }
///     fn schedule(
///         &mut self,
///         _now: f64,
///         alloc: &mut dyn Allocator,
///         started: &mut Vec<Started>,
///     ) -> Result<(), ScheduleError> {
///         start_in_order(&mut self.queue, RequestMapping::default(), alloc, started)
///     }
///     queue_methods!(queue);
/// }
///
/// let mut policy = InOrder::default();
/// policy.submit(Job::new(1, 0.0, partalloc_workload::JobShape::Nodes { count: 2 }, 1.0), 0.0)?;
/// assert_eq!((policy.queue_len(), policy.head().map(|j| j.id)), (1, Some(1)));
/// let bad = Job::new(2, f64::NAN, partalloc_workload::JobShape::Nodes { count: 1 }, 1.0);
/// assert!(policy.submit(bad, 0.0).is_err());
/// assert_eq!(policy.queue_len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! queue_methods {
    ($queue:ident) => {
        fn submit(
            &mut self,
            job: $crate::__macro_support::Job,
            _now: f64,
        ) -> ::core::result::Result<(), $crate::ScheduleError> {
            $crate::check_job(&job)?;
            self.$queue.push_back(job);
            ::core::result::Result::Ok(())
        }

        fn queue_len(&self) -> usize {
            self.$queue.len()
        }

        fn head(&self) -> ::core::option::Option<&$crate::__macro_support::Job> {
            self.$queue.front()
        }
    };
}

/// One FIFO queue per size class ([`size_class`]), with the number of jobs
/// waiting in all of them: the queues of Scan, static partitioning and
/// lazy scheduling. Jobs of a class past the last are queued in the last.
///
/// ```
/// use partalloc_schedulers::{class_count, Attempt, ClassQueues, RequestMapping};
/// use partalloc_workload::{Job, JobShape};
/// let machine = "hypercube:3".parse::<partalloc_topology::Topology>()?;
/// let mut queues = ClassQueues::new(class_count(machine.num_nodes()));
/// let job = |id, dim| Job::new(id, id as f64, JobShape::Cube { dim }, 1.0);
/// assert_eq!((queues.push(job(1, 2)), queues.push(job(2, 0))), (2, 0));
/// assert_eq!((queues.waiting(), queues.oldest().map(|j| j.id)), (2, Some(1)));
/// let mut alloc = partalloc_allocators::registry::build("buddy", &machine)?;
/// let mut started = Vec::new();
/// let map = RequestMapping::default();
/// assert_eq!(queues.start_front(2, map, alloc.as_mut(), &mut started)?, Attempt::Started);
/// assert_eq!((queues.waiting(), queues[2].len()), (1, 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClassQueues {
    queues: Vec<VecDeque<Job>>,
    waiting: usize,
}

impl ClassQueues {
    /// `classes` empty queues (at least one).
    #[must_use]
    pub fn new(classes: usize) -> Self {
        Self {
            queues: vec![VecDeque::new(); classes.max(1)],
            waiting: 0,
        }
    }

    /// The number of classes.
    #[must_use]
    pub fn classes(&self) -> usize {
        self.queues.len()
    }

    /// The class whose queue `job` waits in.
    #[must_use]
    pub fn class_of(&self, job: &Job) -> usize {
        size_class(&job.shape).min(self.queues.len() - 1)
    }

    /// Queues `job` in its class; returns the class.
    pub fn push(&mut self, job: Job) -> usize {
        let k = self.class_of(&job);
        self.queues[k].push_back(job);
        self.waiting += 1;
        k
    }

    /// Removes and returns the head of class `k`'s queue (None past the
    /// last class or when it is empty).
    pub fn pop_front(&mut self, k: usize) -> Option<Job> {
        let job = self.queues.get_mut(k)?.pop_front();
        if job.is_some() {
            self.waiting -= 1;
        }
        job
    }

    /// Tries to start the head of class `k`'s queue, as [`start_queued`]
    /// (`Blocked` past the last class or when it is empty).
    ///
    /// # Errors
    /// As [`start_queued`].
    pub fn start_front(
        &mut self,
        k: usize,
        mapping: RequestMapping,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<Attempt, ScheduleError> {
        let Some(queue) = self.queues.get_mut(k) else {
            return Ok(Attempt::Blocked);
        };
        let attempt = start_queued(queue, 0, mapping, alloc, started);
        if !matches!(attempt, Ok(Attempt::Blocked)) {
            self.waiting -= 1;
        }
        attempt
    }

    /// The number of waiting jobs.
    #[must_use]
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// The oldest head of all the queues (arrival, then id).
    #[must_use]
    pub fn oldest(&self) -> Option<&Job> {
        self.queues
            .iter()
            .fold(None, |acc, q| older(acc, q.front()))
    }
}

/// Class `k`'s queue; panics past the last class, as slice indexing does
/// (use [`ClassQueues::classes`] to bound `k`).
impl Index<usize> for ClassQueues {
    type Output = VecDeque<Job>;

    fn index(&self, k: usize) -> &VecDeque<Job> {
        &self.queues[k]
    }
}

/// The older of two optional jobs (arrival, then id): the one a policy
/// reports as its [`head`](Scheduler::head) among several queues.
///
/// ```
/// use partalloc_schedulers::older;
/// use partalloc_workload::{Job, JobShape};
/// let a = Job::new(2, 1.0, JobShape::Nodes { count: 1 }, 1.0);
/// let b = Job::new(1, 1.0, JobShape::Nodes { count: 1 }, 1.0);
/// assert_eq!(older(Some(&a), Some(&b)).map(|j| j.id), Some(1));
/// assert_eq!(older(Some(&a), None).map(|j| j.id), Some(2));
/// ```
#[must_use]
pub fn older<'a>(a: Option<&'a Job>, b: Option<&'a Job>) -> Option<&'a Job> {
    match (a, b) {
        (Some(x), Some(y)) => {
            if (y.arrival, y.id) < (x.arrival, x.id) {
                Some(y)
            } else {
                Some(x)
            }
        }
        (x, None) => x,
        (None, y) => y,
    }
}
