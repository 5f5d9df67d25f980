//! Per-node state (busy, faulty) shared by the bitmap-based strategies,
//! built on [`NodeSet`].

use partalloc_topology::{GridBox, NodeId, NodeSet};

use crate::FaultError;

/// Which nodes are busy (in a live grant) and which are faulty: the one
/// per-node state of every bitmap-based strategy.
///
/// Stored as two [`NodeSet`]s: `blocked` (busy ∪ faulty, what a search
/// tests, one bit per node) and `faulty` (a subset of `blocked`), with O(1)
/// counts of free and faulty nodes. The busy nodes are `blocked ∖ faulty`.
/// Strategies keep their own search structures beside it; this is the flat
/// truth they update, and what
/// [`Allocator::busy_nodes`](crate::Allocator) reports.
///
/// ```
/// use partalloc_allocators::Occupancy;
/// let mut occ = Occupancy::new(8);
/// assert!(occ.mark_faulty(3)?);
/// occ.occupy(0..2);
/// assert_eq!(occ.free_count(), 5);
/// assert!(!occ.is_available(3) && !occ.is_available(1) && occ.is_available(2));
/// assert_eq!(occ.busy().iter().collect::<Vec<_>>(), vec![0, 1]);
/// assert!(!occ.range_available(2, 5) && occ.range_available(4, 8));
/// # Ok::<(), partalloc_allocators::FaultError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occupancy {
    blocked: NodeSet,
    faulty: NodeSet,
    free: usize,
    faults: usize,
}

impl Occupancy {
    /// `nodes` nodes, all free and healthy.
    #[must_use]
    pub fn new(nodes: usize) -> Self {
        Self {
            blocked: NodeSet::new(nodes),
            faulty: NodeSet::new(nodes),
            free: nodes,
            faults: 0,
        }
    }

    /// Number of nodes.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.blocked.universe()
    }

    /// Whether the machine has no node.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Nodes neither busy nor faulty. O(1).
    #[must_use]
    #[inline]
    pub fn free_count(&self) -> usize {
        self.free
    }

    /// Faulty nodes. O(1).
    #[must_use]
    #[inline]
    pub fn faulty_count(&self) -> usize {
        self.faults
    }

    /// Whether `node` is neither busy nor faulty (false outside the machine).
    #[must_use]
    #[inline]
    pub fn is_available(&self, node: NodeId) -> bool {
        (node as usize) < self.len() && !self.blocked.contains(node)
    }

    /// Whether every node of the id range `lo..hi` is available (ids past
    /// the machine count as available: callers pass ranges inside it).
    /// A word at a time.
    #[must_use]
    #[inline]
    pub fn range_available(&self, lo: usize, hi: usize) -> bool {
        self.blocked.is_empty_in(lo, hi)
    }

    /// The nodes that are busy or faulty: the view a search scans.
    #[must_use]
    #[inline]
    pub fn blocked(&self) -> &NodeSet {
        &self.blocked
    }

    /// The busy nodes (`blocked ∖ faulty`), computed word by word.
    #[must_use]
    pub fn busy(&self) -> NodeSet {
        let mut busy = self.blocked.clone();
        if self.faults > 0 {
            busy.difference_with(&self.faulty);
        }
        busy
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
            self.occupy_node(n);
        }
    }

    /// Marks busy nodes free again; nodes that were not busy are skipped.
    pub fn vacate(&mut self, nodes: impl IntoIterator<Item = NodeId>) {
        for n in nodes {
            self.vacate_node(n);
        }
    }

    /// Marks one available node busy; returns whether it was available
    /// (a node outside the machine or unavailable changes nothing).
    #[inline]
    pub fn occupy_node(&mut self, node: NodeId) -> bool {
        let changed = self.blocked.insert(node) == Ok(true);
        self.free -= usize::from(changed);
        changed
    }

    /// Marks one busy node free; returns whether it was busy (a free,
    /// faulty or outside node changes nothing).
    #[inline]
    pub fn vacate_node(&mut self, node: NodeId) -> bool {
        let changed = !self.faulty.contains(node) && self.blocked.remove(node) == Ok(true);
        self.free += usize::from(changed);
        changed
    }

    /// Marks the available nodes `64·word + b`, for the set bits `b` of
    /// `mask`, busy (a caller passes bits it found free in
    /// [`blocked`](Self::blocked)'s word); bits leaving the machine change
    /// nothing.
    #[inline]
    pub fn occupy_word_bits(&mut self, word: usize, mask: u64) {
        if let Ok(added) = self.blocked.insert_word_bits(word, mask) {
            self.free -= added;
        }
    }

    /// Marks the busy nodes `64·word + b`, for the set bits `b` of `mask`,
    /// free; faulty nodes stay faulty, and bits leaving the machine change
    /// nothing.
    #[inline]
    pub fn vacate_word_bits(&mut self, word: usize, mask: u64) {
        let healthy = mask & !self.faulty.words().get(word).copied().unwrap_or(0);
        if let Ok(removed) = self.blocked.remove_word_bits(word, healthy) {
            self.free += removed;
        }
    }

    /// Marks the available nodes of the id range `lo..hi` busy (a caller
    /// passes a range it found available, e.g. a free buddy block); a range
    /// leaving the machine changes nothing.
    #[inline]
    pub fn occupy_range(&mut self, lo: usize, hi: usize) {
        if let Ok(added) = self.blocked.insert_range(lo, hi) {
            self.free -= added;
        }
    }

    /// Marks the busy nodes of the id range `lo..hi` free; faulty nodes
    /// stay faulty, and a range leaving the machine changes nothing.
    #[inline]
    pub fn vacate_range(&mut self, lo: usize, hi: usize) {
        if lo > hi || hi > self.len() {
            return;
        }
        if self.faults == 0 || self.faulty.is_empty_in(lo, hi) {
            if let Ok(removed) = self.blocked.remove_range(lo, hi) {
                self.free += removed;
            }
        } else {
            // Rare: a range around faulty nodes, node by node.
            self.vacate((lo..hi).map(|i| i as NodeId));
        }
    }

    /// Marks busy (`busy`) or frees the nodes of `g`, a box of a mesh of
    /// `sides` whose ids run x fastest, then y, then z: one id range per
    /// x-row. Flat meshes have z = 0 only.
    #[inline]
    pub(crate) fn set_box(&mut self, sides: [u32; 3], g: &GridBox, busy: bool) {
        let [sx, sy, _] = sides.map(|s| s as usize);
        let w = g.extent(0) as usize;
        for z in g.lo(2)..=g.hi(2) {
            for y in g.lo(1)..=g.hi(1) {
                let lo = g.lo(0) as usize + sx * (y as usize + sy * z as usize);
                if busy {
                    self.occupy_range(lo, lo + w);
                } else {
                    self.vacate_range(lo, lo + w);
                }
            }
        }
    }

    /// Marks a free node faulty; returns whether it was healthy before
    /// (marking a faulty node again changes nothing).
    ///
    /// # Errors
    /// [`FaultError::Topology`] outside the machine, [`FaultError::Busy`] if
    /// it is in a live grant; the state is then unchanged.
    pub fn mark_faulty(&mut self, node: NodeId) -> Result<bool, FaultError> {
        if self.faulty.contains(node) {
            return Ok(false);
        }
        if self.blocked.contains(node) {
            return Err(FaultError::Busy { node });
        }
        self.faulty.insert(node)?;
        let _ = self.blocked.insert(node);
        self.free -= 1;
        self.faults += 1;
        Ok(true)
    }

    /// Returns a faulty node to service; returns whether it was faulty
    /// (repairing a healthy node changes nothing).
    ///
    /// # Errors
    /// [`FaultError::Topology`] outside the machine.
    pub fn repair(&mut self, node: NodeId) -> Result<bool, FaultError> {
        if !self.faulty.remove(node)? {
            return Ok(false);
        }
        let _ = self.blocked.remove(node);
        self.free += 1;
        self.faults -= 1;
        Ok(true)
    }
}

