//! Offline job scheduling on an m×m torus (Gupta & Srimani, TR CS-97-103).
//!
//! Three pieces, each exact to the report's text:
//! - the contention model: [`dilated_duration`] (Definition 2) and
//!   [`theorem1_loads`] (Theorem 1);
//! - [`cnp_alloc`]: Algorithm CNP_Alloc (§2.4, Fig. 2), non-preemptive
//!   scheduling of square power-of-two subtori T^{(a,b)} with link
//!   contention — each job goes to the minimum-loaded subtorus among the
//!   earliest available ones;
//! - [`preemptive_feasibility`] (§3): preemptive scheduling on link-disjoint
//!   diagonal p-intervals with stair-like profiles (Steps 1–4, at most n − 1
//!   preemptions), and [`min_finish_time`] by binary search.
//!
//! One module per algorithm, with its tests beside it.
//!
//! Where the report's example or formulas disagree with its algorithm text,
//! the text is implemented; see `docs/paper-errata.md` (schedulers part).
//!
//! ```
//! use partalloc_schedulers::torus::{cnp_alloc, TorusJob};
//! // Gupta & Srimani §2.4.4: T8×8 and six jobs (size, time).
//! let jobs = [(8, 2.0), (4, 2.0), (4, 4.0), (4, 4.0), (4, 1.0), (2, 4.0)]
//!     .map(|(d, t)| TorusJob::new(d, t));
//! let s = cnp_alloc(8, &jobs)?;
//! assert_eq!(s.makespan, 10.75);
//! let starts: Vec<f64> = s.jobs.iter().map(|j| j.start).collect();
//! assert_eq!(starts, [0.0, 2.0, 2.0, 2.0, 2.0, 4.0]);
//! # Ok::<(), partalloc_schedulers::torus::TorusError>(())
//! ```

mod cnp_alloc;
mod contention;
mod min_finish_time;
mod preemptive;

pub use cnp_alloc::{CnpPlacement, CnpSchedule, MAX_CNP_CELLS, cnp_alloc};
pub use contention::{dilated_duration, theorem1_loads};
pub use min_finish_time::min_finish_time;
pub use preemptive::{
    Feasibility, Piece, PreemptiveSchedule, ProfileEntry, preemptive_feasibility,
};

use thiserror::Error;

/// A job of the offline problem: it needs a `size`×`size` subtorus for
/// `time` units (Gupta & Srimani: J_i = (d_i, t_i)).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TorusJob {
    /// Side d of the square subtorus (a power of two, at most m).
    pub size: u32,
    /// Processing time t (positive, finite).
    pub time: f64,
}

impl TorusJob {
    /// A job needing a `size`×`size` subtorus for `time`.
    #[must_use]
    pub fn new(size: u32, time: f64) -> Self {
        Self { size, time }
    }
}

/// Invalid input to the offline algorithms.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum TorusError {
    /// The torus side is zero or not a power of two.
    #[error("torus side {m} must be a positive power of two")]
    BadTorus {
        /// The side given.
        m: u32,
    },
    /// A job's side is zero, not a power of two, or larger than the torus.
    #[error("job {job}: side {size} must be a power of two between 1 and the torus side {m}")]
    BadSize {
        /// Index of the job in the input.
        job: usize,
        /// The side given.
        size: u32,
        /// The torus side.
        m: u32,
    },
    /// A job's time is not positive and finite.
    #[error("job {job}: time {time} must be positive and finite")]
    BadTime {
        /// Index of the job in the input.
        job: usize,
        /// The time given.
        time: f64,
    },
    /// A deadline or a contention parameter that is not positive and finite.
    #[error("{what} must be positive and finite, got {value}")]
    BadParameter {
        /// Which parameter.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// No job was given.
    #[error("the job set is empty")]
    NoJobs,
    /// CNP_Alloc's availability matrix would exceed [`MAX_CNP_CELLS`]
    /// entries: (m / d_min)² with d_min the smallest job side.
    #[error(
        "the availability matrix of {width}×{width} entries (torus side / smallest job side) exceeds the limit of {limit} entries"
    )]
    MatrixTooLarge {
        /// m / d_min, the side of the final matrix.
        width: u64,
        /// The largest number of entries accepted.
        limit: u64,
    },
    /// Memory for the availability matrix could not be reserved.
    #[error("could not reserve memory for {cells} availability matrix entries")]
    OutOfMemory {
        /// The number of entries asked for.
        cells: u64,
    },
}

