//! Event calendar throughput: the "hold" model (pop the earliest event,
//! schedule one new event a random delay later) at several calendar sizes,
//! and statistics recorders per observation.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use partalloc_simkit::{Calendar, Histogram, TimeWeighted, Welford, replication_rng};
use rand::RngExt;

/// Payload the size of a typical simulator event (kind + job id).
#[derive(Clone, Copy)]
struct Ev {
    _kind: u32,
    job: u64,
}

fn hold(c: &mut Criterion) {
    const OPS: u64 = 100_000;
    let mut g = c.benchmark_group("calendar_hold");
    g.throughput(Throughput::Elements(OPS));
    for &size in &[16usize, 1_024, 65_536] {
        // Pre-drawn delays so the benchmark measures the calendar, not the RNG.
        let mut rng = replication_rng(1, 0);
        let delays: Vec<f64> = (0..OPS).map(|_| rng.random::<f64>() * 10.0).collect();
        let mut cal = Calendar::with_capacity(size + 1);
        for i in 0..size {
            let _ = cal.schedule(
                rng.random::<f64>() * 10.0,
                Ev {
                    _kind: 0,
                    job: i as u64,
                },
            );
        }
        g.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            b.iter(|| {
                let mut acc = 0u64;
                for &d in &delays {
                    if let Some((_, e)) = cal.pop() {
                        acc = acc.wrapping_add(e.job);
                        let _ = cal.schedule_in(d, e);
                    }
                }
                black_box(acc)
            });
        });
    }
    g.finish();
}

fn recorders(c: &mut Criterion) {
    const N: u64 = 100_000;
    let mut rng = replication_rng(2, 0);
    let xs: Vec<f64> = (0..N).map(|_| rng.random::<f64>() * 100.0).collect();
    let mut g = c.benchmark_group("stats");
    g.throughput(Throughput::Elements(N));
    g.bench_function("welford_push", |b| {
        b.iter(|| {
            let mut w = Welford::new();
            for &x in &xs {
                let _ = w.push(x);
            }
            black_box(w.mean())
        });
    });
    g.bench_function("time_weighted_update", |b| {
        b.iter(|| {
            let mut t = TimeWeighted::new(0.0, 0.0).unwrap_or_else(|_| unreachable!());
            for (i, &x) in xs.iter().enumerate() {
                let _ = t.update(i as f64, x);
            }
            black_box(t.integral_until(N as f64))
        });
    });
    g.bench_function("histogram_push", |b| {
        let mut h = Histogram::new(0.0, 100.0, 1000).unwrap_or_else(|_| unreachable!());
        b.iter(|| {
            for &x in &xs {
                let _ = h.push(x);
            }
            black_box(h.total())
        });
    });
    g.finish();
}

criterion_group!(benches, hold, recorders);
criterion_main!(benches);
