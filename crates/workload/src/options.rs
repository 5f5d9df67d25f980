//! The options a person gives for a generated workload — the command
//! line's flags, an experiment file's `[workload]` table, the Python
//! package's `workload=` dictionary — and how they become the laws of
//! [`spec`](crate::spec) on a machine. One type for every front end, so
//! that they accept the same options and mean the same by them.
//!
//! ```
//! use partalloc_topology::Topology;
//! use partalloc_workload::{ShapeDistribution, ShapeKind, WorkloadOptions};
//!
//! let pod: Topology = "pod:tpu-v5e:8x8".parse()?;
//! let options = WorkloadOptions {
//!     shapes: ShapeKind::Catalogue,
//!     // Only the smallest and the largest catalogue shapes.
//!     shape_weights: Some(vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
//!     jobs: 500,
//!     ..WorkloadOptions::default()
//! };
//! assert_eq!(options.shape_law(&pod).to_string(), "catalogue:1,0,0,0,0,1");
//! let w = options.build(&pod, 0.5)?;
//! assert!(w.shapes().mean_nodes() > 1.0);
//! assert_eq!(
//!     options.describe(&pod, 0.5),
//!     "load 0.5, catalogue:1,0,0,0,0,1, residence exp:1 (dependent), 500 jobs"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::Topology;

use crate::spec::{Arrivals, CubeDimLaw, DemandLaw, ShapeKind, ShapeLaw, Sides, SpecError};
use crate::{DemandDist, Dependence, ShapeDist, SideLaw, Workload, WorkloadSpec};

/// A generated workload as a person describes it: the kind of shapes and
/// the settings it leaves open, the residence law, and how many jobs to
/// measure after how long a warm-up. With serde (feature `serde`) every
/// law is written in its text form and unknown keys are refused.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct WorkloadOptions {
    /// `auto`, `sides`, `cubic`, `noncubic`, `cube`, `nodes` or
    /// `catalogue`.
    pub shapes: ShapeKind,
    /// Law of the sides for `sides` shapes: `uniform`, `normal`,
    /// `exponential`.
    #[cfg_attr(feature = "serde", serde(with = "crate::spec::as_text"))]
    pub sides: SideLaw,
    /// Largest request, e.g. `16x16` (sides/noncubic/cubic; its product
    /// for node counts; default: the machine).
    pub max_sides: Option<Sides>,
    /// Cube dimension law for `cube` shapes: `uniform`, `uniform:LO-HI`,
    /// `normal`, or weights `w0,w1,…`.
    pub cube_dims: CubeDimLaw,
    /// Residence (service) time law: `exp:MEAN`, `uniform:MEAN`,
    /// `uniform:LO-HI`, `hyper:MEAN,ALPHA,CV`, `const:VALUE`.
    pub residence: DemandLaw,
    /// Weights of a pod's catalogue shapes, smallest first (`catalogue`
    /// shapes; default all equal).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub shape_weights: Option<Vec<f64>>,
    /// `dependent` or `independent` (Mohapatra §4.1).
    #[cfg_attr(feature = "serde", serde(with = "crate::spec::as_text"))]
    pub dependence: Dependence,
    /// Measured jobs per replication.
    pub jobs: u64,
    /// Completed jobs discarded before measuring.
    pub warmup: u64,
    /// Accept offered loads ≥ 1.
    pub allow_saturation: bool,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        Self {
            shapes: ShapeKind::Auto,
            sides: SideLaw::Uniform,
            max_sides: None,
            cube_dims: CubeDimLaw::Uniform,
            shape_weights: None,
            residence: DemandLaw::Exponential { mean: 1.0 },
            dependence: Dependence::Dependent,
            jobs: 1000,
            warmup: 0,
            allow_saturation: false,
        }
    }
}

impl WorkloadOptions {
    /// The shape law the options select on `topology`
    /// ([`ShapeLaw::of_kind`], with the catalogue weights).
    #[must_use]
    pub fn shape_law(&self, topology: &Topology) -> ShapeLaw {
        match ShapeLaw::of_kind(
            self.shapes,
            topology,
            self.sides,
            &self.cube_dims,
            self.max_sides.map(|m| m.0),
        ) {
            ShapeLaw::Catalogue { weights: None } if self.shape_weights.is_some() => {
                ShapeLaw::Catalogue {
                    weights: self.shape_weights.clone(),
                }
            }
            law => law,
        }
    }

    /// The laws at offered load `load` on `topology`.
    #[must_use]
    pub fn laws(&self, topology: &Topology, load: f64) -> WorkloadSpec {
        WorkloadSpec {
            arrivals: Arrivals::Load(load),
            shapes: self.shape_law(topology),
            demand: self.residence,
            dependence: self.dependence,
            allow_saturation: self.allow_saturation,
        }
    }

    /// The workload at offered load `load` on `topology`.
    ///
    /// # Errors
    /// As [`WorkloadSpec::build`].
    pub fn build(
        &self,
        topology: &Topology,
        load: f64,
    ) -> Result<Workload<ShapeDist, DemandDist>, SpecError> {
        self.laws(topology, load).build(topology)
    }

    /// One line describing the workload at offered load `load` on
    /// `topology` (a warm-up is mentioned only if there is one).
    #[must_use]
    pub fn describe(&self, topology: &Topology, load: f64) -> String {
        self.laws(topology, load)
            .describe(self.max_sides.as_ref(), self.jobs, self.warmup)
    }
}
