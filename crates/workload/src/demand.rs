//! Service demand and residence time distributions.
//!
//! - [`Exponential`]: Kang §5.1 ("total service demand follows an
//!   exponential distribution and the mean service time is assumed to be
//!   one time unit") and Kim–Yoon §IV.1 (exponential residence times).
//! - [`UniformDemand`]: Mohapatra §4.1's "uniform" demand; the paper gives
//!   only the mean, so [`UniformDemand::with_mean`] uses U(0, 2·mean), an
//!   open choice documented there.
//! - [`HyperExponential`]: the bimodal hyper-exponential of Mohapatra §4.1
//!   (α = 0.95, coefficient of variation C = 4), parameterized by mean, α
//!   and C; the branch means are derived so that mean and C hold exactly
//!   (see [`HyperExponential::new`]).
//! - [`Dependence`]: Mohapatra §4.1's *dependent* and *independent*
//!   size/demand models.
//!
//! ```
//! use partalloc_workload::{HyperExponential, MeanDistribution};
//! let h = HyperExponential::new(5.0, 0.95, 4.0)?;
//! let (m1, m2) = h.branch_means();
//! // α·m1 + (1 − α)·m2 = 5 and 2(α·m1² + (1 − α)·m2²) = (1 + C²)·5².
//! assert!((0.95 * m1 + 0.05 * m2 - 5.0).abs() < 1e-12);
//! assert!((2.0 * (0.95 * m1 * m1 + 0.05 * m2 * m2) - 17.0 * 25.0).abs() < 1e-9);
//! assert_eq!(h.mean(), 5.0);
//! # Ok::<(), partalloc_workload::WorkloadError>(())
//! ```

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1};

use crate::WorkloadError;
use crate::error::positive;

/// A distribution over non-negative times whose mean is known exactly.
pub trait MeanDistribution: Distribution<f64> {
    /// The distribution's mean.
    fn mean(&self) -> f64;
}

/// Exponential times with the given mean.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "ExponentialRepr", try_from = "ExponentialRepr")
)]
pub struct Exponential {
    mean: f64,
}

/// The serialized form of a [`Exponential`]; deserializing goes through
/// [`Exponential::new`], so a file cannot give a negative mean.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct ExponentialRepr {
    mean: f64,
}

#[cfg(feature = "serde")]
impl From<Exponential> for ExponentialRepr {
    fn from(v: Exponential) -> Self {
        Self { mean: v.mean }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<ExponentialRepr> for Exponential {
    type Error = WorkloadError;
    fn try_from(r: ExponentialRepr) -> Result<Self, WorkloadError> {
        Self::new(r.mean)
    }
}

impl Exponential {
    /// Exponential with mean `mean` (rate 1/mean).
    ///
    /// # Errors
    /// [`WorkloadError::NotPositive`] unless `mean` is finite and > 0.
    pub fn new(mean: f64) -> Result<Self, WorkloadError> {
        Ok(Self {
            mean: positive("mean", mean)?,
        })
    }
}

impl Distribution<f64> for Exponential {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let e: f64 = Exp1.sample(rng);
        e * self.mean
    }
}

impl MeanDistribution for Exponential {
    fn mean(&self) -> f64 {
        self.mean
    }
}

/// Uniform times on [lo, hi].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "UniformDemandRepr", try_from = "UniformDemandRepr")
)]
pub struct UniformDemand {
    lo: f64,
    hi: f64,
}

/// The serialized form of a [`UniformDemand`]; deserializing goes through
/// [`UniformDemand::new`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct UniformDemandRepr {
    lo: f64,
    hi: f64,
}

