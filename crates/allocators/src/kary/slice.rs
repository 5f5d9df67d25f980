//! The bookkeeping shared by the slice-partitioning baselines (EB, EGC,
//! k-ary Partner): a node bitmap, the request → slice-dimension mapping
//! and grants recorded as partitions.

use partalloc_topology::{Grid, GridBox, NodeId, Topology};

use super::{SliceMapping, kary_grid, slice_dim};
use crate::BuildError;
use crate::{
    AllocError, FaultError, Grant, GrantLedger, Occupancy, Partition, ReleaseError, Request,
};

#[derive(Debug, Clone)]
pub(crate) struct SliceCore {
    pub(crate) strategy: &'static str,
    pub(crate) topology: Topology,
    pub(crate) grid: Grid,
    pub(crate) k: u32,
    pub(crate) n: u32,
    pub(crate) occ: Occupancy,
    pub(crate) ledger: GrantLedger<Partition>,
    pub(crate) mapping: SliceMapping,
}

impl SliceCore {
    pub(crate) fn new(
        strategy: &'static str,
        topology: Topology,
        mapping: SliceMapping,
    ) -> Result<Self, BuildError> {
        let (grid, k) = kary_grid(strategy, &topology)?;
        Ok(Self {
            strategy,
            topology,
            n: grid.dims() as u32,
            k,
            occ: Occupancy::new(grid.num_nodes()),
            grid,
            ledger: GrantLedger::new(),
            mapping,
        })
    }

    /// k^e.
    pub(crate) fn pow(&self, e: u32) -> usize {
        (self.k as usize).pow(e)
    }

    /// Whether every node of the id range lo..hi is available.
    pub(crate) fn range_free(&self, lo: usize, hi: usize) -> bool {
        self.occ.range_available(lo, hi)
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

    pub(crate) fn grant(
        &mut self,
        request: &Request,
        found: Option<Partition>,
    ) -> Result<Grant, AllocError> {
        let part = found.ok_or(AllocError::NoRoom {
            request: *request,
            free: self.occ.free_count(),
            total: self.grid.num_nodes(),
        })?;
        let occ = &mut self.occ;
        let _ = part.for_each_node(&self.topology, |nd| occ.occupy([nd]));
        let id = self.ledger.issue(part.clone());
        Ok(Grant::new(id, part, request.node_count()))
    }

    pub(crate) fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let part = self.ledger.take(grant.id())?;
        let occ = &mut self.occ;
        let _ = part.for_each_node(&self.topology, |nd| occ.vacate([nd]));
        Ok(())
    }

    pub(crate) fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.grid.check_node(node)?;
        self.occ.mark_faulty(node).map(drop)
    }

    pub(crate) fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.grid.check_node(node)?;
        self.occ.repair(node).map(drop)
    }
}
