//! k-ary Partner (Windisch, Lo & Bose, ICPP 1995), a slice-partitioning
//! baseline of Kang et al. (IEEE TC 2003, §2, Fig. 1a right), as
//! defined in `docs/baselines.md#k-ary-partner`: Al-Dhelaan & Bose's partner
//! strategy (Alg. 3) with base k.
//!
//! For a k-ary R-slice (R ≥ 1) let P = N − R + 1 and index the (R−1)-blocks
//! B(α) (ids α·k^{R−1} … (α+1)·k^{R−1} − 1) by their P-digit prefix α. The
//! p-th partner set of α (digit p of α is 0) is the k blocks obtained by
//! setting that digit to 0 … k−1. The least α, and for it the least p, such
//! that every block of the partner set is free is granted: a slice spanning
//! dimensions 0 … R−2 and R−1+p. R = 0 takes the lowest free node.
//!
//! ```
//! use partalloc_allocators::kary::KaryPartner;
//! use partalloc_allocators::{Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! // docs/baselines.md#k-ary-worked-examples, example 1: 4-ary 2-cube, node 0 busy, a 4-node slice.
//! let mut p = KaryPartner::new("kary:4^2".parse()?)?;
//! p.mark_faulty(0)?;
//! let g = p.allocate(&Request::boxed(&[4, 1])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[1, 0], &[1, 4])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Topology, TopologyKind};

use super::slice::SliceCore;
use super::{MAPPING_PARAM, SliceMapping, mapping_param};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, Managed, Occupancy, Partition, Request, Strategy, View};

/// The k-ary Partner strategy. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct KaryPartner {
    core: SliceCore,
}

impl KaryPartner {
    /// k-ary Partner with the default (node-count) mapping.
    ///
    /// # Errors
    /// [`BuildError`] unless the machine is a k-ary n-cube.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_mapping(topology, SliceMapping::default())
    }

    /// k-ary Partner with the given request → slice mapping.
    ///
    /// # Errors
    /// As [`KaryPartner::new`].
    pub fn with_mapping(
        topology: Topology,
        mapping: SliceMapping,
    ) -> Result<Managed<Self>, BuildError> {
        let core = SliceCore::new("kary-partner", &topology, mapping)?;
        Ok(Managed::new(topology, Self { core }))
    }

    /// Candidates (α, p) in search order, with the base id and span mask.
    fn candidates(&self, r: u32) -> impl Iterator<Item = (usize, u32, usize, u32)> + '_ {
        let k = self.core.k as usize;
        let n = self.core.n;
        let (count, pdigits) = if r == 0 {
            (self.core.pow(n), 0)
        } else {
            (self.core.pow(n - r + 1), n - r + 1)
        };
        let blk = if r == 0 { 1 } else { self.core.pow(r - 1) };
        (0..count).flat_map(move |a| {
            let ps = if r == 0 { 1 } else { pdigits };
            (0..ps).filter_map(move |p| {
                if r == 0 {
                    return Some((a, 0, a, 0));
                }
                let digit = (a / k.pow(p)) % k;
                (digit == 0).then(|| {
                    let span = ((1u32 << (r - 1)) - 1) | (1u32 << (r - 1 + p));
                    (a, p, a * blk, span)
                })
            })
        })
    }

    fn partner_free(&self, occ: &Occupancy, r: u32, a: usize, p: u32) -> bool {
        if r == 0 {
            return occ.range_available(a, a + 1);
        }
        let k = self.core.k as usize;
        let blk = self.core.pow(r - 1);
        let step = k.pow(p);
        // B(α) first (it is the v = 0 member), then the rest of the set.
        (0..k).all(|v| {
            let b = a + v * step;
            occ.range_available(b * blk, (b + 1) * blk)
        })
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "kary-partner",
        summary: "k-ary partner: the least block α and partner direction p whose k partner blocks are free (slice partitioning)",
        source: "Windisch, Lo & Bose, ICPP 1995, as described in Kang et al., IEEE TC 2003, §2; docs/baselines.md#k-ary-partner",
        params: &[MAPPING_PARAM],
        topologies: &[TopologyKind::Mesh, TopologyKind::Torus],
    },
    build: |t, s| {
        Ok(Box::new(KaryPartner::with_mapping(
            t.clone(),
            mapping_param(s)?,
        )?))
    },
};

impl Strategy for KaryPartner {
    type Record = Partition;

    fn name(&self) -> String {
        match self.core.mapping {
            SliceMapping::NodeCount => "kary-partner".to_owned(),
            m => format!("kary-partner[mapping={m}]"),
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
            .find(|&(a, p, _, _)| self.partner_free(occ, r, a, p))
            .and_then(|(_, _, base, span)| self.core.slice_box(base, span).map(Partition::Box));
        Ok(found)
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let r = self.core.r_of(request)?;
        Ok(self
            .candidates(r)
            .filter_map(|(_, _, base, span)| self.core.slice_box(base, span).map(Partition::Box))
            .collect())
    }
}
