//! What contiguity costs and what dispersal costs
//! (docs/reproduction.md#dispersal): on a 16×16 and an 8×8×8 mesh, the
//! contiguous strategies (free submesh list; first fit on 2-D) against the
//! non-contiguous ones (MBS, Hilbert-curve best fit, MC1x1, GABL, paging),
//! over the NASA iPSC/860 trace and generated loads, without a run-time
//! model, with SST's allocation-based timing at its sample parameters, and
//! with the linear model at a range of coefficients: mean wait, mean
//! response, utilization and mean pairwise distance, and the coefficient
//! at which contiguity starts to win.
//!
//! Every strategy and model sees the same jobs (common random numbers:
//! the stream depends on the machine, the workload and the replication
//! only; the SST model's per-job r on the job's id).

use std::fmt::Write as _;
use std::path::Path;

use partalloc_allocators::registry::ALLOCATORS;
use partalloc_schedulers::registry::POLICIES;
use partalloc_simkit::plot::{Chart, Series, write_svg};
use partalloc_simkit::{
    ConfidenceInterval, Report, RuntimeModel, SimConfig, SimError, Simulation, replication_rng,
};
use partalloc_topology::Topology;
use partalloc_workload::{
    Arrivals, DemandLaw, Dependence, Job, ShapeLaw, ShapeMapping, WorkloadSpec,
};
use rayon::prelude::*;

use super::pods::{CLAIM_COLUMNS, ci, csv_num, table_head};
use super::{Ctx, FigError, Figure, FigureKind, Scale};

pub(crate) const FIGURE: Figure = Figure {
    id: "dispersal",
    paper: "Lo et al. 1997; Leung et al. 2002; SST",
    summary: "contiguous vs non-contiguous allocation on 16×16 and 8×8×8 meshes, without and with a run-time cost of dispersal: wait, utilization, pairwise distance",
    kind: FigureKind::Custom(run),
};

/// Strategies as (label, registry name).
type Strategies = &'static [(&'static str, &'static str)];

/// The machines: (id, machine, contiguous strategies).
const MACHINES: [(&str, &str, Strategies); 2] = [
    (
        "2d",
        "mesh:16x16",
        &[("FSL", "fsl"), ("first fit", "first-fit")],
    ),
    ("3d", "mesh:8x8x8", &[("FSL", "fsl-3d")]),
];

/// The non-contiguous strategies: (label, registry name).
const SCATTERED: [(&str, &str); 5] = [
    ("MBS", "mbs"),
    ("Hilbert best fit", "curve-best-fit[order=hilbert]"),
    ("MC1x1", "mc1x1"),
    ("GABL", "gabl"),
    ("paging", "paging"),
];

/// SST's sample `timeperdistance` (its scheduler element's test inputs).
const SST_SAMPLE: &str = "sst:.001865[.1569,.0129]";

/// The NASA Ames iPSC/860 trace (Feitelson's Parallel Workloads Archive).
const NASA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../data/traces/NASA-iPSC-1993-3.1-cln.swf"
);

/// Offered load the trace's submits are scaled to on each machine.
const TRACE_LOAD: f64 = 0.4;

/// Mean service of the generated jobs, in seconds (whole seconds matter to
/// SST's model, which rounds run times up).
const GENERATED_MEAN_SERVICE: f64 = 600.0;

/// A workload: the trace or generated jobs at a load.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Load {
    Trace,
    Generated(f64),
}

impl Load {
    fn id(self) -> String {
        match self {
            Self::Trace => "nasa".to_owned(),
            Self::Generated(l) => format!("load-{l}"),
        }
    }
}

/// A run-time model of the sweep: none, SST's sample or linear at K.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Model {
    None,
    Sst,
    Linear(f64),
}

impl Model {
    fn id(self) -> String {
        match self {
            Self::None => "none".to_owned(),
            Self::Sst => SST_SAMPLE.to_owned(),
            Self::Linear(k) => format!("linear:{k}"),
        }
    }

    /// The linear coefficient the model stands at on the charts (none = 0).
    fn coefficient(self) -> Option<f64> {
        match self {
            Self::None => Some(0.0),
            Self::Linear(k) => Some(k),
            Self::Sst => None,
        }
    }

    fn build(self) -> Result<Option<RuntimeModel>, FigError> {
        match self {
            Self::None => Ok(None),
            other => other
                .id()
                .parse()
                .map(Some)
                .map_err(|e| FigError::Setup(format!("{e}"))),
        }
    }
}

