//! Student-t confidence intervals over independent replications.
//!
//! A simulation point is run as R independent replications; each gives one
//! value (say its mean response time). Treating those R values as an i.i.d.
//! sample, the point estimate is their mean x̄ and the two-sided interval at
//! level 1 − a is x̄ ± t_{1−a/2, R−1} · s / √R, with s the sample standard
//! deviation and t the Student-t quantile with R − 1 degrees of freedom
//! (Law & Kelton, *Simulation Modeling and Analysis*, §9.4.1). The quantile
//! comes from `statrs`.
//!
//! With a single replication there is no variance estimate, so the
//! half-width is `None` (never NaN or infinity); the mean is still
//! reported. Serialized to CSV, `None` is an empty field.
//!
//! ```
//! use partalloc_simkit::ConfidenceInterval;
//!
//! let ci = ConfidenceInterval::from_samples(&[9.0, 10.0, 11.0, 10.0], 0.95)?;
//! assert_eq!(ci.mean, 10.0);
//! assert_eq!(ci.n, 4);
//! // s = √(2/3), t_{0.975, 3} = 3.182446…
//! let hw = ci.half_width.unwrap();
//! assert!((hw - 3.182446 * (2.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-6);
//!
//! let one = ConfidenceInterval::from_samples(&[7.0], 0.95)?;
//! assert_eq!((one.mean, one.half_width), (7.0, None));
//! # Ok::<(), partalloc_simkit::StatsError>(())
//! ```

use core::fmt;

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::{StatsError, Welford};

/// The default confidence level (95%).
pub const DEFAULT_LEVEL: f64 = 0.95;

/// A mean ± half-width confidence interval over `n` replications.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ConfidenceInterval {
    /// The sample mean over replications.
    pub mean: f64,
    /// Half-width t·s/√n; `None` when n = 1 (no variance estimate).
    pub half_width: Option<f64>,
    /// Number of replications.
    pub n: u64,
    /// Confidence level, e.g. 0.95.
    pub level: f64,
}

impl ConfidenceInterval {
    /// The interval at `level` (in (0, 1), e.g. [`DEFAULT_LEVEL`]) for the
    /// mean of `samples`.
    ///
    /// # Errors
    /// [`StatsError::Empty`] for no samples, [`StatsError::NotFinite`] for a
    /// NaN or infinite sample, [`StatsError::BadProbability`] for a level
    /// outside (0, 1).
    pub fn from_samples(samples: &[f64], level: f64) -> Result<Self, StatsError> {
        let mut w = Welford::new();
        for &x in samples {
            w.push(x)?;
        }
        Self::from_welford(&w, level)
    }

    /// The interval at `level` from an accumulator of replication values.
    ///
    /// # Errors
    /// As [`from_samples`](Self::from_samples).
    pub fn from_welford(w: &Welford, level: f64) -> Result<Self, StatsError> {
        if !(level > 0.0 && level < 1.0) {
            return Err(StatsError::BadProbability { p: level });
        }
        let mean = w.mean().ok_or(StatsError::Empty)?;
        let n = w.count();
        let half_width = match w.std_dev() {
            Some(s) => {
                #[expect(clippy::cast_precision_loss, reason = "replication counts are small")]
                let nf = n as f64;
                Some(t_quantile(nf - 1.0, 1.0 - (1.0 - level) / 2.0)? * s / nf.sqrt())
            }
            None => None,
        };
        Ok(Self {
            mean,
            half_width,
            n,
            level,
        })
    }

    /// Lower end, `None` when n = 1.
    #[must_use]
    pub fn lower(&self) -> Option<f64> {
        self.half_width.map(|h| self.mean - h)
    }

    /// Upper end, `None` when n = 1.
    #[must_use]
    pub fn upper(&self) -> Option<f64> {
        self.half_width.map(|h| self.mean + h)
    }

    /// Whether `x` lies in the closed interval (only the mean itself when
    /// n = 1).
    #[must_use]
    pub fn contains(&self, x: f64) -> bool {
        match self.half_width {
            Some(h) => (self.mean - h..=self.mean + h).contains(&x),
            None => x == self.mean,
        }
    }
}

impl fmt::Display for ConfidenceInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.half_width {
            Some(h) => write!(f, "{} ± {} (n = {})", self.mean, h, self.n),
            None => write!(f, "{} (n = 1, no interval)", self.mean),
        }
    }
}

/// The `p`-quantile of Student's t distribution with `df` degrees of
/// freedom.
///
/// # Errors
/// [`StatsError::BadProbability`] unless 0 < p < 1 and df > 0 is finite.
pub fn t_quantile(df: f64, p: f64) -> Result<f64, StatsError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(StatsError::BadProbability { p });
    }
    let t = StudentsT::new(0.0, 1.0, df).map_err(|_| StatsError::NotFinite { value: df })?;
    Ok(t.inverse_cdf(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95% critical values from standard t tables.
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (4.0, 2.776),
            (9.0, 2.262),
            (19.0, 2.093),
            (29.0, 2.045),
        ] {
            let got = t_quantile(df, 0.975).unwrap();
            assert!((got - want).abs() < 5e-4, "df {df}: {got} vs {want}");
        }
        assert!(t_quantile(0.0, 0.975).is_err());
        assert!(t_quantile(3.0, 1.0).is_err());
        assert!(t_quantile(3.0, f64::NAN).is_err());
    }

    #[test]
    fn interval_and_bad_input() {
        // 20 replications of a value with sample sd 1: hw = 2.093 / √20.
        let xs: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 4.0 } else { 6.0 })
            .collect();
        let ci = ConfidenceInterval::from_samples(&xs, 0.95).unwrap();
        let s = (20.0f64 / 19.0).sqrt();
        assert!((ci.half_width.unwrap() - 2.093_024 * s / 20f64.sqrt()).abs() < 1e-5);
        assert!(ci.contains(5.0));
        assert!(!ci.contains(6.0));
        assert!(ci.lower().unwrap() < 5.0 && ci.upper().unwrap() > 5.0);
        assert_eq!(
            ConfidenceInterval::from_samples(&[], 0.95),
            Err(StatsError::Empty)
        );
        assert!(ConfidenceInterval::from_samples(&[1.0, f64::NAN], 0.95).is_err());
        assert!(ConfidenceInterval::from_samples(&[1.0, 2.0], 1.0).is_err());
        assert!(ConfidenceInterval::from_samples(&[1.0, 2.0], 0.0).is_err());
        let one = ConfidenceInterval::from_samples(&[3.0], 0.9).unwrap();
        assert_eq!(one.to_string(), "3 (n = 1, no interval)");
        assert!(one.contains(3.0) && one.lower().is_none());
        // Identical replications: zero width, not NaN.
        let same = ConfidenceInterval::from_samples(&[2.0, 2.0, 2.0], 0.95).unwrap();
        assert_eq!(same.half_width, Some(0.0));
    }
}
