//! `partalloc show`: the machine's occupancy at a chosen simulated time.
//!
//! The run is the ordinary simkit run loop on the jobs that arrive at or
//! before the chosen time `t` (later arrivals cannot change the state at
//! `t`), drained to the end with every job recorded. The jobs running at
//! `t` are those with start ≤ t < end, exactly the grants live after the
//! loop has processed every event at times ≤ t. The allocator is wrapped so
//! that each granted partition is kept by its printed form, which the job
//! records carry, to find the nodes of each running job.
//!
//! Layout: a mesh or torus of 1 to 3 dimensions is drawn with dimension 0
//! across and dimension 1 down (row y = 0 first), one panel per value of
//! dimension 2. A hypercube Q_n is drawn as a 2^⌈n/2⌉ × 2^⌊n/2⌋ grid: the
//! low ⌈n/2⌉ bits of a node id across, the high bits down. A Slurm machine
//! is drawn one row per fast domain (base block or leaf switch), its nodes
//! across in id order, each row labelled with the domain's name.

use std::fmt::Write as _;
use std::path::PathBuf;

use partalloc::simkit::report::partition_label;
use partalloc::simkit::{JobRecord, Replications, SimConfig, Simulation, Stop};
use partalloc::topology::slurm::SlurmMachine;
use partalloc::topology::{NodeId, Topology, echo, escaped};
use partalloc::workload::Job;

use crate::error::CliError;
use crate::limits::{MAX_SHOW_JOBS, MAX_SHOW_NODES, MAX_SVG_CELLS, check_machine};
use crate::output::{emit, num, write_atomic};
use crate::run::parse_topology;
use crate::workload::{TraceArgs, WorkloadArgs};

/// Options of `partalloc show`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The machine: a 1- to 3-dimensional mesh, torus or pod, a hypercube,
    /// or a Slurm block or tree machine.
    #[arg(long, short, long_help = partalloc_experiment::forms::topology_help())]
    topology: String,
    /// Allocation strategy.
    #[arg(long, short)]
    allocator: String,
    /// Scheduling policy.
    #[arg(long, short, default_value = "fcfs")]
    scheduler: String,
    /// The simulated time to show.
    #[arg(long)]
    at: f64,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    trace: TraceArgs,
    #[arg(long, help = crate::workload::MODEL_HELP, value_parser = crate::workload::parse_model, conflicts_with_all = ["trace", "load", "allow_saturation", "shapes", "sides", "max_sides", "cube_dims", "shape_weights", "residence", "dependence"])]
    model: Option<Box<partalloc::workload::lublin::LublinSpec>>,
    /// Master seed of the generated workload (replication 0 is shown).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// On a 3-D machine, show only this value of dimension 2.
    #[arg(long)]
    slice: Option<u32>,
    /// Also write the picture as SVG to this file.
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// The picture's geometry: width × height cells in `panels` panels.
#[derive(Debug, Clone)]
struct Layout {
    width: u32,
    height: u32,
    panels: u32,
    /// On a Slurm machine, one row per fast domain: its first node id and
    /// its name (empty otherwise).
    rows: Vec<(NodeId, String)>,
}

fn layout(topology: &Topology) -> Result<Layout, CliError> {
    if let Some(h) = topology.as_hypercube() {
        let lo = h.dim().div_ceil(2);
        return Ok(Layout {
            width: 1 << lo,
            height: 1 << (h.dim() - lo),
            panels: 1,
            rows: Vec::new(),
        });
    }
    if let Some(m) = topology.as_slurm() {
        return Ok(slurm_layout(m));
    }
    let Some(g) = topology.as_grid() else {
        // Any other machine (GPU-sharing and capacity machines among
        // them) as a plain node list, 16 a row.
        let n = topology.num_nodes() as NodeId;
        let rows: Vec<(NodeId, String)> = (0..n)
            .step_by(16)
            .map(|start| (start, format!("nodes {start}–{}", (start + 15).min(n - 1))))
            .collect();
        return Ok(Layout {
            width: n.min(16),
            height: rows.len() as u32,
            panels: 1,
            rows,
        });
    };
    let s = g.sides();
    let side = |i: usize| s.get(i).copied().unwrap_or(1);
    if g.dims() > 3 {
        return Err(CliError::input(format!(
            "show draws machines of 1 to 3 dimensions; {topology} has {}",
            g.dims()
        )));
    }
    Ok(Layout {
        width: side(0),
        height: side(1),
        panels: side(2),
        rows: Vec::new(),
    })
}

