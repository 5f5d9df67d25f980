//! The Gray code strategy (Al-Dhelaan & Bose §III.B, Algorithm 2; Chen &
//! Shin 1987) for any code G_n{g_1, …, g_n}.
//!
//! The allocation bits are kept in code order: bit p stands for node
//! G_n(p). A Q_k request (k ≥ 1) takes the least α, 0 ≤ α ≤ 2^{n−k+1} − 1,
//! such that the 2^k bits at positions α·2^{k−1} … (α+2)·2^{k−1} − 1
//! (mod 2^n) are all 0, and grants the nodes G_n of those positions. The
//! window is two consecutive aligned Q_{k−1} blocks of positions, whose
//! codewords differ in one high bit, so the grant is a subcube: in the
//! reflected code its free bits are the low k − 1 plus the bit where
//! brgc(α) and brgc(α+1) differ; the parameters g then permute the bits.
//!
//! It recognises 2^{n−k+1} subcubes for 1 ≤ k < n. At k = n the two
//! windows α = 0, 1 are the same whole machine, so it recognises 1, not 2
//! (`docs/paper-errata.md` (hypercube part)).
//!
//! **Q_0**: 2^{k−1} is not an integer, so Algorithm 2 does not cover it;
//! the strategy grants the lowest available node (by address, not by code
//! position).
//!
//! Tie-breaks: the least α, as the text says. Fig. 6 of the paper lists a
//! different I_4/I_5 than this text gives; see the errata.
//!
//! ```
//! use partalloc_allocators::hypercube::GrayCode;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::{gray, Hypercube};
//!
//! // Example 10 as Algorithm 2 computes it.
//! let mut g = GrayCode::new(Hypercube::new(4)?, gray::GrayCode::reflected(4)?)?;
//! let got: Vec<String> = [0, 3, 2, 1, 0]
//!     .into_iter()
//!     .map(|k| g.allocate(&Request::subcube(k)).map(|x| x.partition().to_string()))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(got, ["0000", "X1XX", "10XX", "00X1", "0010"]);
//! assert_eq!(g.name(), "gray-code[g=1,2,3,4]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::gray::{self, brgc};
use partalloc_topology::{Hypercube, NodeId, NodeSet, Subcube, Topology, TopologyKind};

use super::common::{cube_of, low, requested_dim, single_nodes, sub};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{
    AllocError, Allocator, BuildError, GrantRecord, Managed, Occupancy, Partition, Request,
    Strategy, StrategySpec, View,
};

const NAME: &str = "gray-code";

/// Gray-code allocation (Algorithm 2) with any code G_n{g}.
#[derive(Debug, Clone)]
pub struct GrayCode {
    cube: Hypercube,
    code: gray::GrayCode,
    /// Allocation bits in code order: bit p is node G_n(p).
    positions: NodeSet,
}

/// A grant of [`GrayCode`]: its subcube and the window that took it (the
/// request's k and the window index α, or the node for k = 0), so that a
/// release frees the same code positions.
#[derive(Debug, Clone, Copy)]
pub struct GrayWindow {
    cube: Subcube,
    k: u32,
    alpha: u32,
}

impl GrantRecord for GrayWindow {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, topology: &Topology, busy: bool) {
        self.cube.mark(occupancy, topology, busy);
    }

    fn available(&self, occupancy: &Occupancy, topology: &Topology) -> bool {
        self.cube.available(occupancy, topology)
    }

    #[inline]
    fn partition(&self) -> Partition {
        Partition::Subcube(self.cube)
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "Gray-code strategy: least window of 2^k code positions starting at a multiple of 2^(k-1)",
        source: "Al-Dhelaan & Bose 1988, §III.B, Algorithm 2 (Chen & Shin 1987)",
        params: &[ParamInfo {
            name: "g",
            default: "1,2,…,n",
            doc: "the code parameters g_1,…,g_n, a permutation of 1..n (default: the binary reflected code)",
        }],
        topologies: &[TopologyKind::Hypercube],
    },
    build: build_entry,
};

