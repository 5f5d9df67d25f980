//! Hand-computed runs of the simulation loop, and statistical checks
//! (Little's law, utilization = offered load) on long runs.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "the helpers building fixtures sit outside #[test] functions"
)]

use partalloc_allocators::Allocator;
use partalloc_allocators::registry::ALLOCATORS;
use partalloc_schedulers::registry;
use partalloc_schedulers::registry::POLICIES;
use partalloc_schedulers::testing::{TestAlloc, cube_job};
use partalloc_simkit::{ConfidenceInterval, Replications, SimConfig, Simulation, Stop};
use partalloc_topology::Coords;
use partalloc_workload::{Job, JobShape};
use rand::RngExt;
use rand_distr::{Distribution, Exp};

fn boxed(id: u64, arrival: f64, w: u32, h: u32, service: f64) -> Job {
    Job::new(
        id,
        arrival,
        JobShape::Box {
            sides: Coords::new(&[w, h]).unwrap(),
        },
        service,
    )
}

fn run(alloc: TestAlloc, policy: &str, jobs: Vec<Job>) -> partalloc_simkit::Report {
    let topo = alloc.topology().clone();
    let sched = registry::build(policy, &topo).unwrap();
    let cfg = SimConfig {
        record_jobs: true,
        ..SimConfig::default()
    };
    Simulation::new(topo, Box::new(alloc), sched, jobs, cfg)
        .unwrap()
        .run()
        .unwrap()
}

fn starts(r: &partalloc_simkit::Report) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = r.jobs.iter().map(|j| (j.id, j.start)).collect();
    v.sort_by_key(|x| x.0);
    v
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

/// Q_2, bitmap buddy. J1 (Q_0, 10) → node 0, J2 (Q_0, 2) → node 1,
/// J3 (Q_1, 1) → {2,3}; J4 (Q_0) at 1.5 → node 2; J2 leaves at 2, so at
/// 2.5 nodes 1 and 3 are free but no aligned pair: J5 (Q_1) is blocked
/// topologically until J4 leaves at 6.5. J6 (Q_0) arrives at 3.
fn q2_jobs() -> Vec<Job> {
    vec![
        cube_job(1, 0, 0.0, 10.0),
        cube_job(2, 0, 0.0, 2.0),
        cube_job(3, 1, 0.0, 1.0),
        cube_job(4, 0, 1.5, 5.0),
        cube_job(5, 1, 2.5, 1.0),
        cube_job(6, 0, 3.0, 1.0),
    ]
}

#[test]
fn q2_fcfs_hand_computed() {
    let r = run(TestAlloc::buddy(2).unwrap(), "fcfs", q2_jobs());
    assert_eq!(
        starts(&r),
        [(1, 0.0), (2, 0.0), (3, 0.0), (4, 1.5), (5, 6.5), (6, 6.5)]
    );
    let s = &r.results;
    assert_eq!(s.completed, 6);
    // Responses 10, 2, 1, 5, 5, 4.5.
    close(s.mean_response, 27.5 / 6.0);
    close(s.mean_wait, 7.5 / 6.0);
    // J5 heads the queue from 2.5 to 6.5 with 2 nodes free: topological;
    // J6 waits 3 → 6.5 behind it, also topological.
    close(s.mean_numerical_delay, 0.0);
    close(s.mean_topological_delay, 7.5 / 6.0);
    close(
        s.mean_response,
        s.mean_service + s.mean_numerical_delay + s.mean_topological_delay,
    );
    // Busy node·time 10 + 2 + 2 + 5 + 2 + 1 = 22 over 4 nodes × 10.
    close(s.utilization, 22.0 / 40.0);
    // 8 attempts, all with enough nodes free; J5 fails at 2.5 and 3.
    assert_eq!((s.attempts, s.valid_attempts, s.misses), (8, 8, 2));
    close(s.miss_rate, 0.25);
    close(s.mean_internal_fragmentation, 0.0);
}

