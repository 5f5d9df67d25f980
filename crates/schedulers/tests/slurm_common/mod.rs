//! A small event loop for the Slurm policy's tests: the engine's order of
//! events (departures, then arrivals, then one `schedule`, then the
//! policy's wake-up), with snapshots of the policy at chosen times.

use std::collections::BTreeMap;

use partalloc_schedulers::Scheduler;
use partalloc_schedulers::slurm::SlurmPolicy;
use partalloc_workload::Job;

/// What a run produced: each job's start and end.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) start: BTreeMap<u64, f64>,
    pub(crate) end: BTreeMap<u64, f64>,
}

/// Runs `jobs` (sorted by arrival) on a `paging` allocator of `nodes`
/// nodes; calls `at(t, policy)` once at each snapshot time, after every
/// event at or before it.
pub(crate) fn run(
    policy: &mut SlurmPolicy,
    nodes: u32,
    jobs: &[Job],
    snapshots: &[f64],
    at: impl FnMut(f64, &mut SlurmPolicy),
) -> Result<Outcome, Box<dyn std::error::Error>> {
    run_drained(policy, nodes, jobs, snapshots, None, at)
}

/// As [`run`]; over `drain` = (from, to), every node that is or becomes
/// free is out of service (scontrol's `State=DRAIN`, then `RESUME`).
pub(crate) fn run_drained(
    policy: &mut SlurmPolicy,
    nodes: u32,
    jobs: &[Job],
    snapshots: &[f64],
    drain: Option<(f64, f64)>,
    at: impl FnMut(f64, &mut SlurmPolicy),
) -> Result<Outcome, Box<dyn std::error::Error>> {
    run_cancelled(policy, nodes, jobs, snapshots, drain, &[], at)
}

/// As [`run_drained`]; each (time, job) of `cancels` ends that job then
/// if it is running (scancel of a running job).
pub(crate) fn run_cancelled(
    policy: &mut SlurmPolicy,
    nodes: u32,
    jobs: &[Job],
    snapshots: &[f64],
    drain: Option<(f64, f64)>,
    cancels: &[(f64, u64)],
    mut at: impl FnMut(f64, &mut SlurmPolicy),
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let mut cancels = cancels.to_vec();
    cancels.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut next_cancel = 0;
    let mut drained = Vec::new();
    // 0: before the drain, 1: drained, 2: resumed.
    let mut phase = 0u8;
    let machine = format!("mesh:{nodes}x1").parse()?;
    let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
    let mut out = Outcome::default();
    let mut running: Vec<(f64, u64, partalloc_schedulers::Started)> = Vec::new();
    let mut next_job = 0;
    let mut snaps = snapshots.iter().copied().peekable();
    let mut wakeup: Option<f64> = None;
    let mut seq = 0u64;
    loop {
        let dep = running.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        let arr = jobs.get(next_job).map_or(f64::INFINITY, |j| j.arrival);
        let drain_next = match (drain, phase) {
            (Some((from, _)), 0) => from,
            (Some((_, to)), 1) => to,
            _ => f64::INFINITY,
        };
        let cancel = cancels.get(next_cancel).map_or(f64::INFINITY, |c| c.0);
        let t = dep
            .min(arr)
            .min(wakeup.unwrap_or(f64::INFINITY))
            .min(drain_next)
            .min(cancel);
        while let Some(&s) = snaps.peek() {
            if s < t {
                policy.catch_up(s);
                at(s, policy);
                snaps.next();
            } else {
                break;
            }
        }
        if !t.is_finite() {
            break;
        }
        // Departures at t, in start order.
        running.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        while running.first().is_some_and(|r| r.0 == t) {
            let (_, _, s) = running.remove(0);
            alloc.release(&s.grant)?;
            policy.departed(&s.job, t);
            out.end.insert(s.job.id, t);
        }
        while cancels.get(next_cancel).is_some_and(|c| c.0 == t) {
            let id = cancels[next_cancel].1;
            next_cancel += 1;
            if let Some(k) = running.iter().position(|r| r.2.job.id == id) {
                let (_, _, s) = running.remove(k);
                alloc.release(&s.grant)?;
                policy.departed(&s.job, t);
                out.end.insert(id, t);
            }
        }
        while jobs.get(next_job).is_some_and(|j| j.arrival == t) {
            policy.submit(jobs[next_job], t)?;
            next_job += 1;
        }
        if let Some((from, to)) = drain {
            if phase == 0 && from <= t {
                phase = 1;
            }
            if phase == 1 && to <= t {
                phase = 2;
                for g in drained.drain(..) {
                    alloc.release(&g)?;
                }
                policy.nodes_changed();
            }
        }
        if phase == 1 && alloc.free_nodes() > 0 {
            let count = u32::try_from(alloc.free_nodes())?;
            drained.push(alloc.allocate(&partalloc_allocators::Request::Nodes { count })?);
        }
        let mut started = Vec::new();
        policy.schedule(t, alloc.as_mut(), &mut started)?;
        loop {
            for s in started.drain(..) {
                out.start.entry(s.job.id).or_insert(t);
                seq += 1;
                running.push((t + s.job.service, seq, s));
            }
            // Preempted jobs end now; the policy then schedules again.
            let victims = policy.take_preempted();
            if victims.is_empty() {
                break;
            }
            for (id, _) in victims {
                if let Some(k) = running.iter().position(|r| r.2.job.id == id) {
                    let (_, _, s) = running.remove(k);
                    alloc.release(&s.grant)?;
                    policy.departed(&s.job, t);
                    out.end.insert(id, t);
                }
            }
            policy.schedule(t, alloc.as_mut(), &mut started)?;
        }
        wakeup = policy.next_wakeup().filter(|&w| w > t);
    }
    Ok(out)
}

