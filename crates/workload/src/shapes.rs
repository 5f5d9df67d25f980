//! Job shape distributions of the papers.
//!
//! - [`CubicShapes`] — Kang §5.1: a request 2^{a_{n−1}} × … × 2^{a_0} on a
//!   2^{k_{n−1}} × … × 2^{k_0} system, each exponent a_i uniform in
//!   0..=k_i, independently ("the probability that a (b or c) is equal to
//!   0, 1, 2, 3, or 4 is 1/5 each … the probability of each case is set to
//!   1/125" for 2^4 × 2^4 × 2^4).
//! - [`NoncubicShapes`] — Kang §5.3: sides l_i uniform in 1..=L_i.
//! - [`CubeDims`] — Mohapatra §4.1: hypercube dimension uniform ("p_i = 1/10"
//!   for i = 0..=9 on a 10-cube), the paper's "normal" table
//!   ([`CubeDims::mohapatra_normal`]), or any table of probabilities.
//! - [`MeshSides`] — Kim–Yoon §IV.1: each side of an L_x × L_y mesh request
//!   uniform in 1..=L, or normal with mean (1 + L)/2 and variance (1 + L)/4,
//!   or exponential with the same mean; "values drawn from the
//!   distributions outside of the range were ignored", i.e. redrawn. The
//!   continuous draw is rounded to the nearest integer before the range
//!   check (an open choice; the paper does not say how it discretizes).
//!
//! Every distribution reports the exact mean number of nodes of a request
//! ([`ShapeDistribution::mean_nodes`]), the m of the offered load
//! ρ = λ·m·r/N (Kim–Yoon §IV.1).
//!
//! ```
//! use partalloc_workload::{CubicShapes, JobShape, ShapeDistribution};
//! use partalloc_topology::Grid;
//! use rand::SeedableRng;
//! use rand::rngs::ChaCha8Rng;
//! use rand_distr::Distribution;
//!
//! // Kang Fig. 9: 4×4×4 mesh, cubic jobs 2^a × 2^b × 2^c with a, b, c in 0..=2.
//! let shapes = CubicShapes::for_grid(&Grid::mesh(&[4, 4, 4])?)?;
//! assert_eq!(shapes.mean_nodes(), (7.0f64 / 3.0).powi(3));
//! let mut rng = ChaCha8Rng::seed_from_u64(9);
//! let JobShape::Box { sides } = shapes.sample(&mut rng) else { unreachable!() };
//! assert!(sides.iter().all(|&s| [1, 2, 4].contains(&s)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Coords, Grid, Hypercube, MAX_HYPERCUBE_DIM};
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal};

use crate::{JobShape, WorkloadError};

/// A distribution of job shapes whose mean node count is known exactly.
pub trait ShapeDistribution: Distribution<JobShape> {
    /// The expected number of nodes of a drawn shape.
    fn mean_nodes(&self) -> f64;
}

fn coords(values: &[u32]) -> Result<Coords, WorkloadError> {
    Ok(Coords::new(values)?)
}

/// Kang's cubic requests: side 2^{a_i} with a_i uniform in 0..=k_i.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "CubicShapesRepr", try_from = "CubicShapesRepr")
)]
pub struct CubicShapes {
    max_exponents: Coords,
}

/// The serialized form of a [`CubicShapes`]; deserializing goes through
/// [`CubicShapes::new`], so no exponent is above 31.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct CubicShapesRepr {
    max_exponents: Coords,
}

#[cfg(feature = "serde")]
impl From<CubicShapes> for CubicShapesRepr {
    fn from(v: CubicShapes) -> Self {
        Self {
            max_exponents: v.max_exponents,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<CubicShapesRepr> for CubicShapes {
    type Error = WorkloadError;
    fn try_from(r: CubicShapesRepr) -> Result<Self, WorkloadError> {
        Self::new(&r.max_exponents)
    }
}

impl CubicShapes {
    /// Exponent of dimension i uniform in 0..=`max_exponents[i]`.
    ///
    /// # Errors
    /// [`WorkloadError::Topology`] for 0 or more than `MAX_DIMS`
    /// dimensions; [`WorkloadError::BadShape`] for an exponent above 31.
    pub fn new(max_exponents: &[u32]) -> Result<Self, WorkloadError> {
        if let Some(&k) = max_exponents.iter().find(|&&k| k > 31) {
            return Err(WorkloadError::BadShape {
                reason: format!("exponent {k} gives a side above 2^31"),
            });
        }
        Ok(Self {
            max_exponents: coords(max_exponents)?,
        })
    }

    /// The cubic requests of a 2^{k_{n−1}} × … × 2^{k_0} grid.
    ///
    /// # Errors
    /// [`WorkloadError::BadShape`] if a side is not a power of two.
    pub fn for_grid(grid: &Grid) -> Result<Self, WorkloadError> {
        let mut ks = [0u32; partalloc_topology::MAX_DIMS];
        for (k, &side) in ks.iter_mut().zip(grid.sides().iter()) {
            if !side.is_power_of_two() {
                return Err(WorkloadError::BadShape {
                    reason: format!(
                        "cubic requests need power-of-two sides; the machine has a side of {side}"
                    ),
                });
            }
            *k = side.trailing_zeros();
        }
        Self::new(ks.get(..grid.dims()).unwrap_or_default())
    }

    /// k_i for every dimension.
    #[must_use]
    pub fn max_exponents(&self) -> &[u32] {
        &self.max_exponents
    }

    /// The number of distinct shapes, Π (k_i + 1).
    #[must_use]
    pub fn shape_count(&self) -> u64 {
        self.max_exponents
            .iter()
            .map(|&k| u64::from(k) + 1)
            .product()
    }
}

impl Distribution<JobShape> for CubicShapes {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        let mut sides = self.max_exponents;
        for s in sides.as_mut_slice() {
            let a: u32 = rng.random_range(0..=*s);
            *s = 1 << a;
        }
        JobShape::Box { sides }
    }
}

impl ShapeDistribution for CubicShapes {
    /// Π_i E\[2^{a_i}\] = Π_i (2^{k_i+1} − 1)/(k_i + 1).
    fn mean_nodes(&self) -> f64 {
        self.max_exponents
            .iter()
            .map(|&k| (2f64.powi(k as i32 + 1) - 1.0) / f64::from(k + 1))
            .product()
    }
}

/// Kang's noncubic requests: side l_i uniform in 1..=L_i.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "NoncubicShapesRepr", try_from = "NoncubicShapesRepr")
)]
pub struct NoncubicShapes {
    max_sides: Coords,
}