#[test]
fn q2_mfcfs_hand_computed() {
    let r = run(
        TestAlloc::buddy(2).unwrap(),
        "m-fcfs[threshold=10]",
        q2_jobs(),
    );
    // J6 passes the blocked J5 at 3 and takes node 1.
    assert_eq!(
        starts(&r),
        [(1, 0.0), (2, 0.0), (3, 0.0), (4, 1.5), (5, 6.5), (6, 3.0)]
    );
    let s = &r.results;
    close(s.mean_response, 24.0 / 6.0);
    close(s.mean_wait, 4.0 / 6.0);
    // While J6 runs (3 → 4) only node 3 is free: J5's delay is numerical
    // then; topological on [2.5, 3) and [4, 6.5).
    close(s.mean_numerical_delay, 1.0 / 6.0);
    close(s.mean_topological_delay, 3.0 / 6.0);
    close(s.utilization, 22.0 / 40.0);
    // J5 fails at 2.5, 3 and 4 (J6's departure).
    assert_eq!((s.attempts, s.valid_attempts, s.misses), (9, 9, 3));
}

/// 4×4 mesh, first fit. J1 2×4 (5) at columns 0–1, J2 2×2 (2) at (2,0),
/// J3 1×2 (4) at (2,2); J4 3×2 (1) arrives at 1 and J5 1×1 (1) at 1.5.
fn mesh_jobs() -> Vec<Job> {
    vec![
        boxed(1, 0.0, 2, 4, 5.0),
        boxed(2, 0.0, 2, 2, 2.0),
        boxed(3, 0.0, 1, 2, 4.0),
        boxed(4, 1.0, 3, 2, 1.0),
        boxed(5, 1.5, 1, 1, 1.0),
    ]
}

#[test]
fn mesh_fcfs_hand_computed() {
    let r = run(TestAlloc::first_fit(4, 4).unwrap(), "fcfs", mesh_jobs());
    assert_eq!(
        starts(&r),
        [(1, 0.0), (2, 0.0), (3, 0.0), (4, 5.0), (5, 5.0)]
    );
    let s = &r.results;
    // Responses 5, 2, 4, 5, 4.5.
    close(s.mean_response, 20.5 / 5.0);
    close(s.mean_wait, 7.5 / 5.0);
    // J4 heads the queue: 2 free < 6 on [1, 2), then 6 or 8 free but no
    // 3-wide box until J1 leaves at 5.
    close(s.mean_numerical_delay, (1.0 + 0.5) / 5.0);
    close(s.mean_topological_delay, (3.0 + 3.0) / 5.0);
    close(s.utilization, 63.0 / 96.0);
    // J4 fails at 1 and 1.5 (too few nodes: not valid), 2 and 4 (misses).
    assert_eq!((s.attempts, s.valid_attempts, s.misses), (9, 7, 2));
    let grants: Vec<String> = r.jobs.iter().map(|j| j.partition.to_string()).collect();
    assert!(grants.iter().all(|g| !g.is_empty()));
}

#[test]
fn mesh_mfcfs_hand_computed() {
    let r = run(
        TestAlloc::first_fit(4, 4).unwrap(),
        "m-fcfs[threshold=never]",
        mesh_jobs(),
    );
    assert_eq!(
        starts(&r),
        [(1, 0.0), (2, 0.0), (3, 0.0), (4, 5.0), (5, 1.5)]
    );
    let s = &r.results;
    close(s.mean_response, 17.0 / 5.0);
    close(s.mean_wait, 4.0 / 5.0);
    // J4: numerical on [1, 2.5) (2, 1, then 5 nodes free), topological on
    // [2.5, 5).
    close(s.mean_numerical_delay, 1.5 / 5.0);
    close(s.mean_topological_delay, 2.5 / 5.0);
    close(s.utilization, 63.0 / 96.0);
    assert_eq!((s.attempts, s.valid_attempts, s.misses), (10, 7, 2));
}

