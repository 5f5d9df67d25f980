//! `partalloc sweep`: a grid of simulations from a TOML experiment file.
//!
//! The grid is topology × allocator × scheduler × load, every point run as
//! `seeds` replications. Each finished point is appended at once to
//! `<output>.partial` (simkit's [`Sweep`]); the final CSV is written in the
//! declared order only when every point is done, so an interrupted sweep
//! rerun with the same file gives the same bytes as an uninterrupted one.
//! Only deterministic metrics go into the file (no wall-clock search time),
//! and every row carries a fingerprint of the shared settings, so rows
//! computed under other settings are refused rather than resumed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use partalloc::allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc::schedulers::registry::{POLICIES, PolicySpec};
use partalloc::simkit::plot::{Chart, Series, render_svg};
use partalloc::simkit::{
    MeasureSet, Report, SimConfig, Simulation, SlowdownBound, SlowdownBoundError, Sweep, SweepError,
};
use partalloc::topology::Topology;
use rayon::prelude::*;
use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Serialize, Serializer};

use crate::error::CliError;
use crate::metrics::{Summary, metric, reported, summarize};
use crate::output::{emit, write_atomic};
use crate::run::{Setup, parse_topology};
use crate::shard::{self, ClusterArgs, SweepCommand};
use partalloc::workload::{Job, ShapeMapping, TraceFormat, TraceMapping, WorkloadOptions};
use partalloc_experiment::experiment::{LublinSource, Prepared, RunLength, WorkloadSource};

/// Options of `partalloc sweep`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct Args {
    /// Other actions on sweeps.
    #[command(subcommand)]
    action: Option<SweepCommand>,
    /// The experiment file (TOML; see docs/guide.md and examples/).
    #[arg(required = true)]
    experiment: Option<PathBuf>,
    /// Where to write the CSV (default: the file's `output`, else
    /// `<experiment name>.csv` in the current directory).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Compute at most this many pending points, then stop without
    /// finishing (run again to continue).
    #[arg(long)]
    limit: Option<usize>,
    /// Do not draw progress bars.
    #[arg(long, short)]
    quiet: bool,
    /// Do not write SVG charts.
    #[arg(long)]
    no_plots: bool,
    /// Also write an HTML page of the points side by side (each point's
    /// first replication: its jobs on the machine, over time, and the
    /// distributions on shared axes), one self-contained file.
    #[arg(long, value_name = "FILE.html", conflicts_with_all = ["shard", "emit_slurm"])]
    report: Option<PathBuf>,
    /// Shards and Slurm job arrays (see docs/cluster.md).
    #[command(flatten)]
    cluster: ClusterArgs,
}

fn default_seed() -> u64 {
    1
}
impl Experiment {
    /// Replications per point: as given, else 5 (a trace runs once).
    fn seeds(&self) -> u64 {
        self.seeds.unwrap_or(if self.trace.is_some() {
            1
        } else {
            default_seeds()
        })
    }
}

fn default_seeds() -> u64 {
    5
}
fn default_schedulers() -> Vec<String> {
    vec!["fcfs".to_owned()]
}

/// The experiment file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Experiment {
    /// The CSV file to write.
    #[serde(default)]
    output: Option<PathBuf>,
    /// Master seed.
    #[serde(default = "default_seed")]
    seed: u64,
    /// Replications per point.
    #[serde(default)]
    seeds: Option<u64>,
    /// Machines.
    topologies: Vec<String>,
    /// Allocation strategies.
    allocators: Vec<String>,
    /// Scheduling policies.
    #[serde(default = "default_schedulers")]
    schedulers: Vec<String>,
    /// Offered loads.
    loads: Vec<f64>,
    /// The workload at every point.
    #[serde(default)]
    workload: WorkloadOptions,
    /// A recorded trace to run at every point instead of a generated
    /// workload, its submits scaled to each of `loads`.
    #[serde(default)]
    trace: Option<PathBuf>,
    /// The trace's path as read: relative to the experiment file's
    /// directory when the file gives a relative one.
    #[serde(skip)]
    trace_path: Option<PathBuf>,
    /// The Lublin–Feitelson model to draw every point's jobs from instead
    /// of the laws (`lublin[:KIND][:key=value…]`): replication r draws the
    /// `[workload]` table's `jobs` from stream r, their submits scaled to
    /// each of `loads` as a trace's are.
    #[serde(default)]
    model: Option<String>,
    /// What the trace is: `swf` (default), `sacct` or `openb`.
    #[serde(default)]
    trace_format: Option<String>,
    /// How an SWF trace's processor counts become requests: `shapes`
    /// (default: the machine's own shapes) or `nodes`.
    #[serde(default)]
    mapping: Option<String>,
    /// The run-time model at every point (`sst:A[B,C]` or `linear:K`;
    /// none by default).
    #[serde(default)]
    runtime_model: Option<String>,
    /// The threshold τ of the bounded slowdown (10 by default).
    #[serde(default)]
    slowdown_bound: Option<f64>,
    /// The measures beyond the basic ones (`auto`, the machine's own, by
    /// default; `none`; or names such as `dispersal,slurm`).
    #[serde(default)]
    measures: Option<String>,
    /// Charts.
    #[serde(default)]
    plot: PlotSpec,
}

