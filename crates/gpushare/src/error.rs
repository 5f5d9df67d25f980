//! Errors of the GPU-sharing model, its readers and its experiments.

use thiserror::Error;

pub use partalloc_topology::gpushare::ModelError;

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
