//! How a generated workload is described on the command line and in an
//! experiment file, and how that description becomes a [`Workload`].

use std::path::PathBuf;

use partalloc::topology::Topology;
use partalloc::workload::swf::ShapeMapping;
use partalloc::workload::{
    Constant, CubeDims, CubicShapes, DemandDist, Dependence, Exponential, HyperExponential,
    MeshSides, NoncubicShapes, ShapeDist, SideLaw, UniformDemand, Workload, WorkloadError,
};
use serde::{Deserialize, Serialize};

use crate::error::CliError;

/// The workload options shared by `simulate` and `show`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct WorkloadArgs {
    /// Offered load ρ = λ·m·r/N of the generated workload (Kim–Yoon §IV.1).
    #[arg(long, default_value_t = 0.5, conflicts_with = "trace")]
    pub(crate) load: f64,
    /// Accept offered loads of 1 or more (the queue then grows without
    /// bound; for saturation studies).
    #[arg(long)]
    pub(crate) allow_saturation: bool,
    /// Shape law: auto (cube on hypercubes, sides on meshes and tori),
    /// sides (Kim–Yoon §IV.1), cubic (Kang §5.1), noncubic (Kang §5.3) or
    /// cube (Mohapatra §4.1).
    #[arg(long, default_value = "auto")]
    pub(crate) shapes: String,
    /// Law of each side for `sides` shapes: uniform, normal or exponential.
    #[arg(long, default_value = "uniform")]
    pub(crate) sides: String,
    /// Largest request for sides/cubic/noncubic shapes, e.g. 16x16
    /// (default: the whole machine).
    #[arg(long)]
    pub(crate) max_sides: Option<String>,
    /// Subcube dimension law for `cube` shapes: uniform (0..n−1),
    /// uniform:LO-HI, normal (Mohapatra's table), or weights w0,w1,….
    #[arg(long, default_value = "uniform")]
    pub(crate) cube_dims: String,
    /// Residence time law: exp:MEAN, uniform:MEAN, uniform:LO-HI,
    /// hyper:MEAN,ALPHA,CV or const:VALUE.
    #[arg(long, default_value = "exp:1")]
    pub(crate) residence: String,
    /// Size/demand model: dependent or independent (Mohapatra §4.1).
    #[arg(long, default_value = "dependent")]
    pub(crate) dependence: String,
    /// Jobs measured per seed (generated workload; default 1000), or the
    /// first jobs of the trace (default: all).
    #[arg(long)]
    pub(crate) jobs: Option<u64>,
    /// Completed jobs discarded before measuring.
    #[arg(long, default_value_t = 0)]
    pub(crate) warmup: u64,
    /// Replay this Standard Workload Format trace instead of generating jobs.
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// How trace processor counts become requests: shapes (subcubes or the
    /// most square box) or nodes (plain counts, for non-contiguous
    /// allocation).
    #[arg(long, default_value = "shapes", value_parser = ["shapes", "nodes"])]
    pub(crate) mapping: String,
    /// Skip malformed trace lines instead of stopping at the first.
    #[arg(long)]
    pub(crate) lenient: bool,
}

impl WorkloadArgs {
    pub(crate) fn spec(&self) -> WorkloadSpec {
        WorkloadSpec {
            shapes: self.shapes.clone(),
            sides: self.sides.clone(),
            max_sides: self.max_sides.clone(),
            cube_dims: self.cube_dims.clone(),
            residence: self.residence.clone(),
            dependence: self.dependence.clone(),
            jobs: self.jobs.unwrap_or(1000),
            warmup: self.warmup,
            allow_saturation: self.allow_saturation,
        }
    }

    pub(crate) fn mapping(&self, topology: &Topology) -> ShapeMapping {
        if self.mapping == "nodes" {
            ShapeMapping::nodes_of(topology)
        } else {
            ShapeMapping::for_topology(topology)
        }
    }
}

