//! How a generated workload is described on the command line and in an
//! experiment file, and how that description becomes a [`Workload`].

use std::path::PathBuf;

use partalloc::topology::Topology;
use partalloc::workload::ShapeMapping;
use partalloc::workload::spec::{self, Arrivals, as_text};
use partalloc::workload::{
    CubeDimLaw, DemandDist, DemandLaw, Dependence, ShapeDist, ShapeKind, ShapeLaw, SideLaw, Sides,
    SpecError, Workload, WorkloadError,
};
use serde::{Deserialize, Serialize};

use crate::error::CliError;

/// Shape laws of a generated workload (`--shapes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ShapesArg {
    /// Subcubes on hypercubes, sides on meshes and tori, node counts on
    /// Slurm machines.
    Auto,
    /// Independent sides (Kim–Yoon §IV.1).
    Sides,
    /// Power-of-two sides (Kang §5.1).
    Cubic,
    /// Any sides up to the limits (Kang §5.3).
    Noncubic,
    /// Subcube dimensions (Mohapatra §4.1).
    Cube,
    /// Plain node counts, uniform up to the machine.
    Nodes,
    /// A pod's catalogue shapes (weights from --shape-weights).
    Catalogue,
}

/// Law of each side for `sides` shapes (`--sides`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SidesArg {
    /// Uniform in 1..=L.
    Uniform,
    /// Normal around (1 + L)/2, truncated to 1..=L.
    Normal,
    /// Exponential with mean (1 + L)/2, truncated to 1..=L.
    #[value(alias = "exp")]
    Exponential,
}

/// Size/demand model (`--dependence`, Mohapatra §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DependenceArg {
    /// The law gives the residence time; a larger job has more total demand.
    Dependent,
    /// The law gives the total demand; the residence time is it over the
    /// job's nodes.
    Independent,
}

/// How trace processor counts become requests (`--mapping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MappingArg {
    /// Subcubes on hypercubes, the most square box on meshes and tori.
    Shapes,
    /// Plain node counts, for non-contiguous allocation.
    Nodes,
}

/// The name clap shows for a value.
pub(crate) fn value_name<T: clap::ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

/// The laws of a generated workload, shared by `simulate`, `show` and
/// `generate`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct WorkloadArgs {
    /// Offered load ρ = λ·m·r/N of the generated workload (Kim–Yoon §IV.1).
    #[arg(long, default_value_t = 0.5)]
    pub(crate) load: f64,
    /// Accept offered loads of 1 or more (the queue then grows without
    /// bound; for saturation studies).
    #[arg(long)]
    pub(crate) allow_saturation: bool,
    /// Shape law.
    #[arg(long, value_enum, default_value_t = ShapesArg::Auto)]
    pub(crate) shapes: ShapesArg,
    /// Law of each side for `sides` shapes.
    #[arg(long, value_enum, default_value_t = SidesArg::Uniform)]
    pub(crate) sides: SidesArg,
    /// Largest request for sides/cubic/noncubic shapes, e.g. 16x16, and
    /// for node counts its product, e.g. 72 (default: the whole machine,
    /// or its largest block).
    #[arg(long)]
    pub(crate) max_sides: Option<Sides>,
    /// Subcube dimension law for `cube` shapes: uniform (0..n−1),
    /// uniform:LO-HI, normal (Mohapatra's table), or weights w0,w1,….
    #[arg(long, default_value = "uniform")]
    pub(crate) cube_dims: CubeDimLaw,
    /// Weights of a pod's catalogue shapes, smallest shape first, e.g.
    /// 4,2,1,1,0,0,0,0 (default: all equal).
    #[arg(long, value_delimiter = ',')]
    pub(crate) shape_weights: Option<Vec<f64>>,
    /// Residence time law: exp:MEAN, uniform:MEAN (on [0, 2·MEAN]),
    /// uniform:LO-HI, hyper:MEAN,ALPHA,CV or const:VALUE.
    #[arg(long, default_value = "exp:1")]
    pub(crate) residence: DemandLaw,
    /// Size/demand model.
    #[arg(long, value_enum, default_value_t = DependenceArg::Dependent)]
    pub(crate) dependence: DependenceArg,
}

