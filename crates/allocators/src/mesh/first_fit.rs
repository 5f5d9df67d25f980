//! First Fit (Zhu 1992, as summarised by Kim & Yoon §II.3).
//!
//! For a request (a, b) FF grants the first free a×b submesh in row-major
//! base order (lowest y, then lowest x) and never tries b×a, whatever the
//! request's `rotate` flag says. It recognises every a×b submesh but no
//! b×a one, so it is not complete (docs/baselines.md#first-fit).
//!
//! The search is Zhu's coverage technique in one pass: per row the run of
//! free nodes to the right of each column, per column the number of
//! consecutive rows whose run is at least a; the first base whose count
//! reaches b is the answer. O(W·H) time, no allocation on the hot path.
//! That node-by-node scan is `search=literal`; the default `search=fast`
//! finds the same base on row bit-words (free bases by word-level erosion,
//! O(H·⌈W/64⌉·log(ab))), and `can_allocate` runs the same search without
//! copying the allocator.
//!
//! ```
//! use partalloc_allocators::{mesh::FirstFit, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut ff = FirstFit::new("mesh:4x4".parse()?)?;
//! let col = ff.allocate(&Request::boxed(&[1, 4])?)?; // column x = 0
//! let g = ff.allocate(&Request::boxed(&[2, 2])?.any_orientation())?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[1, 0], &[2, 2])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::Topology;

use super::MeshGeom;
use super::scan::{SEARCH_PARAM, Search, search_methods, search_param, spec_name};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "first-fit";

/// The first free a×b submesh in row-major order; with `ROTATE` and a
/// request that may rotate, else the first free b×a one. First Fit is
/// `FirstFree<false>` ([`FirstFit`]), Adaptive Scan `FirstFree<true>`
/// ([`AdaptiveScan`](super::AdaptiveScan)): one search, one type.
#[derive(Debug, Clone)]
pub struct FirstFree<const ROTATE: bool> {
    geom: MeshGeom,
    search: Search,
}

/// First Fit: the first free a×b submesh in row-major order, no rotation.
pub type FirstFit = FirstFree<false>;

impl<const ROTATE: bool> FirstFree<ROTATE> {
    /// The registry name: `first-fit` or `adaptive-scan`.
    const NAME: &'static str = if ROTATE {
        super::adaptive_scan::NAME
    } else {
        NAME
    };

    /// The strategy on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        let strategy = Self {
            geom: MeshGeom::new(Self::NAME, &topology)?,
            search: Search::default(),
        };
        Ok(Managed::new(topology, strategy))
    }
}

search_methods!([const ROTATE: bool] FirstFree<ROTATE>);

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "first free a×b submesh in row-major order, fixed orientation",
        source: "Zhu 1992, as described by Kim & Yoon §II.3; docs/baselines.md#first-fit",
        params: &[SEARCH_PARAM],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        Ok(Box::new(
            FirstFit::new(t.clone())?.with_search(search_param(spec)?),
        ))
    },
};

impl<const ROTATE: bool> Strategy for FirstFree<ROTATE> {
    type Record = Partition;

    fn name(&self) -> String {
        spec_name(Self::NAME, &[], self.search.mode)
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        Ok(self.fits_at(view, request)?.map(Partition::Box))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        Ok(Some(self.fits_at(view, request)?.is_some()))
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.geom.listing(Self::NAME, request, ROTATE)
    }

    fn recognises(
        &self,
        _: &View<'_>,
        request: &Request,
        at: &Partition,
    ) -> Result<Partition, AllocError> {
        self.geom
            .recognises_placement(Self::NAME, request, ROTATE, at)
    }
}

impl<const ROTATE: bool> FirstFree<ROTATE> {
    /// The first free box for a validated request.
    fn fits_at(
        &self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<partalloc_topology::GridBox>, AllocError> {
        let (a, b, rotate) = self.geom.parse(Self::NAME, request, ROTATE)?;
        let core = self.geom.core(view);
        Ok(self.search.first_fit(&core, a, b, ROTATE && rotate))
    }
}
