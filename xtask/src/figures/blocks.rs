//! Slurm block and tree machines (docs/blocks.md): mean wait, utilization,
//! stranded nodes and locality versus offered load on 8 racks of 18 nodes
//! (BlockSizes 18, 36, 72, 144), for Slurm's `topology/block` placement
//! with and without `--segment`, `topology/tree` placement on the same
//! racks as leaf switches under one spine, a buddy baseline over the
//! aggregated blocks and non-contiguous paging; and `topology/block` on the
//! same racks without the machine-wide level (BlockSizes 18, 36, 72), where
//! a job must fit in half the machine; with what Slurm's documentation
//! states next to what is measured.
//!
//! Every strategy is offered the same jobs (the stream depends on the load
//! and the replication only) and runs them all to completion under FCFS,
//! so the job records hold every placement; stranded nodes are averaged
//! over evenly spaced times and locality over jobs
//! (`partalloc_simkit::slurm`).

use std::fmt::Write as _;

use partalloc_allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc_simkit::slurm::slurm_log_measures;
use partalloc_simkit::{ConfidenceInterval, SimError};
use partalloc_topology::Topology;
use partalloc_topology::slurm::SlurmMachine;
use partalloc_workload::{NodeCountLaw, ShapeLaw};

use super::pods::{
    CLAIM_COLUMNS, LoadMetric, csv_cells, interval, load_charts, replicate, run_recorded,
    table_head, table_row,
};
use super::{Ctx, FigError, Figure, FigureKind, Scale};

pub(crate) const FIGURE: Figure = Figure {
    id: "blocks",
    paper: "Slurm topology.conf(5), sbatch(1)",
    summary: "block (with and without segments, and without a machine-wide block), tree, block buddy and paging on 8 racks of 18 nodes: wait, utilization, stranded nodes vs load",
    kind: FigureKind::Custom(run),
};

/// The block machine: the example file shipped with the tool.
const BLOCKS_CONF: &str = include_str!("../../../examples/blocks-8x18.conf");

/// The same racks with no block level for the whole machine.
const TOP72_CONF: &str = include_str!("../../../examples/blocks-8x18-top72.conf");

/// The same racks as the leaf switches of a two-level tree.
const TREE_CONF: &str = "\
SwitchName=rack0 Nodes=gpu[000-017]
SwitchName=rack1 Nodes=gpu[018-035]
SwitchName=rack2 Nodes=gpu[036-053]
SwitchName=rack3 Nodes=gpu[054-071]
SwitchName=rack4 Nodes=gpu[072-089]
SwitchName=rack5 Nodes=gpu[090-107]
SwitchName=rack6 Nodes=gpu[108-125]
SwitchName=rack7 Nodes=gpu[126-143]
SwitchName=spine Switches=rack[0-7]
";

/// Segment size of the segmented runs, and of the split-segment count of
/// every strategy: three segments fill a rack of 18 exactly.
const SEGMENT: u32 = 6;

/// Jobs ask for 1 to 72 nodes, equally likely: from one node to four
/// racks (the largest aggregate below the whole machine). Most sizes are
/// not multiples of the segment, so segmented jobs round up and the other
/// strategies may split segments.
const SIZES: ShapeLaw = ShapeLaw::Nodes {
    law: NodeCountLaw::Uniform,
    max: Some(72),
};

