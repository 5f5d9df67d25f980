//! Row bit-grids: the free nodes of a grid machine as rows of bit words,
//! the one home of the word-level searches' input and of their bit masks.
//!
//! Node ids number a grid with dimension 0 fastest, so the nodes
//! `y·width .. (y+1)·width` form row `y` along dimension 0 (a 2-D mesh's
//! rows, a k-ary n-cube's lines along its first dimension). A [`RowGrid`]
//! holds each row in ⌈width / 64⌉ words, bit x of row y set iff node
//! `y·width + x` is free; bits past the last column are 0. A search then
//! tests a whole row of bases with a few word operations instead of one
//! node at a time. [`SearchMode`] is the choice, for the strategies that
//! have both, between such a word-level search and the literal
//! node-by-node one.
//!
//! [`low_bits`] and [`word_range_mask`] are the masks every word-level
//! routine of the crate builds from (hypercube address masks too).

use core::fmt;
use core::str::FromStr;

use partalloc_topology::NodeSet;
use partalloc_topology::nodeset::word_bit;

/// How a searching strategy checks candidate boxes: with row bit words or
/// node by node. Both choose the same box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SearchMode {
    /// Row bit words (⌈side 0 / 64⌉ words per row along dimension 0).
    #[default]
    Fast,
    /// Every node of every window, as the papers analyse the searches.
    Literal,
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Fast => "fast",
            Self::Literal => "literal",
        })
    }
}

impl FromStr for SearchMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fast" => Ok(Self::Fast),
            "literal" => Ok(Self::Literal),
            _ => Err("expected fast or literal".to_owned()),
        }
    }
}

/// The low `len` bits set (all 64 from `len` = 64 on).
#[inline]
#[must_use]
pub(crate) const fn low_bits(len: u32) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

/// The bits of word `k` (bits `64k .. 64k + 64` of a row) that lie in the
/// bit range `lo..hi` of the row.
#[inline]
#[must_use]
pub(crate) fn word_range_mask(k: usize, lo: usize, hi: usize) -> u64 {
    let start = 64 * k;
    let from = lo.saturating_sub(start).min(64) as u32;
    let to = hi.saturating_sub(start).min(64) as u32;
    low_bits(to) & !low_bits(from)
}

/// The free nodes of a grid as rows of bit words; see the module
/// documentation. Loading reuses the buffer, so a warm search allocates
/// nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RowGrid {
    /// Words per row.
    per_row: usize,
    /// The rows, `per_row` words each.
    words: Vec<u64>,
}

impl RowGrid {
    /// Loads the nodes not in `blocked` as rows of `width` nodes (the last
    /// partial row, if `width` does not divide the machine, is left out).
    pub(crate) fn load_free(&mut self, blocked: &NodeSet, width: usize) {
        let rows = blocked.universe().checked_div(width).unwrap_or(0);
        let per_row = width.div_ceil(64);
        self.per_row = per_row;
        self.words.clear();
        self.words.resize(per_row * rows, 0);
        let src = blocked.words();
        let word = |i: usize| src.get(i).copied().unwrap_or(0);
        let tail = low_bits((width % 64) as u32);
        for (y, row) in self.words.chunks_exact_mut(per_row.max(1)).enumerate() {
            for (k, out) in row.iter_mut().enumerate() {
                // The 64 ids from `y·width + 64k` of the bitset.
                let bit = y * width + 64 * k;
                let (wi, sh) = (bit / 64, bit % 64);
                let b = if sh == 0 {
                    word(wi)
                } else {
                    word(wi) >> sh | word(wi + 1) << (64 - sh)
                };
                *out = !b;
            }
            if !width.is_multiple_of(64)
                && let Some(last) = row.last_mut()
            {
                *last &= tail;
            }
        }
    }

    /// Words per row.
    #[inline]
    #[must_use]
    pub(crate) fn per_row(&self) -> usize {
        self.per_row
    }

