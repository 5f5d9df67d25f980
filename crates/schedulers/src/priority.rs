//! Strict priority scheduling: one queue kept in a priority
//! [order](crate::order), served from its front without backfilling.
//!
//! At every scheduling pass the queue is put in the order at the time of
//! the pass (orders such as `wfp3` change with the wait), then jobs start
//! from the front while the allocator grants them; the first refusal
//! blocks the queue until the next event. `priority[order=fcfs]` is `fcfs`.
//! This is PReMAS's `pqueue[<comparator>]` (`PQScheduler`) and the
//! no-backfilling heuristics of the learned-scheduling literature, except
//! that the head is chosen afresh at every pass (RLScheduler's simulator
//! keeps a chosen head until it starts: the [`rlscheduler`](crate::rlscheduler)
//! policy).
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut sched = registry::build("priority[order=smallest]", &machine)?;
//! let job = |id, count| Job::new(id, 0.0, JobShape::Nodes { count }, 1.0);
//! for j in [job(1, 3), job(2, 2), job(3, 1)] {
//!     sched.submit(j, 0.0)?;
//! }
//! let mut started = Vec::new();
//! sched.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Smallest first: 1 node, then 2; the 3-node job waits.
//! let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
//! assert_eq!(ids, [3, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;

use partalloc_allocators::{Allocator, SpecError, StrategySpec};
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, PolicyEntry, ROTATE, StrategyInfo};
use crate::estimates::{ESTIMATES, Estimates, UNDERESTIMATES};
use crate::order::{ORDER, Order, Ranking};
use crate::scheduler::start_in_order;
use crate::{RequestMapping, ScheduleError, Scheduler, Started};

/// The options every ordered policy reads: queue order, estimates and the
/// job → request mapping.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueueOptions {
    /// The queue order.
    pub order: Order,
    /// How run times are estimated.
    pub estimates: Estimates,
    /// How a job's shape becomes a request.
    pub mapping: RequestMapping,
}

impl QueueOptions {
    /// Reads `order`, `estimates`, `underestimates` and `rotate`.
    pub(crate) fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        Ok(Self {
            order: Order::from_spec(spec)?,
            estimates: Estimates::from_spec(spec)?,
            mapping: crate::entry::mapping(spec)?,
        })
    }

    /// The canonical `name[…]` with `extra` parameters after the order and
    /// the estimates; only values that differ from the defaults are
    /// written.
    pub(crate) fn name(&self, policy: &str, extra: &[String]) -> String {
        let mut params = Vec::new();
        if !self.order.is_fcfs() {
            params.push(format!("order={}", self.order));
        }
        params.extend_from_slice(extra);
        self.estimates.push_params(&mut params);
        crate::entry::with_rotate(policy, self.mapping, params.join(","))
    }
}

/// The parameters of every ordered policy.
pub(crate) const QUEUE_PARAMS: [crate::entry::ParamInfo; 4] =
    [ORDER, ESTIMATES, UNDERESTIMATES, ROTATE];

/// Strict priority scheduling (see the [module docs](self)).
#[derive(Debug, Clone, Default)]
pub struct Priority {
    queue: VecDeque<Job>,
    options: QueueOptions,
    ranking: Ranking,
}

impl Priority {
    /// Strict priority scheduling with these options.
    #[must_use]
    pub fn new(options: QueueOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "priority",
        summary: "one queue in a priority order (order=…), served from its front without backfilling",
        source: "PReMAS pqueue[<comparator>]; orders from Zhang et al. SC'20, Tang et al. 2009, Carastan-Santos & de Camargo SC'17; docs/baselines.md#priority",
        params: &QUEUE_PARAMS,
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| Ok(Box::new(Priority::new(QueueOptions::from_spec(spec)?))),
};

impl Scheduler for Priority {
    fn name(&self) -> String {
        self.options.name("priority", &[])
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let o = self.options;
        self.ranking
            .sort(&mut self.queue, o.order, now, &o.estimates);
        start_in_order(&mut self.queue, o.mapping, alloc, started)
    }

    crate::queue_methods!(queue);
}