#[cfg(feature = "serde")]
impl From<UniformDemand> for UniformDemandRepr {
    fn from(v: UniformDemand) -> Self {
        Self { lo: v.lo, hi: v.hi }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<UniformDemandRepr> for UniformDemand {
    type Error = WorkloadError;
    fn try_from(r: UniformDemandRepr) -> Result<Self, WorkloadError> {
        Self::new(r.lo, r.hi)
    }
}

impl UniformDemand {
    /// Uniform on [lo, hi], 0 ≤ lo ≤ hi, both finite.
    ///
    /// # Errors
    /// [`WorkloadError::InfiniteBound`], [`WorkloadError::NegativeBound`]
    /// or [`WorkloadError::BadRange`] for non-finite, negative or reversed
    /// bounds.
    pub fn new(lo: f64, hi: f64) -> Result<Self, WorkloadError> {
        const NAME: &str = "uniform demand";
        if let Some(value) = [lo, hi].into_iter().find(|v| !v.is_finite()) {
            return Err(WorkloadError::InfiniteBound { name: NAME, value });
        }
        if lo < 0.0 {
            return Err(WorkloadError::NegativeBound { name: NAME, lo });
        }
        if lo > hi {
            return Err(WorkloadError::BadRange { name: NAME, lo, hi });
        }
        Ok(Self { lo, hi })
    }

    /// U(0, 2·mean): Mohapatra §4.1 gives a uniform distribution by its
    /// mean only; starting at 0 is the open choice made here.
    ///
    /// # Errors
    /// [`WorkloadError::NotPositive`] unless `mean` is finite and > 0.
    pub fn with_mean(mean: f64) -> Result<Self, WorkloadError> {
        positive("mean", mean)?;
        Self::new(0.0, 2.0 * mean)
    }

    /// The bounds.
    #[must_use]
    pub fn bounds(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }
}

impl Distribution<f64> for UniformDemand {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let u: f64 = rng.random();
        self.lo + (self.hi - self.lo) * u
    }
}

impl MeanDistribution for UniformDemand {
    fn mean(&self) -> f64 {
        // Halving first cannot overflow for bounds near f64::MAX, and gives
        // the same bits as (lo + hi) / 2 for any normal bounds.
        self.lo / 2.0 + self.hi / 2.0
    }
}

/// Bimodal hyper-exponential: with probability α an exponential of mean
/// m₁, otherwise an exponential of mean m₂.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "HyperExponentialRepr", try_from = "HyperExponentialRepr")
)]
pub struct HyperExponential {
    alpha: f64,
    mean1: f64,
    mean2: f64,
}

/// The serialized form of a [`HyperExponential`]; deserializing goes
/// through [`HyperExponential::from_branches`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct HyperExponentialRepr {
    alpha: f64,
    mean1: f64,
    mean2: f64,
}

#[cfg(feature = "serde")]
impl From<HyperExponential> for HyperExponentialRepr {
    fn from(v: HyperExponential) -> Self {
        Self {
            alpha: v.alpha,
            mean1: v.mean1,
            mean2: v.mean2,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<HyperExponentialRepr> for HyperExponential {
    type Error = WorkloadError;
    fn try_from(r: HyperExponentialRepr) -> Result<Self, WorkloadError> {
        Self::from_branches(r.alpha, r.mean1, r.mean2)
    }
}

impl HyperExponential {
    /// The hyper-exponential with mean μ = `mean`, first-branch
    /// probability α = `alpha` and coefficient of variation C = `cv`
    /// (Mohapatra §4.1: α = 0.95, C = 4).
    ///
    /// Derivation. Write m₁ = μ(1 + x), m₂ = μ(1 + y). The mean condition
    /// α·m₁ + (1 − α)·m₂ = μ gives y = −α·x/(1 − α). An exponential of mean
    /// m has E\[X²\] = 2m², so E\[X²\] = 2(α·m₁² + (1 − α)·m₂²) must equal
    /// (1 + C²)·μ²; expanding with the mean condition leaves
    /// α·x²/(1 − α) = (C² − 1)/2, i.e.
    ///
    /// x = ∓√((1 − α)(C² − 1)/(2α)),  y = ±√(α(C² − 1)/(2(1 − α))).
    ///
    /// Both means must be positive. The α branch takes the *shorter* mean
    /// (x ≤ 0) when that is feasible, (1 − α)(C² − 1) < 2α — the usual
    /// reading of "most jobs short, a few very long", and for α = 0.95,
    /// C = 4 the only feasible sign (m₁ ≈ 0.3717μ, m₂ ≈ 12.937μ);
    /// otherwise the longer one, if α(C² − 1) < 2(1 − α). C = 1 gives the
    /// exponential.
    ///
    /// # Errors
    /// [`WorkloadError::NotPositive`] for a bad mean,
    /// [`WorkloadError::BadProbability`] unless 0 < α < 1,
    /// [`WorkloadError::BadVariation`] if C < 1 (a hyper-exponential has
    /// C ≥ 1) or no sign gives two positive means.
    pub fn new(mean: f64, alpha: f64, cv: f64) -> Result<Self, WorkloadError> {
        positive("mean", mean)?;
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(WorkloadError::BadProbability {
                name: "hyper-exponential α",
                value: alpha,
            });
        }
        if !(cv.is_finite() && cv >= 1.0) {
            return Err(WorkloadError::BadVariation {
                alpha,
                cv,
                reason: "a hyper-exponential has coefficient of variation at least 1",
            });
        }
        let k = (cv * cv - 1.0) / 2.0;
        let beta = 1.0 - alpha;
        let (x, y) = if beta * k < alpha {
            (-(beta * k / alpha).sqrt(), (alpha * k / beta).sqrt())
        } else if alpha * k < beta {
            ((beta * k / alpha).sqrt(), -(alpha * k / beta).sqrt())
        } else {
            return Err(WorkloadError::BadVariation {
                alpha,
                cv,
                reason: "one branch would need a negative mean; lower C or move α away from 1/2",
            });
        };
        let (mean1, mean2) = (mean * (1.0 + x), mean * (1.0 + y));
        positive("hyper-exponential branch mean", mean1)?;
        positive("hyper-exponential branch mean", mean2)?;
        Ok(Self {
            alpha,
            mean1,
            mean2,
        })
    }

    /// A hyper-exponential given by its branches directly.
    ///
    /// # Errors
    /// [`WorkloadError::BadProbability`] unless 0 < α < 1,
    /// [`WorkloadError::NotPositive`] for a bad branch mean.
    pub fn from_branches(alpha: f64, mean1: f64, mean2: f64) -> Result<Self, WorkloadError> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(WorkloadError::BadProbability {
                name: "hyper-exponential α",
                value: alpha,
            });
        }
        Ok(Self {
            alpha,
            mean1: positive("hyper-exponential branch mean", mean1)?,
            mean2: positive("hyper-exponential branch mean", mean2)?,
        })
    }

