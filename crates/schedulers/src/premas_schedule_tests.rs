//! PReMAS schedule goldens (`data/premas-oracle/sched/*.sched`, made by
//! `scripts/premas-oracle sched-all`; docs/premas-oracle.md): the jobs of a
//! trace as PReMAS read them and the start it gave each under one of its
//! schedulers (`easy[<comparator>]`, `cons`, `pqueue[<comparator>]`) with
//! its MBS allocator on a 2-D or 3-D mesh. Here the same jobs run under the
//! partalloc policy the golden
//! names, on partalloc's `mbs`, in an event loop that treats a time as
//! PReMAS does (departures in start order, then arrivals, then one
//! decision); the mean wait must equal PReMAS's to 0.1 s, and every job
//! must start when PReMAS started it.

use std::path::{Path, PathBuf};

use partalloc_allocators::{Allocator, registry as allocators};
use partalloc_topology::Topology;
use partalloc_workload::{Job, JobShape};

use crate::ordering_tests::run;
use crate::{Scheduler, registry};

/// One golden: the header fields and the jobs with PReMAS's starts.
struct SchedGolden {
    machine: String,
    scheduler: String,
    policy: String,
    jobs: Vec<Job>,
    starts: Vec<f64>,
    mean_wait: f64,
}

fn parse(path: &Path) -> SchedGolden {
    let text = std::fs::read_to_string(path).unwrap();
    let mut g = SchedGolden {
        machine: String::new(),
        scheduler: String::new(),
        policy: String::new(),
        jobs: Vec::new(),
        starts: Vec::new(),
        mean_wait: f64::NAN,
    };
    let mut format = false;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["premas-oracle-sched", "1"] => format = true,
            ["machine", m] => g.machine = (*m).to_owned(),
            ["scheduler", s] => g.scheduler = (*s).to_owned(),
            ["policy", p] => g.policy = (*p).to_owned(),
            ["mean-wait", w] => g.mean_wait = w.parse().unwrap(),
            ["j", id, arrival, procs, run, est, start] => {
                let num = |s: &str| -> f64 { s.parse::<i64>().unwrap() as f64 };
                let job = Job::new(
                    id.parse::<u64>().unwrap(),
                    num(arrival),
                    JobShape::Nodes {
                        count: procs.parse().unwrap(),
                    },
                    num(run),
                )
                .with_estimate(Some(num(est)));
                g.jobs.push(job);
                g.starts.push(num(start));
            }
            _ => {}
        }
    }
    assert!(format, "{}: not a schedule golden", path.display());
    g
}

/// Runs `jobs` (in arrival order) under `policy` on `alloc` in the unit
/// tests' event loop (departures at one time in start order, as PReMAS's
/// event numbers order them); the start of each job, by position.
fn replay(policy: &mut dyn Scheduler, alloc: &mut dyn Allocator, jobs: &[Job]) -> Vec<f64> {
    let mut starts = vec![f64::NAN; jobs.len()];
    for (id, t) in run(policy, alloc, jobs, |_, _| {}) {
        let k = jobs.iter().position(|j| j.id == id).unwrap();
        starts[k] = t;
    }
    starts
}

fn goldens() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/premas-oracle/sched");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sched"))
        .collect();
    files.sort();
    files
}

/// The partalloc machine of a golden's `XxYxZ`: `mesh:XxY` when Z is 1.
fn mesh(sides: &str) -> Topology {
    let sides = sides.strip_suffix("x1").unwrap_or(sides);
    format!("mesh:{sides}").parse().unwrap()
}

#[test]
fn starts_equal_premas_for_easy_conservative_and_every_priority_order() {
    let files = goldens();
    // EASY and the priority queue under seven comparators and conservative
    // backfilling, on two 2-D traces and a 3-D one, and EASY on four jobs
    // in two orders.
    assert!(files.len() >= 47, "{} schedule goldens", files.len());
    let mut kinds = std::collections::BTreeSet::new();
    let mut report = Vec::new();
    for path in &files {
        let g = parse(path);
        let machine = mesh(&g.machine);
        kinds.insert((machine.as_grid().unwrap().dims(), g.policy.clone()));
        let mut alloc = allocators::build("mbs", &machine).unwrap();
        let mut policy = registry::build(&g.policy, &machine).unwrap();
        let starts = replay(policy.as_mut(), alloc.as_mut(), &g.jobs);
        let n = g.jobs.len() as f64;
        let wait: f64 = g.jobs.iter().zip(&starts).map(|(j, s)| s - j.arrival).sum();
        let premas: f64 = g
            .jobs
            .iter()
            .zip(&g.starts)
            .map(|(j, s)| s - j.arrival)
            .sum();
        assert!(
            (premas / n - g.mean_wait).abs() < 1e-3,
            "{}: golden's own mean",
            path.display()
        );
        let differ = starts.iter().zip(&g.starts).filter(|(a, b)| a != b).count();
        report.push(format!(
            "{}: {} as {}: mean wait {:.3} vs PReMAS {:.3}; {differ} of {} starts differ",
            path.file_name().unwrap().to_string_lossy(),
            g.scheduler,
            g.policy,
            wait / n,
            g.mean_wait,
            g.jobs.len()
        ));
        if (wait / n - g.mean_wait).abs() > 0.1 || differ > 0 {
            report.push("  ^ MISMATCH".to_owned());
        }
        if g.policy == "conservative-backfilling" {
            // The other compression rule is another policy: where jobs end
            // early the golden tells them apart.
            let mut alloc = allocators::build("mbs", &machine).unwrap();
            let mut queue =
                registry::build("conservative-backfilling[compression=queue]", &machine).unwrap();
            let other = replay(queue.as_mut(), alloc.as_mut(), &g.jobs);
            let wait: f64 = g.jobs.iter().zip(&other).map(|(j, s)| s - j.arrival).sum();
            let differ = other.iter().zip(&g.starts).filter(|(a, b)| a != b).count();
            report.push(format!(
                "  compression=queue instead: mean wait {:.3}; {differ} starts differ",
                wait / n
            ));
            let early = g
                .jobs
                .iter()
                .any(|j| j.estimate.is_some_and(|e| e > j.service));
            assert_eq!(
                differ > 0,
                early,
                "{}: {}",
                path.display(),
                report.join("\n")
            );
        }
    }
    // Every policy on a 2-D and a 3-D machine.
    for policy in kinds.iter().map(|k| &k.1) {
        for dims in [2, 3] {
            assert!(
                kinds.contains(&(dims, policy.clone())),
                "{policy} on no {dims}-D golden"
            );
        }
    }
    let text = report.join("\n");
    assert!(!text.contains("MISMATCH"), "{text}");
    println!("{text}");
}
