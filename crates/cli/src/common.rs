//! What the subcommands share: errors, machine and workload parsing,
//! running replications, summarizing metrics and writing files atomically.

use std::fs;
use std::io::{self, BufReader, Write as _};
use std::path::{Path, PathBuf};

use partalloc::simkit::{
    ConfidenceInterval, Replications, Report, Results, SimConfig, Simulation, Stop,
};
use partalloc::topology::Topology;
use partalloc::workload::swf::{ShapeMapping, SwfError, SwfReader};
use partalloc::workload::{
    Constant, CubeDims, CubicShapes, DemandDist, Dependence, Exponential, HyperExponential, Job,
    MeshSides, NoncubicShapes, ShapeDist, SideLaw, UniformDemand, Workload, WorkloadError,
};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why a command failed. Every message is one line.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum CliError {
    /// Bad input from the command line or a file.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A trace line is malformed.
    #[error("{path}: {source}")]
    Swf {
        /// The trace.
        path: PathBuf,
        /// The cause, with line and field.
        source: SwfError,
    },
    /// A simulation failed.
    #[error(transparent)]
    Sim(#[from] partalloc::simkit::SimError),
    /// A sweep file could not be opened, extended or finished.
    #[error(transparent)]
    Sweep(#[from] partalloc::simkit::SweepError),
    /// A statistic failed.
    #[error(transparent)]
    Stats(#[from] partalloc::simkit::StatsError),
}

impl CliError {
    pub(crate) fn input(msg: impl Into<String>) -> Self {
        Self::Input(msg.into())
    }

    pub(crate) fn io(path: &Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn swf(path: &Path) -> impl FnOnce(SwfError) -> Self + '_ {
        move |source| Self::Swf {
            path: path.to_path_buf(),
            source,
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

/// Parses a machine description such as `mesh:64x64`.
pub(crate) fn parse_topology(text: &str) -> Result<Topology, CliError> {
    text.parse::<Topology>()
        .map_err(|e| CliError::input(format!("--topology {text:?}: {e}")))
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
    /// Residence (service) time law: `exp:MEAN`, `uniform:LO-HI`, `hyper:MEAN,ALPHA,CV`, `const:VALUE`.
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

/// `LO-HI` split at the first '-' that is neither a leading sign nor an
/// exponent's sign, so `1e-3-2e-3` is the range from 0.001 to 0.002.
fn split_range(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let mut prev = None;
    for (i, c) in t.char_indices() {
        if c == '-' && prev.is_some_and(|p: char| p != 'e' && p != 'E') {
            return Some((&t[..i], &t[i + 1..]));
        }
        prev = Some(c);
    }
    None
}

/// Parses a residence law (see [`WorkloadSpec::residence`]).
pub(crate) fn parse_residence(text: &str) -> Result<DemandDist, CliError> {
    let bad = |reason: &str| {
        CliError::input(format!(
            "--residence {text:?}: {reason}; use exp:MEAN, uniform:LO-HI, hyper:MEAN,ALPHA,CV or const:VALUE"
        ))
    };
    let (law, args) = text.split_once(':').ok_or_else(|| bad("missing ':'"))?;
    let w = |e: WorkloadError| CliError::input(format!("--residence {text:?}: {e}"));
    let what = &format!("--residence {text:?}");
    Ok(match law.trim() {
        "exp" | "exponential" => Exponential::new(parse_f64(what, args)?).map_err(w)?.into(),
        "uniform" => {
            let (lo, hi) = split_range(args).ok_or_else(|| {
                bad("uniform takes a range LO-HI of two numbers, e.g. uniform:0-2")
            })?;
            UniformDemand::new(parse_f64(what, lo)?, parse_f64(what, hi)?)
                .map_err(w)?
                .into()
        }
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
    // Only a warm-up that was applied is mentioned (`generate` has none).
    let warmup = if spec.warmup > 0 {
        format!(" after {} warm-up", spec.warmup)
    } else {
        String::new()
    };
    format!(
        "load {load}, {shapes}{max}, residence {} ({}), {} jobs{warmup}",
        spec.residence, spec.dependence, spec.jobs
    )
}

/// A machine with the strategy and policy to run on it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup<'a> {
    pub(crate) topology: &'a Topology,
    pub(crate) allocator: &'a str,
    pub(crate) scheduler: &'a str,
}

/// Runs the replications of a generated workload and returns their reports
/// in replication order.
pub(crate) fn run_generated(
    setup: Setup<'_>,
    workload: &Workload<ShapeDist, DemandDist>,
    spec: &WorkloadSpec,
    reps: Replications,
    time: Option<f64>,
    record_first: bool,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<Report>, CliError> {
    let Setup {
        topology,
        allocator,
        scheduler,
    } = setup;
    // Build once up front so that a bad name fails before any work.
    Simulation::by_name(
        *topology,
        allocator,
        scheduler,
        std::iter::empty::<Job>(),
        SimConfig::default(),
    )?;
    let reports = reps.try_run(|r, rng| {
        let config = SimConfig {
            stop: Stop {
                jobs: Some(spec.jobs),
                time,
            },
            warmup: spec.warmup,
            record_jobs: record_first && r == 0,
            measure_search_time: true,
        };
        let report =
            Simulation::by_name(*topology, allocator, scheduler, workload.jobs(rng), config)?.run();
        done();
        report
    })?;
    Ok(reports)
}

/// Reads a whole trace as jobs on `mapping`, with line-numbered errors.
pub(crate) fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<(Vec<Job>, partalloc::workload::swf::SwfHeader, u64), CliError> {
    let file = fs::File::open(path).map_err(CliError::io(path))?;
    let swf = |source| CliError::Swf {
        path: path.to_path_buf(),
        source,
    };
    let reader = SwfReader::new(BufReader::new(file))
        .map_err(swf)?
        .lenient(lenient);
    let header = reader.header().clone();
    let mut jobs = reader.jobs(mapping);
    let mut out = Vec::new();
    while let Some(j) = jobs.next() {
        match j {
            Ok(j) => out.push(j),
            Err(e) => {
                // Mapping and unusable-record errors name the job; add the line.
                let line = jobs.reader().line();
                return Err(match e {
                    e @ (SwfError::Unusable { .. } | SwfError::Mapping { .. }) => {
                        CliError::input(format!("{}: line {line}: {e}", path.display()))
                    }
                    e => swf(e),
                });
            }
        }
    }
    let skipped = jobs.reader().skipped();
    // Traces are sorted by submit time; make sure, keeping ties in file order.
    out.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok((out, header, skipped))
}

/// A metric of [`Results`] by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metric {
    pub(crate) name: &'static str,
    pub(crate) label: &'static str,
    pub(crate) get: fn(&Results) -> f64,
}

/// The deterministic metrics reported by every command, in output order.
pub(crate) const METRICS: &[Metric] = &[
    Metric {
        name: "mean_response",
        label: "mean response time",
        get: |r| r.mean_response,
    },
    Metric {
        name: "mean_wait",
        label: "mean waiting time",
        get: |r| r.mean_wait,
    },
    Metric {
        name: "mean_numerical_delay",
        label: "  numerical delay",
        get: |r| r.mean_numerical_delay,
    },
    Metric {
        name: "mean_topological_delay",
        label: "  topological delay",
        get: |r| r.mean_topological_delay,
    },
    Metric {
        name: "mean_service",
        label: "mean service time",
        get: |r| r.mean_service,
    },
    Metric {
        name: "utilization",
        label: "utilization",
        get: |r| r.utilization,
    },
    Metric {
        name: "useful_utilization",
        label: "useful utilization",
        get: |r| r.useful_utilization,
    },
    Metric {
        name: "miss_rate",
        label: "allocation miss rate",
        get: |r| r.miss_rate,
    },
    Metric {
        name: "mean_internal_fragmentation",
        label: "internal fragmentation",
        get: |r| r.mean_internal_fragmentation,
    },
    Metric {
        name: "mean_queue_length",
        label: "mean queue length",
        get: |r| r.mean_queue_length,
    },
    Metric {
        name: "throughput",
        label: "throughput",
        get: |r| r.throughput,
    },
    Metric {
        name: "completed",
        label: "completed jobs",
        get: |r| r.completed as f64,
    },
];

/// Looks a metric up by name.
pub(crate) fn metric(name: &str) -> Result<Metric, CliError> {
    METRICS
        .iter()
        .find(|m| m.name == name)
        .copied()
        .ok_or_else(|| {
            CliError::input(format!(
                "unknown metric {name:?}; known metrics: {}",
                METRICS
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// A metric over replications: mean and 95% half-width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub(crate) metric: &'static str,
    pub(crate) mean: f64,
    pub(crate) half_width: Option<f64>,
    pub(crate) n: u64,
}

/// Summarizes every metric over the reports.
pub(crate) fn summarize(reports: &[Report]) -> Result<Vec<Summary>, CliError> {
    METRICS
        .iter()
        .map(|m| {
            let xs: Vec<f64> = reports.iter().map(|r| (m.get)(&r.results)).collect();
            let ci = ConfidenceInterval::from_samples(&xs, 0.95)?;
            Ok(Summary {
                metric: m.name,
                mean: ci.mean,
                half_width: ci.half_width,
                n: ci.n,
            })
        })
        .collect()
}

/// Mean search time per job in microseconds over the reports (wall clock,
/// not deterministic).
pub(crate) fn search_time_us(reports: &[Report]) -> f64 {
    if reports.is_empty() {
        return 0.0;
    }
    let n = reports.len() as f64;
    reports
        .iter()
        .map(|r| r.search_time.mean_seconds_per_job)
        .sum::<f64>()
        / n
        * 1e6
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// renamed into place, so `path` never holds partial content.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| CliError::input(format!("{}: not a file name", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if let Err(source) = result {
        // Best effort: the temporary file is ours.
        let _ = fs::remove_file(&tmp);
        return Err(CliError::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(())
}

/// Output formats of the reporting commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Aligned text for the terminal.
    #[value(alias = "table")]
    Text,
    /// One JSON document.
    Json,
    /// CSV with a header line.
    Csv,
}

/// Formats `x` for a table: 6 significant digits, fixed or scientific.
pub(crate) fn num(x: f64) -> String {
    if x.abs() < 1e-9 {
        return "0".to_owned();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    if x == 0.0 || (1e-3..1e7).contains(&x.abs()) {
        let digits = if x == 0.0 {
            0
        } else {
            (5 - x.abs().log10().floor() as i32).clamp(0, 9) as usize
        };
        format!("{x:.digits$}")
    } else {
        format!("{x:.4e}")
    }
}

/// Writes a CSV document from rows of text.
pub(crate) fn csv_text(header: &[&str], rows: &[Vec<String>]) -> Result<String, CliError> {
    let err = |e: csv::Error| CliError::input(format!("cannot format CSV: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CliError::input(format!("cannot format CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| CliError::input(format!("cannot format CSV: {e}")))
}

/// `value` as one pretty-printed JSON document ending in a newline.
pub(crate) fn json_text<T: Serialize + ?Sized>(value: &T) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::input(format!("cannot format JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// Writes `text` to `output` (atomically) if given, else to standard output.
pub(crate) fn write_or_emit(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output {
        Some(path) => write_atomic(path, text.as_bytes()),
        None => emit(text),
    }
}

/// Writes `text` to standard output; a closed pipe (`| head`) is not an error.
pub(crate) fn emit(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::Io {
            path: PathBuf::from("<stdout>"),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc::workload::{MeanDistribution, ShapeDistribution};

    #[test]
    fn residence_laws_have_the_stated_means() {
        for (text, mean) in [
            ("exp:10", 10.0),
            ("uniform:2-6", 4.0),
            ("uniform:1e-3-3e-3", 2e-3),
            ("uniform: 0 - 1E2", 50.0),
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
            "uniform:5",
            "uniform:1e-3",
            "uniform:-1-2",
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

    #[test]
    fn numbers_print_compactly() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1e-17), "0");
        assert_eq!(num(2000.0), "2000");
        assert_eq!(num(972.3902), "972.390");
        assert_eq!(num(0.4661), "0.466100");
        assert_eq!(num(1.5e9 + 0.5), "1.5000e9");
    }

    #[test]
    fn atomic_writes_leave_only_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let bad = dir.path().join("missing/out.txt");
        assert!(write_atomic(&bad, b"x").is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
