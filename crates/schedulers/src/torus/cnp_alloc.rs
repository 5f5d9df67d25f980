//! Algorithm CNP_Alloc (Gupta & Srimani §2.4, Fig. 2): non-preemptive
//! scheduling of square subtori with link contention.

use partalloc_topology::{Grid, Subtorus, TopologyError};

use super::{TorusError, TorusJob, check};

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

impl CnpPlacement {
    /// The job's subtorus T_{d,d}^{(row, col)} as the topology crate's
    /// [`Subtorus`] of `torus` (strides m/d, offset (row, col)), so a
    /// schedule can be checked against the machine model: its nodes, its
    /// links, and which placements share links.
    ///
    /// # Errors
    /// [`TopologyError`] if `torus` is not the m×m torus the schedule was
    /// computed for (the job's side must divide m).
    ///
    /// ```
    /// use partalloc_schedulers::torus::{cnp_alloc, TorusJob};
    /// use partalloc_topology::Grid;
    /// let s = cnp_alloc(8, &[TorusJob::new(4, 1.0), TorusJob::new(4, 1.0)])?;
    /// let t8 = Grid::torus(&[8, 8])?;
    /// let (a, b) = (s.jobs[0].subtorus(&t8)?, s.jobs[1].subtorus(&t8)?);
    /// assert_eq!(a.num_nodes(), 16);
    /// // CNP_Alloc puts the second job on a link-disjoint subtorus.
    /// assert!(a.is_link_disjoint(&b)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn subtorus(&self, torus: &Grid) -> Result<Subtorus, TopologyError> {
        let stride = |m: u32| m.checked_div(self.size).unwrap_or(0);
        let sides = torus.sides();
        let strides: Vec<u32> = sides.iter().map(|&m| stride(m)).collect();
        Subtorus::new(torus, &strides, &[self.row, self.col])
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torus::fixtures::jobs;

    /// CNP_Alloc's contention rule — a job slows every running job that
    /// shares its row or column of the availability matrix — is the
    /// topology's link model: two distinct subtori T^{(r,c)} of the same
    /// side share a link exactly when they share a row or a column.
    #[test]
    fn contention_rows_and_columns_are_shared_links() {
        for (m, d) in [(8, 4), (8, 2), (16, 4), (16, 8)] {
            let torus = Grid::torus(&[m, m]).unwrap();
            let k = m / d;
            let place = |row, col| CnpPlacement {
                size: d,
                time: 1.0,
                start: 0.0,
                finish: 1.0,
                row,
                col,
            };
            for (r1, c1, r2, c2) in (0..k).flat_map(|a| {
                (0..k)
                    .flat_map(move |b| (0..k).flat_map(move |c| (0..k).map(move |e| (a, b, c, e))))
            }) {
                if (r1, c1) == (r2, c2) {
                    continue;
                }
                let a = place(r1, c1).subtorus(&torus).unwrap();
                let b = place(r2, c2).subtorus(&torus).unwrap();
                assert_eq!(a.num_nodes(), (d * d) as usize);
                let contend = r1 == r2 || c1 == c2;
                assert_eq!(
                    !a.is_link_disjoint(&b).unwrap(),
                    contend,
                    "T{m}x{m}, side {d}: ({r1},{c1}) and ({r2},{c2})"
                );
            }
        }
    }

    /// The §2.4.4 schedule on the topology's torus: every job's subtorus has
    /// d×d nodes, and the placements are valid subtori of T8×8.
    #[test]
    fn section_2_4_4_placements_are_subtori_of_the_machine() {
        let js = jobs(&[(8, 2.0), (4, 2.0), (4, 4.0), (4, 4.0), (4, 1.0), (2, 4.0)]);
        let s = cnp_alloc(8, &js).unwrap();
        let t8 = Grid::torus(&[8, 8]).unwrap();
        for j in &s.jobs {
            let st = j.subtorus(&t8).unwrap();
            assert_eq!(st.num_nodes(), (j.size * j.size) as usize, "{j:?}");
        }
        // J2–J5 share the time window [2, 3): J2 (0,0) and J5 (1,0) share a
        // column, hence links; J2 and J3 (1,1) do not.
        let sub = |i: usize| s.jobs[i].subtorus(&t8).unwrap();
        assert!(!sub(1).is_link_disjoint(&sub(4)).unwrap());
        assert!(sub(1).is_link_disjoint(&sub(2)).unwrap());
        // A 4×4 torus is not the machine of this schedule's side-8 job.
        let t4 = Grid::torus(&[4, 4]).unwrap();
        assert!(s.jobs[0].subtorus(&t4).is_err());
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
}