fn build_entry(t: &Topology, spec: &StrategySpec) -> Result<Box<dyn Allocator>, BuildError> {
    let cube = cube_of(NAME, t)?;
    let code = match spec.get("g") {
        None => gray::GrayCode::reflected(cube.dim()),
        Some(v) => {
            let params = v
                .split(',')
                .map(|x| x.trim().parse::<u32>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| spec.invalid("g", format!("expected integers 1..n: {e}")))?;
            gray::GrayCode::new(&params)
        }
    }
    .map_err(|e| spec.invalid("g", e.to_string()))?;
    let g = GrayCode::new(cube, code).map_err(|e| spec.invalid("g", e.to_string()))?;
    Ok(Box::new(g))
}

/// The window of Algorithm 2 for a Q_k (k ≥ 1) at α, as a subcube of the
/// reflected code's bit space (before the parameters permute the bits).
#[inline]
pub(super) fn reflected_window(n: u32, k: u32, alpha: u32) -> (u32, u32) {
    let m = low(n - k + 1);
    let here = brgc(alpha);
    let next = brgc((alpha + 1) & m);
    (low(k - 1) | (here ^ next) << (k - 1), here << (k - 1))
}

/// The window of `code` for a Q_k (k ≥ 1) at α, in node space.
#[inline]
pub(super) fn window(cube: &Hypercube, code: &gray::GrayCode, k: u32, alpha: u32) -> Subcube {
    let (free, fixed) = reflected_window(cube.dim(), k, alpha);
    sub(cube, code.scatter(free), code.scatter(fixed))
}

impl GrayCode {
    /// A Gray-code allocator for `cube` with `code`.
    ///
    /// # Errors
    /// [`BuildError::CodeWidth`] if the code's width is not the cube's
    /// dimension.
    pub fn new(cube: Hypercube, code: gray::GrayCode) -> Result<Managed<Self>, BuildError> {
        if code.width() != cube.dim() {
            return Err(BuildError::CodeWidth {
                code: code.width(),
                cube: cube.dim(),
            });
        }
        Ok(Managed::new(
            Topology::Hypercube(cube),
            Self {
                cube,
                code,
                positions: NodeSet::new(cube.num_nodes()),
            },
        ))
    }

    /// The code G_n{g} in use.
    #[must_use]
    pub fn code(&self) -> &gray::GrayCode {
        &self.code
    }

    /// Positions of window α for a Q_k (two blocks of 2^{k−1}).
    fn blocks(&self, k: u32, alpha: u32) -> [(usize, usize); 2] {
        let size = 1usize << (k - 1);
        let count = 1usize << (self.cube.dim() - k + 1);
        let a = alpha as usize;
        let b = (a + 1) % count;
        [(a * size, (a + 1) * size), (b * size, (b + 1) * size)]
    }

    fn search(&self, k: u32) -> Option<u32> {
        let size = 1usize << (k - 1);
        let count = 1usize << (self.cube.dim() - k + 1);
        if k <= 6 && self.cube.dim() >= 6 {
            return self.search_words(k);
        }
        let free = |q: usize| self.positions.is_empty_in(q * size, (q + 1) * size);
        let first = free(0);
        let mut here = first;
        for a in 0..count {
            let next = if a + 1 == count { first } else { free(a + 1) };
            if here && next {
                return Some(a as u32);
            }
            here = next;
        }
        None
    }
}

impl GrayCode {
    /// [`GrayCode::search`] a word at a time when blocks of 2^{k−1}
    /// positions are smaller than a word: mark the free blocks of each word,
    /// then a window is free where a free block is followed by a free one
    /// (the block after the last word's last block is block 0).
    fn search_words(&self, k: u32) -> Option<u32> {
        let b = k - 1;
        let size = 1u32 << b;
        let words = self.positions.words().len();
        let free_of = |wi: usize| self.positions.empty_block_starts(wi, b);
        let first = free_of(0);
        let mut here = first;
        for wi in 0..words {
            let next = if wi + 1 == words {
                first
            } else {
                free_of(wi + 1)
            };
            let follow = (here >> size) | ((next & 1) << (64 - size));
            let both = here & follow;
            if both != 0 {
                let pos = wi as u32 * 64 + both.trailing_zeros();
                return Some(pos >> b);
            }
            here = next;
        }
        None
    }
}

