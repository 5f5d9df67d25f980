//! Extended Buddy (EB; Gautam & Chaudhary, PDCS 1993), the simplest slice
//! partitioning baseline of Kang et al. (IEEE TC 2003, §2), as
//! defined in `docs/baselines.md#extended-buddy`: Al-Dhelaan & Bose's Buddy
//! (Alg. 1) with base k.
//!
//! A request maps to a slice dimension R ([`SliceMapping`]); the candidate
//! R-slices are the aligned id blocks C_α = {α·k^R, …, (α+1)·k^R − 1}
//! (top N − R digits fixed, dimensions 0 … R−1 free), and the least α whose
//! k^R nodes are all available is granted. The grant is the whole slice,
//! so a job smaller than k^R shows internal fragmentation.
//!
//! ```
//! use partalloc_allocators::kary::ExtendedBuddy;
//! use partalloc_allocators::{Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! // Kang Fig. 1a: a 4×4 job on an 8-ary 3-cube gets a 64-node plane.
//! let mut eb = ExtendedBuddy::new("kary:8^3".parse()?)?;
//! let g = eb.allocate(&Request::boxed(&[4, 4, 1])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0, 0], &[8, 8, 1])?));
//! assert_eq!(g.internal_fragmentation(), 48);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Topology, TopologyKind};

use super::slice::SliceCore;
use super::{MAPPING_PARAM, SliceMapping, mapping_param};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, Managed, Partition, Request, Strategy, View};

/// The Extended Buddy strategy. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ExtendedBuddy {
    core: SliceCore,
}

impl ExtendedBuddy {
    /// EB with the default (node-count) mapping.
    ///
    /// # Errors
    /// [`BuildError`] unless the machine is a k-ary n-cube.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_mapping(topology, SliceMapping::default())
    }

    /// EB with the given request → slice mapping.
    ///
    /// # Errors
    /// As [`ExtendedBuddy::new`].
    pub fn with_mapping(
        topology: Topology,
        mapping: SliceMapping,
    ) -> Result<Managed<Self>, BuildError> {
        let core = SliceCore::new("extended-buddy", &topology, mapping)?;
        Ok(Managed::new(topology, Self { core }))
    }

    fn candidates(&self, r: u32) -> impl Iterator<Item = (usize, usize)> + '_ {
        let size = self.core.pow(r);
        (0..self.core.pow(self.core.n - r)).map(move |a| (a * size, (a + 1) * size))
    }

    fn slice(&self, r: u32, lo: usize) -> Option<Partition> {
        self.core.slice_box(lo, (1u32 << r) - 1).map(Partition::Box)
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "extended-buddy",
        summary: "k-ary buddy: the lowest aligned free k-ary R-slice (slice partitioning)",
        source: "Gautam & Chaudhary, PDCS 1993, as described in Kang et al., IEEE TC 2003, §2; docs/baselines.md#extended-buddy",
        params: &[MAPPING_PARAM],
        topologies: &[TopologyKind::Mesh, TopologyKind::Torus],
    },
    build: |t, s| {
        Ok(Box::new(ExtendedBuddy::with_mapping(
            t.clone(),
            mapping_param(s)?,
        )?))
    },
};

impl Strategy for ExtendedBuddy {
    type Record = Partition;

    fn name(&self) -> String {
        match self.core.mapping {
            SliceMapping::NodeCount => "extended-buddy".to_owned(),
            m => format!("extended-buddy[mapping={m}]"),
        }
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let occ = view.occupancy();
        let r = self.core.r_of(request)?;
        let found = self
            .candidates(r)
            .find(|&(lo, hi)| occ.range_available(lo, hi))
            .and_then(|(lo, _)| self.slice(r, lo));
        Ok(found)
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let r = self.core.r_of(request)?;
        Ok(self
            .candidates(r)
            .filter_map(|(lo, _)| self.slice(r, lo))
            .collect())
    }
}
