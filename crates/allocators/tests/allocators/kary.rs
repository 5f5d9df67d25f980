//! k-ary n-cube strategies: Kang et al. (IEEE TC 2003) worked examples,
//! The vectors of docs/baselines.md#k-ary-worked-examples, brute-force oracles and invariants.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers and oracles outside #[test] functions unwrap on fixed, valid inputs"
)]

use partalloc_allocators::conformance::{Step, check_script};
use partalloc_allocators::kary::{
    Etc, ExtendedBuddy, ExtendedGrayCode, Isomorphic, KaryPartner, SearchMode, Sniffing,
};
use partalloc_allocators::{Allocator, Grant, Partition, Request, registry};
use partalloc_topology::{Grid, GridBox, NodeId, Topology};
use proptest::prelude::*;

fn topo(s: &str) -> Topology {
    s.parse().unwrap()
}

fn boxed(sides: &[u32]) -> Request {
    Request::boxed(sides).unwrap()
}

fn gbox(base: &[u32], ext: &[u32]) -> Partition {
    Partition::Box(GridBox::new(base, ext).unwrap())
}

fn nodes_of(a: &dyn Allocator, g: &Grant) -> Vec<NodeId> {
    g.partition().node_list(a.topology()).unwrap()
}

fn ids(a: &dyn Allocator, p: &Partition) -> Vec<NodeId> {
    p.node_list(a.topology()).unwrap()
}

use crate::support::SplitMix;

// ---------------------------------------------------------------- Kang §4

#[test]
fn kang_2x2x4_takes_two_2x2x2_subpartitions() {
    // §4.2: "if an incoming job requests 2×2×4 in an 8-ary 3-cube, ...
    // assign two 2×2×2 subpartitions instead of all eight".
    let mut iso = Isomorphic::new(topo("kary:8^3")).unwrap();
    let g = iso.allocate(&boxed(&[4, 2, 2])).unwrap();
    assert_eq!(g.granted_nodes(), 16);
    let blocks = iso.addresses_of(&g).unwrap();
    assert_eq!(blocks.len(), 2);
    for b in &blocks {
        let bx = iso.partition_steps().box_of(b);
        assert_eq!(bx.extents().as_slice(), &[2, 2, 2]);
    }
    // Both inside one 4×4×4 (their common parent: the same first step).
    assert_eq!(blocks[0].digits()[0], blocks[1].digits()[0]);
    assert_eq!(blocks[0].to_string(), "((0,0,0),(0,0,0))");
    assert_eq!(blocks[1].to_string(), "((0,0,0),(0,0,1))");
    // 64 − 16 nodes of that 4×4×4 and the other seven 4×4×4s stay free:
    // F lists (level 0..3) = [0, 7, 6, 0].
    assert_eq!(iso.free_list_lengths(), vec![0, 7, 6, 0]);
}

#[test]
fn kang_2x2x8_is_folded_to_2x4x4() {
    // §4.2: "if an incoming job requests a 2×2×8 partition, it is adjusted
    // and allocated a 2×4×4 partition" (printed high dimension first).
    let mut iso = Isomorphic::new(topo("kary:8^3")).unwrap();
    let g = iso.allocate(&boxed(&[8, 2, 2])).unwrap();
    assert_eq!(g.partition(), &gbox(&[0, 0, 0], &[4, 4, 2]));
    assert_eq!(g.internal_fragmentation(), 0);
    // a = 5 div 3 = 1, l = 5 mod 3 = 2: four Q_3^2 siblings.
    assert_eq!(iso.addresses_of(&g).unwrap().len(), 4);
}

#[test]
fn kang_3x5_allocates_4x8_and_releases_17() {
    // §4.2: "Suppose that a job requests a 3×5 mesh, ... allocate a subcube
    // of size 4×8. Fifteen processors are allocated, but the remaining 17
    // processors are released for future jobs."
    let mut iso = Isomorphic::new(topo("kary:8^2")).unwrap();
    let g = iso.allocate(&boxed(&[5, 3])).unwrap();
    // 3×5 printed (l1, l0): 5 along dimension 0, 3 along dimension 1.
    assert_eq!(g.partition(), &gbox(&[0, 0], &[5, 3]));
    assert_eq!(g.granted_nodes(), 15);
    let four_by_eight = GridBox::new(&[0, 0], &[8, 4]).unwrap();
    let grid = Grid::mesh(&[8, 8]).unwrap();
    let free_inside = grid
        .box_nodes(&four_by_eight)
        .unwrap()
        .filter(|&n| iso.is_available(n))
        .count();
    assert_eq!(free_inside, 17);
    assert_eq!(iso.free_nodes(), 64 - 15);
    // The released nodes serve later jobs: a 1×1 job lands inside the 4×8.
    let h = iso.allocate(&boxed(&[1, 1])).unwrap();
    assert!(four_by_eight.contains_point(&grid.coords_of(nodes_of(&iso, &h)[0]).unwrap()));
    iso.release(&g).unwrap();
    iso.release(&h).unwrap();
    assert_eq!(iso.free_list_lengths(), vec![1, 0, 0, 0]);
}