/// One row per base block or leaf switch; domains hold consecutive ids.
fn slurm_layout(m: &SlurmMachine) -> Layout {
    let mut rows: Vec<(NodeId, String)> = Vec::new();
    let mut width = 0;
    for node in 0..m.num_nodes() as NodeId {
        let Some(d) = m.domain_of(node) else { continue };
        if d as usize == rows.len() {
            if let Some(&(start, _)) = rows.last() {
                width = width.max(node - start);
            }
            let name = match (m.blocks(), m.tree()) {
                (Some(b), _) => b.block_names().get(d as usize).cloned(),
                (_, Some(t)) => t
                    .leaves()
                    .get(d as usize)
                    .and_then(|&l| t.switches().get(l as usize))
                    .map(|s| s.name.clone()),
                _ => None,
            };
            let name = name.map_or_else(|| format!("domain {d}"), |n| echo(&n));
            rows.push((node, name));
        }
    }
    if let Some(&(start, _)) = rows.last() {
        width = width.max(m.num_nodes() as NodeId - start);
    }
    Layout {
        width,
        height: rows.len() as u32,
        panels: 1,
        rows,
    }
}

/// (panel, x, y) of a node.
fn place(topology: &Topology, lay: &Layout, node: NodeId) -> (u32, u32, u32) {
    if topology.as_hypercube().is_some() {
        return (0, node % lay.width, node / lay.width);
    }
    if !lay.rows.is_empty() {
        let y = lay
            .rows
            .partition_point(|&(start, _)| start <= node)
            .saturating_sub(1);
        return (0, node - lay.rows[y].0, y as u32);
    }
    let n = node;
    (
        n / (lay.width * lay.height),
        n % lay.width,
        (n / lay.width) % lay.height,
    )
}

const SYMBOLS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
];

fn symbol(i: usize) -> char {
    SYMBOLS
        .get(i % SYMBOLS.len())
        .map_or('?', |&b| char::from(b))
}

/// What is on the machine at time `at`.
struct Snapshot {
    running: Vec<JobRecord>,
    waiting: usize,
    /// Per node: index into `running`.
    owner: Vec<Option<usize>>,
    /// On a pod: the largest placeable slice and the stranded chips; on a
    /// Slurm machine, the stranded nodes.
    pod: Option<String>,
}

