//! Allocate + release of the allocators that trade contiguity for
//! locality: the curve allocators (`curve-first-fit`, `curve-best-fit`,
//! `curve-sorted-free-list`, Hilbert order unless named; group
//! `curve_alloc_release`) and the center-based nearest ones (`gen-alg`,
//! `mm`, `mc1x1`, `mc`; group `nearest_alloc_release`), with `paging` for
//! reference, on machines of 256 and 4,096 nodes half full: 16×16, 64×64
//! and 16×16×16 meshes.
//!
//! Requests are node counts uniform in 1..=N/16. The machine is first
//! filled to half its nodes; one measured iteration is one allocation
//! attempt for the next pre-generated request and, while more than half
//! the nodes are busy, the release of a pre-chosen live job, so the time
//! per iteration is the mean cost of one allocate plus one release at 50%
//! occupancy.
//!
//! Run: `cargo bench -p partalloc-allocators --bench locality -- --warm-up-time 1 --measurement-time 3`

#![expect(
    clippy::unwrap_used,
    reason = "fixed, valid benchmark inputs; a failure is a bug to surface"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Allocator, Grant, Request, registry};
use partalloc_topology::Topology;

const LOAD: f64 = 0.5;
const SEQ: usize = 1 << 14;
const MACHINES: [&str; 3] = ["mesh:16x16", "mesh:64x64", "mesh:16x16x16"];
const CURVE: [&str; 6] = [
    "curve-first-fit",
    "curve-best-fit",
    "curve-sorted-free-list",
    "curve-first-fit[order=snake]",
    "curve-best-fit[order=row-major]",
    "paging",
];
/// The nearest family; the PReMAS variant of MC1x1 looks at every free
/// node for each pick, so it is timed on the small machine only.
const NEAREST: [&str; 7] = [
    "gen-alg",
    "gen-alg[metric=linf]",
    "mm",
    "mc1x1",
    "mc",
    "mc1x1[outer=premas]",
    "paging",
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
        let n = topo.num_nodes() as u64;
        let mut rng = SplitMix(0x5EED ^ n);
        let requests = (0..SEQ)
            .map(|_| Request::nodes(1 + rng.below(n / 16) as u32))
            .collect();
        let picks = (0..SEQ).map(|_| rng.next() as usize).collect();
        let target = (LOAD * n as f64) as usize;
        let mut run = Self {
            alloc,
            requests,
            picks,
            live: Vec::new(),
            target,
            i: 0,
        };
        while run.busy() < run.target {
            run.step();
        }
        run
    }

    fn busy(&self) -> usize {
        self.alloc.total_nodes() - self.alloc.free_nodes()
    }

    fn step(&mut self) {
        let k = self.i % SEQ;
        self.i += 1;
        if let Ok(g) = self.alloc.allocate(&self.requests[k]) {
            self.live.push(g);
        }
        if self.busy() > self.target && !self.live.is_empty() {
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
    for (group, names) in [("curve", &CURVE[..]), ("nearest", &NEAREST[..])] {
        for machine in MACHINES {
            let topo: Topology = machine.parse().unwrap();
            let mut g = c.benchmark_group(format!("{group}_alloc_release/{machine}"));
            for &name in names {
                if name.ends_with("=premas]") && topo.num_nodes() > 256 {
                    continue;
                }
                let mut run = Run::new(name, &topo);
                g.bench_function(name, |b| b.iter_custom(|iters| run.time(iters)));
            }
            g.finish();
        }
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