/// The serialized form of a [`NoncubicShapes`]; deserializing goes through
/// [`NoncubicShapes::new`], so no side is 0.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct NoncubicShapesRepr {
    max_sides: Coords,
}

#[cfg(feature = "serde")]
impl From<NoncubicShapes> for NoncubicShapesRepr {
    fn from(v: NoncubicShapes) -> Self {
        Self {
            max_sides: v.max_sides,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<NoncubicShapesRepr> for NoncubicShapes {
    type Error = WorkloadError;
    fn try_from(r: NoncubicShapesRepr) -> Result<Self, WorkloadError> {
        Self::new(&r.max_sides)
    }
}

impl NoncubicShapes {
    /// Side of dimension i uniform in 1..=`max_sides[i]`.
    ///
    /// # Errors
    /// [`WorkloadError::BadShape`] for a zero side;
    /// [`WorkloadError::Topology`] for a bad number of dimensions.
    pub fn new(max_sides: &[u32]) -> Result<Self, WorkloadError> {
        if max_sides.contains(&0) {
            return Err(WorkloadError::BadShape {
                reason: "every side needs at least 1 node".to_owned(),
            });
        }
        Ok(Self {
            max_sides: coords(max_sides)?,
        })
    }

    /// Sides up to the machine's.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn for_grid(grid: &Grid) -> Result<Self, WorkloadError> {
        Self::new(grid.sides())
    }

    /// L_i for every dimension.
    #[must_use]
    pub fn max_sides(&self) -> &[u32] {
        &self.max_sides
    }
}

impl Distribution<JobShape> for NoncubicShapes {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        let mut sides = self.max_sides;
        for s in sides.as_mut_slice() {
            *s = rng.random_range(1..=*s);
        }
        JobShape::Box { sides }
    }
}

impl ShapeDistribution for NoncubicShapes {
    /// Π_i (1 + L_i)/2.
    fn mean_nodes(&self) -> f64 {
        self.max_sides
            .iter()
            .map(|&l| (1.0 + f64::from(l)) / 2.0)
            .product()
    }
}

const CUBE_TABLE: usize = MAX_HYPERCUBE_DIM as usize + 1;

/// A hypercube request dimension drawn from a table p_0, p_1, ….
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "CubeDimsRepr", try_from = "CubeDimsRepr")
)]
pub struct CubeDims {
    // cumulative[i] = p_0 + … + p_i, normalized so the last is 1.
    cumulative: [f64; CUBE_TABLE],
    len: usize,
}

/// Mohapatra §4.1's "normal" probabilities p_0 … p_9 for a 10-cube.
pub const MOHAPATRA_NORMAL_10: [f64; 10] = [
    0.017, 0.044, 0.093, 0.152, 0.194, 0.194, 0.152, 0.093, 0.044, 0.017,
];

/// The serialized form of a [`CubeDims`]: the cumulative probabilities
/// p_0, p_0 + p_1, …, kept exactly. Deserializing goes through
/// [`CubeDims::from_cumulative`], so a file cannot hold an empty,
/// decreasing or unnormalized table.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct CubeDimsRepr {
    cumulative: Vec<f64>,
}