#[test]
fn noncubic_folds_when_no_orientation_fits() {
    // 3×1×1 → 4×1×1 → semi-isomorphic 2×2×1: 3 nodes, an L shape.
    let mut iso = Isomorphic::new(topo("kary:4^3")).unwrap();
    let g = iso.allocate(&boxed(&[3, 1, 1])).unwrap();
    assert_eq!(g.granted_nodes(), 3);
    assert_eq!(g.partition(), &Partition::Nodes(vec![0, 1, 5]));
    assert_eq!(iso.free_nodes(), 61);
}

#[test]
fn noncubic_on_unequal_sides_folds_into_its_block() {
    // 3×3×2 → 4×4×2 (32 nodes) → the 8×2×2 half of a 16×2×2 mesh. No
    // orientation fits, so dimension 1 is folded zig-zag onto dimension 0:
    // rows y = 0, 1 stay at x = 0, 1, 2 and row y = 2 comes back mirrored
    // in row 1 at x = 5, 4, 3, beside it.
    let mut iso = Isomorphic::new(topo("mesh:16x2x2")).unwrap();
    let g = iso.allocate(&boxed(&[3, 3, 2])).unwrap();
    assert_eq!(g.granted_nodes(), 18);
    let grid = *iso.topology().as_grid().unwrap();
    let mut want: Vec<NodeId> = Vec::new();
    for z in 0..2 {
        for (xs, y) in [(0..3, 0), (0..3, 1), (3..6, 1)] {
            for x in xs {
                want.push(grid.id_of(&[x, y, z]).unwrap());
            }
        }
    }
    want.sort_unstable();
    assert_eq!(g.partition(), &Partition::Nodes(want));
    assert_eq!(iso.free_nodes(), 64 - 18);
}

/// The noncubic path reuses its scratch state (the kept-node bitmap and the
/// split option's region strategies): the same request after a release gets
/// the same grant, with and without the split option, and everything is
/// free again after the releases.
#[test]
fn noncubic_grants_repeat_after_release() {
    for split in [false, true] {
        for (machine, sides) in [("kary:8^2", &[5u32, 3][..]), ("mesh:16x2x2", &[3, 3, 2])] {
            let mut iso = Isomorphic::new(topo(machine)).unwrap().with_split(split);
            let first = iso.allocate(&boxed(sides)).unwrap();
            let other = iso.allocate(&boxed(sides)).unwrap();
            iso.release(&first).unwrap();
            let again = iso.allocate(&boxed(sides)).unwrap();
            assert_eq!(
                again.partition(),
                first.partition(),
                "{machine} split={split}"
            );
            iso.release(&again).unwrap();
            iso.release(&other).unwrap();
            assert_eq!(iso.free_nodes(), iso.total_nodes());
            assert_eq!(iso.free_list_lengths()[0], 1);
        }
    }
}

#[test]
fn unequal_sides_partition_longest_first() {
    // §4.3 / Fig. 8: 2^2 × 2^2 × 2^4 (dimension 0 is the 16-long one).
    let mut iso = Isomorphic::new(topo("mesh:16x4x4")).unwrap();
    // Two 1-bit steps first: a 128-node job is one half along dimension 0.
    let g = iso.allocate(&boxed(&[8, 4, 4])).unwrap();
    assert_eq!(g.partition(), &gbox(&[0, 0, 0], &[8, 4, 4]));
    let h = iso.allocate(&boxed(&[4, 4, 4])).unwrap();
    assert_eq!(h.partition(), &gbox(&[8, 0, 0], &[4, 4, 4]));
    // 8 nodes → a 2×2×2 block of the third (8-way) step.
    let j = iso.allocate(&boxed(&[2, 2, 2])).unwrap();
    assert_eq!(j.partition(), &gbox(&[12, 0, 0], &[2, 2, 2]));
    let addr = iso.addresses_of(&j).unwrap();
    assert_eq!(addr[0].to_string(), "((1),(1),(0,0,0))");
    for x in [g, h, j] {
        iso.release(&x).unwrap();
    }
    assert_eq!(iso.free_list_lengths(), vec![1, 0, 0, 0, 0]);
}

fn iso_systems() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("kary:8^3"),
        Just("kary:4^3"),
        Just("kary:16^2"),
        Just("mesh:16x4x4"),
        Just("mesh:8x4"),
        Just("mesh:16x2x2"),
        Just("mesh:4x16"),
        Just("mesh:2x8x32")
    ]
}