impl WorkloadArgs {
    /// The workload description with `jobs` measured after `warmup`.
    pub(crate) fn spec(&self, jobs: u64, warmup: u64) -> WorkloadSpec {
        WorkloadSpec {
            shapes: match self.shapes {
                ShapesArg::Auto => ShapeKind::Auto,
                ShapesArg::Sides => ShapeKind::Sides,
                ShapesArg::Cubic => ShapeKind::Cubic,
                ShapesArg::Noncubic => ShapeKind::Noncubic,
                ShapesArg::Cube => ShapeKind::Cube,
                ShapesArg::Nodes => ShapeKind::Nodes,
                ShapesArg::Catalogue => ShapeKind::Catalogue,
            },
            shape_weights: self.shape_weights.clone(),
            sides: match self.sides {
                SidesArg::Uniform => SideLaw::Uniform,
                SidesArg::Normal => SideLaw::TruncatedNormal,
                SidesArg::Exponential => SideLaw::TruncatedExponential,
            },
            max_sides: self.max_sides,
            cube_dims: self.cube_dims.clone(),
            residence: self.residence,
            dependence: match self.dependence {
                DependenceArg::Dependent => Dependence::Dependent,
                DependenceArg::Independent => Dependence::Independent,
            },
            jobs,
            warmup,
            allow_saturation: self.allow_saturation,
        }
    }
}

/// A trace to replay instead of a generated workload (`simulate`, `show`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TraceArgs {
    /// Replay this Standard Workload Format trace instead of generating jobs.
    #[arg(long, conflicts_with = "load")]
    pub(crate) trace: Option<PathBuf>,
    /// How trace processor counts become requests.
    #[arg(long, value_enum, default_value_t = MappingArg::Shapes)]
    pub(crate) mapping: MappingArg,
    /// Skip malformed trace lines instead of stopping at the first.
    #[arg(long)]
    pub(crate) lenient: bool,
}

impl TraceArgs {
    pub(crate) fn mapping(&self, topology: &Topology) -> ShapeMapping {
        match self.mapping {
            MappingArg::Nodes => ShapeMapping::nodes_of(topology),
            MappingArg::Shapes => ShapeMapping::for_topology(topology),
        }
    }
}

/// A workload error, with the flag to change for saturated loads.
pub(crate) fn workload_error(e: SpecError) -> CliError {
    match e {
        SpecError::Workload(WorkloadError::Saturated { load }) => CliError::input(format!(
            "offered load {load} is at least 1: no strategy can keep up and the queue grows without bound; use a load below 1, or pass --allow-saturation (allow_saturation = true in an experiment file) for a saturation study"
        )),
        SpecError::Workload(WorkloadError::LoadTooSmall { load, min }) => CliError::input(format!(
            "offered load {load:e} (--load, or loads in an experiment file) is below {min:e}, the smallest accepted: arrivals would be so rare that arrival times swallow the residence times or overflow to infinity"
        )),
        other => CliError::input(format!("workload: {other}")),
    }
}

/// How a generated workload is described, on the command line or in an
/// experiment file: the laws of `partalloc_workload::spec` in their text
/// forms, and how many jobs to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct WorkloadSpec {
    /// `auto`, `sides`, `cubic`, `noncubic` or `cube`.
    pub(crate) shapes: ShapeKind,
    /// Law of the sides for `sides` shapes: `uniform`, `normal`, `exponential`.
    #[serde(with = "as_text")]
    pub(crate) sides: SideLaw,
    /// Largest request, e.g. `16x16` (sides/noncubic/cubic; default: the machine).
    pub(crate) max_sides: Option<Sides>,
    /// Cube dimension law for `cube` shapes: `uniform`, `uniform:LO-HI`,
    /// `normal`, or weights `w0,w1,…`.
    pub(crate) cube_dims: CubeDimLaw,
    /// Residence (service) time law: `exp:MEAN`, `uniform:MEAN`,
    /// `uniform:LO-HI`, `hyper:MEAN,ALPHA,CV`, `const:VALUE`.
    pub(crate) residence: DemandLaw,
    /// Weights of a pod's catalogue shapes, smallest first (`catalogue`
    /// shapes; default all equal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shape_weights: Option<Vec<f64>>,
    /// `dependent` or `independent` (Mohapatra §4.1).
    #[serde(with = "as_text")]
    pub(crate) dependence: Dependence,
    /// Measured jobs per replication.
    pub(crate) jobs: u64,
    /// Completed jobs discarded before measuring.
    pub(crate) warmup: u64,
    /// Accept offered loads ≥ 1.
    pub(crate) allow_saturation: bool,
}

