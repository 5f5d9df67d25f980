//! The multiple Gray code strategy: Algorithm 2 of Al-Dhelaan & Bose run
//! over C(n, ⌊n/2⌋) codes G_n{g}, which together recognise every subcube
//! (complete recognition; Mohapatra et al. §2.1, after Chen & Shin 1987).
//!
//! # Which codes
//!
//! The sources state the number of codes, not the codes. We derive them.
//! With parameters g, Algorithm 2's windows at even α are aligned blocks
//! of 2^k code positions; their codewords have free bits
//! S_k = {g_1 − 1, …, g_k − 1} (the bits the first k steps of the
//! recursion insert) and take every value on the other bits. So code g
//! recognises every Q_k whose free dimensions are S_k, for every k: the
//! sets S_0 ⊂ S_1 ⊂ … ⊂ S_n form a maximal chain of subsets of the n
//! dimensions. Complete recognition therefore needs a family of maximal
//! chains through every subset. A symmetric chain decomposition (de
//! Bruijn, van Ebbenhorst Tengbergen & Kruyswijk 1951) has exactly
//! C(n, ⌊n/2⌋) chains covering every subset once; extending each chain to
//! a maximal one gives the codes. We use the bracket construction: read a
//! subset as a word over dimensions 0..n−1 with "(" for an absent and ")"
//! for a present dimension and match brackets; the chain of the subset
//! holds the matched ")"s, then adds the unmatched dimensions left to
//! right. Each chain is named by its unique ⌊n/2⌋-element subset; the
//! codes are ordered by that subset as an integer, so the first code is
//! the binary reflected one. Lower bound: a code recognises 2^{n−k+1} of
//! the C(n,k)·2^{n−k} Q_k, so at least C(n,⌊n/2⌋)/2 codes are needed;
//! the tests check completeness by enumeration for n ≤ 10.
//!
//! # Search order
//!
//! Code by code in the order above, and within a code the least α
//! (Algorithm 2). **Q_0**: the lowest available node.
//!
//! Cost: O(C(n, ⌊n/2⌋) · 2^{n−k+1}) window tests per failing request, as
//! Mohapatra et al. state (O(C(n,⌊n/2⌋)·2^n)). The codes are stored, so
//! machines are limited to Q_[`MAX_MULTIPLE_GRAY_DIM`].
//!
//! ```
//! use partalloc_allocators::hypercube::{chain_codes, MultipleGrayCode};
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::Hypercube;
//!
//! assert_eq!(chain_codes(4).len(), 6); // C(4, 2)
//! let m = MultipleGrayCode::new(Hypercube::new(4)?)?;
//! // Complete: all C(4,2)·2^2 = 24 Q_2 of a Q_4.
//! assert_eq!(m.recognizable(&Request::subcube(2))?.len(), 24);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;

use partalloc_topology::gray;
use partalloc_topology::{Hypercube, Subcube, Topology, TopologyKind};

use super::common::{cube_of, requested_dim, single_nodes, sub};
use super::gray_code::window;
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, Managed, Occupancy, Partition, Request, Strategy, View};

const NAME: &str = "multiple-gray-code";

/// Largest machine dimension [`MultipleGrayCode`] accepts
/// (C(16, 8) = 12,870 codes).
pub const MAX_MULTIPLE_GRAY_DIM: u32 = 16;

/// The parameter lists g of the C(n, ⌊n/2⌋) codes, in search order (see
/// the module docs for the construction and why it is complete).
#[must_use]
pub fn chain_codes(n: u32) -> Vec<Vec<u32>> {
    let half = n / 2;
    let mut out = Vec::new();
    if n > 31 {
        return out;
    }
    let limit = 1u64 << n;
    // Subsets of size ⌊n/2⌋ in increasing integer order (Gosper's hack).
    let mut m: u64 = (1u64 << half) - 1;
    while m < limit {
        out.push(chain_of(n, m as u32));
        if m == 0 {
            break;
        }
        let c = m & m.wrapping_neg();
        let r = m + c;
        m = (((r ^ m) >> 2) / c) | r;
    }
    out
}

/// The maximal chain through the symmetric chain of `set`, as parameters.
fn chain_of(n: u32, set: u32) -> Vec<u32> {
    let mut open: Vec<u32> = Vec::new();
    let mut matched_close = Vec::new();
    let mut matched_open = Vec::new();
    let mut unmatched = Vec::new();
    for i in 0..n {
        if set >> i & 1 == 1 {
            match open.pop() {
                Some(o) => {
                    matched_open.push(o);
                    matched_close.push(i);
                }
                None => unmatched.push(i),
            }
        } else {
            open.push(i);
        }
    }
    unmatched.extend(open);
    unmatched.sort_unstable();
    matched_close.sort_unstable();
    matched_open.sort_unstable();
    matched_close
        .into_iter()
        .chain(unmatched)
        .chain(matched_open)
        .map(|e| e + 1)
        .collect()
}