/// A workload error, with the flag to change for saturated loads.
pub(crate) fn workload_error(e: WorkloadError) -> CliError {
    match e {
        WorkloadError::Saturated { load } => CliError::input(format!(
            "offered load {load} is at least 1: no strategy can keep up and the queue grows without bound; use a load below 1, or pass --allow-saturation (allow_saturation = true in an experiment file) for a saturation study"
        )),
        other => CliError::input(format!("workload: {other}")),
    }
}

/// How a generated workload is described, on the command line or in an
/// experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct WorkloadSpec {
    /// `auto`, `sides`, `cubic`, `noncubic` or `cube`.
    pub(crate) shapes: String,
    /// Law of the sides for `sides` shapes: `uniform`, `normal`, `exponential`.
    pub(crate) sides: String,
    /// Largest request, e.g. `16x16` (sides/noncubic/cubic; default: the machine).
    pub(crate) max_sides: Option<String>,
    /// Cube dimension law for `cube` shapes: `uniform`, `uniform:LO-HI`,
    /// `normal`, or weights `w0,w1,…`.
    pub(crate) cube_dims: String,
    /// Residence (service) time law: `exp:MEAN`, `uniform:MEAN`,
    /// `uniform:LO-HI`, `hyper:MEAN,ALPHA,CV`, `const:VALUE`.
    pub(crate) residence: String,
    /// `dependent` or `independent` (Mohapatra §4.1).
    pub(crate) dependence: String,
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
            shapes: "auto".into(),
            sides: "uniform".into(),
            max_sides: None,
            cube_dims: "uniform".into(),
            residence: "exp:1".into(),
            dependence: "dependent".into(),
            jobs: 1000,
            warmup: 0,
            allow_saturation: false,
        }
    }
}

fn parse_f64(what: &str, t: &str) -> Result<f64, CliError> {
    t.trim()
        .parse::<f64>()
        .map_err(|_| CliError::input(format!("{what}: {t:?} is not a number")))
}

fn parse_sides(what: &str, t: &str) -> Result<Vec<u32>, CliError> {
    t.split(['x', 'X', '×'])
        .map(|s| {
            s.trim().parse::<u32>().map_err(|_| {
                CliError::input(format!("{what}: {s:?} in {t:?} is not a whole number"))
            })
        })
        .collect()
}

/// Parses a residence law (see [`WorkloadSpec::residence`]).
pub(crate) fn parse_residence(text: &str) -> Result<DemandDist, CliError> {
    let bad = |reason: &str| {
        CliError::input(format!(
            "--residence {text:?}: {reason}; use exp:MEAN, uniform:MEAN, uniform:LO-HI, hyper:MEAN,ALPHA,CV or const:VALUE"
        ))
    };
    let (law, args) = text.split_once(':').ok_or_else(|| bad("missing ':'"))?;
    let w = |e: WorkloadError| CliError::input(format!("--residence {text:?}: {e}"));
    let what = &format!("--residence {text:?}");
    Ok(match law.trim() {
        "exp" | "exponential" => Exponential::new(parse_f64(what, args)?).map_err(w)?.into(),
        "uniform" => match args.split_once('-') {
            Some((lo, hi)) => UniformDemand::new(parse_f64(what, lo)?, parse_f64(what, hi)?)
                .map_err(w)?
                .into(),
            None => UniformDemand::with_mean(parse_f64(what, args)?)
                .map_err(w)?
                .into(),
        },
        "hyper" | "hyperexp" => {
            let v: Vec<&str> = args.split(',').collect();
            let [m, a, c] = v.as_slice() else {
                return Err(bad("hyper takes three values MEAN,ALPHA,CV"));
            };
            HyperExponential::new(
                parse_f64(what, m)?,
                parse_f64(what, a)?,
                parse_f64(what, c)?,
            )
            .map_err(w)?
            .into()
        }
        "const" | "constant" => Constant::new(parse_f64(what, args)?).map_err(w)?.into(),
        other => return Err(bad(&format!("unknown law {other:?}"))),
    })
}

