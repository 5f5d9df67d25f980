//! Per-node state (busy, faulty) shared by the bitmap-based strategies.

use partalloc_topology::{NodeId, NodeSet};

use crate::FaultError;

/// Which nodes are busy (in a live grant) and which are faulty.
///
/// Strategies keep their own search structures; this is the flat truth they
/// update alongside, and what [`Allocator::busy_nodes`](crate::Allocator)
/// reports.
///
/// ```
/// use partalloc_allocators::Occupancy;
/// let mut occ = Occupancy::new(8);
/// occ.mark_faulty(3)?;
/// occ.occupy(0..2);
/// assert_eq!(occ.free_count(), 5);
/// assert!(!occ.is_available(3) && !occ.is_available(1) && occ.is_available(2));
/// # Ok::<(), partalloc_allocators::FaultError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occupancy {
    busy: NodeSet,
    faulty: NodeSet,
    free: usize,
}

impl Occupancy {
    /// `nodes` nodes, all free and healthy.
    #[must_use]
    pub fn new(nodes: usize) -> Self {
        Self {
            busy: NodeSet::new(nodes),
            faulty: NodeSet::new(nodes),
            free: nodes,
        }
    }

    /// Number of nodes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.busy.universe()
    }

    /// Whether the machine has no node.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Nodes neither busy nor faulty.
    #[must_use]
    pub fn free_count(&self) -> usize {
        self.free
    }

    /// Whether `node` is neither busy nor faulty (false outside the machine).
    #[must_use]
    #[inline]
    pub fn is_available(&self, node: NodeId) -> bool {
        (node as usize) < self.len() && !self.busy.contains(node) && !self.faulty.contains(node)
    }

    /// The busy nodes.
    #[must_use]
    pub fn busy(&self) -> &NodeSet {
        &self.busy
    }

    /// The faulty nodes.
    #[must_use]
    pub fn faulty(&self) -> &NodeSet {
        &self.faulty
    }

    /// Marks available nodes busy. Callers pass nodes they found available;
    /// nodes outside the machine or already unavailable are skipped.
    pub fn occupy(&mut self, nodes: impl IntoIterator<Item = NodeId>) {
        for n in nodes {
            if self.is_available(n) && self.busy.insert(n).unwrap_or(false) {
                self.free -= 1;
            }
        }
    }

    /// Marks busy nodes free again; nodes that were not busy are skipped.
    pub fn vacate(&mut self, nodes: impl IntoIterator<Item = NodeId>) {
        for n in nodes {
            if self.busy.remove(n).unwrap_or(false) {
                self.free += 1;
            }
        }
    }

    /// Marks the id range `lo..hi` busy; every node in it must be available
    /// (checked by the caller, e.g. a buddy block found free).
    pub fn occupy_range(&mut self, lo: usize, hi: usize) {
        if self.busy.insert_range(lo, hi).is_ok() {
            self.free -= hi - lo;
        }
    }

    /// Marks the id range `lo..hi` free; every node in it must be busy.
    pub fn vacate_range(&mut self, lo: usize, hi: usize) {
        if self.busy.remove_range(lo, hi).is_ok() {
            self.free += hi - lo;
        }
    }

    /// Marks a free node faulty (idempotent).
    ///
    /// # Errors
    /// [`FaultError::Topology`] outside the machine, [`FaultError::Busy`] if
    /// it is in a live grant.
    pub fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        if self.busy.contains(node) {
            return Err(FaultError::Busy { node });
        }
        if self.faulty.insert(node)? {
            self.free -= 1;
        }
        Ok(())
    }

    /// Returns a faulty node to service (idempotent).
    ///
    /// # Errors
    /// [`FaultError::Topology`] outside the machine.
    pub fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        if self.faulty.remove(node)? {
            self.free += 1;
        }
        Ok(())
    }
}

/// Implements the `Allocator` methods that only read an [`Occupancy`] and a
/// [`GrantLedger`](crate::GrantLedger): `free_nodes`, `live_grants`,
/// `is_available`, `busy_nodes` and `faulty_nodes`. Give the field paths
/// below `self`, e.g. `occupancy_methods!(core.occ, core.ledger)`.
macro_rules! occupancy_methods {
    ($($occ:ident).+, $($ledger:ident).+) => {
        fn free_nodes(&self) -> usize {
            self.$($occ).+.free_count()
        }

        fn live_grants(&self) -> usize {
            self.$($ledger).+.len()
        }

        fn is_available(&self, node: partalloc_topology::NodeId) -> bool {
            self.$($occ).+.is_available(node)
        }

        fn busy_nodes(&self) -> partalloc_topology::NodeSet {
            self.$($occ).+.busy().clone()
        }

        fn faulty_nodes(&self) -> partalloc_topology::NodeSet {
            self.$($occ).+.faulty().clone()
        }
    };
}
pub(crate) use occupancy_methods;
