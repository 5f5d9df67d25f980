//! Allocate + release time of the non-contiguous strategies (`mbs`,
//! `granular-mbs`, `octet-mbs`, `gabl`, `random`, and `paging` for
//! reference) at 256 and 4,096 nodes, half full.
//!
//! Machines: 16×16 and 64×64 (2-D), 8×8×4 and 16×16×16 (3-D). Requests:
//! node counts uniform in 1..=N/32 (about 16 live jobs at half occupancy),
//! pre-generated from a fixed seed; `gabl(box)` gets boxes instead, sides
//! uniform in 1..=side/4 per dimension, any orientation. One measured
//! iteration = one allocation attempt for the next request, then, while
//! more than half the nodes are busy, the release of a pre-chosen live job:
//! in the steady state the time per iteration is the mean cost of one
//! allocate plus one release.
//!
//! `dispersal_144_of_256`: measuring one paging-like grant (144 of a 16×16
//! machine's nodes, scattered, in random order) with a
//! [`Measurer`](partalloc_allocators::dispersal::Measurer), as a run does for
//! every started job: on the mesh (the word-per-row path), on the mesh with
//! the nodes in increasing order (as paging grants them) and, for
//! reference, the torus (node by node).
//!
//! Run: `cargo bench -p partalloc-allocators --bench noncontig -- --warm-up-time 1 --measurement-time 3`

#![expect(
    clippy::unwrap_used,
    reason = "fixed, valid benchmark inputs; a failure is a bug to surface"
)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use partalloc_allocators::dispersal::Measurer;
use partalloc_allocators::{Request, registry};
use partalloc_topology::{NodeId, Topology};

mod support;
use support::Run;

const SEQ: usize = 1 << 14;

/// A small fixed stream (a 64-bit LCG's high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `name` on `machine` after 2,000 steps, node counts (or boxes) from the
/// LCG, jobs released until at most half the nodes are busy.
fn setup(name: &str, machine: &str, boxes: bool) -> Run {
    let topo: Topology = machine.parse().unwrap();
    let alloc = registry::build(name, &topo).unwrap();
    let n = topo.num_nodes() as u64;
    let sides: Vec<u32> = topo.as_grid().unwrap().sides().to_vec();
    let mut rng = Lcg(0x5EED ^ n);
    let requests = (0..SEQ)
        .map(|_| {
            if boxes {
                let s: Vec<u32> = sides
                    .iter()
                    .map(|&k| 1 + rng.below(u64::from(k / 4)) as u32)
                    .collect();
                Request::boxed(&s).unwrap().any_orientation()
            } else {
                Request::nodes(1 + rng.below(n / 32) as u32)
            }
        })
        .collect();
    let picks = (0..SEQ).map(|_| rng.below(1 << 30) as usize).collect();
    Run::new(alloc, requests, picks, topo.num_nodes() / 2, true).fill(2000, false)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("noncontig_alloc_release_half_full");
    for machine in ["mesh:16x16", "mesh:64x64", "mesh:8x8x4", "mesh:16x16x16"] {
        for (label, name, boxes) in [
            ("mbs", "mbs", false),
            ("granular-mbs", "granular-mbs", false),
            ("octet-mbs", "octet-mbs", false),
            ("gabl", "gabl", false),
            ("gabl(box)", "gabl", true),
            ("random", "random", false),
            ("paging", "paging", false),
        ] {
            let mut run = setup(name, machine, boxes);
            group.bench_with_input(BenchmarkId::new(label, machine), &machine, |b, _| {
                b.iter_custom(|iters| run.time(iters));
            });
        }
    }
    group.finish();
}

/// One 144-node grant scattered over 16×16 (a shuffle's first 144), measured.
fn dispersal(c: &mut Criterion) {
    let mut rng = Lcg(0xD15);
    let mut all: Vec<NodeId> = (0..256).collect();
    for i in (1..all.len()).rev() {
        all.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let grant = &all[..144];
    let mut group = c.benchmark_group("dispersal_144_of_256");
    for machine in ["mesh:16x16", "torus:16x16"] {
        let mut m = Measurer::new(&machine.parse().unwrap()).unwrap();
        group.bench_function(machine, |b| {
            b.iter(|| m.measure(std::hint::black_box(grant)).unwrap());
        });
    }
    // The same nodes in increasing order, as paging grants them.
    let mut sorted = grant.to_vec();
    sorted.sort_unstable();
    let mut m = Measurer::new(&"mesh:16x16".parse().unwrap()).unwrap();
    group.bench_function("mesh:16x16 sorted", |b| {
        b.iter(|| m.measure(std::hint::black_box(&sorted)).unwrap());
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = bench, dispersal
}
criterion_main!(benches);
