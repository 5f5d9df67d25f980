//! The buddy system with free lists (Mohapatra, Yu, Das & Kim §3.2, after
//! Knuth, *TAOCP* vol. 1, §2.5): O(n) allocation and release.
//!
//! One list F_i of free aligned blocks per size i = 0 … n; initially only
//! F_n holds the whole machine.
//! - **Buddy_Request(I_k)**: take a block from F_k; if F_k is empty, search
//!   F_{k+1}, …, F_n in that order, take the first block found and split it
//!   by the buddy rule down to size k, putting each unused upper half on its
//!   list.
//! - **Buddy_Release(I_k)**: put the block on F_k; while F_k holds its
//!   buddy, remove the buddy, merge the two and move up one size.
//!
//! The paper does not say *which* block of a list is taken; following the
//! workspace rule the lowest address is, so the choice is deterministic.
//! Each list is a [`FreeSet`] of block indices (a bitset with a 64-ary
//! summary tree), so
//! "lowest block on F_i" is a handful of word scans. The hot path touches
//! no per-node state: the lists and an O(1) free count are the whole truth;
//! [`is_available`](crate::Allocator::is_available) and
//! [`busy_nodes`](crate::Allocator::busy_nodes) are computed from them.
//!
//! It recognises the same 2^{n−k} aligned blocks as [`Buddy`](super::Buddy)
//! and succeeds exactly when the bitmap buddy would, but may pick a
//! different block (a block of the smallest sufficient size, not the least
//! address overall).
//!
//! **Q_0**: the lowest available node, as for every hypercube strategy: of
//! the first block on each list the one with the lowest address, split
//! down to its first node (O(n) list heads). This is added to Knuth's rule,
//! which would take F_0's first block even when a lower node sits in a
//! larger free block; requests of size k ≥ 1 follow the rule unchanged.
//!
//! **Faults** (Al-Dhelaan & Bose, Example 15): the free block holding the
//! node is split so that every node except the faulty one stays on a list;
//! a repair releases the node as a Q_0, merging as a release does.
//!
//! ```
//! use partalloc_allocators::hypercube::BuddyFreeList;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::Hypercube;
//!
//! let mut b = BuddyFreeList::new(Hypercube::new(4)?)?;
//! let g0 = b.allocate(&Request::subcube(0))?;
//! let g3 = b.allocate(&Request::subcube(3))?;
//! assert_eq!(g0.partition().to_string(), "0000");
//! assert_eq!(g3.partition().to_string(), "1XXX");
//! b.release(&g0)?;
//! assert_eq!(b.free_list_sizes(), vec![0, 0, 0, 1, 0]); // 0XXX merged back
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{FreeSet, Hypercube, NodeId, NodeSet, Subcube, Topology, TopologyKind};

use super::common::{cube_of, low, requested_dim, sub};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{
    AllocError, Allocator, BuildError, FaultError, Grant, GrantLedger, Partition, ReleaseError,
    Request,
};

const NAME: &str = "buddy-free-list";

/// Buddy allocation with Knuth's free lists (Mohapatra et al. §3.2).
#[derive(Debug, Clone)]
pub struct BuddyFreeList {
    cube: Hypercube,
    topology: Topology,
    /// `lists[i]`: indices of the free aligned Q_i blocks (F_i).
    lists: Vec<FreeSet>,
    free: usize,
    faulty: NodeSet,
    ledger: GrantLedger<(u32, u32)>,
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "buddy system with one free list per size (Knuth), O(n) per operation",
        source: "Mohapatra, Yu, Das & Kim, §3.2 (Buddy_Request / Buddy_Release)",
        params: &[],
        topologies: &[TopologyKind::Hypercube],
    },
    build: |t, _| Ok(Box::new(BuddyFreeList::new(cube_of(NAME, t)?)?)),
};

impl BuddyFreeList {
    /// A free-list buddy allocator for `cube`: F_n holds the whole machine.
    ///
    /// # Errors
    /// None today: it returns a `Result` like every strategy constructor
    /// (see the crate docs).
    pub fn new(cube: Hypercube) -> Result<Self, BuildError> {
        let n = cube.dim();
        let mut lists: Vec<FreeSet> = (0..=n).map(|i| FreeSet::new(1usize << (n - i))).collect();
        if let Some(top) = lists.last_mut() {
            let _ = top.insert(0);
        }
        Ok(Self {
            cube,
            topology: Topology::Hypercube(cube),
            lists,
            free: cube.num_nodes(),
            faulty: NodeSet::new(cube.num_nodes()),
            ledger: GrantLedger::new(),
        })
    }