/// Implements the `Allocator` methods that only read an [`Occupancy`] and a
/// [`GrantLedger`](crate::GrantLedger): `free_nodes`, `live_grants`,
/// `is_available`, `busy_nodes` and `faulty_nodes`. Give the field paths
/// below `self`, e.g. `occupancy_methods!(core.occ, core.ledger)`. With a
/// trailing `faults` it also implements `mark_faulty` and `repair` as the
/// occupancy's own, for the strategies that keep no other state per node;
/// `topology: path` adds `topology` (both may be given, `faults` last).
macro_rules! occupancy_methods {
    ($($occ:ident).+, $($ledger:ident).+, faults) => {
        $crate::occupancy::occupancy_methods!($($occ).+, $($ledger).+);

        fn mark_faulty(
            &mut self,
            node: partalloc_topology::NodeId,
        ) -> Result<(), $crate::FaultError> {
            self.$($occ).+.mark_faulty(node).map(drop)
        }

        fn repair(&mut self, node: partalloc_topology::NodeId) -> Result<(), $crate::FaultError> {
            self.$($occ).+.repair(node).map(drop)
        }
    };
    ($($occ:ident).+, $($ledger:ident).+, topology: $($topo:ident).+, faults) => {
        $crate::occupancy::occupancy_methods!($($occ).+, $($ledger).+, faults);

        fn topology(&self) -> &partalloc_topology::Topology {
            &self.$($topo).+
        }
    };
    ($($occ:ident).+, $($ledger:ident).+, topology: $($topo:ident).+) => {
        fn topology(&self) -> &partalloc_topology::Topology {
            &self.$($topo).+
        }

        $crate::occupancy::occupancy_methods!($($occ).+, $($ledger).+);
    };
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
            self.$($occ).+.busy()
        }

        fn faulty_nodes(&self) -> partalloc_topology::NodeSet {
            self.$($occ).+.faulty().clone()
        }
    };
}
pub(crate) use occupancy_methods;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[derive(Debug, Clone)]
    enum Op {
        OccupyRange(usize, usize),
        VacateRange(usize, usize),
        Occupy(NodeId),
        Vacate(NodeId),
        Fault(NodeId),
        Repair(NodeId),
        OccupyWord(usize, u64),
        VacateWord(usize, u64),
    }

    /// The ids a word operation names, if all lie inside the machine.
    fn word_ids(len: usize, word: usize, mask: u64) -> Option<Vec<NodeId>> {
        let ids: Vec<usize> = (0..64)
            .filter(|b| mask >> b & 1 == 1)
            .map(|b| word * 64 + b)
            .collect();
        ids.iter()
            .all(|&i| i < len)
            .then(|| ids.into_iter().map(|i| i as NodeId).collect())
    }

    fn op(len: usize) -> impl Strategy<Value = Op> {
        let node = 0..len as NodeId + 2;
        let range = (0..len + 2, 0..len + 2).prop_map(|(a, b)| (a.min(b), a.max(b)));
        prop_oneof![
            range.clone().prop_map(|(a, b)| Op::OccupyRange(a, b)),
            range.prop_map(|(a, b)| Op::VacateRange(a, b)),
            node.clone().prop_map(Op::Occupy),
            node.clone().prop_map(Op::Vacate),
            node.clone().prop_map(Op::Fault),
            node.prop_map(Op::Repair),
            (0..len / 64 + 2, any::<u64>()).prop_map(|(w, m)| Op::OccupyWord(w, m)),
            (0..len / 64 + 2, any::<u64>()).prop_map(|(w, m)| Op::VacateWord(w, m)),
        ]
    }

    proptest! {
        /// Every operation agrees with a model of two sets (busy, faulty):
        /// ranges and single nodes touch only available (resp. busy) nodes,
        /// faults refuse busy nodes, and the counts follow.
        #[test]
        fn agrees_with_busy_and_faulty_sets(
            (len, ops) in (1usize..150)
                .prop_flat_map(|len| (Just(len), proptest::collection::vec(op(len), 1..60)))
        ) {
            let mut occ = Occupancy::new(len);
            let (mut busy, mut faulty) = (BTreeSet::new(), BTreeSet::new());
            for op in ops {
                match op {
                    Op::OccupyRange(lo, hi) => {
                        occ.occupy_range(lo, hi);
                        if hi <= len {
                            busy.extend((lo..hi).map(|i| i as NodeId).filter(|i| !faulty.contains(i)));
                        }
                    }
                    Op::VacateRange(lo, hi) => {
                        occ.vacate_range(lo, hi);
                        if hi <= len {
                            busy.retain(|&i| !(lo..hi).contains(&(i as usize)));
                        }
                    }
                    Op::Occupy(n) => {
                        let was_free = (n as usize) < len && !faulty.contains(&n) && !busy.contains(&n);
                        prop_assert_eq!(occ.occupy_node(n), was_free);
                        if was_free {
                            busy.insert(n);
                        }
                    }
                    Op::Vacate(n) => {
                        prop_assert_eq!(occ.vacate_node(n), busy.remove(&n));
                    }
                    Op::OccupyWord(w, m) => {
                        occ.occupy_word_bits(w, m);
                        if let Some(ids) = word_ids(len, w, m) {
                            busy.extend(ids.into_iter().filter(|i| !faulty.contains(i)));
                        }
                    }
                    Op::VacateWord(w, m) => {
                        occ.vacate_word_bits(w, m);
                        if let Some(ids) = word_ids(len, w, m) {
                            busy.retain(|i| !ids.contains(i));
                        }
                    }
                    Op::Fault(n) => {
                        let got = occ.mark_faulty(n);
                        if n as usize >= len {
                            prop_assert!(matches!(got, Err(FaultError::Topology(_))));
                        } else if busy.contains(&n) {
                            prop_assert_eq!(got, Err(FaultError::Busy { node: n }));
                        } else {
                            prop_assert_eq!(got, Ok(faulty.insert(n)));
                        }
                    }
                    Op::Repair(n) => {
                        let got = occ.repair(n);
                        if n as usize >= len {
                            prop_assert!(got.is_err());
                        } else {
                            prop_assert_eq!(got, Ok(faulty.remove(&n)));
                        }
                    }
                }
                prop_assert!(occ.busy().iter().eq(busy.iter().copied()));
                prop_assert!(occ.faulty().iter().eq(faulty.iter().copied()));
                prop_assert_eq!(occ.free_count(), len - busy.len() - faulty.len());
                prop_assert_eq!(occ.faulty_count(), faulty.len());
                for n in 0..len as NodeId + 1 {
                    let free = (n as usize) < len && !busy.contains(&n) && !faulty.contains(&n);
                    prop_assert_eq!(occ.is_available(n), free);
                }
            }
        }
    }
}