fn parse_dependence(text: &str) -> Result<Dependence, CliError> {
    match text {
        "dependent" => Ok(Dependence::Dependent),
        "independent" => Ok(Dependence::Independent),
        other => Err(CliError::input(format!(
            "--dependence {other:?}: known models: dependent, independent"
        ))),
    }
}

fn parse_side_law(text: &str) -> Result<SideLaw, CliError> {
    match text {
        "uniform" => Ok(SideLaw::Uniform),
        "normal" => Ok(SideLaw::TruncatedNormal),
        "exponential" | "exp" => Ok(SideLaw::TruncatedExponential),
        other => Err(CliError::input(format!(
            "--sides {other:?}: known laws: uniform, normal, exponential"
        ))),
    }
}

fn parse_cube_dims(text: &str, machine_dim: u32) -> Result<CubeDims, CliError> {
    let w = |e: WorkloadError| CliError::input(format!("--cube-dims {text:?}: {e}"));
    let dims = match text {
        "uniform" => CubeDims::uniform(0, machine_dim.saturating_sub(1)).map_err(w)?,
        "normal" => CubeDims::mohapatra_normal(),
        t if t.starts_with("uniform:") => {
            let r = &t["uniform:".len()..];
            let (lo, hi) = r.split_once('-').ok_or_else(|| {
                CliError::input(format!("--cube-dims {text:?}: expected uniform:LO-HI"))
            })?;
            let num = |s: &str| {
                s.trim().parse::<u32>().map_err(|_| {
                    CliError::input(format!("--cube-dims {text:?}: {s:?} is not a whole number"))
                })
            };
            CubeDims::uniform(num(lo)?, num(hi)?).map_err(w)?
        }
        t => {
            let weights = t
                .split(',')
                .map(|s| parse_f64("--cube-dims", s))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| {
                    CliError::input(format!(
                        "--cube-dims {text:?}: use uniform, uniform:LO-HI, normal, or weights w0,w1,…"
                    ))
                })?;
            CubeDims::from_weights(&weights).map_err(w)?
        }
    };
    if dims.max_dim() > machine_dim {
        return Err(CliError::input(format!(
            "--cube-dims {text:?}: requests of dimension up to {} are larger than the machine's {machine_dim}-cube",
            dims.max_dim()
        )));
    }
    Ok(dims)
}