/// Which charts to draw.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct PlotSpec {
    /// Metrics to chart against the load, one chart per machine and policy.
    metrics: Vec<String>,
    /// Upper limit of the y axis.
    y_max: Option<f64>,
    /// One line per `allocator` (charts per machine and policy) or per
    /// `scheduler` (charts per machine and allocator).
    series: String,
}

impl Default for PlotSpec {
    fn default() -> Self {
        Self {
            metrics: vec!["mean_response".to_owned()],
            y_max: None,
            series: "allocator".to_owned(),
        }
    }
}

/// One point of the grid; its fields are the first CSV columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Point {
    topology: String,
    allocator: String,
    scheduler: String,
    load: f64,
    /// Fingerprint of everything else that decides the results (see
    /// [`settings`]), so that a file computed under other settings is
    /// refused rather than resumed.
    settings: String,
}

/// A fingerprint of the settings shared by every point (seed, seeds and
/// workload): 64-bit FNV-1a of their JSON form, as 16 hex digits. Stable
/// across runs, platforms and compiler versions.
fn settings(exp: &Experiment) -> Result<String, CliError> {
    // Without a model the fingerprint is the one files written before
    // models existed carry.
    // Nor does the default slowdown bound change it.
    let bound = exp
        .slowdown_bound
        .filter(|&b| b != SlowdownBound::default().seconds());
    // Nor the default measures; a trace is part of it, and a model.
    let json = match (&exp.runtime_model, bound, &exp.measures) {
        _ if exp.model.is_some() => serde_json::to_string(&(
            exp.seed,
            exp.seeds(),
            &exp.runtime_model,
            bound,
            &exp.measures,
            &exp.model,
            &exp.mapping,
            exp.workload.jobs,
            exp.workload.warmup,
        )),
        _ if exp.trace.is_some() => serde_json::to_string(&(
            exp.seed,
            exp.seeds(),
            &exp.runtime_model,
            bound,
            &exp.measures,
            &exp.trace,
            &exp.trace_format,
            &exp.mapping,
        )),
        (None, None, None) => serde_json::to_string(&(exp.seed, exp.seeds(), &exp.workload)),
        (Some(m), None, None) => serde_json::to_string(&(exp.seed, exp.seeds(), &exp.workload, m)),
        (m, Some(b), None) => serde_json::to_string(&(exp.seed, exp.seeds(), &exp.workload, m, b)),
        (m, b, Some(ms)) => {
            serde_json::to_string(&(exp.seed, exp.seeds(), &exp.workload, m, b, ms))
        }
    }
    .map_err(|e| CliError::input(format!("cannot fingerprint the settings: {e}")))?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in json.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(format!("{h:016x}"))
}

/// The result columns: the replications, then every metric of
/// metric [`reported`] as its mean and 95% half-width, in that table's order, so
/// the columns follow the table rather than a copy of it.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    seeds: u64,
    /// One per [`reported`] metric, in order; `None` for a quantity the
    /// point's runs did not measure (its cells are left empty).
    summaries: Vec<Option<Summary>>,
}

impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("Row", 1 + 2 * self.summaries.len())?;
        row.serialize_field("seeds", &self.seeds)?;
        for (m, s) in reported().zip(&self.summaries) {
            row.serialize_field(m.name, &s.map(|s| s.mean))?;
            row.serialize_field(m.half_width_name, &s.and_then(|s| s.half_width))?;
        }
        row.end()
    }
}

fn row(reports: &[Report], seeds: u64) -> Result<Row, CliError> {
    let measured = |name: &str| {
        reports
            .first()
            .is_some_and(|r| r.results.was_measured(name))
    };
    Ok(Row {
        seeds,
        summaries: summarize(reports)?
            .into_iter()
            .map(|s| measured(s.metric).then_some(s))
            .collect(),
    })
}

/// Reads and checks an experiment file.
pub(crate) fn load_experiment(path: &Path) -> Result<Experiment, CliError> {
    let text = crate::limits::read_text(path, crate::limits::FileKind::Config)?;
    let mut exp = parse_experiment(&text, path)?;
    exp.trace_path = exp.trace.as_ref().map(|t| match path.parent() {
        Some(dir) if t.is_relative() => dir.join(t),
        _ => t.clone(),
    });
    Ok(exp)
}

/// Parses and checks the text of an experiment file read from `path`.
pub(crate) fn parse_experiment(text: &str, path: &Path) -> Result<Experiment, CliError> {
    let exp: Experiment = toml::from_str(text).map_err(|e| {
        CliError::input(format!(
            "{}: {}",
            crate::error::shown(path),
            partalloc_experiment::machine::toml_error(text, &e)
        ))
    })?;

    let ctx = |msg: String| CliError::input(format!("{}: {msg}", crate::error::shown(path)));
    for (name, len) in [
        ("topologies", exp.topologies.len()),
        ("allocators", exp.allocators.len()),
        ("schedulers", exp.schedulers.len()),
        ("loads", exp.loads.len()),
    ] {
        if len == 0 {
            return Err(ctx(format!("{name} is empty; list at least one")));
        }
    }
    if exp.seeds() == 0 {
        return Err(ctx("seeds must be at least 1".to_owned()));
    }
    crate::limits::check_count("seeds", exp.seeds(), crate::limits::MAX_SEEDS)
        .map_err(|e| ctx(e.to_string()))?;
    crate::workload::check(&exp.workload).map_err(|e| ctx(e.to_string()))?;
    if let Some(m) = &exp.runtime_model {
        m.parse::<partalloc::simkit::RuntimeModel>()
            .map_err(|e| ctx(format!("runtime_model: {e}")))?;
    }
    slowdown_bound(&exp).map_err(|e| ctx(format!("slowdown_bound: {e}")))?;
    measures(&exp).map_err(|e| ctx(format!("measures: {e}")))?;
    trace_settings(&exp).map_err(ctx)?;
    if let Some(m) = &exp.model {
        crate::workload::parse_model(m).map_err(|e| ctx(format!("model: {e}")))?;
        crate::limits::check_count("jobs", exp.workload.jobs, crate::limits::MAX_GENERATED_JOBS)
            .map_err(|e| ctx(e.to_string()))?;
    }
    for m in &exp.plot.metrics {
        metric(m).map_err(|e| ctx(format!("plot: {e}")))?;
    }
    if !matches!(exp.plot.series.as_str(), "allocator" | "scheduler") {
        return Err(ctx(format!(
            "plot: series {:?} must be \"allocator\" or \"scheduler\"",
            partalloc::topology::echo(&exp.plot.series)
        )));
    }
    Ok(exp)
}

