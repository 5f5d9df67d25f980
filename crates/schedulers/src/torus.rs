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

/// The largest availability matrix [`cnp_alloc`] builds: 2^22 entries
/// (a 2048×2048 matrix, 64 MiB), i.e. m / d_min ≤ 2048. Each job scans the
/// whole matrix, so larger ratios are also impractically slow.
pub const MAX_CNP_CELLS: u64 = 1 << 22;

/// Relative tolerance of CNP_Alloc's time comparisons: remaining times
/// within this fraction of the largest remaining time (at least 1) of the
/// minimum are taken as equal, and loads within it of each other as tied.
const ZERO_TOLERANCE: f64 = 1e-12;

/// A matrix of `cells` entries, all `fill`, or a typed error when the
/// memory cannot be reserved.
fn matrix(cells: usize, fill: Cell) -> Result<Vec<Cell>, TorusError> {
    let mut v = Vec::new();
    v.try_reserve_exact(cells)
        .map_err(|_| TorusError::OutOfMemory {
            cells: cells as u64,
        })?;
    v.resize(cells, fill);
    Ok(v)
}

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

/// Definition 2 (contention model): a job of duration `t` on a subtorus one
/// of whose links is shared by `others` other subtori for `overlap` time
/// units runs for `t + others · overlap / max_sharing`, where
/// `max_sharing` is the largest number of subtori that can share a link.
///
/// ```
/// use partalloc_schedulers::torus::dilated_duration;
/// // §2.2 example: two 4×4 subtori of T8×8 sharing row links (m = 2).
/// assert_eq!(dilated_duration(3.0, 1, 2.0, 2)?, 4.0);
/// # Ok::<(), partalloc_schedulers::torus::TorusError>(())
/// ```
///
/// # Errors
/// A negative or non-finite time or overlap, or `max_sharing == 0`.
pub fn dilated_duration(
    t: f64,
    others: u32,
    overlap: f64,
    max_sharing: u32,
) -> Result<f64, TorusError> {
    for (what, value) in [("duration", t), ("overlap", overlap)] {
        if !value.is_finite() || value < 0.0 {
            return Err(TorusError::BadParameter { what, value });
        }
    }
    if max_sharing == 0 {
        return Err(TorusError::BadParameter {
            what: "maximum link sharing",
            value: 0.0,
        });
    }
    Ok(t + f64::from(others) * overlap / f64::from(max_sharing))
}

/// Theorem 1: when job J_k becomes active and overlaps each earlier job J_i
/// for `overlaps[i]` time units, all competing for one link shared by at
/// most `max_sharing` subtori, each J_i's load grows by Δ_i/m and J_k's
/// load is Σ Δ_i/m. Returns (the increments, J_k's load).
///
/// ```
/// use partalloc_schedulers::torus::theorem1_loads;
/// let (inc, lk) = theorem1_loads(&[2.0, 4.0], 2)?;
/// assert_eq!(inc, [1.0, 2.0]);
/// assert_eq!(lk, 3.0);
/// # Ok::<(), partalloc_schedulers::torus::TorusError>(())
/// ```
///
/// # Errors
/// A negative or non-finite overlap, or `max_sharing == 0`.
pub fn theorem1_loads(overlaps: &[f64], max_sharing: u32) -> Result<(Vec<f64>, f64), TorusError> {
    let mut inc = Vec::with_capacity(overlaps.len());
    for &d in overlaps {
        inc.push(dilated_duration(0.0, 1, d, max_sharing)?);
    }
    let lk = inc.iter().sum();
    Ok((inc, lk))
}

/// Where and when CNP_Alloc runs one job.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CnpPlacement {
    /// The job's side d.
    pub size: u32,
    /// Its undilated time t.
    pub time: f64,
    /// Start time.
    pub start: f64,
    /// Finish time, dilated by contention.
    pub finish: f64,
    /// The subtorus T_{d,d}^{(row, col)}: its nodes are those (x, y) with
    /// x mod (m/d) = row and y mod (m/d) = col.
    pub row: u32,
    /// See `row`.
    pub col: u32,
}

