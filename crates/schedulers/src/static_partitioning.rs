//! Static partitioning: one fixed partition and one FIFO queue per size
//! class (Mohapatra et al. §3.1).
//!
//! "Static partitioning scheme divides the n-cube system into one
//! (n − 1)-cube, one (n − 2)-cube, …, one 1-cube, and two 0-cubes. Let S_i
//! denote the partition which accommodates jobs requesting i-subcubes, for
//! 0 ≤ i ≤ n − 1" (§3.1). At most one job of each class runs at a time;
//! each queue is FCFS. A job of class n (the whole machine) has no
//! partition and is refused as unservable; the second 0-cube stays idle, as
//! the paper assigns one partition per class. At each decision the idle
//! classes are served smallest first.
//!
//! The partitions are obtained through the allocator: a class-k job asks
//! it for a Q_k while no other class-k job runs. With a buddy allocator
//! (lowest aligned block first) the running jobs always fit, since the
//! classes in use are distinct powers of two below 2^n, and the blocks it
//! hands out are exactly the static partitions of §3.1.
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:3".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut s = registry::build("static-partitioning", &machine)?;
//! for id in 1..=2 {
//!     let job = Job::new(id, 0.0, JobShape::Cube { dim: 1 }, 1.0);
//!     s.submit(job, 0.0)?;
//! }
//! let mut started = Vec::new();
//! s.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Only one 1-cube partition exists: the second job waits.
//! assert_eq!(started.len(), 1);
//! assert_eq!(s.queue_len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::{AllocError, Allocator};
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, PolicyEntry, ROTATE, StrategyInfo};
use crate::scheduler::{Attempt, ClassQueues, check_job};
use crate::{RequestMapping, ScheduleError, Scheduler, Started, class_count};

/// The static partitioning policy.
#[derive(Debug, Clone)]
pub struct StaticPartitioning {
    queues: ClassQueues,
    running: Vec<bool>,
    mapping: RequestMapping,
}

impl StaticPartitioning {
    /// Static partitioning of a machine with `classes` size classes
    /// (classes 0 ..= n on Q_n; partitions exist for 0 ..= n − 1).
    #[must_use]
    pub fn new(classes: usize, mapping: RequestMapping) -> Self {
        let classes = classes.max(2);
        Self {
            queues: ClassQueues::new(classes),
            running: vec![false; classes],
            mapping,
        }
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "static-partitioning",
        summary: "one partition per size class (an (n−1)-cube, …, a 1-cube, a 0-cube), each with a FIFO queue",
        source: "Mohapatra et al. §3.1",
        params: &[ROTATE],
        topologies: ANY_TOPOLOGY,
    },
    build: |t, spec| {
        Ok(Box::new(StaticPartitioning::new(
            class_count(t.num_nodes()),
            crate::entry::mapping(spec)?,
        )))
    },
};

impl Scheduler for StaticPartitioning {
    fn name(&self) -> String {
        crate::entry::with_rotate("static-partitioning", self.mapping, String::new())
    }

    fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        self.queues.push(job);
        Ok(())
    }

    fn schedule(
        &mut self,
        _now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let top = self.queues.classes() - 1;
        if let Some(job) = self.queues.pop_front(top) {
            // The whole machine is never a static partition.
            return Err(ScheduleError::Unservable {
                job: job.id,
                source: AllocError::Invalid {
                    request: self.mapping.request(&job.shape),
                    reason: "static partitioning has no partition for the whole machine".into(),
                },
            });
        }
        for k in 0..top {
            if !self.running[k]
                && let Attempt::Started =
                    self.queues.start_front(k, self.mapping, alloc, started)?
            {
                self.running[k] = true;
            }
        }
        Ok(())
    }

    fn departed(&mut self, job: &Job, _now: f64) {
        let k = self.queues.class_of(job);
        self.running[k] = false;
    }

    fn queue_len(&self) -> usize {
        self.queues.waiting()
    }

    fn head(&self) -> Option<&Job> {
        self.queues.oldest()
    }
}
