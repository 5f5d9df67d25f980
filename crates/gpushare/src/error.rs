//! Errors of the GPU-sharing model, its readers and its experiments.

use thiserror::Error;

/// A request or placement the model refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// More GPU models than a cluster may name.
    #[error("more than {max} gpu models in one cluster")]
    TooManyModels {
        /// The limit.
        max: usize,
    },
    /// A GPU request that is neither a share of one GPU nor whole GPUs.
    #[error(
        "a pod takes a share (1-1000 thousandths) of one gpu or whole gpus, not {gpus} x {gpu_milli}"
    )]
    BadGpuRequest {
        /// GPUs asked for.
        gpus: u8,
        /// Thousandths per GPU asked for.
        gpu_milli: u32,
    },
    /// The placement does not fit the node now.
    #[error("the request does not fit the chosen gpus of this node")]
    DoesNotFit,
    /// Giving back what was not placed.
    #[error("the request was not placed on this node")]
    NotPlaced,
}

/// A trace file the readers refuse; the message names the file and line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: cannot read: {reason}")]
    Io {
        /// The file.
        file: String,
        /// What the system said.
        reason: String,
    },
    /// A line the reader cannot accept.
    #[error("{file}:{line}: {reason}")]
    Line {
        /// The file.
        file: String,
        /// The 1-based line.
        line: usize,
        /// What is wrong, in one lowercase line.
        reason: String,
    },
}

/// An experiment that cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// A policy name not known.
    #[error("unknown policy {name:?}; known: {known}")]
    UnknownPolicy {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A workload without GPU requests cannot be tuned to the cluster's GPUs.
    #[error("the workload asks for no gpu, so it cannot be tuned to the cluster's gpus")]
    NoGpuDemand,
    /// A cluster without GPUs.
    #[error("the cluster has no gpu")]
    NoGpus,
}