    /// α, the probability of the first branch.
    #[must_use]
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// (m₁, m₂), the branch means.
    #[must_use]
    pub fn branch_means(&self) -> (f64, f64) {
        (self.mean1, self.mean2)
    }

    /// The coefficient of variation √(2(α·m₁² + (1 − α)·m₂²) − μ²)/μ.
    #[must_use]
    pub fn cv(&self) -> f64 {
        let mu = self.mean();
        let m2 = 2.0
            * (self.alpha * self.mean1 * self.mean1 + (1.0 - self.alpha) * self.mean2 * self.mean2);
        (m2 - mu * mu).max(0.0).sqrt() / mu
    }
}

impl Distribution<f64> for HyperExponential {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let u: f64 = rng.random();
        let e: f64 = Exp1.sample(rng);
        if u < self.alpha {
            e * self.mean1
        } else {
            e * self.mean2
        }
    }
}

impl MeanDistribution for HyperExponential {
    fn mean(&self) -> f64 {
        self.alpha * self.mean1 + (1.0 - self.alpha) * self.mean2
    }
}

/// A constant time (for tests and deterministic experiments).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "ConstantRepr", try_from = "ConstantRepr")
)]
pub struct Constant {
    value: f64,
}

/// The serialized form of a [`Constant`]; deserializing goes through
/// [`Constant::new`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct ConstantRepr {
    value: f64,
}

#[cfg(feature = "serde")]
impl From<Constant> for ConstantRepr {
    fn from(v: Constant) -> Self {
        Self { value: v.value }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<ConstantRepr> for Constant {
    type Error = WorkloadError;
    fn try_from(r: ConstantRepr) -> Result<Self, WorkloadError> {
        Self::new(r.value)
    }
}

impl Constant {
    /// Always `value`.
    ///
    /// # Errors
    /// [`WorkloadError::NotPositive`] unless `value` is finite and > 0.
    pub fn new(value: f64) -> Result<Self, WorkloadError> {
        Ok(Self {
            value: positive("constant time", value)?,
        })
    }
}

impl Distribution<f64> for Constant {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, _rng: &mut R) -> f64 {
        self.value
    }
}

impl MeanDistribution for Constant {
    fn mean(&self) -> f64 {
        self.value
    }
}

/// Any of the time distributions, chosen at run time.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum DemandDist {
    /// [`Exponential`].
    Exponential(Exponential),
    /// [`UniformDemand`].
    Uniform(UniformDemand),
    /// [`HyperExponential`].
    HyperExponential(HyperExponential),
    /// [`Constant`].
    Constant(Constant),
}

