//! Preemptive feasibility on link-disjoint diagonal p-intervals
//! (Gupta & Srimani §3, Steps 1–4).

use super::{TorusError, TorusJob, check};

/// A p-interval [first, last] of the torus (Definition 7: the diagonal
/// block of processors P(i, j) with first ≤ i, j ≤ last) with the time its
/// processors are busy until (Definition 8).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ProfileEntry {
    /// First row/column of the interval.
    pub first: u32,
    /// Last row/column of the interval.
    pub last: u32,
    /// Busy until this time.
    pub finish: f64,
}

/// Pushes onto `next` the first `d` rows of interval `e`, busy until
/// `finish`, and the rest of `e` (if any) with its own finish time.
fn take_front(next: &mut Vec<ProfileEntry>, e: ProfileEntry, d: u32, finish: f64) {
    next.push(ProfileEntry {
        first: e.first,
        last: e.first + d - 1,
        finish,
    });
    if e.last > e.first + d - 1 {
        next.push(ProfileEntry {
            first: e.first + d,
            ..e
        });
    }
}

/// One uninterrupted run of a job on a subtorus [first, first + size − 1].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Piece {
    /// Index of the job in the input.
    pub job: usize,
    /// First row/column of the subtorus.
    pub first: u32,
    /// Its side.
    pub size: u32,
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
}

/// A feasible preemptive schedule and the profiles P(0), …, P(n) it went
/// through.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PreemptiveSchedule {
    /// The deadline T it meets.
    pub deadline: f64,
    /// The runs, in the order they were scheduled.
    pub pieces: Vec<Piece>,
    /// P(0) … P(n), each ordered by decreasing finish time (stair-like).
    pub profiles: Vec<Vec<ProfileEntry>>,
}

impl PreemptiveSchedule {
    /// Number of preemptions: runs beyond one per job (Theorem 2: ≤ n − 1).
    #[must_use]
    pub fn preemptions(&self) -> usize {
        let jobs = self.profiles.len().saturating_sub(1);
        self.pieces.len().saturating_sub(jobs)
    }

    /// The time the last run ends.
    #[must_use]
    pub fn finish_time(&self) -> f64 {
        self.pieces.iter().map(|p| p.end).fold(0.0, f64::max)
    }
}

/// The answer of the feasibility test.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Feasibility {
    /// The deadline can be met; here is how.
    Feasible(PreemptiveSchedule),
    /// The deadline cannot be met.
    Infeasible {
        /// The input index of the job that could not be scheduled (Step 1),
        /// or `None` when a necessary condition fails before scheduling.
        job: Option<usize>,
        /// Why.
        reason: &'static str,
    },
}

impl Feasibility {
    /// Whether the deadline can be met.
    #[must_use]
    pub fn is_feasible(&self) -> bool {
        matches!(self, Self::Feasible(_))
    }
}