impl WorkloadSpec {
    /// The shape distribution on `topology`.
    pub(crate) fn shapes(&self, topology: &Topology) -> Result<ShapeDist, CliError> {
        let kind = match self.shapes.as_str() {
            "auto" if topology.as_hypercube().is_some() => "cube",
            "auto" => "sides",
            k @ ("sides" | "cubic" | "noncubic" | "cube") => k,
            other => {
                return Err(CliError::input(format!(
                    "--shapes {other:?}: known shape laws: auto, sides, cubic, noncubic, cube"
                )));
            }
        };
        let w = |e: WorkloadError| CliError::input(format!("--shapes {kind}: {e}"));
        if kind == "cube" {
            let Some(h) = topology.as_hypercube() else {
                return Err(CliError::input(format!(
                    "--shapes cube draws subcubes and needs a hypercube, not {topology}; use sides, cubic or noncubic"
                )));
            };
            return Ok(parse_cube_dims(&self.cube_dims, h.dim())?.into());
        }
        let Some(grid) = topology.as_grid() else {
            return Err(CliError::input(format!(
                "--shapes {kind} draws boxes and needs a mesh or torus, not {topology}; use cube"
            )));
        };
        let machine: Vec<u32> = grid.sides().iter().copied().collect();
        let max = match &self.max_sides {
            None => machine.clone(),
            Some(t) => {
                let m = parse_sides("--max-sides", t)?;
                if m.len() != machine.len() {
                    return Err(CliError::input(format!(
                        "--max-sides {t:?} has {} dimensions, the machine {topology} has {}",
                        m.len(),
                        machine.len()
                    )));
                }
                if m.iter().zip(&machine).any(|(a, b)| a > b) {
                    return Err(CliError::input(format!(
                        "--max-sides {t:?}: requests would be larger than the machine {topology}"
                    )));
                }
                m
            }
        };
        Ok(match kind {
            "sides" => MeshSides::new(parse_side_law(&self.sides)?, &max)
                .map_err(w)?
                .into(),
            "noncubic" => NoncubicShapes::new(&max).map_err(w)?.into(),
            _ => {
                let exps = max
                    .iter()
                    .map(|&s| {
                        if s.is_power_of_two() {
                            Ok(s.trailing_zeros())
                        } else {
                            Err(CliError::input(format!(
                                "--shapes cubic draws power-of-two sides and needs power-of-two limits; {s} is not one (set --max-sides)"
                            )))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                CubicShapes::new(&exps).map_err(w)?.into()
            }
        })
    }

    /// The workload at offered load `load` on `topology`.
    pub(crate) fn build(
        &self,
        topology: &Topology,
        load: f64,
    ) -> Result<Workload<ShapeDist, DemandDist>, CliError> {
        let shapes = self.shapes(topology)?;
        let demand = parse_residence(&self.residence)?;
        let dep = parse_dependence(&self.dependence)?;
        let n = topology.num_nodes() as u64;
        let w = if self.allow_saturation {
            Workload::with_saturating_load(load, n, shapes, demand, dep)
        } else {
            Workload::with_load(load, n, shapes, demand, dep)
        };
        w.map_err(workload_error)
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
    let shapes = match spec.shapes.as_str() {
        "auto" if topology.as_hypercube().is_some() => format!("cube dims {}", spec.cube_dims),
        "auto" | "sides" => format!("sides {}", spec.sides),
        "cube" => format!("cube dims {}", spec.cube_dims),
        other => other.to_owned(),
    };
    let max = spec
        .max_sides
        .as_ref()
        .map(|m| format!(" up to {m}"))
        .unwrap_or_default();
    format!(
        "load {load}, {shapes}{max}, residence {} ({}), {} jobs after {} warm-up",
        spec.residence, spec.dependence, spec.jobs, spec.warmup
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc::workload::{MeanDistribution, ShapeDistribution};

    #[test]
    fn residence_laws_have_the_stated_means() {
        for (text, mean) in [
            ("exp:10", 10.0),
            ("uniform:5", 5.0),
            ("uniform:2-6", 4.0),
            ("hyper:5,0.95,4", 5.0),
            ("const:3", 3.0),
        ] {
            let d = parse_residence(text).unwrap();
            assert!((d.mean() - mean).abs() < 1e-12, "{text}: {}", d.mean());
        }
        for bad in [
            "exp",
            "exp:x",
            "exp:-1",
            "gamma:2",
            "hyper:5,0.95",
            "uniform:6-2",
        ] {
            let e = parse_residence(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--residence {bad:?}")), "{e}");
        }
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
            shapes: "cubic".into(),
            ..WorkloadSpec::default()
        };
        // Kang: exponents uniform in 0..=4 and 0..=3: m = (31/5)(15/4).
        let w = cubic.build(&mesh, 0.5).unwrap();
        assert!((w.shapes().mean_nodes() - 31.0 / 5.0 * 15.0 / 4.0).abs() < 1e-12);
        let odd: Topology = "mesh:12x8".parse().unwrap();
        assert!(cubic.shapes(&odd).is_err());
        let wrong = WorkloadSpec {
            shapes: "cube".into(),
            ..WorkloadSpec::default()
        };
        assert!(wrong.shapes(&mesh).is_err());
    }
}
