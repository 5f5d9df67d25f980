//! `partalloc replay`: a Standard Workload Format trace on a chosen machine,
//! contiguous strategies against non-contiguous allocation.
//!
//! Each processor count p of the trace becomes a request through
//! `ShapeMapping::for_topology` (the subcube Q_⌈log₂ p⌉ on a hypercube, the
//! most square box of at least p nodes on a mesh or torus). The reference
//! is `paging` with the plain count p: no contiguity and no rounding. The
//! reference is also run on the rounded shapes, which separates what the
//! rounding costs (internal fragmentation) from what contiguity costs
//! (external fragmentation).
//!
//! `--cores-per-node C` turns each processor count p into ⌈p / C⌉ nodes
//! first (machines whose jobs ask for nodes, such as racks of GPU nodes);
//! the counts of the report are then nodes. `--trace-format sacct` reads a
//! Slurm accounting dump (`sacct --parsable2`, see
//! `partalloc_workload::sacct`) instead of SWF: its counts are already
//! nodes, its service times End − Start; jobs that never ran are skipped.
//!
//! The offered load of the trace is Σ p·run time / (N · span), span = last
//! submit − first submit. `--load-scale F` divides every gap between
//! submits by F (the first submit stays), multiplying the offered load by
//! F; `--target-load ρ` chooses F so that the load of the counts is ρ.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use partalloc::allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc::schedulers::registry::{POLICIES, PolicySpec};
use partalloc::simkit::{JobRecord, Report, SimError};
use partalloc::topology::Topology;
use partalloc::workload::ShapeMapping;
use partalloc::workload::{Job, JobShape, TraceFormat, TraceMapping};
use partalloc_experiment::MachineSource;
use partalloc_experiment::experiment::{
    Experiment, ExperimentError, Prepared, TraceSource, WorkloadSource,
};
use partalloc_report::{ReportOptions, RunView};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::CliError;
use crate::output::{Format, csv_text, json_text, num, write_or_emit};
use crate::trace::{StreamEnd, TraceStream, read_sacct, read_trace};

