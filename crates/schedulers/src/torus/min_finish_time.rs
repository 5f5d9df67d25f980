//! The minimum finish time of a preemptive schedule (Gupta & Srimani §3),
//! by binary search on the deadline.

use super::{Feasibility, PreemptiveSchedule, TorusError, TorusJob, check, preemptive_feasibility};

/// Upper bound on the halvings of [`min_finish_time`]'s search.
const MAX_BISECTIONS: u32 = 200;

/// The minimum finish time of a preemptive schedule, by binary search on
/// the deadline with [`preemptive_feasibility`], to within `tolerance`
/// (absolute; a tolerance below a few ulps of the search interval's upper
/// end is raised to that, since no float lies strictly between). Returns
/// the smallest feasible deadline found and its schedule.
///
/// The search interval is [max(t_max, Σ d_i·t_i / m), Σ t_i]: the lower end
/// is a lower bound (the longest job; the m diagonal units of the
/// link-disjoint decomposition are all a job can use), and the upper end is
/// always feasible (the jobs one after another). The report's interval
/// [t_max, Σ d_i²·t_i / m²] has a lower bound as its upper end (see the
/// errata).
///
/// # Errors
/// As [`preemptive_feasibility`], and a tolerance that is not positive and
/// finite.
pub fn min_finish_time(
    m: u32,
    jobs: &[TorusJob],
    tolerance: f64,
) -> Result<(f64, PreemptiveSchedule), TorusError> {
    check(m, jobs)?;
    if !tolerance.is_finite() || tolerance <= 0.0 {
        return Err(TorusError::BadParameter {
            what: "tolerance",
            value: tolerance,
        });
    }
    let t_max = jobs.iter().map(|j| j.time).fold(0.0, f64::max);
    let width: f64 = jobs.iter().map(|j| j.time * f64::from(j.size)).sum::<f64>() / f64::from(m);
    let mut lo = t_max.max(width);
    let mut hi: f64 = jobs.iter().map(|j| j.time).sum();
    let mut best = match preemptive_feasibility(m, jobs, hi)? {
        Feasibility::Feasible(s) => s,
        // Serial execution always meets Σ t_i; keep the search total anyway.
        Feasibility::Infeasible { .. } => {
            return Err(TorusError::BadParameter {
                what: "serial finish time",
                value: hi,
            });
        }
    };
    if let Feasibility::Feasible(s) = preemptive_feasibility(m, jobs, lo)? {
        return Ok((lo, s));
    }
    // Below a few ulps of `hi` the midpoint stops moving, so the tolerance
    // is clamped there; the midpoint test and the iteration cap keep the
    // loop finite whatever the inputs (bisection of a positive interval
    // reaches adjacent floats within about 64 halvings).
    let tolerance = tolerance.max(4.0 * f64::EPSILON * hi);
    for _ in 0..MAX_BISECTIONS {
        if hi - lo <= tolerance {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        match preemptive_feasibility(m, jobs, mid)? {
            Feasibility::Feasible(s) => {
                hi = mid;
                best = s;
            }
            Feasibility::Infeasible { .. } => lo = mid,
        }
    }
    Ok((hi, best))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torus::fixtures::{check_schedule, jobs, section3_jobs};

    /// the search (the midpoint stops moving at adjacent floats).
    #[test]
    fn min_finish_time_ends_with_a_tolerance_below_the_float_spacing() {
        let js = jobs(&[(2, 1e6), (1, 1e6)]);
        let (t, s) = min_finish_time(2, &js, 1e-12).unwrap();
        assert!((t - 2e6).abs() <= 1e-6 * 2e6, "{t}");
        // Times are compared relative to the deadline (1e-12 · T).
        for (i, j) in js.iter().enumerate() {
            let run: f64 = s
                .pieces
                .iter()
                .filter(|p| p.job == i)
                .map(|p| p.end - p.start)
                .sum();
            assert!((run - j.time).abs() <= 1e-11 * t, "job {i}: {run}");
        }
        let (t, _) = min_finish_time(8, &jobs(&[(4, 3.0), (2, 0.1), (1, 0.7)]), 1e-300).unwrap();
        assert!(t >= 3.0);
    }

    #[test]
    fn min_finish_time_of_the_example_is_its_longest_job() {
        let (t, s) = min_finish_time(16, &section3_jobs(), 1e-9).unwrap();
        assert_eq!(t, 4.0);
        check_schedule(16, &section3_jobs(), &s);
    }

    /// McNaughton's wrap-around rule is exact for jobs of one side d on
    /// m/d disjoint intervals: max(t_max, Σ t / (m/d)).
    #[test]
    fn min_finish_time_matches_mcnaughton_for_equal_sides() {
        let cases: &[(u32, u32, &[f64])] = &[
            (8, 2, &[3.0, 3.0, 3.0, 3.0, 3.0]),
            (8, 4, &[1.0, 2.0, 3.0]),
            (4, 1, &[5.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
            (16, 4, &[0.5, 2.5, 1.25, 3.0, 0.75]),
        ];
        for &(m, d, times) in cases {
            let js: Vec<TorusJob> = times.iter().map(|&t| TorusJob::new(d, t)).collect();
            let slots = f64::from(m / d);
            let t_max = times.iter().copied().fold(0.0, f64::max);
            let exact = t_max.max(times.iter().sum::<f64>() / slots);
            let (t, s) = min_finish_time(m, &js, 1e-9).unwrap();
            assert!((t - exact).abs() < 1e-6, "m={m} d={d}: {t} vs {exact}");
            check_schedule(m, &js, &s);
        }
    }

    /// Brute force on tiny instances: the minimum over every
    /// non-preemptive list schedule (all job orders, each job placed at the
    /// earliest time on the best aligned interval) bounds the preemptive
    /// optimum from above; max(t_max, Σ d·t / m) bounds it from below.
    #[test]
    fn min_finish_time_between_brute_force_bounds() {
        let cases: &[(u32, &[(u32, f64)])] = &[
            (4, &[(2, 3.0), (2, 1.0), (1, 2.0), (1, 2.0), (1, 1.0)]),
            (4, &[(4, 1.0), (2, 2.0), (1, 3.0), (1, 1.0)]),
            (8, &[(4, 2.0), (2, 3.0), (2, 3.0), (2, 1.0), (1, 2.0)]),
            (2, &[(1, 2.0), (1, 1.0), (1, 1.0)]),
        ];
        for &(m, list) in cases {
            let js = jobs(list);
            let (t, s) = min_finish_time(m, &js, 1e-9).unwrap();
            check_schedule(m, &js, &s);
            let lower = js
                .iter()
                .map(|j| j.time)
                .fold(0.0, f64::max)
                .max(js.iter().map(|j| j.time * f64::from(j.size)).sum::<f64>() / f64::from(m));
            let upper = brute_force_non_preemptive(m, &js);
            assert!(t >= lower - 1e-9, "{t} < {lower}");
            assert!(t <= upper + 1e-9, "{t} > {upper}");
            // And the search is tight: a little less is infeasible.
            if t - 1e-6 > 0.0 {
                assert!(
                    !preemptive_feasibility(m, &js, t - 1e-6)
                        .unwrap()
                        .is_feasible()
                );
            }
        }
    }

    /// The exact preemptive optimum of a tiny instance. A set of jobs can
    /// run at once iff its sides sum to at most m (powers of two pack into
    /// aligned intervals), so the optimum is the linear program
    /// min Σ x_C subject to Σ_{C ∋ i} x_C ≥ t_i, x ≥ 0, over the maximal
    /// such sets C (any order of the x_C is a schedule). By duality it is
    /// max Σ t_i y_i subject to Σ_{i ∈ C} y_i ≤ 1, y ≥ 0, whose optimum is
    /// a vertex: every choice of n tight constraints is solved and the best
    /// feasible one kept.
    fn lp_optimum(m: u32, js: &[TorusJob]) -> f64 {
        let n = js.len();
        let fits = |set: usize| {
            (0..n)
                .filter(|&i| set >> i & 1 == 1)
                .map(|i| js[i].size)
                .sum::<u32>()
                <= m
        };
        // Rows (a, b) meaning a · y ≤ b.
        let mut rows: Vec<(Vec<f64>, f64)> = (0..n)
            .map(|i| {
                (
                    (0..n).map(|k| if k == i { -1.0 } else { 0.0 }).collect(),
                    0.0,
                )
            })
            .collect();
        for set in 1..1usize << n {
            let maximal = (0..n).all(|i| set >> i & 1 == 1 || !fits(set | 1 << i));
            if fits(set) && maximal {
                rows.push((
                    (0..n).map(|i| f64::from((set >> i & 1) as u8)).collect(),
                    1.0,
                ));
            }
        }
        let mut best = 0.0f64;
        let mut pick: Vec<usize> = (0..n).collect();
        loop {
            if let Some(y) = solve(&pick.iter().map(|&r| rows[r].clone()).collect::<Vec<_>>()) {
                let ok = rows
                    .iter()
                    .all(|(a, b)| a.iter().zip(&y).map(|(p, q)| p * q).sum::<f64>() <= b + 1e-9);
                if ok {
                    best = best.max(js.iter().zip(&y).map(|(j, v)| j.time * v).sum());
                }
            }
            // Next n-combination of the rows.
            let Some(i) = (0..n).rev().find(|&i| pick[i] < rows.len() - n + i) else {
                return best;
            };
            pick[i] += 1;
            for k in i + 1..n {
                pick[k] = pick[k - 1] + 1;
            }
        }
    }

    /// Gaussian elimination with partial pivoting; `None` when singular.
    fn solve(rows: &[(Vec<f64>, f64)]) -> Option<Vec<f64>> {
        let n = rows.len();
        let mut a: Vec<Vec<f64>> = rows
            .iter()
            .map(|(r, b)| r.iter().copied().chain([*b]).collect())
            .collect();
        for c in 0..n {
            let p = (c..n).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
            if a[p][c].abs() < 1e-12 {
                return None;
            }
            a.swap(c, p);
            let pivot = a[c].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != c {
                    let f = row[c] / pivot[c];
                    for (x, y) in row.iter_mut().zip(&pivot).skip(c) {
                        *x -= f * y;
                    }
                }
            }
        }
        Some((0..n).map(|r| a[r][n] / a[r][r]).collect())
    }

    #[test]
    fn lp_oracle_on_known_instances() {
        // m = 2: (2, 1) and (1, 1) cannot overlap.
        assert!((lp_optimum(2, &jobs(&[(2, 1.0), (1, 1.0)])) - 2.0).abs() < 1e-12);
        // McNaughton: three 1×1 jobs of 2, 1, 1 on two units.
        assert!((lp_optimum(2, &jobs(&[(1, 2.0), (1, 1.0), (1, 1.0)])) - 2.0).abs() < 1e-12);
        // Three 1×1 jobs of 1 on two units: 1.5.
        assert!((lp_optimum(2, &jobs(&[(1, 1.0); 3])) - 1.5).abs() < 1e-12);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// The binary search finds the exact preemptive optimum of the LP
        /// oracle on tiny instances (m ≤ 8, at most five jobs).
        #[test]
        fn min_finish_time_equals_the_lp_optimum(
            p in 1u32..4,
            raw in proptest::collection::vec((0u32..4, 1u32..9), 1..6)
        ) {
            let m = 1u32 << p;
            let js: Vec<TorusJob> = raw
                .iter()
                .map(|&(e, q)| TorusJob::new(1 << e.min(p), f64::from(q) / 2.0))
                .collect();
            let exact = lp_optimum(m, &js);
            let (t, s) = min_finish_time(m, &js, 1e-9).unwrap();
            check_schedule(m, &js, &s);
            proptest::prop_assert!((t - exact).abs() <= 1e-6, "m={} {:?}: {} vs LP {}", m, js, t, exact);
        }
    }

    fn brute_force_non_preemptive(m: u32, js: &[TorusJob]) -> f64 {
        fn go(m: u32, js: &[TorusJob], used: &mut Vec<bool>, free_at: &mut Vec<f64>) -> f64 {
            if used.iter().all(|&u| u) {
                return free_at.iter().copied().fold(0.0, f64::max);
            }
            let mut best = f64::INFINITY;
            for i in 0..js.len() {
                if used[i] {
                    continue;
                }
                let d = js[i].size as usize;
                for a in (0..m as usize).step_by(d) {
                    let start = free_at[a..a + d].iter().copied().fold(0.0, f64::max);
                    let saved: Vec<f64> = free_at[a..a + d].to_vec();
                    for f in &mut free_at[a..a + d] {
                        *f = start + js[i].time;
                    }
                    used[i] = true;
                    best = best.min(go(m, js, used, free_at));
                    used[i] = false;
                    free_at[a..a + d].copy_from_slice(&saved);
                }
            }
            best
        }
        go(
            m,
            js,
            &mut vec![false; js.len()],
            &mut vec![0.0; m as usize],
        )
    }
}
