//! A set of indices with a 64-ary summary tree, for the free lists of the
//! allocators: the least member, or the least member from a given index,
//! in O(log₆₄ len) word reads.

use core::fmt;

use crate::TopologyError;

/// A set of indices `0..len` that finds its least member (or the least
/// member at or after a given index) in O(log₆₄ len) word reads.
///
/// Layer 0 is a flat bitset of the members; bit `w` of layer `i + 1` says
/// that word `w` of layer `i` is non-zero. All layers sit in one array,
/// so a walk touches one allocation. Invariants: the summary bits match
/// the words below them exactly, no bit past the universe is set, and
/// [`count`](FreeSet::count) is the number of members.
///
/// Inserting and removing are checked: they report whether the set
/// changed, so a caller can keep a count of its own without testing first.
///
/// ```
/// use partalloc_topology::FreeSet;
/// let mut blocks = FreeSet::new(10_000);
/// assert_eq!(blocks.insert(9_000)?, true);
/// assert_eq!(blocks.insert(70)?, true);
/// assert_eq!(blocks.insert(70)?, false); // already there
/// assert_eq!(blocks.first(), Some(70));
/// assert_eq!(blocks.first_at_or_after(71), Some(9_000));
/// assert_eq!(blocks.remove(70)?, true);
/// assert_eq!(blocks.first(), Some(9_000));
/// assert_eq!(blocks.count(), 1);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct FreeSet {
    words: Vec<u64>,
    /// `starts[i]..starts[i + 1]` are the words of layer `i`, for
    /// `i < layers`; layer `layers - 1` is a single word. Kept on the heap
    /// so that a set is one cache line (allocators keep one per size).
    starts: Box<[usize]>,
    layers: usize,
    len: usize,
    count: usize,
}

impl FreeSet {
    /// An empty set over the indices `0..len`.
    #[must_use]
    pub fn new(len: usize) -> Self {
        let mut starts = vec![0];
        let mut size = len.div_ceil(64).max(1);
        let mut total = 0;
        loop {
            total += size;
            starts.push(total);
            if size == 1 {
                break;
            }
            size = size.div_ceil(64);
        }
        Self {
            words: vec![0; total],
            layers: starts.len() - 1,
            starts: starts.into_boxed_slice(),
            len,
            count: 0,
        }
    }

    /// The size of the index universe (`0..len`), not the number of members.
    #[must_use]
    pub fn universe(&self) -> usize {
        self.len
    }

    /// Number of members. O(1).
    #[must_use]
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the set has no member. O(1).
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether `i` is a member (indices outside the universe never are).
    #[must_use]
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    #[cold]
    fn out_of_range(&self, i: usize) -> TopologyError {
        TopologyError::NodeOutOfRange {
            node: i as u64,
            nodes: self.len as u64,
        }
    }

    /// Adds `i`; returns whether it was absent before.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`] if `i` is outside the universe;
    /// the set is then unchanged.
    #[inline(always)]
    pub fn insert(&mut self, i: usize) -> Result<bool, TopologyError> {
        if i >= self.len {
            return Err(self.out_of_range(i));
        }
        let (w, bit) = (&mut self.words[i / 64], 1u64 << (i % 64));
        if *w & bit != 0 {
            return Ok(false);
        }
        let was_empty = *w == 0;
        *w |= bit;
        self.count += 1;
        if was_empty {
            // The word became non-empty: set its bit in the layers above,
            // up to the first word that was non-empty already.
            let mut i = i / 64;
            for &start in &self.starts[1..self.layers] {
                let w = &mut self.words[start + i / 64];
                let was_empty = *w == 0;
                *w |= 1 << (i % 64);
                if !was_empty {
                    break;
                }
                i /= 64;
            }
        }
        Ok(true)
    }

    /// Removes `i`; returns whether it was present.
    ///
    /// # Errors
    /// As [`FreeSet::insert`].
    #[inline(always)]
    pub fn remove(&mut self, i: usize) -> Result<bool, TopologyError> {
        if i >= self.len {
            return Err(self.out_of_range(i));
        }
        let (w, bit) = (&mut self.words[i / 64], 1u64 << (i % 64));
        if *w & bit == 0 {
            return Ok(false);
        }
        *w &= !bit;
        self.count -= 1;
        if *w == 0 {
            // The word became empty: clear its bit in the layers above, up
            // to the first word that stays non-empty.
            let mut i = i / 64;
            for &start in &self.starts[1..self.layers] {
                let w = &mut self.words[start + i / 64];
                *w &= !(1 << (i % 64));
                if *w != 0 {
                    break;
                }
                i /= 64;
            }
        }
        Ok(true)
    }

    /// The least member, if any: one word per layer, top down.
    #[must_use]
    #[inline(always)]
    pub fn first(&self) -> Option<usize> {
        if self.count == 0 {
            return None;
        }
        let mut i = 0usize;
        for &start in self.starts[..self.layers].iter().rev() {
            let w = self.words[start + i];
            i = i * 64 + w.trailing_zeros() as usize;
        }
        Some(i)
    }