    /// Number of rows.
    #[inline]
    #[must_use]
    pub(crate) fn rows(&self) -> usize {
        self.words.len().checked_div(self.per_row).unwrap_or(0)
    }

    /// Every row's words, row after row.
    #[inline]
    #[must_use]
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words of row `y`.
    #[inline]
    #[must_use]
    pub(crate) fn row(&self, y: usize) -> &[u64] {
        &self.words[y * self.per_row..(y + 1) * self.per_row]
    }

    /// Whether node `x` of row `y` is free.
    #[inline]
    #[must_use]
    pub(crate) fn is_set(&self, x: usize, y: usize) -> bool {
        word_bit(self.row(y), x)
    }

    /// Free nodes of row `y` in columns `lo..hi`, a word at a time.
    #[must_use]
    pub(crate) fn count_in_row(&self, y: usize, lo: usize, hi: usize) -> u32 {
        if lo >= hi {
            return 0;
        }
        let row = self.row(y);
        (lo / 64..=(hi - 1) / 64)
            .map(|k| (row[k] & word_range_mask(k, lo, hi)).count_ones())
            .sum()
    }
}

/// Sets bits `lo..hi` of a row of words; returns the OR of the bits set.
pub(crate) fn set_range(row: &mut [u64], lo: usize, hi: usize) -> u64 {
    if lo >= hi {
        return 0;
    }
    let mut any = 0;
    for (k, word) in row
        .iter_mut()
        .enumerate()
        .take((hi - 1) / 64 + 1)
        .skip(lo / 64)
    {
        let m = word_range_mask(k, lo, hi);
        *word |= m;
        any |= m;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn masks_at_the_word_ends() {
        assert_eq!(low_bits(0), 0);
        assert_eq!(low_bits(5), 0b1_1111);
        assert_eq!(low_bits(64), u64::MAX);
        assert_eq!(low_bits(200), u64::MAX);
        assert_eq!(word_range_mask(0, 0, 64), u64::MAX);
        assert_eq!(word_range_mask(1, 0, 64), 0);
        assert_eq!(word_range_mask(1, 60, 70), 0b11_1111);
        assert_eq!(word_range_mask(0, 60, 70), 0xF << 60);
        assert_eq!(word_range_mask(2, 60, 70), 0);
    }

    proptest! {
        /// Every bit of a loaded grid, its row counts and its set ranges
        /// agree with node-by-node answers.
        #[test]
        fn agrees_with_the_nodes(
            width in 1usize..150,
            rows in 0usize..5,
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..80),
            ranges in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..10),
        ) {
            let n = width * rows;
            let mut blocked = NodeSet::new(n);
            if n > 0 {
                for p in &picks {
                    let _ = blocked.insert(p.index(n) as u32);
                }
            }
            let mut g = RowGrid::default();
            g.load_free(&blocked, width);
            prop_assert_eq!(g.rows(), rows);
            prop_assert_eq!(g.per_row(), width.div_ceil(64));
            for y in 0..rows {
                // No bit past the last column.
                for (k, &w) in g.row(y).iter().enumerate() {
                    prop_assert_eq!(w & !word_range_mask(k, 0, width), 0);
                }
                for x in 0..width {
                    prop_assert_eq!(g.is_set(x, y), !blocked.contains((y * width + x) as u32));
                }
                for &(a, b) in &ranges {
                    let (a, b) = (a.index(width + 1), b.index(width + 1));
                    let (lo, hi) = (a.min(b), a.max(b));
                    let want = (lo..hi).filter(|&x| g.is_set(x, y)).count() as u32;
                    prop_assert_eq!(g.count_in_row(y, lo, hi), want);
                    let mut row = vec![0u64; g.per_row()];
                    let any = set_range(&mut row, lo, hi);
                    for x in 0..width {
                        prop_assert_eq!(word_bit(&row, x), (lo..hi).contains(&x));
                    }
                    prop_assert_eq!(any != 0, lo < hi);
                }
            }
        }
    }
}
