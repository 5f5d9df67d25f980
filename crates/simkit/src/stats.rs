//! Streaming statistics for simulation output.
//!
//! - [`Welford`]: count, mean, variance, min and max of a stream in O(1)
//!   memory, with Welford's update (Welford 1962; Knuth, TAOCP vol. 2,
//!   §4.2.2) and the pairwise merge of Chan, Golub and LeVeque (1979).
//! - [`TimeWeighted`]: the time average of a piecewise-constant signal —
//!   busy nodes for utilization (busy node·time / (N·T), docs/baselines.md#utilization), queue
//!   length — as an exact integral.
//! - [`Histogram`]: fixed-width bins with under/overflow counts and
//!   quantile estimates for response-time distributions, no allocation per
//!   sample; [`quantile`] gives the exact sample quantile of a slice.
//!
//! Every recorder refuses NaN and infinite values with a [`StatsError`] and
//! leaves its state unchanged, so one bad observation cannot silently turn
//! a whole run's mean into NaN.
//!
//! ```
//! use partalloc_simkit::{TimeWeighted, Welford};
//!
//! let mut w = Welford::new();
//! for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
//!     w.push(x)?;
//! }
//! assert_eq!(w.mean(), Some(5.0));
//! assert_eq!(w.population_variance(), Some(4.0));
//!
//! // 4 busy nodes during [0, 2), 8 during [2, 3), 0 during [3, 4).
//! let mut busy = TimeWeighted::new(0.0, 4.0)?;
//! busy.update(2.0, 8.0)?;
//! busy.update(3.0, 0.0)?;
//! assert_eq!(busy.mean_until(4.0)?, (4.0 * 2.0 + 8.0) / 4.0);
//! # Ok::<(), partalloc_simkit::StatsError>(())
//! ```

use thiserror::Error;

/// Why an observation or a query was refused. The recorder is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
#[non_exhaustive]
pub enum StatsError {
    /// An observed value is NaN or infinite.
    #[error("observation {value} is not a finite number")]
    NotFinite {
        /// The refused value.
        value: f64,
    },
    /// A time is NaN, infinite or earlier than the previous update.
    #[error(
        "time {time} is not finite or is before the last update at {last}; times must not go backwards"
    )]
    BadTime {
        /// The refused time.
        time: f64,
        /// The time of the last update.
        last: f64,
    },
    /// A histogram's range or bin count is unusable.
    #[error(
        "histogram needs finite bounds lo < hi and at least one bin (got lo {lo}, hi {hi}, {bins} bins)"
    )]
    BadHistogram {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
        /// Number of bins.
        bins: usize,
    },
    /// A probability is outside its range.
    #[error("probability {p} must lie in [0, 1] (a confidence level in (0, 1))")]
    BadProbability {
        /// The refused probability.
        p: f64,
    },
    /// The statistic needs at least one observation.
    #[error("no observations: the statistic needs at least one sample")]
    Empty,
}

