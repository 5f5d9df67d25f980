//! Mohapatra et al. §5, qualitatively: on a 10-cube with buddy allocation
//! and uniform job sizes, FCFS saturates first, Scan and lazy scheduling
//! do better, and lazy beats Scan when residence times are
//! hyper-exponential (Figs. 2(a) and 3(a)). Both Scan pass rules are run.
//!
//! Sized for every `cargo test`: 2 replications of 5,000 jobs per point,
//! where each asserted order holds with a wide margin (the failure message
//! prints the delays; `--nocapture` prints them always).

#![expect(
    clippy::unwrap_used,
    reason = "the helpers building fixtures sit outside #[test] functions"
)]

use partalloc_allocators::Allocator;
use partalloc_schedulers::registry;
use partalloc_schedulers::testing::TestAlloc;
use partalloc_simkit::{SimConfig, Simulation, Stop, replication_rng};
use partalloc_topology::Hypercube;
use partalloc_workload::{CubeDims, Dependence, HyperExponential, Job, UniformDemand, Workload};

const POLICIES: [&str; 5] = [
    "fcfs",
    "scan",
    "scan[arrivals=same-pass]",
    "lazy",
    "static-partitioning",
];

/// Replications per point.
const REPS: u64 = 2;
/// Jobs generated per replication; the first `WARMUP` are not measured,
/// and the run stops once `MEASURED` more have completed.
const JOBS: usize = 5_000;
const WARMUP: u64 = 500;
const MEASURED: u64 = 4_000;

/// Mean queueing delay per policy over `REPS` replications of `JOBS` jobs,
/// dependent model, mean residence 5 (§4.1).
fn delays(hyper: bool, load: f64) -> Vec<f64> {
    POLICIES
        .iter()
        .map(|policy| {
            let mut total = 0.0;
            for rep in 0..REPS {
                let mut rng = replication_rng(5, rep);
                let dims = CubeDims::mohapatra_uniform(&Hypercube::new(10).unwrap()).unwrap();
                let jobs: Vec<Job> = if hyper {
                    let demand = HyperExponential::new(5.0, 0.95, 4.0).unwrap();
                    Workload::with_load(load, 1024, dims, demand, Dependence::Dependent)
                        .unwrap()
                        .jobs(&mut rng)
                        .take(JOBS)
                        .collect()
                } else {
                    let demand = UniformDemand::new(0.0, 10.0).unwrap();
                    Workload::with_load(load, 1024, dims, demand, Dependence::Dependent)
                        .unwrap()
                        .jobs(&mut rng)
                        .take(JOBS)
                        .collect()
                };
                let alloc = TestAlloc::buddy(10).unwrap();
                let topo = alloc.topology().clone();
                let sched = registry::build(policy, &topo).unwrap();
                let cfg = SimConfig {
                    warmup: WARMUP,
                    stop: Stop {
                        jobs: Some(MEASURED),
                        time: None,
                    },
                    measure_search_time: false,
                    ..SimConfig::default()
                };
                let r = Simulation::new(topo, Box::new(alloc), sched, jobs, cfg)
                    .unwrap()
                    .run()
                    .unwrap();
                total += r.results.mean_wait;
            }
            total / REPS as f64
        })
        .collect()
}

#[test]
fn lazy_beats_scan_beats_fcfs() {
    for (hyper, load) in [(false, 0.7), (true, 0.5), (true, 0.7)] {
        let d = delays(hyper, load);
        eprintln!("hyper-exponential={hyper} load={load}: {POLICIES:?} = {d:.1?}");
        let [fcfs, scan_next, scan_same, lazy, stat] = d[..] else {
            unreachable!()
        };
        assert!(scan_next < fcfs && scan_same < fcfs, "{d:?}");
        assert!(lazy < scan_next && lazy < scan_same, "{d:?}");
        // Static partitioning is good for uniform sizes (Fig. 2(a)).
        assert!(stat < fcfs, "{d:?}");
    }
}
