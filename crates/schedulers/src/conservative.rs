//! Conservative backfilling (Mu'alem & Feitelson, IEEE TPDS 12(6), 2001).
//!
//! Every waiting job holds a *reservation*: a start time in a plan of free
//! nodes over time, made from the running jobs' estimated ends and the
//! other reservations. A job arriving is given the earliest start at which
//! enough nodes stay free for its whole estimated run time without taking
//! nodes any reservation counts on, so no job may jump ahead if it would
//! delay any other reservation (not only the head's, as in EASY). A job
//! starts when its reservation comes due and the allocator grants it.
//!
//! When a running job ends before its estimate, the nodes it would have
//! held are free earlier and the plan is *compressed* at the pass of that
//! time, once, after every job ending then has left, so that the plan does
//! not depend on the order in which simultaneous ends are reported (PReMAS
//! compresses at each end, in the order of its events; its schedule
//! goldens agree with the single compression):
//! - `compression=rebuild` (default; PReMAS's `cons`,
//!   `StatefulScheduler.compress`, its implementation of the paper's
//!   compression, checked against PReMAS's schedules): the plan is rebuilt
//!   from the running jobs alone, the waiting jobs re-added one by one in
//!   the order of their reserved starts (ties by job id), each at its
//!   earliest start among the running jobs and the jobs already re-added.
//!   Every job re-added before a job j was reserved no later than j and
//!   only moves earlier, so its part of the plan after j's old start only
//!   shrinks and j's old slot stays free: no reservation moves later.
//! - `compression=queue` (a prioritized compression): the waiting jobs are
//!   reconsidered in the queue's [order](crate::order), each taken out of
//!   the plan and put back at its earliest start among all the other
//!   reservations (its own old slot is still free, so again no
//!   reservation moves later, whatever the order); passes repeat until no
//!   job moves. The repetition matters: a job that stays put because a
//!   later job held its slot would otherwise keep a start at that job's
//!   old end, a time at which, the job having moved, no event may ever
//!   happen.
//!
//! Either way every reserved start is now or the (estimated) end of a
//! running or reserved job, so it is either an event of the run loop or
//! the plan is compressed again before it (that end comes earlier).
//!
//! With `order=…` the queue order decides which waiting job is placed
//! first among jobs arriving at the same time, which is reconsidered first
//! in a compression, and which due job is started first; it never moves a
//! reservation later. `fcfs` (the default) is the paper's policy.
//!
//! # Partitionable machines
//!
//! The plan counts nodes, as EASY's reservation does
//! ([`easy`](crate::easy)): running jobs hold their granted nodes until
//! their estimated end, waiting jobs the nodes they request. A contiguous
//! allocator can still refuse a due job when enough nodes are free but
//! scattered; the job then keeps waiting, and at the next event its
//! reservation (now in the past) is placed again on its own, at its
//! earliest start among all the other reservations, so it delays none of
//! them. If that leaves a job reserved at the refused job's old end, a time
//! at which nothing ends any more, that job is placed again too (it only
//! moves earlier), and so on. Nothing else moves: a refusal is not an
//! early end and compresses nothing. A grant larger than the request (a
//! buddy rounding a node count up) is kept only if the plan has the extra
//! nodes free over the job's estimated run time; otherwise it is handed
//! back at once and the job keeps waiting. So on a non-contiguous
//! allocator and with estimates that never fall below the run times
//! (`estimates=exact`, or `underestimates=raise`), no job starts later
//! than its first reservation; on a contiguous one fragmentation can
//! delay the refused jobs past theirs.
//!
//! Other rules, all deterministic: a running job that has outlived its
//! estimate (`underestimates=keep`) is assumed to end now; when the
//! machine's usable nodes change (faults or repairs), the plan is rebuilt
//! as in `compression=rebuild` (losing nodes may then delay reservations);
//! a job that needs more nodes than the machine has gets no reservation
//! (+∞) but is still offered to the allocator at every pass, so that an
//! impossible request is refused as [`ScheduleError::Unservable`].
//!
//! # Cost
//!
//! The plan is a step function in two flat arrays (`profile.rs`), at most
//! two breakpoints per running or waiting job. Placing an arriving job is
//! one scan of the plan. A compression searches, for each waiting job,
//! only the plan before its old start (it never moves later), and under
//! `queue` leaves a job that cannot move in place without taking it out
//! and booking it again; the literal procedures (every job taken out and
//! placed by a search from now) are kept as the test oracle and give the
//! same schedules. Under `rebuild` the jobs move within the plan as it
//! stands, in order of reserved starts, and only the jobs that move are
//! booked again. A compression is still linear in the queue (one search
//! per waiting job). A refused job costs its own
//! placement, not a compression. With exact estimates nothing ends early
//! and no compression happens. Nothing is allocated per event once the
//! arrays have grown to the largest plan.
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut cons = registry::build("conservative-backfilling", &machine)?;
//! let job = |id, count, service| Job::new(id, 0.0, JobShape::Nodes { count }, service);
//! // Job 1 runs on 2 of 4 nodes until 10; job 2 (4 nodes) is reserved for 10;
//! // job 3 (2 nodes until 15) would delay it and is reserved for 20;
//! // job 4 (1 node, 30 s) fits nowhere before 20 either.
//! for j in [job(1, 2, 10.0), job(2, 4, 10.0), job(3, 2, 15.0), job(4, 1, 30.0)] {
//!     cons.submit(j, 0.0)?;
//! }
//! let mut started = Vec::new();
//! cons.schedule(0.0, alloc.as_mut(), &mut started)?;
//! let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
//! assert_eq!(ids, [1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use partalloc_allocators::Allocator;
use partalloc_allocators::registry::ParamInfo;
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, PolicyEntry, StrategyInfo};
use crate::order::Ranking;
use crate::priority::{QUEUE_PARAMS, QueueOptions};
use crate::profile::Profile;
use crate::scheduler::{Attempt, check_job, try_start};
use crate::{ScheduleError, Scheduler, Started};