/// The trace's format and mapping, checked against the rest of the file.
fn trace_settings(exp: &Experiment) -> Result<(TraceFormat, bool), String> {
    let format = exp
        .trace_format
        .as_deref()
        .map_or(Ok(TraceFormat::Swf), str::parse)
        .map_err(|e| format!("trace_format: {e}"))?;
    let nodes = exp
        .mapping
        .as_deref()
        .map_or(Ok(TraceMapping::Shapes), str::parse)
        .map_err(|e: partalloc::workload::UnknownMapping| e.to_string())?
        == TraceMapping::Nodes;
    if exp.model.is_some() {
        if exp.trace.is_some() {
            return Err("model and trace both give the jobs: keep one of them".to_owned());
        }
        if exp.trace_format.is_some() {
            return Err("trace_format applies to a trace; remove it".to_owned());
        }
        let laws = WorkloadOptions {
            jobs: exp.workload.jobs,
            warmup: exp.workload.warmup,
            ..WorkloadOptions::default()
        };
        if exp.workload != laws {
            return Err(
                "a model gives the jobs: keep only jobs and warmup in the [workload] table"
                    .to_owned(),
            );
        }
        return Ok((format, nodes));
    }
    if exp.trace.is_none() {
        if exp.trace_format.is_some() || exp.mapping.is_some() {
            return Err(
                "trace_format and mapping apply to a trace; add trace = \"FILE\"".to_owned(),
            );
        }
        return Ok((format, nodes));
    }
    if exp.seeds() != 1 {
        return Err(format!(
            "seeds = {}: a trace runs once per point; remove seeds (or set it to 1)",
            exp.seeds()
        ));
    }
    if exp.workload != WorkloadOptions::default() {
        return Err("a trace gives the jobs: remove the [workload] table".to_owned());
    }
    Ok((format, nodes))
}

/// A trace's jobs on one machine, and the offered load of their requests
/// as recorded (Σ nodes · service / (N · span)).
#[derive(Debug)]
struct TraceOn {
    jobs: Vec<Job>,
    first: f64,
    load: f64,
}

impl TraceOn {
    /// The jobs with their submits scaled so that the requests offer
    /// `load` (gaps from the first submit divided by `load` over the
    /// recorded load).
    fn at_load(&self, load: f64) -> impl Iterator<Item = Job> + '_ {
        let scale = load / self.load;
        self.jobs
            .iter()
            .map(move |j| j.with_arrival(self.first + (j.arrival - self.first) / scale))
    }
}

/// Reads the experiment's trace for `topology`.
fn trace_on(exp: &Experiment, path: &Path, topology: &Topology) -> Result<TraceOn, CliError> {
    let (format, nodes) = trace_settings(exp).map_err(CliError::input)?;
    let mapping = if nodes {
        ShapeMapping::nodes_of(topology)
    } else {
        ShapeMapping::for_topology(topology)
    };
    let (jobs, _) = partalloc_experiment::trace::read_jobs(path, format, topology, mapping, false)?;
    if jobs.is_empty() {
        return Err(CliError::input(format!(
            "{}: the trace has no usable job on {topology}",
            crate::error::shown(path)
        )));
    }
    trace_of(jobs, topology)
        .map_err(|e| CliError::input(format!("{}: {e}", crate::error::shown(path))))
}

/// Jobs (at least one) with the offered load of their requests as
/// recorded on `topology`.
fn trace_of(jobs: Vec<Job>, topology: &Topology) -> Result<TraceOn, String> {
    let (Some(first), Some(last)) = (jobs.first(), jobs.last()) else {
        return Err("no job".to_owned());
    };
    let (first, span) = (first.arrival, last.arrival - first.arrival);
    if span <= 0.0 {
        return Err(
            "every job is submitted at the same time; the offered load is undefined".to_owned(),
        );
    }
    let work: f64 = jobs.iter().map(|j| j.nodes() as f64 * j.service).sum();
    let load = work / (topology.num_nodes() as f64 * span);
    Ok(TraceOn { jobs, first, load })
}

/// The experiment's measures (`auto` without `measures`).
fn measures(exp: &Experiment) -> Result<MeasureSet, partalloc::simkit::measure::UnknownMeasure> {
    exp.measures
        .as_deref()
        .map_or(Ok(MeasureSet::AUTO), str::parse)
}