/// A job's attributes for [`policy`]: id, account, user, QOS, partition,
/// time limit in seconds.
pub(crate) type Attrs<'a> = (u64, &'a str, &'a str, Option<&'a str>, Option<&'a str>, u64);

/// A policy from texts: slurm.conf, association dump, QOS dump, and per
/// job (id, account, user, qos, partition, time limit in seconds).
pub(crate) fn policy(
    conf: &str,
    assoc: &str,
    qos: Option<&str>,
    jobs: &[Attrs<'_>],
) -> Result<SlurmPolicy, Box<dyn std::error::Error>> {
    use partalloc_schedulers::slurm::Inputs;
    use partalloc_schedulers::slurm::assoc::{AssocTree, QosTable};
    use partalloc_schedulers::slurm::conf::SchedConf;
    use partalloc_schedulers::slurm::jobs::{JobAttrs, JobTable};
    let conf = SchedConf::parse(conf, "test.conf")?;
    let nodes = conf.nodes;
    let tree = AssocTree::parse(assoc, "assoc.txt")?;
    let qos = match qos {
        Some(q) => QosTable::parse(q, "qos.txt")?,
        None => QosTable::single(),
    };
    let mut table = JobTable::new("jobs");
    for &(id, account, user, q, part, limit) in jobs {
        table.insert(
            id,
            JobAttrs::new()
                .with_names(Some(account), Some(user), q, part)
                .with_time_limit(Some(limit)),
        );
    }
    Ok(SlurmPolicy::new(
        Inputs::new(conf, tree, qos, table),
        nodes,
        "slurm".into(),
        partalloc_schedulers::RequestMapping::default(),
    )?)
}

/// Job `id` of `nodes` nodes arriving at `arrival` for `service` seconds.
pub(crate) fn job(id: u64, arrival: f64, nodes: u32, service: f64) -> Job {
    Job::new(
        id,
        arrival,
        partalloc_workload::JobShape::Nodes { count: nodes },
        service,
    )
}
