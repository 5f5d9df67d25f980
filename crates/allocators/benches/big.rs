//! Allocate + release on machines of a million nodes, half full: a
//! 128×128×64 torus and a 1024×1024 mesh (2^20 nodes each), for the
//! strategies meant to scale there (`fsl` / `fsl-3d`, `isomorphic`, `etc`,
//! `first-fit`; `first-fit` is 2-D only).
//!
//! Requests are Kang's cubic jobs (§5.1): every side a power of two,
//! 1..=32 on the mesh and 1..=16 on the torus, any orientation. The
//! machine is first filled to half its nodes; one measured iteration is
//! one allocation attempt for the next pre-generated request (granted or
//! refused) and, while more than half the nodes are busy, the release of a
//! pre-chosen live job, so the time per iteration is the mean cost of one
//! allocate plus one release at 50% occupancy.
//!
//! Run: `cargo bench -p partalloc-allocators --bench big -- --warm-up-time 1 --measurement-time 3`

#![expect(
    clippy::unwrap_used,
    reason = "fixed, valid benchmark inputs; a failure is a bug to surface"
)]

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Request, registry};
use partalloc_topology::Topology;

const LOAD: f64 = 0.5;
const SEQ: usize = 1 << 14;

#[path = "../tests/allocators/support/mod.rs"]
mod stream;
mod support;
use stream::SplitMix;
use support::Run;

/// The machines and the strategies timed on each, with the largest
/// power-of-two exponent of a request side.
const SETUPS: [(&str, u32, &[&str]); 2] = [
    (
        "mesh:1024x1024",
        5,
        &[
            "fsl",
            "fsl[dealloc=incremental]",
            "isomorphic",
            "etc",
            "first-fit",
        ],
    ),
    ("torus:128x128x64", 4, &["fsl-3d", "isomorphic", "etc"]),
];

/// `name` on `topo` filled to the load (at most 8 passes over the
/// stream), cubic jobs with sides up to 2^`max_exp`.
fn setup(name: &str, topo: &Topology, max_exp: u32) -> Run {
    let alloc = registry::build(name, topo).unwrap();
    let dims = topo.as_grid().unwrap().dims();
    let mut rng = SplitMix(0x5EED ^ topo.num_nodes() as u64);
    let requests = (0..SEQ)
        .map(|_| {
            let sides: Vec<u32> = (0..dims)
                .map(|_| 1 << rng.below(u64::from(max_exp) + 1))
                .collect();
            Request::boxed(&sides).unwrap().any_orientation()
        })
        .collect();
    let picks = (0..SEQ).map(|_| rng.next() as usize).collect();
    let target = (LOAD * topo.num_nodes() as f64) as usize;
    Run::new(alloc, requests, picks, target, false).fill(8 * SEQ, true)
}

fn bench(c: &mut Criterion) {
    for (machine, max_exp, names) in SETUPS {
        let topo: Topology = machine.parse().unwrap();
        let mut group = c.benchmark_group(format!("big_alloc_release/{machine}"));
        for name in names {
            let t0 = Instant::now();
            let mut run = setup(name, &topo, max_exp);
            eprintln!(
                "{machine} {name}: filled to {:.1}% with {} live jobs in {:.2?}",
                100.0 * run.busy() as f64 / topo.num_nodes() as f64,
                run.live.len(),
                t0.elapsed()
            );
            group.bench_function(*name, |b| b.iter_custom(|iters| run.time(iters)));
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10);
    targets = bench
}
criterion_main!(benches);
