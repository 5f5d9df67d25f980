//! `partalloc whatif`: one Slurm workload under several slurm.conf files.
//!
//! Each configuration runs the sacct dump's jobs (arriving at their
//! submit times, running as long as they ran, limited by their time
//! limits) through the `slurm` scheduling policy on a machine of the
//! configuration's nodes, with the jobs' accounts, users, QOS and
//! partitions from the dump and the associations and QOS from sacctmgr
//! dumps. The table compares, per configuration, the whole workload and
//! each account, QOS and partition: jobs, mean wait, mean bounded slowdown,
//! the share of the machine's node-time their jobs used (every run, the
//! ones preemption ended included) and the runs preemption ended. Options a
//! configuration sets that the model does not read are named on standard
//! error.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use partalloc::schedulers::RequestMapping;
use partalloc::schedulers::slurm::assoc::{AssocTree, QosTable};
use partalloc::schedulers::slurm::conf::SchedConf;
use partalloc::schedulers::slurm::jobs::{DEFAULT_USER, JobTable};
use partalloc::schedulers::slurm::{Inputs, SlurmPolicy};
use partalloc::simkit::observe::{Departure, Observer};
use partalloc::simkit::{JobRecord, SimConfig, Simulation};
use partalloc::topology::Topology;
use partalloc::workload::sacct::SacctTrace;

use crate::error::{CliError, shown};
use crate::limits::{FileKind, read_text};
use crate::output::{check_outputs, csv_text, emit, num, write_atomic};

/// Options of `partalloc whatif`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A slurm.conf to run the workload under; repeat for each
    /// configuration to compare.
    #[arg(long = "conf", required = true)]
    confs: Vec<PathBuf>,
    /// The workload: sacct --parsable2 with JobID, Submit, Start, End,
    /// NNodes, Timelimit and Account, User, QOS, Partition.
    #[arg(long)]
    trace: PathBuf,
    /// Associations: sacctmgr show assoc -P (Account, User, Share, and
    /// optionally ParentName, GrpTRES, GrpJobs, MaxJobs, MaxWall).
    #[arg(long)]
    assoc: Option<PathBuf>,
    /// QOS: sacctmgr show qos -P.
    #[arg(long)]
    qos: Option<PathBuf>,
    /// The allocator that places the jobs.
    #[arg(long, default_value = "paging")]
    allocator: String,
    /// Backfill's plan: nodes (slurmctld's will-run test, node by node) or
    /// counts (free-node counts over exact ends: faster on large machines,
    /// further from slurmctld's schedules).
    #[arg(long, default_value = "nodes", value_parser = ["nodes", "counts"])]
    plan: String,
    /// Also write the table as CSV to this file.
    #[arg(long)]
    output: Option<PathBuf>,
}

/// One line of the table.
struct Line {
    conf: String,
    group: &'static str,
    name: String,
    jobs: u64,
    wait: f64,
    bsld: f64,
    share: f64,
    preempted: u64,
}

#[derive(Default)]
struct Sums {
    jobs: u64,
    wait: f64,
    bsld: f64,
    area: f64,
    preempted: u64,
}

/// Each job's node-time over all its runs (a requeued job's lost runs
/// included).
struct NodeTime(BTreeMap<u64, f64>);

impl Observer for NodeTime {
    fn departed(&mut self, d: &Departure<'_>) {
        *self.0.entry(d.job.id).or_insert(0.0) +=
            d.grant.granted_nodes() as f64 * (d.end - d.start);
    }
}

fn input_error(e: impl std::fmt::Display) -> CliError {
    CliError::input(e.to_string())
}

pub(crate) fn run(a: &Args) -> Result<(), CliError> {
    let mut inputs: Vec<&Path> = a.confs.iter().map(PathBuf::as_path).collect();
    inputs.push(&a.trace);
    inputs.extend(a.assoc.as_deref());
    inputs.extend(a.qos.as_deref());
    if let Some(out) = &a.output {
        check_outputs(&[("--output", out)], &inputs)?;
    }
    let trace_text = read_text(&a.trace, FileKind::Sacct)?;
    let trace = SacctTrace::parse(&trace_text, false)
        .map_err(|e| CliError::input(format!("{}: {e}", shown(&a.trace))))?;
    let tree = match &a.assoc {
        Some(p) => {
            AssocTree::parse(&read_text(p, FileKind::Config)?, &shown(p)).map_err(input_error)?
        }
        None => AssocTree::single(DEFAULT_USER),
    };
    let qos = match &a.qos {
        Some(p) => {
            QosTable::parse(&read_text(p, FileKind::Config)?, &shown(p)).map_err(input_error)?
        }
        None => QosTable::single(),
    };
    for (path, cols) in [
        (&a.assoc, tree.not_modelled()),
        (&a.qos, qos.not_modelled()),
    ] {
        if let (Some(p), false) = (path, cols.is_empty()) {
            eprintln!(
                "note: {}: not modelled (read and ignored): {}",
                shown(p),
                cols.join(", ")
            );
        }
    }
    let mut lines = Vec::new();
    for conf_path in &a.confs {
        let conf = SchedConf::parse(&read_text(conf_path, FileKind::Config)?, &shown(conf_path))
            .map_err(input_error)?;
        if let Some(note) = conf.not_modelled_line() {
            eprintln!("note: {note}");
        }
        lines.extend(run_one(a, conf_path, conf, &trace, &tree, &qos)?);
    }
    let header = [
        "conf",
        "group",
        "name",
        "jobs",
        "mean_wait_s",
        "mean_bounded_slowdown",
        "node_time_share",
        "preempted",
    ];
    let rows: Vec<Vec<String>> = lines
        .iter()
        .map(|l| {
            vec![
                l.conf.clone(),
                l.group.to_owned(),
                l.name.clone(),
                l.jobs.to_string(),
                num(l.wait),
                num(l.bsld),
                num(l.share),
                l.preempted.to_string(),
            ]
        })
        .collect();
    if let Some(out) = &a.output {
        write_atomic(out, csv_text(&header, &rows)?.as_bytes())?;
    }
    emit(&table(&header, &rows))
}

