//! The cost of `partalloc replay` on the shipped NASA iPSC/860 trace
//! (18,239 jobs) on a 7-cube with FCFS: reading and mapping the trace, and
//! one full replay per strategy (the jobs are parsed once, outside the
//! timing).

use std::fs::File;
use std::hint::black_box;
use std::io::BufReader;
use std::path::PathBuf;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use partalloc::allocators::registry::ALLOCATORS;
use partalloc::schedulers::registry::POLICIES;
use partalloc::simkit::{SimConfig, Simulation};
use partalloc::topology::Topology;
use partalloc::workload::Job;
use partalloc::workload::ShapeMapping;
use partalloc::workload::swf::SwfReader;

fn trace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces/NASA-iPSC-1993-3.1-cln.swf")
}

fn read(mapping: ShapeMapping) -> Vec<Job> {
    let file = File::open(trace()).unwrap_or_else(|e| unreachable!("{e}"));
    let reader = SwfReader::new(BufReader::new(file)).unwrap_or_else(|e| unreachable!("{e}"));
    reader
        .jobs(mapping)
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| unreachable!("{e}"))
}

fn bench(c: &mut Criterion) {
    let machine: Topology = "hypercube:7".parse().unwrap_or_else(|_| unreachable!());
    let mapping = ShapeMapping::for_topology(&machine);
    let jobs = read(mapping);
    let n = jobs.len() as u64;

    let mut g = c.benchmark_group("nasa_trace");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("read_and_map", |b| b.iter(|| black_box(read(mapping))));
    for alloc in ["buddy", "partner", "multiple-gray-code", "paging"] {
        g.bench_function(format!("replay_fcfs/{alloc}"), |b| {
            b.iter_batched(
                || jobs.clone(),
                |js| {
                    let config = SimConfig {
                        measure_search_time: false,
                        ..SimConfig::default()
                    };
                    let sim = Simulation::from_specs(
                        machine.clone(),
                        &ALLOCATORS
                            .spec(alloc)
                            .unwrap_or_else(|e| unreachable!("{e}")),
                        &POLICIES
                            .spec("fcfs")
                            .unwrap_or_else(|e| unreachable!("{e}")),
                        js,
                        config,
                    )
                    .unwrap_or_else(|e| unreachable!("{e}"));
                    black_box(sim.run().unwrap_or_else(|e| unreachable!("{e}")))
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