/// A noncubic grant keeps Π l_i nodes inside one block of 2^{Σ⌈log2 l_i⌉}
/// nodes (its bounding box is no larger), connected in the mesh: the
/// requested box in some orientation, or a fold of it.
fn check_noncubic_shape(grid: &Grid, sides: &[u32], nodes: &[NodeId]) -> Result<(), TestCaseError> {
    let n = grid.dims();
    let coords: Vec<Vec<u32>> = nodes
        .iter()
        .map(|&x| grid.coords_of(x).unwrap().as_slice().to_vec())
        .collect();
    let lo: Vec<u32> = (0..n)
        .map(|i| coords.iter().map(|c| c[i]).min().unwrap())
        .collect();
    let hi: Vec<u32> = (0..n)
        .map(|i| coords.iter().map(|c| c[i]).max().unwrap())
        .collect();
    let padded: u64 = sides
        .iter()
        .map(|&s| u64::from(s.next_power_of_two()))
        .product();
    let bbox: u64 = (0..n).map(|i| u64::from(hi[i] - lo[i] + 1)).product();
    prop_assert!(
        bbox <= padded,
        "{:?}: bounding box {} > block {}",
        sides,
        bbox,
        padded
    );
    // Connected under mesh adjacency.
    let set: std::collections::HashSet<&Vec<u32>> = coords.iter().collect();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![&coords[0]];
    seen.insert(&coords[0]);
    while let Some(c) = stack.pop() {
        for i in 0..n {
            for d in [-1i64, 1] {
                let mut nb = c.clone();
                let v = i64::from(nb[i]) + d;
                if v < 0 {
                    continue;
                }
                nb[i] = v as u32;
                if let Some(&k) = set.get(&nb)
                    && seen.insert(k)
                {
                    stack.push(k);
                }
            }
        }
    }
    prop_assert_eq!(
        seen.len(),
        nodes.len(),
        "{:?}: kept nodes not connected: {:?}",
        sides,
        nodes
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Kang §4.1: Algorithm 1 is statically optimal — any sequence of
    /// isomorphic requests whose total does not exceed the system is served.
    #[test]
    fn algorithm1_is_statically_optimal(
        sys in prop_oneof![Just((8u32, 3usize)), Just((16, 2)), Just((4, 3)), Just((8, 2))],
        sizes in proptest::collection::vec(0u32..4, 1..80),
    ) {
        let (k, n) = sys;
        let kk = k.trailing_zeros();
        let mut iso = Isomorphic::new(Grid::kary_ncube(k, n, false).unwrap().into()).unwrap();
        let total = (k as u64).pow(n as u32);
        let mut used = 0u64;
        for a in sizes {
            let a = a.min(kk);
            let side = 1u32 << a;
            let vol = (side as u64).pow(n as u32);
            if used + vol > total {
                continue;
            }
            let g = iso.allocate(&Request::boxed(&vec![side; n]).unwrap());
            prop_assert!(g.is_ok(), "refused with {} of {} used", used, total);
            used += vol;
        }
        prop_assert_eq!(iso.free_nodes() as u64, total - used);
    }

    /// Every grant is a box of free nodes of the folded shape; releasing
    /// everything restores the initial free lists (merging up the levels).
    #[test]
    fn grants_are_semi_isomorphic_and_release_restores_free_lists(
        sys in iso_systems(),
        split in any::<bool>(),
        ops in proptest::collection::vec((0u32..5, 0u32..5, 0u32..5, any::<bool>(), 0usize..8), 1..60),
    ) {
        let t = topo(sys);
        let grid = *t.as_grid().unwrap();
        let mut iso = Isomorphic::new(t.clone()).unwrap().with_split(split);
        let initial = iso.free_list_lengths();
        let mut live: Vec<Grant> = Vec::new();
        for (x, y, z, cubic, rel) in ops {
            if rel < 3 && !live.is_empty() {
                let g = live.swap_remove(rel % live.len());
                iso.release(&g).unwrap();
                continue;
            }
            let mut sides: Vec<u32> = [x, y, z][..grid.dims()]
                .iter()
                .map(|&e| if cubic { 1 << (e % 3) } else { e % 6 + 1 })
                .collect();
            sides.truncate(grid.dims());
            let before: Vec<bool> = (0..grid.num_nodes() as NodeId).map(|n| iso.is_available(n)).collect();
            let free_before = iso.free_nodes();
            match iso.allocate(&Request::boxed(&sides).unwrap()) {
                Ok(g) => {
                    let nodes = nodes_of(&iso, &g);
                    prop_assert_eq!(nodes.len() as u64, g.requested_nodes());
                    prop_assert!(nodes.iter().all(|&n| before[n as usize]));
                    prop_assert_eq!(iso.free_nodes(), free_before - nodes.len());
                    if !split && !sides.iter().all(|s| s.is_power_of_two()) {
                        check_noncubic_shape(&grid, &sides, &nodes)?;
                    }
                    if cubic {
                        let Partition::Box(b) = g.partition() else {
                            return Err(TestCaseError::fail("cubic grant is not a box"));
                        };
                        if grid.radix().is_some() {
                            // Kang §4.2: n − l sides 2^a and l sides 2^{a+1}
                            // on dimensions 0 … l−1, a = A div n, l = A mod n.
                            let n = grid.dims() as u32;
                            let a_total: u32 = sides.iter().map(|s| s.trailing_zeros()).sum();
                            let (a, l) = (a_total / n, a_total % n);
                            let want: Vec<u32> = (0..n)
                                .map(|i| if i < l { 2 << a } else { 1 << a })
                                .collect();
                            prop_assert_eq!(b.extents().as_slice(), want.as_slice());
                        }
                    }
                    live.push(g);
                }
                Err(e) => {
                    prop_assert!(
                        matches!(
                            e,
                            partalloc_allocators::AllocError::NoRoom { .. }
                                | partalloc_allocators::AllocError::Invalid { .. }
                        ),
                        "{}",
                        e
                    );
                    prop_assert_eq!(iso.free_nodes(), free_before);
                }
            }
        }
        for g in live {
            iso.release(&g).unwrap();
        }
        prop_assert_eq!(iso.free_list_lengths(), initial);
        prop_assert_eq!(iso.free_nodes(), grid.num_nodes());
    }
}

// ------------------------------- docs/baselines.md#k-ary-worked-examples

fn with_busy<A: Allocator>(mut a: A, busy: &[NodeId]) -> A {
    for &n in busy {
        a.mark_faulty(n).unwrap();
    }
    a
}

fn range(lo: NodeId, hi: NodeId) -> Vec<NodeId> {
    (lo..hi).collect()
}

#[test]
fn a8_example1_4ary_2cube() {
    let t = topo("kary:4^2");
    let r = boxed(&[4, 1]);
    let mut eb = with_busy(ExtendedBuddy::new(t.clone()).unwrap(), &[0]);
    let g = eb.allocate(&r).unwrap();
    assert_eq!(nodes_of(&eb, &g), vec![4, 5, 6, 7]);
    let mut egc = with_busy(ExtendedGrayCode::new(t.clone()).unwrap(), &[0]);
    let g = egc.allocate(&r).unwrap();
    assert_eq!(g.partition(), &Partition::Nodes(vec![1, 2, 3, 7]));
    let mut p = with_busy(KaryPartner::new(t.clone()).unwrap(), &[0]);
    let g = p.allocate(&r).unwrap();
    assert_eq!(nodes_of(&p, &g), vec![1, 5, 9, 13]);
}

/// The nodes that Extended Buddy, Extended Gray Code and k-ary Partner
/// grant first for `r` on `t` with the nodes `busy` taken.
fn first_grants(
    t: &Topology,
    r: &Request,
    busy: &[NodeId],
) -> (Vec<NodeId>, Vec<NodeId>, Vec<NodeId>) {
    let mut eb = with_busy(ExtendedBuddy::new(t.clone()).unwrap(), busy);
    let mut egc = with_busy(ExtendedGrayCode::new(t.clone()).unwrap(), busy);
    let mut p = with_busy(KaryPartner::new(t.clone()).unwrap(), busy);
    let a = eb.allocate(r).unwrap();
    let b = egc.allocate(r).unwrap();
    let c = p.allocate(r).unwrap();
    (nodes_of(&eb, &a), nodes_of(&egc, &b), nodes_of(&p, &c))
}

#[test]
fn a8_example2_3ary_2cube() {
    let t = topo("kary:3^2");
    let r = boxed(&[3, 1]);
    let first = |busy: &[NodeId]| first_grants(&t, &r, busy);
    assert_eq!(first(&[1]), (vec![3, 4, 5], vec![2, 4, 5], vec![0, 3, 6]));
    assert_eq!(first(&[0]), (vec![3, 4, 5], vec![1, 2, 5], vec![1, 4, 7]));
}

#[test]
fn a8_example3_4ary_3cube_planes() {
    let t = topo("kary:4^3");
    let r = boxed(&[4, 4, 1]);
    let run = |busy: &[NodeId]| first_grants(&t, &r, busy);
    let egc_expect: Vec<NodeId> = range(4, 16).into_iter().chain(28..32).collect();
    let partner_expect: Vec<NodeId> = [4, 20, 36, 52].iter().flat_map(|&b| b..b + 4).collect();
    let (eb, egc, p) = run(&[0]);
    assert_eq!(eb, range(16, 32));
    assert_eq!(egc, egc_expect);
    assert_eq!(p, partner_expect);
    let (eb, egc, p) = run(&[0, 17]);
    assert_eq!(eb, range(32, 48));
    assert_eq!(egc, egc_expect);
    assert_eq!(p, partner_expect);
}

#[test]
fn a8_example4_kang_fig1a() {
    let t = topo("kary:8^3");
    for mapping in ["node-count", "topological"] {
        for name in ["extended-buddy", "extended-gray-code", "kary-partner"] {
            let mut a = registry::build(&format!("{name}[mapping={mapping}]"), &t).unwrap();
            let g = a.allocate(&boxed(&[4, 4, 1])).unwrap();
            assert_eq!(nodes_of(a.as_ref(), &g), range(0, 64), "{name}");
            assert_eq!(g.internal_fragmentation(), 48);
        }
    }
    let r = boxed(&[4, 4, 1]);
    let mut eb = with_busy(ExtendedBuddy::new(t.clone()).unwrap(), &[0]);
    let g = eb.allocate(&r).unwrap();
    assert_eq!(nodes_of(&eb, &g), range(64, 128));
    let mut p = with_busy(KaryPartner::new(t.clone()).unwrap(), &[0]);
    let g = p.allocate(&r).unwrap();
    assert_eq!(g.partition(), &gbox(&[0, 1, 0], &[8, 1, 8]));
    let mut egc = with_busy(ExtendedGrayCode::new(t.clone()).unwrap(), &[0]);
    let g = egc.allocate(&r).unwrap();
    // Rows (d2,d1) = (0,1)…(0,7),(1,7).
    let expect: Vec<NodeId> = range(8, 64).into_iter().chain(120..128).collect();
    assert_eq!(nodes_of(&egc, &g), expect);
}

#[test]
fn a8_example5_recognition_counts() {
    let count = |name: &str, sys: &str, sides: &[u32]| {
        let a = registry::build(name, &topo(sys)).unwrap();
        a.recognizable(&boxed(sides)).unwrap().len()
    };
    let all = |sys: &str, sides: &[u32]| {
        let a = Etc::new(topo(sys)).unwrap();
        a.recognizable(&boxed(sides).any_orientation())
            .unwrap()
            .len()
    };
    // (k, sides, extended-buddy, extended-gray-code on the mesh and on the
    // torus, kary-partner, every orientation when the row gives it) on Q_3^k.
    type Row = (u32, [u32; 3], [usize; 4], Option<usize>);
    let rows: [Row; 4] = [
        // Q_3^4, R = 1.
        (4, [4, 1, 1], [16, 61, 64, 48], Some(48)),
        // Q_3^4, R = 2.
        (4, [4, 4, 1], [4, 13, 16, 8], Some(12)),
        // Q_3^8, R = 2.
        (8, [8, 8, 1], [8, 57, 64, 16], Some(24)),
        // Q_3^3, R = 1 (odd k: the code is not cyclic even on a torus).
        (3, [3, 1, 1], [9, 25, 25, 27], None),
    ];
    for (k, sides, [buddy, gray, gray_torus, partner], every) in rows {
        let (mesh, torus) = (format!("kary:{k}^3"), format!("kary-torus:{k}^3"));
        assert_eq!(count("extended-buddy", &mesh, &sides), buddy, "{mesh}");
        assert_eq!(count("extended-gray-code", &mesh, &sides), gray, "{mesh}");
        assert_eq!(
            count("extended-gray-code", &torus, &sides),
            gray_torus,
            "{torus}"
        );
        assert_eq!(count("kary-partner", &mesh, &sides), partner, "{mesh}");
        if let Some(every) = every {
            assert_eq!(all(&mesh, &sides), every, "{mesh}");
        }
    }
}

#[test]
fn a8_example6_sniffing_vs_etc() {
    let t = topo("kary:4^3");
    let odd_d1: Vec<NodeId> = (0..64).filter(|id| (id / 4) % 2 == 1).collect();
    let job = boxed(&[2, 2, 1]).any_orientation();
    let mut s = with_busy(Sniffing::new(t.clone()).unwrap(), &odd_d1);
    assert!(s.allocate(&job).is_err());
    let mut e = with_busy(Etc::new(t.clone()).unwrap(), &odd_d1);
    let g = e.allocate(&job).unwrap();
    assert_eq!(g.partition(), &gbox(&[0, 0, 0], &[2, 1, 2]));
    assert_eq!(nodes_of(&e, &g), vec![0, 1, 16, 17]);
    let mut s = with_busy(Sniffing::new(t.clone()).unwrap(), &[0]);
    let mut e = with_busy(Etc::new(t.clone()).unwrap(), &[0]);
    let a = s.allocate(&job).unwrap();
    let b = e.allocate(&job).unwrap();
    assert_eq!(nodes_of(&s, &a), vec![1, 2, 5, 6]);
    assert_eq!(a.partition(), b.partition());
}

#[test]
fn sniffing_plane_positions_are_k_minus_l_plus_1_squared() {
    // Kang §2 counts (8−4)^2 = 16 positions per plane; the definition gives
    // (8−4+1)^2 = 25 (docs/paper-errata.md (k-ary part)).
    let s = Sniffing::new(topo("kary:8^3")).unwrap();
    assert_eq!(s.recognizable(&boxed(&[4, 4, 1])).unwrap().len(), 25 * 8);
    let e = Etc::new(topo("kary:8^3")).unwrap();
    assert_eq!(
        e.recognizable(&boxed(&[4, 4, 1]).any_orientation())
            .unwrap()
            .len(),
        25 * 8 * 3
    );
}

// --------------------------------------------- ETC against brute force

/// Brute force: every distinct orientation (permutations of dimensions in
/// lexicographic order, duplicates dropped), every base in id order.
fn brute_first_box(grid: &Grid, free: &[bool], sides: &[u32]) -> Option<GridBox> {
    let n = sides.len();
    let mut perms: Vec<Vec<usize>> = Vec::new();
    fn permutations(cur: &mut Vec<usize>, n: usize, out: &mut Vec<Vec<usize>>) {
        if cur.len() == n {
            out.push(cur.clone());
            return;
        }
        for d in 0..n {
            if !cur.contains(&d) {
                cur.push(d);
                permutations(cur, n, out);
                cur.pop();
            }
        }
    }
    permutations(&mut Vec::new(), n, &mut perms);
    let mut seen: Vec<Vec<u32>> = Vec::new();
    for p in perms {
        let o: Vec<u32> = p.iter().map(|&i| sides[i]).collect();
        if seen.contains(&o) {
            continue;
        }
        seen.push(o.clone());
        for id in 0..grid.num_nodes() as NodeId {
            let base = grid.coords_of(id).unwrap();
            if (0..n).any(|i| base[i] + o[i] > grid.sides()[i]) {
                continue;
            }
            let b = GridBox::new(&base, &o).unwrap();
            if grid.box_nodes(&b).unwrap().all(|x| free[x as usize]) {
                return Some(b);
            }
        }
    }
    None
}

#[test]
fn etc_is_recognition_complete_against_brute_force() {
    let mut rng = SplitMix(7);
    for (sys, trials) in [("kary:4^3", 400), ("kary:8^3", 120)] {
        let t = topo(sys);
        let grid = *t.as_grid().unwrap();
        let k = grid.sides()[0];
        for _ in 0..trials {
            let density = rng.below(60);
            let free: Vec<bool> = (0..grid.num_nodes())
                .map(|_| rng.below(100) >= density)
                .collect();
            let mut etc = Etc::new(t.clone()).unwrap();
            for (i, &f) in free.iter().enumerate() {
                if !f {
                    etc.mark_faulty(i as NodeId).unwrap();
                }
            }
            let sides: Vec<u32> = (0..3).map(|_| 1 + rng.below(u64::from(k)) as u32).collect();
            let want = brute_first_box(&grid, &free, &sides);
            let got = etc.allocate(&boxed(&sides).any_orientation()).ok();
            assert_eq!(
                got.map(|g| g.partition().clone()),
                want.map(Partition::Box),
                "{sys} sides {sides:?}"
            );
        }
    }
}

#[test]
fn fast_and_literal_etc_choose_identical_boxes() {
    let mut rng = SplitMix(11);
    let mut compared = 0;
    for sys in [
        "kary:4^3",
        "kary:8^3",
        "mesh:6x5x4",
        "mesh:70x3x2",
        "mesh:130x3x2",
        "torus:200x2x3",
    ] {
        let t = topo(sys);
        let grid = *t.as_grid().unwrap();
        let mut fast = Etc::with_mode(t.clone(), SearchMode::Fast).unwrap();
        let mut lit = Etc::with_mode(t.clone(), SearchMode::Literal).unwrap();
        let request = |rng: &mut SplitMix| {
            // Long runs along a dimension 0 of several words.
            let max0 = if grid.sides()[0] > 64 { 140 } else { 5 };
            let sides: Vec<u32> = (0..3)
                .map(|i| {
                    let max = if i == 0 { max0 } else { 5 };
                    1 + rng.below(u64::from(grid.sides()[i].min(max))) as u32
                })
                .collect();
            let rotate = rng.below(4) != 0;
            let r = boxed(&sides);
            (if rotate { r.any_orientation() } else { r }, ())
        };
        compared += lockstep(&mut fast, &mut lit, &mut rng, 6500, request, |_, ()| {});
    }
    assert!(compared >= 20_000, "{compared}");
}

// ---------------------------------------------------------- conformance

fn step_strategy(dims: usize, max_side: u32) -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (proptest::collection::vec(1..=max_side, dims), any::<bool>()).prop_map(|(s, rot)| {
            let r = Request::boxed(&s).unwrap();
            Step::Allocate(if rot { r.any_orientation() } else { r })
        }),
        3 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..70).prop_map(Step::MarkFaulty),
        1 => (0u32..70).prop_map(Step::Repair),
        1 => Just(Step::Allocate(Request::nodes(3))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_kary_strategy_conforms(
        name in prop_oneof![
            Just("isomorphic"), Just("isomorphic[split=true]"), Just("extended-buddy"), Just("extended-gray-code"),
            Just("kary-partner"), Just("etc"), Just("etc[search=literal]"), Just("sniffing"),
            Just("extended-buddy[mapping=topological]"), Just("kary-partner[mapping=topological]"),
        ],
        sys in prop_oneof![Just("kary:4^3"), Just("kary:8^2"), Just("kary-torus:4^3")],
        script in proptest::collection::vec(step_strategy(3, 5), 1..40),
    ) {
        let t = topo(sys);
        let dims = t.as_grid().unwrap().dims();
        let script: Vec<Step> = script
            .into_iter()
            .map(|s| match s {
                Step::Allocate(Request::Box { sides, rotate }) => {
                    let r = Request::boxed(&sides[..dims]).unwrap();
                    Step::Allocate(if rotate { r.any_orientation() } else { r })
                }
                other => other,
            })
            .collect();
        let mut a = registry::build(name, &t).unwrap();
        check_script(a.as_mut(), &script).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }

    #[test]
    fn isomorphic_conforms_on_unequal_sides(
        script in proptest::collection::vec(step_strategy(3, 8), 1..40),
    ) {
        let mut a = registry::build("isomorphic", &topo("mesh:16x4x4")).unwrap();
        check_script(a.as_mut(), &script).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
}

#[test]
fn strategies_refuse_what_they_cannot_serve() {
    let t = topo("kary:8^3");
    for name in [
        "isomorphic",
        "extended-buddy",
        "extended-gray-code",
        "kary-partner",
        "etc",
        "sniffing",
    ] {
        let mut a = registry::build(name, &t).unwrap();
        assert!(a.allocate(&Request::subcube(2)).is_err(), "{name}");
        assert!(a.allocate(&boxed(&[2, 2])).is_err(), "{name}");
        assert!(a.allocate(&boxed(&[16, 16, 16])).is_err(), "{name}");
        // Absurd sides are refused, never overflow: above MAX_NODES
        // nodes by the request itself, up to it by the strategy.
        assert!(Request::boxed(&[u32::MAX, u32::MAX, 3]).is_err());
        assert!(Request::boxed(&[u32::MAX, 1, 1]).is_err());
        assert!(
            a.allocate(&boxed(&[1 << 16, 1 << 15, 1])).is_err(),
            "{name}"
        );
        assert!(
            a.allocate(&boxed(&[1 << 31, 1, 1]).any_orientation())
                .is_err(),
            "{name}"
        );
        assert_eq!(a.free_nodes(), 512);
        assert!(registry::build(name, &topo("hypercube:4")).is_err());
    }
    assert!(registry::build("isomorphic", &topo("mesh:6x4")).is_err());
    assert!(registry::build("extended-buddy", &topo("mesh:8x4")).is_err());
    assert!(registry::build("etc[search=slow]", &t).is_err());
    assert!(registry::build("kary-partner[mapping=x]", &t).is_err());
    let _ = ids;
}

#[test]
fn jobs_below_q_n_2_are_served() {
    // a = Σ a_i div n = 0 (docs/paper-errata.md (k-ary part) §3): 2×1×1 and 1×2×2 jobs.
    let mut iso = Isomorphic::new(topo("kary:4^3")).unwrap();
    let g = iso.allocate(&boxed(&[1, 2, 1])).unwrap();
    // l = 1: two single nodes along dimension 0 (the fold ignores the
    // requested orientation).
    assert_eq!(g.partition(), &gbox(&[0, 0, 0], &[2, 1, 1]));
    // l = 2: the Buddy run of four free bits in the first 2×2×2's bitmap
    // 0b1111_1100 starts at child 4 (dimension-2 bit set).
    let h = iso.allocate(&boxed(&[1, 2, 2])).unwrap();
    assert_eq!(h.partition(), &gbox(&[0, 0, 1], &[2, 2, 1]));
    iso.release(&g).unwrap();
    iso.release(&h).unwrap();
    assert_eq!(iso.free_list_lengths(), vec![1, 0, 0]);
}

#[test]
fn split_option_packs_3x5_into_a_4x4() {
    // Kang §4.2, last paragraph: 3×5 = 2×4 + 2×1 + 1×4 + 1×1; with the
    // pieces made semi-isomorphic the job fits a 4×4 subcube.
    let mut iso = registry::build("isomorphic[split=true]", &topo("kary:8^2")).unwrap();
    assert_eq!(iso.name(), "isomorphic[split=true]");
    let g = iso.allocate(&boxed(&[5, 3])).unwrap();
    assert_eq!(g.granted_nodes(), 15);
    let Partition::Boxes(bs) = g.partition() else {
        panic!("{:?}", g.partition())
    };
    let mut vols: Vec<u64> = bs.iter().map(GridBox::volume).collect();
    vols.sort_unstable();
    assert_eq!(vols, vec![1, 2, 4, 8]);
    let region = GridBox::new(&[0, 0], &[4, 4]).unwrap();
    assert!(bs.iter().all(|b| region.contains_box(b)), "{bs:?}");
    assert_eq!(iso.free_nodes(), 64 - 15);
    iso.release(&g).unwrap();
    assert_eq!(iso.free_nodes(), 64);
    // The 4×4 leaves room: after 3×5 (split) a 4×8 job still fits.
    let _g = iso.allocate(&boxed(&[5, 3])).unwrap();
    assert!(iso.allocate(&boxed(&[8, 4])).is_ok());
}

#[test]
fn grant_addresses_use_kang_notation() {
    // Kang Fig. 3 (Q_2^8): a one-node job at (a1, a0) = (3, 5) would be
    // ((0,1),(1,0),(1,1)); the whole machine is the empty address.
    let mut iso = Isomorphic::new(topo("kary:8^2")).unwrap();
    let all = iso.allocate(&boxed(&[8, 8])).unwrap();
    let a = iso.addresses_of(&all).unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].to_string(), "()");
    assert_eq!(a[0].to_star_string(), "(***,***)");
    iso.release(&all).unwrap();
    // Two 4×4 jobs take the first-step children (0,0) and (0,1) (tuples
    // printed a1 first); a 2×2 job then decomposes child (1,0) and takes
    // its first second-step child.
    let q: Vec<Grant> = (0..2)
        .map(|_| iso.allocate(&boxed(&[4, 4])).unwrap())
        .collect();
    let addr: Vec<String> = q
        .iter()
        .map(|g| iso.addresses_of(g).unwrap()[0].to_star_string())
        .collect();
    assert_eq!(addr, vec!["(0**,0**)", "(0**,1**)"]);
    let b = iso.allocate(&boxed(&[2, 2])).unwrap();
    assert_eq!(
        iso.addresses_of(&b).unwrap()[0].to_string(),
        "((1,0),(0,0))"
    );
    assert!(iso.addresses_of(&all).is_err());
}

