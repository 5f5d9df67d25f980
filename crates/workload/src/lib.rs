//! Job streams for processor allocation and scheduling studies.
//!
//! # Quick start
//!
//! ```
//! use partalloc_workload::{Job, JobShape};
//! let job = Job {
//!     id: 1,
//!     arrival: 0.5,
//!     shape: JobShape::Cube { dim: 3 },
//!     service: 2.0,
//!     estimate: None,
//! };
//! assert_eq!(job.shape.node_count(), 8);
//! ```
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for the public data types.

#![deny(missing_docs)]

mod job;

pub use job::{Job, JobShape};
