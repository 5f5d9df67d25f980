//! What a job asks an allocator for.

use core::fmt;

use partalloc_topology::gpushare::GpuRequest;
use partalloc_topology::{Coords, MAX_NODES, TopologyError};

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
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "RequestRepr", try_from = "RequestRepr")
)]
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
    /// One pod of a GPU-sharing cluster: CPU, memory, a share of one GPU
    /// or whole GPUs of allowed models, on one node (which it may share
    /// with other pods). Strategies of other machines serve it as one
    /// node.
    Pod {
        /// What the pod asks for.
        request: GpuRequest,
    },
}

/// The serialized form of a [`Request`]; deserializing a box goes through
/// [`Request::boxed`], so a file cannot hold a box no machine can serve.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
enum RequestRepr {
    Subcube { dim: u32 },
    Box { sides: Coords, rotate: bool },
    Nodes { count: u32 },
    Pod { request: GpuRequest },
}

#[cfg(feature = "serde")]
impl From<Request> for RequestRepr {
    fn from(r: Request) -> Self {
        match r {
            Request::Subcube { dim } => Self::Subcube { dim },
            Request::Box { sides, rotate } => Self::Box { sides, rotate },
            Request::Nodes { count } => Self::Nodes { count },
            Request::Pod { request } => Self::Pod { request },
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<RequestRepr> for Request {
    type Error = TopologyError;
    fn try_from(r: RequestRepr) -> Result<Self, TopologyError> {
        Ok(match r {
            RequestRepr::Subcube { dim } => Self::Subcube { dim },
            RequestRepr::Box { sides, rotate } => {
                let b = Self::boxed(&sides)?;
                if rotate { b.any_orientation() } else { b }
            }
            RequestRepr::Nodes { count } => Self::Nodes { count },
            RequestRepr::Pod { request } => Self::Pod { request },
        })
    }
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
    /// An empty or over-long side list, a zero side, or more than
    /// [`MAX_NODES`] nodes ([`TopologyError::TooManyNodes`]: no machine has
    /// that many).
    pub fn boxed(sides: &[u32]) -> Result<Self, TopologyError> {
        let sides = Coords::new(sides)?;
        if let Some(dim) = sides.iter().position(|&s| s == 0) {
            return Err(TopologyError::ZeroSide { dim });
        }
        let nodes: u128 = sides.iter().map(|&s| u128::from(s)).product();
        if nodes > u128::from(MAX_NODES) {
            return Err(TopologyError::TooManyNodes {
                nodes,
                max: MAX_NODES,
            });
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
            Self::Pod { .. } => 1,
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
            Self::Pod { request } => write!(f, "{request}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_above_max_nodes_are_refused() {
        assert!(matches!(
            Request::boxed(&[65536; 5]),
            Err(TopologyError::TooManyNodes { .. })
        ));
        assert!(matches!(
            Request::boxed(&[1 << 16, 1 << 15, 2]),
            Err(TopologyError::TooManyNodes { .. })
        ));
        let largest = Request::boxed(&[1 << 16, 1 << 15]);
        assert_eq!(largest.map(|r| r.node_count()), Ok(MAX_NODES));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn deserializing_validates_boxes() {
        for r in [
            Request::subcube(3),
            Request::nodes(5),
            Request::boxed(&[3, 2]).unwrap().any_orientation(),
        ] {
            let text = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), r, "{text}");
        }
        for bad in [
            r#"{"Box":{"sides":[65536,65536,65536,65536,65536],"rotate":false}}"#,
            r#"{"Box":{"sides":[3,0],"rotate":true}}"#,
            r#"{"Box":{"sides":[],"rotate":true}}"#,
        ] {
            let r = serde_json::from_str::<Request>(bad);
            assert!(r.is_err(), "{bad} gave {r:?}");
        }
    }
}
