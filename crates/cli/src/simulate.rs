//! `partalloc simulate`: one simulation point, over one or more seeds.

use std::fmt::Write as _;
use std::path::PathBuf;

use partalloc::simkit::{Replications, Report, Results, SimConfig, Simulation, Stop};
use partalloc::topology::Topology;
use partalloc::workload::swf::ShapeMapping;
use serde::Serialize;

use crate::common::{
    CliError, Format, Setup, Summary, WorkloadSpec, csv_text, describe_workload, json_text, num,
    read_trace, run_generated, search_time_us, summarize, write_atomic, write_or_emit,
};

/// Shape laws of a generated workload (`--shapes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ShapesArg {
    /// Subcubes on hypercubes, sides on meshes and tori.
    Auto,
    /// Independent sides (Kim–Yoon §IV.1).
    Sides,
    /// Power-of-two sides (Kang §5.1).
    Cubic,
    /// Any sides up to the limits (Kang §5.3).
    Noncubic,
    /// Subcube dimensions (Mohapatra §4.1).
    Cube,
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
    /// Largest request for sides/cubic/noncubic shapes, e.g. 16x16
    /// (default: the whole machine).
    #[arg(long)]
    pub(crate) max_sides: Option<String>,
    /// Subcube dimension law for `cube` shapes: uniform (0..n−1),
    /// uniform:LO-HI, normal (Mohapatra's table), or weights w0,w1,….
    #[arg(long, default_value = "uniform")]
    pub(crate) cube_dims: String,
    /// Residence time law: exp:MEAN, uniform:LO-HI, hyper:MEAN,ALPHA,CV or
    /// const:VALUE.
    #[arg(long, default_value = "exp:1")]
    pub(crate) residence: String,
    /// Size/demand model.
    #[arg(long, value_enum, default_value_t = DependenceArg::Dependent)]
    pub(crate) dependence: DependenceArg,
}

