//! What a partalloc run is made of, read once at the edge and checked
//! before anything is built: the experiment as one value
//! ([`experiment`]: machine, jobs, strategy, policy, measures, seeds,
//! stop), the machine ([`machine`]), the recorded trace ([`trace`]), and every file they name, read within a bound and kept
//! apart from the run's outputs ([`files`]). The command-line tool and the
//! Python package read through this crate, so they take the same machines,
//! traces and files, with the same messages.

pub mod experiment;
pub mod files;
pub mod forms;
pub mod machine;
pub mod trace;

mod error;

pub use error::SourceError;
pub use experiment::{Experiment, ExperimentError, WorkloadSource};
pub use machine::MachineSource;
