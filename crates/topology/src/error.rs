//! The error type shared by every constructor and parser of this crate.

use thiserror::Error;

/// Why a topology, address or sub-partition could not be built or used.
///
/// Every fallible function of this crate returns this type; none of them
/// panics on input a caller can supply.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A shape with no dimensions was given.
    #[error("a shape needs at least one dimension")]
    NoDimensions,
    /// More dimensions than [`MAX_DIMS`](crate::MAX_DIMS) were given.
    #[error("{got} dimensions given, but at most {max} are supported")]
    TooManyDimensions {
        /// Number of dimensions given.
        got: usize,
        /// The supported maximum.
        max: usize,
    },
    /// A side of length zero was given.
    #[error("side {dim} has length 0; every side needs at least one node")]
    ZeroSide {
        /// The offending dimension.
        dim: usize,
    },
    /// The machine would have more nodes than node ids can address.
    #[error("the machine would have {nodes} nodes, more than the supported {max}")]
    TooManyNodes {
        /// Number of nodes the shape describes.
        nodes: u128,
        /// The supported maximum.
        max: u64,
    },
    /// A hypercube dimension above the supported maximum.
    #[error("hypercube dimension {dim} is above the supported maximum {max}")]
    HypercubeTooLarge {
        /// The requested dimension.
        dim: u32,
        /// The supported maximum.
        max: u32,
    },
    /// Two objects that must have the same number of dimensions do not.
    #[error("dimension mismatch: expected {expected} coordinates, got {got}")]
    DimensionMismatch {
        /// Dimensions expected.
        expected: usize,
        /// Dimensions given.
        got: usize,
    },
    /// A coordinate lies outside its side.
    #[error("coordinate {value} along dimension {dim} is outside 0..{side}")]
    CoordinateOutOfRange {
        /// The dimension.
        dim: usize,
        /// The coordinate given.
        value: u32,
        /// The side length along that dimension.
        side: u32,
    },
    /// A node id that the machine does not have.
    #[error("node {node} does not exist; the machine has {nodes} nodes")]
    NodeOutOfRange {
        /// The node id given.
        node: u64,
        /// Number of nodes of the machine.
        nodes: u64,
    },
    /// A box that does not lie inside the machine.
    #[error("box {boxed} does not fit inside a machine of sides {sides:?}")]
    BoxOutOfBounds {
        /// The box, printed.
        boxed: String,
        /// The machine's sides, dimension 0 first.
        sides: Vec<u32>,
    },
    /// A ternary subcube address that could not be parsed or does not fit.
    #[error("invalid subcube address {text:?}: {reason}")]
    InvalidAddress {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A topology description such as `mesh:64x64` that could not be parsed.
    #[error(
        "invalid topology {text:?}: {reason} (expected hypercube:N, mesh:AxB[xC…], torus:AxB[xC…], kary:K^N or kary-torus:K^N)"
    )]
    InvalidTopology {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}
