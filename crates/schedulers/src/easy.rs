//! EASY backfilling (beyond the papers; the modern reference policy).
//!
//! Jobs start in FCFS order while the allocator grants the head. When the
//! head is refused it gets a *reservation*: the shadow time at which,
//! by the running jobs' estimated end times, enough nodes will be free for
//! it, and the number of extra nodes free at that time beyond its need.
//! Later jobs, in arrival order, are then started ("backfilled") if the
//! allocator grants them now and they do not delay the reservation: either
//! they are estimated to end by the shadow time, or their *grant* uses no
//! more than the extra nodes (which it then consumes). A job that would run
//! past the shadow time is admitted by the nodes it is granted, not the
//! nodes it requested: with a rounding allocator (buddy) the grant can be
//! larger, and a grant beyond the extra nodes is released at once and the
//! job keeps waiting.
//!
//! The rule itself is public ([`RunningEstimates`], [`Reservation`]), so
//! that a caller making its own decisions can backfill by it.
//!
//! Choices, all deterministic:
//! - a job's estimate is its `estimate` field, or its service time when it
//!   has none; `estimates=exact` and `underestimates=raise` change this
//!   ([`estimates`](crate::estimates));
//! - with `order=…` ([`order`](crate::order)) the queue is put in that
//!   order at each pass: the head is the first job in it, and backfill
//!   candidates are tried in it (`fcfs`, the default, is arrival order);
//! - a running job that has outlived its estimate is assumed to end now;
//! - the extra nodes are all those free at the shadow time, so every
//!   running job estimated to end then counts, in whatever order the jobs
//!   started or ended;
//! - the reservation counts nodes (the classic EASY rule), granted nodes
//!   for running jobs and requested nodes for the head. On contiguous
//!   allocators fragmentation may still delay the head past its shadow
//!   time.
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut easy = registry::build("easy-backfilling", &machine)?;
//! let job = |id, count, service| Job::new(id, 0.0, JobShape::Nodes { count }, service);
//! for j in [job(1, 2, 10.0), job(2, 4, 1.0), job(3, 2, 5.0), job(4, 2, 20.0)] {
//!     easy.submit(j, 0.0)?;
//! }
//! let mut started = Vec::new();
//! easy.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Job 2 is reserved for t = 10; job 3 ends by then and backfills,
//! // job 4 would delay job 2 and waits.
//! let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
//! assert_eq!(ids, [1, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;

use partalloc_allocators::Allocator;
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, PolicyEntry, StrategyInfo};
use crate::estimates::Estimates;
use crate::order::{Order, Ranking};
use crate::priority::{QUEUE_PARAMS, QueueOptions};
use crate::scheduler::{Attempt, start_queued, try_start};
use crate::{RequestMapping, ScheduleError, Scheduler, Started};

#[derive(Debug, Clone, Copy)]
struct Running {
    id: u64,
    est_end: f64,
    nodes: u64,
}

/// The running jobs as EASY sees them: estimated end times and granted
/// nodes, from which a blocked job's reservation is computed.
///
/// Kept apart from [`EasyBackfilling`] so that a caller that makes its own
/// decisions (the stepped run loop of `partalloc-simkit`) backfills by
/// exactly the same rule: it reports each start and departure here, asks
/// for the [`Reservation`] of the job it wants reserved, and starts the
/// others only as that reservation admits them. The order in which starts
/// and departures are reported does not matter: jobs estimated to end at
/// the same time free their nodes together.
#[derive(Debug, Clone, Default)]
pub struct RunningEstimates {
    running: Vec<Running>,
    scratch: Vec<(f64, u64)>,
}

impl RunningEstimates {
    /// Records that `job` started at `now` holding `granted` nodes.
    pub fn started(&mut self, job: &Job, granted: u64, now: f64) {
        self.push(job.id, now + estimate(job), granted);
    }

    /// Records running job `id`, estimated to end at `est_end`, holding
    /// `nodes` nodes.
    pub(crate) fn push(&mut self, id: u64, est_end: f64, nodes: u64) {
        self.running.push(Running { id, est_end, nodes });
    }