fn run_one(
    a: &Args,
    conf_path: &Path,
    conf: SchedConf,
    trace: &SacctTrace,
    tree: &AssocTree,
    qos: &QosTable,
) -> Result<Vec<Line>, CliError> {
    let nodes = conf.nodes;
    let machine: Topology = format!("mesh:{nodes}x1")
        .parse()
        .map_err(|e| CliError::input(format!("{}: {e}", shown(conf_path))))?;
    let (usable, _) = trace.clone().usable(nodes);
    let jobs = usable
        .jobs(nodes)
        .map_err(|e| CliError::input(format!("{}: {e}", shown(&a.trace))))?;
    let table = JobTable::from_sacct(trace, nodes, &shown(&a.trace));
    let name = format!("slurm[conf={}]", conf_path.display());
    let inputs = Inputs::new(conf, tree.clone(), qos.clone(), table);
    let mut policy = SlurmPolicy::new(inputs, nodes, name, RequestMapping::default())
        .map_err(input_error)?
        .with_count_plan(a.plan == "counts");
    // A job a limit holds even on an idle machine is an input error,
    // unless its QOS refuses it at submission (DenyOnLimit): then it is
    // counted here and never runs.
    let refused = policy
        .check_table(jobs.iter().map(|j| (j.id, j.nodes())))
        .map_err(input_error)?;
    if let Some((id, why)) = refused.first() {
        eprintln!(
            "note: {}: {} jobs refused at submission by a QOS with DenyOnLimit (job {id}: {why}{})",
            shown(conf_path),
            refused.len(),
            if refused.len() > 1 { ", …" } else { "" }
        );
    }
    let mut labels = BTreeMap::new();
    for j in &jobs {
        labels.insert(j.id, policy.labels(j.id, j.estimate).map_err(input_error)?);
    }
    let alloc = partalloc::allocators::registry::build(&a.allocator, &machine)
        .map_err(|e| CliError::input(format!("--allocator: {e}")))?;
    let config = SimConfig {
        measure_search_time: false,
        ..SimConfig::default()
    };
    let sim = Simulation::new(machine, alloc, Box::new(policy), jobs, config)
        .map_err(|e| CliError::input(e.to_string()))?;
    let mut records: Vec<JobRecord> = Vec::new();
    let mut node_time = NodeTime(BTreeMap::new());
    sim.run_observed(&mut node_time, Some(&mut |r| records.push(r)))
        .map_err(|e| CliError::input(e.to_string()))?;
    let span = records.iter().map(|r| r.end).fold(0.0, f64::max)
        - records
            .iter()
            .map(|r| r.arrival)
            .fold(f64::INFINITY, f64::min);
    let capacity = nodes as f64 * span.max(f64::MIN_POSITIVE);
    let mut groups: BTreeMap<(usize, String), Sums> = BTreeMap::new();
    for r in &records {
        let (acct, q, part) = labels.get(&r.id).cloned().unwrap_or_default();
        for key in [(0, String::from("-")), (1, acct), (2, q), (3, part)] {
            let s = groups.entry(key).or_default();
            s.jobs += 1;
            s.wait += r.wait;
            s.bsld += r.bounded_slowdown;
            s.area += node_time.0.get(&r.id).copied().unwrap_or(0.0);
            s.preempted += u64::from(r.preempted);
        }
    }
    let conf_name = shown(conf_path);
    Ok(groups
        .into_iter()
        .map(|((g, name), s)| Line {
            conf: conf_name.clone(),
            group: ["all", "account", "qos", "partition"][g],
            name,
            jobs: s.jobs,
            wait: s.wait / s.jobs.max(1) as f64,
            bsld: s.bsld / s.jobs.max(1) as f64,
            share: s.area / capacity,
            preempted: s.preempted,
        })
        .collect())
}

/// The rows as an aligned text table.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            if i >= 3 {
                let _ = write!(l, "{c:>w$}");
            } else {
                let _ = write!(l, "{c:<w$}");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>());
    for r in rows {
        line(r);
    }
    out
}
