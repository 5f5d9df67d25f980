//! Slurm's scheduling half as slurmctld 26.05 decides it: multifactor
//! priority with Fair Tree or classic fair share, the main scheduler,
//! backfill, QOS and association limits with their pending reasons, and
//! preemption (for drivers that can end running jobs). Placement stays the
//! allocator's. `docs/slurm-scheduling.md` lists every rule, what is not
//! modelled and the replays of goldens recorded from a real slurmctld.
//!
//! | concept | module | Slurm source that decides it |
//! |---|---|---|
//! | slurm.conf options | [`conf`] | `src/common/read_config.c`, `doc/man/man5/slurm.conf.5` |
//! | associations, QOS | [`assoc`] | `src/common/assoc_mgr.c` |
//! | jobs' attributes | [`jobs`] | sacct's columns |
//! | usage, decay, Fair Tree, classic | [`fairshare`] | `src/plugins/priority/multifactor/{priority_multifactor.c,fair_tree.c}` |
//! | factors and priority | [`priority`] | `priority_multifactor.c` |
//! | limits and pending reasons | [`limits`] | `src/slurmctld/acct_policy.c` |
//! | main scheduler, backfill, passes, victims of preemption | [`policy`] | `src/slurmctld/job_scheduler.c`, `src/plugins/sched/backfill/backfill.c`, `src/interfaces/preempt.c`, `src/plugins/preempt/{qos,partition_prio}` |
//!
//! As a registered policy: `slurm[conf=FILE,assoc=FILE,qos=FILE,trace=FILE]`
//! (every parameter optional): slurm.conf, `sacctmgr show assoc -P`,
//! `sacctmgr show qos -P`, and the sacct dump whose `Account`, `User`,
//! `QOS`, `Partition` and `Timelimit` columns give each job's attributes
//! (jobs numbered as [`SacctTrace::jobs`](partalloc_workload::sacct::SacctTrace::jobs)
//! numbers them).

pub mod assoc;
pub mod conf;
mod error;
pub mod fairshare;
pub mod jobs;
pub mod limits;
pub mod policy;

pub mod priority;

pub use error::{InputError, InputErrorKind};
use partalloc_allocators::StrategySpec;
use partalloc_topology::Topology;
pub use policy::{Inputs, SlurmPolicy, SqueueRow, StartedBy};

use crate::entry::{
    ANY_TOPOLOGY, Entry, ParamInfo, PolicyBuildError, PolicyEntry, ROTATE, StrategyInfo,
};

/// Reads a configuration file for the inputs through the library's one
/// reader of input files: within its size bound, and registered as an input
/// that no output of the run may replace.
fn read(path: &str) -> Result<String, InputError> {
    read_kind(path, partalloc_topology::files::FileKind::Config)
}

fn read_kind(path: &str, kind: partalloc_topology::files::FileKind) -> Result<String, InputError> {
    partalloc_topology::files::read_text(std::path::Path::new(path), kind)
        .map_err(|e| InputError::at(path, 0, InputErrorKind::Io(e.to_string())))
}

/// The inputs named by paths (each optional), for a machine of `nodes`
/// nodes.
///
/// # Errors
/// A file that cannot be read or is refused.
pub fn load(
    conf: Option<&str>,
    assoc: Option<&str>,
    qos: Option<&str>,
    trace: Option<&str>,
    nodes: u64,
) -> Result<Inputs, InputError> {
    let conf = match conf {
        Some(p) => conf::SchedConf::parse(&read(p)?, p)?,
        None => conf::SchedConf::for_machine(nodes),
    };
    let tree = match assoc {
        Some(p) => assoc::AssocTree::parse(&read(p)?, p)?,
        None => assoc::AssocTree::single(jobs::DEFAULT_USER),
    };
    let qos = match qos {
        Some(p) => assoc::QosTable::parse(&read(p)?, p)?,
        None => assoc::QosTable::single(),
    };
    let jobs = match trace {
        Some(p) => {
            let text = read_kind(p, partalloc_topology::files::FileKind::Sacct)?;
            let t = partalloc_workload::sacct::SacctTrace::parse(&text, true)
                .map_err(|e| InputError::at(p, 0, InputErrorKind::Io(e.to_string())))?;
            jobs::JobTable::from_sacct(&t, nodes, p)
        }
        None => jobs::JobTable::new("jobs"),
    };
    Ok(Inputs::new(conf, tree, qos, jobs))
}

