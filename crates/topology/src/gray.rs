//! Binary Gray codes and partners (Al-Dhelaan & Bose 1988, §II–§III).
//!
//! - [`brgc`] / [`brgc_inverse`]: the binary reflected Gray code and its
//!   inverse, i.e. the binary ↔ Gray conversion of §III.B
//!   (g_i = b_i xor b_{i+1}, g_n = b_n; Example 9: binary 101 ↔ Gray 111).
//! - [`GrayCode`]: the generalised code G_n{g_1, …, g_n} of §III.B, built
//!   from partial ranks (Examples 6–8).
//! - [`partner`]: the α-th partner of a binary address (§III.C, Fig. 7).
//! - [`insert_bit`]: the insertion A^{α\β} of §II (Example 1), from which
//!   the recursive definition of G_n is built.
//!
//! # Conventions
//!
//! A codeword is a `u32` whose bit `i` is address position `i` (position 0
//! is the rightmost character when printed, as in the paper).
//!
//! The definition G_k = {G_{k−1}^{0\r_k}, (G*_{k−1})^{1\r_k}} inserts the
//! new bit at position r_k − 1 in the 0-based positions of the paper's
//! Example 1; that is the reading that reproduces Examples 7 and 8 (see
//! `docs/paper-errata.md` (hypercube part)). Unrolling the recursion, the bit inserted
//! at step k ends at position g_k − 1 of the n-bit word, so
//! G_n{g}(i) is [`brgc`]`(i)` with bit k − 1 moved to position g_k − 1.
//!
//! ```
//! use partalloc_topology::gray::{brgc, brgc_inverse, partner, GrayCode};
//!
//! // Example 9: binary 101 is Gray 111.
//! assert_eq!(brgc(0b101), 0b111);
//! assert_eq!(brgc_inverse(0b111), 0b101);
//!
//! // Example 7: G_3{2,3,1}.
//! let g = GrayCode::new(&[2, 3, 1])?;
//! assert_eq!(g.partial_ranks(), vec![1, 2, 1]);
//! let words: Vec<u32> = g.iter().collect();
//! assert_eq!(words, [0b000, 0b010, 0b110, 0b100, 0b101, 0b111, 0b011, 0b001]);
//! assert_eq!(g.position(0b101), 4);
//!
//! // Fig. 7: the 1st partner of 100 is 110; 001 has no 0th partner.
//! assert_eq!(partner(0b100, 3, 1)?, Some(0b110));
//! assert_eq!(partner(0b001, 3, 0)?, None);
//! # Ok::<(), partalloc_topology::gray::GrayError>(())
//! ```

use thiserror::Error;

use crate::MAX_HYPERCUBE_DIM;

/// Why a Gray code or a partner could not be formed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GrayError {
    /// The code would be wider than the supported maximum.
    #[error("a gray code of width {width} is wider than the supported maximum {max}")]
    TooWide {
        /// The width asked for.
        width: usize,
        /// The supported maximum ([`MAX_HYPERCUBE_DIM`]).
        max: u32,
    },
    /// The parameters g_1..g_n are not a permutation of 1..n.
    #[error(
        "gray code parameters {params:?} are not a permutation of 1..={n}; give each of 1..={n} exactly once"
    )]
    NotPermutation {
        /// The parameters given.
        params: Vec<u32>,
        /// Their number.
        n: usize,
    },
    /// An address does not fit in the given width.
    #[error("address {address:#b} does not fit in {width} bits")]
    AddressTooWide {
        /// The address.
        address: u32,
        /// The width.
        width: u32,
    },
    /// An inserted bit that would not fit in a `u32` address.
    #[error("inserting a bit at position {position} into {word:#b} needs more than 32 bits")]
    InsertTooWide {
        /// The word inserted into.
        word: u32,
        /// The position asked for.
        position: u32,
    },
    /// A partner index outside 0..width.
    #[error("partner index {alpha} is outside 0..{width}; a {width}-bit address has partners 0..={last}", last = width.saturating_sub(1))]
    PartnerOutOfRange {
        /// The index asked for.
        alpha: u32,
        /// The address width.
        width: u32,
    },
}

/// The binary reflected Gray codeword at position `i` (binary → Gray).
#[must_use]
#[inline]
pub fn brgc(i: u32) -> u32 {
    i ^ (i >> 1)
}

/// The position of a binary reflected Gray codeword (Gray → binary).
#[must_use]
#[inline]
pub fn brgc_inverse(g: u32) -> u32 {
    let mut b = g;
    let mut shift = 1;
    while shift < 32 {
        b ^= b >> shift;
        shift <<= 1;
    }
    b
}

