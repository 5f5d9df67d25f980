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
    /// An offered load so small that arrival times lose the residence
    /// times (or overflow): below [`MIN_LOAD`](crate::MIN_LOAD).
    #[error(
        "offered load {load:e} is below {min:e}, the smallest accepted: arrivals would be so rare that arrival times swallow the residence times or overflow to infinity"
    )]
    LoadTooSmall {
        /// The refused load.
        load: f64,
        /// The smallest accepted load.
        min: f64,
    },
    /// An arrival rate whose mean gap 1/λ is not a finite number.
    #[error(
        "arrival rate {rate} gives an infinite mean gap between arrivals; raise the load or shorten the residence times"
    )]
    InfiniteGap {
        /// The refused rate.
        rate: f64,
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
    /// A range's bound is negative where only values from 0 make sense.
    #[error(
        "{name}: lower bound {lo} is negative; write the range as LO-HI with 0 <= LO <= HI, e.g. uniform:0-5"
    )]
    NegativeBound {
        /// The parameter.
        name: &'static str,
        /// The refused lower bound.
        lo: f64,
    },
    /// A range's bound is infinite or not a number.
    #[error("{name}: bound {value} is not a finite number")]
    InfiniteBound {
        /// The parameter.
        name: &'static str,
        /// The refused bound.
        value: f64,
    },
    /// A value above the largest one supported.
    #[error("{name} {value} is above the largest supported, {max}")]
    AboveMaximum {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: u64,
        /// The largest accepted value.
        max: u64,
    },
    /// Weights whose sum is not a finite number although each one is.
    #[error(
        "{what}: the weights add up to more than the largest finite number (about 1.8e308); divide them all by a common factor"
    )]
    WeightsOverflow {
        /// What the weights are for.
        what: &'static str,
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

/// The sum of `weights`, each already checked finite and at least 0, or
/// [`WorkloadError::WeightsOverflow`] if the sum is not finite.
pub(crate) fn weight_sum(what: &'static str, weights: &[f64]) -> Result<f64, WorkloadError> {
    let total: f64 = weights.iter().sum();
    if total.is_finite() {
        Ok(total)
    } else {
        Err(WorkloadError::WeightsOverflow { what })
    }
}

/// `Ok(x)` if `x` is finite and > 0.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, WorkloadError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(WorkloadError::NotPositive { name, value })
    }
}