/// Algorithm 2 for one code: the least α whose window is available.
///
/// Walks the windows incrementally instead of scattering each one: window
/// α has free bits S_{k−1} ∪ {bit k−1+t} and fixed bits
/// scatter(brgc(α) ≪ (k−1)), where t is the bit in which brgc(α) and
/// brgc(α+1 mod 2^{n−k+1}) differ; moving to α + 1 flips exactly that bit.
fn first_window(
    nodes: &Occupancy,
    cube: &Hypercube,
    code: &gray::GrayCode,
    k: u32,
) -> Option<Subcube> {
    let n = cube.dim();
    let m = n - k + 1;
    let count = 1u32 << m;
    let mut dims = [0u32; 32];
    for (d, &g) in dims.iter_mut().zip(code.params()) {
        *d = 1 << (g - 1);
    }
    let base_free = dims[..(k - 1) as usize].iter().fold(0, |a, &d| a | d);
    let mut fixed = 0u32;
    for a in 0..count {
        let t = if a + 1 == count {
            m - 1
        } else {
            (a + 1).trailing_zeros()
        };
        let flip = dims[(k - 1 + t) as usize];
        let free = base_free | flip;
        if nodes.masks_available(free, fixed & !free) {
            return Some(sub(cube, free, fixed));
        }
        fixed ^= flip;
    }
    None
}

/// Multiple Gray code allocation with complete recognition.
#[derive(Debug, Clone)]
pub struct MultipleGrayCode {
    cube: Hypercube,
    codes: Vec<gray::GrayCode>,
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "Gray-code strategy over C(n, n/2) codes from a symmetric chain decomposition: complete recognition",
        source: "Mohapatra, Yu, Das & Kim §2.1 (after Chen & Shin 1987); codes derived in the module docs",
        params: &[],
        topologies: &[TopologyKind::Hypercube],
    },
    build: |t, _| {
        let cube = cube_of(NAME, t)?;
        Ok(Box::new(MultipleGrayCode::new(cube)?))
    },
};

impl MultipleGrayCode {
    /// A multiple-Gray-code allocator for `cube`.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] above Q_[`MAX_MULTIPLE_GRAY_DIM`].
    pub fn new(cube: Hypercube) -> Result<Managed<Self>, BuildError> {
        let n = cube.dim();
        if n > MAX_MULTIPLE_GRAY_DIM {
            return Err(BuildError::UnsuitableTopology {
                strategy: NAME,
                topology: Topology::Hypercube(cube).to_string(),
                reason: format!(
                    "{NAME} supports machines up to Q_{MAX_MULTIPLE_GRAY_DIM}; Q_{n} is too large"
                ),
            });
        }
        let codes = chain_codes(n)
            .iter()
            .filter_map(|g| gray::GrayCode::new(g).ok())
            .collect();
        Ok(Managed::new(
            Topology::Hypercube(cube),
            Self { cube, codes },
        ))
    }

    /// The codes, in search order.
    #[must_use]
    pub fn codes(&self) -> &[gray::GrayCode] {
        &self.codes
    }

    fn windows(&self, k: u32) -> impl Iterator<Item = Subcube> + '_ {
        let count = 1u32 << (self.cube.dim() - k + 1);
        self.codes
            .iter()
            .flat_map(move |c| (0..count).map(move |a| window(&self.cube, c, k, a)))
    }
}

impl Strategy for MultipleGrayCode {
    type Record = Subcube;

    fn name(&self) -> String {
        NAME.to_owned()
    }

    #[inline]
    fn choose(
        &mut self,
        view: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Option<Subcube>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        let nodes = view.occupancy();
        let found = if k == 0 {
            nodes.lowest_available().map(|v| sub(&self.cube, 0, v))
        } else {
            self.codes
                .iter()
                .find_map(|c| first_window(nodes, &self.cube, c, k))
        };
        Ok(found)
    }

    fn recognizable(
        &self,
        _: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        if k == 0 {
            return Ok(single_nodes(&self.cube));
        }
        let mut seen = HashSet::new();
        Ok(self
            .windows(k)
            .filter(|w| seen.insert(*w))
            .map(Partition::Subcube)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binom(n: u32, k: u32) -> usize {
        (0..k).fold(1usize, |acc, i| acc * (n - i) as usize / (i + 1) as usize)
    }

    #[test]
    fn chains_cover_every_subset_once_per_symmetric_chain() {
        for n in 0..=10u32 {
            let codes = chain_codes(n);
            assert_eq!(codes.len(), binom(n, n / 2), "n={n}");
            let mut covered = vec![false; 1 << n];
            for g in &codes {
                assert!(gray::GrayCode::new(g).is_ok());
                let mut s = 0u32;
                covered[0] = true;
                for &p in g {
                    s |= 1 << (p - 1);
                    covered[s as usize] = true;
                }
            }
            assert!(covered.iter().all(|&c| c), "n={n}");
        }
        assert_eq!(chain_codes(4)[0], vec![1, 2, 3, 4]);
    }
}