/// Checks the torus side and the jobs every algorithm takes.
fn check(m: u32, jobs: &[TorusJob]) -> Result<(), TorusError> {
    if m == 0 || !m.is_power_of_two() {
        return Err(TorusError::BadTorus { m });
    }
    if jobs.is_empty() {
        return Err(TorusError::NoJobs);
    }
    for (job, j) in jobs.iter().enumerate() {
        if j.size == 0 || !j.size.is_power_of_two() || j.size > m {
            return Err(TorusError::BadSize {
                job,
                size: j.size,
                m,
            });
        }
        if !j.time.is_finite() || j.time <= 0.0 {
            return Err(TorusError::BadTime { job, time: j.time });
        }
    }
    Ok(())
}

/// Instances and checks the tests of several algorithms share.
#[cfg(test)]
mod fixtures {
    use super::{Piece, PreemptiveSchedule, TorusJob};

    pub(super) fn jobs(list: &[(u32, f64)]) -> Vec<TorusJob> {
        list.iter().map(|&(d, t)| TorusJob::new(d, t)).collect()
    }

    /// Gupta & Srimani §3 example: T16, deadline 4.
    pub(super) fn section3_jobs() -> Vec<TorusJob> {
        jobs(&[(8, 2.0), (4, 4.0), (4, 3.0), (2, 2.0), (2, 2.5)])
    }

    /// Every job runs exactly its time, within [0, T], never on two
    /// subtori at once, and no two runs overlap in space and time.
    pub(super) fn check_schedule(m: u32, js: &[TorusJob], s: &PreemptiveSchedule) {
        let tol = 1e-9;
        for (i, j) in js.iter().enumerate() {
            let mine: Vec<&Piece> = s.pieces.iter().filter(|p| p.job == i).collect();
            let total: f64 = mine.iter().map(|p| p.end - p.start).sum();
            assert!(
                (total - j.time).abs() < tol,
                "job {i}: {total} vs {}",
                j.time
            );
            for a in &mine {
                assert_eq!(a.size, j.size);
                assert!(a.start >= -tol && a.end <= s.deadline + tol);
                assert!(a.first + a.size <= m);
                for b in &mine {
                    if !core::ptr::eq(*a, *b) {
                        assert!(a.end <= b.start + tol || b.end <= a.start + tol);
                    }
                }
            }
        }
        for (x, a) in s.pieces.iter().enumerate() {
            for b in &s.pieces[x + 1..] {
                let space = a.first < b.first + b.size && b.first < a.first + a.size;
                let time = a.start < b.end - tol && b.start < a.end - tol;
                assert!(!(space && time), "{a:?} overlaps {b:?}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::jobs;
    use super::*;

    #[test]
    fn inputs_are_validated() {
        assert_eq!(
            cnp_alloc(6, &jobs(&[(2, 1.0)])),
            Err(TorusError::BadTorus { m: 6 })
        );
        assert!(matches!(
            cnp_alloc(8, &jobs(&[(3, 1.0)])),
            Err(TorusError::BadSize { job: 0, .. })
        ));
        assert!(matches!(
            cnp_alloc(8, &jobs(&[(2, 1.0), (16, 1.0)])),
            Err(TorusError::BadSize { job: 1, .. })
        ));
        assert!(matches!(
            preemptive_feasibility(8, &jobs(&[(2, 0.0)]), 1.0),
            Err(TorusError::BadTime { job: 0, .. })
        ));
        assert!(preemptive_feasibility(8, &jobs(&[(2, 1.0)]), f64::INFINITY).is_err());
        assert!(min_finish_time(8, &jobs(&[(2, 1.0)]), 0.0).is_err());
        assert_eq!(cnp_alloc(8, &[]), Err(TorusError::NoJobs));
    }
}
