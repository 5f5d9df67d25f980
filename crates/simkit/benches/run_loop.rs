//! Simulated jobs per second of the run loop with a bitmap buddy allocator
//! (`partalloc_schedulers::testing::TestAlloc`) on a 10-cube, Poisson
//! arrivals, cube dimensions uniform in 0..=9, exponential service with
//! mean 1: FCFS at offered load 0.5, and every policy at load 0.3. Then the
//! registry's real strategies through `Simulation::from_specs`: `buddy` on
//! `hypercube:10` (the same cube workload) and `fsl` on `mesh:64x64`
//! (boxes with sides uniform in 1..=32), both under FCFS at load 0.5.
//! Conservative backfilling on 20,000 cube jobs at load 0.8, with
//! exact and with over-estimated run times.

use partalloc_allocators::registry::ALLOCATORS;
use partalloc_schedulers::registry::POLICIES;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use partalloc_allocators::Allocator;
use partalloc_schedulers::registry;
use partalloc_schedulers::testing::TestAlloc;
use partalloc_simkit::{Report, SimConfig, SimError, SimRng, Simulation, replication_rng};
use partalloc_topology::{Coords, Topology};
use partalloc_workload::{Job, JobShape};
use rand::RngExt;
use rand_distr::{Distribution, Exp};

const JOBS: u64 = 100_000;

/// Jobs per conservative-backfilling run.
const CONS_JOBS: usize = 20_000;

fn workload(load: f64) -> Vec<Job> {
    // E[2^d] for d uniform in 0..=9 is 1023/10.
    stream(load * 1024.0 / (1023.0 / 10.0), |rng| JobShape::Cube {
        dim: rng.random_range(0..=9u32),
    })
}

/// Boxes with sides uniform in 1..=32 on a 64×64 mesh at offered `load`.
fn mesh_workload(load: f64) -> Vec<Job> {
    // E[w·h] = 16.5².
    stream(load * 4096.0 / (16.5 * 16.5), |rng| {
        let (w, h) = (rng.random_range(1..=32u32), rng.random_range(1..=32u32));
        JobShape::Box {
            sides: Coords::new(&[w, h]).unwrap_or_else(|_| unreachable!()),
        }
    })
}

/// `JOBS` Poisson arrivals at rate `lambda`, exponential service of mean 1.
fn stream(lambda: f64, mut shape: impl FnMut(&mut SimRng) -> JobShape) -> Vec<Job> {
    let mut rng = replication_rng(1, 0);
    let inter = Exp::new(lambda).unwrap_or_else(|_| unreachable!());
    let service = Exp::new(1.0).unwrap_or_else(|_| unreachable!());
    let mut t = 0.0;
    (0..JOBS)
        .map(|id| {
            t += inter.sample(&mut rng);
            Job::new(id, t, shape(&mut rng), service.sample(&mut rng))
        })
        .collect()
}

/// One run of `jobs` under `policy` with the buddy allocator on Q_10.
fn simulate(policy: &str, jobs: Vec<Job>, measure_search_time: bool) -> Result<Report, SimError> {
    let alloc = TestAlloc::buddy(10).unwrap_or_else(|_| unreachable!());
    let topo = alloc.topology().clone();
    let sched = registry::build(policy, &topo).unwrap_or_else(|_| unreachable!());
    let cfg = SimConfig {
        measure_search_time,
        ..SimConfig::default()
    };
    Simulation::new(topo, Box::new(alloc), sched, jobs, cfg)
        .unwrap_or_else(|_| unreachable!())
        .run()
}

fn bench(c: &mut Criterion) {
    let jobs = workload(0.5);
    let mut g = c.benchmark_group("run_loop");
    g.throughput(Throughput::Elements(JOBS));
    g.sample_size(10);
    for (name, timing) in [("fcfs_buddy_q10", false), ("fcfs_buddy_q10_timed", true)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || jobs.clone(),
                |jobs| black_box(simulate("fcfs", jobs, timing).map(|r| r.results.completed)),
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();

    // Every policy at offered load 0.3, search-time measurement off.
    let jobs = workload(0.3);
    let mut g = c.benchmark_group("policies_q10");
    g.throughput(Throughput::Elements(JOBS));
    g.sample_size(10);
    for policy in [
        "fcfs",
        "scan",
        "static-partitioning",
        "lazy",
        "m-fcfs",
        "easy-backfilling",
    ] {
        g.bench_function(policy, |b| {
            b.iter_batched(
                || jobs.clone(),
                |jobs| black_box(simulate(policy, jobs, false).map(|r| r.results.mean_response)),
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();

    // Conservative backfilling on the contiguous buddy (refused due jobs
    // are placed again), 20,000 jobs at load 0.8: exact estimates (no job
    // ends early) and user estimates of service × U(1, 5) (every job ends
    // early: one compression per departure), under both compression rules.
    let exact: Vec<Job> = workload(0.8).into_iter().take(CONS_JOBS).collect();
    let mut rng = replication_rng(2, 0);
    let over: Vec<Job> = exact
        .iter()
        .map(|j| j.with_estimate(Some(j.service * rng.random_range(1.0..5.0))))
        .collect();
    let mut g = c.benchmark_group("conservative_q10");
    g.throughput(Throughput::Elements(CONS_JOBS as u64));
    g.sample_size(10);
    for (name, policy, jobs) in [
        ("rebuild_exact", "conservative-backfilling", &exact),
        ("rebuild_over", "conservative-backfilling", &over),
        (
            "queue_over",
            "conservative-backfilling[compression=queue]",
            &over,
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || jobs.clone(),
                |jobs| black_box(simulate(policy, jobs, false).map(|r| r.results.mean_wait)),
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();

    // The registry's strategies, built by name as a user would.
    let mut g = c.benchmark_group("by_name");
    g.throughput(Throughput::Elements(JOBS));
    g.sample_size(10);
    for (name, machine, alloc, jobs) in [
        (
            "hypercube10_buddy_fcfs",
            "hypercube:10",
            "buddy",
            workload(0.5),
        ),
        (
            "mesh64x64_fsl_fcfs",
            "mesh:64x64",
            "fsl",
            mesh_workload(0.5),
        ),
    ] {
        let topo: Topology = machine.parse().unwrap_or_else(|_| unreachable!());
        let cfg = SimConfig {
            measure_search_time: false,
            ..SimConfig::default()
        };
        g.bench_function(name, |b| {
            b.iter_batched(
                || jobs.clone(),
                |jobs| {
                    let sim = Simulation::from_specs(
                        topo.clone(),
                        &ALLOCATORS.spec(alloc)?,
                        &POLICIES.spec("fcfs")?,
                        jobs,
                        cfg,
                    );
                    black_box(sim.and_then(Simulation::run).map(|r| r.results.completed))
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
