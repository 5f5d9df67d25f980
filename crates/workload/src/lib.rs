//! Job streams for processor allocation and scheduling studies.
//!
//! The workloads of the papers, as composable generators seeded from the
//! caller's RNG (use [`ChaCha8Rng`], re-exported from `rand` with the
//! traits the signatures name, for anything reproducible):
//!
//! - arrivals: [`PoissonArrivals`], with λ from an [`OfferedLoad`]
//!   ρ = λ·m·r/N (Kim–Yoon §IV.1);
//! - shapes: [`CubicShapes`] (Kang §5.1), [`NoncubicShapes`] (Kang §5.3),
//!   [`CubeDims`] (Mohapatra §4.1, uniform or "normal" or any table),
//!   [`MeshSides`] (Kim–Yoon §IV.1: uniform, truncated normal, truncated
//!   exponential sides);
//! - service: [`Exponential`], [`UniformDemand`], [`HyperExponential`]
//!   (mean, α, C; Mohapatra §4.1), with [`Dependence`] choosing between
//!   Mohapatra's dependent and independent size/demand models;
//! - [`Workload`]: all three combined into an iterator of [`Job`]s;
//! - [`spec`]: the laws above in text (`exp:1`, `hyper:5,0.95,4`,
//!   `sides:normal:16x16`, …), parsed, printed and serialized in one form,
//!   and built into a [`Workload`] for a machine;
//! - [`lublin`]: the Lublin–Feitelson model of rigid parallel jobs (sizes,
//!   run times correlated with size, arrivals with a daily cycle), with
//!   its published parameter sets and text form `lublin:batch:nodes=128`;
//! - [`sacct`]: Slurm accounting dumps (`sacct --parsable2`) read as traces;
//! - [`swf`]: reading and writing Standard Workload Format traces, and
//!   [`ShapeMapping`]: their processor counts as shapes for a machine.
//!
//! # Quick start
//!
//! ```
//! use partalloc_workload::{
//!     ChaCha8Rng, CubeDims, Dependence, HyperExponential, Job, JobShape, SeedableRng, Workload,
//! };
//!
//! // Mohapatra §4: 10-cube, "normal" sizes, hyper-exponential residence
//! // (mean 5, α = 0.95, C = 4), dependent model, load 0.4.
//! let w = Workload::with_load(
//!     0.4,
//!     1024,
//!     CubeDims::mohapatra_normal(),
//!     HyperExponential::new(5.0, 0.95, 4.0)?,
//!     Dependence::Dependent,
//! )?;
//! let mut rng = ChaCha8Rng::seed_from_u64(7);
//! let jobs: Vec<Job> = w.jobs(&mut rng).take_while(|j| j.arrival < 100.0).collect();
//! assert!(jobs.iter().all(|j| matches!(j.shape, JobShape::Cube { dim } if dim <= 9)));
//! # Ok::<(), partalloc_workload::WorkloadError>(())
//! ```
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for the public data types.

#![deny(missing_docs)]

mod arrivals;
mod catalogue;
mod demand;
mod error;
mod format;
mod job;
pub mod lublin;
mod mapping;
mod options;
pub mod sacct;
mod shapes;
pub mod spec;
mod stream;
pub mod swf;

pub use arrivals::{MIN_LOAD, OfferedLoad, PoissonArrivals};
pub use catalogue::{CatalogueShapes, MAX_CATALOGUE_SHAPES};
pub use demand::{
    Constant, DemandDist, Dependence, Exponential, HyperExponential, MeanDistribution,
    UniformDemand,
};
pub use error::WorkloadError;
pub use format::{TraceFormat, UnknownTraceFormat};
pub use job::{Job, JobShape};
pub use mapping::{ShapeMapping, TraceMapping, UnknownMapping};
pub use options::WorkloadOptions;
pub use shapes::{
    CubeDims, CubicShapes, MAX_PLACEMENT_SIZES, MOHAPATRA_NORMAL_10, MeshSides, NodeCountLaw,
    NodeCounts, NoncubicShapes, ShapeDist, ShapeDistribution, SideLaw,
};
pub use spec::{
    Arrivals, CubeDimLaw, DemandLaw, ShapeKind, ShapeLaw, Sides, SpecError, WorkloadSpec,
};
pub use stream::{JobStream, Workload};

/// The random-number traits and generator of this crate's signatures
/// ([`Workload::jobs`] takes any [`Rng`]; every distribution is a
/// [`Distribution`]), so a user need not depend on `rand` itself.
pub use rand::{Rng, SeedableRng, rngs::ChaCha8Rng};
/// See [`Rng`].
pub use rand_distr::Distribution;