#[cfg(feature = "csv")]
/// EASY through the simulation: on 8 nodes A (4 nodes) and B (2 nodes) run
/// from 0 to 100, C (6 nodes, 10 s) arrives at 1 and is reserved for 100,
/// when A and B both end and 2 nodes are spare; D (1 node, 500 s) arrives
/// at 2 and backfills on one of them. Waits 0, 0, 99 and 0 (mean 24.75)
/// with A listed first or B.
#[test]
fn easy_backfills_on_every_node_freed_at_the_shadow_time() {
    let machine: partalloc_topology::Topology = "hypercube:3".parse().unwrap();
    for sizes in [[4, 2], [2, 4]] {
        let nodes =
            |id, arrival, count, service| Job::new(id, arrival, JobShape::Nodes { count }, service);
        let jobs = vec![
            nodes(1, 0.0, sizes[0], 100.0),
            nodes(2, 0.0, sizes[1], 100.0),
            nodes(3, 1.0, 6, 10.0),
            nodes(4, 2.0, 1, 500.0),
        ];
        let alloc = partalloc_allocators::registry::build("paging", &machine).unwrap();
        let sched = registry::build("easy-backfilling", &machine).unwrap();
        let cfg = SimConfig {
            record_jobs: true,
            ..SimConfig::default()
        };
        let r = Simulation::new(machine.clone(), alloc, sched, jobs, cfg)
            .unwrap()
            .run()
            .unwrap();
        assert_eq!(
            starts(&r),
            [(1, 0.0), (2, 0.0), (3, 100.0), (4, 2.0)],
            "{sizes:?}"
        );
        close(r.results.mean_wait, 24.75);
    }
}

#[test]
fn job_records_as_csv() {
    let r = run(TestAlloc::buddy(2).unwrap(), "fcfs", q2_jobs());
    let mut out = Vec::new();
    r.write_jobs_csv(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7);
    assert!(lines[0].starts_with("id,arrival,start,end,wait,response"));
    // J5: arrival 2.5, start 6.5, end 7.5, granted the pair {2,3} = "1X".
    let j5 = lines.iter().find(|l| l.starts_with("5,")).unwrap();
    // Two nodes one bit apart: distance sum, mean, diameter 1, a 2-node
    // subcube span, one piece; bounded slowdown max(1, 5 / max(1, 10)) = 1;
    // a hypercube is not a capacity machine: no domains per level.
    assert_eq!(*j5, "5,2.5,6.5,7.5,4,5,0,4,2,2,1X,1,1,1,2,1,1,,");
}

#[test]
fn bad_input_is_refused() {
    let alloc = TestAlloc::buddy(2).unwrap();
    let other: partalloc_topology::Topology = "hypercube:3".parse().unwrap();
    let sched = registry::build("fcfs", &other).unwrap();
    let e = Simulation::new(
        other,
        Box::new(alloc),
        sched,
        Vec::new(),
        SimConfig::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("hypercube"), "{e}");
    // Arrivals out of order.
    let alloc = TestAlloc::buddy(2).unwrap();
    let topo = alloc.topology().clone();
    let sched = registry::build("fcfs", &topo).unwrap();
    let jobs = vec![cube_job(1, 0, 2.0, 1.0), cube_job(2, 0, 1.0, 1.0)];
    let e = Simulation::new(
        topo.clone(),
        Box::new(alloc),
        sched,
        jobs,
        SimConfig::default(),
    )
    .unwrap()
    .run()
    .unwrap_err();
    assert!(e.to_string().contains("sort"), "{e}");
    // A job larger than the machine.
    let alloc = TestAlloc::buddy(2).unwrap();
    let sched = registry::build("fcfs", &topo).unwrap();
    let e = Simulation::new(
        topo,
        Box::new(alloc),
        sched,
        vec![cube_job(1, 3, 0.0, 1.0)],
        SimConfig::default(),
    )
    .unwrap()
    .run()
    .unwrap_err();
    assert!(e.to_string().contains("job 1"), "{e}");
}

/// Poisson arrivals, cube dimensions uniform in 0..=3, exponential service
/// with mean 1, on Q_6: offered load ρ = λ · E[2^d] · 1 / 64.
fn poisson(rng: &mut impl rand::Rng, lambda: f64, n: u64) -> Vec<Job> {
    let inter = Exp::new(lambda).unwrap();
    let service = Exp::new(1.0).unwrap();
    let mut t = 0.0;
    (0..n)
        .map(|id| {
            t += inter.sample(rng);
            let dim = rng.random_range(0..=3u32);
            cube_job(id, dim, t, service.sample(rng))
        })
        .collect()
}

const RHO: f64 = 0.3;
// E[2^d] = (1 + 2 + 4 + 8) / 4.
const LAMBDA: f64 = RHO * 64.0 / 3.75;

