//! Accelerator pods (docs/pods.md): mean wait, utilization and stranded
//! chips versus offered load on a 3-D pod of 4×4×4 cubes and on a 2-D pod,
//! for static wiring with first fit, static wiring with the
//! catalogue-keeping best fit, and reconfigurable (optically switched)
//! wiring; with what the public descriptions of such pods claim next to
//! what is measured.
//!
//! Every run offers the same jobs to the three strategies (common random
//! numbers: the stream depends on the pod, the load and the replication
//! only) and runs them all to completion under FCFS, so the job records
//! hold every placement; stranded chips are averaged over evenly spaced
//! times (`partalloc_simkit::pod`), judged by each strategy's own
//! placement rules.

use std::fmt::Write as _;

use partalloc_allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc_experiment::MachineSource;
use partalloc_experiment::experiment::{DrawnSource, Experiment, WorkloadSource};
use partalloc_schedulers::registry::POLICIES;
use partalloc_simkit::observe::GrantLog;
use partalloc_simkit::plot::{Chart, Series, write_svg};
use partalloc_simkit::pod::pod_log_measures;
use partalloc_simkit::{ConfidenceInterval, DEFAULT_LEVEL, Report, SimError};
use partalloc_topology::Topology;
use partalloc_workload::{Arrivals, DemandLaw, Dependence, ShapeLaw, WorkloadSpec};
use rayon::prelude::*;

use super::{Ctx, FigError, Figure, FigureKind, Scale};

pub(crate) const FIGURE: Figure = Figure {
    id: "pods",
    paper: "Jouppi et al., ISCA 2023; Cloud TPU docs",
    summary: "static first fit, static best fit and reconfigurable cubes on a 3-D and a 2-D pod: wait, utilization, stranded chips vs load",
    kind: FigureKind::Custom(run),
};

/// The pods: (id, title, machine).
const PODS: [(&str, &str, &str); 2] = [
    ("3d", "3-D pod 8×8×8 of 4×4×4 cubes", "pod:tpu-v4:8x8x8"),
    (
        "2d",
        "2-D pod 16×16 of 4×4 cubes",
        "pod:tpu-v5e:cube=4x4:wiring=reconfigurable",
    ),
];

/// The strategies: (series label, registry name).
const STRATEGIES: [(&str, &str); 3] = [
    ("static first fit", "pod-first-fit"),
    ("static best fit", "pod-best-fit"),
    ("reconfigurable", "pod-reconfigurable"),
];

/// Sampling times of the stranded-chip average per run.
const SAMPLES: usize = 100;

/// One run's measurements.
#[derive(Debug, Clone, Copy)]
struct Measured {
    wait: f64,
    utilization: f64,
    stranded: f64,
    largest: f64,
}

/// The summary of one (pod, strategy, load) point over replications.
#[derive(Debug, Clone)]
struct Point {
    pod: &'static str,
    strategy: &'static str,
    load: f64,
    wait: ConfidenceInterval,
    utilization: ConfidenceInterval,
    stranded: ConfidenceInterval,
    largest: ConfidenceInterval,
}

