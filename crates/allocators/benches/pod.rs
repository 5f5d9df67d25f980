//! Allocate + release per pod strategy on the tpu-v4 pod (16×16×16 chips,
//! 4×4×4 cubes) kept about half full, and the cost of the fragmentation
//! measures on such a state.
//!
//! One measured iteration = one allocation attempt for the next
//! pre-generated catalogue shape (up to 4×4×8, so that many slices are
//! live), then, while more than half the chips are busy, the release of a
//! pre-chosen live slice: in the steady state the mean cost of one
//! allocate plus one release.
//!
//! Run: `cargo bench -p partalloc-allocators --bench pod`

#![expect(
    clippy::unwrap_used,
    reason = "fixed, valid benchmark inputs; a failure is a bug to surface"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::pod::{largest_placeable, pod_measures, stranded_chips_under};
use partalloc_allocators::{Request, registry};
use partalloc_topology::Topology;
use partalloc_topology::pod::Wiring;

const SEQ: usize = 1 << 12;
const NAMES: [&str; 4] = [
    "pod-first-fit",
    "pod-best-fit",
    "pod-reconfigurable",
    "pod-free-list",
];

#[path = "../tests/allocators/support/mod.rs"]
mod stream;
mod support;
use stream::SplitMix;
use support::Run;

/// `name` on `topo` after 2,000 steps, catalogue shapes up to 128 chips
/// equally likely, jobs released until at most half the chips are busy.
fn setup(name: &str, topo: &Topology) -> Run {
    let alloc = registry::build(name, topo).unwrap();
    let pod = topo.as_pod().unwrap();
    let shapes: Vec<_> = pod
        .catalogue()
        .shapes()
        .iter()
        .filter(|s| s.product() <= 128)
        .copied()
        .collect();
    let mut rng = SplitMix(0x90D);
    let requests = (0..SEQ)
        .map(|_| {
            let s = shapes[rng.below(shapes.len() as u64) as usize];
            Request::boxed(s.as_slice()).unwrap()
        })
        .collect();
    let picks = (0..SEQ).map(|_| rng.next() as usize).collect();
    Run::new(alloc, requests, picks, topo.num_nodes() / 2, true).fill(2000, false)
}

fn bench(c: &mut Criterion) {
    let topo: Topology = "pod:tpu-v4".parse().unwrap();
    let mut group = c.benchmark_group("pod_alloc_release_tpu_v4_half_full");
    for name in NAMES {
        let mut run = setup(name, &topo);
        group.bench_function(name, |b| b.iter_custom(|iters| run.time(iters)));
    }
    group.finish();

    // The measures on the half-full state first fit leaves.
    let run = setup("pod-first-fit", &topo);
    let busy = run.alloc.busy_nodes();
    let pod = topo.as_pod().unwrap();
    let mut group = c.benchmark_group("pod_measures_tpu_v4_half_full");
    group.bench_function("stranded_chips_static", |b| {
        b.iter(|| black_box(stranded_chips_under(pod, &busy, Wiring::Static)));
    });
    group.bench_function("stranded_chips_reconfigurable", |b| {
        b.iter(|| black_box(stranded_chips_under(pod, &busy, Wiring::Reconfigurable)));
    });
    group.bench_function("largest_placeable_static", |b| {
        b.iter(|| black_box(largest_placeable(pod, &busy, Wiring::Static)));
    });
    group.bench_function("pod_measures", |b| {
        b.iter(|| black_box(pod_measures(pod, &busy)));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10);
    targets = bench
}
criterion_main!(benches);