/// How the plan is compressed when a job ends early (see the
/// [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Compression {
    /// The plan is rebuilt in the order of the reserved starts (PReMAS).
    #[default]
    Rebuild,
    /// Each waiting job, in queue order, moves to its earliest start among
    /// all other reservations, until no job moves.
    Queue,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Queue => "queue",
            Self::Rebuild => "rebuild",
        })
    }
}

/// A waiting job and its reservation.
#[derive(Debug, Clone, Copy)]
struct Queued {
    job: Job,
    /// Requested nodes.
    need: u64,
    /// Estimated run time.
    est: f64,
    /// Reserved start; NaN until placed, +∞ if the machine is too small.
    start: f64,
    /// Started (or dropped) in this pass; removed at its end.
    done: bool,
}

/// A running job as the plan sees it.
#[derive(Debug, Clone, Copy)]
struct Running {
    id: u64,
    /// Estimated end.
    end: f64,
    /// Granted nodes.
    nodes: u64,
}

/// Fills `order` with the positions of the queued jobs whose reserved
/// start passes `keep`, by reserved start, then job id: the order in which
/// the plan is rebuilt or compressed.
fn by_reserved_start(order: &mut Vec<usize>, queue: &[Queued], keep: impl Fn(f64) -> bool) {
    order.clear();
    order.extend((0..queue.len()).filter(|&i| keep(queue[i].start)));
    order.sort_unstable_by(|&a, &b| {
        let (a, b) = (&queue[a], &queue[b]);
        a.start.total_cmp(&b.start).then(a.job.id.cmp(&b.job.id))
    });
}

/// Nodes as a signed count for the plan.
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Conservative backfilling (see the [module docs](self)).
#[derive(Debug, Clone, Default)]
pub struct ConservativeBackfilling {
    queue: Vec<Queued>,
    running: Vec<Running>,
    /// Σ granted nodes of the running jobs.
    held: u64,
    profile: Profile,
    /// Usable nodes when the plan was last built.
    capacity: Option<u64>,
    options: QueueOptions,
    compression: Compression,
    ranking: Ranking,
    picks: Vec<usize>,
    order: Vec<usize>,
    ends: Vec<f64>,
    /// Whether something still ends at each of `ends`.
    live: Vec<bool>,
    /// Tests: compress by the literal definitions (every job taken out and
    /// placed again by a search from now), the oracle of the shortcuts.
    reference: bool,
    /// A running job ended early since the last pass: the plan is
    /// compressed once at the next pass, after every end of that time.
    ended_early: bool,
}

