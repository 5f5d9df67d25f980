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

use partalloc_topology::{GridBox, Topology};

use super::{MeshCore, MeshHooks, first_fit, mesh_allocator};
use crate::registry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{BuildError, Partition};

const NAME: &str = "first-fit";

/// First Fit: the first free a×b submesh in row-major order, no rotation.
#[derive(Debug, Clone)]
pub struct FirstFit {
    pub(super) core: MeshCore,
    run: Vec<u32>,
    cnt: Vec<u32>,
}

impl FirstFit {
    /// First Fit on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology) -> Result<Self, BuildError> {
        Ok(Self {
            core: MeshCore::new(NAME, topology)?,
            run: Vec::new(),
            cnt: Vec::new(),
        })
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "first free a×b submesh in row-major order, fixed orientation",
        source: "Zhu 1992, as described by Kim & Yoon §II.3; docs/baselines.md#first-fit",
        params: &[],
        topologies: super::MESH_KINDS,
    },
    build: |t, _| Ok(Box::new(FirstFit::new(t.clone())?)),
};

impl MeshHooks for FirstFit {
    fn strategy_name(&self) -> String {
        NAME.to_owned()
    }

    fn choose(&mut self, a: u32, b: u32, _rotate: bool) -> Option<GridBox> {
        first_fit(&self.core, a, b, false, &mut self.run, &mut self.cnt)
    }

    fn rotates(&self) -> bool {
        false
    }

    fn recognizable_rects(&self, a: u32, b: u32, _rotate: bool) -> Vec<Partition> {
        self.core.placements(a, b, false)
    }
}

mesh_allocator!(FirstFit, NAME);
