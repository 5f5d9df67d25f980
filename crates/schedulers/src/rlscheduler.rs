//! The decision procedure of RLScheduler's simulator (Zhang et al., SC'20;
//! repository DIR-LAB/deep-batch-scheduler, `HPCSimPickJobs.py`), which
//! made the heuristics' table the learned-scheduling literature compares
//! with. Registry name `rlscheduler[order=…,backfill=true|false]`.
//!
//! It differs from [`priority`](crate::priority) and
//! [`easy`](crate::easy) in three ways, each read from the simulator's
//! source (`HPCSimPickJobs.py`, `HPCEnv.schedule_curr_sequence_reset` and
//! the two functions it calls):
//! - **A chosen head is kept until it starts.** The queue is sorted by the
//!   order only when a head is to be chosen; while that head waits, jobs
//!   that arrive are queued behind it whatever their score
//!   (`skip_for_resources_greedy`, `moveforward_for_resources_backfill_greedy`
//!   loop until the chosen job fits). [`Priority`](crate::priority::Priority)
//!   re-sorts at every pass.
//! - **The shadow time is fixed when the head is first refused**: the
//!   estimated end (start + estimate, not clamped to now) of the running
//!   job at which, adding the running jobs' nodes in order of estimated
//!   end to the free ones, the head's request is met. It is not recomputed
//!   as jobs arrive or end.
//! - **Backfilling** (`backfill=true`): at every pass while the head
//!   waits, every other waiting job, in arrival order, starts if the
//!   allocator grants it now and now + its estimate is *strictly before*
//!   the shadow time. There is no extra-nodes rule: a job running past the
//!   shadow time never backfills, even on nodes the head will not need.
//!
//! Estimates are read as for every policy ([`Estimates`](crate::estimates)):
//! the simulator itself uses field 9 with −1 replaced by the run time and
//! keeps estimates below the run time (`job.py`), which is this crate's
//! default. Combined with `order=wfp3-rlscheduler` or
//! `order=unicep-rlscheduler`, this reproduces the computation behind the
//! simulator's published table; see docs/paper-errata.md. One difference
//! remains outside the policy: the simulator handles one event (one
//! arrival or one release) per step, arrivals before releases at equal
//! times, where partalloc's run loop schedules once per batch of
//! simultaneous events.
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut rl = registry::build("rlscheduler[backfill=true]", &machine)?;
//! let job = |id, count, service| Job::new(id, 0.0, JobShape::Nodes { count }, service);
//! // Job 1 holds 2 nodes until 10, job 2 (4 nodes) waits with shadow 10.
//! // Job 3 would end exactly at 10: not strictly before, so it waits.
//! for j in [job(1, 2, 10.0), job(2, 4, 1.0), job(3, 1, 10.0), job(4, 1, 9.0)] {
//!     rl.submit(j, 0.0)?;
//! }
//! let mut started = Vec::new();
//! rl.schedule(0.0, alloc.as_mut(), &mut started)?;
//! let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
//! assert_eq!(ids, [1, 4]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;

use partalloc_allocators::Allocator;
use partalloc_allocators::registry::ParamInfo;
use partalloc_workload::Job;

use crate::easy::RunningEstimates;
use crate::entry::{ANY_TOPOLOGY, Entry, PolicyEntry, StrategyInfo};
use crate::order::Ranking;
use crate::priority::{QUEUE_PARAMS, QueueOptions};
use crate::scheduler::{Attempt, check_job, start_queued};
use crate::{ScheduleError, Scheduler, Started};

/// RLScheduler's simulator's decision procedure (see the
/// [module docs](self)).
#[derive(Debug, Clone, Default)]
pub struct RlScheduler {
    /// Waiting jobs in submission order.
    queue: VecDeque<Job>,
    /// The chosen head's id.
    chosen: Option<u64>,
    /// The chosen head's shadow time, once it has been refused.
    shadow: Option<f64>,
    /// The running jobs' estimated ends and nodes.
    running: RunningEstimates,
    backfill: bool,
    options: QueueOptions,
    ranking: Ranking,
}

impl RlScheduler {
    /// The procedure with these options, with or without backfilling.
    #[must_use]
    pub fn new(options: QueueOptions, backfill: bool) -> Self {
        Self {
            options,
            backfill,
            ..Self::default()
        }
    }