fn loads(ctx: &Ctx) -> Vec<f64> {
    match ctx.scale {
        Scale::Quick => vec![0.3, 0.6, 0.8],
        _ => vec![0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    }
}

/// The catalogue shapes, all but the whole pod, equally likely.
fn shape_law(topology: &Topology) -> Result<ShapeLaw, FigError> {
    let pod = topology
        .as_pod()
        .ok_or_else(|| FigError::Setup(format!("{topology} is not a pod")))?;
    let chips = topology.num_nodes() as u64;
    let weights = pod
        .catalogue()
        .shapes()
        .iter()
        .map(|s| if s.product() < chips { 1.0 } else { 0.0 })
        .collect();
    Ok(ShapeLaw::Catalogue {
        weights: Some(weights),
    })
}

/// Replication `rep` of `jobs` jobs of `shapes` at offered `load`
/// (exponential service, mean 1; the stream depends on `stream_seed` and
/// `rep` only), run under FCFS to completion with every grant logged (for
/// the measures of the machine over time) and, in replication 0, every job
/// recorded.
pub(crate) fn run_recorded(
    topology: &Topology,
    strategy: &AllocatorSpec,
    shapes: ShapeLaw,
    load: f64,
    (stream_seed, rep): (u64, u64),
    jobs: u64,
) -> Result<(Report, GrantLog), FigError> {
    let mut log = GrantLog::new(usize::MAX);
    let report = run_watched(
        topology,
        strategy,
        shapes,
        load,
        (stream_seed, rep),
        jobs,
        &mut log,
    )?;
    Ok((report, log))
}

/// As [`run_recorded`], with `observer` watching the run instead of a
/// grant log: replication `rep` of the point's experiment (the jobs of
/// `shapes`, each run to completion; only replication 0 keeps its job
/// records).
pub(crate) fn run_watched<O: partalloc_simkit::observe::Observer>(
    topology: &Topology,
    strategy: &AllocatorSpec,
    shapes: ShapeLaw,
    load: f64,
    (stream_seed, rep): (u64, u64),
    jobs: u64,
    observer: &mut O,
) -> Result<Report, FigError> {
    let source = DrawnSource::new(WorkloadSpec {
        arrivals: Arrivals::Load(load),
        shapes,
        demand: DemandLaw::Exponential { mean: 1.0 },
        dependence: Dependence::Dependent,
        allow_saturation: false,
    });
    let mut exp = Experiment::new(
        MachineSource::Text(topology.to_string()),
        WorkloadSource::Drawn(source),
        strategy.clone(),
        POLICIES.spec("fcfs").map_err(SimError::from)?,
    );
    exp.seed = stream_seed;
    exp.replications = rep + 1;
    exp.stop.jobs = Some(jobs);
    exp.record_jobs = true;
    exp.search_time = false;
    let prepared = exp.check_on(topology.clone())?;
    Ok(prepared.run_replication(rep, observer)?.0)
}

fn simulate(
    topology: &Topology,
    strategy: &AllocatorSpec,
    load: f64,
    stream_seed: u64,
    rep: u64,
    jobs: u64,
) -> Result<Measured, FigError> {
    let (report, log) = run_recorded(
        topology,
        strategy,
        shape_law(topology)?,
        load,
        (stream_seed, rep),
        jobs,
    )?;
    // Judged by the rules the strategy reports (its wiring).
    let pod = pod_log_measures(topology, &log, SAMPLES)
        .ok_or_else(|| FigError::Setup(format!("{strategy} recorded no job on {topology}")))?;
    Ok(Measured {
        wait: report.results.mean_wait,
        utilization: report.results.utilization,
        stranded: pod.mean_stranded_chips,
        largest: pod.mean_largest_placeable,
    })
}

/// A 95% interval of the replications' values.
/// A metric of a figure's points: (file id, axis label, its interval).
pub(crate) type LoadMetric<P> = (&'static str, &'static str, fn(&P) -> &ConfidenceInterval);

/// One chart per metric against the offered load, `{prefix}-{id}.svg` in
/// `dir`, titled `{title}: {label}`, with one series per (label, points in
/// load order) of `series`.
pub(crate) fn load_charts<P>(
    dir: &std::path::Path,
    (prefix, title): (&str, &str),
    series: &[(&str, Vec<&P>)],
    load: fn(&P) -> f64,
    metrics: &[LoadMetric<P>],
) -> Result<(), FigError> {
    for &(mid, label, pick) in metrics {
        let series = series
            .iter()
            .map(|(name, points)| Series {
                label: (*name).to_owned(),
                points: points
                    .iter()
                    .map(|p| {
                        let c = pick(p);
                        (load(p), c.mean, c.half_width.unwrap_or(0.0))
                    })
                    .collect(),
            })
            .collect();
        let chart = Chart {
            title: format!("{title}: {}", label.to_lowercase()),
            x_label: "Offered load".to_owned(),
            y_label: label.to_owned(),
            series,
            y_max: None,
        };
        write_svg(&chart, &dir.join(format!("{prefix}-{mid}.svg")))?;
    }
    Ok(())
}

/// Replications `0..reps` of one point, run on `pool`, in replication
/// order (so the intervals do not depend on the thread count).
pub(crate) fn replicate<M: Send, E: Send>(
    pool: &rayon::ThreadPool,
    reps: u64,
    run: impl Fn(u64) -> Result<M, E> + Sync + Send,
) -> Result<Vec<M>, E> {
    pool.install(|| (0..reps).into_par_iter().map(run).collect())
}

/// The 95% interval of `f` over the replications `runs`.
pub(crate) fn interval<M>(runs: &[M], f: fn(&M) -> f64) -> Result<ConfidenceInterval, FigError> {
    ci(&runs.iter().map(f).collect::<Vec<_>>())
}

pub(crate) fn ci(samples: &[f64]) -> Result<ConfidenceInterval, FigError> {
    Ok(ConfidenceInterval::from_samples(samples, DEFAULT_LEVEL)?)
}

/// The columns of a figure's claims table.
pub(crate) const CLAIM_COLUMNS: [&str; 3] = ["claim (source)", "measured", "verdict"];

/// A table cell: the mean ± the half width, three decimals.
pub(crate) fn cell(c: &ConfidenceInterval) -> String {
    c.half_width.map_or_else(
        || format!("{:.3}", c.mean),
        |h| format!("{:.3} ± {h:.3}", c.mean),
    )
}

/// CSV fields: the mean and the half width (empty without one).
pub(crate) fn csv_num(c: &ConfidenceInterval) -> (String, String) {
    (
        format!("{}", c.mean),
        c.half_width.map(|h| format!("{h}")).unwrap_or_default(),
    )
}

/// The CSV fields of `cells`: each one's mean and half width
/// ([`csv_num`]), comma-separated.
pub(crate) fn csv_cells(cells: &[&ConfidenceInterval]) -> String {
    let fields: Vec<String> = cells
        .iter()
        .map(|c| {
            let (m, h) = csv_num(c);
            format!("{m},{h}")
        })
        .collect();
    fields.join(",")
}

/// A markdown table's header row and rule.
pub(crate) fn table_head(out: &mut String, columns: &[&str]) {
    let _ = writeln!(out, "| {} |", columns.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(columns.len()));
}

/// A markdown table row: the `lead` fields as they print, then each
/// interval as a [`cell`].
pub(crate) fn table_row(
    out: &mut String,
    lead: &[&dyn std::fmt::Display],
    cells: &[&ConfidenceInterval],
) {
    let fields: Vec<String> = lead
        .iter()
        .map(|f| f.to_string())
        .chain(cells.iter().map(|c| cell(c)))
        .collect();
    let _ = writeln!(out, "| {} |", fields.join(" | "));
}

fn run(ctx: &Ctx) -> Result<(), FigError> {
    let loads = loads(ctx);
    // No paper to match: `--paper-scale` runs the default scale.
    let reps = ctx.reps(1, 5, 5);
    let jobs = ctx.jobs(300, 1500, 1500);
    let pool = partalloc_simkit::thread_pool(ctx.args.threads)?;
    let mut points = Vec::new();
    for (pi, (pod_id, _, machine)) in PODS.iter().enumerate() {
        let topology: Topology = machine.parse()?;
        for (_, strategy) in STRATEGIES {
            let spec = ALLOCATORS.spec(strategy).map_err(SimError::from)?;
            for (li, &load) in loads.iter().enumerate() {
                // The job stream depends on the pod and the load only.
                let stream_seed = ctx.args.seed.wrapping_add(1000 * pi as u64 + li as u64);
                let runs: Vec<Measured> = replicate(&pool, reps, |rep| {
                    simulate(&topology, &spec, load, stream_seed, rep, jobs)
                })?;
                points.push(Point {
                    pod: pod_id,
                    strategy,
                    load,
                    wait: interval(&runs, |m| m.wait)?,
                    utilization: interval(&runs, |m| m.utilization)?,
                    stranded: interval(&runs, |m| m.stranded)?,
                    largest: interval(&runs, |m| m.largest)?,
                });
            }
        }
    }
    write_outputs(ctx, &points, reps, jobs)
}

fn find<'a>(points: &'a [Point], pod: &str, strategy: &str, load: f64) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.pod == pod && p.strategy == strategy && p.load == load)
}