/// Streaming count, mean, variance, min and max (Welford's algorithm).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Welford {
    count: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Welford {
    /// An empty accumulator.
    #[must_use]
    pub fn new() -> Self {
        Self {
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// Adds one observation.
    ///
    /// # Errors
    /// [`StatsError::NotFinite`] for NaN or infinite `x`; unchanged.
    #[inline]
    pub fn push(&mut self, x: f64) -> Result<(), StatsError> {
        if !x.is_finite() {
            return Err(StatsError::NotFinite { value: x });
        }
        self.count += 1;
        let delta = x - self.mean;
        // Precision: count ≤ 2^53 in any practical run.
        #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
        let n = self.count as f64;
        self.mean += delta / n;
        self.m2 += delta * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        Ok(())
    }

    /// Combines two accumulators as if every observation of `other` had
    /// been pushed into `self` (Chan–Golub–LeVeque).
    pub fn merge(&mut self, other: &Self) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let delta = other.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += other.m2 + delta * delta * na * nb / n;
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of observations.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sample mean, or `None` with no observations.
    #[must_use]
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then_some(self.mean)
    }

    /// The unbiased sample variance (divisor n − 1), or `None` with fewer
    /// than two observations.
    #[must_use]
    pub fn variance(&self) -> Option<f64> {
        #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
        let d = (self.count > 1).then(|| (self.count - 1) as f64)?;
        Some((self.m2 / d).max(0.0))
    }

    /// The population variance (divisor n), or `None` with no observations.
    #[must_use]
    pub fn population_variance(&self) -> Option<f64> {
        #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
        let d = (self.count > 0).then_some(self.count as f64)?;
        Some((self.m2 / d).max(0.0))
    }

    /// The sample standard deviation (square root of [`variance`](Self::variance)).
    #[must_use]
    pub fn std_dev(&self) -> Option<f64> {
        self.variance().map(f64::sqrt)
    }

    /// The coefficient of variation: sample standard deviation / mean, or
    /// `None` with fewer than two observations or a zero mean.
    #[must_use]
    pub fn coefficient_of_variation(&self) -> Option<f64> {
        let (s, m) = (self.std_dev()?, self.mean()?);
        (m != 0.0).then(|| s / m)
    }

    /// The smallest observation.
    #[must_use]
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest observation.
    #[must_use]
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }
}

/// Time average of a piecewise-constant signal (utilization, queue
/// length): ∫ value dt / elapsed, integrated exactly between updates.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TimeWeighted {
    start: f64,
    last_time: f64,
    value: f64,
    integral: f64,
    max: f64,
}

impl TimeWeighted {
    /// Starts observing at time `start` with the signal at `value`.
    ///
    /// # Errors
    /// [`StatsError::BadTime`] / [`StatsError::NotFinite`] for non-finite
    /// arguments.
    pub fn new(start: f64, value: f64) -> Result<Self, StatsError> {
        if !start.is_finite() {
            return Err(StatsError::BadTime {
                time: start,
                last: start,
            });
        }
        if !value.is_finite() {
            return Err(StatsError::NotFinite { value });
        }
        Ok(Self {
            start,
            last_time: start,
            value,
            integral: 0.0,
            max: value,
        })
    }

    /// The signal changes to `value` at `time` (≥ the last update).
    ///
    /// # Errors
    /// [`StatsError::BadTime`] if `time` is not finite or goes backwards,
    /// [`StatsError::NotFinite`] for a non-finite value; unchanged.
    #[inline]
    pub fn update(&mut self, time: f64, value: f64) -> Result<(), StatsError> {
        if !(time.is_finite() && time >= self.last_time) {
            return Err(StatsError::BadTime {
                time,
                last: self.last_time,
            });
        }
        if !value.is_finite() {
            return Err(StatsError::NotFinite { value });
        }
        self.integral += self.value * (time - self.last_time);
        self.last_time = time;
        self.value = value;
        self.max = self.max.max(value);
        Ok(())
    }

    /// The current value of the signal.
    #[must_use]
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The largest value the signal has taken.
    #[must_use]
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The time of the last update.
    #[must_use]
    pub fn last_time(&self) -> f64 {
        self.last_time
    }

    /// ∫ value dt from the start to `until` (≥ the last update), with the
    /// current value held until then.
    ///
    /// # Errors
    /// [`StatsError::BadTime`] if `until` is not finite or before the last
    /// update.
    pub fn integral_until(&self, until: f64) -> Result<f64, StatsError> {
        if !(until.is_finite() && until >= self.last_time) {
            return Err(StatsError::BadTime {
                time: until,
                last: self.last_time,
            });
        }
        Ok(self.integral + self.value * (until - self.last_time))
    }

