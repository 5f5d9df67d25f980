//! Offline torus scheduling (Gupta & Srimani): CNP_Alloc and the
//! preemptive feasibility test / minimum finish time on T64×64 with 1000
//! jobs of sides 1…32 and times in (0, 10].

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use partalloc_schedulers::torus::{TorusJob, cnp_alloc, min_finish_time, preemptive_feasibility};

fn jobs(n: usize) -> Vec<TorusJob> {
    // A fixed linear congruential sequence keeps the input reproducible.
    let mut x: u64 = 12345;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let size = 1u32 << ((x >> 33) % 6);
            let time = 1.0 + ((x >> 40) % 900) as f64 / 100.0;
            TorusJob::new(size, time)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let js = jobs(1000);
    let mut g = c.benchmark_group("torus");
    g.throughput(Throughput::Elements(js.len() as u64));
    g.bench_function("cnp_alloc_t64_1000_jobs", |b| {
        b.iter(|| black_box(cnp_alloc(64, black_box(&js)).map(|s| s.makespan)));
    });
    g.bench_function("feasibility_t64_1000_jobs", |b| {
        b.iter(|| {
            black_box(preemptive_feasibility(64, black_box(&js), 1e6).map(|f| f.is_feasible()))
        });
    });
    g.bench_function("min_finish_time_t64_1000_jobs", |b| {
        b.iter(|| black_box(min_finish_time(64, black_box(&js), 1e-6).map(|r| r.0)));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