/// The schedule CNP_Alloc computes.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CnpSchedule {
    /// One placement per input job, in input order.
    pub jobs: Vec<CnpPlacement>,
    /// The schedule length (line 36: time + max A.tm).
    pub makespan: f64,
}

#[derive(Debug, Clone, Copy)]
struct Cell {
    tm: f64,
    // Index into the sorted job list (dummies included), if any.
    id: Option<usize>,
}

/// Algorithm CNP_Alloc (Gupta & Srimani §2.4, Fig. 2) on T_{m×m}.
///
/// The jobs are sorted by non-increasing side (ties keep input order) and
/// a dummy job (d, 0) is inserted for every side missing between the
/// largest and the smallest, as the report assumes, so the availability
/// matrix is expanded one level at a time (lines 5–9). For each job the
/// matrix minimum is subtracted and added to `time` (lines 12–14); among the
/// entries that become 0 (the set B) the job takes the one with the least
/// load (Σ over its row and column of min(t_k, A.tm), divided by σ — the
/// code's `min`, see the errata), ties to the first in row-major order; its
/// entry becomes t_k + load, and every job sharing its row or column has
/// its remaining time increased once by min(t_k, A.tm)/σ, propagated to all
/// of that job's entries (lines 23–33). Remaining times and loads are
/// compared with a relative tolerance of 1e-12 of the largest remaining
/// time (at least 1), so subtori freeing at the same moment through
/// differently rounded sums (0.1 + 0.2 and 0.3) are all available.
///
/// The matrix grows to (m / d_min)² entries for the smallest job side
/// d_min; above [`MAX_CNP_CELLS`] the input is refused.
///
/// # Errors
/// A side of the torus or of a job that is not a power of two, a job
/// larger than the torus, a time that is not positive and finite, no jobs,
/// a matrix above [`MAX_CNP_CELLS`] entries
/// ([`TorusError::MatrixTooLarge`]) or one whose memory cannot be reserved.
pub fn cnp_alloc(m: u32, jobs: &[TorusJob]) -> Result<CnpSchedule, TorusError> {
    check(m, jobs)?;
    let p = m.trailing_zeros();
    let d_min = jobs.iter().map(|j| j.size).min().unwrap_or(m);
    let final_width = u64::from(m / d_min);
    if final_width
        .checked_mul(final_width)
        .is_none_or(|cells| cells > MAX_CNP_CELLS)
    {
        return Err(TorusError::MatrixTooLarge {
            width: final_width,
            limit: MAX_CNP_CELLS,
        });
    }
    // Sorted order with dummies: (level s, time, input index).
    let mut order: Vec<(u32, f64, Option<usize>)> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.size.trailing_zeros(), j.time, Some(i)))
        .collect();
    order.sort_by_key(|x| core::cmp::Reverse(x.0));
    let mut list: Vec<(u32, f64, Option<usize>)> = Vec::with_capacity(order.len() + p as usize);
    for &item in &order {
        if let Some(&(prev, _, _)) = list.last() {
            for s in (item.0 + 1..prev).rev() {
                list.push((s, 0.0, None));
            }
        }
        list.push(item);
    }
    let mut placements = vec![
        CnpPlacement {
            size: 0,
            time: 0.0,
            start: 0.0,
            finish: 0.0,
            row: 0,
            col: 0,
        };
        jobs.len()
    ];
    let mut finish = vec![0.0f64; list.len()];
    let mut touched_by = vec![usize::MAX; list.len()];
    let mut increment = vec![0.0f64; list.len()];
    let (mut row_sum, mut col_sum) = (Vec::new(), Vec::new());
    let mut level = list[0].0;
    let mut width = 1usize << (p - level);
    const FREE: Cell = Cell { tm: 0.0, id: None };
    let mut a = matrix(width * width, FREE)?;
    let mut time = 0.0f64;
    for (k, &(s_k, t_k, input)) in list.iter().enumerate() {
        // Lines 5–9: expand the matrix to this job's level.
        while level > s_k {
            let w2 = width * 2;
            let mut b = matrix(w2 * w2, FREE)?;
            for i in 0..w2 {
                for j in 0..w2 {
                    b[i * w2 + j] = a[(i % width) * width + (j % width)];
                }
            }
            a = b;
            width = w2;
            level -= 1;
        }
        // Lines 12–15: the earliest available subtori.
        // Remaining times that differ from the minimum only by rounding
        // (0.1 + 0.2 against 0.3) are snapped to 0, relative to the largest
        // remaining time, so subtori freeing together are all in B.
        let min = a.iter().map(|c| c.tm).fold(f64::INFINITY, f64::min);
        let tol = ZERO_TOLERANCE * a.iter().map(|c| c.tm).fold(1.0, f64::max);
        for c in &mut a {
            c.tm -= min;
            if c.tm <= tol {
                c.tm = 0.0;
            }
        }
        time += min;
        // Lines 16–17: the least loaded one, first in row-major order. The
        // load of (i, j) sums min(t_k, tm) over column j and row i (A[i,j]
        // itself is 0), so per-row and per-column sums give every load in
        // O(σ²).
        let sigma = width as f64;
        row_sum.clear();
        row_sum.resize(width, 0.0);
        col_sum.clear();
        col_sum.resize(width, 0.0);
        for i in 0..width {
            for j in 0..width {
                let o = t_k.min(a[i * width + j].tm);
                row_sum[i] += o;
                col_sum[j] += o;
            }
        }
        let mut best: Option<(usize, usize, f64)> = None;
        for i in 0..width {
            for j in 0..width {
                if a[i * width + j].tm != 0.0 {
                    continue;
                }
                let load = (col_sum[j] + row_sum[i]) / sigma;
                // Loads equal up to rounding tie to the first entry.
                if best.is_none_or(|(_, _, l)| load < l - tol) {
                    best = Some((i, j, load));
                }
            }
        }
        let Some((i, j, load)) = best else {
            // The minimum entry is always 0 after the subtraction.
            continue;
        };
        // Lines 18–22.
        a[i * width + j] = Cell {
            tm: t_k + load,
            id: Some(k),
        };
        finish[k] = time + t_k + load;
        if let Some(idx) = input {
            placements[idx] = CnpPlacement {
                size: 1 << s_k,
                time: t_k,
                start: time,
                finish: 0.0,
                row: i as u32,
                col: j as u32,
            };
        }
        // Lines 23–33: dilate every competing job once, on all its entries.
        let cells = (0..width)
            .map(|c| i * width + c)
            .chain((0..width).map(|r| r * width + j));
        for idx in cells {
            let Cell { tm, id } = a[idx];
            let Some(other) = id else { continue };
            if other == k || tm <= 0.0 || touched_by[other] == k {
                continue;
            }
            touched_by[other] = k;
            increment[other] = t_k.min(tm) / sigma;
            finish[other] += increment[other];
        }
        for c in &mut a {
            if let Some(other) = c.id
                && other != k
                && touched_by[other] == k
                && c.tm > 0.0
            {
                c.tm += increment[other];
            }
        }
    }
    for (k, &(_, _, input)) in list.iter().enumerate() {
        if let Some(idx) = input {
            placements[idx].finish = finish[k];
        }
    }
    let makespan = time + a.iter().map(|c| c.tm).fold(0.0, f64::max);
    Ok(CnpSchedule {
        jobs: placements,
        makespan,
    })
}

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
/// As [`cnp_alloc`], and a deadline that is not positive and finite.
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
            next.push(ProfileEntry {
                first: e.first,
                last: e.first + d - 1,
                finish: e.finish + t,
            });
            if e.last > e.first + d - 1 {
                next.push(ProfileEntry {
                    first: e.first + d,
                    ..e
                });
            }
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
            next.push(ProfileEntry {
                first: ej1.first,
                last: ej1.first + d - 1,
                finish: ej1.finish + rest,
            });
            if ej1.last > ej1.first + d - 1 {
                next.push(ProfileEntry {
                    first: ej1.first + d,
                    ..ej1
                });
            }
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

    fn jobs(list: &[(u32, f64)]) -> Vec<TorusJob> {
        list.iter().map(|&(d, t)| TorusJob::new(d, t)).collect()
    }

    /// Gupta & Srimani §2.4.4 (T8×8, six jobs).
    #[test]
    fn cnp_alloc_reproduces_section_2_4_4() {
        let js = jobs(&[(8, 2.0), (4, 2.0), (4, 4.0), (4, 4.0), (4, 1.0), (2, 4.0)]);
        let s = cnp_alloc(8, &js).unwrap();
        let starts: Vec<f64> = s.jobs.iter().map(|j| j.start).collect();
        assert_eq!(starts, [0.0, 2.0, 2.0, 2.0, 2.0, 4.0]);
        let cells: Vec<(u32, u32)> = s.jobs.iter().map(|j| (j.row, j.col)).collect();
        assert_eq!(cells, [(0, 0), (0, 0), (1, 1), (0, 1), (1, 0), (1, 0)]);
        // The report's table prints 8.5 for J3; its own final matrix holds
        // 5.5 at time 4 for J3, i.e. 9.5 (J6's row contends with J3): errata.
        let finishes: Vec<f64> = s.jobs.iter().map(|j| j.finish).collect();
        assert_eq!(finishes, [2.0, 5.875, 9.5, 9.0, 4.0, 10.75]);
        assert_eq!(s.makespan, 10.75);
    }

    #[test]
    fn cnp_alloc_sorts_and_inserts_dummy_levels() {
        // Input out of order and with level 2 (4×4) missing between 8 and 2.
        let js = jobs(&[(2, 1.0), (8, 1.0), (1, 1.0)]);
        let s = cnp_alloc(8, &js).unwrap();
        assert_eq!(s.jobs[1].start, 0.0);
        assert_eq!(s.jobs[1].finish, 1.0);
        // The 2×2 and 1×1 jobs start when the whole torus is released; the
        // 1×1 job shares the 2×2 job's row, so both are dilated.
        assert_eq!(s.jobs[0].start, 1.0);
        assert_eq!(s.jobs[2].start, 1.0);
        assert_eq!((s.jobs[0].row, s.jobs[0].col), (0, 0));
        // Level 0 (σ = 8): the entries of the 2×2 job are (0,0), (0,4),
        // (4,0), (4,4); (1,1) shares no row or column with them (load 0)
        // and is the first such zero entry in row-major order.
        assert_eq!((s.jobs[2].row, s.jobs[2].col), (1, 1));
        assert_eq!(s.jobs[2].finish, 2.0);
        assert_eq!(s.makespan, 2.0);
    }

    #[test]
    fn cnp_load_is_min_overlap_normalised() {
        // Two 4×4 jobs on T8×8 in the same row: the second is dilated by
        // min(t2, remaining t1)/σ and the first by the same amount.
        let js = jobs(&[(4, 4.0), (4, 4.0), (4, 4.0)]);
        let s = cnp_alloc(8, &js).unwrap();
        // J1 (0,0): 4. J2 (1,1): no shared row/col, load 0. J3 must share
        // (0,1) or (1,0): load (min(4,4) + min(4,4))/2 = 4 → tm 8, and J1,
        // J2 each +2.
        assert_eq!((s.jobs[2].row, s.jobs[2].col), (0, 1));
        assert_eq!(s.jobs[2].finish, 8.0);
        assert_eq!(s.jobs[0].finish, 6.0);
        assert_eq!(s.jobs[1].finish, 6.0);
    }

    #[test]
    fn contention_model_matches_theorem_1_proof() {
        // Proof of Theorem 1: adding J_k to n competitors adds Δ/m.
        let before = dilated_duration(5.0, 2, 3.0, 4).unwrap();
        let after = dilated_duration(5.0, 3, 3.0, 4).unwrap();
        assert_eq!(after - before, 3.0 / 4.0);
        let (inc, lk) = theorem1_loads(&[1.0, 2.0, 3.0], 4).unwrap();
        assert_eq!(inc, [0.25, 0.5, 0.75]);
        assert_eq!(lk, 1.5);
        assert!(dilated_duration(1.0, 1, f64::NAN, 2).is_err());
        assert!(dilated_duration(1.0, 1, 1.0, 0).is_err());
    }

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

    /// The (m / d_min)² availability matrix is bounded: huge ratios are
    /// refused with a typed error instead of a capacity overflow or
    /// gigabytes of memory; the limit itself is accepted.
    #[test]
    fn cnp_alloc_refuses_matrices_above_the_limit() {
        for m in [1u32 << 31, 1 << 14, 4096] {
            assert_eq!(
                cnp_alloc(m, &jobs(&[(m, 1.0), (1, 1.0)])),
                Err(TorusError::MatrixTooLarge {
                    width: u64::from(m),
                    limit: MAX_CNP_CELLS,
                })
            );
        }
        // Large tori are fine while the smallest job keeps the ratio small.
        assert!(cnp_alloc(1 << 31, &jobs(&[(1 << 31, 1.0), (1 << 21, 1.0)])).is_ok());
        let s = cnp_alloc(2048, &jobs(&[(1, 1.0)])).unwrap();
        assert_eq!(s.makespan, 1.0);
    }

    /// The literal Fig. 2: per-entry load loops (lines 1–8 of §2.4.2) and a
    /// whole-matrix propagation per competing job. Returns (start, finish,
    /// row, col) per input job and the makespan.
    fn cnp_literal(m: u32, js: &[TorusJob]) -> (Vec<(f64, f64, usize, usize)>, f64) {
        let p = m.trailing_zeros();
        let mut order: Vec<usize> = (0..js.len()).collect();
        order.sort_by_key(|&i| core::cmp::Reverse(js[i].size));
        let mut list: Vec<(u32, f64, Option<usize>)> = Vec::new();
        for &i in &order {
            let s = js[i].size.trailing_zeros();
            if let Some(&(prev, _, _)) = list.last() {
                for d in (s + 1..prev).rev() {
                    list.push((d, 0.0, None));
                }
            }
            list.push((s, js[i].time, Some(i)));
        }
        let mut w = 1usize << (p - list[0].0);
        let mut tm = vec![vec![0.0f64; w]; w];
        let mut id = vec![vec![usize::MAX; w]; w];
        let mut fin = vec![0.0; list.len()];
        let mut out = vec![(0.0, 0.0, 0, 0); js.len()];
        let mut time = 0.0;
        for (k, &(s, t, input)) in list.iter().enumerate() {
            while w < 1 << (p - s) {
                let w2 = 2 * w;
                tm = (0..w2)
                    .map(|i| (0..w2).map(|j| tm[i % w][j % w]).collect())
                    .collect();
                id = (0..w2)
                    .map(|i| (0..w2).map(|j| id[i % w][j % w]).collect())
                    .collect();
                w = w2;
            }
            let min = tm.iter().flatten().copied().fold(f64::INFINITY, f64::min);
            tm.iter_mut().flatten().for_each(|x| *x -= min);
            time += min;
            let mut best = (0, 0, f64::INFINITY);
            for i in 0..w {
                for j in 0..w {
                    if tm[i][j] != 0.0 {
                        continue;
                    }
                    let mut load = 0.0;
                    for tm_row in &tm {
                        load += t.min(tm_row[j]);
                    }
                    let mut row = 0.0;
                    for &x in &tm[i] {
                        row += t.min(x);
                    }
                    let load = (load + row) / w as f64;
                    if load < best.2 {
                        best = (i, j, load);
                    }
                }
            }
            let (i, j, load) = best;
            tm[i][j] = t + load;
            id[i][j] = k;
            fin[k] = time + t + load;
            if let Some(x) = input {
                out[x] = (time, 0.0, i, j);
            }
            let mut done = Vec::new();
            let cells: Vec<(usize, usize)> = (0..w)
                .map(|c| (i, c))
                .chain((0..w).map(|r| (r, j)))
                .collect();
            for (r, c) in cells {
                let other = id[r][c];
                if other == k || other == usize::MAX || tm[r][c] <= 0.0 || done.contains(&other) {
                    continue;
                }
                done.push(other);
                let inc = t.min(tm[r][c]) / w as f64;
                for x in 0..w {
                    for y in 0..w {
                        if id[x][y] == other && tm[x][y] > 0.0 {
                            tm[x][y] += inc;
                        }
                    }
                }
                fin[other] += inc;
            }
        }
        for (k, &(_, _, input)) in list.iter().enumerate() {
            if let Some(x) = input {
                out[x].1 = fin[k];
            }
        }
        let makespan = time + tm.iter().flatten().copied().fold(0.0, f64::max);
        (out, makespan)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The row/column-sum implementation chooses exactly what the
        /// literal loops of Fig. 2 choose (dyadic times keep sums exact).
        #[test]
        fn cnp_alloc_equals_the_literal_algorithm(
            raw in proptest::collection::vec((0u32..4, 1u32..17), 1..14)
        ) {
            let js: Vec<TorusJob> = raw
                .iter()
                .map(|&(e, q)| TorusJob::new(1 << e, f64::from(q) / 4.0))
                .collect();
            let fast = cnp_alloc(8, &js).unwrap();
            let (lit, makespan) = cnp_literal(8, &js);
            proptest::prop_assert_eq!(fast.makespan, makespan);
            for (f, l) in fast.jobs.iter().zip(&lit) {
                proptest::prop_assert_eq!(
                    (f.start, f.finish, f.row as usize, f.col as usize),
                    *l
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// CNP_Alloc is scale-invariant (every quantity is a sum, minimum or
        /// quotient of times): times of a tenth, which are not dyadic and
        /// round, choose the same subtori as the integers, and subtori that
        /// free at the same moment are both seen as free.
        #[test]
        fn cnp_alloc_is_scale_invariant_with_non_dyadic_times(
            raw in proptest::collection::vec((0u32..3, 1u32..8), 1..12)
        ) {
            let whole: Vec<TorusJob> = raw
                .iter()
                .map(|&(e, q)| TorusJob::new(1 << e, f64::from(q)))
                .collect();
            let tenth: Vec<TorusJob> = whole
                .iter()
                .map(|j| TorusJob::new(j.size, j.time / 10.0))
                .collect();
            let a = cnp_alloc(4, &whole).unwrap();
            let b = cnp_alloc(4, &tenth).unwrap();
            for (x, y) in a.jobs.iter().zip(&b.jobs) {
                proptest::prop_assert_eq!((x.row, x.col), (y.row, y.col));
                proptest::prop_assert!((x.start / 10.0 - y.start).abs() < 1e-9);
                proptest::prop_assert!((x.finish / 10.0 - y.finish).abs() < 1e-9);
            }
        }
    }

    /// Subtori freeing at the same moment through differently rounded
    /// sums (here remaining times of a tenth) are all free together.
    #[test]
    fn cnp_alloc_sees_subtori_freeing_at_rounded_equal_times() {
        let q = [(1, 1), (1, 3), (1, 4), (2, 2), (2, 1), (2, 2)];
        let whole = jobs(&q.map(|(d, t)| (d, f64::from(t))));
        let tenth = jobs(&q.map(|(d, t)| (d, f64::from(t) / 10.0)));
        let (a, b) = (cnp_alloc(4, &whole).unwrap(), cnp_alloc(4, &tenth).unwrap());
        for (x, y) in a.jobs.iter().zip(&b.jobs) {
            assert_eq!((x.row, x.col), (y.row, y.col));
            assert!((x.start / 10.0 - y.start).abs() < 1e-12);
        }
        assert!((a.makespan / 10.0 - b.makespan).abs() < 1e-12);
    }

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

    /// Gupta & Srimani §3 example: T16, deadline 4.
    fn section3_jobs() -> Vec<TorusJob> {
        jobs(&[(8, 2.0), (4, 4.0), (4, 3.0), (2, 2.0), (2, 2.5)])
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

    /// Every job runs exactly its time, within [0, T], never on two
    /// subtori at once, and no two runs overlap in space and time.
    fn check_schedule(m: u32, js: &[TorusJob], s: &PreemptiveSchedule) {
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

    /// A tolerance below the float spacing of the deadlines must still end
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
