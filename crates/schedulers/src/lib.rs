//! Job scheduling for partitionable parallel machines.
//!
//! Online policies decide which waiting jobs to start when a job arrives
//! or departs; they own the waiting queue(s) and start jobs through any
//! [`Allocator`](partalloc_allocators::Allocator). Offline algorithms
//! ([`torus`]) compute whole schedules for a known job set on a torus.
//!
//! | policy | module | source |
//! |---|---|---|
//! | `fcfs` | [`fcfs`] | Mohapatra et al. §1; Kim & Yoon §IV.1 |
//! | `scan` | [`scan`] | Krueger et al. via Mohapatra et al. §2.3 |
//! | `static-partitioning` | [`static_partitioning`] | Mohapatra et al. §3.1 |
//! | `lazy` | [`lazy`] | Mohapatra et al. §3.2 |
//! | `m-fcfs` | [`mfcfs`] | Kim & Yoon §IV.1 |
//! | `easy-backfilling` | [`easy`] | beyond the papers (Lifka 1995) |
//! | `priority` | [`priority`] | PReMAS `pqueue`; orders in [`order`] |
//! | `conservative-backfilling` | [`conservative`] | Mu'alem & Feitelson 2001 |
//! | `rlscheduler` | [`rlscheduler`] | RLScheduler's simulator (Zhang et al. SC'20) |
//! | `slurm` | [`slurm`] | slurmctld 26.05 (priority/multifactor, sched/backfill, limits) |
//!
//! # Quick start
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:4".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut sched = registry::build("m-fcfs[threshold=5]", &machine)?;
//! let job = Job::new(1, 0.0, JobShape::Cube { dim: 3 }, 2.0);
//! sched.submit(job, 0.0)?;
//! let mut started = Vec::new();
//! sched.schedule(0.0, alloc.as_mut(), &mut started)?;
//! assert_eq!(started[0].grant.granted_nodes(), 8);
//! // At the departure: release, tell the scheduler, schedule again.
//! alloc.release(&started[0].grant)?;
//! sched.departed(&started[0].job, 2.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Writing a policy
//!
//! Implement [`Scheduler`] (six methods, one with a default) with the
//! helpers the built-in policies use: [`check_job`] in `submit`,
//! [`try_start`] / [`start_queued`] (or [`ClassQueues`] for one queue per
//! size class) in `schedule`, and [`older`] for a head among several
//! queues. Then give it an [`Entry`](registry::Entry) and add it to a copy
//! of the built-ins ([`registry::builtin`]); every tool that takes a
//! [`registry::PolicySpec`] runs it.
//!
//! ```
//! use std::collections::VecDeque;
//! use partalloc_allocators::Allocator;
//! use partalloc_schedulers::registry::{self, Entry, PolicyEntry, StrategyInfo, ANY_TOPOLOGY, ROTATE};
//! use partalloc_schedulers::{check_job, start_queued, Attempt, RequestMapping};
//! use partalloc_schedulers::{ScheduleError, Scheduler, Started};
//! use partalloc_workload::{Job, JobShape};
//!
//! /// Starts the smallest waiting job first, while it fits.
//! #[derive(Debug, Default)]
//! struct SmallestFirst { queue: VecDeque<Job>, mapping: RequestMapping }
//!
//! impl Scheduler for SmallestFirst {
//!     fn name(&self) -> String { registry::with_rotate("smallest-first", self.mapping, String::new()) }
//!     fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
//!         check_job(&job)?;
//!         self.queue.push_back(job);
//!         Ok(())
//!     }
//!     fn schedule(&mut self, _now: f64, alloc: &mut dyn Allocator, started: &mut Vec<Started>)
//!         -> Result<(), ScheduleError>
//!     {
//!         while let Some(i) = (0..self.queue.len()).min_by_key(|&i| (self.queue[i].nodes(), i)) {
//!             if start_queued(&mut self.queue, i, self.mapping, alloc, started)? == Attempt::Blocked {
//!                 break;
//!             }
//!         }
//!         Ok(())
//!     }
//!     fn queue_len(&self) -> usize { self.queue.len() }
//!     fn head(&self) -> Option<&Job> { self.queue.front() }
//! }
//!
//! const SMALLEST_FIRST: PolicyEntry = Entry {
//!     info: StrategyInfo {
//!         name: "smallest-first",
//!         summary: "the smallest waiting job first",
//!         source: "a doc example",
//!         params: &[ROTATE],
//!         topologies: ANY_TOPOLOGY,
//!     },
//!     build: |_, spec| Ok(Box::new(SmallestFirst { mapping: registry::mapping(spec)?, ..Default::default() })),
//! };
//!
//! let mut policies = registry::builtin();
//! policies.register(SMALLEST_FIRST)?;
//! let machine = "hypercube:2".parse()?;
//! let mut sched = policies.spec("smallest-first")?.build(&machine)?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! for (id, count) in [(1, 3), (2, 2), (3, 1)] {
//!     sched.submit(Job::new(id, 0.0, JobShape::Nodes { count }, 1.0), 0.0)?;
//! }
//! let mut started = Vec::new();
//! sched.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // 1 + 2 nodes start, then the 3-node job no longer fits (FCFS would start job 1 alone).
//! assert_eq!(started.iter().map(|s| s.job.id).collect::<Vec<_>>(), [3, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for the public data types.
//! - `test-support`: the `testing` module, two tiny reference allocators for tests
//!   and benches of schedulers and run loops.

#![deny(missing_docs)]

pub mod conservative;
pub mod easy;
mod entry;
pub mod estimates;
pub mod fcfs;
pub mod lazy;
pub mod mfcfs;
pub mod order;
pub mod priority;
mod profile;
pub mod registry;
pub mod rlscheduler;
pub mod scan;
mod scheduler;
pub mod slurm;
pub mod static_partitioning;
pub mod threshold;
pub mod torus;

#[cfg(test)]
mod ordering_tests;
#[cfg(test)]
mod premas_schedule_tests;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
#[cfg(test)]
mod tests;

pub use registry::PolicyBuildError;

/// What [`queue_methods!`] names from other crates, so a crate using the
/// macro needs no extra dependency.
#[doc(hidden)]
pub mod __macro_support {
    pub use partalloc_workload::Job;
}
pub use scheduler::{
    Attempt, ClassQueues, Preemption, RequestMapping, ScheduleError, Scheduler, Started, check_job,
    class_count, older, size_class, start_in_order, start_queued, try_start,
};