fn long_runs(policy: &str) -> Vec<partalloc_simkit::Results> {
    let reps = Replications::new(7, 12).unwrap();
    reps.run(|_, rng| {
        let jobs = poisson(rng, LAMBDA, 6000);
        let alloc = TestAlloc::buddy(6).unwrap();
        let topo = alloc.topology().clone();
        let sched = registry::build(policy, &topo).unwrap();
        let cfg = SimConfig {
            warmup: 500,
            stop: Stop {
                jobs: Some(5000),
                time: None,
            },
            ..SimConfig::default()
        };
        Simulation::new(topo, Box::new(alloc), sched, jobs, cfg)
            .unwrap()
            .run()
            .unwrap()
            .results
    })
}

#[test]
fn littles_law_and_offered_load_on_long_fcfs_runs() {
    let results = long_runs("fcfs");
    // L = λ W: the per-replication difference has a CI containing 0.
    let diff: Vec<f64> = results
        .iter()
        .map(|r| r.mean_in_system - LAMBDA * r.mean_response)
        .collect();
    let ci = ConfidenceInterval::from_samples(&diff, 0.95).unwrap();
    assert!(ci.contains(0.0), "L − λW: {ci}");
    // Below saturation, utilization = offered load (granted = requested
    // for cube jobs on a buddy).
    let util: Vec<f64> = results.iter().map(|r| r.utilization).collect();
    let ci = ConfidenceInterval::from_samples(&util, 0.95).unwrap();
    assert!(ci.contains(RHO), "utilization: {ci}");
    // The response decomposition holds in every run.
    for r in &results {
        let sum = r.mean_service + r.mean_numerical_delay + r.mean_topological_delay;
        assert!((r.mean_response - sum).abs() < 1e-9);
    }
}

#[test]
fn drained_runs_satisfy_littles_law_exactly_and_are_deterministic() {
    let reps = Replications::new(3, 2).unwrap();
    let runs = reps.run(|_, rng| {
        let jobs = poisson(rng, LAMBDA * 2.0, 2000);
        let go = |jobs: Vec<Job>| {
            let alloc = TestAlloc::buddy(6).unwrap();
            let topo = alloc.topology().clone();
            let sched = registry::build("m-fcfs", &topo).unwrap();
            Simulation::new(topo, Box::new(alloc), sched, jobs, SimConfig::default())
                .unwrap()
                .run()
                .unwrap()
        };
        (go(jobs.clone()).results, go(jobs).results)
    });
    for (a, b) in runs {
        assert_eq!(a, b);
        // Every job arrives and leaves inside the window: ∫ N dt = Σ R.
        let l = a.mean_in_system;
        let xr = a.throughput * a.mean_response;
        assert!((l - xr).abs() < 1e-9 * l.max(1.0), "{l} vs {xr}");
    }
}

fn run_cfg(policy: &str, jobs: Vec<Job>, cfg: SimConfig) -> partalloc_simkit::Report {
    let alloc = TestAlloc::buddy(2).unwrap();
    let topo = alloc.topology().clone();
    let sched = registry::build(policy, &topo).unwrap();
    Simulation::new(topo, Box::new(alloc), sched, jobs, cfg)
        .unwrap()
        .run()
        .unwrap()
}

#[test]
fn warmup_excludes_the_first_completions() {
    // FCFS on the Q_2 jobs completes J3 (1), J2 (2), J4 (6.5), J5 and J6
    // (7.5), J1 (10). With two warm-up jobs the window is [2, 10].
    let cfg = SimConfig {
        warmup: 2,
        ..SimConfig::default()
    };
    let s = run_cfg("fcfs", q2_jobs(), cfg).results;
    assert_eq!(s.completed, 4);
    close(s.span, 8.0);
    // Responses of J4, J5, J6, J1: 5, 5, 4.5, 10.
    close(s.mean_response, 24.5 / 4.0);
    // Busy node·time in [2, 10]: J1 8, J4 4.5, J5 2, J6 1.
    close(s.utilization, 15.5 / 32.0);
    // Attempts from t = 2: J5 fails at 2.5 and 3, then J5 and J6 start.
    assert_eq!((s.attempts, s.misses), (4, 2));
}