/// The preemptive feasibility algorithm of Gupta & Srimani §3 for
/// T_{m×m} and deadline `deadline`.
///
/// Jobs are taken in non-increasing order of side (ties keep input order).
/// With the profile P(i−1) = (\[a_1, b_1\], f_1), …, (\[a_k, b_k\], f_k) ordered by
/// increasing remaining time r_j = T − f_j:
/// Step 1, t > r_k: infeasible; Step 2, t < r_1: run on [a_1, a_1+d−1] from
/// f_1; Step 3, t = r_j: run on [a_j, a_j+d−1] from f_j to T; Step 4,
/// r_j < t ≤ r_{j+1}: run on [a_j, a_j+d−1] from f_j to T and the rest on
/// [a_{j+1}, a_{j+1}+d−1] from f_{j+1}. Intervals with no remaining time are
/// dropped (Remark 6). In Step 4 only the used part of [a_j, b_j] is
/// consumed; the rest keeps f_j (see the errata). Times are compared with a
/// relative tolerance of 1e-12 · max(1, T).
///
/// # Errors
/// As [`cnp_alloc`](super::cnp_alloc), and a deadline that is not positive and finite.
pub fn preemptive_feasibility(
    m: u32,
    jobs: &[TorusJob],
    deadline: f64,
) -> Result<Feasibility, TorusError> {
    check(m, jobs)?;
    if !deadline.is_finite() || deadline <= 0.0 {
        return Err(TorusError::BadParameter {
            what: "deadline",
            value: deadline,
        });
    }
    let t_cap = deadline;
    let eps = 1e-12 * t_cap.max(1.0);
    let t_max = jobs.iter().map(|j| j.time).fold(0.0, f64::max);
    if t_max > t_cap + eps {
        return Ok(Feasibility::Infeasible {
            job: jobs.iter().position(|j| j.time == t_max),
            reason: "a job is longer than the deadline",
        });
    }
    let area: f64 = jobs
        .iter()
        .map(|j| j.time * f64::from(j.size) * f64::from(j.size))
        .sum::<f64>()
        / (f64::from(m) * f64::from(m));
    if area > t_cap + eps {
        return Ok(Feasibility::Infeasible {
            job: None,
            reason: "the jobs' total work exceeds the torus's capacity before the deadline",
        });
    }
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(jobs[i].size));
    let mut profile = vec![ProfileEntry {
        first: 0,
        last: m - 1,
        finish: 0.0,
    }];
    let mut profiles = vec![profile.clone()];
    let mut pieces = Vec::with_capacity(jobs.len() * 2);
    let rpt = |e: &ProfileEntry| t_cap - e.finish;
    for &ji in &order {
        let TorusJob { size: d, time: t } = jobs[ji];
        let k = profile.len();
        // Step 1.
        if k == 0 || t > rpt(&profile[k - 1]) + eps {
            return Ok(Feasibility::Infeasible {
                job: Some(ji),
                reason: "no interval has enough remaining time (Step 1)",
            });
        }
        let mut next: Vec<ProfileEntry> = Vec::with_capacity(k + 2);
        let r1 = rpt(&profile[0]);
        if t < r1 - eps {
            // Step 2.
            let e = profile[0];
            pieces.push(Piece {
                job: ji,
                first: e.first,
                size: d,
                start: e.finish,
                end: e.finish + t,
            });
            take_front(&mut next, e, d, e.finish + t);
            next.extend_from_slice(&profile[1..]);
        } else if let Some(j) = profile.iter().position(|e| (t - rpt(e)).abs() <= eps) {
            // Step 3.
            let e = profile[j];
            pieces.push(Piece {
                job: ji,
                first: e.first,
                size: d,
                start: e.finish,
                end: t_cap,
            });
            next.extend_from_slice(&profile[..j]);
            if e.last > e.first + d - 1 {
                next.push(ProfileEntry {
                    first: e.first + d,
                    ..e
                });
            }
            next.extend_from_slice(&profile[j + 1..]);
        } else {
            // Step 4.
            let Some(j) =
                (0..k - 1).find(|&j| t > rpt(&profile[j]) && t <= rpt(&profile[j + 1]) + eps)
            else {
                return Ok(Feasibility::Infeasible {
                    job: Some(ji),
                    reason: "no interval has enough remaining time (Step 1)",
                });
            };
            let (ej, ej1) = (profile[j], profile[j + 1]);
            let rest = t - rpt(&ej);
            pieces.push(Piece {
                job: ji,
                first: ej.first,
                size: d,
                start: ej.finish,
                end: t_cap,
            });
            pieces.push(Piece {
                job: ji,
                first: ej1.first,
                size: d,
                start: ej1.finish,
                end: ej1.finish + rest,
            });
            next.extend_from_slice(&profile[..j]);
            if ej.last > ej.first + d - 1 {
                next.push(ProfileEntry {
                    first: ej.first + d,
                    ..ej
                });
            }
            take_front(&mut next, ej1, d, ej1.finish + rest);
            next.extend_from_slice(&profile[j + 2..]);
        }
        // Remark 6: intervals with no remaining time leave the profile.
        next.retain(|e| rpt(e) > eps);
        profile = next;
        profiles.push(profile.clone());
    }
    Ok(Feasibility::Feasible(PreemptiveSchedule {
        deadline: t_cap,
        pieces,
        profiles,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torus::fixtures::{check_schedule, jobs, section3_jobs};
    use crate::torus::min_finish_time;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// At the minimum finish time every profile is stair-like, the
        /// schedule is valid, it has at most n − 1 preemptions (Theorem 2),
        /// and any larger deadline stays feasible.
        #[test]
        fn feasibility_invariants(
            raw in proptest::collection::vec((0u32..4, 1u32..17), 1..12)
        ) {
            let js: Vec<TorusJob> = raw
                .iter()
                .map(|&(e, q)| TorusJob::new(1 << e, f64::from(q) / 4.0))
                .collect();
            let (t, s) = min_finish_time(8, &js, 1e-9).unwrap();
            check_schedule(8, &js, &s);
            proptest::prop_assert!(s.preemptions() < js.len().max(1));
            for p in &s.profiles {
                proptest::prop_assert!(p.windows(2).all(|w| w[1].finish < w[0].finish));
            }
            for factor in [1.01, 1.5, 3.0] {
                proptest::prop_assert!(
                    preemptive_feasibility(8, &js, t * factor).unwrap().is_feasible()
                );
            }
        }
    }

    fn entry(first: u32, last: u32, finish: f64) -> ProfileEntry {
        ProfileEntry {
            first,
            last,
            finish,
        }
    }

    #[test]
    fn feasibility_example_of_section_3() {
        let Feasibility::Feasible(s) = preemptive_feasibility(16, &section3_jobs(), 4.0).unwrap()
        else {
            panic!("the example deadline is feasible");
        };
        assert_eq!(
            s.profiles,
            vec![
                vec![entry(0, 15, 0.0)],
                // J1, Step 2.
                vec![entry(0, 7, 2.0), entry(8, 15, 0.0)],
                // J2, Step 3 with j = 2.
                vec![entry(0, 7, 2.0), entry(12, 15, 0.0)],
                // J3, Step 4 with j = 1: [0,3] 2→4, then [12,15] 0→1.
                vec![entry(4, 7, 2.0), entry(12, 15, 1.0)],
                // J4, Step 3 with j = 1: [4,5] 2→4.
                vec![entry(6, 7, 2.0), entry(12, 15, 1.0)],
                // J5, Step 4 with j = 1: [6,7] 2→4, then [12,13] 1→1.5.
                vec![entry(12, 13, 1.5), entry(14, 15, 1.0)],
            ]
        );
        for p in &s.profiles {
            assert!(p.windows(2).all(|w| w[1].finish < w[0].finish), "{p:?}");
        }
        assert_eq!(s.preemptions(), 2);
        assert!(s.preemptions() < 5);
        check_schedule(16, &section3_jobs(), &s);
    }

    #[test]
    fn infeasible_deadlines_are_reported() {
        // Below the longest job.
        let r = preemptive_feasibility(16, &section3_jobs(), 3.9).unwrap();
        assert!(
            matches!(r, Feasibility::Infeasible { job: Some(1), .. }),
            "{r:?}"
        );
        // Long enough for every job alone, but not together: two 16×16
        // jobs of 1 each cannot finish by 1.5.
        let r = preemptive_feasibility(16, &jobs(&[(16, 1.0), (16, 1.0)]), 1.5).unwrap();
        assert!(!r.is_feasible());
        // Area is fine but the link-disjoint intervals are not: m = 2,
        // (2, 1) and (1, 1) need 2 (the 1×1 job cannot run beside the 2×2).
        let r = preemptive_feasibility(2, &jobs(&[(2, 1.0), (1, 1.0)]), 1.5).unwrap();
        assert!(!r.is_feasible());
        assert!(
            preemptive_feasibility(2, &jobs(&[(2, 1.0), (1, 1.0)]), 2.0)
                .unwrap()
                .is_feasible()
        );
    }
}
