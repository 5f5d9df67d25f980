//! Allocate + release cost of the hypercube strategies under a steady
//! random mix near 50% occupancy.
//!
//! For each strategy and n ∈ {10, 16, 20}: fill the machine to half with
//! requests Q_k, k uniform in 0..=n/2; then every timed iteration makes one
//! allocation attempt (next pre-generated k) and releases one live grant
//! (next pre-generated index). The random sequences are generated before
//! timing. `multiple-gray-code` runs at n = 10 only: a refused request
//! scans all C(n, n/2) codes (12,870 at n = 16).
//!
//! A second group times a refused Q_1 request after a full search.
//!
//! `cargo bench -p partalloc-allocators --bench hypercube -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Allocator, Grant, Request, registry};
use partalloc_topology::Topology;

const OPS: usize = 1 << 16;

struct Mix {
    dims: Vec<u32>,
    picks: Vec<usize>,
}

fn mix(n: u32, seed: u64) -> Mix {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let top = u64::from(n / 2 + 1);
    let dims = (0..OPS).map(|_| (next() % top) as u32).collect();
    let picks = (0..OPS).map(|_| next() as usize).collect();
    Mix { dims, picks }
}

fn warm(a: &mut dyn Allocator, m: &Mix) -> Vec<Grant> {
    let mut live = Vec::new();
    let half = a.total_nodes() / 2;
    let mut i = 0;
    while a.free_nodes() > half && i < OPS {
        if let Ok(g) = a.allocate(&Request::subcube(m.dims[i])) {
            live.push(g);
        }
        i += 1;
    }
    live
}

/// Every strategy on each benchmarked machine Q_n, n ∈ {10, 16, 20};
/// `multiple-gray-code` at n = 10 only.
fn strategies() -> impl Iterator<Item = (u32, &'static str, Box<dyn Allocator>)> {
    [10u32, 16, 20].into_iter().flat_map(|n| {
        let topo: Option<Topology> = format!("hypercube:{n}").parse().ok();
        [
            "buddy",
            "buddy-free-list",
            "gray-code",
            "multiple-gray-code",
            "partner",
            "partner-ext",
        ]
        .into_iter()
        .filter(move |&name| name != "multiple-gray-code" || n <= 10)
        .filter_map(move |name| Some((n, name, registry::build(name, topo.as_ref()?).ok()?)))
    })
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("hypercube_alloc_release");
    group.sample_size(10);
    for (n, name, mut a) in strategies() {
        let m = mix(n, 0x9E37_79B9_7F4A_7C15 ^ u64::from(n));
        let mut live = warm(a.as_mut(), &m);
        let mut i = 0usize;
        let before = live.len();
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter(|| {
                let k = m.dims[i & (OPS - 1)];
                if let Ok(g) = a.allocate(black_box(&Request::subcube(k))) {
                    live.push(g);
                }
                if !live.is_empty() {
                    let g = live.swap_remove(m.picks[i & (OPS - 1)] % live.len());
                    let _ = black_box(a.release(&g));
                }
                i += 1;
            });
        });
        eprintln!(
            "{name}/{n}: occupancy {:.1}% after the run ({} live grants, {before} at the start)",
            100.0 * (1.0 - a.free_nodes() as f64 / a.total_nodes() as f64),
            live.len()
        );
    }
    group.finish();
}

/// A refused Q_1 request on a machine whose even-weight nodes are faulty: the
/// bitmap strategies scan everything (O(2^n)); the free lists answer from
/// their counts.
fn refused(c: &mut Criterion) {
    let mut group = c.benchmark_group("hypercube_refused_q1");
    group.sample_size(10);
    for (n, name, mut a) in strategies() {
        // Every Q_1 joins nodes of odd and even weight, so with the
        // even-weight nodes faulty every Q_1 request is refused.
        for v in (0..1u32 << n).filter(|v| v.count_ones() % 2 == 0) {
            let _ = a.mark_faulty(v);
        }
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter(|| black_box(a.allocate(black_box(&Request::subcube(1)))).is_err());
        });
    }
    group.finish();
}

criterion_group!(benches, bench, refused);
criterion_main!(benches);