#[cfg(feature = "serde")]
impl From<CubeDims> for CubeDimsRepr {
    fn from(v: CubeDims) -> Self {
        Self {
            cumulative: v.cumulative.get(..v.len).unwrap_or_default().to_vec(),
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<CubeDimsRepr> for CubeDims {
    type Error = WorkloadError;
    fn try_from(r: CubeDimsRepr) -> Result<Self, WorkloadError> {
        Self::from_cumulative(&r.cumulative)
    }
}

impl CubeDims {
    /// Dimension i with probability proportional to `weights[i]`
    /// (i = 0, 1, …). Weights are normalized by their sum.
    ///
    /// # Errors
    /// [`WorkloadError::BadTable`] for an empty table, more than
    /// `MAX_HYPERCUBE_DIM + 1` entries, a negative or non-finite weight, or
    /// a zero sum.
    pub fn from_weights(weights: &[f64]) -> Result<Self, WorkloadError> {
        if weights.is_empty() || weights.len() > CUBE_TABLE {
            return Err(WorkloadError::BadTable {
                reason: format!(
                    "needs 1 to {CUBE_TABLE} entries (dimensions 0..={MAX_HYPERCUBE_DIM}); got {}",
                    weights.len()
                ),
            });
        }
        if let Some((i, w)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
        {
            return Err(WorkloadError::BadTable {
                reason: format!("weight {w} of dimension {i} must be a finite number at least 0"),
            });
        }
        let total = crate::error::weight_sum("cube dimension weights", weights)?;
        if total <= 0.0 {
            return Err(WorkloadError::BadTable {
                reason: "the weights sum to 0".to_owned(),
            });
        }
        let mut cumulative = [1.0; CUBE_TABLE];
        let mut acc = 0.0;
        for (c, w) in cumulative.iter_mut().zip(weights) {
            acc += w;
            *c = acc / total;
        }
        if let Some(last) = cumulative.get_mut(weights.len() - 1) {
            *last = 1.0;
        }
        Ok(Self {
            cumulative,
            len: weights.len(),
        })
    }

    /// The table with these cumulative probabilities: 1 to
    /// `MAX_HYPERCUBE_DIM + 1` finite, non-decreasing values from at least
    /// 0 up to exactly 1.
    #[cfg(feature = "serde")]
    fn from_cumulative(values: &[f64]) -> Result<Self, WorkloadError> {
        let bad = |reason: &str| WorkloadError::BadTable {
            reason: format!("cumulative probabilities {values:?}: {reason}"),
        };
        if values.is_empty() || values.len() > CUBE_TABLE {
            return Err(bad(&format!("needs 1 to {CUBE_TABLE} entries")));
        }
        let mut prev = 0.0;
        for &c in values {
            if !(c.is_finite() && c >= prev) {
                return Err(bad("must be finite and non-decreasing from 0"));
            }
            prev = c;
        }
        if prev != 1.0 {
            return Err(bad("the last must be 1"));
        }
        let mut cumulative = [1.0; CUBE_TABLE];
        cumulative.iter_mut().zip(values).for_each(|(c, &v)| *c = v);
        Ok(Self {
            cumulative,
            len: values.len(),
        })
    }

    /// Dimension uniform in `lo..=hi`.
    ///
    /// # Errors
    /// [`WorkloadError::AboveMaximum`] if hi > `MAX_HYPERCUBE_DIM`,
    /// [`WorkloadError::BadRange`] if lo > hi.
    pub fn uniform(lo: u32, hi: u32) -> Result<Self, WorkloadError> {
        if hi > MAX_HYPERCUBE_DIM {
            return Err(WorkloadError::AboveMaximum {
                name: "cube dimension",
                value: u64::from(hi),
                max: u64::from(MAX_HYPERCUBE_DIM),
            });
        }
        if lo > hi {
            return Err(WorkloadError::BadRange {
                name: "cube dimension",
                lo: f64::from(lo),
                hi: f64::from(hi),
            });
        }
        let weights: Vec<f64> = (0..=hi).map(|d| if d >= lo { 1.0 } else { 0.0 }).collect();
        Self::from_weights(&weights)
    }

    /// Mohapatra §4.1's uniform sizes on an n-cube: dimension uniform in
    /// 0..=n−1 ("p_i = 1/10" on a 10-cube).
    ///
    /// # Errors
    /// [`WorkloadError::BadRange`] for a 0-cube.
    pub fn mohapatra_uniform(cube: &Hypercube) -> Result<Self, WorkloadError> {
        match cube.dim().checked_sub(1) {
            Some(hi) => Self::uniform(0, hi),
            None => Err(WorkloadError::BadRange {
                name: "cube dimension",
                lo: 0.0,
                hi: -1.0,
            }),
        }
    }

    /// Mohapatra §4.1's "normal" sizes on a 10-cube
    /// ([`MOHAPATRA_NORMAL_10`], which sums to exactly 1).
    #[must_use]
    pub fn mohapatra_normal() -> Self {
        let mut cumulative = [1.0; CUBE_TABLE];
        let mut acc = 0.0;
        for (c, p) in cumulative.iter_mut().zip(MOHAPATRA_NORMAL_10) {
            acc += p;
            *c = acc;
        }
        cumulative[MOHAPATRA_NORMAL_10.len() - 1] = 1.0;
        Self {
            cumulative,
            len: MOHAPATRA_NORMAL_10.len(),
        }
    }

    /// The probabilities p_0 … p_max.
    #[must_use]
    pub fn probabilities(&self) -> Vec<f64> {
        let mut prev = 0.0;
        self.cumulative
            .iter()
            .take(self.len)
            .map(|&c| {
                let p = c - prev;
                prev = c;
                p
            })
            .collect()
    }

    /// The largest dimension with a table entry.
    #[must_use]
    pub fn max_dim(&self) -> u32 {
        u32::try_from(self.len.saturating_sub(1)).unwrap_or(MAX_HYPERCUBE_DIM)
    }
}

impl Distribution<JobShape> for CubeDims {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        let u: f64 = rng.random();
        let table = self.cumulative.get(..self.len).unwrap_or_default();
        let i = table.partition_point(|&c| c <= u).min(self.len - 1);
        JobShape::Cube {
            dim: u32::try_from(i).unwrap_or(MAX_HYPERCUBE_DIM),
        }
    }
}

impl ShapeDistribution for CubeDims {
    /// Σ p_i 2^i.
    fn mean_nodes(&self) -> f64 {
        self.probabilities()
            .iter()
            .enumerate()
            .map(|(i, p)| p * 2f64.powi(i as i32))
            .sum()
    }
}

/// The law of each side of a Kim–Yoon mesh request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SideLaw {
    /// Uniform in 1..=L.
    Uniform,
    /// Normal with mean (1 + L)/2 and variance (1 + L)/4, rounded, redrawn
    /// outside 1..=L.
    TruncatedNormal,
    /// Exponential with mean (1 + L)/2, rounded, redrawn outside 1..=L.
    TruncatedExponential,
}

/// Kim–Yoon's mesh requests: independent sides drawn by a [`SideLaw`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "MeshSidesRepr", try_from = "MeshSidesRepr")
)]
pub struct MeshSides {
    law: SideLaw,
    max_sides: Coords,
    mean_nodes: f64,
}

