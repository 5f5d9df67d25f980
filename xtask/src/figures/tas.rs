//! Kueue's Topology-Aware Scheduling on NVL72-like racks (docs/kueue.md):
//! mean wait, utilization, racks per job and stranded GPUs versus offered
//! load on 8 racks of 18 nodes with 4 GPUs each (576 GPUs), for Kueue
//! v0.19.2's BestFit (`required` and `preferred` rack, `unconstrained`),
//! LeastFreeCapacity (`unconstrained`) and BalancedPlacement (`preferred`
//! rack), non-contiguous paging, and Slurm's `topology/block` rules on the
//! same racks; with what KEP 2724 states next to what is measured.
//!
//! Slurm's block strategy here allocates whole nodes, so a job of N GPUs
//! on the 144 four-GPU nodes would hold ⌈N/4⌉ nodes and the streams would
//! differ. The nearest machine that takes the same GPU counts is a block
//! machine of one node per GPU: 8 base blocks of 72 (the racks, GPUs
//! numbered rack after rack as on the capacity machine), BlockSizes 72,
//! 144, 288, 576. It applies Slurm's block rules (the smallest block level
//! that holds the job, best fit among its blocks) to GPUs, as Slurm does
//! to nodes; it does not model Slurm packing several jobs' `gres/gpu` on
//! one node beyond that.
//!
//! Every strategy is offered the same jobs (1 to 72 GPUs equally likely;
//! the stream depends on the load and the replication only, and both
//! machines have 576 units) and runs them all to completion under FCFS.
//! Racks per job and stranded GPUs are judged on the capacity machine for
//! every strategy by a [`CapacityObserver`] (the block machine's node ids
//! are the capacity machine's GPUs).

use std::fmt::Write as _;

use partalloc_allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc_simkit::capacity::CapacityObserver;
use partalloc_simkit::{ConfidenceInterval, SimError};
use partalloc_topology::Topology;
use partalloc_topology::slurm::SlurmMachine;
use partalloc_workload::{NodeCountLaw, ShapeLaw};

use super::pods::{
    CLAIM_COLUMNS, LoadMetric, csv_cells, interval, load_charts, replicate, run_watched,
    table_head, table_row,
};
use super::{Ctx, FigError, Figure, FigureKind, Scale};

pub(crate) const FIGURE: Figure = Figure {
    id: "tas",
    paper: "Kueue KEP 2724 (v0.19.2)",
    summary: "Kueue TAS BestFit, LeastFreeCapacity, BalancedPlacement, paging and Slurm block rules on 8 NVL72-like racks: wait, utilization, racks per job, stranded GPUs vs load",
    kind: FigureKind::Custom(run),
};

/// The capacity machine: 1 block of 8 racks of 18 nodes with 4 GPUs.
const RACKS: &str = "racks:1x8x18x4gpu";

