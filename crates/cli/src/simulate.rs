//! `partalloc simulate`: one simulation point, over one or more seeds.

use std::fmt::Write as _;
use std::path::PathBuf;

use partalloc::simkit::atomic::AtomicFile;
use partalloc::simkit::observe::GrantLog;
use partalloc::simkit::{JobCsvWriter, Report, ReportError, SimConfig, Simulation};
use partalloc::workload::Job;
use serde::Serialize;

use crate::error::CliError;
use crate::metrics::{Replication, Summary, reported, search_time_us, summarize};
use crate::output::{Format, csv_text, json_text, num, write_atomic, write_or_emit};
use crate::run::Strategies;
use crate::trace::{StreamEnd, TraceStream, read_trace};
use crate::workload::{TraceArgs, WorkloadArgs};
use partalloc::simkit::measure::{MEASURED_IDS, MEASURED_JOBS};
use partalloc::workload::TraceFormat;
use partalloc::workload::lublin::LublinSpec;
use partalloc_experiment::experiment::{Experiment, ExperimentError, Prepared, RunLength};

/// Options of `partalloc simulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The machine: mesh:AxB[xC…], hypercube:N, racks:…, blocks:FILE, …
    /// (--help lists every form).
    #[arg(long, short, long_help = partalloc_experiment::forms::topology_help())]
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
    #[arg(long, help = crate::workload::MODEL_HELP, value_parser = crate::workload::parse_model, conflicts_with_all = ["trace", "load", "allow_saturation", "shapes", "sides", "max_sides", "cube_dims", "shape_weights", "residence", "dependence"])]
    model: Option<Box<LublinSpec>>,
    #[command(flatten)]
    run: crate::run::RunFlags,
    /// Jobs measured per seed (generated workload; default 1000), the jobs
    /// drawn from the model per seed (default 1000), or the first jobs of
    /// the trace (default: all).
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
    /// Also write an HTML page of the first replication's measured jobs (a
    /// Gantt chart on the machine's nodes, occupancy and queue over time,
    /// the distributions), one self-contained file.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
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
    replications: Vec<Replication>,
    /// On a capacity machine: per level, the time-average largest pod set
    /// one domain could take.
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity_levels: Option<partalloc::simkit::capacity::LargestPodSets>,
    /// Whose run the capacity levels come from: "seed 0's" or "the
    /// trace's" (text output only).
    #[serde(skip)]
    measured: &'static str,
}

/// Runs a trace once, streamed: jobs are read as the simulation reaches
/// them, so memory stays flat in the trace length. A trace that is not
/// sorted by submit time is run again from the sorted whole. With `grants`
/// the run's first measured grants are logged for the pod and Slurm
/// measures.
fn run_trace(
    args: &Args,
    prepared: &Prepared,
    grants: bool,
) -> Result<(Vec<Report>, String, Option<GrantLog>), CliError> {
    let Some(path) = &args.trace.trace else {
        return Ok((Vec::new(), String::new(), None));
    };
    let topology = prepared.topology();
    let mapping = args.trace.mapping(topology);
    let limit = args
        .jobs
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let config = SimConfig {
        // Records go to the job file as jobs complete, and are kept only
        // for a report page; pod and Slurm measures come from a bounded log
        // of the grants.
        record_jobs: args.report.is_some(),
        ..prepared.config()
    };
    // Per-job records go to the file as jobs complete (renamed into place
    // once the run succeeded), not into memory.
    // A trace without a usable job is refused (before a jobs CSV is
    // written), as `replay` refuses it.
    let empty = || {
        CliError::input(format!(
            "{}: the trace has no usable job",
            crate::error::shown(path)
        ))
    };
    type Run = (Report, Option<GrantLog>);
    let run = |jobs: &mut dyn Iterator<Item = Job>| -> Result<Run, CliError> {
        let mut jobs = jobs.peekable();
        if jobs.peek().is_none() {
            return Err(empty());
        }
        let (allocator, policy) = prepared.specs();
        let mut sim = Simulation::from_specs(topology.clone(), allocator, policy, jobs, config)?;
        if let Some(m) = prepared.replications().runtime_model_of(0) {
            sim = sim.with_runtime_model(m)?;
        }
        let mut log = grants.then(|| GrantLog::new(MEASURED_JOBS).with_max_items(MEASURED_IDS));
        let Some(csv) = &args.jobs_csv else {
            return Ok((sim.run_observed(&mut log, None)?, log));
        };
        let io = |e: ReportError| CliError::input(format!("{}: {e}", crate::error::shown(csv)));
        let file = AtomicFile::create(csv).map_err(CliError::io(csv))?;
        let mut rows = JobCsvWriter::new(file).map_err(io)?.on(topology);
        let mut failed = None;
        let report = sim.run_observed(
            &mut log,
            Some(&mut |r| {
                if failed.is_none() {
                    failed = rows.write(&r).err();
                }
            }),
        )?;
        if let Some(e) = failed {
            return Err(io(e));
        }
        rows.finish()
            .map_err(io)?
            .commit()
            .map_err(CliError::io(csv))?;
        Ok((report, log))
    };
    // A sacct dump and an OpenB pod list are read whole (their jobs are
    // sorted by submit time after the ones that cannot run are dropped).
    let ((report, log), count, skipped) = if args.trace.trace_format != TraceFormat::Swf {
        let (mut jobs, skipped) = args.trace.read_all(path, topology)?;
        jobs.truncate(limit);
        let count = jobs.len();
        (run(&mut jobs.into_iter())?, count, skipped)
    } else {
        let mut stream = TraceStream::open(path, mapping, args.trace.lenient, limit)?;
        let streamed = run(&mut stream);
        // A malformed line anywhere comes first, as when the whole trace was
        // read before simulating.
        match stream.finish()? {
            StreamEnd::Sorted { jobs, skipped } => (streamed?, jobs, skipped),
            StreamEnd::Unsorted => {
                let (mut jobs, _header, skipped) = read_trace(path, mapping, args.trace.lenient)?;
                jobs.truncate(limit);
                let count = jobs.len();
                (run(&mut jobs.into_iter())?, count, skipped)
            }
        }
    };
    let skipped = if skipped > 0 {
        if args.trace.trace_format == TraceFormat::Openb {
            format!(", {skipped} pods no node could hold skipped")
        } else {
            format!(", {skipped} malformed lines skipped")
        }
    } else {
        String::new()
    };
    Ok((
        vec![report],
        if args.trace.trace_format != TraceFormat::Swf {
            format!(
                "trace {} ({count} jobs, {} {}{skipped})",
                crate::error::shown(path),
                args.trace.trace_format,
                if args.trace.trace_format == TraceFormat::Sacct {
                    "dump"
                } else {
                    "pod list"
                }
            )
        } else {
            format!(
                "trace {} ({count} jobs, {} mapping{skipped})",
                crate::error::shown(path),
                args.trace.mapping
            )
        },
        log,
    ))
}

