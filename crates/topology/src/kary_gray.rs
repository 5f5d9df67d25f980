//! The reflected k-ary Gray code, the node order of the Extended Gray Code
//! strategy for k-ary n-cubes (Gautam & Chaudhary, as described in Kang et
//! al., IEEE TC 2003, §2).
//!
//! Position `i` (0 ≤ i < k^n) with base-k digits b_j maps to the codeword g
//! with g_j = b_j if ⌊i / k^{j+1}⌋ is even and g_j = k − 1 − b_j otherwise.
//! Equivalently the code of length n is the concatenation, over the top
//! digit d = 0 … k − 1, of d prefixed to the code of length n − 1, reversed
//! for odd d. For k = 2 it is the binary reflected Gray code. Consecutive
//! codewords differ in one digit by exactly 1, so the sequence is a
//! Hamiltonian path of the k-ary n-mesh; it closes into a cycle (through a
//! wrap-around link) only for even k.
//!
//! ```
//! use partalloc_topology::KaryGray;
//! let g = KaryGray::new(3, 2)?;
//! // 00 01 02 12 11 10 20 21 22, printed high digit first.
//! let printed: Vec<String> = (0..9)
//!     .map(|i| g.codeword(i).iter().rev().map(|d| d.to_string()).collect())
//!     .collect();
//! assert_eq!(printed, ["00", "01", "02", "12", "11", "10", "20", "21", "22"]);
//! assert_eq!(g.position(g.node(4)), 4);
//! assert_eq!(g.sequence(), vec![0, 1, 2, 5, 4, 3, 6, 7, 8]);
//! # Ok::<(), partalloc_topology::TopologyError>(())
//! ```

use crate::{Coords, MAX_DIMS, MAX_NODES, NodeId, TopologyError};

/// The reflected k-ary Gray code of length n (dimension 0 = lowest digit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "KaryGrayRepr", try_from = "KaryGrayRepr")
)]
pub struct KaryGray {
    k: u32,
    n: usize,
    len: u32,
    zero: Coords,
}

/// The serialized form of a [`KaryGray`]; deserializing goes through
/// [`KaryGray::new`], so a file cannot hold k < 2 or a wrong length.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct KaryGrayRepr {
    k: u32,
    n: usize,
}

