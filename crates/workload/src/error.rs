//! Errors of workload construction.

use thiserror::Error;

use partalloc_topology::TopologyError;

/// Why a generator or workload could not be built. Nothing is built on
/// error.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// A parameter that must be a finite number greater than 0 is not.
    #[error("{name} must be a finite number greater than 0 (got {value})")]
    NotPositive {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// The offered load is at least 1, so the queue cannot be stable.
    #[error(
        "offered load {load} is at least 1: the system saturates; use a load below 1, or allow saturation explicitly for a saturation study"
    )]
    Saturated {
        /// The refused load.
        load: f64,
    },
    /// The load parameters contradict each other.
    #[error("inconsistent load parameters: {reason}")]
    InconsistentLoad {
        /// What is wrong.
        reason: String,
    },
    /// A probability (e.g. the hyper-exponential α) is outside (0, 1).
    #[error("{name} must lie strictly between 0 and 1 (got {value})")]
    BadProbability {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// The coefficient of variation cannot be reached.
    #[error(
        "a bimodal hyper-exponential with α = {alpha} cannot have coefficient of variation {cv}: {reason}"
    )]
    BadVariation {
        /// The branch probability.
        alpha: f64,
        /// The refused coefficient of variation.
        cv: f64,
        /// Which bound is violated.
        reason: &'static str,
    },
    /// A probability table is unusable.
    #[error("probability table: {reason}")]
    BadTable {
        /// What is wrong.
        reason: String,
    },
    /// A range is empty or reversed.
    #[error("{name}: lower bound {lo} must not exceed upper bound {hi}")]
    BadRange {
        /// The parameter.
        name: &'static str,
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// A shape does not fit the machine or is malformed.
    #[error("shape: {reason}")]
    BadShape {
        /// What is wrong.
        reason: String,
    },
    /// A request needs more nodes than the machine has, or none.
    #[error(
        "a request of {nodes} nodes cannot be served by a machine of {machine} nodes; requests need 1 to {machine} nodes"
    )]
    BadSize {
        /// The requested nodes.
        nodes: u64,
        /// The machine's nodes.
        machine: u64,
    },
    /// A topology value was rejected.
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// `Ok(x)` if `x` is finite and > 0.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, WorkloadError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(WorkloadError::NotPositive { name, value })
    }
}