impl Strategy for GrayCode {
    type Record = GrayWindow;

    fn name(&self) -> String {
        let g: Vec<String> = self.code.params().iter().map(ToString::to_string).collect();
        if g.is_empty() {
            return NAME.to_owned();
        }
        format!("{NAME}[g={}]", g.join(","))
    }

    /// The least free window (the lowest available node for k = 0); the
    /// code positions are taken in [`committed`](Strategy::committed).
    #[inline]
    fn choose(
        &mut self,
        view: &View<'_, GrayWindow>,
        request: &Request,
    ) -> Result<Option<GrayWindow>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        Ok(if k == 0 {
            view.occupancy().lowest_available().map(|node| GrayWindow {
                cube: sub(&self.cube, 0, node),
                k,
                alpha: node,
            })
        } else {
            self.search(k).map(|alpha| GrayWindow {
                cube: window(&self.cube, &self.code, k, alpha),
                k,
                alpha,
            })
        })
    }

    fn fits(
        &self,
        view: &View<'_, GrayWindow>,
        request: &Request,
    ) -> Result<Option<bool>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        Ok(Some(if k == 0 {
            view.occupancy().lowest_available().is_some()
        } else {
            self.search(k).is_some()
        }))
    }

    #[inline]
    fn committed(&mut self, _: &View<'_, GrayWindow>, w: &GrayWindow) {
        if w.k == 0 {
            let _ = self.positions.insert(self.code.position(w.alpha));
        } else {
            for (lo, hi) in self.blocks(w.k, w.alpha) {
                let _ = self.positions.insert_range(lo, hi);
            }
        }
    }

    #[inline]
    fn released(&mut self, _: &View<'_, GrayWindow>, w: &GrayWindow) {
        if w.k == 0 {
            let _ = self.positions.remove(self.code.position(w.alpha));
        } else {
            for (lo, hi) in self.blocks(w.k, w.alpha) {
                let _ = self.positions.remove_range(lo, hi);
            }
        }
    }

    fn faulted(&mut self, _: &View<'_, GrayWindow>, node: NodeId) {
        let _ = self.positions.insert(self.code.position(node));
    }

    fn repaired(&mut self, _: &View<'_, GrayWindow>, node: NodeId) {
        let _ = self.positions.remove(self.code.position(node));
    }

    fn recognizable(
        &self,
        _: &View<'_, GrayWindow>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        if k == 0 {
            return Ok(single_nodes(&self.cube));
        }
        // Only k = n repeats a window (α = 0 and 1 are both the machine).
        let mut seen = std::collections::HashSet::new();
        Ok((0..1u32 << (self.cube.dim() - k + 1))
            .map(|a| window(&self.cube, &self.code, k, a))
            .filter(|w| seen.insert(*w))
            .map(Partition::Subcube)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Algorithm 2, step 3, literally: the nodes G_n(β mod 2^n) for
    /// α·2^{k−1} ≤ β ≤ (α+2)·2^{k−1} − 1.
    fn literal_window(code: &gray::GrayCode, k: u32, alpha: u64) -> Vec<NodeId> {
        let lo = alpha << (k - 1);
        let hi = (alpha + 2) << (k - 1);
        let mut v: Vec<NodeId> = (lo..hi).map(|b| code.codeword(b)).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn windows_are_the_literal_position_ranges_for_many_codes() {
        let perms: [&[u32]; 6] = [
            &[1, 2, 3, 4, 5, 6],
            &[2, 3, 1],
            &[3, 1, 2],
            &[4, 2, 1, 3],
            &[5, 3, 1, 2, 4],
            &[6, 1, 5, 2, 4, 3],
        ];
        for p in perms {
            let code = gray::GrayCode::new(p).unwrap();
            let n = code.width();
            let cube = Hypercube::new(n).unwrap();
            for k in 1..=n {
                for a in 0..1u32 << (n - k + 1) {
                    let w = window(&cube, &code, k, a);
                    assert_eq!(w.dim(), k);
                    assert_eq!(
                        w.nodes().collect::<Vec<_>>(),
                        literal_window(&code, k, u64::from(a)),
                        "g={p:?} k={k} alpha={a}"
                    );
                }
            }
        }
    }
}