    /// The time average over [start, `until`]. Over an empty interval
    /// (`until` = start) it is the current value.
    ///
    /// # Errors
    /// As [`integral_until`](Self::integral_until).
    pub fn mean_until(&self, until: f64) -> Result<f64, StatsError> {
        let integral = self.integral_until(until)?;
        let span = until - self.start;
        Ok(if span > 0.0 {
            integral / span
        } else {
            self.value
        })
    }

    /// Restarts the average at `time` (e.g. after a warm-up period),
    /// keeping the current value.
    ///
    /// # Errors
    /// [`StatsError::BadTime`] as for [`update`](Self::update).
    pub fn reset_at(&mut self, time: f64) -> Result<(), StatsError> {
        self.update(time, self.value)?;
        self.start = time;
        self.integral = 0.0;
        self.max = self.value;
        Ok(())
    }
}

/// Fixed-width histogram over [lo, hi) with underflow and overflow counts.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "HistogramRepr", try_from = "HistogramRepr")
)]
pub struct Histogram {
    lo: f64,
    hi: f64,
    width: f64,
    bins: Vec<u64>,
    underflow: u64,
    overflow: u64,
    total: u64,
}

/// The serialized form of a [`Histogram`]: range, counts and the counts
/// outside the range. Deserializing goes through [`Histogram::new`], so a
/// file cannot hold an empty or reversed range, and the total is
/// recomputed.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct HistogramRepr {
    lo: f64,
    hi: f64,
    bins: Vec<u64>,
    underflow: u64,
    overflow: u64,
}