impl ConservativeBackfilling {
    /// Conservative backfilling with these options and compression rule.
    #[must_use]
    pub fn new(options: QueueOptions, compression: Compression) -> Self {
        Self {
            options,
            compression,
            ..Self::default()
        }
    }

    /// The same policy compressing by the literal definitions (tests: the
    /// oracle of the shortcuts).
    #[cfg(test)]
    pub(crate) fn reference(options: QueueOptions, compression: Compression) -> Self {
        Self {
            reference: true,
            ..Self::new(options, compression)
        }
    }

    /// The reserved start of waiting job `id`: `None` if it is not waiting
    /// or not yet placed (it is placed at the first pass after it arrives),
    /// +∞ if it needs more nodes than the machine has.
    #[must_use]
    pub fn reservation(&self, id: u64) -> Option<f64> {
        self.queue
            .iter()
            .find(|q| q.job.id == id && !q.start.is_nan())
            .map(|q| q.start)
    }

    /// Places `queue[i]` at its earliest start from `now` and books it.
    fn place(&mut self, i: usize, now: f64) {
        let q = &mut self.queue[i];
        let need = signed(q.need);
        q.start = self.profile.earliest(now, need, q.est);
        self.profile.add(q.start, q.start + q.est, -need);
    }

    /// Takes `queue[i]`'s reservation out of the plan (what is left of it
    /// after `now`).
    fn unbook(&mut self, i: usize) {
        let q = self.queue[i];
        if q.start.is_finite() {
            self.profile.add(q.start, q.start + q.est, signed(q.need));
        }
    }

    /// Ranks the waiting jobs at `picks` by the queue order at `now`, into
    /// `order` (queue positions).
    fn rank_picks(&mut self, now: f64) {
        let o = self.options;
        let queue = &self.queue;
        self.ranking.rank(
            o.order,
            now,
            &o.estimates,
            self.picks.iter().map(|&i| &queue[i].job),
        );
        self.order.clear();
        self.order
            .extend(self.ranking.indices().map(|k| self.picks[k]));
    }

    /// The plan from the running jobs alone, every placed job re-added in
    /// the order of its reserved start (ties by id).
    ///
    /// With `known` (a compression: no reserved start is in the past and
    /// the usable nodes did not change) each job's old start still fits
    /// among the jobs re-added before it (they were reserved no later and
    /// only moved earlier), so only the plan before it is searched for an
    /// earlier start ([`Profile::earlier_start`]); the result is the one of
    /// a search from `now`.
    fn rebuild(&mut self, now: f64, capacity: u64, known: bool) {
        if known && !self.reference && self.rebuild_in_place(now) {
            return;
        }
        self.profile.reset(now, signed(capacity));
        for r in &self.running {
            self.profile.add(now, r.end, -signed(r.nodes));
        }
        by_reserved_start(&mut self.order, &self.queue, |start| !start.is_nan());
        for k in 0..self.order.len() {
            let i = self.order[k];
            let q = self.queue[i];
            if !known || self.reference || !q.start.is_finite() || q.start < now {
                self.place(i, now);
                continue;
            }
            let need = signed(q.need);
            let start = if q.start > now {
                self.profile
                    .earlier_start(now, need, q.est, q.start, false)
                    .unwrap_or(q.start)
            } else {
                q.start
            };
            self.queue[i].start = start;
            self.profile.add(start, start + q.est, -need);
        }
    }

    /// Moves queued job `i` to the earliest start before its reserved one
    /// that the plan allows (its own booking counted free), if any; whether
    /// it moved.
    fn pull_earlier(&mut self, i: usize, now: f64) -> bool {
        let q = self.queue[i];
        let need = signed(q.need);
        let Some(t) = self.profile.earlier_start(now, need, q.est, q.start, true) else {
            return false;
        };
        self.unbook(i);
        self.queue[i].start = t;
        self.profile.add(t, t + q.est, -need);
        true
    }