/// The serialized form of a [`MeshSides`]: the law and the sides. The mean
/// is recomputed by [`MeshSides::new`] rather than read from the file.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct MeshSidesRepr {
    law: SideLaw,
    max_sides: Coords,
}

#[cfg(feature = "serde")]
impl From<MeshSides> for MeshSidesRepr {
    fn from(v: MeshSides) -> Self {
        Self {
            law: v.law,
            max_sides: v.max_sides,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<MeshSidesRepr> for MeshSides {
    type Error = WorkloadError;
    fn try_from(r: MeshSidesRepr) -> Result<Self, WorkloadError> {
        Self::new(r.law, &r.max_sides)
    }
}

impl MeshSides {
    /// Sides of dimension i in 1..=`max_sides[i]` following `law`.
    ///
    /// # Errors
    /// [`WorkloadError::BadShape`] for a zero side;
    /// [`WorkloadError::Topology`] for a bad number of dimensions.
    pub fn new(law: SideLaw, max_sides: &[u32]) -> Result<Self, WorkloadError> {
        if max_sides.contains(&0) {
            return Err(WorkloadError::BadShape {
                reason: "every side needs at least 1 node".to_owned(),
            });
        }
        let max_sides = coords(max_sides)?;
        let mut s = Self {
            law,
            max_sides,
            mean_nodes: 1.0,
        };
        s.mean_nodes = max_sides.iter().map(|&l| s.side_mean(l)).product();
        Ok(s)
    }

    /// Sides up to the machine's.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn for_grid(law: SideLaw, grid: &Grid) -> Result<Self, WorkloadError> {
        Self::new(law, grid.sides())
    }

    /// The law of every side.
    #[must_use]
    pub fn law(&self) -> SideLaw {
        self.law
    }

    /// L_i for every dimension.
    #[must_use]
    pub fn max_sides(&self) -> &[u32] {
        &self.max_sides
    }

    /// The exact probability of side s = 1..=L in dimension `dim` (entry
    /// s − 1), or `None` for a dimension the requests do not have. For the
    /// truncated laws it is P(round(X) = s) / P(1 ≤ round(X) ≤ L).
    #[must_use]
    pub fn pmf(&self, dim: usize) -> Option<Vec<f64>> {
        self.max_sides.get(dim).map(|&l| self.side_pmf(l))
    }

    /// The table of [`pmf`](Self::pmf): one entry per side length, so only
    /// built when a caller asks for it.
    fn side_pmf(&self, l: u32) -> Vec<f64> {
        let raw: Vec<f64> = (1..=l).map(|s| self.side_weight(l, s)).collect();
        let total: f64 = raw.iter().sum();
        raw.into_iter().map(|p| p / total).collect()
    }

    /// P(round(X) = s) for the untruncated law of a side bounded by `l`.
    fn side_weight(&self, l: u32, s: u32) -> f64 {
        let mean = (1.0 + f64::from(l)) / 2.0;
        let (a, b) = (f64::from(s) - 0.5, f64::from(s) + 0.5);
        match self.law {
            SideLaw::Uniform => 1.0,
            SideLaw::TruncatedNormal => {
                let sd = (mean / 2.0).sqrt();
                normal_cdf((b - mean) / sd) - normal_cdf((a - mean) / sd)
            }
            SideLaw::TruncatedExponential => (-a / mean).exp() - (-b / mean).exp(),
        }
    }

    /// E[side] for a side bounded by `l`, in O(1) memory: closed forms for
    /// the uniform and exponential laws; for the normal law a sum over
    /// mean ± 40 standard deviations, outside which every weight is 0 in
    /// `f64` (Φ(−38.5) underflows).
    fn side_mean(&self, l: u32) -> f64 {
        let hi = f64::from(l);
        let mean = (1.0 + hi) / 2.0;
        match self.law {
            SideLaw::Uniform => mean,
            SideLaw::TruncatedExponential => {
                // P(s) ∝ q^s with q = e^{−1/mean}, s = 1..=L:
                // E = (1 − (L+1)q^L + L·q^{L+1}) / ((1 − q)(1 − q^L)).
                let one_minus_q = -(-1.0 / mean).exp_m1();
                let q_l = (-hi / mean).exp();
                let one_minus_q_l = -(-hi / mean).exp_m1();
                (one_minus_q_l - hi * q_l * one_minus_q) / (one_minus_q * one_minus_q_l)
            }
            SideLaw::TruncatedNormal => {
                let reach = 40.0 * (mean / 2.0).sqrt() + 1.0;
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "clamped to 1..=L before the cast"
                )]
                let (lo, up) = (
                    (mean - reach).floor().clamp(1.0, hi) as u32,
                    (mean + reach).ceil().clamp(1.0, hi) as u32,
                );
                let (mut total, mut first) = (0.0, 0.0);
                for s in lo..=up {
                    let w = self.side_weight(l, s);
                    total += w;
                    first += w * f64::from(s);
                }
                first / total
            }
        }
    }

    fn sample_side<R: Rng + ?Sized>(&self, l: u32, rng: &mut R) -> u32 {
        let mean = (1.0 + f64::from(l)) / 2.0;
        let hi = f64::from(l);
        match self.law {
            SideLaw::Uniform => rng.random_range(1..=l),
            SideLaw::TruncatedNormal | SideLaw::TruncatedExponential => loop {
                // Accepts with probability ≥ 0.38 (the exponential with
                // L = 1), so the expected number of draws is below 3.
                let x = if self.law == SideLaw::TruncatedNormal {
                    let z: f64 = StandardNormal.sample(rng);
                    mean + (mean / 2.0).sqrt() * z
                } else {
                    let e: f64 = Exp1.sample(rng);
                    mean * e
                };
                let s = x.round();
                if (1.0..=hi).contains(&s) {
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        reason = "s is an integer in 1..=L"
                    )]
                    break s as u32;
                }
            },
        }
    }
}