/// Builds the policy from its spec's parameters.
///
/// # Errors
/// As [`load`] and [`SlurmPolicy::new`], and a job of the trace that
/// names an unknown partition, account or QOS or that a limit holds
/// forever.
pub fn build(spec: &StrategySpec, topology: &Topology) -> Result<SlurmPolicy, PolicyBuildError> {
    let mapping = crate::entry::mapping(spec)?;
    let get = |k: &str| spec.get(k).map(str::to_owned);
    let nodes = topology.num_nodes() as u64;
    let fail = |e: InputError| PolicyBuildError::Constructor {
        policy: "slurm".into(),
        reason: e.to_string(),
    };
    let (c, a, q, t) = (get("conf"), get("assoc"), get("qos"), get("trace"));
    let completing: f64 = spec.parse_or("completing", 0.0)?;
    if !(completing.is_finite() && completing >= 0.0) {
        return Err(spec
            .invalid("completing", "must be a number of seconds, 0 or more")
            .into());
    }
    let counts = match spec.get("plan").unwrap_or("nodes") {
        "nodes" => false,
        "counts" => true,
        _ => {
            return Err(spec
                .invalid(
                    "plan",
                    "must be nodes (slurmctld's will-run test) or counts",
                )
                .into());
        }
    };
    let inputs = load(
        c.as_deref(),
        a.as_deref(),
        q.as_deref(),
        t.as_deref(),
        nodes,
    )
    .map_err(fail)?;
    let ids: Vec<(u64, u64)> = match t.as_deref() {
        Some(p) => {
            let text = read(p).map_err(fail)?;
            partalloc_workload::sacct::SacctTrace::parse(&text, true)
                .ok()
                .map(|tr| {
                    tr.usable(nodes)
                        .0
                        .records
                        .iter()
                        .enumerate()
                        .map(|(k, r)| (k as u64 + 1, u64::from(r.nodes)))
                        .collect()
                })
                .unwrap_or_default()
        }
        None => Vec::new(),
    };
    let mut params = Vec::new();
    for (k, v) in [("conf", &c), ("assoc", &a), ("qos", &q), ("trace", &t)] {
        if let Some(v) = v {
            params.push(format!("{k}={v}"));
        }
    }
    if completing > 0.0 {
        params.push(format!("completing={completing}"));
    }
    if counts {
        params.push("plan=counts".to_owned());
    }
    let name = crate::entry::with_rotate("slurm", mapping, params.join(","));
    let mut p = SlurmPolicy::new(inputs, nodes, name, mapping)
        .map_err(fail)?
        .with_completing(completing)
        .with_count_plan(counts);
    p.check_table(ids).map_err(fail)?;
    Ok(p)
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "conf",
        default: "(none: one partition over every node, Slurm's defaults)",
        doc: "slurm.conf: priority weights and periods, SchedulerParameters, preemption, NodeName and PartitionName lines",
    },
    ParamInfo {
        name: "assoc",
        default: "(none: one account, one user)",
        doc: "sacctmgr show assoc -P dump (Account, User, Share; ParentName, GrpTRES, GrpTRESMins, GrpJobs, MaxJobs, MaxWall)",
    },
    ParamInfo {
        name: "qos",
        default: "(none: one QOS normal)",
        doc: "sacctmgr show qos -P dump (Name; Priority, Preempt, UsageFactor, GrpTRES, GrpTRESMins, GrpJobs, MaxWall, MaxTRESPU, MaxJobsPU)",
    },
    ParamInfo {
        name: "trace",
        default: "(none: every job in the default account, QOS and partition)",
        doc: "the sacct dump being replayed, read for its Account, User, QOS, Partition and Timelimit columns",
    },
    ParamInfo {
        name: "plan",
        default: "nodes",
        doc: "backfill's plan: nodes (slurmctld's will-run test, node by node) or counts (free-node counts over exact ends: faster, further from slurmctld)",
    },
    ParamInfo {
        name: "completing",
        default: "0",
        doc: "seconds an ended job's nodes stay completing (slurmd's report and epilog) before the main scheduler sees them free",
    },
    ROTATE,
];

/// The registry entry.
pub const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "slurm",
        summary: "slurmctld's queue: multifactor priority (Fair Tree or classic), main scheduler, backfill, QOS and association limits",
        source: "Slurm 26.05 (docs/slurm-scheduling.md)",
        params: PARAMS,
        topologies: ANY_TOPOLOGY,
    },
    build: |topology, spec| Ok(Box::new(build(spec, topology)?)),
};