/// One (machine, workload, model, strategy) point over the replications.
#[derive(Debug, Clone)]
struct Point {
    machine: &'static str,
    load: Load,
    model: Model,
    label: &'static str,
    contiguous: bool,
    wait: ConfidenceInterval,
    response: ConfidenceInterval,
    utilization: ConfidenceInterval,
    distance: ConfidenceInterval,
    service: ConfidenceInterval,
}

fn coefficients(ctx: &Ctx) -> Vec<f64> {
    match ctx.scale {
        Scale::Quick => vec![1.0, 8.0],
        _ => vec![0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
    }
}

/// The trace's first `n` jobs as most-square boxes of `topology`, submits
/// scaled so that the offered load is [`TRACE_LOAD`].
fn trace_jobs(topology: &Topology, n: usize) -> Result<Vec<Job>, FigError> {
    let t =
        partalloc_simkit::read_trace(Path::new(NASA), ShapeMapping::for_topology(topology), true)
            .map_err(|e| FigError::Setup(e.to_string()))?;
    let mut jobs = t.jobs;
    jobs.truncate(n);
    let (Some(first), Some(last)) = (jobs.first(), jobs.last()) else {
        return Err(FigError::Setup("the NASA trace has no job".to_owned()));
    };
    let (t0, span) = (first.arrival, last.arrival - first.arrival);
    let work: f64 = jobs.iter().map(|j| j.nodes() as f64 * j.service).sum();
    let offered = work / (topology.num_nodes() as f64 * span.max(1.0));
    let stretch = offered / TRACE_LOAD;
    Ok(jobs
        .into_iter()
        .map(|j| j.with_arrival(t0 + (j.arrival - t0) * stretch))
        .collect())
}

/// The jobs of replication `rep` of `load` on `topology`.
fn jobs_of(
    topology: &Topology,
    load: Load,
    (seed, rep): (u64, u64),
    n: usize,
    trace: &[Job],
) -> Result<Vec<Job>, FigError> {
    match load {
        Load::Trace => Ok(trace.to_vec()),
        Load::Generated(l) => {
            let w = WorkloadSpec {
                arrivals: Arrivals::Load(l),
                shapes: "sides:uniform".parse::<ShapeLaw>()?,
                demand: DemandLaw::Exponential {
                    mean: GENERATED_MEAN_SERVICE,
                },
                dependence: Dependence::Dependent,
                allow_saturation: false,
            }
            .build(topology)?;
            let mut rng = replication_rng(seed, rep);
            Ok(w.jobs(&mut rng).take(n).collect())
        }
    }
}

fn simulate(
    topology: &Topology,
    strategy: &str,
    jobs: Vec<Job>,
    model: Option<RuntimeModel>,
    warmup: u64,
) -> Result<Report, FigError> {
    let config = SimConfig {
        warmup,
        measure_search_time: false,
        ..SimConfig::default()
    };
    let mut sim = Simulation::from_specs(
        topology.clone(),
        &ALLOCATORS.spec(strategy).map_err(SimError::from)?,
        &POLICIES.spec("fcfs").map_err(SimError::from)?,
        jobs,
        config,
    )?;
    if let Some(m) = model {
        sim = sim.with_runtime_model(m)?;
    }
    Ok(sim.run()?)
}

fn run(ctx: &Ctx) -> Result<(), FigError> {
    let reps = ctx.reps(1, 3, 5);
    let jobs = ctx.jobs(400, 2000, 5000);
    let n = usize::try_from(jobs).unwrap_or(usize::MAX);
    let warmup = jobs / 10;
    let mut models = vec![Model::None, Model::Sst];
    models.extend(coefficients(ctx).into_iter().map(Model::Linear));
    // Low loads too: above about 0.5 the contiguous strategies saturate
    // (their queues grow without bound) and no coefficient changes that.
    let loads = [Load::Trace, Load::Generated(0.2), Load::Generated(0.5)];
    let pool = partalloc_simkit::thread_pool(ctx.args.threads)?;
    let mut tasks = Vec::new();
    for (mi, &(machine, name, contiguous)) in MACHINES.iter().enumerate() {
        let strategies: Vec<(&'static str, &'static str, bool)> = contiguous
            .iter()
            .map(|&(l, s)| (l, s, true))
            .chain(SCATTERED.iter().map(|&(l, s)| (l, s, false)))
            .collect();
        for (li, &load) in loads.iter().enumerate() {
            for &model in &models {
                for &(label, strategy, contiguous) in &strategies {
                    let seed = ctx.args.seed.wrapping_add(100 * mi as u64 + li as u64);
                    tasks.push((
                        machine, name, load, model, label, strategy, contiguous, seed,
                    ));
                }
            }
        }
    }
    let topologies: Vec<Topology> = MACHINES
        .iter()
        .map(|m| m.1.parse())
        .collect::<Result<_, _>>()?;
    let traces: Vec<Vec<Job>> = topologies
        .iter()
        .map(|t| trace_jobs(t, n))
        .collect::<Result<_, _>>()?;
    let points: Vec<Point> = pool.install(|| {
        tasks
            .par_iter()
            .map(
                |&(machine, name, load, model, label, strategy, contiguous, seed)| {
                    let mi = MACHINES.iter().position(|m| m.1 == name).unwrap_or(0);
                    let topology = &topologies[mi];
                    let runs = if load == Load::Trace { 1 } else { reps };
                    let mut reports = Vec::new();
                    for rep in 0..runs {
                        let js = jobs_of(topology, load, (seed, rep), n, &traces[mi])?;
                        let m = model.build()?.map(|m| m.seeded(seed ^ rep));
                        let warm = if load == Load::Trace { 0 } else { warmup };
                        reports.push(simulate(topology, strategy, js, m, warm)?);
                    }
                    let pick = |f: fn(&Report) -> f64| -> Result<ConfidenceInterval, FigError> {
                        ci(&reports.iter().map(f).collect::<Vec<_>>())
                    };
                    Ok(Point {
                        machine,
                        load,
                        model,
                        label,
                        contiguous,
                        wait: pick(|r| r.results.mean_wait)?,
                        response: pick(|r| r.results.mean_response)?,
                        utilization: pick(|r| r.results.utilization)?,
                        distance: pick(|r| r.results.mean_pairwise_distance)?,
                        service: pick(|r| r.results.mean_service)?,
                    })
                },
            )
            .collect::<Result<Vec<_>, FigError>>()
    })?;
    write_outputs(ctx, &points, &loads, &models, reps, jobs)
}

fn write_outputs(
    ctx: &Ctx,
    points: &[Point],
    loads: &[Load],
    models: &[Model],
    reps: u64,
    jobs: u64,
) -> Result<(), FigError> {
    let dir = &ctx.args.out;
    let mut csv = String::from(
        "machine,workload,runtime_model,allocator,contiguous,mean_wait,mean_wait_ci95,mean_response,mean_response_ci95,utilization,utilization_ci95,mean_pairwise_distance,mean_pairwise_distance_ci95,mean_service,mean_service_ci95\n",
    );
    for p in points {
        let cols = [
            &p.wait,
            &p.response,
            &p.utilization,
            &p.distance,
            &p.service,
        ]
        .map(csv_num)
        .map(|(m, h)| format!("{m},{h}"))
        .join(",");
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{cols}",
            p.machine,
            p.load.id(),
            p.model.id(),
            p.label,
            p.contiguous
        );
    }
    let write = |name: &str, text: &str| super::write_text(dir, name, text);
    write("dispersal.csv", &csv)?;
    for (machine, name, _) in MACHINES {
        for &load in loads {
            let labels: Vec<&str> = points
                .iter()
                .filter(|p| p.machine == machine && p.load == load && p.model == Model::None)
                .map(|p| p.label)
                .collect();
            let series = labels
                .iter()
                .map(|&label| Series {
                    label: label.to_owned(),
                    points: points
                        .iter()
                        .filter(|p| p.machine == machine && p.load == load && p.label == label)
                        .filter_map(|p| {
                            let k = p.model.coefficient()?;
                            Some((k, p.response.mean, p.response.half_width.unwrap_or(0.0)))
                        })
                        .collect(),
                })
                .collect();
            let chart = Chart {
                title: format!(
                    "{name}, {}: mean response vs linear dispersal cost",
                    load.id()
                ),
                x_label: "Coefficient K of the linear run-time model".to_owned(),
                y_label: "Mean response time (s)".to_owned(),
                series,
                y_max: None,
            };
            write_svg(
                &chart,
                &dir.join(format!("dispersal-{machine}-{}.svg", load.id())),
            )?;
        }
    }
    let text = report(points, loads, models, reps, jobs);
    print!("{text}");
    write("dispersal.txt", &text)
}

