//! What the slice-partitioning baselines (EB, EGC, k-ary Partner) share:
//! the machine's radix and dimension, the request → slice-dimension
//! mapping and slices as boxes.

use partalloc_topology::{Grid, GridBox, NodeId, Topology};

use super::{SliceMapping, kary_grid, slice_dim};
use crate::BuildError;
use crate::{AllocError, Request};

#[derive(Debug, Clone)]
pub(crate) struct SliceCore {
    pub(crate) strategy: &'static str,
    pub(crate) grid: Grid,
    pub(crate) k: u32,
    pub(crate) n: u32,
    pub(crate) mapping: SliceMapping,
}

impl SliceCore {
    pub(crate) fn new(
        strategy: &'static str,
        topology: &Topology,
        mapping: SliceMapping,
    ) -> Result<Self, BuildError> {
        let (grid, k) = kary_grid(strategy, topology)?;
        Ok(Self {
            strategy,
            n: grid.dims() as u32,
            k,
            grid,
            mapping,
        })
    }

    /// k^e.
    pub(crate) fn pow(&self, e: u32) -> usize {
        (self.k as usize).pow(e)
    }

    /// The slice with base node `base` spanning dimensions `dims` (a bit
    /// mask).
    pub(crate) fn slice_box(&self, base: usize, dims: u32) -> Option<GridBox> {
        let c = self.grid.coords_of(base as NodeId).ok()?;
        let mut ext = c;
        for (i, e) in ext.iter_mut().enumerate() {
            *e = if dims & (1 << i) != 0 { self.k } else { 1 };
        }
        GridBox::new(&c, &ext).ok()
    }

    pub(crate) fn r_of(&self, request: &Request) -> Result<u32, AllocError> {
        slice_dim(self.strategy, self.mapping, &self.grid, self.k, request)
    }
}
