//! A flat bitset of node ids, the occupancy representation shared by the
//! allocators, with word-level range operations.
//!
//! Invariant: `words.len() == len.div_ceil(64)` and no bit at or past `len`
//! is set, so counts, comparisons and scans see only the universe.

use core::fmt;

use crate::{NodeId, TopologyError};

/// Whether bit `i` of a word slice is set (bit `i % 64` of word `i / 64`):
/// the one reading of a single bit of a bare word slice, for the scans
/// that keep rows or rank sets as words of their own.
///
/// ```
/// use partalloc_topology::nodeset::{set_word_bit, word_bit};
/// let mut words = [0u64; 2];
/// set_word_bit(&mut words, 70);
/// assert!(word_bit(&words, 70) && !word_bit(&words, 6));
/// assert_eq!(words, [0, 1 << 6]);
/// ```
///
/// # Panics
/// If `i / 64` is past the slice.
#[must_use]
#[inline]
pub fn word_bit(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

/// Sets bit `i` of a word slice (see [`word_bit`]).
///
/// # Panics
/// If `i / 64` is past the slice.
#[inline]
pub fn set_word_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

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
        i < self.len && word_bit(&self.words, i)
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

    /// Adds every id in `lo..hi`; returns how many were absent before.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`] if the range leaves the universe;
    /// the set is then unchanged.
    #[inline]
    pub fn insert_range(&mut self, lo: usize, hi: usize) -> Result<usize, TopologyError> {
        self.check_range(lo, hi)?;
        // Count the members already there (usually none), so the common
        // case costs no population count.
        let mut present = 0;
        self.for_range(lo, hi, |w, m| {
            if *w & m != 0 {
                present += (*w & m).count_ones() as usize;
            }
            *w |= m;
        });
        Ok(hi - lo - present)
    }

    /// Removes every id in `lo..hi`; returns how many were present.
    ///
    /// # Errors
    /// As [`NodeSet::insert_range`].
    #[inline]
    pub fn remove_range(&mut self, lo: usize, hi: usize) -> Result<usize, TopologyError> {
        self.check_range(lo, hi)?;
        // Count the ids already absent (usually none), as in insert_range.
        let mut absent = 0;
        self.for_range(lo, hi, |w, m| {
            if !*w & m != 0 {
                absent += (!*w & m).count_ones() as usize;
            }
            *w &= !m;
        });
        Ok(hi - lo - absent)
    }

    /// Adds the ids `64·word + b` for every set bit `b` of `mask`; returns
    /// how many were absent before. Lets a caller that picked scattered ids
    /// inside one word (e.g. the lowest free ones) mark them in one step.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`] if a bit of `mask` lies past the
    /// universe; the set is then unchanged.
    #[inline]
    pub fn insert_word_bits(&mut self, word: usize, mask: u64) -> Result<usize, TopologyError> {
        let w = self.word_for(word, mask)?;
        let added = (mask & !*w).count_ones() as usize;
        *w |= mask;
        Ok(added)
    }

    /// Removes the ids `64·word + b` for every set bit `b` of `mask`;
    /// returns how many were present.
    ///
    /// # Errors
    /// As [`NodeSet::insert_word_bits`].
    #[inline]
    pub fn remove_word_bits(&mut self, word: usize, mask: u64) -> Result<usize, TopologyError> {
        let w = self.word_for(word, mask)?;
        let removed = (mask & *w).count_ones() as usize;
        *w &= !mask;
        Ok(removed)
    }

    /// Word `word`, if it exists and every bit of `mask` names an id of
    /// the universe.
    fn word_for(&mut self, word: usize, mask: u64) -> Result<&mut u64, TopologyError> {
        let nodes = self.len as u64;
        let out_of_range = |bit: u32| TopologyError::NodeOutOfRange {
            node: (word as u64).saturating_mul(64) + u64::from(bit),
            nodes,
        };
        // Words exist exactly for ids below the universe, so `keep` > 0.
        let keep = self.len.saturating_sub(word.saturating_mul(64));
        let outside = if keep >= 64 { 0 } else { mask >> keep << keep };
        if outside != 0 {
            return Err(out_of_range(outside.trailing_zeros()));
        }
        self.words.get_mut(word).ok_or_else(|| out_of_range(0))
    }

    /// Whether no member lies in `lo..hi`. Total: ids past the universe are
    /// never members, and an empty or reversed range holds none. Stops at
    /// the first word that meets the range.
    #[must_use]
    #[inline]
    pub fn is_empty_in(&self, lo: usize, hi: usize) -> bool {
        let hi = hi.min(self.len);
        lo >= hi
            || range_masks(lo, hi).all(|(w, mask)| self.words.get(w).is_none_or(|x| x & mask == 0))
    }

    /// The least member, if any.
    #[must_use]
    #[inline]
    pub fn first(&self) -> Option<NodeId> {
        self.first_at_or_after(0)
    }

    /// The least member `>= from`, if any (word by word).
    #[must_use]
    pub fn first_at_or_after(&self, from: usize) -> Option<NodeId> {
        if from >= self.len {
            return None;
        }
        let (mut wi, mut w) = (from / 64, self.words[from / 64] & (u64::MAX << (from % 64)));
        loop {
            if w != 0 {
                // Universe sizes are bounded by the u32 node-id space.
                return Some((wi * 64) as NodeId + w.trailing_zeros());
            }
            wi += 1;
            w = *self.words.get(wi)?;
        }
    }

    /// The least id of the universe that is not a member, if any.
    #[must_use]
    pub fn first_absent(&self) -> Option<NodeId> {
        let (wi, w) = self
            .words
            .iter()
            .enumerate()
            .find(|&(_, &w)| w != u64::MAX)?;
        let i = wi * 64 + (!w).trailing_zeros() as usize;
        (i < self.len).then_some(i as NodeId)
    }

    /// For `k < 6`: the start bits, within word `word`, of the aligned
    /// 2^k-bit blocks of that word that hold no member (0 for `k >= 6` or a
    /// word past the set). Bits past the universe read as absent, so a
    /// caller scanning blocks must bound them by the universe itself.
    #[must_use]
    #[inline]
    pub fn empty_block_starts(&self, word: usize, k: u32) -> u64 {
        if k >= 6 {
            return 0;
        }
        self.words
            .get(word)
            .map_or(0, |&w| empty_block_starts_of(w, k))
    }

    /// The least `a` such that the aligned block `a·2^k .. (a+1)·2^k` lies in
    /// the universe and holds no member, a word at a time (blocks smaller
    /// than a word are folded inside it).
    #[must_use]
    pub fn first_empty_block(&self, k: u32) -> Option<usize> {
        let blocks = self.len.checked_shr(k).unwrap_or(0);
        if k >= 6 {
            let per = 1usize << (k - 6);
            return (0..blocks)
                .find(|&a| self.words[a * per..(a + 1) * per].iter().all(|&w| w == 0));
        }
        for (wi, &w) in self.words.iter().enumerate() {
            let free = empty_block_starts_of(w, k);
            if free != 0 {
                let a = (wi * 64 + free.trailing_zeros() as usize) >> k;
                return (a < blocks).then_some(a);
            }
        }
        None
    }

    /// Empties the set and makes its universe `0..len`, keeping the
    /// allocation (for scratch sets reused across calls).
    pub fn reset(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), 0);
        self.len = len;
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

    /// Removes every member of `other` (word by word).
    pub fn difference_with(&mut self, other: &NodeSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
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

/// For `k < 6`: the start bits of the aligned 2^k-bit blocks of `w` that
/// are all clear (OR-folding each block onto its first bit).
#[inline]
fn empty_block_starts_of(w: u64, k: u32) -> u64 {
    // The first bit of every aligned 2^k-bit block, k = 0 … 5.
    const STARTS: [u64; 6] = [
        u64::MAX,
        0x5555_5555_5555_5555,
        0x1111_1111_1111_1111,
        0x0101_0101_0101_0101,
        0x0001_0001_0001_0001,
        0x0000_0001_0000_0001,
    ];
    let mut m = w;
    for s in 0..k {
        m |= m >> (1u32 << s);
    }
    !m & STARTS[k as usize % 6]
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

    #[test]
    fn reset_reuses_and_changes_the_universe() {
        let mut s = NodeSet::full(130);
        s.reset(70);
        assert_eq!((s.universe(), s.count()), (70, 0));
        assert_eq!(s, NodeSet::new(70));
    }

    #[test]
    fn empty_block_starts_fold_each_block() {
        let mut s = NodeSet::new(64);
        s.insert(5).unwrap(); // block 1 of size 4, block 0 of size 8
        assert_eq!(s.empty_block_starts(0, 2) & 0xff, 0b0000_0001);
        assert_eq!(s.empty_block_starts(0, 3) & 0xffff, 1 << 8);
        assert_eq!(s.empty_block_starts(0, 6), 0);
        assert_eq!(s.empty_block_starts(1, 0), 0);
    }

    /// A set over `0..len` and its `Vec<bool>` model, from a seed.
    fn random_set(len: usize, seed: u64, density: u64) -> (NodeSet, Vec<bool>) {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut s = NodeSet::new(len);
        let mut model = vec![false; len];
        for (i, m) in model.iter_mut().enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(density) {
                s.insert(i as NodeId).unwrap();
                *m = true;
            }
        }
        (s, model)
    }

    proptest! {
        #[test]
        fn word_bit_ops_agree_with_single_ids(
            len in 1usize..300, seed in any::<u64>(), word in 0usize..6, mask in any::<u64>(),
            insert in any::<bool>(),
        ) {
            let (mut s, _) = random_set(len, seed, 2);
            let before = s.clone();
            let r = if insert { s.insert_word_bits(word, mask) } else { s.remove_word_bits(word, mask) };
            let ids: Vec<usize> = (0..64).filter(|b| mask >> b & 1 == 1).map(|b| word * 64 + b).collect();
            if ids.iter().any(|&i| i >= len) || (mask == 0 && word * 64 >= len) {
                prop_assert!(r.is_err());
                prop_assert_eq!(&s, &before);
            } else {
                let mut model = before.clone();
                let mut changed = 0;
                for &i in &ids {
                    let c = if insert { model.insert(i as NodeId) } else { model.remove(i as NodeId) };
                    changed += usize::from(c == Ok(true));
                }
                prop_assert_eq!(r, Ok(changed));
                prop_assert_eq!(&s, &model);
            }
        }
    }

    proptest! {
        #[test]
        fn range_ops_agree_with_a_vec_of_bools(
            len in 1usize..400, seed in any::<u64>(), a in 0usize..420, b in 0usize..420,
        ) {
            let (mut s, mut model) = random_set(len, seed, 3);
            let (lo, hi) = (a.min(b), a.max(b));
            let members = |m: &[bool], lo: usize, hi: usize| {
                m.get(lo..hi.min(m.len())).map_or(0, |r| r.iter().filter(|&&x| x).count())
            };
            prop_assert_eq!(s.is_empty_in(lo, hi), members(&model, lo, hi) == 0);
            if hi <= len {
                prop_assert_eq!(s.count_range(lo, hi), Ok(members(&model, lo, hi)));
                let absent = (hi - lo) - members(&model, lo, hi);
                prop_assert_eq!(s.insert_range(lo, hi), Ok(absent));
                model[lo..hi].fill(true);
                prop_assert_eq!(s.count(), members(&model, 0, len));
                prop_assert_eq!(s.remove_range(lo, hi), Ok(hi - lo));
                model[lo..hi].fill(false);
            } else {
                let before = s.clone();
                prop_assert!(s.insert_range(lo, hi).is_err());
                prop_assert!(s.remove_range(lo, hi).is_err());
                prop_assert_eq!(&s, &before);
            }
            let want: Vec<NodeId> = (0..len).filter(|&i| model[i]).map(|i| i as NodeId).collect();
            prop_assert_eq!(s.iter().collect::<Vec<_>>(), want);
        }

        #[test]
        fn scans_agree_with_a_vec_of_bools(
            len in 1usize..400, seed in any::<u64>(), density in 1u64..12, from in 0usize..420,
        ) {
            let (s, model) = random_set(len, seed, density);
            let next = (from..len).find(|&i| model[i]).map(|i| i as NodeId);
            prop_assert_eq!(s.first_at_or_after(from), next);
            prop_assert_eq!(s.first(), model.iter().position(|&m| m).map(|i| i as NodeId));
            prop_assert_eq!(s.first_absent(), model.iter().position(|&m| !m).map(|i| i as NodeId));
            for k in 0..=9u32 {
                let want = (0..len >> k).find(|&a| !model[a << k..(a + 1) << k].contains(&true));
                prop_assert_eq!(s.first_empty_block(k), want, "k = {}", k);
                if k < 6 {
                    for wi in 0..len.div_ceil(64) {
                        let mut starts = 0u64;
                        for b in (0..64).step_by(1 << k) {
                            let block = wi * 64 + b..(wi * 64 + b + (1 << k)).min(len);
                            if !model.get(block).unwrap_or(&[]).contains(&true) {
                                starts |= 1 << b;
                            }
                        }
                        prop_assert_eq!(s.empty_block_starts(wi, k), starts);
                    }
                }
            }
        }

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
