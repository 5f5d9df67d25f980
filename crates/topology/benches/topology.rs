//! Addressing, subtorus, graph-product and hostlist costs.
//!
//! `cargo bench -p partalloc-topology --bench topology -- --warm-up-time 1 --measurement-time 2`

#![expect(
    clippy::unwrap_used,
    reason = "benchmark setup uses fixed valid machines"
)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_topology::slurm::hostlist;
use partalloc_topology::{Grid, NodeId, SubtorusFamily, TupleGraph};

fn addressing(c: &mut Criterion) {
    let g = Grid::torus(&[16, 16, 16]).unwrap();
    let n = g.num_nodes() as NodeId;
    c.bench_function("grid 16^3 coords_of+id_of, all nodes", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for id in 0..n {
                let c = g.coords_of(black_box(id)).unwrap();
                acc ^= g.id_of(&c).unwrap();
            }
            acc
        });
    });
    c.bench_function("grid 16^3 torus distance, 4096 pairs", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for id in 0..n {
                acc += g.distance(black_box(id), n - 1 - id).unwrap();
            }
            acc
        });
    });
}

fn subtori(c: &mut Criterion) {
    let t = Grid::torus(&[64, 64]).unwrap();
    let f = SubtorusFamily::new(&t, &[4, 4]).unwrap();
    let all: Vec<_> = f.iter().collect();
    c.bench_function("subtorus 16x16 of 64x64: iterate nodes", |b| {
        b.iter(|| black_box(&all[5]).nodes().fold(0u32, |a, x| a ^ x));
    });
    c.bench_function("subtorus 64x64/K=4: all 256 link-disjointness tests", |b| {
        b.iter(|| {
            let mut n = 0;
            for s in &all {
                for u in &all {
                    n += usize::from(s.is_link_disjoint(black_box(u)).unwrap());
                }
            }
            n
        });
    });
    c.bench_function("subtorus 64x64: contains, all nodes", |b| {
        b.iter(|| {
            (0..t.num_nodes() as NodeId)
                .filter(|&x| all[5].contains(black_box(x)))
                .count()
        });
    });
}

fn products(c: &mut Criterion) {
    let h3 = TupleGraph::hypercube(3).unwrap();
    let l16 = TupleGraph::linear_array(16).unwrap();
    c.bench_function("Q_3^16 as H_3 dot H_3 dot H_3 dot H_3", |b| {
        b.iter(|| {
            let q = black_box(&h3).dot(&h3).unwrap().dot(&h3).unwrap();
            q.dot(&h3).unwrap().num_edges()
        });
    });
    c.bench_function("Q_3^16 as L_16 cross L_16 cross L_16", |b| {
        b.iter(|| {
            black_box(&l16)
                .cross(&l16)
                .unwrap()
                .cross(&l16)
                .unwrap()
                .num_edges()
        });
    });
}

/// Hostlists of separate names: the cost per name stays flat as the list
/// grows ten-fold (reading is linear in the text).
fn hostlists(c: &mut Criterion) {
    for n in [10_000usize, 100_000] {
        let text = (0..n)
            .map(|i| format!("n{i}"))
            .collect::<Vec<_>>()
            .join(",");
        c.bench_function(
            &format!("hostlist expand, {n} comma-separated names"),
            |b| {
                b.iter(|| hostlist::expand(black_box(&text)).unwrap().len());
            },
        );
    }
    let bracketed = (0..10_000)
        .map(|i| format!("r{i}[0-3]"))
        .collect::<Vec<_>>()
        .join(",");
    c.bench_function("hostlist expand, 10000 bracketed names", |b| {
        b.iter(|| hostlist::expand(black_box(&bracketed)).unwrap().len());
    });
}

criterion_group!(benches, addressing, subtori, products, hostlists);
criterion_main!(benches);
