//! Bounded slowdown: a job's response time over its service time, with
//! the service time taken as at least a threshold τ so that very short jobs
//! do not dominate the mean (Feitelson, Rudolph, Schwiegelshohn, Sevcik and
//! Wong, "Theory and practice in parallel job scheduling", JSSPP 1997, §5;
//! τ = 10 s as in the learned-scheduling benchmarks, e.g. Zhang et al.,
//! RLScheduler, SC'20):
//!
//! bsld = max(1, (wait + service) / max(service, τ)).
//!
//! [`bounded_slowdown`] is the one definition: the run loop's
//! [`Results::mean_bounded_slowdown`](crate::Results::mean_bounded_slowdown),
//! the per-job records ([`JobRecord`](crate::JobRecord), whose
//! [`bounded_slowdown_under`](crate::JobRecord::bounded_slowdown_under) the
//! Gymnasium environment's reward takes) all call it.
//!
//! ```
//! use partalloc_simkit::slowdown::{SlowdownBound, bounded_slowdown};
//! let tau: SlowdownBound = "10".parse()?;
//! assert_eq!(tau, SlowdownBound::default());
//! // Arrived at 0, started at 30, ran 60 s: (30 + 60) / 60.
//! assert_eq!(bounded_slowdown(0.0, 30.0, 90.0, tau), 1.5);
//! // A 1 s job that waited 4 s counts as a 10 s job: max(1, 5 / 10) = 1.
//! assert_eq!(bounded_slowdown(0.0, 4.0, 5.0, tau), 1.0);
//! assert!("0".parse::<SlowdownBound>().is_err());
//! # Ok::<(), partalloc_simkit::slowdown::SlowdownBoundError>(())
//! ```

use core::fmt;
use core::str::FromStr;

use thiserror::Error;

/// Why a slowdown bound was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SlowdownBoundError {
    /// The text is not a number.
    #[error("slowdown bound {0:?} is not a number; give seconds, such as 10")]
    NotANumber(String),
    /// The bound is NaN or infinite.
    #[error("slowdown bound {0} is not finite; give a positive number of seconds, such as 10")]
    NotFinite(f64),
    /// The bound is zero or negative.
    #[error("slowdown bound {0} must be above 0 seconds (the usual bound is 10)")]
    NotPositive(f64),
}

/// The threshold τ of the bounded slowdown: a finite number of seconds
/// above 0 (10 by default).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "f64", into = "f64")
)]
pub struct SlowdownBound(f64);

/// The usual threshold, 10 seconds.
pub const DEFAULT_SLOWDOWN_BOUND: SlowdownBound = SlowdownBound(10.0);

impl SlowdownBound {
    /// The bound of `seconds`.
    ///
    /// # Errors
    /// [`SlowdownBoundError::NotFinite`] for NaN or an infinity,
    /// [`SlowdownBoundError::NotPositive`] for 0 or less.
    pub fn new(seconds: f64) -> Result<Self, SlowdownBoundError> {
        if !seconds.is_finite() {
            return Err(SlowdownBoundError::NotFinite(seconds));
        }
        if seconds <= 0.0 {
            return Err(SlowdownBoundError::NotPositive(seconds));
        }
        Ok(Self(seconds))
    }

    /// The bound in seconds.
    #[must_use]
    pub fn seconds(self) -> f64 {
        self.0
    }
}

impl Default for SlowdownBound {
    fn default() -> Self {
        DEFAULT_SLOWDOWN_BOUND
    }
}

impl TryFrom<f64> for SlowdownBound {
    type Error = SlowdownBoundError;
    fn try_from(seconds: f64) -> Result<Self, SlowdownBoundError> {
        Self::new(seconds)
    }
}

impl From<SlowdownBound> for f64 {
    fn from(b: SlowdownBound) -> Self {
        b.0
    }
}

impl FromStr for SlowdownBound {
    type Err = SlowdownBoundError;
    fn from_str(s: &str) -> Result<Self, SlowdownBoundError> {
        let seconds: f64 = s
            .trim()
            .parse()
            .map_err(|_| SlowdownBoundError::NotANumber(partalloc_topology::echo(s)))?;
        Self::new(seconds)
    }
}

impl fmt::Display for SlowdownBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The bounded slowdown of a job that arrived at `arrival`, started at
/// `start` and ended at `end`: max(1, (end − arrival) / max(end − start, τ)).
#[inline]
#[must_use]
pub fn bounded_slowdown(arrival: f64, start: f64, end: f64, bound: SlowdownBound) -> f64 {
    ((end - arrival) / (end - start).max(bound.0)).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_bounds_are_refused_with_one_line_each() {
        let msg = |s: &str| s.parse::<SlowdownBound>().unwrap_err().to_string();
        assert_eq!(
            msg("0"),
            "slowdown bound 0 must be above 0 seconds (the usual bound is 10)"
        );
        assert_eq!(
            "-3".parse::<SlowdownBound>(),
            Err(SlowdownBoundError::NotPositive(-3.0))
        );
        assert!(matches!(
            "nan".parse::<SlowdownBound>(),
            Err(SlowdownBoundError::NotFinite(x)) if x.is_nan()
        ));
        assert_eq!(
            SlowdownBound::new(f64::INFINITY),
            Err(SlowdownBoundError::NotFinite(f64::INFINITY))
        );
        assert_eq!(
            msg("ten"),
            "slowdown bound \"ten\" is not a number; give seconds, such as 10"
        );
        assert!(!msg("inf").contains('\n'));
        assert_eq!(" 2.5 ".parse::<SlowdownBound>().map(f64::from), Ok(2.5));
        assert_eq!(
            SlowdownBound::new(1e-9).map(|b| b.to_string()),
            Ok("0.000000001".into())
        );
    }

    /// Each branch of the definition, computed by hand.
    #[test]
    fn the_definition_by_hand() {
        let tau = SlowdownBound::default();
        // Long job: the bound does not apply, (20 + 100) / 100.
        assert_eq!(bounded_slowdown(5.0, 25.0, 125.0, tau), 1.2);
        // Short job that waited: (18 + 2) / max(2, 10) = 2.
        assert_eq!(bounded_slowdown(0.0, 18.0, 20.0, tau), 2.0);
        // Short job, short wait: below 1, so 1.
        assert_eq!(bounded_slowdown(0.0, 1.0, 3.0, tau), 1.0);
        // A zero-length job is finite under any bound.
        assert_eq!(bounded_slowdown(0.0, 40.0, 40.0, tau), 4.0);
        let one = SlowdownBound::new(1.0).unwrap();
        assert_eq!(bounded_slowdown(0.0, 18.0, 20.0, one), 10.0);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn files_are_checked_as_text_is() {
        assert_eq!(
            serde_json::to_string(&SlowdownBound::default()).unwrap(),
            "10.0"
        );
        assert_eq!(
            serde_json::from_str::<SlowdownBound>("2.5")
                .unwrap()
                .seconds(),
            2.5
        );
        assert!(serde_json::from_str::<SlowdownBound>("0.0").is_err());
        assert!(serde_json::from_str::<SlowdownBound>("-1").is_err());
    }
}
