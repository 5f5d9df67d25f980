//! Jobs and the shapes they request.

use core::fmt;

use partalloc_topology::Coords;
use partalloc_topology::gpushare::GpuRequest;

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
    /// One pod of a GPU-sharing cluster (CPU, memory, a share of one GPU
    /// or whole GPUs of allowed models) on one node.
    Pod {
        /// What the pod asks for.
        request: GpuRequest,
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
            Self::Pod { .. } => 1,
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
            Self::Pod { request } => write!(f, "{request}"),
        }
    }
}

/// A job of a workload. Build one with [`Job::new`] (and the `with_*`
/// setters); it is `#[non_exhaustive]`, so fields can be added without
/// breaking users.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
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

impl Job {
    /// Job `id` arriving at `arrival`, asking for `shape` for `service`
    /// time units, with no runtime estimate (see
    /// [`with_estimate`](Self::with_estimate)).
    ///
    /// ```
    /// use partalloc_workload::{Job, JobShape};
    /// let j = Job::new(1, 0.5, JobShape::Cube { dim: 2 }, 3.0).with_estimate(Some(4.0));
    /// assert_eq!((j.nodes(), j.estimate), (4, Some(4.0)));
    /// ```
    #[must_use]
    pub fn new(id: u64, arrival: f64, shape: JobShape, service: f64) -> Self {
        Self {
            id,
            arrival,
            shape,
            service,
            estimate: None,
        }
    }

    /// The job with the user's runtime estimate set to `estimate`.
    #[must_use]
    pub fn with_estimate(mut self, estimate: Option<f64>) -> Self {
        self.estimate = estimate;
        self
    }

    /// The job with identifier `id`.
    #[must_use]
    pub fn with_id(mut self, id: u64) -> Self {
        self.id = id;
        self
    }

    /// The job arriving at `arrival`.
    #[must_use]
    pub fn with_arrival(mut self, arrival: f64) -> Self {
        self.arrival = arrival;
        self
    }

    /// The job asking for `shape`.
    #[must_use]
    pub fn with_shape(mut self, shape: JobShape) -> Self {
        self.shape = shape;
        self
    }

    /// The job holding its partition for `service` time units.
    #[must_use]
    pub fn with_service(mut self, service: f64) -> Self {
        self.service = service;
        self
    }

    /// The number of nodes the job asks for.
    #[must_use]
    pub fn nodes(&self) -> u64 {
        self.shape.node_count()
    }

    /// The job's total service demand in node·time: residence × nodes
    /// (Mohapatra §4.1's "total service demand").
    #[must_use]
    pub fn demand(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "node counts are far below 2^53")]
        let n = self.nodes() as f64;
        self.service * n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_and_demand() {
        let j = Job::new(
            3,
            1.0,
            JobShape::Box {
                sides: Coords::new(&[2, 3]).unwrap(),
            },
            1.5,
        );
        assert_eq!(j.nodes(), 6);
        assert_eq!(j.demand(), 9.0);
        assert_eq!(j.shape.to_string(), "2x3");
        assert_eq!(JobShape::Cube { dim: 40 }.node_count(), 1 << 40);
        assert_eq!(JobShape::Cube { dim: 64 }.node_count(), u64::MAX);
        assert_eq!(JobShape::Nodes { count: 5 }.to_string(), "5 nodes");
    }

    #[test]
    fn huge_boxes_saturate() {
        let shape = JobShape::Box {
            sides: Coords::new(&[65536; 5]).unwrap(),
        };
        assert_eq!(shape.node_count(), u64::MAX);
    }
}
