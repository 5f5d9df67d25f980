//! What a job asks an allocator for.

use core::fmt;

use partalloc_topology::{Coords, TopologyError};

/// A request for a partition.
///
/// Which kinds a strategy serves is part of its definition: hypercube
/// strategies take [`Request::Subcube`], mesh and k-ary n-cube strategies
/// take [`Request::Box`], non-contiguous strategies take any. A strategy
/// refuses the others with [`AllocError::Unsupported`](crate::AllocError::Unsupported).
///
/// ```
/// use partalloc_allocators::Request;
/// let r = Request::boxed(&[3, 2])?.any_orientation();
/// assert_eq!(r.node_count(), 6);
/// assert_eq!(r.to_string(), "3x2 box (any orientation)");
/// assert_eq!(Request::subcube(3).node_count(), 8);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Request {
    /// A subcube Q_dim of a hypercube (2^dim nodes).
    Subcube {
        /// The subcube's dimension.
        dim: u32,
    },
    /// An axis-aligned box with these sides, dimension 0 first.
    Box {
        /// Nodes along each dimension.
        sides: Coords,
        /// Whether the job accepts any orientation (any permutation of the
        /// sides; for a 2-D request (a, b), a×b or b×a). This is a
        /// permission: strategies that never rotate ignore it, and
        /// strategies that rotate honour `false` by trying only the given
        /// orientation.
        rotate: bool,
    },
    /// Any `count` nodes, contiguous or not.
    Nodes {
        /// Number of nodes.
        count: u32,
    },
}

impl Request {
    /// A request for a Q_`dim` subcube.
    #[must_use]
    pub fn subcube(dim: u32) -> Self {
        Self::Subcube { dim }
    }

    /// A request for a box with these sides in this orientation.
    ///
    /// # Errors
    /// An empty or over-long side list, or a zero side.
    pub fn boxed(sides: &[u32]) -> Result<Self, TopologyError> {
        let sides = Coords::new(sides)?;
        if let Some(dim) = sides.iter().position(|&s| s == 0) {
            return Err(TopologyError::ZeroSide { dim });
        }
        Ok(Self::Box {
            sides,
            rotate: false,
        })
    }

    /// The same request, accepting any orientation if it is a box.
    #[must_use]
    pub fn any_orientation(self) -> Self {
        match self {
            Self::Box { sides, .. } => Self::Box {
                sides,
                rotate: true,
            },
            other => other,
        }
    }

    /// A request for any `count` nodes.
    #[must_use]
    pub fn nodes(count: u32) -> Self {
        Self::Nodes { count }
    }

    /// The number of nodes the job needs.
    #[must_use]
    pub fn node_count(&self) -> u64 {
        match self {
            Self::Subcube { dim } => 1u64.checked_shl(*dim).unwrap_or(u64::MAX),
            Self::Box { sides, .. } => sides.product(),
            Self::Nodes { count } => u64::from(*count),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Subcube { dim } => write!(f, "Q_{dim}"),
            Self::Box { sides, rotate } => {
                for (i, s) in sides.iter().enumerate() {
                    if i > 0 {
                        f.write_str("x")?;
                    }
                    write!(f, "{s}")?;
                }
                f.write_str(" box")?;
                if *rotate {
                    f.write_str(" (any orientation)")?;
                }
                Ok(())
            }
            Self::Nodes { count } => write!(f, "{count} nodes"),
        }
    }
}
