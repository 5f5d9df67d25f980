//! Processor allocation strategies for partitionable parallel machines.
//!
//! Every strategy implements the object-safe [`Allocator`] trait: it grants
//! a [`Partition`] for a [`Request`], takes it back on release, and can say
//! which partitions it is able to recognise at all. The [`registry`] builds
//! strategies by name, with parameters, for a given machine.
//!
//! # Quick start
//!
//! ```
//! use partalloc_allocators::{registry, Request};
//! use partalloc_topology::Topology;
//!
//! let machine: Topology = "hypercube:5".parse()?;
//! let mut alloc = registry::build("paging", &machine)?;
//! let grant = alloc.allocate(&Request::nodes(12))?;
//! assert_eq!(alloc.free_nodes(), 20);
//! alloc.release(&grant)?;
//! assert_eq!(alloc.free_nodes(), 32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Building a strategy
//!
//! Every strategy's constructor (`new`, and `with_…` where it has more
//! parameters) takes the machine as the narrowest type the strategy needs
//! ([`Hypercube`](partalloc_topology::Hypercube) for the [`hypercube`]
//! strategies, [`Topology`](partalloc_topology::Topology) for the others)
//! and returns `Result<Self, BuildError>`. Those that cannot fail today
//! (e.g. [`hypercube::Buddy::new`], [`paging::Paging::new`]) return a
//! `Result` too, so that every strategy is built the same way and a check
//! added later does not break its callers. The [`registry`] builds the same
//! types by name and fails with the same [`BuildError`].
//!
//! # Writing a strategy
//!
//! Implement [`Allocator`]: seven methods are required, faults and
//! listings have defaults that refuse with a typed error. Keep live grants
//! in a [`GrantLedger`] and, if the strategy is bitmap based, node state in
//! an [`Occupancy`]; then run [`conformance::check_script`] from a property
//! test.
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for requests, grants and partitions.

#![deny(missing_docs)]

mod allocator;
pub mod block;
pub mod conformance;
pub mod curve;
pub mod dispersal;
mod entry;
mod error;
pub mod gpushare;
mod grant;
pub mod hypercube;
pub mod kary;
mod ledger;
pub mod mesh;
pub mod nearest;
pub mod noncontig;
mod occupancy;
pub mod paging;
#[cfg(test)]
mod placement_tests;
pub mod pod;
pub mod premas_golden;
pub mod registry;
mod request;
pub mod ring;
mod rowgrid;
pub mod slurm;
pub mod slurm_golden;
mod spec;
pub mod strategy;
mod submesh_list;
pub mod tas;
pub mod torus3d;
pub mod tree;

pub use allocator::{Allocator, AllocatorWrapper, PlacementRules};
pub use error::{AllocError, BuildError, FaultError, ReleaseError};
pub use grant::{Grant, GrantId, Partition};
pub use ledger::GrantLedger;
pub use occupancy::Occupancy;
pub use request::Request;
pub use spec::{SpecError, StrategySpec};
pub use strategy::{GrantRecord, Managed, Strategy, View};