    /// The running jobs' (estimated end, nodes) by increasing end (ties in
    /// the order kept), each end raised to `floor` when one is given.
    pub(crate) fn by_end(&mut self, floor: Option<f64>) -> &[(f64, u64)] {
        self.scratch.clear();
        self.scratch
            .extend(self.running.iter().map(|r| match floor {
                Some(now) => (r.est_end.max(now), r.nodes),
                None => (r.est_end, r.nodes),
            }));
        self.scratch.sort_by(|a, b| a.0.total_cmp(&b.0));
        &self.scratch
    }

    /// Forgets the running job `id` (it departed).
    pub fn departed(&mut self, id: u64) {
        if let Some(pos) = self.running.iter().position(|r| r.id == id) {
            self.running.swap_remove(pos);
        }
    }

    /// The reservation of a job needing `need` nodes at `now`, with `free`
    /// nodes free: its shadow time (when, by the running jobs' estimated
    /// ends, enough nodes will be free; a job that has outlived its
    /// estimate is assumed to end now) and the extra nodes free then
    /// beyond its need. Infinite shadow time and no extra nodes when the
    /// running jobs never free enough.
    ///
    /// Every running job estimated to end at the shadow time counts
    /// toward the extra nodes, so the reservation does not depend on the
    /// order in which the running jobs were reported.
    pub fn reservation(&mut self, need: u64, free: u64, now: f64) -> Reservation {
        let ends = self.by_end(Some(now));
        let mut avail = free;
        let mut k = 0;
        while let Some(&(t, _)) = ends.get(k) {
            // All the nodes freed at t, whichever job is listed first.
            while let Some(&(_, n)) = ends.get(k).filter(|e| e.0 == t) {
                avail += n;
                k += 1;
            }
            if avail >= need {
                return Reservation {
                    shadow: t,
                    extra: avail - need,
                    now,
                };
            }
        }
        Reservation {
            shadow: f64::INFINITY,
            extra: 0,
            now,
        }
    }
}

/// A blocked job's reservation: which other jobs may start now without
/// delaying it (see the [module docs](self)).
///
/// ```
/// use partalloc_schedulers::easy::{Admission, RunningEstimates};
/// use partalloc_workload::{Job, JobShape};
///
/// let job = |id, count, service| Job::new(id, 0.0, JobShape::Nodes { count }, service);
/// let mut running = RunningEstimates::default();
/// running.started(&job(1, 2, 10.0), 2, 0.0);
/// // A 4-node job on a 4-node machine with 2 free waits for t = 10.
/// let mut r = running.reservation(4, 2, 0.0);
/// assert_eq!((r.shadow(), r.extra()), (10.0, 0));
/// // A 2-node job ending by then may start; one running past it may not.
/// assert_eq!(r.admits(&job(3, 2, 5.0), 2), Some(Admission::EndsInTime));
/// assert!(r.keep(Admission::EndsInTime, 2));
/// assert!(r.admits(&job(4, 2, 20.0), 2).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    shadow: f64,
    extra: u64,
    now: f64,
}

/// Why a backfill candidate may be tried (see [`Reservation::admits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// Estimated to end by the shadow time: any grant is kept.
    EndsInTime,
    /// Runs past the shadow time: kept only if its grant fits in the extra
    /// nodes, which it then consumes.
    UsesExtra,
}

impl Reservation {
    /// The shadow time.
    #[must_use]
    pub fn shadow(&self) -> f64 {
        self.shadow
    }

    /// The extra nodes not yet consumed by backfilled jobs.
    #[must_use]
    pub fn extra(&self) -> u64 {
        self.extra
    }

    /// Whether `job`, requesting `nodes` nodes, may be tried now: `None`
    /// if it would run past the shadow time on more than the extra nodes.
    #[must_use]
    pub fn admits(&self, job: &Job, nodes: u64) -> Option<Admission> {
        if self.now + estimate(job) <= self.shadow {
            Some(Admission::EndsInTime)
        } else if nodes <= self.extra {
            Some(Admission::UsesExtra)
        } else {
            None
        }
    }

