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
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::pod::{largest_placeable, pod_measures, stranded_chips_under};
use partalloc_allocators::{Allocator, Grant, Request, registry};
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
mod support;
use support::SplitMix;

struct Run {
    alloc: Box<dyn Allocator>,
    requests: Vec<Request>,
    picks: Vec<usize>,
    live: Vec<Grant>,
    target: usize,
    i: usize,
}

impl Run {
    fn new(name: &str, topo: &Topology) -> Self {
        let alloc = registry::build(name, topo).unwrap();
        let pod = topo.as_pod().unwrap();
        // Catalogue shapes up to 128 chips, equally likely.
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
        let mut run = Self {
            alloc,
            requests,
            picks,
            live: Vec::new(),
            target: topo.num_nodes() / 2,
            i: 0,
        };
        for _ in 0..2000 {
            run.step();
        }
        run
    }

    fn step(&mut self) {
        let k = self.i % SEQ;
        self.i += 1;
        if let Ok(g) = self.alloc.allocate(&self.requests[k]) {
            self.live.push(g);
        }
        while self.alloc.total_nodes() - self.alloc.free_nodes() > self.target
            && !self.live.is_empty()
        {
            let g = self.live.swap_remove(self.picks[k] % self.live.len());
            self.alloc.release(&g).unwrap();
        }
        black_box(&self.live);
    }

    fn time(&mut self, iters: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            self.step();
        }
        start.elapsed()
    }
}

fn bench(c: &mut Criterion) {
    let topo: Topology = "pod:tpu-v4".parse().unwrap();
    let mut group = c.benchmark_group("pod_alloc_release_tpu_v4_half_full");
    for name in NAMES {
        let mut run = Run::new(name, &topo);
        group.bench_function(name, |b| b.iter_custom(|iters| run.time(iters)));
    }
    group.finish();

    // The measures on the half-full state first fit leaves.
    let run = Run::new("pod-first-fit", &topo);
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
