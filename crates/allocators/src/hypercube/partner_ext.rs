//! The extended partner strategy (Al-Dhelaan & Bose §III.D, Algorithm 4)
//! with search depth δ.
//!
//! Step 1 is [`Partner`](super::Partner) (Algorithm 3). If it fails,
//! step 2 runs, literally:
//!
//! ```text
//! for i = 0 to 2^{n−k+1} − 2
//!   for d = 1 to min(k − 1, δ)            -- level n − k + 1 + d
//!     for j = 0 to n − k
//!       if B_{n−k+1}(i) has a j-th partner:
//!         cube = cube of B(i) and B^j(i), cyclically shifted right d places
//!         if cube is free: allocate it; stop
//! ```
//!
//! Shifting the n-character address right by d moves d of its trailing
//! X's to the front (Fig. 11: 0X0XX → X0X0X → XX0X0). With δ = ∞ the
//! strategy recognises [k(n − k) + 1]·2^{n−k} distinct Q_k (Theorem 8);
//! with a finite δ, (n − k + 1 + min(k − 1, δ)(n − k))·2^{n−k}. The j = 0
//! cubes of step 2 repeat cubes met earlier in the same search (Lemma 5
//! "ignores" them), so they never change the result; the loop keeps them
//! to follow the text.
//!
//! **Q_0**: as [`Partner`](super::Partner), the lowest available node.
//!
//! Cost: step 1 as Algorithm 3; step 2 tests up to
//! (2^{n−k+1} − 1)·min(k − 1, δ)·(n − k + 1) cubes against the node bitmap,
//! each test stopping at its first busy aligned run.
//!
//! ```
//! use partalloc_allocators::hypercube::{Delta, PartnerExt};
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::Hypercube;
//!
//! let q4 = Hypercube::new(4)?;
//! let ext = PartnerExt::new(q4, Delta::Infinite)?;
//! // Fig. 12: 20 Q_2 in a Q_4.
//! assert_eq!(ext.recognizable(&Request::subcube(2))?.len(), 20);
//! assert_eq!(ext.name(), "partner-ext[delta=inf]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::str::FromStr;
use std::collections::HashSet;

use thiserror::Error;

use partalloc_topology::{Hypercube, NodeId, Subcube, TopologyKind};

use super::common::{cube_of, low, requested_dim, sub};
use super::partner::Partner;
use super::tree::partner_cube;
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "partner-ext";

/// How many levels below n − k + 1 step 2 of Algorithm 4 searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Delta {
    /// Search at most this many extra levels (0: Algorithm 3 only).
    Finite(u32),
    /// Search every level (δ = ∞; maximal recognition).
    Infinite,
}

impl Delta {
    /// min(k − 1, δ): the number of shifts step 2 tries for a Q_k.
    #[must_use]
    pub fn depth(self, k: u32) -> u32 {
        let most = k.saturating_sub(1);
        match self {
            Self::Finite(d) => d.min(most),
            Self::Infinite => most,
        }
    }
}

impl fmt::Display for Delta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Finite(d) => write!(f, "{d}"),
            Self::Infinite => f.write_str("inf"),
        }
    }
}

/// A search depth that is neither a non-negative integer nor infinite.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("expected a non-negative integer or inf, got {text:?}")]
pub struct ParseDeltaError {
    text: String,
}

/// Parses a non-negative integer or `inf` / `infinite` / `∞`.
impl FromStr for Delta {
    type Err = ParseDeltaError;

    fn from_str(s: &str) -> Result<Self, ParseDeltaError> {
        match s.trim() {
            "inf" | "infinite" | "∞" => Ok(Self::Infinite),
            t => t
                .parse()
                .map(Self::Finite)
                .map_err(|_| ParseDeltaError { text: s.to_owned() }),
        }
    }
}

/// Extended partner allocation (Algorithm 4).
#[derive(Debug, Clone)]
pub struct PartnerExt {
    core: Partner,
    delta: Delta,
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "partner strategy extended to deeper tree levels by cyclic shifts, depth delta",
        source: "Al-Dhelaan & Bose 1988, §III.D Algorithm 4, Theorem 8",
        params: &[ParamInfo {
            name: "delta",
            default: "inf",
            doc: "levels searched below n-k+1 in step 2: a non-negative integer, or inf for all (0 = partner)",
        }],
        topologies: &[TopologyKind::Hypercube],
    },
    build: |t, spec| {
        let delta = spec.parse_or("delta", Delta::Infinite)?;
        Ok(Box::new(PartnerExt::new(cube_of(NAME, t)?, delta)?))
    },
};

/// The step-2 cube for (i, d, j): Algorithm 3's cube of B(i) and its j-th
/// partner, shifted cyclically right by d address positions.
#[inline]
fn shifted(cube: &Hypercube, k: u32, i: u32, d: u32, j: u32) -> Subcube {
    let n = cube.dim();
    let c = partner_cube(cube, k, i, j);
    sub(
        cube,
        (c.free_mask() >> d) | (low(d) << (n - d)),
        c.base() >> d,
    )
}

impl PartnerExt {
    /// An extended partner allocator for `cube` searching `delta` extra
    /// levels.
    ///
    /// # Errors
    /// None today: it returns a `Result` like every strategy constructor
    /// (see the crate docs).
    pub fn new(cube: Hypercube, delta: Delta) -> Result<Managed<Self>, BuildError> {
        let strategy = Self {
            core: Partner::bare(cube),
            delta,
        };
        Ok(Managed::new(
            partalloc_topology::Topology::Hypercube(cube),
            strategy,
        ))
    }