#[test]
fn fast_and_literal_sniffing_choose_identical_windows() {
    let mut rng = SplitMix(13);
    let t = topo("kary:8^3");
    let mut fast = Sniffing::with_mode(t.clone(), SearchMode::Fast).unwrap();
    let mut lit = Sniffing::with_mode(t.clone(), SearchMode::Literal).unwrap();
    let request = |rng: &mut SplitMix| {
        let sides: Vec<u32> = (0..3).map(|_| 1 + rng.below(5) as u32).collect();
        (boxed(&sides).any_orientation(), sides)
    };
    lockstep(&mut fast, &mut lit, &mut rng, 3000, request, |a, sides| {
        // Sniffing never turns the job.
        let Partition::Box(bx) = a.partition() else {
            panic!("not a box")
        };
        assert_eq!(bx.extents().as_slice(), sides.as_slice());
    });
}

/// `steps` random steps on the fast and the literal search of one
/// strategy in lockstep: 45 % of them (when jobs are live) release a random
/// live pair, the others allocate the request `request` draws on both, which
/// must give the same box (`check` sees the grant and what `request` gave
/// with it) or the same error. Returns how many requests were compared.
#[expect(clippy::panic, reason = "a mismatch fails the calling test")]
fn lockstep<A: Allocator, T>(
    fast: &mut A,
    lit: &mut A,
    rng: &mut SplitMix,
    steps: usize,
    mut request: impl FnMut(&mut SplitMix) -> (Request, T),
    mut check: impl FnMut(&Grant, &T),
) -> usize {
    let mut compared = 0;
    let mut live: Vec<(Grant, Grant)> = Vec::new();
    for _ in 0..steps {
        if !live.is_empty() && rng.below(100) < 45 {
            let (a, b) = live.swap_remove(rng.below(live.len() as u64) as usize);
            fast.release(&a).unwrap();
            lit.release(&b).unwrap();
            continue;
        }
        let (r, drawn) = request(rng);
        compared += 1;
        match (fast.allocate(&r), lit.allocate(&r)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.partition(), b.partition());
                check(&a, &drawn);
                live.push((a, b));
            }
            (Err(x), Err(y)) => assert_eq!(x, y),
            (x, y) => panic!("fast {x:?} vs literal {y:?}"),
        }
    }
    compared
}