#[cfg(feature = "serde")]
impl From<Histogram> for HistogramRepr {
    fn from(h: Histogram) -> Self {
        Self {
            lo: h.lo,
            hi: h.hi,
            bins: h.bins,
            underflow: h.underflow,
            overflow: h.overflow,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<HistogramRepr> for Histogram {
    type Error = StatsError;
    fn try_from(r: HistogramRepr) -> Result<Self, StatsError> {
        let mut h = Self::new(r.lo, r.hi, r.bins.len())?;
        let total = r
            .bins
            .iter()
            .try_fold(r.underflow, |acc, &c| acc.checked_add(c))
            .and_then(|t| t.checked_add(r.overflow))
            .ok_or(StatsError::BadHistogram {
                lo: r.lo,
                hi: r.hi,
                bins: r.bins.len(),
            })?;
        h.bins = r.bins;
        h.underflow = r.underflow;
        h.overflow = r.overflow;
        h.total = total;
        Ok(h)
    }
}

impl Histogram {
    /// `bins` equal bins covering [lo, hi).
    ///
    /// # Errors
    /// [`StatsError::BadHistogram`] unless lo < hi are finite and bins ≥ 1,
    /// or if the bins cannot be allocated.
    pub fn new(lo: f64, hi: f64, bins: usize) -> Result<Self, StatsError> {
        #[expect(clippy::cast_precision_loss, reason = "bin counts are small")]
        let width = (hi - lo) / bins as f64;
        if !(lo.is_finite() && hi.is_finite() && lo < hi && bins > 0 && width > 0.0) {
            return Err(StatsError::BadHistogram { lo, hi, bins });
        }
        let mut counts = Vec::new();
        counts
            .try_reserve_exact(bins)
            .map_err(|_| StatsError::BadHistogram { lo, hi, bins })?;
        counts.resize(bins, 0);
        Ok(Self {
            lo,
            hi,
            width,
            bins: counts,
            underflow: 0,
            overflow: 0,
            total: 0,
        })
    }

    /// Counts one observation.
    ///
    /// # Errors
    /// [`StatsError::NotFinite`] for NaN or infinite `x`; unchanged.
    #[inline]
    pub fn push(&mut self, x: f64) -> Result<(), StatsError> {
        if !x.is_finite() {
            return Err(StatsError::NotFinite { value: x });
        }
        self.total += 1;
        if x < self.lo {
            self.underflow += 1;
        } else if x >= self.hi {
            self.overflow += 1;
        } else {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "x in [lo, hi) gives a non-negative index below bins (clamped for rounding)"
            )]
            let i = (((x - self.lo) / self.width) as usize).min(self.bins.len() - 1);
            if let Some(b) = self.bins.get_mut(i) {
                *b += 1;
            }
        }
        Ok(())
    }

    /// Counts per bin, lowest first.
    #[must_use]
    pub fn counts(&self) -> &[u64] {
        &self.bins
    }

    /// The [lower, upper) edges of bin `i`, if it exists.
    #[must_use]
    pub fn bin_edges(&self, i: usize) -> Option<(f64, f64)> {
        #[expect(clippy::cast_precision_loss, reason = "bin counts are small")]
        let lower = self.lo + self.width * i as f64;
        (i < self.bins.len()).then(|| (lower, (lower + self.width).min(self.hi)))
    }

    /// Observations below `lo`.
    #[must_use]
    pub fn underflow(&self) -> u64 {
        self.underflow
    }

    /// Observations at or above `hi`.
    #[must_use]
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// All observations counted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Estimated `p`-quantile, interpolating linearly inside the bin that
    /// holds it (observations assumed uniform within a bin). Quantiles that
    /// fall in the underflow or overflow return `lo` or `hi`.
    ///
    /// # Errors
    /// [`StatsError::BadProbability`] unless 0 ≤ p ≤ 1;
    /// [`StatsError::Empty`] with no observations.
    pub fn quantile(&self, p: f64) -> Result<f64, StatsError> {
        if !(0.0..=1.0).contains(&p) {
            return Err(StatsError::BadProbability { p });
        }
        if self.total == 0 {
            return Err(StatsError::Empty);
        }
        #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
        let target = p * self.total as f64;
        #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
        let mut below = self.underflow as f64;
        if target <= below && self.underflow > 0 {
            return Ok(self.lo);
        }
        for (i, &c) in self.bins.iter().enumerate() {
            #[expect(clippy::cast_precision_loss, reason = "counts stay below 2^53")]
            let c = c as f64;
            if c > 0.0 && target <= below + c {
                let (lower, upper) = self.bin_edges(i).ok_or(StatsError::Empty)?;
                return Ok(lower + (upper - lower) * ((target - below) / c));
            }
            below += c;
        }
        Ok(self.hi)
    }
}

/// The exact sample `p`-quantile of `data` with linear interpolation
/// between order statistics (Hyndman–Fan type 7, the default of R and
/// NumPy). Reorders `data` (selection, O(n)).
///
/// # Errors
/// [`StatsError::BadProbability`] unless 0 ≤ p ≤ 1; [`StatsError::Empty`]
/// for an empty slice; [`StatsError::NotFinite`] if any value is NaN or
/// infinite.
pub fn quantile(data: &mut [f64], p: f64) -> Result<f64, StatsError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(StatsError::BadProbability { p });
    }
    if let Some(&bad) = data.iter().find(|x| !x.is_finite()) {
        return Err(StatsError::NotFinite { value: bad });
    }
    let n = data.len();
    if n == 0 {
        return Err(StatsError::Empty);
    }
    #[expect(clippy::cast_precision_loss, reason = "slice lengths stay below 2^53")]
    let h = p * (n - 1) as f64;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0 ≤ h ≤ n − 1"
    )]
    let lo = h.floor() as usize;
    let (_, &mut a, rest) = data.select_nth_unstable_by(lo, f64::total_cmp);
    let frac = h - h.floor();
    if frac == 0.0 || rest.is_empty() {
        return Ok(a);
    }
    let b = rest
        .iter()
        .copied()
        .min_by(f64::total_cmp)
        .ok_or(StatsError::Empty)?;
    Ok(a + frac * (b - a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[cfg(feature = "serde")]
    #[test]
    fn histogram_files_are_validated() {
        let mut h = Histogram::new(0.0, 10.0, 5).unwrap();
        for x in [-1.0, 0.5, 3.0, 9.9, 12.0] {
            h.push(x).unwrap();
        }
        let text = serde_json::to_string(&h).unwrap();
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.total(), 5);
        for bad in [
            r#"{"lo":0.0,"hi":1.0,"bins":[],"underflow":0,"overflow":0}"#,
            r#"{"lo":1.0,"hi":0.0,"bins":[1],"underflow":0,"overflow":0}"#,
            r#"{"lo":0.0,"hi":1.0,"bins":[18446744073709551615],"underflow":1,"overflow":0}"#,
        ] {
            let r = serde_json::from_str::<Histogram>(bad);
            assert!(r.is_err(), "{bad} gave {r:?}");
        }
    }

    #[test]
    fn welford_matches_two_pass_on_known_data() {
        // Data set with mean 5 and population variance 4 (the classic
        // textbook example); sample variance 32/7.
        let mut w = Welford::new();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            w.push(x).unwrap();
        }
        assert_eq!(w.count(), 8);
        assert_eq!(w.mean(), Some(5.0));
        assert_eq!(w.population_variance(), Some(4.0));
        assert!((w.variance().unwrap() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(w.min(), Some(2.0));
        assert_eq!(w.max(), Some(9.0));
        assert!(
            (w.coefficient_of_variation().unwrap() - (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-12
        );
    }

    #[test]
    fn welford_empty_and_bad_input() {
        let mut w = Welford::new();
        assert_eq!(w.mean(), None);
        assert_eq!(w.variance(), None);
        assert_eq!(w.min(), None);
        w.push(3.0).unwrap();
        assert_eq!(w.variance(), None);
        assert_eq!(w.population_variance(), Some(0.0));
        let before = w;
        assert_eq!(
            w.push(f64::NAN).unwrap_err().to_string(),
            "observation NaN is not a finite number"
        );
        assert!(w.push(f64::INFINITY).is_err());
        assert_eq!(w, before);
    }

    #[test]
    fn welford_is_stable_with_large_offset() {
        // Naive Σx² − n·mean² loses everything here; Welford keeps it.
        let mut w = Welford::new();
        for x in [1e9 + 4.0, 1e9 + 7.0, 1e9 + 13.0, 1e9 + 16.0] {
            w.push(x).unwrap();
        }
        assert!((w.variance().unwrap() - 30.0).abs() < 1e-6);
    }

    #[test]
    fn time_weighted_integral() {
        let mut t = TimeWeighted::new(10.0, 1.0).unwrap();
        assert_eq!(t.mean_until(10.0).unwrap(), 1.0);
        t.update(12.0, 3.0).unwrap();
        t.update(12.0, 5.0).unwrap(); // zero-length step contributes nothing
        t.update(13.0, 0.0).unwrap();
        assert_eq!(t.integral_until(14.0).unwrap(), 2.0 + 5.0);
        assert_eq!(t.mean_until(14.0).unwrap(), 7.0 / 4.0);
        assert_eq!(t.max(), 5.0);
        let before = t;
        assert!(t.update(12.5, 1.0).is_err());
        assert!(t.update(f64::NAN, 1.0).is_err());
        assert!(t.update(15.0, f64::INFINITY).is_err());
        assert!(t.mean_until(12.0).is_err());
        assert_eq!(t, before);
        t.reset_at(14.0).unwrap();
        t.update(16.0, 2.0).unwrap();
        assert_eq!(t.mean_until(18.0).unwrap(), 1.0);
        assert!(TimeWeighted::new(f64::NAN, 0.0).is_err());
        assert!(TimeWeighted::new(0.0, f64::NAN).is_err());
    }

    #[test]
    fn histogram_counts_and_quantiles() {
        let mut h = Histogram::new(0.0, 10.0, 10).unwrap();
        for i in 0..100 {
            h.push(f64::from(i) / 10.0).unwrap(); // 10 per bin
        }
        assert_eq!(h.counts(), &[10; 10]);
        assert_eq!(h.quantile(0.5).unwrap(), 5.0);
        assert_eq!(h.quantile(0.25).unwrap(), 2.5);
        assert_eq!(h.quantile(1.0).unwrap(), 10.0);
        h.push(-1.0).unwrap();
        h.push(10.0).unwrap();
        assert_eq!((h.underflow(), h.overflow(), h.total()), (1, 1, 102));
        assert_eq!(h.quantile(0.0).unwrap(), 0.0);
        assert_eq!(h.bin_edges(9), Some((9.0, 10.0)));
        assert_eq!(h.bin_edges(10), None);
        assert!(h.push(f64::NAN).is_err());
        assert_eq!(h.total(), 102);
        assert!(h.quantile(1.5).is_err());
        assert!(Histogram::new(1.0, 1.0, 3).is_err());
        assert!(Histogram::new(0.0, 1.0, 0).is_err());
        assert!(Histogram::new(0.0, f64::INFINITY, 3).is_err());
        // Absurd bin counts are refused, not an allocation failure.
        assert!(Histogram::new(0.0, 1.0, usize::MAX).is_err());
        assert_eq!(
            Histogram::new(0.0, 1.0, 2).unwrap().quantile(0.5),
            Err(StatsError::Empty)
        );
    }

    #[test]
    fn exact_quantile_type7() {
        // NumPy: np.quantile([1, 2, 3, 4], 0.5) = 2.5, 0.25 → 1.75.
        let mut d = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&mut d, 0.5).unwrap(), 2.5);
        assert_eq!(quantile(&mut d, 0.25).unwrap(), 1.75);
        assert_eq!(quantile(&mut d, 0.0).unwrap(), 1.0);
        assert_eq!(quantile(&mut d, 1.0).unwrap(), 4.0);
        assert_eq!(quantile(&mut [], 0.5), Err(StatsError::Empty));
        assert!(quantile(&mut [1.0, f64::NAN], 0.5).is_err());
        assert!(quantile(&mut [1.0], -0.1).is_err());
    }

    proptest! {
        #[test]
        fn merge_equals_sequential(
            a in proptest::collection::vec(-1e3f64..1e3, 0..50),
            b in proptest::collection::vec(-1e3f64..1e3, 0..50),
        ) {
            let (mut wa, mut wb, mut all) = (Welford::new(), Welford::new(), Welford::new());
            for &x in &a { wa.push(x).unwrap(); all.push(x).unwrap(); }
            for &x in &b { wb.push(x).unwrap(); all.push(x).unwrap(); }
            wa.merge(&wb);
            prop_assert_eq!(wa.count(), all.count());
            if let (Some(m1), Some(m2)) = (wa.mean(), all.mean()) {
                prop_assert!((m1 - m2).abs() < 1e-9);
            }
            if let (Some(v1), Some(v2)) = (wa.variance(), all.variance()) {
                prop_assert!((v1 - v2).abs() < 1e-6 * (1.0 + v2));
            }
            prop_assert_eq!(wa.min(), all.min());
            prop_assert_eq!(wa.max(), all.max());
        }

        /// Brute-force oracle: sort and interpolate.
        #[test]
        fn quantile_matches_sorting(
            mut d in proptest::collection::vec(-1e3f64..1e3, 1..60),
            p in 0.0f64..=1.0,
        ) {
            let mut s = d.clone();
            s.sort_by(f64::total_cmp);
            let h = p * (s.len() - 1) as f64;
            let i = h.floor() as usize;
            let want = if i + 1 < s.len() { s[i] + (h - h.floor()) * (s[i + 1] - s[i]) } else { s[i] };
            let got = quantile(&mut d, p).unwrap();
            prop_assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        }
    }
}