impl Distribution<f64> for DemandDist {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            Self::Exponential(d) => d.sample(rng),
            Self::Uniform(d) => d.sample(rng),
            Self::HyperExponential(d) => d.sample(rng),
            Self::Constant(d) => d.sample(rng),
        }
    }
}

impl MeanDistribution for DemandDist {
    fn mean(&self) -> f64 {
        match self {
            Self::Exponential(d) => d.mean(),
            Self::Uniform(d) => d.mean(),
            Self::HyperExponential(d) => d.mean(),
            Self::Constant(d) => d.mean(),
        }
    }
}

impl From<Exponential> for DemandDist {
    fn from(d: Exponential) -> Self {
        Self::Exponential(d)
    }
}

impl From<UniformDemand> for DemandDist {
    fn from(d: UniformDemand) -> Self {
        Self::Uniform(d)
    }
}

impl From<HyperExponential> for DemandDist {
    fn from(d: HyperExponential) -> Self {
        Self::HyperExponential(d)
    }
}

impl From<Constant> for DemandDist {
    fn from(d: Constant) -> Self {
        Self::Constant(d)
    }
}

/// How a job's residence time relates to its size (Mohapatra §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Dependence {
    /// *Dependent*: "a large job has more total service demand than a small
    /// job … the residence times of the jobs are obtained from a given
    /// distribution and the mean residence time, irrespective of the job
    /// size". The distribution gives the residence time; the total demand
    /// is residence × nodes. Kang §5.1 and Kim–Yoon §IV.1 draw service
    /// times this way too. The default.
    #[default]
    Dependent,
    /// *Independent*: "a large job has the same distribution of total
    /// service demand as that of a small job"; the distribution gives the
    /// total demand x and the residence time is x / nodes (x_k/2^k for a
    /// k-cube).
    Independent,
}

