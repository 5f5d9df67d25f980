//! One Kueue TAS placement on 10,000 nodes with 40,000 GPUs, half of them
//! in use (nodes hold 0 to 4 busy GPUs in a fixed pattern): BestFit
//! required and preferred, LeastFreeCapacity unconstrained, and BestFit
//! with each placement committed and released (the usage changes, so the
//! next placement recounts the changed leaves). The target is 50 µs per
//! placement (docs/performance.md).
//!
//! And the sizes of Kueue's own `BenchmarkTASFlavorSnapshot`
//! (`pkg/cache/scheduler/tas_flavor_snapshot_bench_test.go`): 100, 500 and
//! 2500 nodes, 16 per rack, 16 racks per block, each with 96 CPUs, 384 GiB
//! and 110 pods and one running non-TAS pod (1 CPU, 1 GiB): the state
//! built from scratch (Kueue's snapshot), and a BestFit placement of 16
//! eight-CPU pods in one rack with the counts kept (Kueue's `reuse`) or
//! with every node marked changed first (`invalidate-every-cycle`).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::tas::{Tas, TasAlgorithm, TasMode, TasRequest};
use partalloc_topology::capacity::{
    BLOCK_LABEL, CapacityMachine, CapacityMachineBuilder, HOSTNAME_LABEL, RACK_LABEL,
};

fn half_full() -> Option<(Arc<CapacityMachine>, Tas)> {
    // 10 blocks × 50 racks × 20 nodes × 4 GPUs.
    let m = Arc::new(
        CapacityMachine::racks(10, 50, 20, &[("nvidia.com/gpu", 4), ("cpu", 96_000)]).ok()?,
    );
    let mut tas = Tas::new(Arc::clone(&m));
    let gpu = m.pod_request(&[("nvidia.com/gpu", 1)]).ok()?;
    let mut x = 12345u32;
    for leaf in 0..m.num_leaves() {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let busy = [0, 1, 2, 3, 4, 2, 2, 2][((x >> 16) & 7) as usize];
        tas.add_usage(leaf, &gpu, busy);
    }
    Some((m, tas))
}

fn placements(c: &mut Criterion) {
    let Some((m, mut tas)) = half_full() else {
        return;
    };
    let (Ok(rack), Ok(block)) = (m.level_index(RACK_LABEL), m.level_index(BLOCK_LABEL)) else {
        return;
    };
    let Ok(pod) = m.pod_request(&[("nvidia.com/gpu", 1)]) else {
        return;
    };
    let cases = [
        (
            "tas/10k-nodes/best-fit-required-rack-16",
            TasRequest::new(
                16,
                pod.clone(),
                TasMode::Required,
                rack,
                TasAlgorithm::BestFit,
            ),
        ),
        (
            "tas/10k-nodes/best-fit-preferred-block-256",
            TasRequest::new(
                256,
                pod.clone(),
                TasMode::Preferred,
                block,
                TasAlgorithm::BestFit,
            ),
        ),
        (
            "tas/10k-nodes/least-free-capacity-unconstrained-16",
            TasRequest::new(
                16,
                pod.clone(),
                TasMode::Unconstrained,
                0,
                TasAlgorithm::LeastFreeCapacity,
            ),
        ),
    ];
    let churn = cases[0].1.clone();
    for (name, req) in cases {
        c.bench_function(name, |b| b.iter(|| black_box(tas.place(black_box(&req)))));
    }
    // What a simulation does: each placement taken and given back, so the
    // next one recounts the leaves that changed.
    c.bench_function(
        "tas/10k-nodes/best-fit-required-rack-16/place-commit-release",
        |b| {
            b.iter(|| {
                if let Ok(a) = tas.place(black_box(&churn)) {
                    tas.commit(&a, &churn.pod);
                    tas.release(&a, &churn.pod);
                }
            });
        },
    );
}

/// Kueue's benchmark cluster of `nodes` nodes: node i in rack i / 16,
/// rack r in block r / 16.
fn kueue_bench_machine(nodes: usize) -> Option<Arc<CapacityMachine>> {
    let mut b =
        CapacityMachineBuilder::new("kueue-bench", &[BLOCK_LABEL, RACK_LABEL, HOSTNAME_LABEL])
            .ok()?;
    for i in 0..nodes {
        let (rack, host) = (i / 16, format!("node-{i}"));
        let (block, rack) = (format!("block-{}", rack / 16), format!("rack-{rack}"));
        b.add_node(
            0,
            &host,
            &[
                (BLOCK_LABEL, &block),
                (RACK_LABEL, &rack),
                (HOSTNAME_LABEL, &host),
            ],
            &[("cpu", "96"), ("memory", "384Gi"), ("pods", "110")],
        )
        .ok()?;
    }
    b.build().ok().map(Arc::new)
}

fn kueue_sizes(c: &mut Criterion) {
    for nodes in [100, 500, 2500] {
        let Some(m) = kueue_bench_machine(nodes) else {
            return;
        };
        let (Ok(rack), Ok(bg), Ok(pod)) = (
            m.level_index(RACK_LABEL),
            m.pod_request(&[("cpu", 1000), ("memory", 1 << 30)]),
            m.pod_request(&[("cpu", 8000)]),
        ) else {
            return;
        };
        let fresh = || {
            let mut tas = Tas::new(Arc::clone(&m));
            for leaf in 0..m.num_leaves() {
                tas.add_usage(leaf, &bg, 1);
            }
            tas
        };
        let name = |what: &str| format!("tas/kueue-sizes/nodes={nodes}/{what}");
        c.bench_function(&name("snapshot"), |b| b.iter(|| black_box(fresh())));
        let mut tas = fresh();
        let req = TasRequest::new(
            16,
            pod.clone(),
            TasMode::Required,
            rack,
            TasAlgorithm::BestFit,
        );
        c.bench_function(&name("best-fit-required-rack-16/reuse"), |b| {
            b.iter(|| black_box(tas.place(black_box(&req))));
        });
        c.bench_function(
            &name("best-fit-required-rack-16/invalidate-every-cycle"),
            |b| {
                b.iter(|| {
                    for leaf in 0..m.num_leaves() {
                        tas.add_usage(leaf, &bg, 0);
                    }
                    black_box(tas.place(black_box(&req)))
                });
            },
        );
    }
}

criterion_group!(benches, placements, kueue_sizes);
criterion_main!(benches);
