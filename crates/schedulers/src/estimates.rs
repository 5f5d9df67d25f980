//! Which run time a policy plans with: the user's estimate (SWF field 9) or
//! the exact run time, and what happens when the estimate is missing or
//! below the run time.
//!
//! Every backfilling policy (`easy-backfilling`, `conservative-backfilling`,
//! `rlscheduler`) and every estimate-based queue order (`shortest`,
//! `longest`, `sjf`, the work orders, `wfp3`, `unicep`, `f1`) reads a
//! job's run time through [`Estimates::of`]. Two policy parameters set it:
//!
//! | parameter | values | meaning |
//! |---|---|---|
//! | `estimates` | `user` (default), `exact` | plan with the job's `estimate` field, or with its actual run time (perfect estimates) |
//! | `underestimates` | `keep` (default), `raise` | an estimate below the run time is used as given, or raised to the run time |
//!
//! The rules, all deterministic:
//! - **Missing estimate** (SWF field 9 = −1, read as `Job::estimate =
//!   None`): the run time is used. This is what both reference simulators
//!   do: PReMAS (`simulator/Job.java`, `initialize`: an estimate below the
//!   run time, −1 included, becomes the run time) and RLScheduler
//!   (`job.py`, `Job.__init__`: `request_time == -1` becomes `run_time`).
//! - **Estimate below the run time**: `keep` plans with the low estimate
//!   and still runs the job to completion; a running job that has outlived
//!   its estimate is assumed to end now (RLScheduler's simulator also
//!   keeps such estimates and never kills a job). `raise` plans with the
//!   run time (PReMAS's rule), so a running job never outlives its
//!   estimate and conservative backfilling keeps every reservation on a
//!   non-contiguous machine. Killing the job at its estimate, as Slurm
//!   does at a time limit, is not offered: the run loop owns the job's run
//!   time, and a policy cannot shorten it.
//! - **Unusable estimates** (negative, NaN or infinite) are refused when
//!   the job is submitted, as [`ScheduleError::BadJob`](crate::ScheduleError::BadJob)
//!   with `what = "runtime estimate"`; the job is not queued.
//!
//! ```
//! use partalloc_schedulers::estimates::{Estimates, Source, Underestimates};
//! use partalloc_workload::{Job, JobShape};
//! let job = Job::new(1, 0.0, JobShape::Nodes { count: 4 }, 100.0);
//! let user = Estimates::default();
//! assert_eq!(user.of(&job), 100.0); // no estimate: the run time
//! assert_eq!(user.of(&job.with_estimate(Some(60.0))), 60.0); // kept
//! let raise = Estimates { underestimates: Underestimates::Raise, ..user };
//! assert_eq!(raise.of(&job.with_estimate(Some(60.0))), 100.0);
//! let exact = Estimates { source: Source::Exact, ..user };
//! assert_eq!(exact.of(&job.with_estimate(Some(900.0))), 100.0);
//! ```

use core::fmt;

use partalloc_allocators::SpecError;
use partalloc_allocators::StrategySpec;
use partalloc_allocators::registry::ParamInfo;
use partalloc_workload::Job;

/// Where a policy's run-time estimates come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Source {
    /// The job's `estimate` field (the user's estimate), else its run time.
    #[default]
    User,
    /// The job's actual run time (perfect estimates).
    Exact,
}

/// What an estimate below the run time becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Underestimates {
    /// Used as given; the job still runs to completion.
    #[default]
    Keep,
    /// Raised to the run time (PReMAS's rule).
    Raise,
}

/// How a policy reads a job's run time for planning and ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Estimates {
    /// Where estimates come from.
    pub source: Source,
    /// What an estimate below the run time becomes.
    pub underestimates: Underestimates,
}

impl Estimates {
    /// The run time the policy plans `job` with (see the
    /// [module docs](self) for the rules).
    #[must_use]
    pub fn of(&self, job: &Job) -> f64 {
        match (self.source, job.estimate) {
            (Source::Exact, _) | (Source::User, None) => job.service,
            (Source::User, Some(e)) => match self.underestimates {
                Underestimates::Raise if e < job.service => job.service,
                _ => e,
            },
        }
    }

    /// `job` with its `estimate` field set to [`of`](Self::of), for code
    /// that reads the field directly (EASY's [`RunningEstimates`](crate::easy::RunningEstimates)).
    #[must_use]
    pub fn apply(&self, job: &Job) -> Job {
        job.with_estimate(Some(self.of(job)))
    }

    /// Reads the `estimates` and `underestimates` parameters.
    pub(crate) fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        Ok(Self {
            source: spec.choice(
                "estimates",
                &[("user", Source::User), ("exact", Source::Exact)],
            )?,
            underestimates: spec.choice(
                "underestimates",
                &[
                    ("keep", Underestimates::Keep),
                    ("raise", Underestimates::Raise),
                ],
            )?,
        })
    }

    /// Appends the parameters that differ from the defaults to `params`
    /// (`key=value` items), for a policy's canonical name.
    pub(crate) fn push_params(&self, params: &mut Vec<String>) {
        if self.source != Source::User {
            params.push(format!("estimates={}", self.source));
        }
        if self.underestimates != Underestimates::Keep {
            params.push(format!("underestimates={}", self.underestimates));
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Exact => "exact",
        })
    }
}

impl fmt::Display for Underestimates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Keep => "keep",
            Self::Raise => "raise",
        })
    }
}

/// The `estimates` parameter.
pub(crate) const ESTIMATES: ParamInfo = ParamInfo {
    name: "estimates",
    default: "user",
    doc: "run times to plan with: user (the job's estimate, SWF field 9; the run time when it is missing) or exact",
};

/// The `underestimates` parameter.
pub(crate) const UNDERESTIMATES: ParamInfo = ParamInfo {
    name: "underestimates",
    default: "keep",
    doc: "an estimate below the run time is used as given (keep) or raised to the run time (raise, as PReMAS)",
};