    /// [`rebuild`](Self::rebuild) with `known`, without taking the plan
    /// apart: the jobs, in the order of their reserved starts (ties by id),
    /// are each moved to their earliest start before their old one, if
    /// any, in the plan as it stands. Returns `false`, doing nothing, when
    /// a reserved start is in the past or the plan is overbooked somewhere
    /// (then the plan is rebuilt from the running jobs).
    ///
    /// Why this is the rebuild: when job j's turn comes, the jobs before it
    /// in the order were reserved no later than j's old start s and have
    /// moved only earlier, and the jobs after it start at s or later. So
    /// before s the plan is exactly the running jobs and the jobs re-added
    /// before j, the plan the rebuild searches. At and after s (where a
    /// window starting before s may reach) the rebuild's plan has at least
    /// j's nodes free, since every job before j books no more there than it
    /// did and the old plan was not overbooked; here the plan holds j's own
    /// booking and is not overbooked either. Both searches therefore accept
    /// every window past s and see the same plan before it
    /// ([`Profile::earlier_start`] with j's own booking counted free). A
    /// job that does not move is not taken out and booked again.
    fn rebuild_in_place(&mut self, now: f64) -> bool {
        let queue = &self.queue;
        if queue.iter().any(|q| q.start < now) || self.profile.min_over(now, f64::INFINITY) < 0 {
            return false;
        }
        by_reserved_start(&mut self.order, queue, f64::is_finite);
        for k in 0..self.order.len() {
            let i = self.order[k];
            let q = self.queue[i];
            if q.start <= now {
                continue;
            }
            self.pull_earlier(i, now);
        }
        true
    }

    /// Moves every placed job, in queue order, to its earliest start among
    /// all other reservations, in passes until none moves.
    ///
    /// No reserved start is in the past here, so a job never moves later
    /// and only the plan before its start is searched
    /// ([`Profile::earlier_start`] with the job's own nodes counted free);
    /// a job that cannot move is not taken out of the plan and put back.
    fn compress_in_queue_order(&mut self, now: f64) {
        self.picks.clear();
        self.picks
            .extend((0..self.queue.len()).filter(|&i| !self.queue[i].start.is_nan()));
        self.rank_picks(now);
        // Each pass but the last moves a job strictly earlier, to one of
        // finitely many plan breakpoints; the bound only guards against a
        // plan that never settles.
        for _ in 0..=self.order.len() {
            let mut moved = false;
            for k in 0..self.order.len() {
                let i = self.order[k];
                let q = self.queue[i];
                if self.reference {
                    self.unbook(i);
                    self.place(i, now);
                    moved |= self.queue[i].start != q.start;
                    continue;
                }
                if !(q.start.is_finite() && q.start > now) {
                    continue;
                }
                moved |= self.pull_earlier(i, now);
            }
            if !moved {
                break;
            }
        }
    }

    /// Brings the plan to `now`: a new base if the usable nodes changed,
    /// else the reservations that passed without their job starting are
    /// placed again and, if a job ended early since the last pass, the
    /// plan is compressed (once for all the jobs that ended).
    fn update_plan(&mut self, now: f64, free: u64) {
        let ended_early = core::mem::take(&mut self.ended_early);
        let capacity = free + self.held;
        if self.capacity != Some(capacity) {
            self.capacity = Some(capacity);
            self.rebuild(now, capacity, false);
            return;
        }
        if ended_early {
            self.compress(now);
        } else {
            self.profile.advance(now);
            self.repair(now);
        }
    }

    /// Compresses the plan at `now`, after a job ended early (its nodes are
    /// already free in the plan).
    fn compress(&mut self, now: f64) {
        let Some(capacity) = self.capacity else {
            return;
        };
        self.profile.advance(now);
        self.repair(now);
        match self.compression {
            Compression::Queue => self.compress_in_queue_order(now),
            Compression::Rebuild => self.rebuild(now, capacity, true),
        }
    }

