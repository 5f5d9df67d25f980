//! Mean allocate + release time of FSL, Adaptive Scan and Busy-List versus
//! mesh size under Kim & Yoon's workload (§IV.1): square L×L meshes, request
//! sides uniform in 1..=L, a steady population of live jobs holding about
//! 47% of the nodes (load 0.47).
//!
//! One measured iteration = one allocation attempt for the next
//! pre-generated request, then, if more than 47% of the nodes are busy, the
//! release of a pre-chosen live job. In the steady state allocations and
//! releases balance, so the time per iteration is the mean cost of one
//! allocate plus one release (Kim & Yoon's "mean search time").
//!
//! A second group runs many small jobs (sides 1..=16 on 128×128) to show
//! the cost of long free and allocation lists.
//!
//! A third group (`mesh_search_fast_vs_literal`) runs the scanning
//! baselines with their default word-level search and with
//! `search=literal` (node by node) on 64², 256² and 512² under the same
//! workload; both choose the same boxes, so only the time differs.
//!
//! Run: `cargo bench -p partalloc-allocators --bench mesh -- --warm-up-time 1 --measurement-time 2`

#![expect(
    clippy::unwrap_used,
    reason = "fixed, valid benchmark inputs; a failure is a bug to surface"
)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Request, registry};
use partalloc_topology::Topology;

const LOAD: f64 = 0.47;
const SEQ: usize = 1 << 14;
const NAMES: [&str; 4] = [
    "fsl",
    "fsl[dealloc=incremental]",
    "adaptive-scan",
    "busy-list",
];

#[path = "../tests/allocators/support/mod.rs"]
mod stream;
mod support;
use stream::SplitMix;
use support::Run;

/// `name` on a `side`×`side` mesh after 2,000 steps, rectangles with
/// sides uniform in 1..=`max_side`, one job released per step above the
/// load.
fn setup(name: &str, side: u32, max_side: u32) -> Run {
    let topo: Topology = format!("mesh:{side}x{side}").parse().unwrap();
    let alloc = registry::build(name, &topo).unwrap();
    let mut rng = SplitMix(0x5EED ^ u64::from(side));
    let requests = (0..SEQ)
        .map(|_| {
            let a = 1 + rng.below(u64::from(max_side)) as u32;
            let b = 1 + rng.below(u64::from(max_side)) as u32;
            Request::boxed(&[a, b]).unwrap().any_orientation()
        })
        .collect();
    let picks = (0..SEQ).map(|_| rng.next() as usize).collect();
    let target = (LOAD * topo.num_nodes() as f64) as usize;
    Run::new(alloc, requests, picks, target, false).fill(2000, false)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("mesh_alloc_release_load047");
    for side in [16u32, 32, 64, 128, 256, 512] {
        for name in NAMES {
            let mut run = setup(name, side, side);
            group.bench_with_input(BenchmarkId::new(name, side), &side, |b, _| {
                b.iter_custom(|iters| run.time(iters));
            });
        }
    }
    group.finish();
    // Many small jobs: 128×128 mesh, sides uniform in 1..=16 (about a
    // hundred live jobs), where the list lengths N_f and N_a matter.
    let mut group = c.benchmark_group("mesh_small_jobs_128_load047");
    for name in NAMES {
        let mut run = setup(name, 128, 16);
        group.bench_function(name, |b| b.iter_custom(|iters| run.time(iters)));
    }
    group.finish();
}

/// The scanning baselines, each run fast and literal.
const SCANNING: [&str; 5] = [
    "first-fit",
    "best-fit",
    "adaptive-scan",
    "frame-sliding",
    "busy-list",
];

fn bench_search(c: &mut Criterion) {
    let mut group = c.benchmark_group("mesh_search_fast_vs_literal");
    for side in [64u32, 256, 512] {
        for name in SCANNING {
            for literal in [false, true] {
                let full = if literal {
                    format!("{name}[search=literal]")
                } else {
                    name.to_owned()
                };
                let mut run = setup(&full, side, side);
                group.bench_with_input(BenchmarkId::new(&full, side), &side, |b, _| {
                    b.iter_custom(|iters| run.time(iters));
                });
            }
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = bench, bench_search
}
criterion_main!(benches);