fn snapshot(args: &Args, topology: &Topology) -> Result<Snapshot, CliError> {
    let at = args.at;
    if !(at.is_finite() && at >= 0.0) {
        return Err(CliError::input(format!(
            "--at {at}: the time must be a finite number at least 0"
        )));
    }
    // The jobs arriving by `at`, at most one more than the bound: a late
    // `--at` on a generated workload would otherwise draw without end.
    let jobs: Vec<Job> = if let Some(path) = &args.trace.trace {
        let (jobs, _) = args.trace.read_all(path, topology)?;
        jobs.into_iter()
            .take_while(|j| j.arrival <= at)
            .take(MAX_SHOW_JOBS + 1)
            .collect()
    } else if let Some(model) = &args.model {
        // The jobs `generate --model` writes for the seed, as a replay of
        // them maps their counts.
        let m = model
            .model(topology.num_nodes() as u64)
            .map_err(|e| CliError::input(format!("--model: {e}")))?;
        let mapping = args.trace.mapping(topology);
        let mut rng = Replications::new(args.seed, 1)
            .map_err(|e| CliError::input(e.to_string()))?
            .rng(0);
        partalloc_experiment::experiment::lublin_jobs(&m, &mapping, &mut rng)
            .take_while(|j| j.as_ref().map_or(true, |j| j.arrival <= at))
            .take(MAX_SHOW_JOBS + 1)
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::input(format!("--model: {e}")))?
    } else {
        // Jobs and warm-up do not apply: the run goes on until `at`.
        let spec = args.workload.spec(1, 0);
        let w = spec.build(topology, args.workload.load)?;
        let mut rng = Replications::new(args.seed, 1)
            .map_err(|e| CliError::input(e.to_string()))?
            .rng(0);
        w.jobs(&mut rng)
            .take_while(|j| j.arrival <= at)
            .take(MAX_SHOW_JOBS + 1)
            .collect()
    };
    if jobs.len() > MAX_SHOW_JOBS {
        return Err(CliError::input(format!(
            "--at {}: more than {MAX_SHOW_JOBS} jobs arrive by then, too many for show: times reached within {MAX_SHOW_JOBS} jobs are accepted",
            num(at)
        )));
    }
    let alloc = partalloc::allocators::registry::build(&args.allocator, topology)
        .map_err(|e| CliError::input(e.to_string()))?;
    let sched = partalloc::schedulers::registry::build(&args.scheduler, topology)
        .map_err(|e| CliError::input(e.to_string()))?;
    let config = SimConfig {
        stop: Stop::default(),
        warmup: 0,
        record_jobs: true,
        measure_search_time: false,
        ..SimConfig::default()
    };
    let rules = alloc.placement_rules();
    let from_trace = args.trace.trace.is_some();
    let report = Simulation::new(topology.clone(), alloc, sched, jobs, config)?.run()?;
    // A trace ends: past its last event the machine is empty for ever, and
    // drawing it would show nothing the trace holds.
    let last = report
        .jobs
        .iter()
        .map(|j| j.end)
        .fold(f64::NEG_INFINITY, f64::max);
    if from_trace && at > last {
        return Err(CliError::input(if last.is_finite() {
            format!(
                "--at {}: the trace's last job ends at {}, after which nothing runs: give a time up to {}",
                num(at),
                num(last),
                num(last)
            )
        } else {
            format!(
                "--at {}: no job of the trace arrives by then: give a later time",
                num(at)
            )
        }));
    }
    let waiting = report
        .jobs
        .iter()
        .filter(|j| j.arrival <= at && at < j.start)
        .count();
    let mut running: Vec<JobRecord> = report
        .jobs
        .into_iter()
        .filter(|j| j.start <= at && at < j.end)
        .collect();
    running.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.id.cmp(&b.id)));
    let mut owner = vec![None; topology.num_nodes()];
    for (i, r) in running.iter().enumerate() {
        r.partition
            .for_each_node(topology, |n| {
                if let Some(o) = owner.get_mut(n as usize) {
                    *o = Some(i);
                }
            })
            .map_err(|e| CliError::input(format!("job {}: {e}", r.id)))?;
    }
    let pod = crate::pod_measures::state_line(topology, rules, &owner)
        .or_else(|| crate::slurm_measures::state_line(topology, &owner));
    Ok(Snapshot {
        running,
        waiting,
        owner,
        pod,
    })
}

/// "3 jobs running on 40 of 64 nodes, 1 waiting".
fn summary(topology: &Topology, snap: &Snapshot) -> String {
    let busy = snap.owner.iter().filter(|o| o.is_some()).count();
    let n = snap.running.len();
    format!(
        "{n} job{} running on {busy} of {} nodes, {} waiting{}",
        if n == 1 { "" } else { "s" },
        topology.num_nodes(),
        snap.waiting,
        snap.pod.as_deref().unwrap_or_default()
    )
}

fn panels(lay: &Layout, slice: Option<u32>) -> Result<Vec<u32>, CliError> {
    match slice {
        Some(z) if z >= lay.panels => Err(CliError::input(format!(
            "--slice {z}: the machine has slices 0 to {} along dimension 2",
            lay.panels - 1
        ))),
        Some(z) => Ok(vec![z]),
        None => Ok((0..lay.panels).collect()),
    }
}

fn text(
    args: &Args,
    topology: &Topology,
    lay: &Layout,
    snap: &Snapshot,
) -> Result<String, CliError> {
    let mut grid = vec![b'.'; topology.num_nodes()];
    let mut cells = vec![(0u32, 0u32, 0u32); topology.num_nodes()];
    for n in 0..topology.num_nodes() {
        let node = n as NodeId;
        cells[n] = place(topology, lay, node);
        if let Some(i) = snap.owner[n] {
            grid[n] = symbol(i) as u8;
        }
    }
    let mut at = vec![b' '; (lay.panels * lay.width * lay.height) as usize];
    for (n, &(p, x, y)) in cells.iter().enumerate() {
        at[((p * lay.height + y) * lay.width + x) as usize] = grid[n];
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} · {} · {} · t = {}: {}",
        escaped(&machine_label(topology)),
        escaped(&args.allocator),
        escaped(&args.scheduler),
        args.at,
        summary(topology, snap)
    );
    for z in panels(lay, args.slice)? {
        if lay.panels > 1 {
            let _ = writeln!(s, "\nslice z = {z} (dimension 2)");
        } else {
            s.push('\n');
        }
        let label = lay.rows.iter().map(|(_, n)| n.chars().count()).max();
        for y in 0..lay.height {
            let start = ((z * lay.height + y) * lay.width) as usize;
            let row = &at[start..start + lay.width as usize];
            if let (Some(w), Some((_, name))) = (label, lay.rows.get(y as usize)) {
                let _ = write!(s, "{name:<w$}  ");
            }
            s.push_str(String::from_utf8_lossy(row).trim_end());
            s.push('\n');
        }
    }
    let _ = writeln!(s, "\n. free; running jobs:");
    for (i, r) in snap.running.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {} job {:<6} {:>5} nodes  {:<24} start {:<10} end {}",
            symbol(i),
            r.id,
            r.granted,
            escaped(&partition_label(&r.partition, topology, &mut Vec::new())),
            num(r.start),
            num(r.end)
        );
    }
    Ok(s)
}