    /// Places again, at their earliest starts from `now` among all other
    /// reservations, the jobs whose reservation has passed without them
    /// starting; then, in rounds, the jobs reserved at a time at which
    /// nothing is planned to end any more (the old end of a job that has
    /// just moved), which only move earlier. No other job moves.
    ///
    /// Before a pass every reserved start is now or a planned end (arrivals
    /// and compressions place jobs only there), so only the old ends of the
    /// jobs moved here can leave a start unanchored; they are the only
    /// times checked. Cost: the moved jobs' placements plus one queue scan
    /// per round.
    fn repair(&mut self, now: f64) {
        self.picks.clear();
        self.picks.extend(
            (0..self.queue.len())
                .filter(|&i| self.queue[i].start < now && self.queue[i].start.is_finite()),
        );
        while !self.picks.is_empty() {
            self.rank_picks(now);
            self.ends.clear();
            for k in 0..self.order.len() {
                let i = self.order[k];
                let (old, est) = (self.queue[i].start, self.queue[i].est);
                if !self.stays_due(i, now) {
                    self.unbook(i);
                    self.place(i, now);
                }
                if self.queue[i].start != old && old + est > now {
                    self.ends.push(old + est);
                }
            }
            self.picks.clear();
            if self.ends.is_empty() {
                break;
            }
            self.ends.sort_unstable_by(f64::total_cmp);
            self.ends.dedup();
            // The jobs reserved at a freed end, then of those the ones at
            // which nothing ends any more: one pass over the plan's jobs
            // finds both.
            let ends = &self.ends;
            let find = |t: f64| ends.binary_search_by(|e| e.total_cmp(&t)).ok();
            self.live.clear();
            self.live.resize(self.ends.len(), false);
            for r in &self.running {
                if let Some(k) = find(r.end) {
                    self.live[k] = true;
                }
            }
            let queue = &self.queue;
            for (i, q) in queue.iter().enumerate() {
                if !q.start.is_finite() {
                    continue;
                }
                if q.start > now && find(q.start).is_some() {
                    self.picks.push(i);
                }
                if let Some(k) = find(q.start + q.est) {
                    self.live[k] = true;
                }
            }
            if self.picks.is_empty() {
                break;
            }
            let live = &self.live;
            self.picks
                .retain(|&i| find(queue[i].start).is_some_and(|k| !live[k]));
        }
    }

    /// A refused job's shortcut: if `queue[i]`, reserved before `now` and
    /// still booked past it, fits from `now` for its whole estimate (its
    /// own remaining booking counted free), that is its earliest start (no
    /// start is earlier than now), and only the tail beyond its old end is
    /// booked. Returns whether it was moved so.
    fn stays_due(&mut self, i: usize, now: f64) -> bool {
        let q = self.queue[i];
        let old_end = q.start + q.est;
        if self.reference || !(q.start < now && old_end > now) {
            return false;
        }
        let need = signed(q.need);
        let fits = self.profile.min_over(now, old_end) >= 0
            && self.profile.min_over(old_end, now + q.est) >= need;
        if fits {
            self.profile.add(old_end, now + q.est, -need);
            self.queue[i].start = now;
        }
        fits
    }

    /// Tests: the plan is what the running jobs and the reservations
    /// book, and every reserved start after `now` is a planned end (the
    /// property that makes every reservation an event of the run loop).
    #[cfg(test)]
    fn check_plan(&self, now: f64) {
        let Some(capacity) = self.capacity else {
            return;
        };
        let mut fresh = Profile::default();
        fresh.reset(now, signed(capacity));
        for r in &self.running {
            fresh.add(now, r.end, -signed(r.nodes));
        }
        let booked = self.queue.iter().filter(|q| q.start.is_finite());
        for q in booked.clone() {
            fresh.add(q.start, q.start + q.est, -signed(q.need));
        }
        for &t in self.profile.breakpoints().iter().chain(fresh.breakpoints()) {
            debug_assert_eq!(self.profile.free_at(t), fresh.free_at(t), "plan at {t}");
        }
        for q in booked.clone() {
            let t = q.start;
            debug_assert!(
                t <= now
                    || self.running.iter().any(|r| r.end == t)
                    || booked.clone().any(|o| o.start + o.est == t),
                "job {} reserved at {t}, when nothing ends (now {now})",
                q.job.id
            );
        }
    }

