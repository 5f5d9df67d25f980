//! Two tiny reference allocators for testing schedulers and run loops
//! (feature `test-support`): a bitmap buddy for hypercubes (Mohapatra §2.1:
//! the least m with nodes [m·2^k, (m+1)·2^k − 1] all free) and a first-fit
//! box allocator for 2-D meshes (lowest base in row-major order, fixed
//! orientation). They are deliberately simple; the real strategies live in
//! `partalloc-allocators`.
//!
//! ```
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_schedulers::testing::TestAlloc;
//! let mut b = TestAlloc::buddy(3)?;
//! let g = b.allocate(&Request::subcube(1))?;
//! assert_eq!(g.partition().to_string(), "00X");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::{
    AllocError, Allocator, Grant, GrantLedger, Occupancy, Partition, ReleaseError, Request,
};
use partalloc_topology::{
    Grid, GridBox, Hypercube, NodeId, NodeSet, Subcube, Topology, TopologyError,
};
use partalloc_workload::{Job, JobShape};

/// A job asking for a `dim`-cube, with no runtime estimate.
#[must_use]
pub fn cube_job(id: u64, dim: u32, arrival: f64, service: f64) -> Job {
    Job::new(id, arrival, JobShape::Cube { dim }, service)
}

/// A bitmap buddy (hypercubes) or first-fit (2-D meshes) allocator.
#[derive(Debug, Clone)]
pub struct TestAlloc {
    topology: Topology,
    occ: Occupancy,
    // Each grant's node range list: (first node, count) for buddy blocks,
    // or the box for meshes.
    ledger: GrantLedger<Partition>,
}

impl TestAlloc {
    /// A buddy allocator for Q_`n`.
    ///
    /// # Errors
    /// `n` too large.
    pub fn buddy(n: u32) -> Result<Self, TopologyError> {
        let topology = Topology::Hypercube(Hypercube::new(n)?);
        Ok(Self::new(topology))
    }

    /// A first-fit allocator for a `w`×`h` mesh.
    ///
    /// # Errors
    /// A zero side.
    pub fn first_fit(w: u32, h: u32) -> Result<Self, TopologyError> {
        let topology = Topology::Grid(Grid::mesh(&[w, h])?);
        Ok(Self::new(topology))
    }

    fn new(topology: Topology) -> Self {
        Self {
            occ: Occupancy::new(topology.num_nodes()),
            topology,
            ledger: GrantLedger::new(),
        }
    }

    fn find(&self, request: &Request) -> Result<Option<Partition>, AllocError> {
        let invalid = |reason: &str| AllocError::Invalid {
            request: *request,
            reason: reason.to_owned(),
        };
        match (&self.topology, request) {
            (Topology::Hypercube(h), Request::Subcube { .. } | Request::Nodes { .. }) => {
                let n = h.dim();
                let k = match *request {
                    Request::Subcube { dim } => dim,
                    _ => {
                        let c = request.node_count().max(1);
                        u64::BITS - (c - 1).leading_zeros()
                    }
                };
                if k > n {
                    return Err(invalid("larger than the machine"));
                }
                let size = 1usize << k;
                let blocked = self.occ.blocked();
                for alpha in 0..(1u32 << (n - k)) {
                    let lo = alpha as usize * size;
                    if blocked.is_empty_in(lo, lo + size) {
                        let s =
                            Subcube::aligned(n, k, alpha).map_err(|e| invalid(&e.to_string()))?;
                        return Ok(Some(Partition::Subcube(s)));
                    }
                }
                Ok(None)
            }
            (Topology::Grid(g), Request::Box { sides, .. }) if g.dims() == 2 => {
                if sides.len() != 2 {
                    return Err(invalid("needs two sides"));
                }
                let (w, h) = (sides[0], sides[1]);
                let (gw, gh) = (g.sides()[0], g.sides()[1]);
                if w > gw || h > gh {
                    return Err(invalid("larger than the machine"));
                }
                for y in 0..=gh - h {
                    for x in 0..=gw - w {
                        let free = (y..y + h).all(|yy| {
                            (x..x + w).all(|xx| self.occ.is_available((xx + gw * yy) as NodeId))
                        });
                        if free {
                            let b = GridBox::new(&[x, y], &[w, h])
                                .map_err(|e| invalid(&e.to_string()))?;
                            return Ok(Some(Partition::Box(b)));
                        }
                    }
                }
                Ok(None)
            }
            _ => Err(AllocError::Unsupported {
                strategy: "test",
                request: *request,
                reason: "buddy takes subcubes or node counts on hypercubes, first fit takes boxes on 2-D meshes",
            }),
        }
    }
}

impl Allocator for TestAlloc {
    fn name(&self) -> String {
        "test".to_owned()
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let Some(p) = self.find(request)? else {
            return Err(AllocError::NoRoom {
                request: *request,
                free: self.occ.free_count(),
                total: self.topology.num_nodes(),
            });
        };
        if let Partition::Subcube(s) = &p {
            let lo = s.base() as usize;
            self.occ.occupy_range(lo, lo + s.len() as usize);
        } else {
            let occ = &mut self.occ;
            p.for_each_node(&self.topology, |v| occ.occupy([v]))
                .map_err(|e| AllocError::Invalid {
                    request: *request,
                    reason: e.to_string(),
                })?;
        }
        let id = self.ledger.issue(p.clone());
        Ok(Grant::new(id, p, request.node_count()))
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let p = self.ledger.take(grant.id())?;
        if let Partition::Subcube(s) = &p {
            let lo = s.base() as usize;
            self.occ.vacate_range(lo, lo + s.len() as usize);
        } else {
            let occ = &mut self.occ;
            // The partition was produced by `find` for this topology.
            let _ = p.for_each_node(&self.topology, |v| occ.vacate([v]));
        }
        Ok(())
    }

    fn free_nodes(&self) -> usize {
        self.occ.free_count()
    }

    fn live_grants(&self) -> usize {
        self.ledger.len()
    }

    fn is_available(&self, node: NodeId) -> bool {
        self.occ.is_available(node)
    }

    fn busy_nodes(&self) -> NodeSet {
        self.occ.busy()
    }

    // Faults: the trait's defaults (refused, none faulty).

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let fresh = Self::new(self.topology.clone());
        Ok(fresh.find(request)?.into_iter().collect())
    }
}