/// The strategies: (series label, machine, registry name).
const STRATEGIES: [(&str, Machine, &str); 6] = [
    ("block", Machine::Blocks, "block"),
    ("block, segments of 6", Machine::Blocks, "block[segment=6]"),
    ("tree", Machine::Tree, "tree"),
    ("block buddy", Machine::Blocks, "block-buddy"),
    ("paging", Machine::Blocks, "paging"),
    ("block, largest block 72", Machine::Top72, "block"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Machine {
    Blocks,
    Tree,
    /// The block racks without the machine-wide level.
    Top72,
}

impl Machine {
    /// The machine's column in blocks.csv.
    fn name(self) -> &'static str {
        match self {
            Self::Blocks => "blocks-8x18",
            Self::Tree => "tree-8x18",
            Self::Top72 => "blocks-8x18-top72",
        }
    }
}

/// Sampling times of the stranded-node average per run.
const SAMPLES: usize = 100;

/// One run's measurements.
#[derive(Debug, Clone, Copy)]
struct Measured {
    wait: f64,
    utilization: f64,
    stranded: f64,
    domains: f64,
    split: f64,
    lowest: f64,
}

/// The summary of one (machine, strategy, load) point over replications.
#[derive(Debug, Clone)]
struct Point {
    machine: Machine,
    strategy: &'static str,
    load: f64,
    wait: ConfidenceInterval,
    utilization: ConfidenceInterval,
    stranded: ConfidenceInterval,
    domains: ConfidenceInterval,
    split: ConfidenceInterval,
    lowest: ConfidenceInterval,
}

fn loads(ctx: &Ctx) -> Vec<f64> {
    match ctx.scale {
        Scale::Quick => vec![0.3, 0.6, 0.8],
        _ => vec![0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    }
}

fn machines() -> Result<(Topology, Topology, Topology), FigError> {
    let parse = |text: &str, source: &str| -> Result<Topology, FigError> {
        Ok(SlurmMachine::parse_conf(text, source)
            .map_err(|e| FigError::Setup(e.to_string()))?
            .into())
    };
    Ok((
        parse(BLOCKS_CONF, "blocks-8x18.conf")?,
        parse(TREE_CONF, "tree-8x18.conf")?,
        parse(TOP72_CONF, "blocks-8x18-top72.conf")?,
    ))
}

fn simulate(
    topology: &Topology,
    strategy: &AllocatorSpec,
    load: f64,
    stream_seed: u64,
    rep: u64,
    jobs: u64,
) -> Result<Measured, FigError> {
    let (report, log) = run_recorded(topology, strategy, SIZES, load, (stream_seed, rep), jobs)?;
    // Split segments are counted in segments of SEGMENT for every strategy,
    // so that they compare.
    let m = slurm_log_measures(topology, &log, Some(SEGMENT), SAMPLES)
        .ok_or_else(|| FigError::Setup(format!("{strategy} recorded no job on {topology}")))?;
    Ok(Measured {
        wait: report.results.mean_wait,
        utilization: report.results.utilization,
        stranded: m.mean_stranded_nodes,
        domains: m.mean_domains,
        split: m.mean_split_segments,
        lowest: m.lowest_level_share,
    })
}

fn run(ctx: &Ctx) -> Result<(), FigError> {
    let loads = loads(ctx);
    // No paper to match: `--paper-scale` runs the default scale.
    let reps = ctx.reps(1, 10, 10);
    let jobs = ctx.jobs(300, 5000, 5000);
    let pool = partalloc_simkit::thread_pool(ctx.args.threads)?;
    let (blocks, tree, top72) = machines()?;
    let mut points = Vec::new();
    for (_, machine, strategy) in STRATEGIES {
        let spec = ALLOCATORS.spec(strategy).map_err(SimError::from)?;
        let topology = match machine {
            Machine::Blocks => &blocks,
            Machine::Tree => &tree,
            Machine::Top72 => &top72,
        };
        for (li, &load) in loads.iter().enumerate() {
            // The job stream depends on the load only.
            let stream_seed = ctx.args.seed.wrapping_add(li as u64);
            let runs: Vec<Measured> = replicate(&pool, reps, |rep| {
                simulate(topology, &spec, load, stream_seed, rep, jobs)
            })?;
            points.push(Point {
                machine,
                strategy,
                load,
                wait: interval(&runs, |m| m.wait)?,
                utilization: interval(&runs, |m| m.utilization)?,
                stranded: interval(&runs, |m| m.stranded)?,
                domains: interval(&runs, |m| m.domains)?,
                split: interval(&runs, |m| m.split)?,
                lowest: interval(&runs, |m| m.lowest)?,
            });
        }
    }
    write_outputs(ctx, &points, reps, jobs)
}

/// The point of `strategy` at `load` on the racks with every block level
/// (or, for the tree, under the spine).
fn find<'a>(points: &'a [Point], strategy: &str, load: f64) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.strategy == strategy && p.load == load && p.machine != Machine::Top72)
}

/// Whether `p` is `strategy` on the racks with every block level (or the
/// tree).
fn on_full(p: &Point, strategy: &str) -> bool {
    p.strategy == strategy && p.machine != Machine::Top72
}

fn write_outputs(ctx: &Ctx, points: &[Point], reps: u64, jobs: u64) -> Result<(), FigError> {
    let dir = &ctx.args.out;
    let mut csv = String::from(
        "machine,strategy,load,mean_wait,mean_wait_ci95,utilization,utilization_ci95,stranded_nodes,stranded_nodes_ci95,domains_per_job,domains_per_job_ci95,split_segments_per_job,split_segments_per_job_ci95,lowest_level_share,lowest_level_share_ci95\n",
    );
    for p in points {
        let cells = csv_cells(&[
            &p.wait,
            &p.utilization,
            &p.stranded,
            &p.domains,
            &p.split,
            &p.lowest,
        ]);
        let _ = writeln!(
            csv,
            "{},{},{},{cells}",
            p.machine.name(),
            p.strategy,
            p.load
        );
    }
    let write = |name: &str, text: &str| super::write_text(dir, name, text);
    write("blocks.csv", &csv)?;
    let metrics: [LoadMetric<Point>; 4] = [
        ("wait", "Mean waiting time", |p| &p.wait),
        ("utilization", "Utilization", |p| &p.utilization),
        ("stranded", "Stranded nodes (time average)", |p| &p.stranded),
        ("domains", "Racks per job", |p| &p.domains),
    ];
    let series: Vec<(&str, Vec<&Point>)> = STRATEGIES
        .iter()
        .map(|(name, machine, strategy)| {
            let on = |p: &&Point| p.strategy == *strategy && p.machine == *machine;
            (*name, points.iter().filter(on).collect())
        })
        .collect();
    load_charts(
        dir,
        (
            "blocks",
            "8 racks of 18 nodes, BlockSizes 18,36,72,144 (or up to 72)",
        ),
        &series,
        |p| p.load,
        &metrics,
    )?;
    let text = report(points, reps, jobs);
    print!("{text}");
    write("blocks.txt", &text)
}

