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

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Request, registry};
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
mod stream;
mod support;
use stream::SplitMix;
use support::Run;

/// `name` on `topo` filled to the load, node counts uniform in 1..=N/16.
fn setup(name: &str, topo: &Topology) -> Run {
    let alloc = registry::build(name, topo).unwrap();
    let n = topo.num_nodes() as u64;
    let mut rng = SplitMix(0x5EED ^ n);
    let requests = (0..SEQ)
        .map(|_| Request::nodes(1 + rng.below(n / 16) as u32))
        .collect();
    let picks = (0..SEQ).map(|_| rng.next() as usize).collect();
    let target = (LOAD * n as f64) as usize;
    Run::new(alloc, requests, picks, target, false).fill(usize::MAX, true)
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
                let mut run = setup(name, &topo);
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