fn write_outputs(ctx: &Ctx, points: &[Point], reps: u64, jobs: u64) -> Result<(), FigError> {
    let dir = &ctx.args.out;
    let mut csv = String::from(
        "pod,strategy,load,mean_wait,mean_wait_ci95,utilization,utilization_ci95,stranded_chips,stranded_chips_ci95,largest_placeable_chips,largest_placeable_chips_ci95\n",
    );
    for p in points {
        let cells = csv_cells(&[&p.wait, &p.utilization, &p.stranded, &p.largest]);
        let _ = writeln!(csv, "{},{},{},{cells}", p.pod, p.strategy, p.load);
    }
    let write = |name: &str, text: &str| super::write_text(dir, name, text);
    write("pods.csv", &csv)?;
    let metrics: [LoadMetric<Point>; 4] = [
        ("wait", "Mean waiting time", |p| &p.wait),
        ("utilization", "Utilization", |p| &p.utilization),
        ("stranded", "Stranded chips (time average)", |p| &p.stranded),
        (
            "largest",
            "Largest placeable slice in chips (time average)",
            |p| &p.largest,
        ),
    ];
    for (pod_id, title, _) in PODS {
        let series: Vec<(&str, Vec<&Point>)> = STRATEGIES
            .iter()
            .map(|(name, strategy)| {
                let on = |p: &&Point| p.pod == pod_id && p.strategy == *strategy;
                (*name, points.iter().filter(on).collect())
            })
            .collect();
        load_charts(
            dir,
            (&format!("pods-{pod_id}"), title),
            &series,
            |p| p.load,
            &metrics,
        )?;
    }
    let text = report(points, reps, jobs);
    print!("{text}");
    write("pods.txt", &text)
}