/// The experiment's slowdown bound (10 without `slowdown_bound`).
fn slowdown_bound(exp: &Experiment) -> Result<SlowdownBound, SlowdownBoundError> {
    exp.slowdown_bound
        .map_or(Ok(SlowdownBound::default()), SlowdownBound::new)
}

/// An experiment's machines, strategies and policies, each parsed once
/// and checked on every machine.
#[derive(Debug)]
pub(crate) struct Validated {
    topologies: Vec<Topology>,
    /// One per `allocators` entry, in order.
    allocators: Vec<AllocatorSpec>,
    /// One per `schedulers` entry, in order.
    schedulers: Vec<PolicySpec>,
    /// The run-time model, if the experiment names one.
    runtime_model: Option<partalloc::simkit::RuntimeModel>,
    /// The threshold of the bounded slowdown.
    slowdown_bound: SlowdownBound,
    /// The measures every run takes.
    measures: MeasureSet,
    /// The trace on each machine (in `topologies` order), if the
    /// experiment runs one.
    traces: Vec<TraceOn>,
    /// The model checked on each machine (in `topologies` order), if the
    /// experiment draws from one.
    models: Vec<Prepared>,
}

/// Checks every combination before any work: names, machines, loads.
pub(crate) fn validate(exp: &Experiment) -> Result<Validated, CliError> {
    let allocators: Vec<_> = exp.allocators.iter().map(|a| ALLOCATORS.spec(a)).collect();
    let schedulers: Vec<_> = exp.schedulers.iter().map(|s| POLICIES.spec(s)).collect();
    let measures = measures(exp).map_err(|e| CliError::input(format!("measures: {e}")))?;
    let mut topologies = Vec::new();
    let mut traces = Vec::new();
    let mut models = Vec::new();
    for t in &exp.topologies {
        let topo = crate::limits::machine("sweep", t)?;
        measures
            .resolve(&topo)
            .map_err(|e| CliError::input(format!("measures: {e}")))?;
        for (a, spec) in exp.allocators.iter().zip(&allocators) {
            spec.as_ref()
                .map_err(Clone::clone)
                .and_then(|spec| spec.build(&topo))
                .map_err(|e| {
                    CliError::input(format!(
                        "allocator {:?} on {topo}: {e}",
                        partalloc::topology::echo(a)
                    ))
                })?;
        }
        for (s, spec) in exp.schedulers.iter().zip(&schedulers) {
            spec.as_ref()
                .map_err(Clone::clone)
                .and_then(|spec| spec.build(&topo))
                .map_err(|e| {
                    CliError::input(format!(
                        "scheduler {:?} on {topo}: {e}",
                        partalloc::topology::echo(s)
                    ))
                })?;
        }
        if let Some(path) = exp.trace_path.as_ref().or(exp.trace.as_ref()) {
            traces.push(trace_on(exp, path, &topo)?);
        } else if let Some(model) = &exp.model {
            models.push(model_on(exp, model, (t, &topo), &allocators, &schedulers)?);
        } else {
            for &l in &exp.loads {
                exp.workload.build(&topo, l).map_err(|e| {
                    CliError::input(format!(
                        "{topo}, load {}: {}",
                        partalloc::topology::echo_number(l),
                        CliError::from(e)
                    ))
                })?;
            }
        }
        topologies.push(topo);
    }
    // Every spec was built on the first machine above (there is one), so
    // none is an error here.
    let allocators = allocators
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::input(e.to_string()))?;
    let schedulers = schedulers
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::input(e.to_string()))?;
    let runtime_model = exp
        .runtime_model
        .as_deref()
        .map(str::parse::<partalloc::simkit::RuntimeModel>)
        .transpose()
        .map_err(|e| CliError::input(format!("runtime_model: {e}")))?;
    let slowdown_bound =
        slowdown_bound(exp).map_err(|e| CliError::input(format!("slowdown_bound: {e}")))?;
    Ok(Validated {
        topologies,
        allocators,
        schedulers,
        runtime_model,
        slowdown_bound,
        measures,
        traces,
        models,
    })
}

/// The experiment's model on `topology`, checked there (with the first
/// strategy and policy, which were built there already).
fn model_on(
    exp: &Experiment,
    model: &str,
    (named, topology): (&str, &Topology),
    allocators: &[Result<AllocatorSpec, partalloc::allocators::BuildError>],
    schedulers: &[Result<PolicySpec, partalloc::schedulers::PolicyBuildError>],
) -> Result<Prepared, CliError> {
    let spec =
        crate::workload::parse_model(model).map_err(|e| CliError::input(format!("model: {e}")))?;
    let (_, nodes) = trace_settings(exp).map_err(CliError::input)?;
    let mut source = LublinSource::new(*spec);
    if nodes {
        source.mapping = TraceMapping::Nodes;
    }
    let first = |e: String| CliError::input(e);
    let allocator = allocators
        .first()
        .and_then(|a| a.as_ref().ok())
        .ok_or_else(|| first("allocators is empty".to_owned()))?;
    let policy = schedulers
        .first()
        .and_then(|s| s.as_ref().ok())
        .ok_or_else(|| first("schedulers is empty".to_owned()))?;
    let mut run = partalloc_experiment::Experiment::new(
        partalloc_experiment::MachineSource::parse(named),
        WorkloadSource::Lublin(source),
        allocator.clone(),
        policy.clone(),
    );
    run.seed = exp.seed;
    run.replications = exp.seeds();
    run.stop = RunLength {
        jobs: Some(exp.workload.jobs),
        time: None,
        warmup: exp.workload.warmup,
    };
    run.check_on(topology.clone())
        .map_err(|e| CliError::input(format!("{topology}: {e}")))
}