/// The partial ranks r_1..r_n of `params` (Example 6): r_i is the 1-based
/// rank of g_i among g_1..g_i.
#[must_use]
pub fn partial_ranks(params: &[u32]) -> Vec<u32> {
    (0..params.len())
        .map(|i| 1 + params[..i].iter().filter(|&&p| p < params[i]).count() as u32)
        .collect()
}

/// A^{α\β} of §II, on one element: `word` with the bit `alpha` inserted
/// at position `beta` (counted from a_0), giving a_{k−1} … a_β α a_{β−1}
/// … a_0. Example 1: inserting 1 at position 1 of 01 gives 011, at
/// position 2 gives 101.
///
/// ```
/// use partalloc_topology::gray::insert_bit;
/// assert_eq!(insert_bit(0b01, true, 1)?, 0b011);
/// assert_eq!(insert_bit(0b01, true, 2)?, 0b101);
/// assert_eq!(insert_bit(0b10, false, 0)?, 0b100);
/// # Ok::<(), partalloc_topology::gray::GrayError>(())
/// ```
///
/// # Errors
/// [`GrayError::InsertTooWide`] if the result needs more than 32 bits.
pub fn insert_bit(word: u32, alpha: bool, beta: u32) -> Result<u32, GrayError> {
    let too_wide = GrayError::InsertTooWide {
        word,
        position: beta,
    };
    if beta >= u32::BITS {
        return Err(too_wide);
    }
    let w = u64::from(word);
    let low = w & ((1u64 << beta) - 1);
    let inserted = ((w >> beta) << (beta + 1)) | (u64::from(alpha) << beta) | low;
    u32::try_from(inserted).map_err(|_| too_wide)
}

/// The α-th partner of the `width`-bit address `address` (§III.C): the
/// address with bit α set, if bit α is 0; `None` ("undefined") if it is 1.
///
/// # Errors
/// [`GrayError::TooWide`], [`GrayError::AddressTooWide`] or
/// [`GrayError::PartnerOutOfRange`].
pub fn partner(address: u32, width: u32, alpha: u32) -> Result<Option<u32>, GrayError> {
    if width > MAX_HYPERCUBE_DIM {
        return Err(GrayError::TooWide {
            width: width as usize,
            max: MAX_HYPERCUBE_DIM,
        });
    }
    if u64::from(address) >> width != 0 {
        return Err(GrayError::AddressTooWide { address, width });
    }
    if alpha >= width {
        return Err(GrayError::PartnerOutOfRange { alpha, width });
    }
    Ok((address >> alpha & 1 == 0).then_some(address | 1 << alpha))
}

/// The Gray code G_n{g_1, …, g_n} (Al-Dhelaan & Bose §III.B).
///
/// With g_i = i it is the binary reflected Gray code. Every such code is
/// cyclic and visits each n-bit word once with single-bit steps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "GrayCodeRepr", try_from = "GrayCodeRepr")
)]
pub struct GrayCode {
    params: Vec<u32>,
}

/// The serialized form of a [`GrayCode`]; deserializing validates it like
/// [`GrayCode::new`], so a file cannot hold repeated or zero parameters.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct GrayCodeRepr {
    params: Vec<u32>,
}

