//! Kang et al. (IEEE TC 2003) Table 1 as measurements: the time of one
//! release plus one allocation under a steady random mix of cubic jobs
//! 2^a × 2^b × 2^c (a, b, c uniform in 0..=log2 k, Kang §5.1) at about 50%
//! occupancy, on Q_3^4 … Q_3^64.
//!
//! Run: `cargo bench -p partalloc-allocators --bench kary -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Allocator, Grant, Request, registry};
use partalloc_topology::{Grid, Topology};

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn job(rng: &mut SplitMix, logk: u32) -> Option<Request> {
    let s: Vec<u32> = (0..3)
        .map(|_| 1u32 << rng.below(u64::from(logk) + 1))
        .collect();
    Request::boxed(&s).ok().map(Request::any_orientation)
}

/// Fills to about half the machine, then measures release + allocate.
fn steady(alloc: &mut dyn Allocator, logk: u32, iters: u64, seed: u64) -> Duration {
    let mut rng = SplitMix(seed);
    let total = alloc.total_nodes();
    let mut live: Vec<Grant> = Vec::new();
    let fill = |alloc: &mut dyn Allocator, live: &mut Vec<Grant>, rng: &mut SplitMix| {
        let mut tries = 0;
        while alloc.free_nodes() * 2 > total && tries < 10_000 {
            tries += 1;
            if let Some(r) = job(rng, logk)
                && let Ok(g) = alloc.allocate(&r)
            {
                live.push(g);
            }
        }
    };
    fill(alloc, &mut live, &mut rng);
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        let victim =
            (!live.is_empty()).then(|| live.swap_remove(rng.below(live.len() as u64) as usize));
        let r = job(&mut rng, logk);
        let start = Instant::now();
        if let Some(g) = &victim {
            let _ = black_box(alloc.release(g));
        }
        let got = r.map(|r| alloc.allocate(black_box(&r)));
        spent += start.elapsed();
        if let Some(Ok(g)) = got {
            live.push(g);
        }
        fill(alloc, &mut live, &mut rng);
    }
    spent
}

fn table1(c: &mut Criterion) {
    let mut group = c.benchmark_group("kary_table1");
    group.sample_size(10);
    for logk in [2u32, 3, 4, 5, 6] {
        let k = 1u32 << logk;
        let Ok(grid) = Grid::kary_ncube(k, 3, false) else {
            continue;
        };
        let topo: Topology = grid.into();
        for name in [
            "isomorphic",
            "etc",
            "etc[search=literal]",
            "extended-buddy",
            "extended-gray-code",
            "kary-partner",
            "sniffing",
        ] {
            if name == "etc[search=literal]" && logk > 4 {
                continue; // intolerable beyond Q_3^16
            }
            if registry::build(name, &topo).is_err() {
                continue;
            }
            group.bench_with_input(
                BenchmarkId::new(name, format!("Q3^{k}")),
                &logk,
                |b, &logk| {
                    b.iter_custom(|iters| match registry::build(name, &topo) {
                        // A fresh machine per batch, so grants never leak across batches.
                        Ok(mut alloc) => steady(alloc.as_mut(), logk, iters, 42 + iters),
                        Err(_) => Duration::ZERO,
                    });
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, table1);
criterion_main!(benches);