impl WorkloadArgs {
    /// The workload description with `jobs` measured after `warmup`.
    pub(crate) fn spec(&self, jobs: u64, warmup: u64) -> WorkloadSpec {
        WorkloadSpec {
            shapes: value_name(&self.shapes),
            sides: value_name(&self.sides),
            max_sides: self.max_sides.clone(),
            cube_dims: self.cube_dims.clone(),
            residence: self.residence.clone(),
            dependence: value_name(&self.dependence),
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

/// Options of `partalloc simulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The machine: mesh:AxB[xC…], torus:AxB[xC…], hypercube:N, kary:K^N.
    #[arg(long, short)]
    topology: String,
    /// Allocation strategy, e.g. fsl or partner-ext[delta=2] (see
    /// `partalloc strategies`).
    #[arg(long, short)]
    allocator: String,
    /// Scheduling policy, e.g. fcfs or m-fcfs[threshold=dynamic].
    #[arg(long, short, default_value = "fcfs")]
    scheduler: String,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    trace: TraceArgs,
    /// Jobs measured per seed (generated workload; default 1000), or the
    /// first jobs of the trace (default: all).
    #[arg(long)]
    jobs: Option<u64>,
    /// Completed jobs discarded before measuring.
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Stop at this simulated time.
    #[arg(long)]
    time: Option<f64>,
    /// Independent replications (seeds), reported as mean ± 95% half-width.
    #[arg(long, default_value_t = 1, conflicts_with = "trace")]
    seeds: u64,
    /// Master seed; replication r draws from ChaCha8 stream r of it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write one CSV row per measured job of the first replication here.
    #[arg(long)]
    jobs_csv: Option<PathBuf>,
    /// Write the report to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Worker threads for the replications (default: one per core); the
    /// results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Do not draw a progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, Serialize)]
struct Output<'a> {
    topology: String,
    nodes: usize,
    allocator: &'a str,
    scheduler: &'a str,
    workload: String,
    seeds: u64,
    seed: u64,
    metrics: &'a [Summary],
    search_time_us_per_job: f64,
    replications: Vec<Results>,
}

/// Runs a trace once.
fn run_trace(args: &Args, topology: &Topology) -> Result<(Vec<Report>, String), CliError> {
    let Some(path) = &args.trace.trace else {
        return Ok((Vec::new(), String::new()));
    };
    let (mut jobs, _header, skipped) =
        read_trace(path, args.trace.mapping(topology), args.trace.lenient)?;
    if let Some(n) = args.jobs {
        jobs.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    let count = jobs.len();
    let config = SimConfig {
        stop: Stop {
            jobs: None,
            time: args.time,
        },
        warmup: args.warmup,
        record_jobs: args.jobs_csv.is_some(),
        measure_search_time: true,
    };
    let report =
        Simulation::by_name(*topology, &args.allocator, &args.scheduler, jobs, config)?.run()?;
    let skipped = if skipped > 0 {
        format!(", {skipped} malformed lines skipped")
    } else {
        String::new()
    };
    Ok((
        vec![report],
        format!(
            "trace {} ({count} jobs, {} mapping{skipped})",
            path.display(),
            value_name(&args.trace.mapping)
        ),
    ))
}

/// Runs `partalloc simulate`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let topology = crate::limits::machine("simulate", &args.topology)?;
    crate::limits::check_count("--seeds", args.seeds, crate::limits::MAX_SEEDS)?;
    if args.jobs_csv.is_some() {
        let jobs = args.jobs.unwrap_or(1000);
        crate::limits::check_count(
            "--jobs with --jobs-csv",
            jobs,
            crate::limits::MAX_RECORDED_JOBS,
        )?;
    }
    if let Some(t) = args.time
        && !(t.is_finite() && t >= 0.0)
    {
        return Err(CliError::input(format!(
            "--time {t}: the stop time must be a finite number at least 0"
        )));
    }
    let (reports, workload, seeds) = if args.trace.trace.is_some() {
        let (r, w) = run_trace(args, &topology)?;
        (r, w, 1)
    } else {
        let spec = args.workload.spec(args.jobs.unwrap_or(1000), args.warmup);
        spec.check()?;
        let w = spec.build(&topology, args.workload.load)?;
        let reps = Replications::new(args.seed, args.seeds)
            .map_err(|e| CliError::input(format!("--seeds: {e}")))?;
        let setup = Setup {
            topology: &topology,
            allocator: &args.allocator,
            scheduler: &args.scheduler,
        };
        let pool = crate::progress::pool(args.threads)?;
        let bar = crate::progress::bar(args.seeds, "seeds", args.quiet);
        let r = pool.install(|| {
            run_generated(
                setup,
                &w,
                &spec,
                reps,
                args.time,
                args.jobs_csv.is_some(),
                &|| bar.inc(1),
            )
        });
        bar.finish_and_clear();
        let r = r?;
        (
            r,
            describe_workload(&spec, &topology, args.workload.load),
            args.seeds,
        )
    };
    let summary = summarize(&reports)?;
    let first = reports
        .first()
        .ok_or_else(|| CliError::input("no replication ran"))?;
    let out = Output {
        topology: topology.to_string(),
        nodes: topology.num_nodes(),
        allocator: &first.allocator,
        scheduler: &first.scheduler,
        workload,
        seeds,
        seed: args.seed,
        metrics: &summary,
        search_time_us_per_job: search_time_us(&reports),
        replications: reports.iter().map(|r| r.results).collect(),
    };
    // The job file first: if it cannot be written, no report claims success.
    if let Some(path) = &args.jobs_csv {
        let mut buf = Vec::new();
        first
            .write_jobs_csv(&mut buf)
            .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
        write_atomic(path, &buf)?;
    }
    let text = render(&out, args.format)?;
    write_or_emit(args.output.as_deref(), &text)
}

fn render(out: &Output<'_>, format: Format) -> Result<String, CliError> {
    match format {
        Format::Json => json_text(out),
        Format::Csv => {
            let rows: Vec<Vec<String>> = out
                .metrics
                .iter()
                .map(|m| {
                    vec![
                        m.metric.to_owned(),
                        m.mean.to_string(),
                        m.half_width.map(|h| h.to_string()).unwrap_or_default(),
                        m.n.to_string(),
                    ]
                })
                .collect();
            csv_text(&["metric", "mean", "half_width", "n"], &rows)
        }
        Format::Text => {
            let mut s = String::new();
            let _ = writeln!(s, "machine    {} ({} nodes)", out.topology, out.nodes);
            let _ = writeln!(s, "allocator  {}", out.allocator);
            let _ = writeln!(s, "scheduler  {}", out.scheduler);
            let _ = writeln!(s, "workload   {}", out.workload);
            let _ = writeln!(s, "seeds      {} (master seed {})", out.seeds, out.seed);
            let _ = writeln!(s);
            let _ = writeln!(s, "{:<26} {:>14} {:>14}", "metric", "mean", "±95%");
            for m in out.metrics {
                let label = crate::common::METRICS
                    .iter()
                    .find(|x| x.name == m.metric)
                    .map_or(m.metric, |x| x.label);
                let hw = m.half_width.map(num).unwrap_or_else(|| "–".to_owned());
                let _ = writeln!(s, "{label:<26} {:>14} {hw:>14}", num(m.mean));
            }
            let _ = writeln!(
                s,
                "{:<26} {:>14}",
                "search time µs/job",
                num(out.search_time_us_per_job)
            );
            Ok(s)
        }
    }
}
