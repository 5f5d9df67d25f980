//! The cost of making a strategy instance through the registry: by name
//! (parse the text, look the name up, check the machine family and the
//! parameter keys, construct) for a few strategies on the machines the
//! figures use. A run builds one instance per replication, so this is the
//! per-replication set-up cost.
//!
//! Run: `cargo bench -p partalloc-allocators --bench registry`

#![expect(
    clippy::unwrap_used,
    reason = "fixed, valid benchmark inputs; a failure is a bug to surface"
)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::registry;
use partalloc_topology::Topology;

/// (strategy text, machine).
const CASES: [(&str, &str); 5] = [
    ("paging", "mesh:64x64"),
    ("fsl", "mesh:64x64"),
    ("buddy-free-list", "hypercube:10"),
    ("partner-ext[delta=2]", "hypercube:10"),
    ("isomorphic", "kary:16^3"),
];

fn by_name(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry_build");
    for (text, machine) in CASES {
        let topo: Topology = machine.parse().unwrap();
        group.bench_function(format!("by_name/{text}/{machine}"), |b| {
            b.iter(|| black_box(registry::build(black_box(text), &topo).unwrap()));
        });
    }
    group.finish();
}

criterion_group!(benches, by_name);
criterion_main!(benches);
