//! `partalloc report`: one workload under several strategies and policies,
//! written as one HTML page with the runs side by side (the Gantt chart on
//! the machine, the curves over time, the distributions and the summary on
//! shared axes).

use std::path::PathBuf;

use partalloc::simkit::{JobRecord, Report, RuntimeModel};
use partalloc::topology::Topology;
use partalloc::workload::lublin::LublinSpec;
use partalloc_experiment::experiment::{
    DEFAULT_JOBS, Experiment, ExperimentError, Prepared, RunLength,
};
use partalloc_report::{MAX_REPORT_JOBS, ReportOptions, RunView};
use rayon::prelude::*;

use crate::error::CliError;
use crate::run::Strategies;
use crate::workload::{TraceArgs, WorkloadArgs};

/// Options of `partalloc report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The machine (as `simulate --topology`).
    #[arg(long, short, long_help = partalloc_experiment::forms::topology_help())]
    topology: String,
    /// Allocation strategies to show, comma-separated or repeated.
    #[arg(long, short, required = true)]
    allocator: Vec<String>,
    /// Scheduling policies, comma-separated or repeated (default fcfs):
    /// every strategy runs under each.
    #[arg(long, short)]
    scheduler: Vec<String>,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    trace: TraceArgs,
    #[arg(long, help = crate::workload::MODEL_HELP, value_parser = crate::workload::parse_model, conflicts_with_all = ["trace", "load", "allow_saturation", "shapes", "sides", "max_sides", "cube_dims", "shape_weights", "residence", "dependence"])]
    model: Option<Box<LublinSpec>>,
    #[command(flatten)]
    run: crate::run::RunFlags,
    /// Jobs measured (generated workload; default 1000), the jobs drawn
    /// from the model (default 1000), or the first jobs of the trace
    /// (default: all).
    #[arg(long)]
    jobs: Option<u64>,
    /// Completed jobs discarded before measuring.
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Master seed of the generated or modelled workload (replication 0 of
    /// it, as `simulate`'s first seed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The page's title (default: the machine and the workload).
    #[arg(long)]
    title: Option<String>,
    /// Jobs drawn in the Gantt chart and the machine view per run (the
    /// earliest by start); the curves and distributions use every job.
    #[arg(long, value_name = "JOBS")]
    max_drawn: Option<usize>,
    /// The HTML file to write.
    #[arg(long, short, value_name = "FILE.html")]
    output: PathBuf,
    /// Worker threads for the runs (default: one per core); the page does
    /// not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Do not draw a progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// The experiment of one (strategy, policy) run, as the flags describe it.
fn experiment(
    args: &Args,
    pair: &Strategies,
    runtime_model: Option<RuntimeModel>,
) -> Result<Experiment, CliError> {
    let workload = args.trace.source(
        args.model.as_deref(),
        &args.workload,
        args.jobs,
        args.warmup,
    );
    let mut exp = args
        .run
        .experiment(&args.topology, workload, pair.specs()?, args.seed);
    exp.runtime_model = runtime_model;
    exp.stop = RunLength {
        // A trace is read once for every run and cut to its first jobs
        // here; the page's bound then counts the jobs it holds.
        jobs: args.jobs.filter(|_| args.trace.trace.is_none()),
        time: None,
        warmup: args.warmup,
    };
    exp.record_jobs = true;
    // The page shows no search time.
    exp.search_time = false;
    Ok(exp)
}

/// An experiment's refusal in the words of `report`'s flags (`runs` runs
/// on one page).
fn refusal(e: ExperimentError, runs: usize) -> CliError {
    match e {
        ExperimentError::Measure(e) => CliError::input(format!("--measure: {e}")),
        ExperimentError::NoJobs => CliError::input("--jobs must be at least 1"),
        // More than a page holds, which a page refuses first.
        ExperimentError::RecordedJobs { jobs, .. } | ExperimentError::TooManyJobs { jobs, .. } => {
            check_size(jobs, runs, MAX_REPORT_JOBS as u64)
                .err()
                .unwrap_or_else(|| {
                    CliError::input(format!("--jobs {jobs} is too large for a report"))
                })
        }
        ExperimentError::Workload(e) => e.into(),
        ExperimentError::Lublin(e) => CliError::input(format!("--model: {e}")),
        ExperimentError::LublinJob(e) => CliError::input(format!("--model: {e}")),
        ExperimentError::Source(e) => e.into(),
        ExperimentError::Sim(e) => e.into(),
        e => CliError::input(e.to_string()),
    }
}

/// Runs `partalloc report`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let topology = crate::limits::machine("report", &args.topology)?;
    let split = |list: &[String], default: &str| -> Vec<String> {
        if list.is_empty() {
            return vec![default.to_owned()];
        }
        list.iter()
            .flat_map(|s| crate::replay::split_specs(s))
            .collect()
    };
    let allocators = split(&args.allocator, "paging");
    let schedulers = split(&args.scheduler, "fcfs");
    let model = crate::run::runtime_model(args.run.runtime_model.as_deref())?;
    // One experiment per (strategy, policy), every policy's strategies in
    // turn.
    let experiments = schedulers
        .iter()
        .flat_map(|s| allocators.iter().map(move |a| Strategies::parse(a, s)))
        .map(|pair| experiment(args, &pair, model))
        .collect::<Result<Vec<_>, CliError>>()?;
    let runs = experiments.len();
    // Every file the runs read (the same for each): no output may
    // replace one.
    let inputs = experiments
        .first()
        .map(Experiment::inputs)
        .unwrap_or_default();
    let inputs: Vec<&std::path::Path> = inputs.iter().map(std::path::PathBuf::as_path).collect();
    crate::output::check_outputs(&[("--output", args.output.as_path())], &inputs)?;
    // A page holds a bounded number of jobs: drawn ones are known now.
    if args.trace.trace.is_none() {
        let jobs = args.jobs.unwrap_or(DEFAULT_JOBS);
        if jobs == 0 {
            return Err(CliError::input("--jobs must be at least 1"));
        }
        check_size(jobs, runs, MAX_REPORT_JOBS as u64)?;
    }
    // Each checked once, on the machine read once, before anything runs.
    let prepared = experiments
        .iter()
        .map(|e| e.check_on(topology.clone()).map_err(|e| refusal(e, runs)))
        .collect::<Result<Vec<Prepared>, CliError>>()?;
    let pool = crate::progress::pool(args.threads)?;
    let bar = crate::progress::bar(runs as u64, "runs", args.quiet);
    let label = |r: &Report| format!("{} · {}", r.allocator, r.scheduler);
    let (runs, workload): (Vec<(String, Vec<JobRecord>)>, String) = match &args.trace.trace {
        Some(path) => {
            // Read once for every run.
            let (mut jobs, skipped) = args.trace.read_all(path, &topology)?;
            if let Some(n) = args.jobs {
                jobs.truncate(usize::try_from(n).unwrap_or(usize::MAX));
            }
            if jobs.is_empty() {
                return Err(CliError::input(format!(
                    "{}: the trace has no usable job",
                    crate::error::shown(path)
                )));
            }
            check_size(jobs.len() as u64, runs, MAX_REPORT_JOBS as u64)?;
            let runs = pool.install(|| {
                prepared
                    .par_iter()
                    .map(|p| {
                        let r = p
                            .run_jobs(jobs.iter().copied(), &mut ())
                            .map_err(|e| refusal(e, runs))?;
                        bar.inc(1);
                        Ok((label(&r), r.jobs))
                    })
                    .collect::<Result<Vec<_>, CliError>>()
            })?;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let skipped = if skipped > 0 {
                format!(", {skipped} lines or jobs skipped")
            } else {
                String::new()
            };
            (
                runs,
                format!(
                    "trace {} ({} jobs{skipped})",
                    partalloc::topology::echo(&name),
                    jobs.len()
                ),
            )
        }
        None => {
            let runs = pool.install(|| {
                prepared
                    .par_iter()
                    .map(|p| {
                        let mut reports = p.run(&|_| (), &|| {}).map_err(|e| refusal(e, runs))?;
                        bar.inc(1);
                        let (r, ()) = reports.swap_remove(0);
                        Ok((label(&r), r.jobs))
                    })
                    .collect::<Result<Vec<_>, CliError>>()
            })?;
            let workload = prepared.first().map(Prepared::describe).unwrap_or_default();
            (runs, workload)
        }
    };
    bar.finish_and_clear();
    write_page(args, &topology, &runs, &workload)?;
    crate::output::emit(&format!(
        "report of {} runs written to {}\n",
        runs.len(),
        crate::error::shown(&args.output)
    ))
}