impl Default for WorkloadSpec {
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

impl WorkloadSpec {
    /// The shape law the options select on `topology`.
    pub(crate) fn shape_law(&self, topology: &Topology) -> ShapeLaw {
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

    /// The shape distribution on `topology`.
    #[cfg(test)]
    pub(crate) fn shapes(&self, topology: &Topology) -> Result<ShapeDist, CliError> {
        self.shape_law(topology)
            .shapes(topology)
            .map_err(workload_error)
    }

    /// The workload at offered load `load` on `topology`.
    pub(crate) fn build(
        &self,
        topology: &Topology,
        load: f64,
    ) -> Result<Workload<ShapeDist, DemandDist>, CliError> {
        self.laws(topology, load)
            .build(topology)
            .map_err(workload_error)
    }

    /// The laws at offered load `load` on `topology`.
    fn laws(&self, topology: &Topology, load: f64) -> spec::WorkloadSpec {
        spec::WorkloadSpec {
            arrivals: Arrivals::Load(load),
            shapes: self.shape_law(topology),
            demand: self.residence,
            dependence: self.dependence,
            allow_saturation: self.allow_saturation,
        }
    }

    /// Checks the counts.
    pub(crate) fn check(&self) -> Result<(), CliError> {
        if self.jobs == 0 {
            return Err(CliError::input("--jobs must be at least 1"));
        }
        Ok(())
    }
}

/// One line describing a workload.
pub(crate) fn describe_workload(spec: &WorkloadSpec, topology: &Topology, load: f64) -> String {
    // Only a warm-up that was applied is mentioned (`generate` has none).
    spec.laws(topology, load)
        .describe(spec.max_sides.as_ref(), spec.jobs, spec.warmup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc::workload::ShapeDistribution;

    #[test]
    fn a_load_too_small_for_finite_arrival_times_names_the_flag() {
        let mesh: Topology = "mesh:8x8".parse().unwrap();
        let e = WorkloadSpec::default()
            .build(&mesh, 1e-308)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "offered load 1e-308 (--load, or loads in an experiment file) is below 1e-9"
            ),
            "{e}"
        );
    }

    #[test]
    fn shape_laws_follow_the_machine() {
        let mesh: Topology = "mesh:16x8".parse().unwrap();
        let cube: Topology = "hypercube:6".parse().unwrap();
        let spec = WorkloadSpec::default();
        // Kim & Yoon uniform sides on 16x8: m = 8.5 · 4.5.
        assert!(matches!(spec.shapes(&mesh).unwrap(), ShapeDist::Mesh(_)));
        let w = spec.build(&mesh, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 8.5 * 4.5).abs() < 1e-12);
        // Mohapatra uniform dimensions 0..=5 on a 6-cube: m = 63/6.
        let w = spec.build(&cube, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 63.0 / 6.0).abs() < 1e-12);
        let cubic = WorkloadSpec {
            shapes: ShapeKind::Cubic,
            ..WorkloadSpec::default()
        };
        // Kang: exponents uniform in 0..=4 and 0..=3: m = (31/5)(15/4).
        let w = cubic.build(&mesh, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 31.0 / 5.0 * 15.0 / 4.0).abs() < 1e-12);
        let odd: Topology = "mesh:12x8".parse().unwrap();
        assert!(cubic.shapes(&odd).is_err());
        let wrong = WorkloadSpec {
            shapes: ShapeKind::Cube,
            ..WorkloadSpec::default()
        };
        assert!(wrong.shapes(&mesh).is_err());
    }
}