#[test]
fn stop_rules() {
    // At T = 5 only J3 and J2 have completed.
    let cfg = SimConfig {
        stop: Stop {
            jobs: None,
            time: Some(5.0),
        },
        ..SimConfig::default()
    };
    let s = run_cfg("fcfs", q2_jobs(), cfg).results;
    assert_eq!(s.completed, 2);
    close(s.span, 5.0);
    close(s.mean_response, 1.5);
    // Busy node·time in [0, 5]: J1 5, J2 2, J3 2, J4 3.5.
    close(s.utilization, 12.5 / 20.0);
    // After three completions (J4 at 6.5).
    let cfg = SimConfig {
        stop: Stop {
            jobs: Some(3),
            time: None,
        },
        ..SimConfig::default()
    };
    let s = run_cfg("fcfs", q2_jobs(), cfg).results;
    assert_eq!(s.completed, 3);
    close(s.span, 6.5);
    close(s.mean_response, 8.0 / 3.0);
    let bad = SimConfig {
        stop: Stop {
            jobs: None,
            time: Some(f64::NAN),
        },
        ..SimConfig::default()
    };
    let alloc = TestAlloc::buddy(2).unwrap();
    let topo = alloc.topology().clone();
    let sched = registry::build("fcfs", &topo).unwrap();
    assert!(Simulation::new(topo, Box::new(alloc), sched, q2_jobs(), bad).is_err());
}

/// The first 3000 jobs of the NASA Ames iPSC/860 trace (Parallel Workloads
/// Archive, NASA-iPSC-1993-3.1-cln) on its own machine, a 7-cube; `None`
/// outside the repository, whose `data/traces/` holds the trace (the
/// published crate does not ship it). Missing from the repository, it
/// fails.
fn nasa(
    mapping: fn(&partalloc_topology::Topology) -> partalloc_workload::ShapeMapping,
) -> Option<Vec<Job>> {
    use partalloc_workload::swf::SwfReader;
    let traces = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces");
    let path = format!("{traces}/NASA-iPSC-1993-3.1-cln.swf");
    let file = match std::fs::File::open(&path) {
        Ok(f) => std::io::BufReader::new(f),
        Err(e) if std::path::Path::new(traces).is_dir() => panic!("{path}: {e}"),
        Err(_) => {
            eprintln!(
                "skipping the NASA trace replay: {path} is not here \
                 (the trace ships with the repository, not the crate)"
            );
            return None;
        }
    };
    let topo: partalloc_topology::Topology = "hypercube:7".parse().unwrap();
    Some(
        SwfReader::new(file)
            .unwrap()
            .jobs(mapping(&topo))
            .take(3000)
            .collect::<Result<Vec<Job>, _>>()
            .unwrap(),
    )
}

#[test]
fn nasa_trace_replay() {
    use partalloc_workload::ShapeMapping;
    let (Some(cubes), Some(counts)) = (
        nasa(ShapeMapping::for_topology),
        nasa(ShapeMapping::nodes_of),
    ) else {
        return;
    };
    let topo: partalloc_topology::Topology = "hypercube:7".parse().unwrap();
    let cfg = SimConfig {
        record_jobs: true,
        ..SimConfig::default()
    };
    for (alloc, jobs, policy) in [
        ("buddy", &cubes, "fcfs"),
        ("buddy", &cubes, "easy-backfilling"),
        ("paging", &counts, "fcfs"),
    ] {
        let a: Box<dyn Allocator> = if alloc == "buddy" {
            Box::new(TestAlloc::buddy(7).unwrap())
        } else {
            partalloc_allocators::registry::build("paging", &topo).unwrap()
        };
        let sched = registry::build(policy, &topo).unwrap();
        let r = Simulation::new(topo.clone(), a, sched, jobs.clone(), cfg)
            .unwrap()
            .run()
            .unwrap();
        let s = &r.results;
        assert_eq!(s.completed, 3000, "{alloc}/{policy}");
        // Utilization from the time integral equals the job records' sum.
        let node_time: f64 = r
            .jobs
            .iter()
            .map(|j| j.granted as f64 * (j.end - j.start))
            .sum();
        let from_records = node_time / (128.0 * s.span);
        assert!(
            (s.utilization - from_records).abs() < 1e-9,
            "{alloc}/{policy}: {} vs {from_records}",
            s.utilization
        );
        if alloc == "paging" {
            // Without contiguity a head never waits with enough nodes free.
            assert_eq!(s.misses, 0);
            assert!(s.mean_topological_delay.abs() < 1e-9 * s.mean_wait.max(1.0));
        }
    }
}