fn points(exp: &Experiment, topologies: &[Topology]) -> Result<Vec<Point>, CliError> {
    let settings = settings(exp)?;
    let mut v = Vec::new();
    for t in topologies {
        for s in &exp.schedulers {
            for a in &exp.allocators {
                for &load in &exp.loads {
                    v.push(Point {
                        topology: t.to_string(),
                        allocator: a.clone(),
                        scheduler: s.clone(),
                        load,
                        settings: settings.clone(),
                    });
                }
            }
        }
    }
    Ok(v)
}

/// The item of `typed` at the position of `name` in `names`.
fn typed<'a, T>(names: &[String], typed: &'a [T], name: &str) -> Option<&'a T> {
    names
        .iter()
        .position(|n| n == name)
        .and_then(|i| typed.get(i))
}

fn compute(exp: &Experiment, valid: &Validated, p: &Point) -> Result<Row, CliError> {
    let reports = run_point(exp, valid, p, exp.seeds(), false)?;
    row(&reports, exp.seeds())
}

/// The first `seeds` replications of point `p` (a trace runs once), with
/// their job records if `records`.
fn run_point(
    exp: &Experiment,
    valid: &Validated,
    p: &Point,
    seeds: u64,
    records: bool,
) -> Result<Vec<Report>, CliError> {
    let missing = || CliError::input("the point is not one of the experiment's");
    let at = valid
        .topologies
        .iter()
        .position(|t| t.to_string() == p.topology)
        .ok_or_else(missing)?;
    let topo = &valid.topologies[at];
    let setup = Setup {
        allocator: typed(&exp.allocators, &valid.allocators, &p.allocator).ok_or_else(missing)?,
        scheduler: typed(&exp.schedulers, &valid.schedulers, &p.scheduler).ok_or_else(missing)?,
    };
    let base = SimConfig {
        slowdown_bound: valid.slowdown_bound,
        measures: valid.measures,
        record_jobs: records,
        ..SimConfig::default()
    };
    if let Some(trace) = valid.traces.get(at) {
        // The submits scaled so that the requests offer the point's load.
        let jobs = trace.at_load(p.load);
        let config = SimConfig {
            measure_search_time: false,
            ..base
        };
        let mut sim =
            Simulation::from_specs(topo.clone(), setup.allocator, setup.scheduler, jobs, config)?;
        if let Some(m) = valid.runtime_model {
            sim = sim.with_runtime_model(m.seeded(exp.seed))?;
        }
        return Ok(vec![sim.run()?]);
    }
    if let Some(model) = valid.models.get(at) {
        // Replication r's jobs, their submits scaled as a trace's are.
        let reps = model.replications().with_runtime_model(valid.runtime_model);
        let mut reports = Vec::new();
        for r in 0..seeds {
            let jobs = model
                .lublin_jobs(r)
                .map_err(|e| CliError::input(e.to_string()))?;
            let trace = trace_of(jobs, topo).map_err(|e| CliError::input(format!("model: {e}")))?;
            let jobs = trace.at_load(p.load);
            let config = SimConfig {
                warmup: exp.workload.warmup,
                record_jobs: records && r == 0,
                ..base
            };
            let mut sim = Simulation::from_specs(
                topo.clone(),
                setup.allocator,
                setup.scheduler,
                jobs,
                config,
            )?;
            if let Some(m) = reps.runtime_model_of(r) {
                sim = sim.with_runtime_model(m)?;
            }
            reports.push(sim.run()?);
        }
        return Ok(reports);
    }
    // A generated point is an experiment of its own: the file's workload
    // at the point's load, checked on the machine and run.
    let mut point = partalloc_experiment::Experiment::new(
        partalloc_experiment::MachineSource::parse(&p.topology),
        WorkloadSource::Generated {
            options: exp.workload.clone(),
            load: p.load,
        },
        setup.allocator.clone(),
        setup.scheduler.clone(),
    );
    point.seed = exp.seed;
    point.replications = seeds;
    point.runtime_model = valid.runtime_model;
    point.slowdown_bound = valid.slowdown_bound;
    point.measures = valid.measures;
    point.stop = RunLength {
        jobs: Some(exp.workload.jobs),
        time: None,
        warmup: exp.workload.warmup,
    };
    point.record_jobs = records;
    let refuse = |e| match e {
        partalloc_experiment::ExperimentError::Sim(e) => CliError::from(e),
        partalloc_experiment::ExperimentError::Workload(e) => e.into(),
        e => CliError::input(e.to_string()),
    };
    let prepared = point.check_on(topo.clone()).map_err(refuse)?;
    let reports = prepared
        .run(&|_| (), &|| {})
        .map_err(refuse)?
        .into_iter()
        .map(|(report, ())| report)
        .collect();
    Ok(reports)
}