/// Φ(z), the standard normal distribution function.
fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / core::f64::consts::SQRT_2)
}

impl Distribution<JobShape> for MeshSides {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        let mut sides = self.max_sides;
        for s in sides.as_mut_slice() {
            *s = self.sample_side(*s, rng);
        }
        JobShape::Box { sides }
    }
}

impl ShapeDistribution for MeshSides {
    /// Π_i E\[side_i\], from the exact side distributions.
    fn mean_nodes(&self) -> f64 {
        self.mean_nodes
    }
}

/// How [`NodeCounts`] draws a count up to its largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum NodeCountLaw {
    /// `uniform`: uniform in 1..=max.
    Uniform,
    /// `pow2`: 2^a with a uniform in 0..=⌊log₂ max⌋.
    PowersOfTwo,
    /// `multiples-of-K`: K·u with u uniform in 1..=⌊max / K⌋ (whole racks
    /// of K nodes, say).
    Multiples(u32),
    /// `placements`: uniform among the distinct node counts of a Slurm
    /// `topology/torus3d` machine's placement shapes up to max, the only
    /// counts such a machine places ([`NodeCounts::among`]).
    Placements,
}

impl core::fmt::Display for NodeCountLaw {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Uniform => f.write_str("uniform"),
            Self::PowersOfTwo => f.write_str("pow2"),
            Self::Multiples(k) => write!(f, "multiples-of-{k}"),
            Self::Placements => f.write_str("placements"),
        }
    }
}

/// Plain node counts, for machines where jobs ask for a number of nodes
/// (racks and switch trees): `law` up to `max` nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeCounts {
    law: NodeCountLaw,
    max: u32,
    /// The counts drawn among (`placements`), ascending; the first `len`.
    sizes: [u32; MAX_PLACEMENT_SIZES],
    len: u8,
}

/// Most distinct counts [`NodeCountLaw::Placements`] draws among (a
/// torus3d machine lists a handful of placement shapes).
pub const MAX_PLACEMENT_SIZES: usize = 32;

impl NodeCounts {
    /// Counts drawn by `law` up to `max` nodes.
    ///
    /// ```
    /// use partalloc_workload::{ChaCha8Rng, Distribution, JobShape, NodeCountLaw, NodeCounts, SeedableRng};
    /// let d = NodeCounts::new(NodeCountLaw::Multiples(18), 144)?;
    /// let mut rng = ChaCha8Rng::seed_from_u64(1);
    /// let JobShape::Nodes { count } = d.sample(&mut rng) else { unreachable!() };
    /// assert!(count % 18 == 0 && count <= 144);
    /// # Ok::<(), partalloc_workload::WorkloadError>(())
    /// ```
    ///
    /// # Errors
    /// [`WorkloadError::NotPositive`] for a largest count or a multiple of
    /// 0, or a multiple larger than the largest count.
    pub fn new(law: NodeCountLaw, max: u32) -> Result<Self, WorkloadError> {
        let bad = |name| WorkloadError::NotPositive { name, value: 0.0 };
        if law == NodeCountLaw::Placements {
            return Err(WorkloadError::BadShape {
                reason:
                    "counts among placement sizes need the sizes: build them with NodeCounts::among"
                        .to_owned(),
            });
        }
        if max == 0 {
            return Err(bad("the largest node count"));
        }
        if let NodeCountLaw::Multiples(k) = law
            && (k == 0 || k > max)
        {
            return Err(bad(
                "the number of largest-count multiples (multiple ≤ largest count)",
            ));
        }
        Ok(Self {
            law,
            max,
            sizes: [0; MAX_PLACEMENT_SIZES],
            len: 0,
        })
    }

    /// Counts uniform among the distinct values of `sizes` (a torus3d
    /// machine's placement sizes): law [`NodeCountLaw::Placements`].
    ///
    /// ```
    /// use partalloc_workload::{ChaCha8Rng, Distribution, JobShape, NodeCounts, SeedableRng, ShapeDistribution};
    /// let d = NodeCounts::among(&[8, 2, 4, 2, 64])?;
    /// assert_eq!((d.max(), d.sizes()), (64, &[2, 4, 8, 64][..]));
    /// assert_eq!(d.mean_nodes(), 78.0 / 4.0);
    /// let mut rng = ChaCha8Rng::seed_from_u64(1);
    /// let JobShape::Nodes { count } = d.sample(&mut rng) else { unreachable!() };
    /// assert!([2, 4, 8, 64].contains(&count));
    /// # Ok::<(), partalloc_workload::WorkloadError>(())
    /// ```
    ///
    /// # Errors
    /// [`WorkloadError::BadShape`] without a positive size, or with more
    /// than [`MAX_PLACEMENT_SIZES`] distinct ones.
    pub fn among(sizes: &[u32]) -> Result<Self, WorkloadError> {
        let mut distinct: Vec<u32> = sizes.iter().copied().filter(|&n| n > 0).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let bad = |reason: String| WorkloadError::BadShape { reason };
        let Some(&max) = distinct.last() else {
            return Err(bad("no placement size to draw node counts among".to_owned()));
        };
        if distinct.len() > MAX_PLACEMENT_SIZES {
            return Err(bad(format!(
                "{} distinct placement sizes, more than the {MAX_PLACEMENT_SIZES} node counts are drawn among; give --shapes nodes with --max-sides",
                distinct.len()
            )));
        }
        let mut table = [0; MAX_PLACEMENT_SIZES];
        table[..distinct.len()].copy_from_slice(&distinct);
        Ok(Self {
            law: NodeCountLaw::Placements,
            max,
            sizes: table,
            len: distinct.len() as u8,
        })
    }