impl Dependence {
    /// The residence time of a job of `nodes` nodes whose drawn value is
    /// `draw` (0 nodes is treated as 1).
    #[must_use]
    #[inline]
    pub fn residence(self, draw: f64, nodes: u64) -> f64 {
        match self {
            Self::Dependent => draw,
            #[expect(clippy::cast_precision_loss, reason = "node counts are far below 2^53")]
            Self::Independent => draw / nodes.max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    /// Welford mean and sample coefficient of variation.
    pub(crate) fn mean_cv(xs: impl Iterator<Item = f64>) -> (f64, f64) {
        let (mut n, mut mean, mut m2) = (0.0f64, 0.0f64, 0.0f64);
        for x in xs {
            n += 1.0;
            let d = x - mean;
            mean += d / n;
            m2 += d * (x - mean);
        }
        (mean, (m2 / (n - 1.0)).sqrt() / mean)
    }

    #[test]
    fn hyperexponential_branch_means_exact() {
        // Mohapatra §4.1: α = 0.95, C = 4, mean residence 5.
        let h = HyperExponential::new(5.0, 0.95, 4.0).unwrap();
        let (m1, m2) = h.branch_means();
        // x = −√(0.05·7.5/0.95), y = √(0.95·7.5/0.05) = √142.5.
        assert!((m1 - 5.0 * (1.0 - (0.05f64 * 7.5 / 0.95).sqrt())).abs() < 1e-12);
        assert!((m2 - 5.0 * (1.0 + 142.5f64.sqrt())).abs() < 1e-12);
        assert!((h.mean() - 5.0).abs() < 1e-12);
        assert!((h.cv() - 4.0).abs() < 1e-12);
        // C = 1 is the exponential.
        let e = HyperExponential::new(2.0, 0.3, 1.0).unwrap();
        assert_eq!(e.branch_means(), (2.0, 2.0));
        // Small α: the α branch must be the long one.
        let s = HyperExponential::new(1.0, 0.05, 2.0).unwrap();
        assert!(s.branch_means().0 > 1.0 && (s.cv() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn hyperexponential_errors() {
        assert!(matches!(
            HyperExponential::new(1.0, 0.5, 0.9),
            Err(WorkloadError::BadVariation { .. })
        ));
        // α = 1/2: both signs need (C² − 1)/2 < 1, i.e. C < √3.
        assert!(HyperExponential::new(1.0, 0.5, 1.7).is_ok());
        assert!(matches!(
            HyperExponential::new(1.0, 0.5, 1.8),
            Err(WorkloadError::BadVariation { .. })
        ));
        assert!(HyperExponential::new(1.0, 1.0, 4.0).is_err());
        assert!(HyperExponential::new(1.0, 0.0, 4.0).is_err());
        assert!(HyperExponential::new(0.0, 0.95, 4.0).is_err());
        assert!(HyperExponential::new(1.0, 0.95, f64::INFINITY).is_err());
        assert!(HyperExponential::from_branches(0.5, 1.0, -1.0).is_err());
        assert!(UniformDemand::new(2.0, 1.0).is_err());
        assert!(UniformDemand::new(-1.0, 1.0).is_err());
        assert!(Exponential::new(f64::NAN).is_err());
        assert!(Constant::new(0.0).is_err());
    }

    #[test]
    fn hyperexponential_sample_mean_and_cv_within_two_percent() {
        // 10^6 draws. The sample mean's relative standard error is
        // C/√n = 0.4%, so 2% is 5σ. For the CV: E[X⁴] = 24(α·m₁⁴ + (1−α)·m₂⁴)
        // ≈ 33 614 μ⁴ (μ = 1), so the sample variance (16) has standard error
        // ≈ √(33 614/10^6) ≈ 0.18, 1.15% relative, and the CV ≈ 0.6%: 2% is
        // over 3σ.
        let h = HyperExponential::new(1.0, 0.95, 4.0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let (mean, cv) = mean_cv((0..1_000_000).map(|_| h.sample(&mut rng)));
        assert!((mean - 1.0).abs() < 0.02, "mean {mean}");
        assert!((cv / 4.0 - 1.0).abs() < 0.02, "cv {cv}");
    }

    #[test]
    fn uniform_and_exponential_moments() {
        // U(0, 10): mean 5, CV 1/√3; 10^5 draws, relative standard errors
        // ≈ 0.18% (mean) and ≈ 0.3% (CV): 2% bounds are > 6σ.
        let u = UniformDemand::with_mean(5.0).unwrap();
        assert_eq!(u.bounds(), (0.0, 10.0));
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mean, cv) = mean_cv((0..100_000).map(|_| u.sample(&mut rng)));
        assert!((mean / 5.0 - 1.0).abs() < 0.02);
        assert!((cv * 3f64.sqrt() - 1.0).abs() < 0.02);
        // Exponential: CV 1; relative standard error of the mean 0.3%.
        let e = Exponential::new(3.0).unwrap();
        let (mean, cv) = mean_cv((0..100_000).map(|_| e.sample(&mut rng)));
        assert!((mean / 3.0 - 1.0).abs() < 0.02);
        assert!((cv - 1.0).abs() < 0.02);
        let d: DemandDist = e.into();
        assert_eq!(d.mean(), 3.0);
    }

    #[test]
    fn dependence_residence() {
        assert_eq!(Dependence::Dependent.residence(8.0, 4), 8.0);
        assert_eq!(Dependence::Independent.residence(8.0, 4), 2.0);
        assert_eq!(Dependence::Independent.residence(8.0, 0), 8.0);
    }

    #[test]
    fn value_stability() {
        let mut rng = ChaCha8Rng::seed_from_u64(2026);
        let h = HyperExponential::new(5.0, 0.95, 4.0).unwrap();
        let u = UniformDemand::with_mean(5.0).unwrap();
        let e = Exponential::new(1.0).unwrap();
        let got = [
            h.sample(&mut rng),
            h.sample(&mut rng),
            u.sample(&mut rng),
            e.sample(&mut rng),
        ];
        assert_eq!(got, STABLE, "a demand stream changed: {got:?}");
    }

    /// First values for seed 2026; recorded from this implementation so a
    /// change of generator, rand version or draw order fails loudly.
    const STABLE: [f64; 4] = [
        0.0896667303224128,
        0.6634891946710115,
        2.4968639479354926,
        1.221209379594925,
    ];
}