#[cfg(feature = "serde")]
impl From<KaryGray> for KaryGrayRepr {
    fn from(g: KaryGray) -> Self {
        Self { k: g.k, n: g.n }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<KaryGrayRepr> for KaryGray {
    type Error = TopologyError;
    fn try_from(r: KaryGrayRepr) -> Result<Self, TopologyError> {
        Self::new(r.k, r.n)
    }
}

impl KaryGray {
    /// The code for radix `k` ≥ 2 and `n` ≥ 1 digits.
    ///
    /// # Errors
    /// `k` < 2 ([`TopologyError::InvalidTopology`]), `n` = 0 or above
    /// [`MAX_DIMS`], or more than [`MAX_NODES`] codewords.
    pub fn new(k: u32, n: usize) -> Result<Self, TopologyError> {
        if k < 2 {
            return Err(TopologyError::InvalidTopology {
                text: format!("{k}^{n}"),
                reason: "a k-ary Gray code needs k >= 2".to_owned(),
            });
        }
        if n == 0 {
            return Err(TopologyError::NoDimensions);
        }
        if n > MAX_DIMS {
            return Err(TopologyError::TooManyDimensions {
                got: n,
                max: MAX_DIMS,
            });
        }
        let len = (0..n).try_fold(1u64, |acc, _| {
            acc.checked_mul(u64::from(k)).filter(|&v| v <= MAX_NODES)
        });
        match len {
            Some(len) => Ok(Self {
                k,
                n,
                len: len as u32,
                zero: Coords::filled(n, 0)?,
            }),
            None => Err(TopologyError::TooManyNodes {
                nodes: u128::from(k).saturating_pow(n as u32),
                max: MAX_NODES,
            }),
        }
    }

    /// The radix k.
    #[must_use]
    pub fn radix(&self) -> u32 {
        self.k
    }

    /// The number of digits n.
    #[must_use]
    pub fn digits(&self) -> usize {
        self.n
    }

    /// Number of codewords, k^n.
    #[must_use]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Always false: a code has at least k codewords.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether the last codeword is adjacent to the first through a
    /// wrap-around link: k even, or a single digit (a ring).
    #[must_use]
    pub fn is_cyclic(&self) -> bool {
        self.k.is_multiple_of(2) || self.n == 1
    }

    /// The codeword at position `i mod k^n`, digit 0 first.
    #[must_use]
    pub fn codeword(&self, i: u32) -> Coords {
        let mut i = i % self.len;
        let mut g = self.zero;
        for d in g.iter_mut() {
            let b = i % self.k;
            i /= self.k;
            *d = if i.is_multiple_of(2) {
                b
            } else {
                self.k - 1 - b
            };
        }
        g
    }

    /// The node id (digit 0 fastest) of the codeword at position `i`.
    #[must_use]
    pub fn node(&self, i: u32) -> NodeId {
        let mut i = i % self.len;
        let mut id = 0u32;
        let mut w = 1u32;
        for _ in 0..self.n {
            let b = i % self.k;
            i /= self.k;
            let g = if i.is_multiple_of(2) {
                b
            } else {
                self.k - 1 - b
            };
            id += g * w;
            w = w.wrapping_mul(self.k);
        }
        id
    }

    /// The position of node `node` (taken mod k^n) in the sequence: the
    /// inverse of [`KaryGray::node`].
    #[must_use]
    pub fn position(&self, node: NodeId) -> u32 {
        let node = node % self.len;
        // Digits of the codeword, high first; the parity of the prefix of
        // the *position* decides whether a digit is reflected.
        let mut g = [0u32; MAX_DIMS];
        let mut v = node;
        for d in g.iter_mut().take(self.n) {
            *d = v % self.k;
            v /= self.k;
        }
        let mut pos = 0u32;
        for j in (0..self.n).rev() {
            // pos so far = ⌊i / k^{j+1}⌋.
            let b = if pos.is_multiple_of(2) {
                g[j]
            } else {
                self.k - 1 - g[j]
            };
            pos = pos * self.k + b;
        }
        pos
    }

    /// The whole sequence as node ids.
    #[must_use]
    pub fn sequence(&self) -> Vec<NodeId> {
        (0..self.len).map(|i| self.node(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn printed(g: &KaryGray, i: u32) -> String {
        g.codeword(i).iter().rev().map(|d| d.to_string()).collect()
    }

    #[test]
    fn baselines_a1_vectors() {
        let g = KaryGray::new(3, 2).unwrap();
        let v: Vec<_> = (0..9).map(|i| printed(&g, i)).collect();
        assert_eq!(v, ["00", "01", "02", "12", "11", "10", "20", "21", "22"]);
        let g = KaryGray::new(4, 2).unwrap();
        let v: Vec<_> = (0..16).map(|i| printed(&g, i)).collect();
        assert_eq!(
            v,
            [
                "00", "01", "02", "03", "13", "12", "11", "10", "20", "21", "22", "23", "33", "32",
                "31", "30"
            ]
        );
        let g = KaryGray::new(3, 3).unwrap();
        let v: Vec<_> = (0..12).map(|i| printed(&g, i)).collect();
        assert_eq!(
            v,
            [
                "000", "001", "002", "012", "011", "010", "020", "021", "022", "122", "121", "120"
            ]
        );
    }

    #[test]
    fn binary_case_is_brgc() {
        let g = KaryGray::new(2, 5).unwrap();
        for i in 0..32 {
            assert_eq!(g.node(i), i ^ (i >> 1));
        }
    }

    #[test]
    fn bad_parameters() {
        assert!(KaryGray::new(1, 3).is_err());
        assert!(KaryGray::new(4, 0).is_err());
        assert!(KaryGray::new(4, 9).is_err());
        assert!(KaryGray::new(1 << 16, 3).is_err());
    }

    proptest! {
        #[test]
        fn gray_properties(k in 2u32..7, n in 1usize..5) {
            let g = KaryGray::new(k, n).unwrap();
            let s = g.sequence();
            let mut seen = vec![false; s.len()];
            for (i, &x) in s.iter().enumerate() {
                prop_assert!(!seen[x as usize]);
                seen[x as usize] = true;
                prop_assert_eq!(g.position(x), i as u32);
                prop_assert_eq!(g.codeword(i as u32).iter().enumerate()
                    .map(|(j, &d)| d * k.pow(j as u32)).sum::<u32>(), x);
            }
            let step = |a: u32, b: u32, wrap: bool| {
                let (ca, cb) = (g.codeword(g.position(a)), g.codeword(g.position(b)));
                let diff: Vec<_> = (0..n).filter(|&j| ca[j] != cb[j]).collect();
                diff.len() == 1 && {
                    let d = ca[diff[0]].abs_diff(cb[diff[0]]);
                    d == 1 || (wrap && d == k - 1)
                }
            };
            for w in s.windows(2) {
                prop_assert!(step(w[0], w[1], false));
            }
            let last = s[s.len() - 1];
            // Closing the cycle needs a wrap link, and is possible iff k is even.
            prop_assert_eq!(step(last, s[0], true), k % 2 == 0 || n == 1);
            prop_assert_eq!(g.is_cyclic(), k % 2 == 0 || n == 1);
        }
    }
}