    /// Records the job just pushed to `started` as running.
    fn record(&mut self, started: &[Started], now: f64) {
        if let Some(s) = started.last() {
            let est_end = now + self.options.estimates.of(&s.job);
            self.running
                .push(s.job.id, est_end, s.grant.granted_nodes());
        }
    }

    /// The shadow time of a head needing `need` nodes with `free` free.
    fn shadow_time(&mut self, need: u64, free: u64, now: f64) -> f64 {
        let mut shadow = now;
        let mut avail = free;
        for &(t, n) in self.running.by_end(None) {
            avail += n;
            shadow = t;
            if avail >= need {
                break;
            }
        }
        shadow
    }

    /// One backfilling pass around the chosen head at position `head`.
    fn backfill_pass(
        &mut self,
        head: usize,
        shadow: f64,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let o = self.options;
        let head_id = self.queue[head].id;
        let mut i = 0;
        while i < self.queue.len() {
            let job = self.queue[i];
            if job.id == head_id || now + o.estimates.of(&job) >= shadow {
                i += 1;
                continue;
            }
            match start_queued(&mut self.queue, i, o.mapping, alloc, started)? {
                Attempt::Started => self.record(started, now),
                Attempt::Blocked => i += 1,
            }
        }
        Ok(())
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "rlscheduler",
        summary: "RLScheduler's simulator: a chosen head is kept until it starts; optional backfilling strictly before a fixed shadow time, no extra-nodes rule",
        source: "Zhang et al. SC'20; DIR-LAB/deep-batch-scheduler HPCSimPickJobs.py; docs/paper-errata.md#rlscheduler",
        params: &[
            QUEUE_PARAMS[0],
            ParamInfo {
                name: "backfill",
                default: "false",
                doc: "backfill as the simulator does (true) or not (false)",
            },
            QUEUE_PARAMS[1],
            QUEUE_PARAMS[2],
            QUEUE_PARAMS[3],
        ],
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| {
        let backfill = spec.parse_or("backfill", false)?;
        Ok(Box::new(RlScheduler::new(
            QueueOptions::from_spec(spec)?,
            backfill,
        )))
    },
};

impl Scheduler for RlScheduler {
    fn name(&self) -> String {
        let extra = if self.backfill {
            vec!["backfill=true".to_owned()]
        } else {
            Vec::new()
        };
        self.options.name("rlscheduler", &extra)
    }

    fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        self.queue.push_back(job);
        Ok(())
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let o = self.options;
        loop {
            let chosen = self
                .chosen
                .and_then(|id| self.queue.iter().position(|j| j.id == id));
            let head = match chosen {
                Some(i) => i,
                None => {
                    self.shadow = None;
                    self.ranking
                        .rank(o.order, now, &o.estimates, self.queue.iter());
                    let Some(i) = self.ranking.indices().next() else {
                        self.chosen = None;
                        return Ok(());
                    };
                    self.chosen = Some(self.queue[i].id);
                    i
                }
            };
            let attempt = start_queued(&mut self.queue, head, o.mapping, alloc, started)
                .inspect_err(|_| self.chosen = None)?;
            match attempt {
                Attempt::Started => {
                    self.record(started, now);
                    self.chosen = None;
                }
                Attempt::Blocked => {
                    if self.backfill {
                        let shadow = match self.shadow {
                            Some(t) => t,
                            None => {
                                let need = o.mapping.request(&self.queue[head].shape).node_count();
                                let t = self.shadow_time(need, alloc.free_nodes() as u64, now);
                                self.shadow = Some(t);
                                t
                            }
                        };
                        self.backfill_pass(head, shadow, now, alloc, started)?;
                    }
                    return Ok(());
                }
            }
        }
    }

    fn departed(&mut self, job: &Job, _now: f64) {
        self.running.departed(job.id);
    }

    fn queue_len(&self) -> usize {
        self.queue.len()
    }

    fn head(&self) -> Option<&Job> {
        self.chosen
            .and_then(|id| self.queue.iter().find(|j| j.id == id))
            .or_else(|| self.queue.front())
    }
}
