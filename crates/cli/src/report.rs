//! `partalloc report`: one workload under several strategies and policies,
//! written as one HTML page with the runs side by side (the Gantt chart on
//! the machine, the curves over time, the distributions and the summary on
//! shared axes).

use std::path::PathBuf;

use partalloc::simkit::{JobRecord, Replications, SimConfig, Stop};
use partalloc::topology::Topology;
use partalloc_report::{MAX_REPORT_JOBS, ReportOptions, RunView};
use rayon::prelude::*;

use crate::error::CliError;
use crate::run::{Keep, Strategies, run_generated};
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
    #[command(flatten)]
    run: crate::run::RunFlags,
    /// Jobs measured (generated workload; default 1000), or the first jobs
    /// of the trace (default: all).
    #[arg(long)]
    jobs: Option<u64>,
    /// Completed jobs discarded before measuring.
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Master seed of the generated workload (replication 0 of it, as
    /// `simulate`'s first seed).
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

/// Runs `partalloc report`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let topology = crate::limits::machine("report", &args.topology)?;
    let machine_files = crate::run::topology_files(&args.topology);
    let inputs: Vec<&std::path::Path> = args
        .trace
        .trace
        .as_deref()
        .into_iter()
        .chain(machine_files.iter().map(std::path::PathBuf::as_path))
        .collect();
    crate::output::check_outputs(&[("--output", args.output.as_path())], &inputs)?;
    let measures = args
        .run
        .measure
        .resolve(&topology)
        .map_err(|e| CliError::input(format!("--measure: {e}")))?;
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
    let pairs: Vec<Strategies> = schedulers
        .iter()
        .flat_map(|s| allocators.iter().map(move |a| Strategies::parse(a, s)))
        .collect();
    // Each pair built once here: a bad name fails before anything runs.
    for p in &pairs {
        p.checked(&topology)?;
    }
    let model = crate::run::runtime_model(args.run.runtime_model.as_deref())?;
    let limit = MAX_REPORT_JOBS as u64;
    let base = SimConfig {
        stop: Stop::default(),
        warmup: args.warmup,
        record_jobs: true,
        measure_search_time: false,
        slowdown_bound: args.run.slowdown_bound,
        measures,
    };
    let pool = crate::progress::pool(args.threads)?;
    let bar = crate::progress::bar(pairs.len() as u64, "runs", args.quiet);
    let (runs, workload): (Vec<(String, Vec<JobRecord>)>, String) = match &args.trace.trace {
        Some(path) => {
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
            check_size(jobs.len() as u64, pairs.len(), limit)?;
            let runs = pool.install(|| {
                pairs
                    .par_iter()
                    .map(|p| {
                        let mut sim = p.simulation(&topology, jobs.iter().copied(), base)?;
                        if let Some(m) = model {
                            sim = sim.with_runtime_model(m.seeded(args.seed))?;
                        }
                        let r = sim.run()?;
                        bar.inc(1);
                        Ok((format!("{} · {}", r.allocator, r.scheduler), r.jobs))
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
            let spec = args.workload.spec(args.jobs.unwrap_or(1000), args.warmup);
            crate::workload::check(&spec)?;
            check_size(spec.jobs, pairs.len(), limit)?;
            let w = spec.build(&topology, args.workload.load)?;
            let runs = pool.install(|| {
                pairs
                    .par_iter()
                    .map(|p| {
                        let reps = Replications::new(args.seed, 1)
                            .map_err(|e| CliError::input(format!("--seed: {e}")))?
                            .with_runtime_model(model);
                        let (mut reports, _) = run_generated(
                            p.checked(&topology)?,
                            &w,
                            &spec,
                            reps,
                            base,
                            Keep {
                                records: true,
                                grants: false,
                            },
                            &|| {},
                        )?;
                        bar.inc(1);
                        let r = reports.swap_remove(0);
                        Ok((format!("{} · {}", r.allocator, r.scheduler), r.jobs))
                    })
                    .collect::<Result<Vec<_>, CliError>>()
            })?;
            (runs, spec.describe(&topology, args.workload.load))
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
