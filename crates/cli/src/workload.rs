//! How a generated workload is described on the command line (the flags
//! of [`WorkloadArgs`], read into the one description every front end
//! shares, [`WorkloadOptions`]; an experiment file's `[workload]` table is
//! that type too) and the tool's words for a workload it cannot build.

use std::path::PathBuf;

use partalloc::topology::Topology;
use partalloc::workload::{
    CubeDimLaw, DemandLaw, Dependence, ShapeKind, ShapeMapping, SideLaw, Sides, SpecError,
    TraceFormat, TraceMapping, WorkloadError, WorkloadOptions,
};

use partalloc::workload::lublin::{LublinError, LublinSpec};

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

/// A flag taking one of `names`, parsed by the type's own `FromStr`: clap
/// lists the choices in the help, the library spells them.
pub(crate) fn choices<T>(
    names: impl IntoIterator<Item = &'static str>,
) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).try_map(|s| s.parse::<T>())
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
    pub(crate) fn spec(&self, jobs: u64, warmup: u64) -> WorkloadOptions {
        WorkloadOptions {
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
    /// Replay this trace instead of generating jobs.
    #[arg(long, conflicts_with = "load")]
    pub(crate) trace: Option<PathBuf>,
    /// What the trace is (swf, sacct or openb).
    #[arg(long, value_name = "FORMAT", default_value_t = TraceFormat::Swf, long_help = TraceFormat::help())]
    pub(crate) trace_format: TraceFormat,
    /// How trace processor counts become requests: shapes (subcubes, the
    /// most square box or the smallest catalogue shape) or nodes (plain
    /// counts, for non-contiguous allocation).
    #[arg(long, default_value_t = TraceMapping::Shapes, value_parser = choices::<TraceMapping>(TraceMapping::ALL.map(TraceMapping::name)))]
    pub(crate) mapping: TraceMapping,
    /// Skip malformed trace lines instead of stopping at the first.
    #[arg(long)]
    pub(crate) lenient: bool,
}

impl TraceArgs {
    /// The workload source the flags name: this trace, else the Lublin
    /// model (`--model`), else the laws of `workload` (`jobs` measured,
    /// 1,000 by default, after `warmup`).
    pub(crate) fn source(
        &self,
        model: Option<&LublinSpec>,
        workload: &WorkloadArgs,
        jobs: Option<u64>,
        warmup: u64,
    ) -> partalloc_experiment::WorkloadSource {
        use partalloc_experiment::experiment::{LublinSource, TraceSource, WorkloadSource};
        if let Some(path) = &self.trace {
            WorkloadSource::Trace(TraceSource {
                path: path.clone(),
                format: self.trace_format,
                mapping: self.mapping,
                lenient: self.lenient,
            })
        } else if let Some(model) = model {
            let mut source = LublinSource::new(model.clone());
            source.mapping = self.mapping;
            WorkloadSource::Lublin(source)
        } else {
            WorkloadSource::Generated {
                options: workload.spec(jobs.unwrap_or(1000), warmup),
                load: workload.load,
            }
        }
    }

    pub(crate) fn mapping(&self, topology: &Topology) -> ShapeMapping {
        self.mapping.on(topology)
    }

    /// Every job of the trace on `topology`, and the lines skipped (with
    /// `--lenient`; a sacct dump also drops jobs that never ran or do not
    /// fit).
    pub(crate) fn read_all(
        &self,
        path: &std::path::Path,
        topology: &Topology,
    ) -> Result<(Vec<partalloc::workload::Job>, u64), CliError> {
        match self.trace_format {
            TraceFormat::Sacct => crate::trace::read_sacct(path, topology, self.lenient),
            TraceFormat::Openb => Ok(partalloc_experiment::trace::read_openb(path, topology)?),
            _ => crate::trace::read_trace(path, self.mapping(topology), self.lenient)
                .map(|(jobs, _header, skipped)| (jobs, skipped)),
        }
    }
}

/// A workload model instead of the laws (`--model` of `simulate`, `show`
/// and `generate`): the Lublin–Feitelson model's text form, parsed once at
/// the edge (boxed: it holds every parameter of both classes).
pub(crate) fn parse_model(text: &str) -> Result<Box<LublinSpec>, LublinError> {
    text.parse().map(Box::new)
}

/// The help of `--model`.
pub(crate) const MODEL_HELP: &str = "A workload model instead of the laws above: the Lublin–Feitelson model, lublin[:mixed|batch|interactive|whole][:key=value…], e.g. lublin:batch:serial=0.3 (see docs/lublin.md)";

/// A workload error, with the flag to change for saturated loads.
pub(crate) fn workload_error(e: SpecError) -> CliError {
    match e {
        SpecError::Workload(WorkloadError::Saturated { load }) => CliError::input(format!(
            "offered load {} is at least 1: the queue grows without bound; use a load below 1, or --allow-saturation (allow_saturation = true in a sweep file)",
            partalloc::topology::echo_number(load)
        )),
        SpecError::Workload(WorkloadError::LoadTooSmall { load, min }) => CliError::input(format!(
            "offered load {load:e} is below {min:e}, the smallest accepted (rarer arrivals swallow the residence times); raise --load (loads in a sweep file)"
        )),
        other => CliError::input(format!("workload: {other}")),
    }
}

/// A workload error, as the tool words it.
impl From<SpecError> for CliError {
    fn from(e: SpecError) -> Self {
        workload_error(e)
    }
}

/// Checks the counts of a workload description.
pub(crate) fn check(spec: &WorkloadOptions) -> Result<(), CliError> {
    if spec.jobs == 0 {
        return Err(CliError::input("--jobs must be at least 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc::workload::{ShapeDist, ShapeDistribution};

    #[test]
    fn a_load_too_small_for_finite_arrival_times_names_the_flag() {
        let mesh: Topology = "mesh:8x8".parse().unwrap();
        let e = CliError::from(WorkloadOptions::default().build(&mesh, 1e-308).unwrap_err())
            .to_string();
        assert!(
            e.starts_with("offered load 1e-308 is below 1e-9") && e.contains("raise --load"),
            "{e}"
        );
    }

    #[test]
    fn shape_laws_follow_the_machine() {
        let mesh: Topology = "mesh:16x8".parse().unwrap();
        let cube: Topology = "hypercube:6".parse().unwrap();
        let spec = WorkloadOptions::default();
        // Kim & Yoon uniform sides on 16x8: m = 8.5 · 4.5.
        let shapes = |spec: &WorkloadOptions, t: &Topology| spec.shape_law(t).shapes(t);
        assert!(matches!(shapes(&spec, &mesh).unwrap(), ShapeDist::Mesh(_)));
        let w = spec.build(&mesh, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 8.5 * 4.5).abs() < 1e-12);
        // Mohapatra uniform dimensions 0..=5 on a 6-cube: m = 63/6.
        let w = spec.build(&cube, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 63.0 / 6.0).abs() < 1e-12);
        let cubic = WorkloadOptions {
            shapes: ShapeKind::Cubic,
            ..WorkloadOptions::default()
        };
        // Kang: exponents uniform in 0..=4 and 0..=3: m = (31/5)(15/4).
        let w = cubic.build(&mesh, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 31.0 / 5.0 * 15.0 / 4.0).abs() < 1e-12);
        let odd: Topology = "mesh:12x8".parse().unwrap();
        assert!(shapes(&cubic, &odd).is_err());
        let wrong = WorkloadOptions {
            shapes: ShapeKind::Cube,
            ..WorkloadOptions::default()
        };
        assert!(shapes(&wrong, &mesh).is_err());
    }
}