    /// The number of blocks on F_0, …, F_n.
    #[must_use]
    pub fn free_list_sizes(&self) -> Vec<usize> {
        self.lists.iter().map(FreeSet::count).collect()
    }

    /// The free blocks, smallest size first, then by address.
    #[must_use]
    pub fn free_blocks(&self) -> Vec<Subcube> {
        (0..=self.cube.dim())
            .flat_map(|i| {
                self.lists[i as usize]
                    .iter()
                    .map(move |a| sub(&self.cube, low(i), (a as u32) << i))
            })
            .collect()
    }

    /// Puts block (`i`, `a`) on its list, merging with free buddies.
    fn put(&mut self, mut i: u32, mut a: u32) {
        let n = self.cube.dim();
        // Taking the buddy off F_i is the test that it was free.
        while i < n && matches!(self.lists[i as usize].remove((a ^ 1) as usize), Ok(true)) {
            a >>= 1;
            i += 1;
        }
        let _ = self.lists[i as usize].insert(a as usize);
    }

    /// The free block holding `node`, as (size, index).
    fn holder(&self, node: NodeId) -> Option<(u32, u32)> {
        (0..=self.cube.dim()).find_map(|i| {
            let a = node >> i;
            self.lists[i as usize]
                .contains(a as usize)
                .then_some((i, a))
        })
    }
}

impl Allocator for BuddyFreeList {
    fn name(&self) -> String {
        NAME.to_owned()
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        // An empty list answers from its count, without a word read.
        let head = |i: u32| self.lists[i as usize].first().map(|a| (i, a as u32));
        let found = if k == 0 {
            // Free blocks are disjoint, so the lowest available node is the
            // lowest first node of a list head.
            (0..=self.cube.dim())
                .filter_map(head)
                .min_by_key(|&(i, a)| a << i)
        } else {
            (k..=self.cube.dim()).find_map(head)
        };
        let Some((mut i, mut a)) = found else {
            return Err(AllocError::NoRoom {
                request: *request,
                free: self.free,
                total: self.cube.num_nodes(),
            });
        };
        let _ = self.lists[i as usize].remove(a as usize);
        while i > k {
            i -= 1;
            a <<= 1;
            let _ = self.lists[i as usize].insert((a | 1) as usize);
        }
        self.free -= 1usize << k;
        let id = self.ledger.issue((k, a));
        let s = sub(&self.cube, low(k), a << k);
        Ok(Grant::new(id, Partition::Subcube(s), request.node_count()))
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let (k, a) = self.ledger.take(grant.id())?;
        self.free += 1usize << k;
        self.put(k, a);
        Ok(())
    }

    fn free_nodes(&self) -> usize {
        self.free
    }

    fn live_grants(&self) -> usize {
        self.ledger.len()
    }

    fn is_available(&self, node: NodeId) -> bool {
        (node as usize) < self.cube.num_nodes() && self.holder(node).is_some()
    }

    fn busy_nodes(&self) -> NodeSet {
        let mut busy = NodeSet::full(self.cube.num_nodes());
        for (i, list) in self.lists.iter().enumerate() {
            for a in list.iter() {
                let _ = busy.remove_range(a << i, (a + 1) << i);
            }
        }
        busy.difference_with(&self.faulty);
        busy
    }

    fn faulty_nodes(&self) -> NodeSet {
        self.faulty.clone()
    }

    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.cube.check_node(node)?;
        if self.faulty.contains(node) {
            return Ok(());
        }
        let (i, a) = self.holder(node).ok_or(FaultError::Busy { node })?;
        let _ = self.lists[i as usize].remove(a as usize);
        for j in (0..i).rev() {
            // The half of the level-j split that does not hold the node.
            let _ = self.lists[j as usize].insert(((node >> j) ^ 1) as usize);
        }
        self.faulty.insert(node)?;
        self.free -= 1;
        Ok(())
    }

    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.cube.check_node(node)?;
        if self.faulty.remove(node)? {
            self.free += 1;
            self.put(0, node);
        }
        Ok(())
    }

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        Ok((0..1u32 << (self.cube.dim() - k))
            .map(|a| Partition::Subcube(sub(&self.cube, low(k), a << k)))
            .collect())
    }
}
