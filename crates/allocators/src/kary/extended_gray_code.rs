//! Extended Gray Code (EGC; Gautam & Chaudhary, PDCS 1993), a slice
//! partitioning baseline of Kang et al. (IEEE TC 2003, §2), as
//! defined in `docs/baselines.md#extended-gray-code`: Al-Dhelaan & Bose's Gray-code
//! strategy (Alg. 2) with base k.
//!
//! Let s be the reflected k-ary Gray code sequence of node ids
//! ([`KaryGray`]). For R ≥ 1 candidate α is the window of k^R consecutive
//! codewords starting at position α·k^{R−1}; on a mesh (or a torus with odd
//! k) only windows that do not run past the end are used, on a torus with
//! even k the windows wrap around (the code is cyclic). The least α whose
//! window is entirely available is granted; R = 0 takes the first free node
//! in Gray order. Windows with α a multiple of k are straight slices
//! (`Partition::Box`); the others are bent node sets isomorphic to a k-ary
//! R-mesh, granted as `Partition::Nodes`.
//!
//! ```
//! use partalloc_allocators::kary::ExtendedGrayCode;
//! use partalloc_allocators::{Allocator, Partition, Request};
//! // docs/baselines.md#k-ary-worked-examples, example 1: 4-ary 2-cube, node 0 busy, a 4-node slice
//! // → codewords 01, 02, 03, 13.
//! let mut e = ExtendedGrayCode::new("kary:4^2".parse()?)?;
//! e.mark_faulty(0)?;
//! let g = e.allocate(&Request::boxed(&[4, 1])?)?;
//! assert_eq!(g.partition(), &Partition::Nodes(vec![1, 2, 3, 7]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{KaryGray, NodeId, Topology, TopologyKind};

use super::common::as_box_if_box;
use super::slice::SliceCore;
use super::{MAPPING_PARAM, SliceMapping, mapping_param};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, Managed, Partition, Request, Strategy, View};

/// The Extended Gray Code strategy. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ExtendedGrayCode {
    core: SliceCore,
    /// The Gray sequence as node ids.
    seq: Vec<NodeId>,
    cyclic: bool,
    /// Scratch: whether each aligned (R−1)-block of the sequence is free.
    block_free: Vec<bool>,
}

impl ExtendedGrayCode {
    /// EGC with the default (node-count) mapping.
    ///
    /// # Errors
    /// [`BuildError`] unless the machine is a k-ary n-cube.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_mapping(topology, SliceMapping::default())
    }

    /// EGC with the given request → slice mapping.
    ///
    /// # Errors
    /// As [`ExtendedGrayCode::new`].
    pub fn with_mapping(
        topology: Topology,
        mapping: SliceMapping,
    ) -> Result<Managed<Self>, BuildError> {
        let core = SliceCore::new("extended-gray-code", &topology, mapping)?;
        let gray =
            KaryGray::new(core.k, core.n as usize).map_err(|e| BuildError::UnsuitableTopology {
                strategy: "extended-gray-code",
                topology: topology.to_string(),
                reason: e.to_string(),
            })?;
        let cyclic = core.grid.is_torus() && core.k % 2 == 0;
        let strategy = Self {
            seq: gray.sequence(),
            cyclic,
            block_free: Vec::with_capacity(core.grid.num_nodes()),
            core,
        };
        Ok(Managed::new(topology, strategy))
    }

    /// Window starts (positions) in search order.
    fn windows(&self, r: u32) -> impl Iterator<Item = usize> + use<> {
        let total = self.seq.len();
        let (step, len) = if r == 0 {
            (1, 1)
        } else {
            (self.core.pow(r - 1), self.core.pow(r))
        };
        let count = if r == self.core.n {
            1
        } else if self.cyclic || r == 0 {
            total / step
        } else {
            (total - len) / step + 1
        };
        (0..count).map(move |a| a * step)
    }

    fn window(&self, r: u32, start: usize) -> Partition {
        let len = if r == 0 { 1 } else { self.core.pow(r) };
        let total = self.seq.len();
        let mut nodes: Vec<NodeId> = (start..start + len).map(|t| self.seq[t % total]).collect();
        nodes.sort_unstable();
        as_box_if_box(&self.core.grid, nodes)
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "extended-gray-code",
        summary: "k-ary Gray code: the least window of k^R consecutive reflected-Gray codewords that is free (slice partitioning)",
        source: "Gautam & Chaudhary, PDCS 1993, as described in Kang et al., IEEE TC 2003, §2; docs/baselines.md#extended-gray-code",
        params: &[MAPPING_PARAM],
        topologies: &[TopologyKind::Mesh, TopologyKind::Torus],
    },
    build: |t, s| {
        Ok(Box::new(ExtendedGrayCode::with_mapping(
            t.clone(),
            mapping_param(s)?,
        )?))
    },
};

impl Strategy for ExtendedGrayCode {
    type Record = Partition;

    fn name(&self) -> String {
        match self.core.mapping {
            SliceMapping::NodeCount => "extended-gray-code".to_owned(),
            m => format!("extended-gray-code[mapping={m}]"),
        }
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let occ = view.occupancy();
        let r = self.core.r_of(request)?;
        let total = self.seq.len();
        let blk = if r == 0 { 1 } else { self.core.pow(r - 1) };
        let k = if r == 0 { 1 } else { self.core.k as usize };
        // Free flags of the aligned (R−1)-blocks in Gray order: O(k^N).
        self.block_free.clear();
        for b in 0..total / blk {
            let free = self.seq[b * blk..(b + 1) * blk]
                .iter()
                .all(|&nd| occ.is_available(nd));
            self.block_free.push(free);
        }
        let nblocks = self.block_free.len();
        let found = self
            .windows(r)
            .find(|&start| {
                let b0 = start / blk;
                (0..k).all(|j| self.block_free[(b0 + j) % nblocks])
            })
            .map(|start| self.window(r, start));
        Ok(found)
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let r = self.core.r_of(request)?;
        Ok(self.windows(r).map(|s| self.window(r, s)).collect())
    }
}
