//! Kang et al. (IEEE TC 2003) Table 1 as measurements: the time of one
//! allocation and, separately, of one release under a steady random mix of
//! cubic jobs 2^a × 2^b × 2^c (a, b, c uniform in 0..=log2 k, Kang §5.1) at
//! about 50% occupancy, on Q_3^4 … Q_3^64. A second group times the
//! noncubic path of `isomorphic` (with and without the split option) on
//! jobs with sides uniform in 1..=k (Kang Fig. 11).
//!
//! Run: `cargo bench -p partalloc-allocators --bench kary -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use partalloc_allocators::{Allocator, Grant, Request, registry};
use partalloc_topology::{Grid, Topology};

#[path = "../tests/allocators/support/mod.rs"]
mod support;
use support::SplitMix;

fn job(rng: &mut SplitMix, logk: u32, cubic: bool) -> Option<Request> {
    let s: Vec<u32> = (0..3)
        .map(|_| {
            if cubic {
                1u32 << rng.below(u64::from(logk) + 1)
            } else {
                1 + rng.below(1u64 << logk) as u32
            }
        })
        .collect();
    Request::boxed(&s).ok().map(Request::any_orientation)
}

/// Which operation a benchmark times.
#[derive(Clone, Copy)]
enum Phase {
    Allocate,
    Release,
}

/// Fills to about half the machine, then per iteration releases a random
/// live grant and allocates a new job, timing only `phase`.
fn steady(
    alloc: &mut dyn Allocator,
    logk: u32,
    cubic: bool,
    phase: Phase,
    iters: u64,
    seed: u64,
) -> Duration {
    let mut rng = SplitMix(seed);
    let total = alloc.total_nodes();
    let mut live: Vec<Grant> = Vec::new();
    let fill = |alloc: &mut dyn Allocator, live: &mut Vec<Grant>, rng: &mut SplitMix| {
        let mut tries = 0;
        while alloc.free_nodes() * 2 > total && tries < 10_000 {
            tries += 1;
            if let Some(r) = job(rng, logk, cubic)
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
        let r = job(&mut rng, logk, cubic);
        let start = Instant::now();
        if let Some(g) = &victim {
            let _ = black_box(alloc.release(g));
        }
        let released = start.elapsed();
        let start = Instant::now();
        let got = r.map(|r| alloc.allocate(black_box(&r)));
        let allocated = start.elapsed();
        spent += match phase {
            Phase::Allocate => allocated,
            Phase::Release => released,
        };
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
            bench_phases(&mut group, name, &topo, logk, true);
        }
    }
    group.finish();
}

/// One benchmark per phase: `<name>/alloc` and `<name>/release`.
fn bench_phases(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    topo: &Topology,
    logk: u32,
    cubic: bool,
) {
    let k = 1u32 << logk;
    for (label, phase) in [("alloc", Phase::Allocate), ("release", Phase::Release)] {
        group.bench_with_input(
            BenchmarkId::new(format!("{name}/{label}"), format!("Q3^{k}")),
            &logk,
            |b, &logk| {
                b.iter_custom(|iters| match registry::build(name, topo) {
                    // A fresh machine per batch, so grants never leak across batches.
                    Ok(mut alloc) => steady(alloc.as_mut(), logk, cubic, phase, iters, 42 + iters),
                    Err(_) => Duration::ZERO,
                });
            },
        );
    }
}

/// The noncubic path (Kang Fig. 11 jobs) of Isomorphic with and without
/// the split option.
fn noncubic(c: &mut Criterion) {
    let mut group = c.benchmark_group("kary_noncubic");
    group.sample_size(10);
    for logk in [4u32, 6] {
        let Ok(grid) = Grid::kary_ncube(1 << logk, 3, false) else {
            continue;
        };
        let topo: Topology = grid.into();
        for name in ["isomorphic", "isomorphic[split=true]"] {
            bench_phases(&mut group, name, &topo, logk, false);
        }
    }
    group.finish();
}

criterion_group!(benches, table1, noncubic);
criterion_main!(benches);