/// Jobs ask for 1 to 72 GPUs (one rack), equally likely.
const SIZES: ShapeLaw = ShapeLaw::Nodes {
    law: NodeCountLaw::Uniform,
    max: Some(72),
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Machine {
    /// The capacity machine.
    Racks,
    /// The Slurm block machine of one node per GPU.
    Blocks,
}

/// The strategies: (series label, machine, registry name).
const STRATEGIES: [(&str, Machine, &str); 7] = [
    ("Slurm block (GPU nodes)", Machine::Blocks, "block"),
    (
        "BestFit, required rack",
        Machine::Racks,
        "tas[algorithm=best-fit,mode=required,level=rack]",
    ),
    (
        "BestFit, preferred rack",
        Machine::Racks,
        "tas[algorithm=best-fit,mode=preferred,level=rack]",
    ),
    (
        "BalancedPlacement, preferred rack",
        Machine::Racks,
        "tas[algorithm=balanced,mode=preferred,level=rack]",
    ),
    (
        "BestFit, unconstrained",
        Machine::Racks,
        "tas[algorithm=best-fit,mode=unconstrained]",
    ),
    (
        "LeastFreeCapacity, unconstrained",
        Machine::Racks,
        "tas[algorithm=least-free-capacity,mode=unconstrained]",
    ),
    ("paging", Machine::Racks, "paging"),
];

/// The Slurm block machine: 576 one-GPU nodes in 8 racks of 72.
fn block_conf() -> String {
    let mut conf = String::new();
    for r in 0..8 {
        let _ = writeln!(
            conf,
            "BlockName=rack{r} Nodes=g[{:03}-{:03}]",
            72 * r,
            72 * r + 71
        );
    }
    conf.push_str("BlockSizes=72,144,288,576\n");
    conf
}

fn machines() -> Result<(Topology, Topology), FigError> {
    let racks: Topology = RACKS
        .parse()
        .map_err(|e: partalloc_topology::TopologyError| FigError::Setup(e.to_string()))?;
    let blocks: Topology = SlurmMachine::parse_conf(&block_conf(), "blocks-8x72-gpus.conf")
        .map_err(|e| FigError::Setup(e.to_string()))?
        .into();
    Ok((racks, blocks))
}

/// One run's measurements.
#[derive(Debug, Clone, Copy)]
struct Measured {
    wait: f64,
    utilization: f64,
    racks: f64,
    stranded: f64,
}

/// The summary of one (strategy, load) point over replications.
#[derive(Debug, Clone)]
struct Point {
    strategy: &'static str,
    label: &'static str,
    load: f64,
    wait: ConfidenceInterval,
    utilization: ConfidenceInterval,
    racks: ConfidenceInterval,
    stranded: ConfidenceInterval,
}

fn loads(ctx: &Ctx) -> Vec<f64> {
    match ctx.scale {
        Scale::Quick => vec![0.3, 0.6, 0.8],
        _ => vec![0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    }
}

fn simulate(
    (topology, racks): (&Topology, &Topology),
    strategy: &AllocatorSpec,
    load: f64,
    stream: (u64, u64),
    jobs: u64,
) -> Result<Measured, FigError> {
    let mut seen = CapacityObserver::new(racks);
    let report = run_watched(topology, strategy, SIZES, load, stream, jobs, &mut seen)?;
    Ok(Measured {
        wait: report.results.mean_wait,
        utilization: report.results.utilization,
        racks: seen.mean_racks_per_job(),
        stranded: seen.mean_stranded_gpus(),
    })
}

fn run(ctx: &Ctx) -> Result<(), FigError> {
    let loads = loads(ctx);
    // No paper to match: `--paper-scale` runs the default scale.
    let reps = ctx.reps(1, 10, 10);
    let jobs = ctx.jobs(300, 5000, 5000);
    let pool = partalloc_simkit::thread_pool(ctx.args.threads)?;
    let (racks, blocks) = machines()?;
    let mut points = Vec::new();
    for (label, machine, strategy) in STRATEGIES {
        let spec = ALLOCATORS.spec(strategy).map_err(SimError::from)?;
        let topology = match machine {
            Machine::Racks => &racks,
            Machine::Blocks => &blocks,
        };
        for (li, &load) in loads.iter().enumerate() {
            // The job stream depends on the load only.
            let stream_seed = ctx.args.seed.wrapping_add(li as u64);
            let runs: Vec<Measured> = replicate(&pool, reps, |rep| {
                simulate((topology, &racks), &spec, load, (stream_seed, rep), jobs)
            })?;
            points.push(Point {
                strategy,
                label,
                load,
                wait: interval(&runs, |m| m.wait)?,
                utilization: interval(&runs, |m| m.utilization)?,
                racks: interval(&runs, |m| m.racks)?,
                stranded: interval(&runs, |m| m.stranded)?,
            });
        }
    }
    write_outputs(ctx, &points, reps, jobs)
}

fn write_outputs(ctx: &Ctx, points: &[Point], reps: u64, jobs: u64) -> Result<(), FigError> {
    let dir = &ctx.args.out;
    let mut csv = String::from(
        "strategy,load,mean_wait,mean_wait_ci95,utilization,utilization_ci95,racks_per_job,racks_per_job_ci95,stranded_gpus,stranded_gpus_ci95\n",
    );
    for p in points {
        let cells = csv_cells(&[&p.wait, &p.utilization, &p.racks, &p.stranded]);
        let _ = writeln!(csv, "\"{}\",{},{cells}", p.strategy, p.load);
    }
    let write = |name: &str, text: &str| super::write_text(dir, name, text);
    write("tas.csv", &csv)?;
    let metrics: [LoadMetric<Point>; 4] = [
        ("wait", "Mean waiting time", |p| &p.wait),
        ("utilization", "Utilization", |p| &p.utilization),
        ("racks", "Racks per job", |p| &p.racks),
        ("stranded", "Stranded GPUs (time average)", |p| &p.stranded),
    ];
    let series: Vec<(&str, Vec<&Point>)> = STRATEGIES
        .iter()
        .map(|(name, _, strategy)| {
            (
                *name,
                points.iter().filter(|p| p.strategy == *strategy).collect(),
            )
        })
        .collect();
    load_charts(
        dir,
        ("tas", "8 racks × 18 nodes × 4 GPUs, jobs of 1–72 GPUs"),
        &series,
        |p| p.load,
        &metrics,
    )?;
    let text = report(points, reps, jobs);
    print!("{text}");
    write("tas.txt", &text)
}

/// The mean of `f` for `strategy` at each load, as "load: value" items,
/// and the values.
fn by_load(
    points: &[Point],
    strategy: &str,
    f: impl Fn(&Point) -> f64,
    digits: usize,
) -> (String, Vec<f64>) {
    let picked: Vec<&Point> = points.iter().filter(|p| p.strategy == strategy).collect();
    let text = picked
        .iter()
        .map(|p| format!("{}: {:.digits$}", p.load, f(p)))
        .collect::<Vec<_>>()
        .join("; ");
    (text, picked.iter().map(|p| f(p)).collect())
}

fn verdict(holds: bool) -> &'static str {
    if holds {
        "holds"
    } else {
        "does not hold at every load"
    }
}

/// The claims table (KEP 2724 and Slurm's topology.conf(5)).
fn claims(points: &[Point]) -> String {
    let mut out = String::new();
    let racks = |s: &str| by_load(points, s, |p| p.racks.mean, 3);
    let stranded = |s: &str| by_load(points, s, |p| p.stranded.mean, 2);
    let wait = |s: &str| by_load(points, s, |p| p.wait.mean, 3);
    let [block, required, preferred, balanced, bf_free, lfc, paging] = STRATEGIES.map(|s| s.2);
    table_head(&mut out, &CLAIM_COLUMNS);
    let (text, r) = racks(required);
    let _ = writeln!(
        out,
        "| `required`: all pods in one domain of the level, or the workload waits (KEP 2724, podset-required-topology) | racks per job, BestFit required rack: {text} | {} |",
        verdict(!r.is_empty() && r.iter().all(|&x| x == 1.0))
    );
    let (text, b) = racks(block);
    let _ = writeln!(
        out,
        "| Slurm places a job in the smallest block level that holds it (topology.conf(5), BlockSizes): a job of at most 72 GPUs in one rack | racks per job, Slurm block: {text} | {} |",
        verdict(!b.is_empty() && b.iter().all(|&x| x == 1.0))
    );
    let (bf_text, bf) = racks(preferred);
    let (lfc_text, lf) = racks(lfc);
    let (pg_text, pg) = racks(paging);
    let fewest = !bf.is_empty()
        && bf
            .iter()
            .zip(lf.iter().zip(&pg))
            .all(|(&a, (&l, &p))| a <= l && a <= p);
    let _ = writeln!(
        out,
        "| `preferred` BestFit keeps a pod set in one domain of the level if it can, taking the domains with the most free capacity first (KEP 2724): fewer racks per job than LeastFreeCapacity and paging | racks per job, BestFit preferred: {bf_text}; LeastFreeCapacity: {lfc_text}; paging: {pg_text} | {} |",
        verdict(fewest)
    );
    let (lfc_text, lf) = stranded(lfc);
    let (bf_text, bf) = stranded(bf_free);
    let less = !lf.is_empty() && lf.iter().zip(&bf).all(|(&l, &b)| l <= b);
    let _ = writeln!(
        out,
        "| for `unconstrained` requests Kueue prioritizes minimizing fragmentation, which LeastFreeCapacity provides (KEP 2724, since v0.15): no more stranded GPUs than BestFit unconstrained | stranded GPUs, LeastFreeCapacity: {lfc_text}; BestFit unconstrained: {bf_text} | {} |",
        verdict(less)
    );
    let (bal_text, _) = racks(balanced);
    let (bf_text, _) = racks(preferred);
    let _ = writeln!(
        out,
        "| BalancedPlacement picks the fewest domains of the level that fit, then spreads the pods evenly over them (KEP 2724, Balanced placement; evenness not measured here) | racks per job, BalancedPlacement: {bal_text}; BestFit preferred: {bf_text} | measured |"
    );
    let waits: Vec<String> = [required, preferred, block, paging]
        .iter()
        .map(|s| {
            let label = STRATEGIES.iter().find(|x| x.2 == *s).map_or("", |x| x.0);
            format!("{label}: {}", wait(s).0)
        })
        .collect();
    let _ = writeln!(
        out,
        "| the cost of locality in waiting time (no public claim) | mean wait, {} | measured |",
        waits.join(" — ")
    );
    out
}

/// The table and the claims, as printed and written to tas.txt.
fn report(points: &[Point], reps: u64, jobs: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## tas — {RACKS} (8 racks × 18 nodes × 4 GPUs; Slurm block: 8 blocks of 72 one-GPU nodes, BlockSizes 72,144,288,576), FCFS, {jobs} jobs per run to completion, {reps} replication(s) per point, 1 to 72 GPUs equally likely, exponential service (mean 1)\n"
    );
    table_head(
        &mut out,
        &[
            "load",
            "strategy",
            "mean wait",
            "utilization",
            "racks per job",
            "stranded GPUs",
        ],
    );
    for p in points {
        table_row(
            &mut out,
            &[&p.load, &p.label],
            &[&p.wait, &p.utilization, &p.racks, &p.stranded],
        );
    }
    let _ = writeln!(out, "\n### Claims\n");
    out.push_str(&claims(points));
    out
}