/// The experiment the flags describe (the machine already read).
fn experiment(args: &Args, strategies: &Strategies) -> Result<Experiment, CliError> {
    let workload = args.trace.source(
        args.model.as_deref(),
        &args.workload,
        args.jobs,
        args.warmup,
    );
    let mut exp = args
        .run
        .experiment(&args.topology, workload, strategies.specs()?, args.seed);
    exp.replications = args.seeds;
    exp.runtime_model = crate::run::runtime_model(args.run.runtime_model.as_deref())?;
    exp.stop = RunLength {
        jobs: args.jobs,
        time: args.time,
        warmup: args.warmup,
    };
    exp.record_jobs = args.jobs_csv.is_some() || args.report.is_some();
    Ok(exp)
}

/// An experiment's refusal in the words of `simulate`'s flags.
fn refusal(args: &Args, e: ExperimentError) -> CliError {
    match e {
        ExperimentError::Replications(partalloc::simkit::ReplicationError::TooMany(n)) => {
            CliError::input(format!(
                "--seeds {n} is too large: at most {} is accepted",
                crate::limits::MAX_SEEDS
            ))
        }
        ExperimentError::Replications(e) => CliError::input(format!("--seeds: {e}")),
        ExperimentError::RecordedJobs { jobs, max } => CliError::input(format!(
            "{} {jobs} is too large: at most {max} is accepted",
            if args.report.is_some() {
                "--jobs with --report"
            } else {
                "--jobs with --jobs-csv"
            }
        )),
        ExperimentError::StopTime(t) => CliError::input(format!(
            "--time {t}: the stop time must be a finite number above 0 (a run that stops at 0 measures nothing)"
        )),
        ExperimentError::Measure(e) => CliError::input(format!("--measure: {e}")),
        ExperimentError::NoJobs => CliError::input("--jobs must be at least 1"),
        ExperimentError::TooManyJobs { jobs, max } => CliError::input(format!(
            "--jobs {jobs} is too large: at most {max} is accepted"
        )),
        ExperimentError::Workload(e) => e.into(),
        ExperimentError::Lublin(e) => CliError::input(format!("--model: {e}")),
        ExperimentError::LublinJob(e) => CliError::input(format!("--model: {e}")),
        ExperimentError::Source(e) => e.into(),
        ExperimentError::Sim(e) => e.into(),
        e => CliError::input(e.to_string()),
    }
}

