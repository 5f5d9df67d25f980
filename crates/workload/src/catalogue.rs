//! Pod workloads: slice shapes drawn from a pod's catalogue with a weight
//! per shape.

use partalloc_topology::Coords;
use partalloc_topology::pod::ShapeCatalogue;
use rand::{Rng, RngExt};
use rand_distr::Distribution;

use crate::shapes::ShapeDistribution;
use crate::{JobShape, WorkloadError};

/// Most shapes a [`CatalogueShapes`] draws from (the table is inline, so
/// the distribution stays `Copy` like the others).
pub const MAX_CATALOGUE_SHAPES: usize = 32;

/// Catalogue shapes with given weights: shape i is drawn with probability
/// wᵢ / Σw.
///
/// ```
/// use partalloc_topology::pod::Pod;
/// use partalloc_workload::{CatalogueShapes, ShapeDistribution};
///
/// let pod = Pod::preset("tpu-v5e")?;
/// // Only 2x2 (weight 3) and 4x4 (weight 1): mean (3·4 + 16) / 4 = 7 chips.
/// let w = [0.0, 3.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
/// let d = CatalogueShapes::new(pod.catalogue(), Some(&w))?;
/// assert_eq!(d.mean_nodes(), 7.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "CatalogueRepr", try_from = "CatalogueRepr")
)]
pub struct CatalogueShapes {
    shapes: [Coords; MAX_CATALOGUE_SHAPES],
    weights: [f64; MAX_CATALOGUE_SHAPES],
    // cumulative[i] = (w_0 + … + w_i) / Σw; the last is 1.
    cumulative: [f64; MAX_CATALOGUE_SHAPES],
    len: usize,
    mean_nodes: f64,
}

// Every weight and table entry is finite (the constructor checks), so
// equality is reflexive.
impl Eq for CatalogueShapes {}

/// The serialized form of a [`CatalogueShapes`]: shapes and weights; the
/// table is rebuilt and checked by [`CatalogueShapes::from_parts`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct CatalogueRepr {
    shapes: Vec<Coords>,
    weights: Vec<f64>,
}

#[cfg(feature = "serde")]
impl From<CatalogueShapes> for CatalogueRepr {
    fn from(c: CatalogueShapes) -> Self {
        Self {
            shapes: c.shapes().to_vec(),
            weights: c.weights().to_vec(),
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<CatalogueRepr> for CatalogueShapes {
    type Error = WorkloadError;
    fn try_from(r: CatalogueRepr) -> Result<Self, WorkloadError> {
        Self::from_parts(&r.shapes, &r.weights)
    }
}

impl CatalogueShapes {
    /// The shapes of `catalogue` (smallest first), with `weights` in that
    /// order, or all equal when `None`.
    ///
    /// # Errors
    /// [`WorkloadError::BadShape`] for a weight count other than the
    /// catalogue's, a negative or non-finite weight, all weights zero, or
    /// more than [`MAX_CATALOGUE_SHAPES`] shapes.
    pub fn new(catalogue: &ShapeCatalogue, weights: Option<&[f64]>) -> Result<Self, WorkloadError> {
        let shapes = catalogue.shapes();
        let equal = vec![1.0; shapes.len()];
        Self::from_parts(shapes, weights.unwrap_or(&equal))
    }

    /// `shapes` drawn with `weights`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn from_parts(shapes: &[Coords], weights: &[f64]) -> Result<Self, WorkloadError> {
        let bad = |reason: String| WorkloadError::BadShape { reason };
        if shapes.is_empty() || shapes.len() > MAX_CATALOGUE_SHAPES {
            return Err(bad(format!(
                "a catalogue workload draws from 1 to {MAX_CATALOGUE_SHAPES} shapes, not {}",
                shapes.len()
            )));
        }
        if weights.len() != shapes.len() {
            return Err(bad(format!(
                "{} shape weights given for {} catalogue shapes (one per shape, smallest first)",
                weights.len(),
                shapes.len()
            )));
        }
        if let Some(w) = weights.iter().find(|w| !w.is_finite() || **w < 0.0) {
            return Err(bad(format!(
                "shape weight {w} is not a finite number at least 0"
            )));
        }
        let total = crate::error::weight_sum("shape weights", weights)?;
        if total <= 0.0 {
            return Err(bad("every shape weight is 0".to_owned()));
        }
        let mut s = Self {
            shapes: [shapes[0]; MAX_CATALOGUE_SHAPES],
            weights: [0.0; MAX_CATALOGUE_SHAPES],
            cumulative: [1.0; MAX_CATALOGUE_SHAPES],
            len: shapes.len(),
            mean_nodes: 0.0,
        };
        let mut run = 0.0;
        for (i, (shape, &w)) in shapes.iter().zip(weights).enumerate() {
            s.shapes[i] = *shape;
            s.weights[i] = w;
            run += w;
            s.cumulative[i] = run / total;
            s.mean_nodes += w / total * shape.product() as f64;
        }
        s.cumulative[s.len - 1] = 1.0;
        Ok(s)
    }

    /// The shapes, smallest first.
    #[must_use]
    pub fn shapes(&self) -> &[Coords] {
        self.shapes.get(..self.len).unwrap_or_default()
    }

    /// The weights, in the order of [`shapes`](Self::shapes).
    #[must_use]
    pub fn weights(&self) -> &[f64] {
        self.weights.get(..self.len).unwrap_or_default()
    }
}

impl Distribution<JobShape> for CatalogueShapes {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> JobShape {
        let u: f64 = rng.random();
        let table = self.cumulative.get(..self.len).unwrap_or_default();
        // The first shape whose cumulative weight exceeds u: a zero-weight
        // shape shares its predecessor's value and is never chosen.
        let i = table.partition_point(|&c| c <= u).min(self.len - 1);
        JobShape::Box {
            sides: self.shapes[i],
        }
    }
}

impl ShapeDistribution for CatalogueShapes {
    /// Σ wᵢ·|shapeᵢ| / Σw.
    fn mean_nodes(&self) -> f64 {
        self.mean_nodes
    }
}

#[cfg(test)]
mod tests {
    use partalloc_topology::pod::Pod;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use super::*;

    #[test]
    fn shapes_are_drawn_in_proportion_to_their_weights() {
        let pod = Pod::preset("tpu-v5e").unwrap();
        let w = [0.0, 1.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0];
        let d = CatalogueShapes::new(pod.catalogue(), Some(&w)).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 40_000;
        let mut four_by_four = 0;
        for _ in 0..n {
            match d.sample(&mut rng) {
                JobShape::Box { sides } if sides.as_slice() == [4, 4] => four_by_four += 1,
                JobShape::Box { sides } => assert_eq!(sides.as_slice(), &[2, 2]),
                other => panic!("{other}"),
            }
        }
        let share = f64::from(four_by_four) / f64::from(n);
        assert!((share - 0.75).abs() < 0.01, "{share}");
        assert_eq!(d.mean_nodes(), 0.25 * 4.0 + 0.75 * 16.0);
    }

    #[test]
    fn bad_weights_are_refused_with_the_reason() {
        let pod = Pod::preset("tpu-v5e").unwrap();
        let c = pod.catalogue();
        for (w, says) in [
            (vec![1.0; 3], "3 shape weights given for 8 catalogue shapes"),
            (vec![0.0; 8], "every shape weight is 0"),
            (
                vec![1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                "shape weight -1 is not",
            ),
        ] {
            let e = CatalogueShapes::new(c, Some(&w)).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        let equal = CatalogueShapes::new(c, None).unwrap();
        assert_eq!(equal.weights(), &[1.0; 8]);
    }
}
