//! Generator throughput: draws per second of each distribution and of a
//! whole job stream, with the reproducible ChaCha8 generator.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use partalloc_workload::lublin::{LublinKind, LublinModel};
use partalloc_workload::swf::SwfReader;
use partalloc_workload::{
    CubeDims, CubicShapes, Dependence, Exponential, HyperExponential, JobShape, MeshSides,
    NoncubicShapes, PoissonArrivals, SideLaw, Workload,
};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;

const N: u64 = 10_000;

fn bench_f64<D: Distribution<f64>>(c: &mut BenchmarkGroup<'_, WallTime>, name: &str, d: &D) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    c.bench_function(name, |b| {
        b.iter(|| {
            let mut s = 0.0;
            for _ in 0..N {
                s += d.sample(&mut rng);
            }
            black_box(s)
        });
    });
}

fn bench_shape<D: Distribution<JobShape>>(c: &mut BenchmarkGroup<'_, WallTime>, name: &str, d: &D) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    c.bench_function(name, |b| {
        b.iter(|| {
            let mut s = 0u64;
            for _ in 0..N {
                s += d.sample(&mut rng).node_count();
            }
            black_box(s)
        });
    });
}

fn generators(c: &mut Criterion) {
    let mut g = c.benchmark_group("generators");
    g.throughput(Throughput::Elements(N));
    let c = &mut g;
    bench_f64(c, "poisson_gap", &ok(PoissonArrivals::new(1.0)));
    bench_f64(c, "exponential", &ok(Exponential::new(1.0)));
    bench_f64(
        c,
        "hyperexponential",
        &ok(HyperExponential::new(5.0, 0.95, 4.0)),
    );
    bench_shape(c, "kang_cubic_3d", &ok(CubicShapes::new(&[4, 4, 4])));
    bench_shape(
        c,
        "kang_noncubic_3d",
        &ok(NoncubicShapes::new(&[16, 16, 16])),
    );
    bench_shape(c, "mohapatra_normal", &CubeDims::mohapatra_normal());
    bench_shape(
        c,
        "kimyoon_normal_64x64",
        &ok(MeshSides::new(SideLaw::TruncatedNormal, &[64, 64])),
    );
    bench_shape(
        c,
        "kimyoon_exponential_64x64",
        &ok(MeshSides::new(SideLaw::TruncatedExponential, &[64, 64])),
    );
    let w = ok(Workload::with_load(
        0.5,
        4096,
        ok(CubicShapes::new(&[4, 4, 4])),
        ok(HyperExponential::new(1.0, 0.95, 4.0)),
        Dependence::Dependent,
    ));
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    c.bench_function("job_stream", |b| {
        b.iter(|| {
            black_box(
                w.jobs(&mut rng)
                    .take(N as usize)
                    .map(|j| j.service)
                    .sum::<f64>(),
            )
        });
    });
    g.finish();
}

/// Builders cannot fail on these constants.
fn ok<T>(r: Result<T, partalloc_workload::WorkloadError>) -> T {
    r.unwrap_or_else(|e| unreachable!("{e}"))
}

fn swf(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/traces/NASA-iPSC-1993-3.1-cln.swf"
    );
    let Ok(text) = std::fs::read(path) else {
        return;
    };
    let mut g = c.benchmark_group("swf");
    g.throughput(Throughput::Elements(18_239));
    g.bench_function("parse_nasa_ipsc", |b| {
        b.iter(|| {
            let r = SwfReader::new(text.as_slice()).unwrap_or_else(|e| unreachable!("{e}"));
            black_box(r.filter(Result::is_ok).count())
        });
    });
    g.finish();
    swf_synthetic(c);
}

/// A synthetic trace of 100,000 job lines as `partalloc generate` writes
/// them (times printed as shortest round-trip decimals of 16 to 17
/// digits, sizes 1 to 256, the rest -1), read as jobs through a 64 KiB
/// buffer as `simulate --trace` reads a file.
fn swf_synthetic(c: &mut Criterion) {
    const JOBS: u64 = 100_000;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let gap = ok(Exponential::new(0.4));
    let run = ok(Exponential::new(1.0));
    let mut text = String::from("; MaxNodes: 256\n; MaxProcs: 256\n");
    let mut t = 0.0;
    for id in 1..=JOBS {
        t += gap.sample(&mut rng);
        let p = rand::RngExt::random_range(&mut rng, 1..=256u32);
        let r = run.sample(&mut rng);
        text.push_str(&format!(
            "{id} {t} -1 {r} {p} -1 -1 {p} -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        ));
    }
    let topology: partalloc_topology::Topology =
        "mesh:16x16".parse().unwrap_or_else(|e| unreachable!("{e}"));
    let mapping = partalloc_workload::ShapeMapping::nodes_of(&topology);
    let mut g = c.benchmark_group("swf");
    g.throughput(Throughput::Elements(JOBS));
    g.bench_function("jobs_synthetic_100k", |b| {
        b.iter(|| {
            let input = std::io::BufReader::with_capacity(1 << 16, text.as_bytes());
            let r = SwfReader::new(input).unwrap_or_else(|e| unreachable!("{e}"));
            black_box(r.jobs(mapping).filter(Result::is_ok).count())
        });
    });
    g.finish();
}

/// The Lublin–Feitelson model: 100,000 jobs of each preset on 128 nodes
/// (both classes, and the typeless one), as `partalloc generate --model
/// lublin` draws them.
fn lublin(c: &mut Criterion) {
    const JOBS: usize = 100_000;
    let mut g = c.benchmark_group("lublin");
    g.throughput(Throughput::Elements(JOBS as u64));
    for kind in [LublinKind::Mixed, LublinKind::Whole] {
        let model = LublinModel::preset(kind, 128).unwrap_or_else(|e| unreachable!("{e}"));
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        g.bench_function(format!("{kind}_100k_jobs"), |b| {
            b.iter(|| {
                black_box(
                    model
                        .jobs(&mut rng)
                        .take(JOBS)
                        .map(|j| j.job.service)
                        .sum::<f64>(),
                )
            });
        });
    }
    g.finish();
}

criterion_group!(benches, generators, swf, lublin);
criterion_main!(benches);