    /// The counts drawn among (`placements`; empty for another law).
    #[must_use]
    pub fn sizes(&self) -> &[u32] {
        &self.sizes[..usize::from(self.len)]
    }

    /// The law.
    #[must_use]
    pub fn law(&self) -> NodeCountLaw {
        self.law
    }

    /// The largest count.
    #[must_use]
    pub fn max(&self) -> u32 {
        self.max
    }
}

impl Distribution<JobShape> for NodeCounts {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        let count = match self.law {
            NodeCountLaw::Uniform => rng.random_range(1..=self.max),
            NodeCountLaw::PowersOfTwo => 1 << rng.random_range(0..=self.max.ilog2()),
            NodeCountLaw::Multiples(k) => k * rng.random_range(1..=self.max / k.max(1)),
            NodeCountLaw::Placements => {
                let sizes = self.sizes();
                sizes[rng.random_range(0..sizes.len().max(1))]
            }
        };
        JobShape::Nodes { count }
    }
}

impl ShapeDistribution for NodeCounts {
    fn mean_nodes(&self) -> f64 {
        let max = f64::from(self.max);
        match self.law {
            NodeCountLaw::Uniform => (1.0 + max) / 2.0,
            NodeCountLaw::PowersOfTwo => {
                let k = self.max.ilog2();
                (2f64.powi(k as i32 + 1) - 1.0) / f64::from(k + 1)
            }
            NodeCountLaw::Multiples(k) => {
                f64::from(k) * (1.0 + f64::from(self.max / k.max(1))) / 2.0
            }
            NodeCountLaw::Placements => {
                let sizes = self.sizes();
                sizes.iter().map(|&n| f64::from(n)).sum::<f64>() / sizes.len().max(1) as f64
            }
        }
    }
}

/// Any of the shape distributions, chosen at run time.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per experiment; an inline table keeps sampling free of pointer chasing"
)]
pub enum ShapeDist {
    /// [`CubicShapes`].
    Cubic(CubicShapes),
    /// [`NoncubicShapes`].
    Noncubic(NoncubicShapes),
    /// [`CubeDims`].
    CubeDims(CubeDims),
    /// [`MeshSides`].
    Mesh(MeshSides),
    /// [`NodeCounts`].
    Nodes(NodeCounts),
    /// [`CatalogueShapes`](crate::CatalogueShapes).
    Catalogue(crate::CatalogueShapes),
}

impl Distribution<JobShape> for ShapeDist {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        match self {
            Self::Cubic(d) => d.sample(rng),
            Self::Noncubic(d) => d.sample(rng),
            Self::CubeDims(d) => d.sample(rng),
            Self::Mesh(d) => d.sample(rng),
            Self::Nodes(d) => d.sample(rng),
            Self::Catalogue(d) => d.sample(rng),
        }
    }
}

impl ShapeDistribution for ShapeDist {
    fn mean_nodes(&self) -> f64 {
        match self {
            Self::Cubic(d) => d.mean_nodes(),
            Self::Noncubic(d) => d.mean_nodes(),
            Self::CubeDims(d) => d.mean_nodes(),
            Self::Mesh(d) => d.mean_nodes(),
            Self::Nodes(d) => d.mean_nodes(),
            Self::Catalogue(d) => d.mean_nodes(),
        }
    }
}

impl From<CubicShapes> for ShapeDist {
    fn from(d: CubicShapes) -> Self {
        Self::Cubic(d)
    }
}

impl From<NoncubicShapes> for ShapeDist {
    fn from(d: NoncubicShapes) -> Self {
        Self::Noncubic(d)
    }
}

impl From<CubeDims> for ShapeDist {
    fn from(d: CubeDims) -> Self {
        Self::CubeDims(d)
    }
}

impl From<crate::CatalogueShapes> for ShapeDist {
    fn from(d: crate::CatalogueShapes) -> Self {
        Self::Catalogue(d)
    }
}

impl From<MeshSides> for ShapeDist {
    fn from(d: MeshSides) -> Self {
        Self::Mesh(d)
    }
}

