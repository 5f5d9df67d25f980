//! The artifact's analysis (`scripts/analysis.py`,
//! `experiments/analysis/merge_{alloc,frag,frag_ratio}_discrete.py`),
//! number for number: each report line's arrived share is rounded to a
//! whole percent, and for each percent 0–130 the lines at that percent
//! (or within one of it when none is) are averaged as pandas averages
//! (NumPy's pairwise sum) and rounded as NumPy rounds.

use crate::experiment::Step;

/// Percent points of arrived workload the analysis reports: 0 to 130.
pub const PERCENTS: usize = 131;

/// One experiment's three curves, `None` where the analysis leaves a gap.
#[derive(Debug, Clone, PartialEq)]
pub struct Curves {
    /// GPU allocation, % of the cluster's GPUs.
    pub alloc: Vec<Option<f64>>,
    /// Fragmented GPUs, % of the cluster's GPUs.
    pub frag: Vec<Option<f64>>,
    /// Fragmented share of idle GPUs, %.
    pub frag_ratio: Vec<Option<f64>>,
}

/// Python's `round(x, 0)` and `round(x, 2)` of a float: the correctly
/// rounded decimal, ties to even.
fn py_round(x: f64, digits: usize) -> f64 {
    format!("{x:.digits$}").parse().unwrap_or(x)
}

/// NumPy's `round(x, 2)` of a float64 scalar: `rint(x · 100) / 100`.
fn np_round2(x: f64) -> f64 {
    (x * 100.0).round_ties_even() / 100.0
}

/// NumPy's pairwise sum of float64 (`pairwise_sum` in its loops: plain
/// below 8 values, eight accumulators up to 128, halves above).
#[must_use]
pub fn np_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut r = 0.0;
        for v in a {
            r += v;
        }
        r
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        np_sum(&a[..n2]) + np_sum(&a[n2..])
    }
}

/// pandas' mean of a float64 column: NumPy's sum over the count.
#[must_use]
pub fn np_mean(a: &[f64]) -> f64 {
    (0.0 + np_sum(a)) / a.len() as f64
}

/// The Go report's `%.2f` of a value, read back as the analysis reads it.
fn go_2f(x: f64) -> f64 {
    py_round(x, 2)
}

/// The three curves of one experiment on a cluster of `gpus` GPUs.
#[must_use]
pub fn curves(steps: &[Step], gpus: u32) -> Curves {
    let g = f64::from(gpus);
    // Rounding to a whole number is exact on the binary value, as Python
    // rounds; two decimals go through the decimal text, so a report whose
    // values did not change (a failed pod) reuses the previous ones.
    let arrive: Vec<f64> = steps
        .iter()
        .map(|s| (s.arrived as f64 / g / 10.0).round_ties_even())
        .collect();
    let mut alloc = Vec::with_capacity(steps.len());
    let mut frag_milli = Vec::with_capacity(steps.len());
    let mut frag_ratio = Vec::with_capacity(steps.len());
    let mut last: Option<&Step> = None;
    for s in steps {
        match last {
            Some(p)
                if p.used == s.used
                    && p.frag.to_bits() == s.frag.to_bits()
                    && p.idle.to_bits() == s.idle.to_bits() =>
            {
                let n = alloc.len() - 1;
                alloc.push(alloc[n]);
                frag_milli.push(frag_milli[n]);
                frag_ratio.push(frag_ratio[n]);
            }
            _ => {
                alloc.push(py_round(s.used as f64 / g / 10.0, 2));
                frag_milli.push(go_2f(s.frag));
                frag_ratio.push(go_2f(100.0 * s.frag / s.idle));
            }
        }
        last = Some(s);
    }
    let mut out = Curves {
        alloc: vec![None; PERCENTS],
        frag: vec![None; PERCENTS],
        frag_ratio: vec![None; PERCENTS],
    };
    let mut pick: Vec<usize> = Vec::new();
    let mut buf: Vec<f64> = Vec::new();
    for x in 0..PERCENTS {
        let xf = x as f64;
        pick.clear();
        pick.extend((0..steps.len()).filter(|&i| arrive[i] == xf));
        if pick.is_empty() {
            pick.extend(
                (0..steps.len()).filter(|&i| arrive[i] >= xf - 1.0 && arrive[i] <= xf + 1.0),
            );
        }
        if pick.is_empty() {
            continue;
        }
        let mean_of = |col: &[f64], buf: &mut Vec<f64>| {
            buf.clear();
            buf.extend(pick.iter().map(|&i| col[i]));
            np_mean(buf)
        };
        out.alloc[x] = Some(np_round2(mean_of(&alloc, &mut buf)));
        let fm = mean_of(&frag_milli, &mut buf);
        out.frag[x] = Some(np_round2(100.0 * fm / 1000.0 / g));
        out.frag_ratio[x] = Some(mean_of(&frag_ratio, &mut buf));
    }
    out
}
