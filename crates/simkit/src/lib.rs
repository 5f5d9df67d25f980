//! Discrete-event simulation kit for processor allocation studies.
//!
//! The generic half of the simulator (docs/ARCHITECTURE.md, simkit):
//!
//! - [`Calendar`]: the future-event list, a binary heap on
//!   (time, insertion sequence), generic over the event payload;
//! - statistics: [`Welford`] (streaming mean/variance), [`TimeWeighted`]
//!   (utilization, queue length), [`Histogram`] and [`quantile`] (response
//!   time distributions), [`ConfidenceInterval`] (Student-t over
//!   replications);
//! - [`Replications`]: R independent replications in parallel, each with
//!   its own `ChaCha8Rng` stream, results in replication order so output is
//!   bit-identical at any thread count;
//! - `Sweep` (feature `csv`): CSV output of a parameter sweep that appends
//!   each finished point at once and resumes after an interruption;
//! - [`write_atomic`]: files that appear complete or not at all (a
//!   temporary file in the same directory, renamed into place);
//! - [`Stepper`]: the run loop with the scheduling decisions left to the
//!   caller, one call per decision (for learned schedulers).
//!
//! # Quick start
//!
//! An M/M/1 queue (arrival rate 0.5, service rate 1) simulated over 20
//! replications; the mean number in system has the closed form
//! ρ/(1 − ρ) = 1.
//!
//! ```
//! use partalloc_simkit::{Calendar, Replications, TimeWeighted};
//! use partalloc_simkit::RngExt;
//! use rand_distr::{Distribution, Exp};
//!
//! enum Ev { Arrive, Depart }
//!
//! let reps = Replications::new(42, 20)?;
//! let means = reps.run(|_r, rng| -> Result<f64, Box<dyn std::error::Error + Send + Sync>> {
//!     let (arr, svc) = (Exp::new(0.5)?, Exp::new(1.0)?);
//!     let mut cal = Calendar::new();
//!     let mut in_system = 0u32;
//!     let mut number = TimeWeighted::new(0.0, 0.0)?;
//!     cal.schedule(arr.sample(rng), Ev::Arrive)?;
//!     while let Some((t, ev)) = cal.pop_until(5_000.0) {
//!         match ev {
//!             Ev::Arrive => {
//!                 in_system += 1;
//!                 if in_system == 1 { cal.schedule_in(svc.sample(rng), Ev::Depart)?; }
//!                 cal.schedule_in(arr.sample(rng), Ev::Arrive)?;
//!             }
//!             Ev::Depart => {
//!                 in_system -= 1;
//!                 if in_system > 0 { cal.schedule_in(svc.sample(rng), Ev::Depart)?; }
//!             }
//!         }
//!         number.update(t, f64::from(in_system))?;
//!     }
//!     Ok(number.mean_until(5_000.0)?)
//! }).into_iter().collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
//! let ci = reps.summarize(&means, 0.95)?;
//! assert!((ci.mean - 1.0).abs() < 0.15, "{ci}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! A library user who only runs simulations can turn the default features
//! off (`default-features = false`); the results are the same.
//!
//! - `parallel` (default): [`Replications`] and `Sweep::run_pending` run on
//!   rayon's thread pool, and `thread_pool` (with `ThreadPool::install`)
//!   chooses its size. Without it they run one after another on the calling
//!   thread, in the same order, so the output is bit-identical.
//! - `csv` (default): the `sweep` module (resumable CSV sweeps) and
//!   `Report::write_jobs_csv`; pulls in `csv` and `serde`.
//! - `serde`: `Serialize`/`Deserialize` for the public data types.
//! - `plot`: the `plot` module, SVG line charts with confidence-interval
//!   error bars.
//!
//! `statrs` is always used: it supplies the Student-t quantile of
//! [`ConfidenceInterval`] (and needs nothing beyond `num-traits` and
//! `approx` without its own default features).

#![deny(missing_docs)]

pub mod atomic;
pub mod benchmark;
pub mod calendar;
pub mod capacity;
pub mod ci;
pub mod dispersal;
mod engine;
pub mod gpushare;
pub mod measure;
pub mod metrics;
pub mod observe;
#[cfg(feature = "plot")]
pub mod plot;
pub mod pod;
pub mod replicate;
pub mod report;
pub mod run;
pub mod runtime_model;
pub mod slowdown;
pub mod slurm;
pub mod stats;
pub mod step;
#[cfg(feature = "csv")]
pub mod sweep;
pub mod trace;

pub use atomic::{remove_temporaries, write_atomic};
pub use calendar::{Calendar, CalendarError};
pub use ci::{ConfidenceInterval, DEFAULT_LEVEL, t_quantile};
pub use dispersal::{DispersalMeter, GrantDispersal};
pub use measure::{Measure, MeasureSet};
/// The random-number traits of [`SimRng`], the generator every replication
/// draws from, so a user need not depend on `rand` itself.
pub use rand::{Rng, RngExt, SeedableRng};
#[cfg(feature = "parallel")]
pub use replicate::thread_pool;
pub use replicate::{MAX_REPLICATIONS, ReplicationError, Replications, SimRng, replication_rng};
#[cfg(feature = "csv")]
pub use report::{JobCsvWriter, ReportError};
pub use report::{JobRecord, Report, ResultValue, Results, SearchTime};
pub use run::{MAX_RECORDED_JOBS, MAX_WAITING, SimConfig, SimError, Simulation, Stop};
pub use runtime_model::{RuntimeModel, RuntimeModelError};
pub use slowdown::{SlowdownBound, SlowdownBoundError, bounded_slowdown};
pub use stats::{Histogram, StatsError, TimeWeighted, Welford, quantile};
pub use step::Stepper;
#[cfg(feature = "csv")]
pub use sweep::{Sweep, SweepError, SweepRunError};
pub use trace::{TraceError, TraceJobs, read_trace};