    /// The search depth δ.
    #[must_use]
    pub fn delta(&self) -> Delta {
        self.delta
    }

    /// Step 2's candidates in search order (with the repeats of j = 0).
    fn step2(&self, k: u32) -> impl Iterator<Item = Subcube> + '_ {
        let cube = &self.core.cube;
        let level = cube.dim() + 1 - k.max(1);
        let depth = self.delta.depth(k);
        let last = (1u32 << level).saturating_sub(1);
        (0..last).flat_map(move |i| {
            (1..=depth).flat_map(move |d| {
                (0..level)
                    .filter(move |j| i >> j & 1 == 0)
                    .map(move |j| shifted(cube, k, i, d, j))
            })
        })
    }
}

impl Strategy for PartnerExt {
    type Record = Subcube;

    fn name(&self) -> String {
        format!("{NAME}[delta={}]", self.delta)
    }

    #[inline]
    fn choose(
        &mut self,
        view: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Option<Subcube>, AllocError> {
        let k = requested_dim(NAME, request, self.core.cube.dim())?;
        let nodes = view.occupancy();
        let found = self
            .core
            .find(nodes, k)
            .or_else(|| self.step2(k).find(|c| nodes.subcube_available(c)));
        Ok(found)
    }

    #[inline]
    fn committed(&mut self, _: &View<'_, Subcube>, p: &Subcube) {
        self.core.take(p);
    }

    #[inline]
    fn released(&mut self, _: &View<'_, Subcube>, p: &Subcube) {
        self.core.give_back(p);
    }

    fn faulted(&mut self, _: &View<'_, Subcube>, node: NodeId) {
        self.core.tree.set_leaf(node, true);
    }

    fn repaired(&mut self, _: &View<'_, Subcube>, node: NodeId) {
        self.core.tree.set_leaf(node, false);
    }

    fn recognizable(
        &self,
        _: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let k = requested_dim(NAME, request, self.core.cube.dim())?;
        let mut seen = HashSet::new();
        Ok(self
            .core
            .alg3_cubes(k)
            .into_iter()
            .chain(self.step2(k))
            .filter(|c| seen.insert(*c))
            .map(Partition::Subcube)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Allocator;

    #[test]
    fn fig_10_and_11_addresses() {
        let q5 = Hypercube::new(5).unwrap();
        let p = PartnerExt::new(q5, Delta::Infinite).unwrap();
        let alg3: Vec<String> = p
            .core
            .alg3_cubes(3)
            .iter()
            .map(ToString::to_string)
            .collect();
        // Fig. 10, read row by row (α order, then partner order).
        assert_eq!(
            alg3,
            [
                "00XXX", "0X0XX", "X00XX", "0X1XX", "X01XX", "01XXX", "X10XX", "X11XX", "10XXX",
                "1X0XX", "1X1XX", "11XXX"
            ]
        );
        // Fig. 11: the shifts of columns 2 and 3.
        // 0X0XX and X00XX (α = 000, j = 1, 2) shifted once and twice.
        let s: Vec<String> = [(1, 1), (1, 2), (2, 1), (2, 2)]
            .map(|(d, j)| shifted(&q5, 3, 0, d, j).to_string())
            .to_vec();
        assert_eq!(s, ["X0X0X", "XX00X", "XX0X0", "XXX00"]);
        let all: HashSet<String> = p.step2(3).map(|c| c.to_string()).collect();
        for w in [
            "X0X0X", "X0X1X", "X1X0X", "X1X1X", "XX00X", "XX01X", "XX10X", "XX11X", "XX0X0",
            "XX0X1", "XX1X0", "XX1X1", "XXX00", "XXX01", "XXX10", "XXX11",
        ] {
            assert!(all.contains(w), "{w} missing");
        }
        assert_eq!(p.recognizable(&Request::subcube(3)).unwrap().len(), 28);
    }

    /// Errata entry 10: every j = 0 cube of step 2 is met earlier in the
    /// search (in Algorithm 3 or in step 2), so keeping it cannot change
    /// the result.
    #[test]
    fn step_2_j0_cubes_repeat_earlier_ones() {
        for n in 1..=8u32 {
            let cube = Hypercube::new(n).unwrap();
            let p = PartnerExt::new(cube, Delta::Infinite).unwrap();
            for k in 2..=n {
                let level = n - k + 1;
                let mut order: Vec<Subcube> = p.core.alg3_cubes(k);
                for i in 0..(1u32 << level) - 1 {
                    for d in 1..=p.delta.depth(k) {
                        for j in (0..level).filter(|j| i >> j & 1 == 0) {
                            let c = shifted(&cube, k, i, d, j);
                            if j == 0 {
                                assert!(order.contains(&c), "n={n} k={k} i={i} d={d}");
                            }
                            order.push(c);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn delta_parses() {
        assert_eq!("inf".parse::<Delta>(), Ok(Delta::Infinite));
        assert_eq!(" 2 ".parse::<Delta>(), Ok(Delta::Finite(2)));
        let e = "-1".parse::<Delta>().unwrap_err().to_string();
        assert!(e.contains("non-negative") && e.contains("-1"), "{e}");
        assert_eq!(Delta::Finite(5).depth(3), 2);
        assert_eq!(Delta::Infinite.depth(0), 0);
    }
}