    /// Starts `queue[i]` (due now) if the allocator grants it and its grant
    /// fits the plan.
    fn start_due(
        &mut self,
        i: usize,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let q = self.queue[i];
        let attempt =
            try_start(&q.job, self.options.mapping, alloc, started).inspect_err(|_| {
                self.unbook(i);
                self.queue[i].done = true;
            })?;
        let Attempt::Started = attempt else {
            return Ok(());
        };
        let granted = started.last().map_or(q.need, |s| s.grant.granted_nodes());
        let end = now + q.est;
        if granted > q.need {
            let extra = signed(granted - q.need);
            if q.start.is_finite() && self.profile.min_over(now, end) >= extra {
                self.profile.add(now, end, -extra);
            } else {
                // The larger grant would take nodes a reservation counts on.
                if let Some(s) = started.pop() {
                    alloc
                        .release(&s.grant)
                        .map_err(|source| ScheduleError::Release {
                            job: q.job.id,
                            source,
                        })?;
                }
                return Ok(());
            }
        } else if !q.start.is_finite() {
            // Granted although the plan had no room (the machine grew):
            // book it now.
            self.profile.add(now, end, -signed(granted));
        }
        self.running.push(Running {
            id: q.job.id,
            end,
            nodes: granted,
        });
        self.held += granted;
        self.queue[i].done = true;
        Ok(())
    }

    /// Starts the due jobs in queue order.
    fn start_all_due(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        self.picks.clear();
        self.picks.extend(
            (0..self.queue.len())
                .filter(|&i| self.queue[i].start <= now || self.queue[i].start.is_infinite()),
        );
        self.rank_picks(now);
        for k in 0..self.order.len() {
            self.start_due(self.order[k], now, alloc, started)?;
        }
        Ok(())
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "conservative-backfilling",
        summary: "every waiting job holds a reservation; a job starts early only if it delays no reservation",
        source: "Mu'alem & Feitelson, IEEE TPDS 12(6) 2001; PReMAS cons (compression=rebuild); docs/baselines.md#conservative-backfilling",
        params: &[
            QUEUE_PARAMS[0],
            ParamInfo {
                name: "compression",
                default: "rebuild",
                doc: "when a job ends early: rebuild (PReMAS: the plan rebuilt in order of reserved starts) or queue (each waiting job, in queue order, to its earliest start among all others, until none moves)",
            },
            QUEUE_PARAMS[1],
            QUEUE_PARAMS[2],
            QUEUE_PARAMS[3],
        ],
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| {
        let compression = spec.choice(
            "compression",
            &[
                ("rebuild", Compression::Rebuild),
                ("queue", Compression::Queue),
            ],
        )?;
        Ok(Box::new(ConservativeBackfilling::new(
            QueueOptions::from_spec(spec)?,
            compression,
        )))
    },
};

impl Scheduler for ConservativeBackfilling {
    fn name(&self) -> String {
        let mut extra = Vec::new();
        if self.compression != Compression::Rebuild {
            extra.push(format!("compression={}", self.compression));
        }
        self.options.name("conservative-backfilling", &extra)
    }

    fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        self.queue.push(Queued {
            job,
            need: self.options.mapping.request(&job.shape).node_count(),
            est: self.options.estimates.of(&job),
            start: f64::NAN,
            done: false,
        });
        Ok(())
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        self.update_plan(now, alloc.free_nodes() as u64);
        // New arrivals, in queue order.
        self.picks.clear();
        self.picks
            .extend((0..self.queue.len()).filter(|&i| self.queue[i].start.is_nan()));
        self.rank_picks(now);
        for k in 0..self.order.len() {
            self.place(self.order[k], now);
        }
        let result = self.start_all_due(now, alloc, started);
        self.queue.retain(|q| !q.done);
        #[cfg(test)]
        self.check_plan(now);
        result
    }

    fn departed(&mut self, job: &Job, now: f64) {
        if let Some(pos) = self.running.iter().position(|r| r.id == job.id) {
            let r = self.running.swap_remove(pos);
            self.held -= r.nodes;
            if r.end > now {
                self.profile.add(now, r.end, signed(r.nodes));
                self.ended_early = true;
            }
        }
    }

    fn queue_len(&self) -> usize {
        self.queue.len()
    }

    fn head(&self) -> Option<&Job> {
        // The job reserved earliest (unplaced jobs last), ties by position.
        self.queue
            .iter()
            .min_by(|a, b| {
                let key = |q: &Queued| {
                    if q.start.is_nan() {
                        f64::INFINITY
                    } else {
                        q.start
                    }
                };
                key(a).total_cmp(&key(b))
            })
            .map(|q| &q.job)
    }
}
