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
//! Each list is a bitset of block indices with a 64-ary summary tree, so
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

use partalloc_topology::{Hypercube, NodeId, NodeSet, Subcube, Topology, TopologyKind};

use super::common::{Bits, cube_of, low, requested_dim, sub, to_nodeset};
use crate::registry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{
    AllocError, Allocator, BuildError, FaultError, Grant, GrantLedger, Partition, ReleaseError,
    Request,
};

const NAME: &str = "buddy-free-list";

/// A set of block indices with O(log_64) insert, remove and minimum: a
/// bitset plus summary layers (bit w of layer i+1 says word w of layer i is
/// non-zero), all in one array so a walk touches one allocation.
#[derive(Debug, Clone)]
struct Summary {
    words: Vec<u64>,
    /// Start of each layer in `words`, bottom (the bitset) first.
    starts: Vec<usize>,
    count: usize,
}

impl Summary {
    fn new(len: usize) -> Self {
        let mut starts = vec![0];
        let mut size = len.div_ceil(64).max(1);
        let mut total = size;
        while size > 1 {
            starts.push(total);
            size = size.div_ceil(64);
            total += size;
        }
        Self {
            words: vec![0; total],
            starts,
            count: 0,
        }
    }

    #[inline]
    fn contains(&self, i: usize) -> bool {
        let end = self.starts.get(1).copied().unwrap_or(self.words.len());
        i / 64 < end
            && self
                .words
                .get(i / 64)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    #[inline]
    fn insert(&mut self, i: usize) {
        let mut i = i;
        for &start in &self.starts {
            let Some(w) = self.words.get_mut(start + i / 64) else {
                return;
            };
            let was_empty = *w == 0;
            *w |= 1 << (i % 64);
            if !was_empty {
                break;
            }
            i /= 64;
        }
        self.count += 1;
    }

    #[inline]
    fn remove(&mut self, i: usize) {
        let mut i = i;
        for &start in &self.starts {
            let Some(w) = self.words.get_mut(start + i / 64) else {
                return;
            };
            *w &= !(1 << (i % 64));
            if *w != 0 {
                break;
            }
            i /= 64;
        }
        self.count -= 1;
    }

    #[inline]
    fn first(&self) -> Option<usize> {
        let mut i = 0usize;
        for &start in self.starts.iter().rev() {
            let w = *self.words.get(start + i)?;
            if w == 0 {
                return None;
            }
            i = i * 64 + w.trailing_zeros() as usize;
        }
        Some(i)
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let end = self.starts.get(1).copied().unwrap_or(self.words.len());
        self.words[..end].iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            core::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros() as usize;
                    w &= w - 1;
                    wi * 64 + b
                })
            })
        })
    }
}

/// Buddy allocation with Knuth's free lists (Mohapatra et al. §3.2).
#[derive(Debug, Clone)]
pub struct BuddyFreeList {
    cube: Hypercube,
    topology: Topology,
    /// `lists[i]`: indices of the free aligned Q_i blocks (F_i).
    lists: Vec<Summary>,
    free: usize,
    faulty: Bits,
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
        let mut lists: Vec<Summary> = (0..=n).map(|i| Summary::new(1usize << (n - i))).collect();
        if let Some(top) = lists.last_mut() {
            top.insert(0);
        }
        Ok(Self {
            cube,
            topology: Topology::Hypercube(cube),
            lists,
            free: cube.num_nodes(),
            faulty: Bits::new(cube.num_nodes()),
            ledger: GrantLedger::new(),
        })
    }

    /// The number of blocks on F_0, …, F_n.
    #[must_use]
    pub fn free_list_sizes(&self) -> Vec<usize> {
        self.lists.iter().map(|l| l.count).collect()
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
        while i < n && self.lists[i as usize].contains((a ^ 1) as usize) {
            self.lists[i as usize].remove((a ^ 1) as usize);
            a >>= 1;
            i += 1;
        }
        self.lists[i as usize].insert(a as usize);
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
        // The counts sit in one array, so empty lists cost no memory access
        // beyond it.
        let head = |i: u32| {
            let list = &self.lists[i as usize];
            if list.count == 0 {
                None
            } else {
                list.first().map(|a| (i, a as u32))
            }
        };
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
        self.lists[i as usize].remove(a as usize);
        while i > k {
            i -= 1;
            a <<= 1;
            self.lists[i as usize].insert((a | 1) as usize);
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
        let len = self.cube.num_nodes();
        let mut busy = Bits::new(len);
        busy.set_range(0, len);
        for (i, list) in self.lists.iter().enumerate() {
            for a in list.iter() {
                busy.clear_range(a << i, (a + 1) << i);
            }
        }
        for (wi, &f) in self.faulty.words().iter().enumerate() {
            let mut f = f;
            while f != 0 {
                let b = f.trailing_zeros() as usize;
                f &= f - 1;
                busy.set(wi * 64 + b, false);
            }
        }
        to_nodeset(&busy, len)
    }

    fn faulty_nodes(&self) -> NodeSet {
        to_nodeset(&self.faulty, self.cube.num_nodes())
    }

    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.cube.check_node(node)?;
        if self.faulty.get(node as usize) {
            return Ok(());
        }
        let (i, a) = self.holder(node).ok_or(FaultError::Busy { node })?;
        self.lists[i as usize].remove(a as usize);
        for j in (0..i).rev() {
            // The half of the level-j split that does not hold the node.
            self.lists[j as usize].insert(((node >> j) ^ 1) as usize);
        }
        self.faulty.set(node as usize, true);
        self.free -= 1;
        Ok(())
    }

    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.cube.check_node(node)?;
        if self.faulty.get(node as usize) {
            self.faulty.set(node as usize, false);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_minimum_and_membership() {
        for len in [1usize, 2, 63, 64, 65, 4096, 5000] {
            let mut s = Summary::new(len);
            assert_eq!(s.first(), None);
            let picks: Vec<usize> = (0..len).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
            for &p in picks.iter().rev() {
                s.insert(p);
            }
            assert_eq!(s.count, picks.len());
            for &p in &picks {
                assert_eq!(s.first(), Some(p));
                assert!(s.contains(p));
                s.remove(p);
                assert!(!s.contains(p));
            }
            assert_eq!(s.first(), None);
        }
    }
}