/// `f` of each load's point of `strategy` (on the racks with every block
/// level), as "load: value" items.
fn by_load(points: &[Point], strategy: &str, f: impl Fn(&Point) -> String) -> String {
    points
        .iter()
        .filter(|p| on_full(p, strategy))
        .map(|p| format!("{}: {}", p.load, f(p)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The tables and the claims, as printed and written to blocks.txt.
fn report(points: &[Point], reps: u64, jobs: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## blocks — 8 racks of 18 nodes (BlockSizes 18,36,72,144, and 18,36,72 for blocks-8x18-top72; the tree: the racks as leaf switches under one spine), FCFS, {jobs} jobs per run to completion, {reps} replication(s) per point, 1 to 72 nodes equally likely, exponential service (mean 1)\n"
    );
    table_head(
        &mut out,
        &[
            "load",
            "machine",
            "strategy",
            "mean wait",
            "utilization",
            "stranded nodes",
            "racks per job",
            "split segments of 6 per job",
            "jobs at their lowest level",
        ],
    );
    for p in points {
        table_row(
            &mut out,
            &[&p.load, &p.machine.name(), &p.strategy],
            &[
                &p.wait,
                &p.utilization,
                &p.stranded,
                &p.domains,
                &p.split,
                &p.lowest,
            ],
        );
    }
    let _ = writeln!(out, "\n### Claims\n");
    table_head(&mut out, &CLAIM_COLUMNS);
    let segmented = "block[segment=6]";
    let whole = points
        .iter()
        .filter(|p| p.strategy == segmented)
        .all(|p| p.split.mean == 0.0);
    let _ = writeln!(
        out,
        "| with --segment, each segment of a job lies within one base block (sbatch(1) --segment; Slurm Topology guide) | split segments of 6 per job, block with segments: {}; without: {} | {} |",
        by_load(points, segmented, |p| format!("{:.3}", p.split.mean)),
        by_load(points, "block", |p| format!("{:.3}", p.split.mean)),
        if whole {
            "holds"
        } else {
            "does not hold at every load"
        }
    );
    // Slurm fixes the level from the job's size and never climbs, so every
    // block job must sit at its lowest level.
    let lowest = points
        .iter()
        .filter(|p| p.strategy == "block" && p.machine == Machine::Blocks)
        .all(|p| p.lowest.mean == 1.0);
    let _ = writeln!(
        out,
        "| a job is placed in the smallest block level that can hold it, best fit among those (topology.conf(5), BlockSizes) | jobs at the lowest level their size allows, block: {}; paging: {} | {} |",
        by_load(points, "block", |p| format!(
            "{:.0}%",
            100.0 * p.lowest.mean
        )),
        by_load(points, "paging", |p| format!(
            "{:.0}%",
            100.0 * p.lowest.mean
        )),
        if lowest {
            "holds"
        } else {
            "does not hold at every load"
        }
    );
    let five = |p: &Point, f: fn(&Point) -> f64| {
        let of = |s: &str| find(points, s, p.load).map_or(f64::NAN, f);
        format!(
            "{}: {:.2} / {:.2} / {:.2} / {:.2} / {:.2}",
            p.load,
            f(p),
            of(segmented),
            of("tree"),
            of("block-buddy"),
            of("paging")
        )
    };
    let waits: Vec<String> = points
        .iter()
        .filter(|p| on_full(p, "block"))
        .map(|p| five(p, |q| q.wait.mean))
        .collect();
    let _ = writeln!(
        out,
        "| the cost of locality: mean wait, block / segments / tree / buddy / paging (question of docs/blocks.md, no public claim) | {} | measured |",
        waits.join("; ")
    );
    let stranded: Vec<String> = points
        .iter()
        .filter(|p| on_full(p, "block"))
        .map(|p| five(p, |q| q.stranded.mean))
        .collect();
    let _ = writeln!(
        out,
        "| stranded nodes, block / segments / tree / buddy / paging (no public claim) | {} | measured |",
        stranded.join("; ")
    );
    let capped: Vec<String> = points
        .iter()
        .filter(|p| p.machine == Machine::Top72)
        .map(|p| {
            let paging = find(points, "paging", p.load).map_or(f64::NAN, |q| q.wait.mean);
            format!(
                "{}: {:.2} against {:.2} ({:.1}×)",
                p.load,
                p.wait.mean,
                paging,
                p.wait.mean / paging
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "| a job lies within one block (topology.conf(5), topology/block): without a machine-wide level, mean wait of block against paging on the same jobs (no public claim on the cost) | {} | measured |",
        capped.join("; ")
    );
    out
}

#[cfg(test)]
mod tests {
    use partalloc_simkit::DEFAULT_LEVEL;

    use super::*;

    fn ci(mean: f64) -> ConfidenceInterval {
        ConfidenceInterval::from_samples(&[mean, mean], DEFAULT_LEVEL).unwrap()
    }

    fn point(strategy: &'static str, load: f64, split: f64) -> Point {
        Point {
            machine: Machine::Blocks,
            strategy,
            load,
            wait: ci(1.0),
            utilization: ci(0.5),
            stranded: ci(3.0),
            domains: ci(2.0),
            split: ci(split),
            lowest: ci(1.0),
        }
    }

    #[test]
    fn the_segment_claim_is_judged_from_the_split_counts() {
        let holds = [
            point("block", 0.5, 0.4),
            point("block[segment=6]", 0.5, 0.0),
            point("paging", 0.5, 1.0),
        ];
        let text = report(&holds, 1, 10);
        let row = text.lines().find(|l| l.contains("--segment")).unwrap();
        assert!(row.ends_with("| holds |"), "{row}");
        let fails = [
            point("block[segment=6]", 0.5, 0.0),
            point("block[segment=6]", 0.7, 0.1),
        ];
        let text = report(&fails, 1, 10);
        let row = text.lines().find(|l| l.contains("--segment")).unwrap();
        assert!(row.contains("does not hold"), "{row}");
    }

    #[test]
    fn the_machines_are_the_same_racks() {
        let (blocks, tree, top72) = machines().unwrap();
        let (b, t, c) = (
            blocks.as_slurm().unwrap(),
            tree.as_slurm().unwrap(),
            top72.as_slurm().unwrap(),
        );
        assert_eq!(b.num_nodes(), 144);
        assert_eq!(b.names(), t.names());
        assert_eq!(b.names(), c.names());
        assert_eq!(b.num_domains(), 8);
        assert_eq!(t.num_domains(), 8);
        assert_eq!(b.blocks().unwrap().levels(), [1, 2, 4, 8]);
        assert_eq!(c.blocks().unwrap().levels(), [1, 2, 4]);
    }

    #[test]
    fn every_job_lies_in_one_half_with_or_without_the_machine_wide_level() {
        let (_, _, top72) = machines().unwrap();
        let block = ALLOCATORS.spec("block").unwrap();
        let (report, _) = run_recorded(&top72, &block, SIZES, 0.8, (5, 0), 400).unwrap();
        assert_eq!(report.jobs.len(), 400);
        let mut spans_both = 0;
        for j in &report.jobs {
            let nodes = j.partition.node_list(&top72).unwrap();
            let halves: std::collections::BTreeSet<u32> = nodes.iter().map(|&n| n / 72).collect();
            spans_both += usize::from(halves.len() > 1);
        }
        assert_eq!(spans_both, 0);
        // With the machine-wide level the same jobs get the same nodes: Slurm
        // fixes a job's level from its size (at most 72 nodes here, so at
        // most the 72-node level) and never climbs to the whole machine.
        // This is why both machines measure the same waits.
        let (blocks, _, _) = machines().unwrap();
        let (full, _) = run_recorded(&blocks, &block, SIZES, 0.8, (5, 0), 400).unwrap();
        assert_eq!(full.jobs.len(), report.jobs.len());
        for (a, b) in full.jobs.iter().zip(&report.jobs) {
            assert_eq!(
                a.partition.node_list(&blocks).unwrap(),
                b.partition.node_list(&top72).unwrap()
            );
        }
    }

    #[test]
    fn segmented_runs_split_no_segment_and_runs_are_deterministic() {
        let (blocks, _, _) = machines().unwrap();
        let segmented = ALLOCATORS.spec("block[segment=6]").unwrap();
        let a = simulate(&blocks, &segmented, 0.7, 3, 0, 200).unwrap();
        let b = simulate(&blocks, &segmented, 0.7, 3, 0, 200).unwrap();
        assert_eq!(a.wait.to_bits(), b.wait.to_bits());
        assert_eq!(a.split, 0.0);
        assert!(a.utilization > 0.0 && a.domains >= 1.0, "{a:?}");
        assert!((0.0..=144.0).contains(&a.stranded), "{a:?}");
    }
}