#[cfg(feature = "serde")]
impl From<GrayCode> for GrayCodeRepr {
    fn from(g: GrayCode) -> Self {
        Self { params: g.params }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<GrayCodeRepr> for GrayCode {
    type Error = GrayError;
    fn try_from(r: GrayCodeRepr) -> Result<Self, GrayError> {
        Self::new(&r.params)
    }
}

impl GrayCode {
    /// G_n with parameters `params` = (g_1, …, g_n), a permutation of
    /// 1..=n. An empty list gives the one-word code of width 0.
    ///
    /// # Errors
    /// [`GrayError::TooWide`] for n > [`MAX_HYPERCUBE_DIM`],
    /// [`GrayError::NotPermutation`] otherwise.
    pub fn new(params: &[u32]) -> Result<Self, GrayError> {
        let n = params.len();
        if n > MAX_HYPERCUBE_DIM as usize {
            return Err(GrayError::TooWide {
                width: n,
                max: MAX_HYPERCUBE_DIM,
            });
        }
        let mut seen = 0u64;
        for &p in params {
            if p == 0 || p as usize > n || seen >> p & 1 == 1 {
                return Err(GrayError::NotPermutation {
                    params: params.to_vec(),
                    n,
                });
            }
            seen |= 1 << p;
        }
        Ok(Self {
            params: params.to_vec(),
        })
    }

    /// The binary reflected Gray code of width `n` (g_i = i).
    ///
    /// # Errors
    /// [`GrayError::TooWide`].
    pub fn reflected(n: u32) -> Result<Self, GrayError> {
        Self::new(&(1..=n).collect::<Vec<_>>())
    }

    /// The width n.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.params.len() as u32
    }

    /// Number of codewords, 2^n.
    #[must_use]
    pub fn len(&self) -> u64 {
        1u64 << self.params.len()
    }

    /// Always false: a code has at least one word.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The parameters g_1..g_n.
    #[must_use]
    pub fn params(&self) -> &[u32] {
        &self.params
    }

    /// The partial ranks r_1..r_n of the parameters.
    #[must_use]
    pub fn partial_ranks(&self) -> Vec<u32> {
        partial_ranks(&self.params)
    }

    /// Moves bit k − 1 of a reflected-code word to position g_k − 1.
    #[must_use]
    #[inline]
    pub fn scatter(&self, reflected: u32) -> u32 {
        let mut w = 0;
        for (k, &g) in self.params.iter().enumerate() {
            w |= (reflected >> k & 1) << (g - 1);
        }
        w
    }

    /// The inverse of [`GrayCode::scatter`].
    #[must_use]
    #[inline]
    pub fn gather(&self, word: u32) -> u32 {
        let mut r = 0;
        for (k, &g) in self.params.iter().enumerate() {
            r |= (word >> (g - 1) & 1) << k;
        }
        r
    }

    /// The codeword at position `pos` (taken modulo 2^n).
    #[must_use]
    pub fn codeword(&self, pos: u64) -> u32 {
        let m = (pos & (self.len() - 1)) as u32;
        self.scatter(brgc(m))
    }

    /// The position of `word` in the code (bits at or above n are ignored).
    #[must_use]
    pub fn position(&self, word: u32) -> u32 {
        brgc_inverse(self.gather(word))
    }

    /// The codewords in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|p| self.codeword(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bits(s: &str) -> u32 {
        u32::from_str_radix(s, 2).unwrap()
    }

    #[test]
    fn example_6_partial_ranks() {
        assert_eq!(partial_ranks(&[3, 1, 2]), vec![1, 1, 2]);
    }

    #[test]
    fn example_7_and_8_sequences() {
        let g = GrayCode::new(&[2, 3, 1]).unwrap();
        assert_eq!(g.partial_ranks(), vec![1, 2, 1]);
        let want: Vec<u32> = ["000", "010", "110", "100", "101", "111", "011", "001"]
            .iter()
            .map(|s| bits(s))
            .collect();
        assert_eq!(g.iter().collect::<Vec<_>>(), want);
        // G_2 of Example 7 is the code on the first two parameters {2, 3}
        // re-ranked, i.e. G_2{1, 2}.
        let g2 = GrayCode::new(&[1, 2]).unwrap();
        assert_eq!(g2.iter().collect::<Vec<_>>(), vec![0, 1, 3, 2]);

        let b = GrayCode::new(&[1, 2, 3]).unwrap();
        assert_eq!(b.partial_ranks(), vec![1, 2, 3]);
        let want: Vec<u32> = ["000", "001", "011", "010", "110", "111", "101", "100"]
            .iter()
            .map(|s| bits(s))
            .collect();
        assert_eq!(b.iter().collect::<Vec<_>>(), want);
        assert_eq!(b, GrayCode::reflected(3).unwrap());
    }

    /// The recursive definition, literally: insert the new bit at 0-based
    /// position r_k − 1 of G_{k−1} and of its reverse.
    fn recursive(params: &[u32]) -> Vec<u32> {
        let r = partial_ranks(params);
        let insert = |w: u32, pos: u32, bit: bool| insert_bit(w, bit, pos).unwrap();
        let mut g = vec![0u32, 1];
        for k in 2..=params.len() {
            let pos = r[k - 1] - 1;
            let mut next: Vec<u32> = g.iter().map(|&w| insert(w, pos, false)).collect();
            next.extend(g.iter().rev().map(|&w| insert(w, pos, true)));
            g = next;
        }
        g
    }