/// The tables and the claims, as printed and written to pods.txt.
fn report(points: &[Point], reps: u64, jobs: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## pods — FCFS, {jobs} jobs per run to completion, {reps} replication(s) per point, catalogue shapes but the whole pod equally likely, exponential service (mean 1)\n"
    );
    for (pod_id, title, machine) in PODS {
        let _ = writeln!(out, "### {title} ({machine})\n");
        table_head(
            &mut out,
            &[
                "load",
                "strategy",
                "mean wait",
                "utilization",
                "stranded chips",
                "largest placeable (chips)",
            ],
        );
        for p in points.iter().filter(|p| p.pod == pod_id) {
            table_row(
                &mut out,
                &[&p.load, &p.strategy],
                &[&p.wait, &p.utilization, &p.stranded, &p.largest],
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "### Claims\n");
    table_head(&mut out, &CLAIM_COLUMNS);
    for (pod_id, title, _) in PODS {
        let loads: Vec<f64> = points
            .iter()
            .filter(|p| p.pod == pod_id && p.strategy == "pod-first-fit")
            .map(|p| p.load)
            .collect();
        let pairs: Vec<(f64, &Point, &Point, &Point)> = loads
            .iter()
            .filter_map(|&l| {
                Some((
                    l,
                    find(points, pod_id, "pod-first-fit", l)?,
                    find(points, pod_id, "pod-best-fit", l)?,
                    find(points, pod_id, "pod-reconfigurable", l)?,
                ))
            })
            .collect();
        let waits: Vec<String> = pairs
            .iter()
            .map(|(l, ff, _, rc)| format!("{l}: {:.2} vs {:.2}", rc.wait.mean, ff.wait.mean))
            .collect();
        let no_worse = pairs
            .iter()
            .all(|(_, ff, _, rc)| rc.wait.mean <= ff.wait.mean * 1.05);
        let _ = writeln!(
            out,
            "| {title}: optical switches let a slice take any free cubes, so jobs wait less than with fixed links (Jouppi et al., ISCA 2023, §2) | reconfigurable vs static first-fit mean wait by load: {} | {} |",
            waits.join("; "),
            if no_worse {
                "holds"
            } else {
                "does not hold at every load"
            }
        );
        let gaps: Vec<String> = pairs
            .iter()
            .map(|(l, ff, bf, rc)| {
                let span = ff.wait.mean - rc.wait.mean;
                let closed = if span.abs() > 1e-9 {
                    format!("{:.0}%", 100.0 * (ff.wait.mean - bf.wait.mean) / span)
                } else {
                    "–".to_owned()
                };
                format!("{l}: {closed}")
            })
            .collect();
        let _ = writeln!(
            out,
            "| {title}: how close a good static strategy gets (question of docs/pods.md, no public claim) | share of the first-fit → reconfigurable wait gap closed by static best fit, by load: {} | measured |",
            gaps.join("; ")
        );
        let stranded: Vec<String> = pairs
            .iter()
            .map(|(l, ff, bf, rc)| {
                format!(
                    "{l}: {:.1} / {:.1} / {:.1}",
                    ff.stranded.mean, bf.stranded.mean, rc.stranded.mean
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "| {title}: stranded chips, static first fit / best fit / reconfigurable (no public claim) | {} | measured |",
            stranded.join("; ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci(mean: f64) -> ConfidenceInterval {
        ConfidenceInterval::from_samples(&[mean, mean], DEFAULT_LEVEL).unwrap()
    }

    fn point(pod: &'static str, strategy: &'static str, load: f64, wait: f64) -> Point {
        Point {
            pod,
            strategy,
            load,
            wait: ci(wait),
            utilization: ci(0.5),
            stranded: ci(0.0),
            largest: ci(64.0),
        }
    }

    #[test]
    fn the_claims_table_checks_the_direction_and_the_gap_closed() {
        let mut points = Vec::new();
        for (pod, rc_wait) in [("3d", 1.0), ("2d", 5.0)] {
            points.push(point(pod, "pod-first-fit", 0.5, 4.0));
            points.push(point(pod, "pod-best-fit", 0.5, 3.0));
            points.push(point(pod, "pod-reconfigurable", 0.5, rc_wait));
        }
        let text = report(&points, 1, 10);
        let claims: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("optical switches"))
            .collect();
        assert_eq!(claims.len(), 2, "{text}");
        // 3-D: 1.0 vs 4.0 holds; 2-D: 5.0 vs 4.0 does not.
        assert!(claims[0].ends_with("| holds |"), "{}", claims[0]);
        assert!(claims[1].contains("does not hold"), "{}", claims[1]);
        // Best fit closes (4 − 3) / (4 − 1) = 33% of the 3-D gap.
        assert!(text.contains("0.5: 33%"), "{text}");
    }

    #[test]
    fn a_pod_run_is_deterministic_and_measured() {
        let topology: Topology = PODS[0].2.parse().unwrap();
        let best_fit = ALLOCATORS.spec("pod-best-fit").unwrap();
        let a = simulate(&topology, &best_fit, 0.6, 7, 0, 60).unwrap();
        let b = simulate(&topology, &best_fit, 0.6, 7, 0, 60).unwrap();
        assert_eq!(a.wait.to_bits(), b.wait.to_bits());
        assert!(a.utilization > 0.0 && a.largest > 0.0, "{a:?}");
    }
}
