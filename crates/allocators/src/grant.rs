//! What an allocator hands out: a partition of nodes and a handle to give
//! it back.

use core::fmt;

use partalloc_topology::{GridBox, NodeId, Subcube, Topology, TopologyError};

/// The geometric description of a set of granted nodes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Partition {
    /// A subcube of a hypercube.
    Subcube(Subcube),
    /// An axis-aligned box of a grid.
    Box(GridBox),
    /// A union of disjoint boxes of a grid.
    Boxes(Vec<GridBox>),
    /// An arbitrary set of nodes, in increasing id order (non-contiguous
    /// allocation, or node sets such as bent Gray-code windows that are not
    /// boxes).
    Nodes(Vec<NodeId>),
}

impl Partition {
    /// Number of nodes.
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Self::Subcube(s) => s.len(),
            Self::Box(b) => b.volume(),
            Self::Boxes(bs) => bs.iter().map(GridBox::volume).sum(),
            Self::Nodes(ns) => ns.len() as u64,
        }
    }

    /// Whether the partition holds no node (only possible for empty lists).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` on every node id of the partition.
    ///
    /// # Errors
    /// The partition does not fit `topology` (a box on a hypercube, a
    /// subcube on a grid, or a box outside the grid).
    pub fn for_each_node(
        &self,
        topology: &Topology,
        mut f: impl FnMut(NodeId),
    ) -> Result<(), TopologyError> {
        let mismatch = |expected| TopologyError::DimensionMismatch { expected, got: 0 };
        // Boxes lie in the grid of any machine that has one (a mesh, a
        // torus, a pod's chips).
        match (self, topology.as_hypercube(), topology.as_grid()) {
            (Self::Subcube(s), Some(h), _) => {
                if s.cube_dim() != h.dim() {
                    return Err(TopologyError::DimensionMismatch {
                        expected: h.dim() as usize,
                        got: s.cube_dim() as usize,
                    });
                }
                s.nodes().for_each(f);
            }
            (Self::Box(b), _, Some(g)) => g.box_nodes(b)?.for_each(f),
            (Self::Boxes(bs), _, Some(g)) => {
                for b in bs {
                    g.box_nodes(b)?.for_each(&mut f);
                }
            }
            (Self::Nodes(ns), _, _) => {
                for &n in ns {
                    if n as usize >= topology.num_nodes() {
                        return Err(TopologyError::NodeOutOfRange {
                            node: u64::from(n),
                            nodes: topology.num_nodes() as u64,
                        });
                    }
                }
                ns.iter().copied().for_each(f);
            }
            (_, _, Some(g)) => return Err(mismatch(g.dims())),
            (_, _, None) => return Err(mismatch(0)),
        }
        Ok(())
    }

    /// The node ids, sorted.
    ///
    /// # Errors
    /// As [`Partition::for_each_node`].
    pub fn node_list(&self, topology: &Topology) -> Result<Vec<NodeId>, TopologyError> {
        let mut v = Vec::new();
        self.for_each_node(topology, |n| v.push(n))?;
        v.sort_unstable();
        Ok(v)
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Subcube(s) => write!(f, "{s}"),
            Self::Box(b) => write!(f, "{b}"),
            Self::Boxes(bs) => {
                for (i, b) in bs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ∪ ")?;
                    }
                    write!(f, "{b}")?;
                }
                Ok(())
            }
            Self::Nodes(ns) => write!(f, "{ns:?}"),
        }
    }
}

/// The handle that identifies a grant to the allocator that issued it.
///
/// It names the issuing allocator instance, a slot and the slot's
/// generation, so releasing a grant twice or to another allocator is
/// detected rather than corrupting state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GrantId {
    pub(crate) owner: u32,
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl fmt::Display for GrantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}@{}", self.slot, self.generation, self.owner)
    }
}

/// A granted partition.
///
/// ```
/// use partalloc_allocators::{registry, Request};
/// use partalloc_topology::Topology;
/// let topo: Topology = "hypercube:4".parse()?;
/// let mut alloc = registry::build("paging", &topo)?;
/// let g = alloc.allocate(&Request::nodes(3))?;
/// assert_eq!(g.granted_nodes(), 3);
/// assert_eq!(g.internal_fragmentation(), 0);
/// alloc.release(&g)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Grant {
    id: GrantId,
    partition: Partition,
    requested: u64,
}

impl Grant {
    /// A grant of `partition` for a job that asked for `requested` nodes.
    #[must_use]
    pub fn new(id: GrantId, partition: Partition, requested: u64) -> Self {
        Self {
            id,
            partition,
            requested,
        }
    }

    /// The handle to release it with.
    #[must_use]
    pub fn id(&self) -> GrantId {
        self.id
    }

    /// The granted nodes.
    #[must_use]
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// Number of nodes the job asked for.
    #[must_use]
    pub fn requested_nodes(&self) -> u64 {
        self.requested
    }

    /// Number of nodes granted (at least the number requested).
    #[must_use]
    pub fn granted_nodes(&self) -> u64 {
        self.partition.len()
    }

    /// Granted minus requested nodes: nodes the job holds but cannot use.
    #[must_use]
    pub fn internal_fragmentation(&self) -> u64 {
        self.granted_nodes().saturating_sub(self.requested)
    }
}