    /// Whether a job admitted as `admission` may keep the `granted` nodes
    /// the allocator gave it; consumes the extra nodes it uses. On `false`
    /// the caller hands the grant back and the job keeps waiting.
    pub fn keep(&mut self, admission: Admission, granted: u64) -> bool {
        match admission {
            Admission::EndsInTime => true,
            Admission::UsesExtra if granted > self.extra => false,
            Admission::UsesExtra => {
                self.extra -= granted;
                true
            }
        }
    }
}

/// The EASY backfilling policy.
#[derive(Debug, Clone, Default)]
pub struct EasyBackfilling {
    queue: VecDeque<Job>,
    running: RunningEstimates,
    mapping: RequestMapping,
    order: Order,
    estimates: Estimates,
    ranking: Ranking,
}

impl EasyBackfilling {
    /// EASY backfilling with this job → request mapping.
    #[must_use]
    pub fn new(mapping: RequestMapping) -> Self {
        Self {
            mapping,
            ..Self::default()
        }
    }

    /// EASY backfilling over a queue in a priority order, with these
    /// estimates (see [`QueueOptions`]): the head is the first job in the
    /// order at each pass, and backfill candidates are tried in the order.
    #[must_use]
    pub fn with_options(options: QueueOptions) -> Self {
        Self {
            mapping: options.mapping,
            order: options.order,
            estimates: options.estimates,
            ..Self::default()
        }
    }

    fn record(&mut self, started: &[Started], now: f64) {
        if let Some(s) = started.last() {
            let job = self.estimates.apply(&s.job);
            self.running.started(&job, s.grant.granted_nodes(), now);
        }
    }
}

/// A job's estimated run time: its estimate, else its service time.
fn estimate(job: &Job) -> f64 {
    job.estimate.unwrap_or(job.service)
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "easy-backfilling",
        summary: "FCFS with a reservation for the blocked head; later jobs backfill if they do not delay it",
        source: "not from the papers; EASY backfilling (Lifka 1995) as the modern reference",
        params: &QUEUE_PARAMS,
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| {
        Ok(Box::new(EasyBackfilling::with_options(
            QueueOptions::from_spec(spec)?,
        )))
    },
};

impl Scheduler for EasyBackfilling {
    fn name(&self) -> String {
        QueueOptions {
            order: self.order,
            estimates: self.estimates,
            mapping: self.mapping,
        }
        .name("easy-backfilling", &[])
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        self.ranking
            .sort(&mut self.queue, self.order, now, &self.estimates);
        while !self.queue.is_empty() {
            match start_queued(&mut self.queue, 0, self.mapping, alloc, started)? {
                Attempt::Started => self.record(started, now),
                Attempt::Blocked => break,
            }
        }
        let Some(head) = self.queue.front() else {
            return Ok(());
        };
        let need = self.mapping.request(&head.shape).node_count();
        let mut reservation = self
            .running
            .reservation(need, alloc.free_nodes() as u64, now);
        let mut i = 1;
        while i < self.queue.len() {
            let job = self.queue[i];
            let nodes = self.mapping.request(&job.shape).node_count();
            let Some(admission) = reservation.admits(&self.estimates.apply(&job), nodes) else {
                i += 1;
                continue;
            };
            let attempt = try_start(&job, self.mapping, alloc, started).inspect_err(|_| {
                self.queue.remove(i);
            })?;
            match attempt {
                Attempt::Started => {
                    let granted = started.last().map_or(nodes, |s| s.grant.granted_nodes());
                    if !reservation.keep(admission, granted) {
                        // The grant would delay the head: hand it back.
                        if let Some(s) = started.pop() {
                            alloc
                                .release(&s.grant)
                                .map_err(|source| ScheduleError::Release {
                                    job: job.id,
                                    source,
                                })?;
                        }
                        i += 1;
                        continue;
                    }
                    self.queue.remove(i);
                    self.record(started, now);
                }
                Attempt::Blocked => i += 1,
            }
        }
        Ok(())
    }

    fn departed(&mut self, job: &Job, _now: f64) {
        self.running.departed(job.id);
    }

    crate::queue_methods!(queue);
}