fn svg(
    args: &Args,
    topology: &Topology,
    lay: &Layout,
    snap: &Snapshot,
) -> Result<String, CliError> {
    let shown = panels(lay, args.slice)?;
    // Pixel arithmetic in u64: a long 1-D machine is wider than u32 allows
    // once multiplied by the cell size and the panels.
    let (w, h) = (u64::from(lay.width), u64::from(lay.height));
    let cells = shown.len() as u64 * w * h;
    let mut s = String::new();
    if cells > MAX_SVG_CELLS as u64 {
        return Ok(svg_summary(args, topology, snap, cells));
    }
    let cell = (640 / w.max(h)).clamp(3, 24);
    let gap = cell * 2;
    let (pw, ph) = (w * cell, h * cell);
    // Room left of the panel for the row names of a Slurm machine.
    let margin = lay
        .rows
        .iter()
        .map(|(_, n)| n.chars().count() as u64 * 7 + 6)
        .max()
        .unwrap_or(0);
    let width = (margin + shown.len() as u64 * (pw + gap) + gap)
        .max(420)
        .max(header_width(args, topology, snap, gap));
    let height = ph + 90;
    svg_header(&mut s, args, topology, snap, width, height, gap);
    for (k, &z) in shown.iter().enumerate() {
        let ox = margin + gap + k as u64 * (pw + gap);
        let oy = 70;
        if lay.panels > 1 {
            let _ = writeln!(
                s,
                r#"<text x="{ox}" y="{}" font-size="11">z = {z}</text>"#,
                oy - 6
            );
        }
        let _ = writeln!(
            s,
            r##"<rect x="{ox}" y="{oy}" width="{pw}" height="{ph}" fill="#f2f2f2" stroke="#999"/>"##
        );
        for (y, (_, name)) in lay.rows.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>"#,
                ox - 4,
                oy + y as u64 * cell + cell * 3 / 4,
                escape(name)
            );
        }
        // Each job's letter (as in the text picture) in its first cell of
        // the panel, when cells are large enough to hold it.
        let mut labelled = vec![false; snap.running.len()];
        let mut labels = String::new();
        for n in 0..topology.num_nodes() {
            let (p, x, y) = place(topology, lay, n as NodeId);
            if p != z {
                continue;
            }
            let (x, y) = (u64::from(x), u64::from(y));
            if let Some(i) = snap.owner[n] {
                if cell >= 10 && !labelled[i] {
                    labelled[i] = true;
                    let _ = writeln!(
                        labels,
                        r#"<text x="{}" y="{}" font-size="{}" fill="white" text-anchor="middle">{}</text>"#,
                        ox + x * cell + cell / 2,
                        oy + y * cell + cell * 3 / 4,
                        cell * 2 / 3,
                        symbol(i)
                    );
                }
                let r = &snap.running[i];
                let color = COLORS[i % COLORS.len()];
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="{cell}" height="{cell}" fill="{color}" stroke="white" stroke-width="0.5"><title>job {} ({} nodes) {}</title></rect>"#,
                    ox + x * cell,
                    oy + y * cell,
                    r.id,
                    r.granted,
                    escape(&partition_label(&r.partition, topology, &mut Vec::new()))
                );
            }
        }
        s.push_str(&labels);
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// The title and summary lines every picture starts with.
fn svg_header(
    s: &mut String,
    args: &Args,
    topology: &Topology,
    snap: &Snapshot,
    width: u64,
    height: u64,
    gap: u64,
) {
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{gap}" y="20" font-size="14">{} · {} · {} · t = {}</text>"#,
        escape(&machine_label(topology)),
        escape(&args.allocator),
        escape(&args.scheduler),
        args.at,
    );
    let _ = writeln!(
        s,
        r#"<text x="{gap}" y="40" font-size="12">{}</text>"#,
        escape(&summary(topology, snap))
    );
}

