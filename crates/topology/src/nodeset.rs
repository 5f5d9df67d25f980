//! A flat bitset of node ids, the occupancy representation shared by the
//! allocators.

use core::fmt;

use crate::{NodeId, TopologyError};

/// A set of node ids `0..len`, stored as one bit per node.
///
/// ```
/// use partalloc_topology::NodeSet;
/// let mut busy = NodeSet::new(16);
/// busy.insert_range(4, 8)?;
/// assert!(busy.contains(5));
/// assert_eq!(busy.count(), 4);
/// assert_eq!(busy.iter().collect::<Vec<_>>(), vec![4, 5, 6, 7]);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "NodeSetRepr", try_from = "NodeSetRepr")
)]
pub struct NodeSet {
    words: Vec<u64>,
    len: usize,
}

/// The serialized form of a [`NodeSet`]; deserializing checks that the
/// words match the universe and that no bit lies past it.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct NodeSetRepr {
    words: Vec<u64>,
    len: usize,
}

#[cfg(feature = "serde")]
impl From<NodeSet> for NodeSetRepr {
    fn from(s: NodeSet) -> Self {
        Self {
            words: s.words,
            len: s.len,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<NodeSetRepr> for NodeSet {
    type Error = TopologyError;
    fn try_from(r: NodeSetRepr) -> Result<Self, TopologyError> {
        if r.len as u64 > crate::MAX_NODES {
            return Err(TopologyError::TooManyNodes {
                nodes: r.len as u128,
                max: crate::MAX_NODES,
            });
        }
        // The first member at or past the universe, if any.
        let stray = r.words.iter().enumerate().find_map(|(wi, &w)| {
            let keep = r.len.saturating_sub(wi * 64);
            let outside = if keep >= 64 { 0 } else { w >> keep << keep };
            (outside != 0).then(|| wi as u64 * 64 + u64::from(outside.trailing_zeros()))
        });
        if let Some(node) = stray {
            return Err(TopologyError::NodeOutOfRange {
                node,
                nodes: r.len as u64,
            });
        }
        let mut words = r.words;
        words.resize(r.len.div_ceil(64), 0);
        Ok(NodeSet { words, len: r.len })
    }
}

impl NodeSet {
    /// An empty set over the node ids `0..len`.
    #[must_use]
    pub fn new(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// The set holding every id `0..len`.
    #[must_use]
    pub fn full(len: usize) -> Self {
        let mut s = Self {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
        };
        s.trim();
        s
    }

    /// Clears the bits past `len` in the last word, so that counts and
    /// comparisons only see real nodes.
    fn trim(&mut self) {
        let rem = self.len % 64;
        if rem != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1u64 << rem) - 1;
        }
    }

    /// The size of the id universe (`0..len`), not the number of members.
    #[must_use]
    pub fn universe(&self) -> usize {
        self.len
    }

    /// Number of ids in the set.
    #[must_use]
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no member.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Whether `id` is a member (ids outside the universe never are).
    #[must_use]
    #[inline]
    pub fn contains(&self, id: NodeId) -> bool {
        let i = id as usize;
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    fn check(&self, id: NodeId) -> Result<usize, TopologyError> {
        let i = id as usize;
        if i < self.len {
            Ok(i)
        } else {
            Err(TopologyError::NodeOutOfRange {
                node: u64::from(id),
                nodes: self.len as u64,
            })
        }
    }

    fn check_range(&self, lo: usize, hi: usize) -> Result<(), TopologyError> {
        if lo <= hi && hi <= self.len {
            Ok(())
        } else {
            Err(TopologyError::NodeOutOfRange {
                node: hi.max(lo) as u64,
                nodes: self.len as u64,
            })
        }
    }

    /// Adds `id`; returns whether it was absent before.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`] if `id` is outside the universe; the
    /// set is then unchanged.
    #[inline]
    pub fn insert(&mut self, id: NodeId) -> Result<bool, TopologyError> {
        let i = self.check(id)?;
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let was = self.words[w] & b != 0;
        self.words[w] |= b;
        Ok(!was)
    }

    /// Removes `id`; returns whether it was present.
    ///
    /// # Errors
    /// As [`NodeSet::insert`].
    #[inline]
    pub fn remove(&mut self, id: NodeId) -> Result<bool, TopologyError> {
        let i = self.check(id)?;
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let was = self.words[w] & b != 0;
        self.words[w] &= !b;
        Ok(was)
    }

    /// Applies `f(word, mask)` to every word overlapping `lo..hi`.
    fn for_range(&mut self, lo: usize, hi: usize, mut f: impl FnMut(&mut u64, u64)) {
        for (w, mask) in range_masks(lo, hi) {
            f(&mut self.words[w], mask);
        }
    }

    /// Adds every id in `lo..hi`.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`] if the range leaves the universe;
    /// the set is then unchanged.
    pub fn insert_range(&mut self, lo: usize, hi: usize) -> Result<(), TopologyError> {
        self.check_range(lo, hi)?;
        self.for_range(lo, hi, |w, m| *w |= m);
        Ok(())
    }

    /// Removes every id in `lo..hi`.
    ///
    /// # Errors
    /// As [`NodeSet::insert_range`].
    pub fn remove_range(&mut self, lo: usize, hi: usize) -> Result<(), TopologyError> {
        self.check_range(lo, hi)?;
        self.for_range(lo, hi, |w, m| *w &= !m);
        Ok(())
    }

    /// Number of members in `lo..hi`.
    ///
    /// # Errors
    /// As [`NodeSet::insert_range`].
    pub fn count_range(&self, lo: usize, hi: usize) -> Result<usize, TopologyError> {
        self.check_range(lo, hi)?;
        Ok(range_masks(lo, hi)
            .map(|(w, mask)| (self.words[w] & mask).count_ones() as usize)
            .sum())
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Whether the two sets share no member.
    #[must_use]
    pub fn is_disjoint(&self, other: &NodeSet) -> bool {
        self.words.iter().zip(&other.words).all(|(a, b)| a & b == 0)
    }

    /// Adds every member of `other` (ids outside this universe are ignored).
    pub fn union_with(&mut self, other: &NodeSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        self.trim();
    }

    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            core::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                // Universe sizes are bounded by the u32 node-id space.
                Some((wi * 64) as NodeId + b)
            })
        })
    }

    /// The raw 64-bit words (bit `i % 64` of word `i / 64` is node `i`).
    #[must_use]
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// The words overlapping `lo..hi`, each with the mask of its bits that lie
/// in the range.
fn range_masks(lo: usize, hi: usize) -> impl Iterator<Item = (usize, u64)> {
    let mut i = lo;
    core::iter::from_fn(move || {
        if i >= hi {
            return None;
        }
        let w = i / 64;
        let start = i % 64;
        let end = (hi - w * 64).min(64);
        let mask = if end - start == 64 {
            u64::MAX
        } else {
            ((1u64 << (end - start)) - 1) << start
        };
        i = w * 64 + end;
        Some((w, mask))
    })
}

impl fmt::Debug for NodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn out_of_range_is_an_error_and_changes_nothing() {
        let mut s = NodeSet::new(10);
        assert!(s.insert(10).is_err());
        assert!(s.insert_range(5, 11).is_err());
        assert!(s.is_empty());
        assert!(!s.contains(100));
    }

    #[test]
    fn full_set_counts_only_real_nodes() {
        assert_eq!(NodeSet::full(70).count(), 70);
        assert_eq!(NodeSet::full(64).count(), 64);
    }

    proptest! {
        #[test]
        fn ranges_agree_with_single_inserts(len in 1usize..300, a in 0usize..300, b in 0usize..300) {
            let (lo, hi) = (a.min(b).min(len), a.max(b).min(len));
            let mut r = NodeSet::new(len);
            r.insert_range(lo, hi).unwrap();
            let mut s = NodeSet::new(len);
            for i in lo..hi { s.insert(i as NodeId).unwrap(); }
            prop_assert_eq!(&r, &s);
            prop_assert_eq!(r.count_range(0, len).unwrap(), hi - lo);
            prop_assert_eq!(r.iter().count(), hi - lo);
            r.remove_range(lo, hi).unwrap();
            prop_assert!(r.is_empty());
        }
    }
}