/// Options of `partalloc replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trace (Standard Workload Format).
    trace: PathBuf,
    /// The machine to replay on, e.g. hypercube:7 or mesh:16x8.
    #[arg(long, short, long_help = partalloc_experiment::forms::topology_help())]
    topology: String,
    /// Contiguous strategies to compare, comma-separated or repeated
    /// (default: buddy, partner, multiple-gray-code on hypercubes; fsl,
    /// busy-list, adaptive-scan on meshes; the FGD paper's deterministic
    /// policies on a GPU-sharing cluster). Commas inside a spec's
    /// brackets, as in 'tas[mode=required,level=rack]', stay in the spec.
    #[arg(long, short)]
    allocators: Vec<String>,
    /// The non-contiguous reference strategy (default: paging;
    /// gpu-best-fit on a GPU-sharing cluster, where nodes hold many pods).
    #[arg(long)]
    reference: Option<String>,
    /// Scheduling policies, comma-separated or repeated: every strategy
    /// is replayed under each (default fcfs).
    #[arg(long, short)]
    scheduler: Vec<String>,
    #[command(flatten)]
    run: crate::run::RunFlags,
    /// Also write one CSV row per job of the first run (the first strategy
    /// under the first policy) here.
    #[arg(long, value_name = "FILE.csv")]
    jobs_csv: Option<PathBuf>,
    /// Divide the gaps between submits by this factor (load × factor).
    #[arg(long, conflicts_with = "target_load")]
    load_scale: Option<f64>,
    /// Scale the submits so that the offered load of the processor counts
    /// is this value.
    #[arg(long)]
    target_load: Option<f64>,
    /// Replay only the first N jobs.
    #[arg(long)]
    jobs: Option<usize>,
    /// Processors per node: a job of p processors asks for ⌈p / N⌉ nodes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    cores_per_node: Option<u32>,
    /// What the trace is (swf, sacct or openb).
    #[arg(long, value_name = "FORMAT", default_value_t = TraceFormat::Swf, long_help = TraceFormat::help())]
    trace_format: TraceFormat,
    /// Skip malformed lines and jobs that do not fit instead of stopping.
    #[arg(long)]
    lenient: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Also write an HTML page of the runs (a Gantt chart of every job on
    /// the machine's nodes, occupancy and queue over time, wait and
    /// slowdown distributions), one self-contained file.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Also write the first strategy's run (the first of --allocators, on
    /// its rounded requests) as Batsim's _jobs.csv, which evalys reads.
    #[arg(long, value_name = "FILE.csv")]
    batsim_jobs: Option<PathBuf>,
    /// Worker threads for the runs (default: one per core); the results do
    /// not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Do not draw a progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// One row of the mapping table: the processor counts that became one shape.
#[derive(Debug, Clone, Serialize)]
struct MappingRow {
    shape: String,
    processors_min: u64,
    processors_max: u64,
    jobs: u64,
    /// Σ p · run time of these jobs.
    processor_seconds: f64,
    /// Σ shape nodes · run time.
    node_seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
struct Loads {
    span: f64,
    scale: f64,
    /// Offered load of the processor counts, before scaling.
    original: f64,
    /// Offered load of the shapes (rounded up), before scaling.
    original_shapes: f64,
    /// After scaling.
    scaled: f64,
    /// After scaling, of the shapes.
    scaled_shapes: f64,
}

#[derive(Debug, Clone, Serialize)]
struct RunRow {
    allocator: String,
    scheduler: String,
    requests: &'static str,
    completed: u64,
    mean_response: f64,
    mean_wait: f64,
    mean_numerical_delay: f64,
    mean_topological_delay: f64,
    utilization: f64,
    processor_utilization: f64,
    miss_rate: f64,
    /// Mean response over the reference's (paging on counts).
    response_vs_reference: f64,
    /// Mean over jobs of the grant's mean pairwise hop distance (`None`
    /// on a machine without hop distances: nothing was measured).
    mean_pairwise_distance: Option<f64>,
    /// Mean over jobs of the grant's contiguous pieces (likewise).
    mean_pieces: Option<f64>,
    /// Mean bounded slowdown (`--slowdown-bound`).
    mean_bounded_slowdown: f64,
    /// Every quantity of the run, as `simulate` reports a replication
    /// (JSON only): the measures of the machine's family among them, with
    /// `measured` naming those taken.
    results: crate::metrics::Replication,
    /// The `frag` measure of a GPU-sharing cluster (absent elsewhere):
    /// time-average share of the GPUs allocated, fragmented GPUs and
    /// fragmented share of the idle GPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    frag: Option<[f64; 3]>,
}

#[derive(Debug, Serialize)]
struct Output {
    trace: String,
    jobs: usize,
    skipped_lines: u64,
    topology: String,
    nodes: usize,
    scheduler: String,
    mapping: Vec<MappingRow>,
    loads: Loads,
    runs: Vec<RunRow>,
}

/// The specs of a comma-separated list, split at the commas outside
/// brackets (a spec's parameters are comma-separated inside them); empty
/// items are kept, for the registry to refuse by name.
pub(crate) fn split_specs(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(list[start..i].to_owned());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(list[start..].to_owned());
    out
}

fn default_allocators(t: &Topology) -> Result<Vec<String>, CliError> {
    let v: &[&str] = if t.as_hypercube().is_some() {
        &["buddy", "partner", "multiple-gray-code"]
    } else if t.as_grid().is_some_and(|g| g.dims() == 2 && !g.is_torus()) {
        &["fsl", "busy-list", "adaptive-scan"]
    } else if t.as_gpushare().is_some() {
        &[
            "fgd",
            "gpu-best-fit",
            "dot-product",
            "gpu-packing",
            "gpu-clustering",
        ]
    } else {
        return Err(CliError::input(format!(
            "no default strategies for {t}; name them with --allocators (see partalloc strategies)"
        )));
    };
    Ok(v.iter().map(|s| (*s).to_owned()).collect())
}

/// Runs `partalloc replay`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let topology = crate::limits::machine("replay", &args.topology)?;
    let allocators = if args.allocators.is_empty() {
        default_allocators(&topology)?
    } else {
        args.allocators
            .iter()
            .flat_map(|a| split_specs(a))
            .collect()
    };
    // Parsed once at the edge, each error naming its flag.
    let reference = args.reference.clone().unwrap_or_else(|| {
        if topology.as_gpushare().is_some() {
            "gpu-best-fit".to_owned()
        } else {
            "paging".to_owned()
        }
    });
    let mut specs = Vec::with_capacity(allocators.len() + 1);
    for (flag, a) in allocators
        .iter()
        .map(|a| ("--allocators", a))
        .chain([("--reference", &reference)])
    {
        let spec = ALLOCATORS
            .spec(a)
            .map_err(|e| CliError::input(format!("{flag}: {e}")))?;
        specs.push((flag, spec));
    }
    let policies: Vec<String> = if args.scheduler.is_empty() {
        vec!["fcfs".to_owned()]
    } else {
        args.scheduler.iter().flat_map(|p| split_specs(p)).collect()
    };
    let mut schedulers = Vec::with_capacity(policies.len());
    for p in &policies {
        let spec = POLICIES
            .spec(p)
            .map_err(|e| CliError::input(format!("--scheduler: {e}")))?;
        schedulers.push(spec);
    }
    // (label, allocator); the reference is the last spec.
    let (reference_spec, shaped_specs) = specs
        .split_last()
        .ok_or_else(|| CliError::input("no allocator to replay"))?;
    // Per policy: the strategies on shapes, then the reference on counts
    // and on shapes.
    let mut runs: Vec<(&'static str, &(&str, AllocatorSpec), &PolicySpec)> = Vec::new();
    for p in &schedulers {
        runs.extend(shaped_specs.iter().map(|a| ("shapes", a, p)));
        runs.push(("counts", reference_spec, p));
        runs.push(("shapes", reference_spec, p));
    }
    // Each run is an experiment on the trace: its inputs guard the
    // outputs, and each is checked (measures, strategy and policy built on
    // the machine) before the trace is read.
    let model = crate::run::runtime_model(args.run.runtime_model.as_deref())?;
    let experiments: Vec<Experiment> = runs
        .iter()
        .map(|&(label, (_, allocator), policy)| {
            let mut exp = Experiment::new(
                MachineSource::parse(&args.topology),
                WorkloadSource::Trace(TraceSource {
                    path: args.trace.clone(),
                    format: args.trace_format,
                    // The counts' runs take plain node counts (of
                    // processors divided by --cores-per-node: the
                    // streamed source below maps them).
                    mapping: if label == "shapes" {
                        TraceMapping::Shapes
                    } else {
                        TraceMapping::Nodes
                    },
                    lenient: args.lenient,
                }),
                allocator.clone(),
                policy.clone(),
            );
            exp.measures = args.run.measure;
            // The run-time model as given: a replay has no seed of its own.
            exp.seed = 0;
            exp.runtime_model = model;
            exp.slowdown_bound = args.run.slowdown_bound;
            exp.stop.jobs = args.jobs.map(|n| u64::try_from(n).unwrap_or(u64::MAX));
            // A replay prints no search time: the runs read no clock.
            exp.search_time = false;
            exp
        })
        .collect();
    let outputs: Vec<(&str, &Path)> = [
        ("--output", &args.output),
        ("--report", &args.report),
        ("--batsim-jobs", &args.batsim_jobs),
        ("--jobs-csv", &args.jobs_csv),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.as_deref().map(|p| (flag, p)))
    .collect();
    if let (false, Some(exp)) = (outputs.is_empty(), experiments.first()) {
        let inputs = exp.inputs();
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        crate::output::check_outputs(&outputs, &inputs)?;
    }
    let prepared = experiments
        .iter()
        .zip(&runs)
        .map(|(exp, &(_, &(flag, _), _))| {
            exp.check_on(topology.clone()).map_err(|e| match e {
                ExperimentError::Measure(e) => CliError::input(format!("--measure: {e}")),
                ExperimentError::Sim(SimError::Allocator(e)) => {
                    CliError::input(format!("{flag}: {e}"))
                }
                ExperimentError::Sim(SimError::Scheduler(e)) => {
                    CliError::input(format!("--scheduler: {e}"))
                }
                e => run_error(e),
            })
        })
        .collect::<Result<Vec<Prepared>, CliError>>()?;
    let shaped = ShapeMapping::for_topology(&topology);
    let counts = match args.cores_per_node {
        Some(c) => ShapeMapping::nodes_of_cores(&topology, c)
            .map_err(|e| CliError::input(format!("--cores-per-node: {e}")))?,
        None => ShapeMapping::nodes_of(&topology),
    };
    // The trace is read once to survey it (the mapping table, the span
    // and the offered load, which the scale needs), then once more by
    // every run as it simulates: memory stays flat in the trace's length.
    // A trace that is not sorted by submit time, and a sacct dump, are
    // held in memory instead.
    let limit = args.jobs.unwrap_or(usize::MAX);
    let (source, survey, skipped) = match args.trace_format {
        TraceFormat::Sacct | TraceFormat::Openb => {
            let (mut jobs, skipped) = if args.trace_format == TraceFormat::Openb {
                partalloc_experiment::trace::read_openb(&args.trace, &topology)?
            } else {
                read_sacct(&args.trace, &topology, args.lenient)?
            };
            jobs.truncate(limit);
            let survey = Survey::of(&mut jobs.iter().copied(), &shaped)?;
            (Source::Memory(jobs), survey, skipped)
        }
        _ => {
            let mut stream = TraceStream::open(&args.trace, counts, args.lenient, limit)?;
            let survey = Survey::of(&mut stream, &shaped);
            // A malformed line anywhere comes first, as when the whole
            // trace was read before anything else.
            match stream.finish()? {
                StreamEnd::Sorted { jobs, skipped } => {
                    let survey = survey?;
                    if survey.jobs != jobs {
                        return Err(changed(&args.trace));
                    }
                    (Source::Stream, survey, skipped)
                }
                StreamEnd::Unsorted => {
                    let (mut jobs, _header, skipped) =
                        read_trace(&args.trace, counts, args.lenient)?;
                    jobs.truncate(limit);
                    let survey = Survey::of(&mut jobs.iter().copied(), &shaped)?;
                    (Source::Memory(jobs), survey, skipped)
                }
            }
        }
    };
    if survey.jobs == 0 {
        return Err(CliError::input(format!(
            "{}: the trace has no usable job",
            crate::error::shown(&args.trace)
        )));
    }
    let nodes = topology.num_nodes() as f64;
    let Survey {
        jobs: job_count,
        table,
        processor_seconds: proc_s,
        node_seconds: node_s,
        first,
        last,
    } = survey;
    let span = last - first;
    if span <= 0.0 {
        return Err(CliError::input(format!(
            "{}: every job is submitted at the same time; the offered load is undefined",
            crate::error::shown(&args.trace)
        )));
    }
    let original = proc_s / (nodes * span);
    let scale = match (args.load_scale, args.target_load) {
        (Some(f), _) => f,
        (None, Some(rho)) => rho / original,
        (None, None) => 1.0,
    };
    if !(scale.is_finite() && scale > 0.0) {
        return Err(CliError::input(format!(
            "the load scale {scale} must be a finite number greater than 0"
        )));
    }
    let loads = Loads {
        span,
        scale,
        original,
        original_shapes: node_s / (nodes * span),
        scaled: original * scale,
        scaled_shapes: node_s / (nodes * span) * scale,
    };

    let pool = crate::progress::pool(args.threads)?;
    let bar = crate::progress::bar(runs.len() as u64, "runs", args.quiet);
    let replay = Replay {
        trace: &args.trace,
        counts,
        shaped: &shaped,
        lenient: args.lenient,
        jobs: job_count,
        first,
        scale,
    };
    let keep = args.report.is_some() || args.batsim_jobs.is_some() || args.jobs_csv.is_some();
    let results: Result<Vec<(Report, f64, Vec<JobRecord>)>, CliError> = pool.install(|| {
        runs.par_iter()
            .zip(&prepared)
            .map(|(&(label, ..), prepared)| {
                let r = replay.run(prepared, label == "shapes", &source, keep);
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();
    let results = results?;
    if let Some(path) = &args.report {
        let labels: Vec<String> = results
            .iter()
            .zip(&runs)
            .map(|((r, ..), (requests, ..))| {
                format!("{} · {} ({requests})", r.allocator, r.scheduler)
            })
            .collect();
        let views: Vec<RunView<'_>> = results
            .iter()
            .zip(&labels)
            .map(|((_, _, records), label)| RunView::new(label, &topology, records))
            .collect();
        // The trace's file name, not its path: the page is read elsewhere.
        let name = args.trace.file_name().map_or_else(
            || args.trace.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let options = ReportOptions::titled(format!(
            "partalloc replay of {}",
            partalloc::topology::echo(&name)
        ));
        let page = partalloc_report::render(&views, &options)
            .map_err(|e| CliError::input(format!("--report: {e}")))?;
        write_or_emit(Some(path.as_path()), &page)?;
    }
    if let (Some(path), Some((first, _, records))) = (&args.batsim_jobs, results.first()) {
        let csv = partalloc_report::batsim::jobs_csv(&topology, &first.allocator, records)
            .map_err(|e| CliError::input(format!("--batsim-jobs: {e}")))?;
        write_or_emit(Some(path.as_path()), &csv)?;
    }
    if let (Some(path), Some((_, _, records))) = (&args.jobs_csv, results.first()) {
        let io = |e: partalloc::simkit::ReportError| {
            CliError::input(format!("{}: {e}", crate::error::shown(path)))
        };
        let mut rows = partalloc::simkit::JobCsvWriter::new(Vec::new())
            .map_err(io)?
            .on(&topology);
        for r in records {
            rows.write(r).map_err(io)?;
        }
        let buf = rows.finish().map_err(io)?;
        crate::output::write_atomic(path, &buf)?;
    }
    // Each run against the reference on counts under the same policy.
    let reference = |policy: &PolicySpec| {
        results
            .iter()
            .zip(&runs)
            .find(|(_, (l, _, p))| *l == "counts" && std::ptr::eq(*p, policy))
            .map_or(f64::NAN, |((r, ..), _)| r.results.mean_response)
    };
    // Dispersal where it was measured; elsewhere (Slurm and capacity
    // machines, or not asked for) its columns say so instead of 0.
    let rows: Vec<RunRow> = results
        .iter()
        .zip(&runs)
        .map(|((r, busy, _), (label, _, policy))| RunRow {
            allocator: r.allocator.clone(),
            scheduler: r.scheduler.clone(),
            requests: label,
            completed: r.results.completed,
            mean_response: r.results.mean_response,
            mean_wait: r.results.mean_wait,
            mean_numerical_delay: r.results.mean_numerical_delay,
            mean_topological_delay: r.results.mean_topological_delay,
            utilization: r.results.utilization,
            processor_utilization: if r.results.span > 0.0 {
                busy / (nodes * r.results.span)
            } else {
                0.0
            },
            miss_rate: r.results.miss_rate,
            response_vs_reference: r.results.mean_response / reference(policy),
            mean_pairwise_distance: r
                .results
                .was_measured("mean_pairwise_distance")
                .then_some(r.results.mean_pairwise_distance),
            mean_pieces: r
                .results
                .was_measured("mean_pieces")
                .then_some(r.results.mean_pieces),
            mean_bounded_slowdown: r.results.mean_bounded_slowdown,
            results: crate::metrics::Replication(r.results),
            frag: r.results.was_measured("mean_frag_gpus").then_some([
                r.results.mean_gpu_allocation,
                r.results.mean_frag_gpus,
                r.results.mean_frag_ratio,
            ]),
        })
        .collect();
    let out = Output {
        trace: args.trace.display().to_string(),
        jobs: job_count,
        skipped_lines: skipped,
        topology: topology.to_string(),
        nodes: topology.num_nodes(),
        scheduler: schedulers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        mapping: table.into_values().collect(),
        loads,
        runs: rows,
    };
    let text = render(&out, args.format)?;
    write_or_emit(args.output.as_deref(), &text)
}

/// Where the runs read their jobs from.
#[derive(Debug)]
enum Source {
    /// The trace file again, streamed (it is sorted by submit time).
    Stream,
    /// Jobs held in memory (an unsorted trace, a sacct dump).
    Memory(Vec<Job>),
}

/// What one pass over the trace's jobs (on processor counts) tells.
#[derive(Debug)]
struct Survey {
    jobs: usize,
    table: BTreeMap<(u64, String), MappingRow>,
    /// Σ p · run time.
    processor_seconds: f64,
    /// Σ shape nodes · run time.
    node_seconds: f64,
    first: f64,
    last: f64,
}

impl Survey {
    fn of(jobs: &mut dyn Iterator<Item = Job>, shaped: &ShapeMapping) -> Result<Self, CliError> {
        let mut s = Self {
            jobs: 0,
            table: BTreeMap::new(),
            processor_seconds: 0.0,
            node_seconds: 0.0,
            first: 0.0,
            last: 0.0,
        };
        for j in jobs {
            let p = j.nodes();
            // A pod keeps its own request (one row for all of them).
            let (shape, label) = if matches!(j.shape, JobShape::Pod { .. }) {
                (j.shape, "pod".to_owned())
            } else {
                let shape = shaped
                    .shape_for(p)
                    .map_err(|e| CliError::input(format!("job {}: {e}", j.id)))?;
                (shape, shape.to_string())
            };
            let k = shape.node_count();
            let row = s
                .table
                .entry((k, label.clone()))
                .or_insert_with(|| MappingRow {
                    shape: label,
                    processors_min: p,
                    processors_max: p,
                    jobs: 0,
                    processor_seconds: 0.0,
                    node_seconds: 0.0,
                });
            row.processors_min = row.processors_min.min(p);
            row.processors_max = row.processors_max.max(p);
            row.jobs += 1;
            row.processor_seconds += p as f64 * j.service;
            row.node_seconds += k as f64 * j.service;
            s.processor_seconds += p as f64 * j.service;
            s.node_seconds += k as f64 * j.service;
            if s.jobs == 0 {
                s.first = j.arrival;
            }
            s.last = j.arrival;
            s.jobs += 1;
        }
        Ok(s)
    }
}

/// A run's error, as the tool words it.
fn run_error(e: ExperimentError) -> CliError {
    match e {
        ExperimentError::Source(e) => e.into(),
        ExperimentError::Sim(e) => e.into(),
        e => CliError::input(e.to_string()),
    }
}

fn changed(trace: &Path) -> CliError {
    CliError::input(format!(
        "{}: the trace changed while it was replayed; replay a file nothing writes to",
        crate::error::shown(trace)
    ))
}

/// What every run of a replay shares.
#[derive(Debug)]
struct Replay<'a> {
    trace: &'a Path,
    counts: ShapeMapping,
    shaped: &'a ShapeMapping,
    lenient: bool,
    /// Jobs the survey counted.
    jobs: usize,
    first: f64,
    scale: f64,
}

impl Replay<'_> {
    /// One run: the trace's jobs with scaled submits, on their rounded
    /// shapes (`shapes`) or their processor counts. Returns the report,
    /// Σ p·(end − start) over the jobs, p the trace's processor count,
    /// summed in completion order, and the jobs' records if `keep`.
    fn run(
        &self,
        prepared: &Prepared,
        shapes: bool,
        source: &Source,
        keep: bool,
    ) -> Result<(Report, f64, Vec<JobRecord>), CliError> {
        let mut stream = match source {
            Source::Stream => Some(TraceStream::open(
                self.trace,
                self.counts,
                self.lenient,
                self.jobs,
            )?),
            Source::Memory(_) => None,
        };
        let raw: Box<dyn Iterator<Item = Job> + '_> = match (&mut stream, source) {
            (Some(s), _) => Box::new(s),
            (None, Source::Memory(jobs)) => Box::new(jobs.iter().copied()),
            (None, Source::Stream) => Box::new(std::iter::empty()),
        };
        // The processor counts of the jobs in the system, by id (ids are
        // unique in a run), until their records come back.
        let in_flight: RefCell<HashMap<u64, u64>> = RefCell::new(HashMap::new());
        let yielded = Cell::new(0usize);
        let jobs = raw.map_while(|j| {
            let p = j.nodes();
            let j = j.with_arrival(self.first + (j.arrival - self.first) / self.scale);
            let j = if shapes && !matches!(j.shape, JobShape::Pod { .. }) {
                j.with_shape(self.shaped.shape_for(p).ok()?)
            } else {
                j
            };
            in_flight.borrow_mut().insert(j.id, p);
            yielded.set(yielded.get() + 1);
            Some(j)
        });
        let mut busy = 0.0;
        let mut kept = Vec::new();
        let report = prepared
            .run_jobs_recorded(
                jobs,
                &mut (),
                Some(&mut |r| {
                    let p = in_flight.borrow_mut().remove(&r.id).unwrap_or(0);
                    busy += p as f64 * (r.end - r.start);
                    if keep {
                        kept.push(r);
                    }
                }),
            )
            .map_err(run_error)?;
        if let Some(s) = stream {
            match s.finish()? {
                StreamEnd::Sorted { jobs, .. } if jobs == self.jobs => {}
                _ => return Err(changed(self.trace)),
            }
        }
        if yielded.get() != self.jobs {
            return Err(changed(self.trace));
        }
        Ok((report, busy, kept))
    }
}

/// `x` as Rust prints it when that is short (1.5), else [`num`].
fn short(x: f64) -> String {
    let s = x.to_string();
    if s.len() <= 8 { s } else { num(x) }
}

fn render(out: &Output, format: Format) -> Result<String, CliError> {
    match format {
        Format::Json => json_text(out),
        Format::Csv => {
            let rows: Vec<Vec<String>> = out
                .runs
                .iter()
                .map(|r| {
                    vec![
                        r.allocator.clone(),
                        r.requests.to_owned(),
                        r.completed.to_string(),
                        r.mean_response.to_string(),
                        r.mean_wait.to_string(),
                        r.mean_numerical_delay.to_string(),
                        r.mean_topological_delay.to_string(),
                        r.utilization.to_string(),
                        r.processor_utilization.to_string(),
                        r.miss_rate.to_string(),
                        r.response_vs_reference.to_string(),
                        r.mean_pairwise_distance
                            .map_or_else(String::new, |v| v.to_string()),
                        r.mean_pieces.map_or_else(String::new, |v| v.to_string()),
                        r.mean_bounded_slowdown.to_string(),
                        r.scheduler.clone(),
                    ]
                })
                .collect();
            csv_text(
                &[
                    "allocator",
                    "requests",
                    "completed",
                    "mean_response",
                    "mean_wait",
                    "mean_numerical_delay",
                    "mean_topological_delay",
                    "utilization",
                    "processor_utilization",
                    "miss_rate",
                    "response_vs_reference",
                    "mean_pairwise_distance",
                    "mean_pieces",
                    "mean_bounded_slowdown",
                    "scheduler",
                ],
                &rows,
            )
        }
        Format::Text => {
            let mut s = String::new();
            let skipped = if out.skipped_lines > 0 {
                format!(", {} malformed lines skipped", out.skipped_lines)
            } else {
                String::new()
            };
            let _ = writeln!(s, "trace      {} ({} jobs{skipped})", out.trace, out.jobs);
            let _ = writeln!(s, "machine    {} ({} nodes)", out.topology, out.nodes);
            let _ = writeln!(s, "scheduler  {}", out.scheduler);
            let _ = writeln!(s);
            let _ = writeln!(s, "processor counts → requests");
            let _ = writeln!(
                s,
                "  {:>11}  {:<10} {:>7}  {:>14}  {:>14}",
                "processors", "request", "jobs", "proc·time", "node·time"
            );
            for m in &out.mapping {
                let range = if m.processors_min == m.processors_max {
                    m.processors_min.to_string()
                } else {
                    format!("{}–{}", m.processors_min, m.processors_max)
                };
                let _ = writeln!(
                    s,
                    "  {range:>11}  {:<10} {:>7}  {:>14}  {:>14}",
                    m.shape,
                    m.jobs,
                    num(m.processor_seconds),
                    num(m.node_seconds)
                );
            }
            let l = &out.loads;
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "offered load  Σ p·run / (N · span), span {} (the trace's time unit; seconds in SWF)",
                num(l.span)
            );
            let _ = writeln!(
                s,
                "  trace as recorded     {} of the processor counts, {} of the rounded requests",
                num(l.original),
                num(l.original_shapes)
            );
            let _ = writeln!(
                s,
                "  submits scaled ×{}  {} of the processor counts, {} of the rounded requests",
                short(l.scale),
                num(l.scaled),
                num(l.scaled_shapes)
            );
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "{:<22} {:<8} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8} {:>9} {:>8} {:>6} {:>9}",
                "allocator",
                "requests",
                "response",
                "wait",
                "numerical",
                "topological",
                "util",
                "p-util",
                "miss",
                "vs ref",
                "distance",
                "pieces",
                "bsld"
            );
            let several = out
                .runs
                .iter()
                .any(|r| r.scheduler != out.runs[0].scheduler);
            for r in &out.runs {
                let allocator = if several {
                    format!("{} · {}", r.allocator, r.scheduler)
                } else {
                    r.allocator.clone()
                };
                let _ = writeln!(
                    s,
                    "{:<22} {:<8} {:>12} {:>12} {:>12} {:>12} {:>8.4} {:>8.4} {:>8.4} {:>9.3} {:>8} {:>6} {:>9.3}",
                    allocator,
                    r.requests,
                    num(r.mean_response),
                    num(r.mean_wait),
                    num(r.mean_numerical_delay),
                    num(r.mean_topological_delay),
                    r.utilization,
                    r.processor_utilization,
                    r.miss_rate,
                    r.response_vs_reference,
                    r.mean_pairwise_distance
                        .map_or_else(|| "–".to_owned(), |v| format!("{v:.3}")),
                    r.mean_pieces
                        .map_or_else(|| "–".to_owned(), |v| format!("{v:.2}")),
                    r.mean_bounded_slowdown
                );
            }
            if out.runs.iter().any(|r| r.frag.is_some()) {
                let _ = writeln!(
                    s,
                    "\n{:<22} {:<8} {:>9} {:>10} {:>10}",
                    "allocator", "requests", "gpu-alloc", "frag-gpus", "frag-ratio"
                );
                for r in &out.runs {
                    if let Some([a, f, q]) = r.frag {
                        let _ = writeln!(
                            s,
                            "{:<22} {:<8} {a:>9.4} {f:>10.3} {q:>10.4}",
                            r.allocator, r.requests
                        );
                    }
                }
            }
            let _ = writeln!(
                s,
                "\nutil: granted node·time / (N·span); p-util: the trace's processors only; vs ref: mean response over the reference on processor counts; distance: mean pairwise hop distance of a grant; pieces: its contiguous pieces; bsld: mean bounded slowdown (--slowdown-bound)"
            );
            Ok(s)
        }
    }
}