/// Runs `partalloc simulate`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let topology = crate::limits::machine("simulate", &args.topology)?;
    // Parsed once here (the allocator's error first) into the experiment
    // value, which is checked on the machine after the outputs.
    let strategies = Strategies::parse(&args.allocator, &args.scheduler);
    let exp = experiment(args, &strategies)?;
    // Every file the experiment reads: no output may replace one.
    let inputs = exp.inputs();
    let inputs: Vec<&std::path::Path> = inputs.iter().map(std::path::PathBuf::as_path).collect();
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("--output", args.output.as_deref()),
        ("--jobs-csv", args.jobs_csv.as_deref()),
        ("--report", args.report.as_deref()),
    ]
    .into_iter()
    .filter_map(|(f, p)| p.map(|p| (f, p)))
    .collect();
    crate::output::check_outputs(&outputs, &inputs)?;
    let prepared = exp
        .check_on(topology.clone())
        .map_err(|e| refusal(args, e))?;
    // Capacity machines log seed 0's grants (its first measured jobs only
    // on long streams) for the largest pod set per level over time.
    let grants = prepared
        .config()
        .measures
        .contains(partalloc::simkit::Measure::Capacity);
    let (reports, workload, seeds, log) = if args.trace.trace.is_some() {
        let (r, w, log) = run_trace(args, &prepared, grants)?;
        (r, w, 1, log)
    } else {
        let pool = crate::progress::pool(args.threads)?;
        let bar = crate::progress::bar(args.seeds, "seeds", args.quiet);
        let r = pool.install(|| {
            prepared
                .run(
                    &|r| {
                        (grants && r == 0)
                            .then(|| GrantLog::new(MEASURED_JOBS).with_max_items(MEASURED_IDS))
                    },
                    &|| bar.inc(1),
                )
                .map_err(|e| refusal(args, e))
        });
        bar.finish_and_clear();
        let mut first = None;
        let reports = r?
            .into_iter()
            .map(|(report, log)| {
                first = first.take().or(log);
                report
            })
            .collect();
        (reports, prepared.describe(), args.seeds, first)
    };
    let capacity_levels = log
        .as_ref()
        .and_then(|log| partalloc::simkit::capacity::largest_pod_sets(&topology, log));
    let first = reports
        .first()
        .ok_or_else(|| CliError::input("no replication ran"))?;
    // Only what the run measured: a measure not taken prints nothing.
    let summary: Vec<Summary> = summarize(&reports)?
        .into_iter()
        .filter(|m| first.results.was_measured(m.metric))
        .collect();
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
        replications: reports.iter().map(|r| Replication(r.results)).collect(),
        capacity_levels,
        measured: if args.trace.trace.is_some() {
            "the trace's first"
        } else {
            "seed 0's"
        },
    };
    // The job file first: if it cannot be written, no report claims success.
    // (A replayed trace wrote it during the run.)
    if let Some(path) = args
        .jobs_csv
        .as_ref()
        .filter(|_| args.trace.trace.is_none())
    {
        let mut buf = Vec::new();
        first
            .write_jobs_csv_on(Some(&topology), &mut buf)
            .map_err(|e| CliError::input(format!("{}: {e}", crate::error::shown(path))))?;
        write_atomic(path, &buf)?;
    }
    if let Some(path) = &args.report {
        let label = format!("{} · {}", first.allocator, first.scheduler);
        let options = partalloc_report::ReportOptions::titled(format!(
            "partalloc simulate: {label} on {}",
            partalloc::topology::echo(&topology.to_string())
        ));
        let page = partalloc_report::render(
            &[partalloc_report::RunView::new(
                &label,
                &topology,
                &first.jobs,
            )],
            &options,
        )
        .map_err(|e| CliError::input(format!("--report: {e}")))?;
        write_atomic(path, page.as_bytes())?;
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
                let label = reported()
                    .find(|x| x.name == m.metric)
                    .map_or(m.metric, |x| x.description);
                let hw = m.half_width.map(num).unwrap_or_else(|| "–".to_owned());
                let _ = writeln!(s, "{label:<26} {:>14} {hw:>14}", num(m.mean));
            }
            let _ = writeln!(
                s,
                "{:<26} {:>14}",
                "search time µs/job",
                num(out.search_time_us_per_job)
            );
            if let Some(c) = &out.capacity_levels {
                let _ = writeln!(s);
                let _ = writeln!(
                    s,
                    "largest 1-GPU pod set one domain could take, time average over {} run ({} states):",
                    out.measured.trim_end_matches(" first"),
                    c.samples
                );
                let width = c.levels.iter().map(|l| l.level.len()).max().unwrap_or(0);
                for l in &c.levels {
                    let _ = writeln!(s, "{:<width$} {:>14}", l.level, num(l.mean_largest_pod_set));
                }
            }
            Ok(s)
        }
    }
}
