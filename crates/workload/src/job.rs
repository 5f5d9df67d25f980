//! Jobs and the shapes they request.

use core::fmt;

use partalloc_topology::Coords;

/// What a job asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum JobShape {
    /// A subcube Q_dim of a hypercube.
    Cube {
        /// The subcube's dimension.
        dim: u32,
    },
    /// A box with these sides, dimension 0 first.
    Box {
        /// Nodes along each dimension.
        sides: Coords,
    },
    /// Any number of nodes.
    Nodes {
        /// Number of nodes.
        count: u32,
    },
}

impl JobShape {
    /// The number of nodes the shape covers.
    #[must_use]
    pub fn node_count(&self) -> u64 {
        match self {
            Self::Cube { dim } => 1u64.checked_shl(*dim).unwrap_or(u64::MAX),
            Self::Box { sides } => sides.product(),
            Self::Nodes { count } => u64::from(*count),
        }
    }
}

impl fmt::Display for JobShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cube { dim } => write!(f, "Q_{dim}"),
            Self::Box { sides } => {
                for (i, s) in sides.iter().enumerate() {
                    if i > 0 {
                        f.write_str("x")?;
                    }
                    write!(f, "{s}")?;
                }
                Ok(())
            }
            Self::Nodes { count } => write!(f, "{count} nodes"),
        }
    }
}

/// A job of a workload.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Job {
    /// Identifier, unique within a workload.
    pub id: u64,
    /// Arrival time (simulated time units).
    pub arrival: f64,
    /// What it asks for.
    pub shape: JobShape,
    /// How long it holds its partition once started (service demand or
    /// residence time, in simulated time units).
    pub service: f64,
    /// The user's runtime estimate, if known (used by backfilling).
    pub estimate: Option<f64>,
}