/// Refuses, before any run, a page holding more jobs than a report holds.
fn check_size(jobs: u64, runs: usize, limit: u64) -> Result<(), CliError> {
    let total = jobs.saturating_mul(runs as u64);
    if total > limit {
        return Err(CliError::input(format!(
            "{runs} runs of {jobs} jobs make {total} jobs, more than the {limit} a report holds: show fewer strategies or policies, or pass --jobs"
        )));
    }
    Ok(())
}

fn write_page(
    args: &Args,
    topology: &Topology,
    runs: &[(String, Vec<JobRecord>)],
    workload: &str,
) -> Result<(), CliError> {
    let views: Vec<RunView<'_>> = runs
        .iter()
        .map(|(label, jobs)| RunView::new(label, topology, jobs))
        .collect();
    let title = args.title.as_deref().map_or_else(
        || {
            format!(
                "partalloc report: {} on {}",
                workload,
                crate::show::machine_label(topology)
            )
        },
        |t| partalloc::topology::escaped(t).into_owned(),
    );
    let mut options = ReportOptions::titled(title);
    if let Some(n) = args.max_drawn {
        options = options.with_max_drawn(n);
    }
    let page = partalloc_report::render(&views, &options)
        .map_err(|e| CliError::input(format!("--output: {e}")))?;
    crate::output::write_atomic(&args.output, page.as_bytes())
}
