//! Modified FCFS (Kim & Yoon §IV.1).
//!
//! "When the head job is blocked, that is, it is failed to be allocated,
//! subsequent jobs are considered in arrived sequence and allocated if
//! suitable submeshes are found." A threshold ends indefinite postponement:
//! "when the threshold of the head job is reached, it gets priority over
//! all other jobs. No jobs are allocated until the head job is allocated."
//! The threshold is "maximum queuing delay that a job can tolerate at the
//! head of queue", so the head's waiting time is counted from the moment
//! it became the head; it is reached when that time is at least the
//! threshold. It is fixed or dynamic, `d · λ` ([`Threshold`]), with `d` the
//! mean queueing delay of the jobs allocated so far.
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut m = registry::build("m-fcfs[threshold=never]", &machine)?;
//! for (id, count) in [(1, 3), (2, 2), (3, 1)] {
//!     let job = Job::new(id, 0.0, JobShape::Nodes { count }, 1.0);
//!     m.submit(job, 0.0)?;
//! }
//! let mut started = Vec::new();
//! m.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Job 2 is blocked, job 3 passes it.
//! let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
//! assert_eq!(ids, [1, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;

use partalloc_allocators::Allocator;
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, ParamInfo, PolicyEntry, ROTATE, StrategyInfo};
use crate::scheduler::{Attempt, check_job, start_queued};
use crate::threshold::{DelayMonitor, Threshold};
use crate::{RequestMapping, ScheduleError, Scheduler, Started};

/// The M-FCFS policy.
#[derive(Debug, Clone)]
pub struct ModifiedFcfs {
    queue: VecDeque<Job>,
    head_since: f64,
    threshold: Threshold,
    monitor: DelayMonitor,
    mapping: RequestMapping,
}

impl ModifiedFcfs {
    /// M-FCFS with this threshold.
    #[must_use]
    pub fn new(threshold: Threshold, mapping: RequestMapping) -> Self {
        Self {
            queue: VecDeque::new(),
            head_since: 0.0,
            threshold,
            monitor: DelayMonitor::default(),
            mapping,
        }
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "m-fcfs",
        summary: "FCFS that lets later jobs pass a blocked head until the head has waited a threshold",
        source: "Kim & Yoon §IV.1",
        params: &[
            ParamInfo {
                name: "threshold",
                default: "dynamic",
                doc: "time at the head after which the head gets priority: a non-negative time, never, or dynamic (d·λ)",
            },
            ROTATE,
        ],
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| {
        let threshold = match spec.get("threshold") {
            None => Threshold::DynamicLinear,
            Some(v) => v
                .parse::<Threshold>()
                .map_err(|reason| spec.invalid("threshold", reason))?,
        };
        Ok(Box::new(ModifiedFcfs::new(
            threshold,
            crate::entry::mapping(spec)?,
        )))
    },
};

impl Scheduler for ModifiedFcfs {
    fn name(&self) -> String {
        crate::entry::with_rotate(
            "m-fcfs",
            self.mapping,
            format!("threshold={}", self.threshold),
        )
    }

    fn submit(&mut self, job: Job, now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        if self.queue.is_empty() {
            self.head_since = now;
        }
        self.queue.push_back(job);
        self.monitor.arrived();
        Ok(())
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        // The head, as in FCFS.
        while let Some(head) = self.queue.front() {
            let arrival = head.arrival;
            match start_queued(&mut self.queue, 0, self.mapping, alloc, started) {
                Ok(Attempt::Started) => {
                    self.head_since = now;
                    self.monitor.allocated(arrival, now);
                }
                Ok(Attempt::Blocked) => break,
                Err(e) => {
                    self.head_since = now;
                    return Err(e);
                }
            }
        }
        if self.queue.is_empty()
            || now - self.head_since >= self.threshold.value(&self.monitor, now)
        {
            return Ok(());
        }
        // The head is blocked but has not reached the threshold.
        let mut i = 1;
        while i < self.queue.len() {
            let arrival = self.queue[i].arrival;
            match start_queued(&mut self.queue, i, self.mapping, alloc, started)? {
                Attempt::Started => self.monitor.allocated(arrival, now),
                Attempt::Blocked => i += 1,
            }
        }
        Ok(())
    }

    fn queue_len(&self) -> usize {
        self.queue.len()
    }

    fn head(&self) -> Option<&Job> {
        self.queue.front()
    }
}