    #[test]
    fn closed_form_matches_recursive_definition_for_all_permutations_up_to_5() {
        fn perms(n: u32) -> Vec<Vec<u32>> {
            if n == 0 {
                return vec![vec![]];
            }
            let mut out = Vec::new();
            for p in perms(n - 1) {
                for i in 0..=p.len() {
                    let mut q = p.clone();
                    q.insert(i, n);
                    out.push(q);
                }
            }
            out
        }
        for n in 1..=5 {
            for p in perms(n) {
                let g = GrayCode::new(&p).unwrap();
                assert_eq!(g.iter().collect::<Vec<_>>(), recursive(&p), "{p:?}");
            }
        }
    }

    #[test]
    fn example_9_conversion_both_ways() {
        assert_eq!(brgc(bits("101")), bits("111"));
        assert_eq!(brgc_inverse(bits("111")), bits("101"));
        // g_i = b_i xor b_{i+1}, g_n = b_n for every 6-bit word.
        for b in 0..64u32 {
            let g = brgc(b);
            for i in 0..6 {
                let gi = g >> i & 1;
                let want = if i == 5 {
                    b >> 5 & 1
                } else {
                    (b >> i & 1) ^ (b >> (i + 1) & 1)
                };
                assert_eq!(gi, want);
            }
            assert_eq!(brgc_inverse(g), b);
        }
    }

    #[test]
    fn fig_7_whole_table() {
        // Rows 000..111; columns 0th, 1st, 2nd partner ("-" = undefined).
        let table = [
            ["001", "010", "100"],
            ["-", "011", "101"],
            ["011", "-", "110"],
            ["-", "-", "111"],
            ["101", "110", "-"],
            ["-", "111", "-"],
            ["111", "-", "-"],
            ["-", "-", "-"],
        ];
        for (node, row) in table.iter().enumerate() {
            for (alpha, cell) in row.iter().enumerate() {
                let want = (*cell != "-").then(|| bits(cell));
                assert_eq!(
                    partner(node as u32, 3, alpha as u32).unwrap(),
                    want,
                    "node {node:03b} partner {alpha}"
                );
            }
        }
        // Example 12: exactly 4 nodes have each partner (Lemma 2).
        for alpha in 0..3 {
            let c = (0..8)
                .filter(|&a| partner(a, 3, alpha).unwrap().is_some())
                .count();
            assert_eq!(c, 4);
        }
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(matches!(
            GrayCode::new(&[1, 1, 3]),
            Err(GrayError::NotPermutation { .. })
        ));
        assert!(matches!(
            GrayCode::new(&[0, 1]),
            Err(GrayError::NotPermutation { .. })
        ));
        assert!(matches!(
            GrayCode::new(&[1, 3]),
            Err(GrayError::NotPermutation { .. })
        ));
        assert!(matches!(
            GrayCode::reflected(31),
            Err(GrayError::TooWide { .. })
        ));
        assert!(matches!(
            partner(8, 3, 0),
            Err(GrayError::AddressTooWide { .. })
        ));
        assert!(matches!(
            partner(1, 3, 3),
            Err(GrayError::PartnerOutOfRange { .. })
        ));
        assert!(matches!(partner(0, 31, 0), Err(GrayError::TooWide { .. })));
        let msg = GrayCode::new(&[2, 2]).unwrap_err().to_string();
        assert!(msg.contains("permutation"), "{msg}");
    }

    #[test]
    fn width_zero_has_one_word() {
        let g = GrayCode::new(&[]).unwrap();
        assert_eq!(g.iter().collect::<Vec<_>>(), vec![0]);
    }

    fn permutation() -> impl Strategy<Value = Vec<u32>> {
        (1u32..=10).prop_flat_map(|n| Just((1..=n).collect::<Vec<_>>()).prop_shuffle())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn every_code_is_a_cyclic_hamiltonian_path(p in permutation()) {
            let g = GrayCode::new(&p).unwrap();
            let words: Vec<u32> = g.iter().collect();
            let mut seen = vec![false; words.len()];
            for (i, &w) in words.iter().enumerate() {
                prop_assert!((w as usize) < words.len());
                prop_assert!(!seen[w as usize], "word {w} visited twice");
                seen[w as usize] = true;
                let next = words[(i + 1) % words.len()];
                prop_assert_eq!((w ^ next).count_ones(), 1, "step {} not unit", i);
                prop_assert_eq!(g.position(w), i as u32);
            }
        }

        #[test]
        fn brgc_round_trips(x in any::<u32>()) {
            prop_assert_eq!(brgc_inverse(brgc(x)), x);
            prop_assert_eq!(brgc(brgc_inverse(x)), x);
        }
    }
}
