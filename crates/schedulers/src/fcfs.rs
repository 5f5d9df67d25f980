//! First-come, first-served: only the head of the queue may start.
//!
//! The discipline every paper compares against (Mohapatra §1: its
//! "blocking" property; Kim & Yoon §IV.1: "only the job at the head of
//! queue (head job) has the chance to be allocated"). Jobs start in arrival
//! order while the allocator grants the head's request; the first refusal
//! blocks the whole queue until a departure.
//!
//! ```
//! use partalloc_allocators::registry;
//! use partalloc_schedulers::{fcfs::Fcfs, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:2".parse()?;
//! let mut alloc = registry::build("paging", &machine)?;
//! let mut fcfs = Fcfs::default();
//! for (id, count) in [(1, 3), (2, 2), (3, 1)] {
//!     let shape = JobShape::Nodes { count };
//!     fcfs.submit(Job::new(id, 0.0, shape, 1.0), 0.0)?;
//! }
//! let mut started = Vec::new();
//! fcfs.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Job 2 blocks the head; job 3 would fit but may not pass it.
//! assert_eq!(started.len(), 1);
//! assert_eq!(fcfs.head().map(|j| j.id), Some(2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::VecDeque;

use partalloc_allocators::Allocator;
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, PolicyEntry, StrategyInfo};
use crate::scheduler::start_in_order;
use crate::{RequestMapping, ScheduleError, Scheduler, Started};

/// First-come, first-served.
#[derive(Debug, Clone, Default)]
pub struct Fcfs {
    queue: VecDeque<Job>,
    mapping: RequestMapping,
}

impl Fcfs {
    /// FCFS with this job → request mapping.
    #[must_use]
    pub fn new(mapping: RequestMapping) -> Self {
        Self {
            queue: VecDeque::new(),
            mapping,
        }
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "fcfs",
        summary: "first-come first-served; a blocked head blocks the queue",
        source: "Mohapatra et al. §1; Kim & Yoon §IV.1",
        params: &[crate::entry::ROTATE],
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| Ok(Box::new(Fcfs::new(crate::entry::mapping(spec)?))),
};

impl Scheduler for Fcfs {
    fn name(&self) -> String {
        crate::entry::with_rotate("fcfs", self.mapping, String::new())
    }

    fn schedule(
        &mut self,
        _now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        start_in_order(&mut self.queue, self.mapping, alloc, started)
    }

    crate::queue_methods!(queue);
}
