//! The (2^{n+1} − 1)-bit tree array of Al-Dhelaan & Bose §IV, shared by
//! the partner strategies.
//!
//! Array position 1 is the root; the sons of position v are 2v and 2v+1;
//! level i holds positions 2^i … 2^{i+1} − 1, and position 2^i + α is the
//! subcube whose n − i low address bits are free and whose high i bits are
//! α. A bit is 0 when its whole subcube is available and 1 otherwise.
//! Marking a subcube busy sets its subtree and walks up the fathers until
//! the root or a node already 1 (§IV, Allocation 3); releasing clears the
//! subtree and walks up while the father changes (§IV, Deallocation 2).

use partalloc_topology::{Hypercube, NodeId, NodeSet, Subcube};

use super::common::{for_ranges, low, sub};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tree {
    n: u32,
    bits: NodeSet,
}

impl Tree {
    pub(crate) fn new(n: u32) -> Self {
        Self {
            n,
            bits: NodeSet::new(2usize << n),
        }
    }

    /// Whether tree node α of level `level` is not entirely available.
    #[inline]
    pub(crate) fn busy(&self, level: u32, alpha: u32) -> bool {
        self.bits.contains((1u32 << level) + alpha)
    }

    fn mark_node(&mut self, level: u32, alpha: u32) {
        for d in 0..=self.n - level {
            let base = 1usize << (level + d);
            let lo = base + ((alpha as usize) << d);
            let _ = self.bits.insert_range(lo, lo + (1usize << d));
        }
        let mut v = ((1usize << level) + alpha as usize) >> 1;
        // Walks up while the father was entirely available.
        while v >= 1 && self.bits.insert(v as NodeId) == Ok(true) {
            v >>= 1;
        }
    }

    fn unmark_node(&mut self, level: u32, alpha: u32) {
        for d in 0..=self.n - level {
            let base = 1usize << (level + d);
            let lo = base + ((alpha as usize) << d);
            let _ = self.bits.remove_range(lo, lo + (1usize << d));
        }
        let mut v = ((1usize << level) + alpha as usize) >> 1;
        while v >= 1 {
            let now =
                self.bits.contains(2 * v as NodeId) || self.bits.contains(2 * v as NodeId + 1);
            if now == self.bits.contains(v as NodeId) {
                break;
            }
            let _ = if now {
                self.bits.insert(v as NodeId)
            } else {
                self.bits.remove(v as NodeId)
            };
            v >>= 1;
        }
    }

    /// Marks every node of `s` busy.
    pub(crate) fn mark(&mut self, s: &Subcube) {
        let n = self.n;
        for_ranges(s, |lo, hi| {
            let r = (hi - lo).trailing_zeros();
            self.mark_node(n - r, (lo >> r) as u32);
            true
        });
    }

    /// Marks every node of `s` available (none of them may be faulty).
    pub(crate) fn unmark(&mut self, s: &Subcube) {
        let n = self.n;
        for_ranges(s, |lo, hi| {
            let r = (hi - lo).trailing_zeros();
            self.unmark_node(n - r, (lo >> r) as u32);
            true
        });
    }

    /// Sets a single processor's bit (faults and repairs).
    pub(crate) fn set_leaf(&mut self, node: NodeId, busy: bool) {
        if busy {
            self.mark_node(self.n, node);
        } else {
            self.unmark_node(self.n, node);
        }
    }

    /// Algorithm 3, step 2, for k ≥ 1: the least α at level n − k + 1 that
    /// is free and has a free p-th partner, with p as small as possible.
    pub(crate) fn partner_search(&self, cube: &Hypercube, k: u32) -> Option<Subcube> {
        let level = self.n - k + 1;
        let count = 1u32 << level;
        let base = 1usize << level;
        let words = self.bits.words();
        let mut a = 0u32;
        while a < count {
            let idx = base + a as usize;
            if idx.is_multiple_of(64) && a + 64 <= count && words.get(idx / 64) == Some(&u64::MAX) {
                a += 64;
                continue;
            }
            if !self.busy(level, a) {
                for p in 0..level {
                    if a >> p & 1 == 0 && !self.busy(level, a | 1 << p) {
                        return Some(partner_cube(cube, k, a, p));
                    }
                }
            }
            a += 1;
        }
        None
    }
}

/// The Q_k formed by tree node α of level n − k + 1 and its p-th partner.
#[inline]
pub(crate) fn partner_cube(cube: &Hypercube, k: u32, alpha: u32, p: u32) -> Subcube {
    sub(cube, low(k - 1) | 1 << (k - 1 + p), alpha << (k - 1))
}

/// Every cube Algorithm 3 considers for a Q_k, k ≥ 1, in its search order.
pub(crate) fn partner_cubes(cube: &Hypercube, k: u32) -> impl Iterator<Item = Subcube> + '_ {
    let level = cube.dim() - k + 1;
    (0..1u32 << level).flat_map(move |a| {
        (0..level)
            .filter(move |p| a >> p & 1 == 0)
            .map(move |p| partner_cube(cube, k, a, p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree invariant: a bit is 0 iff every leaf below it is 0.
    fn consistent(t: &Tree) -> bool {
        (1u32..(1 << t.n))
            .rev()
            .all(|v| t.bits.contains(v) == (t.bits.contains(2 * v) || t.bits.contains(2 * v + 1)))
    }

    #[test]
    fn marks_and_unmarks_keep_the_invariant() {
        let cube = Hypercube::new(5).unwrap();
        let mut t = Tree::new(5);
        let a: Subcube = "X01X0".parse().unwrap();
        let b: Subcube = "1X1XX".parse().unwrap();
        t.mark(&a);
        assert!(consistent(&t));
        t.mark(&b);
        t.set_leaf(0, true);
        assert!(consistent(&t));
        t.unmark(&a);
        assert!(consistent(&t));
        t.unmark(&b);
        t.set_leaf(0, false);
        assert!(consistent(&t));
        assert!(!t.busy(0, 0));
        assert_eq!(t.partner_search(&cube, 5), Some(cube.whole()));
    }
}