/// The best contiguous and the best non-contiguous point by `key`.
fn best<'a>(
    points: &'a [Point],
    machine: &str,
    load: Load,
    model: Model,
    key: fn(&Point) -> f64,
) -> Option<(&'a Point, &'a Point)> {
    let of = |contiguous: bool| {
        points
            .iter()
            .filter(|p| {
                p.machine == machine
                    && p.load == load
                    && p.model == model
                    && p.contiguous == contiguous
            })
            .min_by(|a, b| key(a).total_cmp(&key(b)))
    };
    Some((of(true)?, of(false)?))
}

/// The tables and the claims, as printed and written to dispersal.txt.
fn report(points: &[Point], loads: &[Load], models: &[Model], reps: u64, jobs: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## dispersal — FCFS; generated: {jobs} jobs per run (first 10% warm-up), {reps} replication(s), side lengths uniform, exponential service (mean {GENERATED_MEAN_SERVICE} s); NASA iPSC/860 trace: first {jobs} jobs as most-square boxes, submits scaled to offered load {TRACE_LOAD}\n"
    );
    for (machine, name, _) in MACHINES {
        for &load in loads {
            let _ = writeln!(out, "### {name}, {}\n", load.id());
            table_head(
                &mut out,
                &[
                    "run-time model",
                    "allocator",
                    "mean wait",
                    "mean response",
                    "utilization",
                    "mean pairwise distance",
                ],
            );
            for p in points
                .iter()
                .filter(|p| p.machine == machine && p.load == load)
            {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1} | {:.1} | {:.3} | {:.2} |",
                    p.model.id(),
                    p.label,
                    p.wait.mean,
                    p.response.mean,
                    p.utilization.mean,
                    p.distance.mean
                );
            }
            let _ = writeln!(out);
        }
    }
    let _ = writeln!(out, "### Claims\n");
    table_head(&mut out, &CLAIM_COLUMNS);
    let wait = |p: &Point| p.wait.mean;
    let response = |p: &Point| p.response.mean;
    for (machine, name, _) in MACHINES {
        for &load in loads {
            let case = format!("{name}, {}", load.id());
            if let Some((c, s)) = best(points, machine, load, Model::None, wait) {
                let _ = writeln!(
                    out,
                    "| {case}: when dispersal costs nothing, non-contiguous allocation waits less than contiguous (Lo et al., IEEE TPDS 1997) | best non-contiguous {} {:.1} s vs best contiguous {} {:.1} s | {} |",
                    s.label,
                    s.wait.mean,
                    c.label,
                    c.wait.mean,
                    if s.wait.mean <= c.wait.mean {
                        "holds"
                    } else {
                        "does not hold"
                    }
                );
                let _ = writeln!(
                    out,
                    "| {case}: the price is dispersal — scattered grants' nodes are farther apart (Leung et al., Cluster 2002) | mean pairwise distance {:.2} ({}) vs {:.2} ({}) | {} |",
                    s.distance.mean,
                    s.label,
                    c.distance.mean,
                    c.label,
                    if s.distance.mean >= c.distance.mean {
                        "holds"
                    } else {
                        "does not hold"
                    }
                );
            }
            // Where the answer turns: the least coefficient of the sweep
            // at which the best contiguous strategy responds no slower.
            let turn = models.iter().filter_map(|&m| {
                let k = m.coefficient()?;
                let (c, s) = best(points, machine, load, m, response)?;
                (c.response.mean <= s.response.mean).then_some(k)
            });
            let turned = turn.fold(None, |a: Option<f64>, k| Some(a.map_or(k, |a| a.min(k))));
            let largest = models
                .iter()
                .filter_map(|m| m.coefficient())
                .fold(0.0, f64::max);
            let _ = writeln!(
                out,
                "| {case}: the linear cost coefficient K at which contiguity starts to win on mean response | {} | measured |",
                turned.map_or_else(
                    || format!("non-contiguous still ahead at K = {largest}"),
                    |k| format!("K = {k}")
                )
            );
            if let Some((c, s)) = best(points, machine, load, Model::Sst, response) {
                let _ = writeln!(
                    out,
                    "| {case}: with SST's sample timing {SST_SAMPLE} | best non-contiguous {} {:.1} s vs best contiguous {} {:.1} s mean response | {} |",
                    s.label,
                    s.response.mean,
                    c.label,
                    c.response.mean,
                    if c.response.mean <= s.response.mean {
                        "contiguous wins"
                    } else {
                        "non-contiguous wins"
                    }
                );
            }
        }
    }
    out
}