#[cfg(test)]
mod tests {
    use partalloc_simkit::DEFAULT_LEVEL;

    use super::*;

    fn ci(mean: f64) -> ConfidenceInterval {
        ConfidenceInterval::from_samples(&[mean, mean], DEFAULT_LEVEL).unwrap()
    }

    fn point(i: usize, load: f64, racks: f64, stranded: f64) -> Point {
        Point {
            strategy: STRATEGIES[i].2,
            label: STRATEGIES[i].0,
            load,
            wait: ci(1.0),
            utilization: ci(0.5),
            racks: ci(racks),
            stranded: ci(stranded),
        }
    }

    #[test]
    fn claims_are_judged_from_the_measures() {
        // LeastFreeCapacity (5) strands less than BestFit unconstrained (4)
        // at 0.3 but not at 0.6.
        let points = [
            point(1, 0.3, 1.0, 9.0),
            point(4, 0.3, 3.0, 5.0),
            point(5, 0.3, 3.0, 4.0),
            point(4, 0.6, 3.0, 5.0),
            point(5, 0.6, 3.0, 6.0),
        ];
        let text = claims(&points);
        let row = |key: &str| text.lines().find(|l| l.contains(key)).unwrap().to_owned();
        assert!(row("podset-required").ends_with("| holds |"));
        assert!(row("minimizing fragmentation").ends_with("| does not hold at every load |"));
        let points = [point(1, 0.3, 1.5, 9.0)];
        assert!(claims(&points).contains("does not hold at every load"));
    }

