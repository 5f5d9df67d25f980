//! What a registry entry is: a strategy's description ([`StrategyInfo`],
//! [`ParamInfo`]) and its constructor ([`Entry`]).
//!
//! A leaf module: the strategy modules import it to declare their `ENTRY`,
//! and the list of built-in strategies ([`registry`](crate::registry))
//! imports the strategy modules, never the reverse. The same types serve
//! the scheduling policies of `partalloc-schedulers` and a user's own
//! strategies, whose entries are built with the public fields:
//!
//! ```
//! use partalloc_allocators::paging::Paging;
//! use partalloc_allocators::registry::{AllocatorEntry, Entry, StrategyInfo, ANY_TOPOLOGY};
//!
//! const MINE: AllocatorEntry = Entry {
//!     info: StrategyInfo {
//!         name: "my-paging",
//!         summary: "paging under another name",
//!         source: "my lab notebook",
//!         params: &[],
//!         topologies: ANY_TOPOLOGY,
//!     },
//!     build: |topology, _spec| Ok(Box::new(Paging::new(topology.clone())?)),
//! };
//! let machine = "mesh:4x4".parse()?;
//! assert_eq!((MINE.build)(&machine, &"my-paging".parse()?)?.free_nodes(), 16);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use partalloc_topology::{Topology, TopologyKind};

use crate::{Allocator, BuildError, StrategySpec};

/// A parameter of a registered entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key, as written inside the brackets.
    pub name: &'static str,
    /// The default, as text.
    pub default: &'static str,
    /// What it means and which values it takes.
    pub doc: &'static str,
}

/// What a registry knows about one of its entries (an allocation strategy
/// or a scheduling policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyInfo {
    /// The name it is built by.
    pub name: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where it comes from (paper and section).
    pub source: &'static str,
    /// Its parameters.
    pub params: &'static [ParamInfo],
    /// The machine families it accepts; the registry refuses the others
    /// before calling the constructor.
    pub topologies: &'static [TopologyKind],
}

/// Every machine family, for entries that run on any machine.
pub const ANY_TOPOLOGY: &[TopologyKind] = TopologyKind::ALL;

/// Builds an entry's product for a machine from a parsed spec whose name
/// and parameter keys the registry has already checked.
pub type Constructor<T, E> = fn(&Topology, &StrategySpec) -> Result<Box<T>, E>;

/// A registered entry: its description and its constructor.
pub struct Entry<T: ?Sized + 'static, E: 'static> {
    /// Its description.
    pub info: StrategyInfo,
    /// Its constructor.
    pub build: Constructor<T, E>,
}

// Written by hand: a derive would require `T: Clone + Debug`, which
// `dyn Allocator` is not, though only a function pointer is held.
impl<T: ?Sized, E> Clone for Entry<T, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized, E> Copy for Entry<T, E> {}

impl<T: ?Sized, E> fmt::Debug for Entry<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry").field("info", &self.info).finish()
    }
}

/// A registered allocation strategy.
pub type AllocatorEntry = Entry<dyn Allocator, BuildError>;