    /// The least member `>= from`, if any: climbs the layers until a word
    /// holds a later bit, then descends along the lowest set bits.
    #[must_use]
    pub fn first_at_or_after(&self, from: usize) -> Option<usize> {
        if from >= self.len {
            return None;
        }
        let mut i = from;
        let mut layer = 0;
        loop {
            let wi = i / 64;
            let (start, end) = (self.starts[layer], self.starts[layer + 1]);
            if start + wi >= end {
                return None;
            }
            let w = self.words[start + wi] & (u64::MAX << (i % 64));
            if w != 0 {
                i = wi * 64 + w.trailing_zeros() as usize;
                break;
            }
            layer += 1;
            if layer == self.layers {
                return None;
            }
            // The next word of the layer below is bit wi + 1 of this one.
            i = wi + 1;
        }
        while layer > 0 {
            layer -= 1;
            let w = self.words[self.starts[layer] + i];
            i = i * 64 + w.trailing_zeros() as usize;
        }
        Some(i)
    }

    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words[..self.starts[1]]
            .iter()
            .enumerate()
            .flat_map(|(wi, &w)| {
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

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.count = 0;
    }
}

impl fmt::Debug for FreeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn minimum_and_membership_across_layer_counts() {
        for len in [1usize, 2, 63, 64, 65, 4096, 4097, 5000, 300_000] {
            let mut s = FreeSet::new(len);
            assert_eq!(s.first(), None);
            let picks: Vec<usize> = (0..len).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
            for &p in picks.iter().rev() {
                assert_eq!(s.insert(p), Ok(true));
            }
            assert_eq!(s.count(), picks.len());
            for &p in &picks {
                assert_eq!(s.first(), Some(p));
                assert!(s.contains(p));
                assert_eq!(s.remove(p), Ok(true));
                assert_eq!(s.remove(p), Ok(false));
                assert!(!s.contains(p));
            }
            assert_eq!(s.first(), None);
            assert!(s.is_empty());
        }
    }

    #[test]
    fn out_of_range_is_an_error_and_changes_nothing() {
        let mut s = FreeSet::new(100);
        assert!(s.insert(100).is_err());
        assert!(s.remove(1000).is_err());
        assert!(s.is_empty());
        assert!(!s.contains(100));
        assert_eq!(s.first_at_or_after(100), None);
    }

    #[test]
    fn next_member_crosses_summary_words() {
        // Three layers: members far apart force a climb to the top.
        let mut s = FreeSet::new(64 * 64 * 3);
        for i in [5, 64 * 64 + 7, 64 * 64 * 2 + 4095] {
            s.insert(i).unwrap();
        }
        assert_eq!(s.first_at_or_after(6), Some(64 * 64 + 7));
        assert_eq!(s.first_at_or_after(64 * 64 + 8), Some(64 * 64 * 2 + 4095));
        assert_eq!(
            s.first_at_or_after(64 * 64 * 2 + 4095),
            Some(64 * 64 * 2 + 4095)
        );
        assert_eq!(s.first_at_or_after(64 * 64 * 3 - 1), Some(64 * 64 * 3 - 1));
        s.remove(64 * 64 * 2 + 4095).unwrap();
        assert_eq!(s.first_at_or_after(64 * 64 + 8), None);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(usize),
        Remove(usize),
        Next(usize),
    }

    fn op(len: usize) -> impl Strategy<Value = Op> {
        // Indices slightly past the universe exercise the errors.
        let i = 0..len + 2;
        prop_oneof![
            i.clone().prop_map(Op::Insert),
            i.clone().prop_map(Op::Remove),
            i.prop_map(Op::Next),
        ]
    }

    proptest! {
        #[test]
        fn agrees_with_a_btreeset(
            (len, ops) in prop_oneof![1usize..200, 4000usize..9000, 262_000usize..263_000]
                .prop_flat_map(|len| (Just(len), proptest::collection::vec(op(len), 1..200)))
        ) {
            let mut s = FreeSet::new(len);
            let mut model = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Insert(i) => {
                        let got = s.insert(i);
                        if i < len {
                            prop_assert_eq!(got, Ok(model.insert(i)));
                        } else {
                            prop_assert!(got.is_err());
                        }
                    }
                    Op::Remove(i) => {
                        let got = s.remove(i);
                        if i < len {
                            prop_assert_eq!(got, Ok(model.remove(&i)));
                        } else {
                            prop_assert!(got.is_err());
                        }
                    }
                    Op::Next(i) => {
                        prop_assert_eq!(s.first_at_or_after(i), model.range(i..).next().copied());
                        prop_assert_eq!(s.contains(i), model.contains(&i));
                    }
                }
                prop_assert_eq!(s.first(), model.first().copied());
                prop_assert_eq!(s.count(), model.len());
            }
            prop_assert!(s.iter().eq(model.iter().copied()));
            s.clear();
            prop_assert_eq!(s.first(), None);
        }
    }
}
