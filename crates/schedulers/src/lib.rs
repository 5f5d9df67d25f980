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
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for the public data types.
//! - `test-support`: the `testing` module, two tiny reference allocators for tests
//!   and benches of schedulers and run loops.

#![deny(missing_docs)]

pub mod conservative;
pub mod easy;
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
pub mod static_partitioning;
pub mod threshold;
pub mod torus;

#[cfg(test)]
mod ordering_tests;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
#[cfg(test)]
mod tests;

pub use registry::PolicyBuildError;
pub use scheduler::{RequestMapping, ScheduleError, Scheduler, Started, class_count, size_class};
