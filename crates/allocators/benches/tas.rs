//! One Kueue TAS placement on 10,000 nodes with 40,000 GPUs, half of them
//! in use (nodes hold 0 to 4 busy GPUs in a fixed pattern): BestFit
//! required and preferred, LeastFreeCapacity unconstrained, and BestFit
//! with each placement committed and released (the usage changes, so the
//! next placement recounts the changed leaves). The target is 50 µs per
//! placement (docs/performance.md).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::tas::{Tas, TasAlgorithm, TasMode, TasRequest};
use partalloc_topology::capacity::{BLOCK_LABEL, CapacityMachine, RACK_LABEL};

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

criterion_group!(benches, placements);
criterion_main!(benches);
