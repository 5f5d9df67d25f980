//! FGD's score of one pod over the 1,213 OpenB GPU nodes, and one whole
//! FGD experiment.
//!
//! `cargo bench -p partalloc-gpushare --bench gpushare -- --warm-up-time 1 --measurement-time 3`

#![expect(clippy::unwrap_used, reason = "benchmark setup reads the shipped data")]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_gpushare::experiment::{ClusterState, run, setup};
use partalloc_gpushare::frag::node_frag_score;
use partalloc_gpushare::policy::{Policy, fgd_score};
use partalloc_gpushare::reproduce::OpenB;

fn fgd(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/openb");
    let data = OpenB::read(&dir, &["openb_pod_list_default"]).unwrap();
    let w = &data.workloads[0];
    // The cluster half way through the default workload under FGD (seed 42):
    // nodes in every state from empty to full.
    let mut s = setup(&data.cluster, w, 42);
    let mut state = ClusterState::new(&data.cluster, &s.rank, &w.typical);
    let half = s.order.len() / 2;
    for &i in &s.order[..half] {
        let r = w.pods[i].request;
        if let Some((pos, at)) = state.choose(&r, Policy::Fgd, &mut s.rng) {
            state.place(pos, &r, at).unwrap();
        }
    }
    let pod = w.pods[s.order[half]].request;
    c.bench_function("fgd score of one pod, 1213 nodes (no cache)", |b| {
        b.iter(|| {
            let mut best = (i64::MIN, 0_usize);
            for (pos, n) in state.nodes().iter().enumerate() {
                if n.fits(&pod) {
                    let f = node_frag_score(n, &w.typical);
                    let (score, _) = fgd_score(n, black_box(&pod), &w.typical, f);
                    if score > best.0 {
                        best = (score, pos);
                    }
                }
            }
            best
        });
    });
    let mut g = c.benchmark_group("experiment");
    g.sample_size(10);
    g.bench_function("FGD, default workload, seed 42 (10,866 pods)", |b| {
        b.iter(|| run(&data.cluster, w, Policy::Fgd, black_box(42)).len());
    });
    g.finish();
}

criterion_group!(benches, fgd);
criterion_main!(benches);