/// The width of the title and summary lines of a picture, wide enough for
/// their text (sans-serif averages under 0.62 em a character).
fn header_width(args: &Args, topology: &Topology, snap: &Snapshot, gap: u64) -> u64 {
    let title = format!(
        "{} · {} · {} · t = {}",
        machine_label(topology),
        args.allocator,
        args.scheduler,
        args.at
    );
    let chars = |s: &str, px: f64| (s.chars().count() as f64 * px * 0.62).ceil() as u64;
    2 * gap + chars(&title, 14.0).max(chars(&summary(topology, snap), 12.0))
}

/// The machine as a title names it: a machine read from files by its
/// family and the files' names, not their paths (a picture is looked at
/// elsewhere), cut as every echoed input is.
pub(crate) fn machine_label(topology: &Topology) -> String {
    let full = topology.to_string();
    let label = match full.split_once(':') {
        Some((family, rest)) if rest.contains('/') => {
            let names: Vec<&str> = rest
                .split(',')
                .map(|p| p.rsplit('/').next().unwrap_or(p))
                .collect();
            format!("{family}:{}", names.join(","))
        }
        _ => full,
    };
    partalloc::topology::echo(&label)
}

/// Jobs listed by name in a summary picture.
const SUMMARY_JOBS: usize = 40;

/// A picture of a machine too large for a cell per node: the summary and
/// the first running jobs, one line each.
fn svg_summary(args: &Args, topology: &Topology, snap: &Snapshot, cells: u64) -> String {
    let listed = snap.running.len().min(SUMMARY_JOBS);
    let more = usize::from(snap.running.len() > listed);
    let gap = 12;
    let width = header_width(args, topology, snap, gap).max(720);
    let height = 90 + 16 * (listed + more) as u64;
    let mut s = String::new();
    svg_header(&mut s, args, topology, snap, width, height, gap);
    let _ = writeln!(
        s,
        r#"<text x="{gap}" y="60" font-size="12">{cells} cells are more than the {MAX_SVG_CELLS} drawn one by one; the text picture (or --slice) shows every node</text>"#
    );
    for (i, r) in snap.running.iter().take(listed).enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{gap}" y="{}" font-size="11" fill="{}">{} job {} ({} nodes) {}</text>"#,
            84 + 16 * i as u64,
            COLORS[i % COLORS.len()],
            symbol(i),
            r.id,
            r.granted,
            escape(&partition_label(&r.partition, topology, &mut Vec::new()))
        );
    }
    if more > 0 {
        let _ = writeln!(
            s,
            r#"<text x="{gap}" y="{}" font-size="11">… and {} more running jobs</text>"#,
            84 + 16 * listed as u64,
            snap.running.len() - listed
        );
    }
    s.push_str("</svg>\n");
    s
}

/// `t` as SVG text: unsafe characters escaped as
/// [`escaped`] does (XML forbids most control characters even as
/// references), then `&`, `<` and `>`.
fn escape(t: &str) -> String {
    escaped(t)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Runs `partalloc show`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let topology = parse_topology(&args.topology)?;
    check_machine("show", &topology, MAX_SHOW_NODES)?;
    if let Some(svg) = &args.svg {
        // The machine's files and the trace: the picture replaces neither.
        let machine_files = crate::run::topology_files(&args.topology);
        crate::output::check_outputs(
            &[("--svg", svg.as_path())],
            &machine_files
                .iter()
                .map(std::path::PathBuf::as_path)
                .chain(args.trace.trace.as_deref())
                .collect::<Vec<_>>(),
        )?;
    }
    let lay = layout(&topology)?;
    panels(&lay, args.slice)?;
    let snap = snapshot(args, &topology)?;
    let t = text(args, &topology, &lay, &snap)?;
    if let Some(path) = &args.svg {
        write_atomic(path, svg(args, &topology, &lay, &snap)?.as_bytes())?;
    }
    emit(&t)
}
