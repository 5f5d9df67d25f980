//! The partner strategy (Al-Dhelaan & Bose §III.C, Algorithm 3; the
//! "modified buddy" of Mohapatra et al. §2.1), on the tree array of §IV.
//!
//! A Q_k request (k ≥ 1) searches level n − k + 1 of the buddy tree, whose
//! nodes B_{n−k+1}(α) are the Q_{k−1} blocks, for the least α such that
//! B(α) is free and has a free p-th partner B^p(α) (α with bit p set, only
//! when bit p of α is 0), 0 ≤ p ≤ n − k, taking p as small as possible. The
//! grant is the union: the low k − 1 address bits and bit k − 1 + p free,
//! the others those of α. It recognises (n − k + 1)·2^{n−k} subcubes
//! (Lemma 3), all distinct (Lemma 4).
//!
//! Mohapatra et al. print the partner range as 1 ≤ p ≤ n − k + 1; this is
//! Al-Dhelaan's 0 ≤ p ≤ n − k shifted by one and the same search.
//!
//! **Q_0**: level n + 1 does not exist, so Algorithm 3 does not cover it;
//! the strategy grants the lowest available node (a scan of the leaves).
//!
//! Cost: the search reads the level's 2^{n−k+1} bits and their partners,
//! O((n − k + 1)·2^{n−k+1}) in the worst case; allocation and release
//! update the 2^{k+1} − 1 bits of the two subtrees plus the fathers. Faulty
//! processors are leaves set to 1, so every cube holding one reads busy.
//!
//! ```
//! use partalloc_allocators::hypercube::Partner;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::Hypercube;
//!
//! // Example 15: one faulty node in 000X and one in 100X; Q3 then Q2
//! // still fit.
//! let mut p = Partner::new(Hypercube::new(4)?)?;
//! p.mark_faulty(0b0001)?;
//! p.mark_faulty(0b1000)?;
//! let g3 = p.allocate(&Request::subcube(3))?;
//! let g2 = p.allocate(&Request::subcube(2))?;
//! assert_eq!((g3.partition().to_string(), g2.partition().to_string()),
//!            ("X1XX".to_owned(), "X01X".to_owned()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Hypercube, NodeId, Subcube, Topology, TopologyKind};

use super::common::{cube_of, requested_dim, sub};
use super::tree::{Tree, partner_cubes};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Occupancy, Partition, Request, Strategy, View};

const NAME: &str = "partner";

/// Partner allocation (Algorithm 3) on the tree array.
#[derive(Debug, Clone)]
pub struct Partner {
    pub(super) cube: Hypercube,
    pub(super) tree: Tree,
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "partner strategy: a free Q_{k-1} tree node and its least free partner",
        source: "Al-Dhelaan & Bose 1988, §III.C Algorithm 3 and §IV (Mohapatra's modified buddy)",
        params: &[],
        topologies: &[TopologyKind::Hypercube],
    },
    build: |t, _| Ok(Box::new(Partner::new(cube_of(NAME, t)?)?)),
};

impl Partner {
    /// A partner allocator for `cube`, all nodes free.
    ///
    /// # Errors
    /// None today: it returns a `Result` like every strategy constructor
    /// (see the crate docs).
    pub fn new(cube: Hypercube) -> Result<Managed<Self>, BuildError> {
        Ok(Managed::new(Topology::Hypercube(cube), Self::bare(cube)))
    }

    /// The strategy alone, for [`PartnerExt`](super::PartnerExt).
    pub(super) fn bare(cube: Hypercube) -> Self {
        Self {
            cube,
            tree: Tree::new(cube.dim()),
        }
    }

    /// Algorithm 3 (and the Q_0 rule) without changing state.
    pub(super) fn find(&self, nodes: &Occupancy, k: u32) -> Option<Subcube> {
        if k == 0 {
            nodes
                .lowest_available()
                .map(|node| sub(&self.cube, 0, node))
        } else {
            self.tree.partner_search(&self.cube, k)
        }
    }

    /// [`Strategy::committed`]: the tree marks the granted subcube.
    pub(super) fn take(&mut self, s: &Subcube) {
        self.tree.mark(s);
    }

    /// [`Strategy::released`]: the tree frees the subcube.
    pub(super) fn give_back(&mut self, s: &Subcube) {
        self.tree.unmark(s);
    }

    /// Algorithm 3's cubes (or the single nodes for k = 0), search order.
    pub(super) fn alg3_cubes(&self, k: u32) -> Vec<Subcube> {
        if k == 0 {
            (0..self.cube.num_nodes() as NodeId)
                .map(|v| sub(&self.cube, 0, v))
                .collect()
        } else {
            partner_cubes(&self.cube, k).collect()
        }
    }
}

impl Strategy for Partner {
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
        Ok(self.find(view.occupancy(), k))
    }

    #[inline]
    fn committed(&mut self, _: &View<'_, Subcube>, p: &Subcube) {
        self.take(p);
    }

    #[inline]
    fn released(&mut self, _: &View<'_, Subcube>, p: &Subcube) {
        self.give_back(p);
    }

    fn faulted(&mut self, _: &View<'_, Subcube>, node: NodeId) {
        self.tree.set_leaf(node, true);
    }

    fn repaired(&mut self, _: &View<'_, Subcube>, node: NodeId) {
        self.tree.set_leaf(node, false);
    }

    fn recognizable(
        &self,
        _: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        Ok(self
            .alg3_cubes(k)
            .into_iter()
            .map(Partition::Subcube)
            .collect())
    }
}