impl From<NodeCounts> for ShapeDist {
    fn from(d: NodeCounts) -> Self {
        Self::Nodes(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;
    use std::collections::HashMap;

    #[test]
    fn node_counts_stay_in_range_and_match_their_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (law, max) in [
            (NodeCountLaw::Uniform, 144),
            (NodeCountLaw::PowersOfTwo, 144),
            (NodeCountLaw::Multiples(18), 144),
            (NodeCountLaw::Multiples(18), 100),
        ] {
            let d = NodeCounts::new(law, max).unwrap();
            let n = 40_000;
            let mut sum = 0.0;
            for _ in 0..n {
                let JobShape::Nodes { count } = d.sample(&mut rng) else {
                    panic!("{law}: not a node count");
                };
                assert!((1..=max).contains(&count), "{law}: {count}");
                match law {
                    NodeCountLaw::PowersOfTwo => assert!(count.is_power_of_two()),
                    NodeCountLaw::Multiples(k) => assert_eq!(count % k, 0),
                    _ => {}
                }
                sum += f64::from(count);
            }
            let (mean, want) = (sum / f64::from(n), d.mean_nodes());
            assert!((mean - want).abs() < 0.02 * want, "{law}: {mean} vs {want}");
        }
        assert_eq!(
            NodeCounts::new(NodeCountLaw::PowersOfTwo, 144)
                .unwrap()
                .mean_nodes(),
            255.0 / 8.0
        );
        assert!(NodeCounts::new(NodeCountLaw::Uniform, 0).is_err());
        assert!(NodeCounts::new(NodeCountLaw::Multiples(20), 10).is_err());
        assert!(NodeCounts::new(NodeCountLaw::Multiples(0), 10).is_err());
    }

    fn sides_of(s: JobShape) -> Vec<u32> {
        match s {
            JobShape::Box { sides } => sides.to_vec(),
            other => panic!("expected a box, got {other}"),
        }
    }

    #[test]
    fn kang_cubic_each_shape_within_three_sigma() {
        // Kang §5.1 on a 4-ary 3-cube: a, b, c uniform in 0..=2, so each of
        // the 27 shapes has p = 1/27. With n draws a shape's count is
        // Binomial(n, p): mean np, σ = √(np(1 − p)).
        let shapes = CubicShapes::for_grid(&Grid::mesh(&[4, 4, 4]).unwrap()).unwrap();
        assert_eq!(shapes.shape_count(), 27);
        let n = 270_000u32;
        let mut rng = ChaCha8Rng::seed_from_u64(27);
        let mut counts: HashMap<Vec<u32>, u32> = HashMap::new();
        for _ in 0..n {
            *counts.entry(sides_of(shapes.sample(&mut rng))).or_default() += 1;
        }
        assert_eq!(counts.len(), 27);
        let p = 1.0 / 27.0;
        let (mean, sigma) = (f64::from(n) * p, (f64::from(n) * p * (1.0 - p)).sqrt());
        for (shape, &c) in &counts {
            assert!(shape.iter().all(|s| [1, 2, 4].contains(s)));
            assert!(
                (f64::from(c) - mean).abs() < 3.0 * sigma,
                "{shape:?}: {c} vs {mean} ± 3·{sigma}"
            );
        }
        // Kang's 2^4 × 2^4 × 2^4 example: 125 cases.
        let big = CubicShapes::new(&[4, 4, 4]).unwrap();
        assert_eq!(big.shape_count(), 125);
        assert_eq!(big.mean_nodes(), (31.0f64 / 5.0).powi(3));
        assert!(CubicShapes::for_grid(&Grid::mesh(&[4, 6]).unwrap()).is_err());
        assert!(CubicShapes::new(&[32]).is_err());
        assert!(CubicShapes::new(&[]).is_err());
    }

    #[test]
    fn noncubic_uniform_sides() {
        // Kang §5.3: 8×8×8, each l_i in 1..=8 with probability 1/8.
        let shapes = NoncubicShapes::new(&[8, 8, 8]).unwrap();
        assert_eq!(shapes.mean_nodes(), 4.5f64.powi(3));
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut hist = [0u32; 8];
        let n = 80_000;
        for _ in 0..n {
            for s in sides_of(shapes.sample(&mut rng)) {
                hist[s as usize - 1] += 1;
            }
        }
        // 240 000 side draws, p = 1/8: σ ≈ 162; 3σ per cell.
        let (m, sd) = (30_000.0, (240_000.0f64 * 0.125 * 0.875).sqrt());
        for c in hist {
            assert!((f64::from(c) - m).abs() < 3.0 * sd, "{hist:?}");
        }
        assert!(NoncubicShapes::new(&[3, 0]).is_err());
    }

    #[test]
    fn mohapatra_tables() {
        let n = CubeDims::mohapatra_normal();
        assert_eq!(n.max_dim(), 9);
        let p = n.probabilities();
        for (a, b) in p.iter().zip(MOHAPATRA_NORMAL_10) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!((MOHAPATRA_NORMAL_10.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let u = CubeDims::mohapatra_uniform(&Hypercube::new(10).unwrap()).unwrap();
        assert_eq!(u.max_dim(), 9);
        assert!(u.probabilities().iter().all(|&p| (p - 0.1).abs() < 1e-12));
        // Mean size Σ 2^i / 10 = 1023/10.
        assert!((u.mean_nodes() - 102.3).abs() < 1e-9);
        // Mean size of the normal table, Σ p_i 2^i (docs/paper-errata.md (workload part)).
        assert!((n.mean_nodes() - 52.605).abs() < 1e-9);
        // Empirical frequencies of the normal table, 3σ per dimension.
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let draws = 200_000u32;
        let mut hist = [0u32; 10];
        for _ in 0..draws {
            let JobShape::Cube { dim } = n.sample(&mut rng) else {
                panic!()
            };
            hist[dim as usize] += 1;
        }
        for (i, &c) in hist.iter().enumerate() {
            let np = f64::from(draws) * p[i];
            let sd = (np * (1.0 - p[i])).sqrt();
            assert!((f64::from(c) - np).abs() < 3.0 * sd, "dim {i}: {c} vs {np}");
        }
        // User tables.
        let t = CubeDims::from_weights(&[0.0, 3.0, 1.0]).unwrap();
        assert_eq!(t.probabilities(), vec![0.0, 0.75, 0.25]);
        assert!((t.mean_nodes() - 2.5).abs() < 1e-12);
        for _ in 0..1000 {
            assert_ne!(t.sample(&mut rng), JobShape::Cube { dim: 0 });
        }
        assert!(CubeDims::from_weights(&[]).is_err());
        assert!(CubeDims::from_weights(&[0.0, 0.0]).is_err());
        assert!(CubeDims::from_weights(&[1.0, -0.5]).is_err());
        assert!(CubeDims::from_weights(&[1.0, f64::NAN]).is_err());
        assert!(CubeDims::from_weights(&[1.0; 32]).is_err());
        assert!(CubeDims::uniform(3, 2).is_err());
        assert!(CubeDims::uniform(0, 31).is_err());
        assert!(CubeDims::mohapatra_uniform(&Hypercube::new(0).unwrap()).is_err());
    }

    #[test]
    fn truncated_normal_respects_bounds_and_pmf() {
        // Kim–Yoon: 16×16 mesh, normal sides with mean 8.5, variance 4.25.
        let m = MeshSides::new(SideLaw::TruncatedNormal, &[16, 16]).unwrap();
        let pmf = m.pmf(0).unwrap();
        assert_eq!(pmf.len(), 16);
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Symmetric around 8.5.
        for s in 0..8 {
            assert!((pmf[s] - pmf[15 - s]).abs() < 1e-12);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        let draws = 100_000u32;
        let mut hist = [0u32; 16];
        for _ in 0..draws {
            for s in sides_of(m.sample(&mut rng)) {
                assert!((1..=16).contains(&s), "side {s} out of range");
                hist[s as usize - 1] += 1;
            }
        }
        for (i, &c) in hist.iter().enumerate() {
            let np = 2.0 * f64::from(draws) * pmf[i];
            let sd = (np * (1.0 - pmf[i])).sqrt();
            assert!(
                (f64::from(c) - np).abs() < 3.0 * sd.max(1.0),
                "side {}: {c} vs {np}",
                i + 1
            );
        }
        assert!((m.mean_nodes() - 8.5 * 8.5).abs() < 1e-9);
        // Small mesh: bounds are hit often and still respected.
        let tiny = MeshSides::new(SideLaw::TruncatedNormal, &[2, 1]).unwrap();
        for _ in 0..10_000 {
            let s = sides_of(tiny.sample(&mut rng));
            assert!((1..=2).contains(&s[0]) && s[1] == 1);
        }
    }

    #[test]
    fn side_means_match_the_tables_and_need_no_table() {
        for law in [
            SideLaw::Uniform,
            SideLaw::TruncatedNormal,
            SideLaw::TruncatedExponential,
        ] {
            for l in [1u32, 2, 3, 7, 16, 100, 1000, 5000] {
                let m = MeshSides::new(law, &[l]).unwrap();
                let from_table: f64 = m
                    .pmf(0)
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(|(i, p)| p * (i as f64 + 1.0))
                    .sum();
                let got = m.mean_nodes();
                assert!(
                    (got - from_table).abs() <= 1e-9 * from_table,
                    "{law:?} L={l}: {got} vs {from_table}"
                );
            }
            // A side of 2^30 would need an 8 GB table of probabilities.
            let big = MeshSides::new(law, &[1 << 30, 1 << 30]).unwrap();
            let m = big.mean_nodes();
            assert!(
                m.is_finite() && m > 1.0 && m <= 2f64.powi(60),
                "{law:?}: {m}"
            );
        }
        let half = (1.0 + 2f64.powi(30)) / 2.0;
        let normal = MeshSides::new(SideLaw::TruncatedNormal, &[1 << 30]).unwrap();
        assert!((normal.mean_nodes() - half).abs() < 1e-6 * half);
    }

    #[test]
    fn truncated_exponential_pmf_and_frequencies() {
        let m = MeshSides::new(SideLaw::TruncatedExponential, &[32]).unwrap();
        let pmf = m.pmf(0).unwrap();
        // Decreasing, ratio e^{-1/μ} between neighbours (μ = 16.5).
        for w in pmf.windows(2) {
            assert!((w[1] / w[0] - (-1.0f64 / 16.5).exp()).abs() < 1e-12);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(32);
        let draws = 100_000u32;
        let mut hist = [0u32; 32];
        for _ in 0..draws {
            let s = sides_of(m.sample(&mut rng))[0];
            hist[s as usize - 1] += 1;
        }
        for (i, &c) in hist.iter().enumerate() {
            let np = f64::from(draws) * pmf[i];
            let sd = (np * (1.0 - pmf[i])).sqrt();
            assert!(
                (f64::from(c) - np).abs() < 3.0 * sd,
                "side {}: {c} vs {np}",
                i + 1
            );
        }
        let u = MeshSides::new(SideLaw::Uniform, &[4, 5]).unwrap();
        assert!((u.mean_nodes() - 2.5 * 3.0).abs() < 1e-12);
        assert!(MeshSides::new(SideLaw::Uniform, &[0]).is_err());
        assert_eq!(u.pmf(2), None);
    }

    #[test]
    fn value_stability() {
        let mut rng = ChaCha8Rng::seed_from_u64(2026);
        let cubic = CubicShapes::new(&[2, 2, 2]).unwrap();
        let non = NoncubicShapes::new(&[8, 8, 8]).unwrap();
        let dims = CubeDims::mohapatra_normal();
        let normal = MeshSides::new(SideLaw::TruncatedNormal, &[64, 64]).unwrap();
        let expo = MeshSides::new(SideLaw::TruncatedExponential, &[64, 64]).unwrap();
        let got: Vec<String> = vec![
            cubic.sample(&mut rng).to_string(),
            non.sample(&mut rng).to_string(),
            dims.sample(&mut rng).to_string(),
            normal.sample(&mut rng).to_string(),
            expo.sample(&mut rng).to_string(),
        ];
        assert_eq!(got, STABLE, "a shape stream changed: {got:?}");
    }

    /// First values for seed 2026; recorded from this implementation so a
    /// change of generator, rand version or draw order fails loudly.
    const STABLE: [&str; 5] = ["1x2x2", "3x6x1", "Q_3", "27x35", "51x16"];
}
