//! Non-contiguous allocation: any free nodes, lowest ids first.
//!
//! Not from the papers: the "no contiguity" reference against which the
//! cost of contiguous allocation is measured (as in paging-style
//! non-contiguous allocation studies). It grants exactly the requested
//! number of nodes, so it never fragments internally and never refuses a
//! request while enough nodes are free.
//!
//! ```
//! use partalloc_allocators::{paging::Paging, Allocator, Partition, Request};
//! use partalloc_topology::Topology;
//! let mut p = Paging::new("mesh:4x4".parse::<Topology>()?)?;
//! let a = p.allocate(&Request::boxed(&[2, 3])?)?;
//! assert_eq!(a.partition(), &Partition::Nodes(vec![0, 1, 2, 3, 4, 5]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{NodeId, Topology, TopologyKind};

use crate::occupancy::occupancy_methods;
use crate::registry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{
    AllocError, Allocator, BuildError, FaultError, Grant, GrantLedger, Occupancy, Partition,
    ReleaseError, Request,
};

/// The non-contiguous reference allocator.
#[derive(Debug, Clone)]
pub struct Paging {
    topology: Topology,
    occupancy: Occupancy,
    // Each grant's nodes, kept here so a release trusts only our own record.
    ledger: GrantLedger<Vec<NodeId>>,
}

impl Paging {
    /// A paging allocator for any machine.
    ///
    /// # Errors
    /// None today: it returns a `Result` like every strategy constructor
    /// (see the crate docs).
    pub fn new(topology: Topology) -> Result<Self, BuildError> {
        Ok(Self {
            occupancy: Occupancy::new(topology.num_nodes()),
            topology,
            ledger: GrantLedger::new(),
        })
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "paging",
        summary: "non-contiguous reference: any free nodes, lowest ids first",
        source: "not from the papers; the no-contiguity baseline for trace replays",
        params: &[],
        topologies: &[
            TopologyKind::Hypercube,
            TopologyKind::Mesh,
            TopologyKind::Torus,
            TopologyKind::Blocks,
            TopologyKind::Tree,
        ],
    },
    build: |t, _| Ok(Box::new(Paging::new(t.clone())?)),
};

impl Allocator for Paging {
    fn name(&self) -> String {
        "paging".to_owned()
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let want = request.node_count();
        if want == 0 || want > self.topology.num_nodes() as u64 {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "needs {want} nodes; the machine has {}",
                    self.topology.num_nodes()
                ),
            });
        }
        if want > self.occupancy.free_count() as u64 {
            return Err(AllocError::NoRoom {
                request: *request,
                free: self.occupancy.free_count(),
                total: self.topology.num_nodes(),
            });
        }
        let mut nodes = Vec::with_capacity(want as usize);
        let mut id: NodeId = 0;
        while nodes.len() < want as usize {
            if self.occupancy.is_available(id) {
                nodes.push(id);
            }
            id += 1;
        }
        self.occupancy.occupy(nodes.iter().copied());
        let gid = self.ledger.issue(nodes.clone());
        Ok(Grant::new(gid, Partition::Nodes(nodes), want))
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let nodes = self.ledger.take(grant.id())?;
        self.occupancy.vacate(nodes);
        Ok(())
    }

    occupancy_methods!(occupancy, ledger);

    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.occupancy.mark_faulty(node).map(drop)
    }

    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.occupancy.repair(node).map(drop)
    }

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let want = request.node_count();
        if want == 0 || want > self.topology.num_nodes() as u64 {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!("needs {want} nodes"),
            });
        }
        // On an empty machine paging always grants the lowest ids.
        Ok(vec![Partition::Nodes((0..want as NodeId).collect())])
    }
}