fn output_path(args: &Args, experiment: &Path, exp: &Experiment) -> PathBuf {
    if let Some(o) = &args.out {
        return o.clone();
    }
    if let Some(o) = &exp.output {
        return o.clone();
    }
    let stem = experiment
        .file_stem()
        .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.csv"))
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// Columns of a row that name its point (topology, allocator, scheduler,
/// load, settings); the rest are results.
const POINT_COLUMNS: usize = 5;

/// Checks the results an earlier run left in `path` (a `.partial` file or
/// a finished CSV), if it exists, before they are resumed into this one:
/// every result field must be a number or empty, as the sweep writes
/// them, so a damaged file is refused with its line rather than copied
/// into the output. (A torn last line is left to the sweep, which cuts it
/// off.)
fn check_resumed(path: &Path) -> Result<(), CliError> {
    if !path.is_file() {
        return Ok(());
    }
    let bytes = crate::limits::read_bytes(path, crate::limits::FileKind::Shard)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(bytes.get(..complete).unwrap_or_default());
    let headers = match r.headers() {
        Ok(h) => h.clone(),
        // The sweep reports an unreadable header itself.
        Err(_) => return Ok(()),
    };
    for rec in r.records() {
        let Ok(rec) = rec else { return Ok(()) };
        let line = rec.position().map_or(0, csv::Position::line);
        for (i, field) in rec.iter().enumerate().skip(POINT_COLUMNS) {
            let column = headers.get(i).unwrap_or("?");
            // The sweep writes finite numbers only (a missing half-width is
            // empty), and the replication count as a positive whole number.
            let ok = field.is_empty()
                || if column == "seeds" {
                    field.parse::<u64>().is_ok_and(|n| n > 0)
                } else {
                    field.parse::<f64>().is_ok_and(f64::is_finite)
                };
            if !ok {
                let shown: String = field.chars().take(40).collect();
                let want = if column == "seeds" {
                    "a positive whole number"
                } else {
                    "a finite number"
                };
                return Err(CliError::input(format!(
                    "{}: line {line}: {column} is {shown:?}, not {want}; the file is damaged: move it away (or delete it) and run the sweep again",
                    crate::error::shown(path)
                )));
            }
        }
    }
    Ok(())
}

/// A chart line: its label and its points (x, mean, half-width).
type Line = (String, Vec<(f64, f64, f64)>);

/// Draws one chart per (machine, policy, metric) from the final CSV (per
/// (machine, allocator, metric) when the lines are policies).
fn plots(exp: &Experiment, csv_path: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut reader = csv::Reader::from_path(csv_path)
        .map_err(|e| CliError::input(format!("{}: {e}", crate::error::shown(csv_path))))?;
    let headers = reader
        .headers()
        .map_err(|e| CliError::input(format!("{}: {e}", crate::error::shown(csv_path))))?
        .clone();
    let col = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            CliError::input(format!(
                "{}: no column {name}",
                crate::error::shown(csv_path)
            ))
        })
    };
    let (ct, cl) = (col("topology")?, col("load")?);
    // `ca`: the column that names a line, `cs`: the one that names a chart.
    let (ca, cs) = if exp.plot.series == "scheduler" {
        (col("scheduler")?, col("allocator")?)
    } else {
        (col("allocator")?, col("scheduler")?)
    };
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::input(format!("{}: {e}", crate::error::shown(csv_path))))?;
    let num = |r: &csv::StringRecord, c: usize| -> f64 {
        r.get(c).and_then(|t| t.parse().ok()).unwrap_or(f64::NAN)
    };
    let stem = csv_path.with_extension("");
    let mut written = Vec::new();
    for m in &exp.plot.metrics {
        let metric = metric(m)?;
        let (cm, ch) = (col(metric.name)?, col(metric.half_width_name)?);
        // (topology, scheduler) → allocator → points, in file order.
        let mut groups: BTreeMap<(usize, String, String), Vec<Line>> = BTreeMap::new();
        for r in &rows {
            let t = r.get(ct).unwrap_or_default().to_owned();
            let s = r.get(cs).unwrap_or_default().to_owned();
            let a = r.get(ca).unwrap_or_default().to_owned();
            let order = exp
                .topologies
                .iter()
                .position(|x| parse_topology(x).is_ok_and(|y| y.to_string() == t))
                .unwrap_or(usize::MAX);
            let series = groups.entry((order, t, s)).or_default();
            let hw = num(r, ch);
            let pt = (
                num(r, cl),
                num(r, cm),
                if hw.is_finite() { hw } else { 0.0 },
            );
            match series.iter_mut().find(|(name, _)| *name == a) {
                Some((_, pts)) => pts.push(pt),
                None => series.push((a, vec![pt])),
            }
        }
        for ((_, t, s), series) in groups {
            let chart = Chart {
                title: format!("{} — {t}, {s}", metric.description.trim()),
                x_label: "offered load".to_owned(),
                y_label: metric.description.trim().to_owned(),
                series: series
                    .into_iter()
                    .map(|(label, mut points)| {
                        points.sort_by(|a, b| a.0.total_cmp(&b.0));
                        Series { label, points }
                    })
                    .collect(),
                y_max: exp.plot.y_max,
            };
            let svg = render_svg(&chart).map_err(|e| CliError::input(e.to_string()))?;
            let mut name = stem.as_os_str().to_owned();
            name.push(format!("-{}-{}-{}.svg", metric.name, slug(&t), slug(&s)));
            let path = PathBuf::from(name);
            write_atomic(&path, svg.as_bytes())?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Runs `partalloc sweep`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let experiment = match (&args.action, &args.experiment) {
        (Some(SweepCommand::Merge(m)), _) => return shard::merge(m),
        (None, Some(e)) => e,
        (None, None) => return Err(CliError::input("name an experiment file")),
    };
    let exp = load_experiment(experiment)?;
    let valid = validate(&exp)?;
    let out = output_path(args, experiment, &exp);
    let flag = if args.out.is_some() {
        "--out"
    } else {
        "the output"
    };
    let machine_files: Vec<PathBuf> = exp
        .topologies
        .iter()
        .flat_map(|t| crate::run::topology_files(t))
        .collect();
    let inputs: Vec<&Path> = std::iter::once(experiment.as_path())
        .chain(machine_files.iter().map(PathBuf::as_path))
        .chain(exp.trace_path.as_deref())
        .collect();
    let mut outputs = vec![(flag, out.as_path())];
    if let Some(r) = &args.report {
        outputs.push(("--report", r.as_path()));
    }
    crate::output::check_outputs(&outputs, &inputs)?;
    let grid = points(&exp, &valid.topologies)?;
    if args.report.is_some() {
        check_report_size(&exp, &valid, grid.len())?;
    }
    if args.cluster.emit_slurm {
        return emit(&shard::slurm_script(
            experiment,
            &out,
            grid.len(),
            &args.cluster,
        )?);
    }
    // A shard runs as a sweep of its own points into its own file.
    let (out, grid, shard) = match args.cluster.shard {
        None => (out, grid, None),
        Some(spec) => {
            let hash = shard::experiment_hash(&grid)?;
            let total = grid.len();
            let (mine, ids) = shard::select(grid, spec)?;
            let path = shard::shard_path(&out, spec.index, spec.count);
            (path, mine, Some((spec, hash, total, ids)))
        }
    };
    crate::output::check_outputs(&[(flag, &out)], &inputs)?;
    let mut partial = out.clone().into_os_string();
    partial.push(".partial");
    for earlier in [PathBuf::from(partial), out.clone()] {
        check_resumed(&earlier)?;
    }
    let mut sweep = match Sweep::open(&out, grid) {
        Err(SweepError::UnknownPoint {
            key,
            line: Some(line),
        }) => {
            return Err(CliError::input(format!(
                "the results on disk for {} hold a row (line {line}: {key}) that is not a point of this experiment: other points, or other settings (seed, seeds or workload); write to another file or move the old one (and its .partial) away",
                crate::error::shown(&out)
            )));
        }
        other => other?,
    };
    let total = sweep.points().len();
    let mut pending: Vec<usize> = sweep.pending().collect();
    let resumed = total - pending.len();
    if let Some(n) = args.limit {
        pending.truncate(n);
    }
    let pool = crate::progress::pool(args.threads)?;
    let multi = MultiProgress::with_draw_target(crate::progress::target(args.quiet));
    let overall = multi.add(ProgressBar::new(pending.len() as u64));
    overall.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} points  {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let points = sweep.points().to_vec();
    let sink = Mutex::new(&mut sweep);
    let result = pool.install(|| {
        pending
            .par_iter()
            .try_for_each(|&i| -> Result<(), CliError> {
                let Some(p) = points.get(i) else {
                    return Ok(());
                };
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_message(format!(
                    "{} {} {} load {}",
                    p.topology, p.allocator, p.scheduler, p.load
                ));
                bar.enable_steady_tick(Duration::from_millis(200));
                let r = compute(&exp, &valid, p).map_err(|e| {
                    CliError::input(format!(
                        "point ({}, {}, {}, load {}): {e}",
                        p.topology, p.allocator, p.scheduler, p.load
                    ))
                });
                bar.finish_and_clear();
                let r = r?;
                sink.lock()
                    .map_err(|_| CliError::input("a worker failed while recording a point"))?
                    .append_index(i, &r)?;
                overall.inc(1);
                Ok(())
            })
    });
    overall.finish_and_clear();
    result?;
    let remaining = sweep.pending().count();
    if remaining > 0 {
        let mut partial = out.clone().into_os_string();
        partial.push(".partial");
        return emit(&format!(
            "stopped with {remaining} of {total} points left; {} holds the {} done; run the same command again to continue\n",
            PathBuf::from(partial).display(),
            total - remaining
        ));
    }
    let path = sweep.finish()?.to_path_buf();
    if let Some((spec, hash, total_points, ids)) = shard {
        let record = shard::write_record(&path, spec, hash, total_points, ids)?;
        return emit(&format!(
            "shard {} of {}: {total} points ({resumed} from an earlier run) written to {} (record {})\n",
            spec.index,
            spec.count,
            crate::error::shown(&path),
            crate::error::shown(&record)
        ));
    }
    let mut msg = format!(
        "{} points ({} from an earlier run) written to {}\n",
        total,
        resumed,
        crate::error::shown(&path)
    );
    if !args.no_plots {
        for p in plots(&exp, &path)? {
            msg.push_str(&format!("chart {}\n", crate::error::shown(&p)));
        }
    }
    if let Some(page) = &args.report {
        report(&exp, &valid, &points, page, args.threads)?;
        msg.push_str(&format!("report {}\n", crate::error::shown(page)));
    }
    emit(&msg)
}

/// Refuses a report larger than the page holds before anything runs: the
/// first replication of every point, all its measured jobs.
fn check_report_size(exp: &Experiment, valid: &Validated, points: usize) -> Result<(), CliError> {
    let per_point = valid
        .traces
        .iter()
        .map(|t| t.jobs.len() as u64)
        .max()
        .unwrap_or(exp.workload.jobs);
    let jobs = (points as u64).saturating_mul(per_point);
    let max = partalloc_report::MAX_REPORT_JOBS as u64;
    if jobs > max {
        return Err(CliError::input(format!(
            "--report: {points} points of {per_point} jobs make {jobs} jobs, more than the {max} a report holds; report fewer points (a smaller experiment file) or fewer jobs"
        )));
    }
    Ok(())
}

/// Writes the page of `points`: each point's first replication (the same
/// jobs and decisions as in its row: replication 0 of its seeds) with its
/// job records.
fn report(
    exp: &Experiment,
    valid: &Validated,
    points: &[Point],
    page: &Path,
    threads: Option<usize>,
) -> Result<(), CliError> {
    let pool = crate::progress::pool(threads)?;
    let runs: Vec<(String, &Topology, Vec<partalloc::simkit::JobRecord>)> = pool.install(|| {
        points
            .par_iter()
            .map(|p| {
                let topo = valid
                    .topologies
                    .iter()
                    .find(|t| t.to_string() == p.topology)
                    .ok_or_else(|| CliError::input("the point is not one of the experiment's"))?;
                let first = run_point(exp, valid, p, 1, true)?.swap_remove(0);
                let label = format!(
                    "{} · {} · load {}{}",
                    p.allocator,
                    p.scheduler,
                    p.load,
                    if valid.topologies.len() > 1 {
                        format!(" · {}", partalloc::topology::echo(&p.topology))
                    } else {
                        String::new()
                    }
                );
                Ok((label, topo, first.jobs))
            })
            .collect::<Result<_, CliError>>()
    })?;
    let views: Vec<partalloc_report::RunView<'_>> = runs
        .iter()
        .map(|(label, topo, jobs)| partalloc_report::RunView::new(label, topo, jobs))
        .collect();
    let options = partalloc_report::ReportOptions::titled(format!(
        "partalloc sweep: {} points",
        points.len()
    ));
    let html = partalloc_report::render(&views, &options)
        .map_err(|e| CliError::input(format!("--report: {e}")))?;
    write_atomic(page, html.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv_of(row: &Row) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(row).unwrap();
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn row_columns_are_the_metrics_table_in_order() {
        let summaries = reported()
            .enumerate()
            .map(|(i, m)| {
                // The last metric was not measured: its cells stay empty.
                (i + 1 < reported().count()).then_some(Summary {
                    metric: m.name,
                    mean: i as f64 + 0.5,
                    half_width: (i % 2 == 0).then_some(0.25),
                    n: 4,
                })
            })
            .collect();
        let text = csv_of(&Row {
            seeds: 4,
            summaries,
        });
        let (header, values) = text.split_once('\n').unwrap();
        let cols: Vec<&str> = header.split(',').collect();
        for m in reported() {
            for c in [m.name, m.half_width_name] {
                assert_eq!(cols.iter().filter(|&&x| x == c).count(), 1, "{c}");
            }
        }
        // The columns of the files written before the row was derived from
        // the table, then the dispersal means, the bounded slowdown and the
        // capacity machines' racks per job and stranded GPUs (each added
        // after them, so the earlier columns keep their places).
        assert_eq!(
            header,
            "seeds,mean_response,mean_response_hw,mean_wait,mean_wait_hw,\
             mean_numerical_delay,mean_numerical_delay_hw,mean_topological_delay,\
             mean_topological_delay_hw,mean_service,mean_service_hw,utilization,\
             utilization_hw,useful_utilization,useful_utilization_hw,miss_rate,\
             miss_rate_hw,mean_internal_fragmentation,mean_internal_fragmentation_hw,\
             mean_queue_length,mean_queue_length_hw,throughput,throughput_hw,\
             completed,completed_hw,mean_pairwise_distance,mean_pairwise_distance_hw,\
             mean_distance_sum,mean_distance_sum_hw,mean_diameter,mean_diameter_hw,\
             mean_span,mean_span_hw,mean_pieces,mean_pieces_hw,\
             mean_bounded_slowdown,mean_bounded_slowdown_hw,\
             mean_racks_per_job,mean_racks_per_job_hw,mean_stranded_gpus,mean_stranded_gpus_hw,\
             mean_stranded_nodes,mean_stranded_nodes_hw,mean_split_segments,mean_split_segments_hw,\
             lowest_level_share,lowest_level_share_hw,mean_largest_placeable,mean_largest_placeable_hw,\
             mean_gpu_allocation,mean_gpu_allocation_hw,mean_frag_gpus,mean_frag_gpus_hw,\
             mean_frag_ratio,mean_frag_ratio_hw"
        );
        assert_eq!(
            values,
            "4,0.5,0.25,1.5,,2.5,0.25,3.5,,4.5,0.25,5.5,,6.5,0.25,7.5,,8.5,0.25,\
             9.5,,10.5,0.25,11.5,,12.5,0.25,13.5,,14.5,0.25,15.5,,16.5,0.25,17.5,,\
             18.5,0.25,19.5,,20.5,0.25,21.5,,22.5,0.25,23.5,,24.5,0.25,25.5,,,\n"
        );
    }
}
