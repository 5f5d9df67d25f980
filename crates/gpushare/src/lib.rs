//! GPU-sharing clusters and the scheduling experiment of Weng et al.,
//! "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
//! Fragmentation Gradient Descent" (USENIX ATC 2023), reproduced against
//! the results its artifact ships. See `docs/fgd.md`.

pub mod analysis;
pub mod capacity;
pub mod error;
pub mod experiment;
pub mod frag;
pub mod golden;
pub mod gorand;
pub mod model;
pub mod openb;
pub mod policy;
pub mod reproduce;

pub use error::{ExperimentError, ModelError, TraceError};
pub use model::{MAX_GPUS, MILLI, Models, NodeSpec, NodeState, Placement, Request};