#[test]
fn the_job_rule_ends_the_window_before_a_later_time_limit() {
    let cfg = SimConfig {
        stop: Stop {
            jobs: Some(3),
            time: Some(100.0),
        },
        ..SimConfig::default()
    };
    let s = run_cfg("fcfs", q2_jobs(), cfg).results;
    assert_eq!(s.completed, 3);
    close(s.span, 6.5);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn workload() -> impl Strategy<Value = Vec<Job>> {
        proptest::collection::vec((0u32..4, 0u32..3, 1u32..8), 1..60).prop_map(|v| {
            let mut t = 0.0;
            v.into_iter()
                .enumerate()
                .map(|(i, (dt, dim, service))| {
                    t += f64::from(dt) * 0.25;
                    cube_job(i as u64, dim, t, f64::from(service) * 0.5)
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 32,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// On drained runs (every job arrives and leaves in the window), for
        /// every policy: each job's wait splits into numerical and
        /// topological delay, the time-integral statistics equal the sums
        /// over the job records, and Little's law holds exactly.
        #[test]
        fn drained_run_identities(jobs in workload()) {
            for p in partalloc_schedulers::registry::policies() {
                let r = run(TestAlloc::buddy(3).unwrap(), p.name, jobs.clone());
                let s = &r.results;
                prop_assert_eq!(s.completed as usize, jobs.len());
                let n = jobs.len() as f64;
                let tol = 1e-9;
                let wait: f64 = r.jobs.iter().map(|j| j.wait).sum::<f64>() / n;
                prop_assert!((wait - s.mean_wait).abs() < tol);
                for j in &r.jobs {
                    prop_assert!(j.numerical_delay >= -tol && j.numerical_delay <= j.wait + tol);
                    prop_assert!(j.start >= j.arrival);
                }
                let node_time: f64 = r.jobs.iter().map(|j| j.granted as f64 * (j.end - j.start)).sum();
                prop_assert!((s.utilization - node_time / (8.0 * s.span)).abs() < tol);
                let sum_response: f64 = r.jobs.iter().map(|j| j.response).sum();
                prop_assert!((s.mean_in_system * s.span - sum_response).abs() < 1e-6);
                prop_assert!(s.misses <= s.valid_attempts && s.valid_attempts <= s.attempts);
            }
        }
    }
}

/// Records handed to a sink as jobs complete are the records `run` keeps,
/// in the same order, and the results are the same, with or without a
/// warm-up; the CSV rows written one by one are the bytes of
/// `write_jobs_csv`.
#[test]
fn streamed_records_equal_kept_records() {
    let mut rng = Replications::new(7, 1).unwrap().rng(0);
    let gap = Exp::new(1.6).unwrap();
    let mut t = 0.0;
    let jobs: Vec<Job> = (0..3000)
        .map(|id| {
            t += gap.sample(&mut rng);
            let count = rng.random_range(1..=16u32);
            Job::new(id, t, JobShape::Nodes { count }, rng.random_range(0.1..2.0))
        })
        .collect();
    for (policy, warmup) in [("fcfs", 0), ("easy-backfilling", 100)] {
        let topo: partalloc_topology::Topology = "mesh:4x4".parse().unwrap();
        let cfg = SimConfig {
            warmup,
            record_jobs: true,
            measure_search_time: false,
            ..SimConfig::default()
        };
        let kept = Simulation::from_specs(
            topo.clone(),
            &ALLOCATORS.spec("paging").unwrap(),
            &POLICIES.spec(policy).unwrap(),
            jobs.clone(),
            cfg,
        )
        .unwrap()
        .run()
        .unwrap();
        let mut streamed = Vec::new();
        let mut rows = partalloc_simkit::JobCsvWriter::new(Vec::new()).unwrap();
        let cfg = SimConfig {
            record_jobs: false,
            ..cfg
        };
        let report = Simulation::from_specs(
            topo,
            &ALLOCATORS.spec("paging").unwrap(),
            &POLICIES.spec(policy).unwrap(),
            jobs.clone(),
            cfg,
        )
        .unwrap()
        .run_observed(
            &mut (),
            Some(&mut |r| {
                rows.write(&r).unwrap();
                streamed.push(r);
            }),
        )
        .unwrap();
        assert_eq!(report.results, kept.results);
        assert!(report.jobs.is_empty());
        assert_eq!(streamed, kept.jobs);
        let mut whole = Vec::new();
        kept.write_jobs_csv(&mut whole).unwrap();
        assert_eq!(rows.finish().unwrap(), whole);
    }
}