    #[test]
    fn both_machines_get_the_same_jobs_and_number_gpus_alike() {
        let (racks, blocks) = machines().unwrap();
        assert_eq!(racks.num_nodes(), 576);
        assert_eq!(blocks.num_nodes(), 576);
        let b = blocks.as_slurm().unwrap();
        assert_eq!(b.blocks().unwrap().levels(), [1, 2, 4, 8]);
        let paging = ALLOCATORS.spec("paging").unwrap();
        let block = ALLOCATORS.spec("block").unwrap();
        let (r, _) =
            super::super::pods::run_recorded(&racks, &paging, SIZES, 0.7, (4, 0), 200).unwrap();
        let (s, _) =
            super::super::pods::run_recorded(&blocks, &block, SIZES, 0.7, (4, 0), 200).unwrap();
        let key = |j: &partalloc_simkit::JobRecord| (j.id, j.arrival.to_bits(), j.requested);
        let mut a: Vec<_> = r.jobs.iter().map(key).collect();
        let mut c: Vec<_> = s.jobs.iter().map(key).collect();
        a.sort_unstable();
        c.sort_unstable();
        assert_eq!(a, c);
        // Slurm's block rules keep every job of at most 72 GPUs in one rack
        // (72 consecutive GPU ids on both machines).
        for j in &s.jobs {
            let nodes = j.partition.node_list(&blocks).unwrap();
            assert!(nodes.iter().all(|&n| n / 72 == nodes[0] / 72), "{j:?}");
        }
    }

    #[test]
    fn on_the_racks_the_observer_agrees_with_the_run_loop() {
        let (racks, _) = machines().unwrap();
        for (_, machine, strategy) in STRATEGIES {
            if machine != Machine::Racks {
                continue;
            }
            let spec = ALLOCATORS.spec(strategy).unwrap();
            let mut seen = CapacityObserver::new(&racks);
            let r = run_watched(&racks, &spec, SIZES, 0.8, (9, 1), 200, &mut seen).unwrap();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(
                close(seen.mean_stranded_gpus(), r.results.mean_stranded_gpus),
                "{strategy}"
            );
            assert_eq!(seen.mean_racks_per_job(), r.results.mean_racks_per_job);
        }
    }
}
