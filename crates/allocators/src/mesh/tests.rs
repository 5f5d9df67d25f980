//! Paper examples, the vectors of docs/baselines.md#mesh-worked-examples, oracles and properties of the mesh
//! strategies.

use partalloc_topology::{GridBox, Topology};
use proptest::prelude::*;

use super::oracle::{Mesh, cuboid, xywh};
use super::*;
use crate::strategy::Strategy as Chooser;
use crate::{Allocator, Grant, Managed, Partition};

/// The mesh of `t` as its searches read it.
fn core_of<S: Chooser<Record = Partition>>(t: &Managed<S>) -> MeshCore<'_> {
    MeshGeom::new("test", t.topology()).unwrap().core(&t.view())
}

fn topo(w: u32, h: u32) -> Topology {
    format!("mesh:{w}x{h}").parse().unwrap()
}

/// Definition 2 on mesh boxes (which need no machine sides).
fn rf(s: &GridBox, against: &GridBox) -> u64 {
    crate::submesh_list::rf(&[], s, against)
}

fn corners(x1: u32, y1: u32, x2: u32, y2: u32) -> GridBox {
    xywh(x1, y1, x2 - x1 + 1, y2 - y1 + 1)
}

/// Makes `r` a live allocated submesh as if the strategy had chosen it.
fn place<S: Chooser<Record = Partition>>(t: &mut Managed<S>, r: GridBox) -> Grant {
    assert!(core_of(t).rect_free(&r));
    t.commit(Partition::Box(r), r.volume())
}

fn place_all<S: Chooser<Record = Partition>>(
    t: &mut Managed<S>,
    busy: &[(u32, u32, u32, u32)],
) -> Vec<Grant> {
    busy.iter()
        .map(|&(x1, y1, x2, y2)| place(t, corners(x1, y1, x2, y2)))
        .collect()
}

fn boxed(a: u32, b: u32, rotate: bool) -> Request {
    let r = Request::boxed(&[a, b]).unwrap();
    if rotate { r.any_orientation() } else { r }
}

fn granted_rect(g: &Grant) -> GridBox {
    match g.partition() {
        Partition::Box(b) => *b,
        other => panic!("not a box: {other:?}"),
    }
}

fn try_alloc<T: Allocator>(t: &mut T, a: u32, b: u32, rotate: bool) -> Option<GridBox> {
    t.allocate(&boxed(a, b, rotate))
        .ok()
        .map(|g| granted_rect(&g))
}

fn fsl_list(f: &Fsl) -> Vec<String> {
    f.free_submeshes().iter().map(ToString::to_string).collect()
}

/// Kim & Yoon Fig. 2 busy set, reconstructed in docs/baselines.md#mesh-worked-examples.
const FIG2: [(u32, u32, u32, u32); 3] = [(7, 0, 9, 4), (7, 8, 9, 9), (0, 5, 3, 9)];

// ---------------------------------------------------------------- Kim & Yoon

#[test]
fn reservation_factor_examples_of_definition_2() {
    let s1 = corners(0, 0, 6, 4);
    let s2 = corners(4, 0, 6, 9);
    let s3 = corners(4, 5, 9, 7);
    assert_eq!(rf(&s2, &s1), 20);
    assert_eq!(rf(&s3, &s2), 15);
    // Example 1's values: C_3^2 = ⟨8,5⟩⟨9,7⟩ does not overlap S2.
    assert_eq!(rf(&corners(8, 5, 9, 7), &s2), 30);
    assert_eq!(rf(&corners(4, 5, 5, 7), &s2), 15);
    assert_eq!(rf(&corners(4, 8, 6, 9), &s2), 24);
    assert_eq!(rf(&corners(4, 0, 6, 1), &s1), 21);
    assert_eq!(rf(&corners(0, 0, 1, 2), &s1), 25);
    assert_eq!(rf(&corners(5, 0, 6, 2), &s1), 25);
}

#[test]
fn fig2_free_submesh_list_is_s1_s2_s3() {
    let mut f = Fsl::new(topo(10, 10)).unwrap();
    place_all(&mut f, &FIG2);
    assert_eq!(fsl_list(&f), ["⟨0,0⟩⟨6,4⟩", "⟨4,0⟩⟨6,9⟩", "⟨4,5⟩⟨9,7⟩"]);
}

#[test]
fn example_1_allocates_c32_and_leaves_s_prime() {
    let mut f = Fsl::new(topo(10, 10)).unwrap();
    place_all(&mut f, &FIG2);
    let g = f.allocate(&boxed(3, 2, true)).unwrap();
    assert_eq!(granted_rect(&g), corners(8, 5, 9, 7));
    assert_eq!(fsl_list(&f), ["⟨0,0⟩⟨6,4⟩", "⟨4,0⟩⟨6,9⟩", "⟨4,5⟩⟨7,7⟩"]);
}

#[test]
fn example_1_candidates_and_first_elimination() {
    let mut f = Fsl::new(topo(10, 10)).unwrap();
    place_all(&mut f, &FIG2);
    let sides = f.sides();
    let mut c: Vec<GridBox> = f
        .chooser
        .clone()
        .candidates(&sides, &f.free, &[[3, 2], [2, 3]])
        .iter()
        .map(|&(_, _, c)| c)
        .collect();
    c.sort_unstable();
    // Fig. 5's eight candidates: four 2×3 at S1's corners (2×3 is S1's
    // dominant type, rf 25 > 21), two 3×2 in S2 (24 > 21; left and right
    // corners coincide), two 2×3 in S3 (12 > 9).
    let mut want = vec![
        corners(0, 0, 1, 2),
        corners(0, 2, 1, 4),
        corners(5, 0, 6, 2),
        corners(5, 2, 6, 4),
        corners(4, 0, 6, 1),
        corners(4, 8, 6, 9),
        corners(4, 5, 5, 7),
        corners(8, 5, 9, 7),
    ];
    want.sort_unstable();
    assert_eq!(c, want);
    // Against S1 the three candidates outside S1 keep rf 35.
    let s1 = corners(0, 0, 6, 4);
    let mut kept: Vec<GridBox> = c.iter().copied().filter(|&x| rf(&x, &s1) == 35).collect();
    kept.sort_unstable();
    assert_eq!(
        kept,
        [
            corners(4, 5, 5, 7),
            corners(4, 8, 6, 9),
            corners(8, 5, 9, 7)
        ]
    );
    let others: Vec<u64> = c
        .iter()
        .map(|&x| rf(&x, &s1))
        .filter(|&v| v != 35)
        .collect();
    assert!(others.iter().all(|&v| v == 25 || v == 21), "{others:?}");
}

#[test]
fn fsl_keeps_room_for_the_7x5_job_that_adaptive_scan_blocks() {
    // §III.2: after t1 = (3,2), FSL can still place t2 = (7,5) in
    // ⟨0,0⟩⟨6,4⟩; AS's first-fit choice ⟨0,0⟩⟨2,1⟩ fragments it.
    let mut f = Fsl::new(topo(10, 10)).unwrap();
    place_all(&mut f, &FIG2);
    try_alloc(&mut f, 3, 2, true).unwrap();
    assert_eq!(try_alloc(&mut f, 7, 5, true), Some(corners(0, 0, 6, 4)));
    let mut s = AdaptiveScan::new(topo(10, 10)).unwrap();
    place_all(&mut s, &FIG2);
    assert_eq!(try_alloc(&mut s, 3, 2, true), Some(corners(0, 0, 2, 1)));
    assert_eq!(try_alloc(&mut s, 7, 5, true), None);
}

#[test]
fn example_2_release_of_a3_rebuilds_the_list() {
    let mut f = Fsl::new(topo(10, 10)).unwrap();
    let g = place_all(&mut f, &FIG2);
    f.release(&g[2]).unwrap();
    assert_eq!(fsl_list(&f), ["⟨0,0⟩⟨6,9⟩", "⟨0,5⟩⟨9,7⟩"]);
}

#[test]
fn fig1_boundary_value_is_9() {
    let mut bl = BusyList::new(topo(7, 5)).unwrap();
    place_all(&mut bl, &[(4, 0, 6, 3)]);
    let s = GridBox::from_corners(&[0, 2], &[3, 4]).unwrap();
    assert_eq!(bl.boundary_value(&s), Some(9));
    // Mesh worked example 4 (docs/baselines.md#mesh-worked-examples): request (4,3) → (0,0,4,3) with BV 10.
    let r = try_alloc(&mut bl, 4, 3, true).unwrap();
    assert_eq!(r, xywh(0, 0, 4, 3));
    assert_eq!(Mesh::corners(7, 5, &[(4, 0, 6, 3)]).bv(r), 10);
}

#[test]
fn theorem_1_bound_fails_for_three_unit_submeshes() {
    // Three allocated 1×1 submeshes of a 7×7 mesh leave 13 > 4·3 dominant
    // free submeshes (docs/paper-errata.md (mesh part)).
    let busy = [(1, 1, 1, 1), (3, 5, 3, 5), (5, 3, 5, 3)];
    let mut f = Fsl::new(topo(7, 7)).unwrap();
    place_all(&mut f, &busy);
    assert_eq!(f.free.len(), 13);
    assert_eq!(Mesh::corners(7, 7, &busy).maximal_free().len(), 13);
}

// --------------------------------- docs/baselines.md#mesh-worked-examples

#[test]
fn b10_1_fig2_request_3_2() {
    let mut s = AdaptiveScan::new(topo(10, 10)).unwrap();
    place_all(&mut s, &FIG2);
    assert_eq!(try_alloc(&mut s, 3, 2, true), Some(xywh(0, 0, 3, 2)));
    let mut s = FirstFit::new(topo(10, 10)).unwrap();
    place_all(&mut s, &FIG2);
    assert_eq!(try_alloc(&mut s, 3, 2, true), Some(xywh(0, 0, 3, 2)));
    let mut s = FrameSliding::new(topo(10, 10), FsVariant::A).unwrap();
    place_all(&mut s, &FIG2);
    assert_eq!(try_alloc(&mut s, 3, 2, true), Some(xywh(0, 0, 3, 2)));
    let mut s = BestFit::new(topo(10, 10), BfScore::Neighbours).unwrap();
    place_all(&mut s, &FIG2);
    assert_eq!(try_alloc(&mut s, 3, 2, true), Some(xywh(0, 0, 3, 2)));
    let mut s = BusyList::new(topo(10, 10)).unwrap();
    place_all(&mut s, &FIG2);
    assert_eq!(try_alloc(&mut s, 3, 2, true), Some(xywh(8, 5, 2, 3)));
    // Two candidates share the top BV 7; the next best is 5.
    let (_, bv, all) = Mesh::corners(10, 10, &FIG2)
        .busy_list(3, 2, true, true)
        .unwrap();
    assert_eq!(bv, 7);
    assert_eq!(all[0], (xywh(8, 5, 2, 3), 7));
    assert_eq!(all[1], (xywh(4, 8, 3, 2), 7));
    assert_eq!(all[2].1, 5);
}

const B10_2: [(u32, u32, u32, u32); 3] = [(3, 2, 5, 4), (0, 3, 2, 3), (0, 1, 0, 1)];

#[test]
fn b10_2_six_by_six_request_2_2() {
    let mut ff = FirstFit::new(topo(6, 6)).unwrap();
    place_all(&mut ff, &B10_2);
    assert_eq!(try_alloc(&mut ff, 2, 2, true), Some(xywh(1, 0, 2, 2)));
    let mut asx = AdaptiveScan::new(topo(6, 6)).unwrap();
    place_all(&mut asx, &B10_2);
    assert_eq!(try_alloc(&mut asx, 2, 2, true), Some(xywh(1, 0, 2, 2)));
    let mut fs = FrameSliding::new(topo(6, 6), FsVariant::A).unwrap();
    place_all(&mut fs, &B10_2);
    assert_eq!(try_alloc(&mut fs, 2, 2, true), Some(xywh(2, 0, 2, 2)));
    let mut bf = BestFit::new(topo(6, 6), BfScore::Neighbours).unwrap();
    place_all(&mut bf, &B10_2);
    assert_eq!(try_alloc(&mut bf, 2, 2, true), Some(xywh(0, 4, 2, 2)));
    assert_eq!(
        Mesh::corners(6, 6, &B10_2).bf(2, 2, false),
        Some((xywh(0, 4, 2, 2), 2))
    );
    let mut bfc = BestFit::new(topo(6, 6), BfScore::Coverage).unwrap();
    place_all(&mut bfc, &B10_2);
    assert_eq!(try_alloc(&mut bfc, 2, 2, true), Some(xywh(4, 0, 2, 2)));
    let mut bl = BusyList::new(topo(6, 6)).unwrap();
    place_all(&mut bl, &B10_2);
    assert_eq!(try_alloc(&mut bl, 2, 2, true), Some(xywh(4, 0, 2, 2)));
    let (_, bv, all) = Mesh::corners(6, 6, &B10_2)
        .busy_list(2, 2, true, true)
        .unwrap();
    assert_eq!(bv, 6);
    assert_eq!(all[1], (xywh(0, 4, 2, 2), 6));
}

const B10_3: [(u32, u32, u32, u32); 3] = [(0, 0, 1, 2), (4, 0, 5, 1), (2, 4, 4, 5)];

fn b10_3_all(a: u32, b: u32) -> [Option<GridBox>; 5] {
    let mut fs = FrameSliding::new(topo(8, 8), FsVariant::A).unwrap();
    place_all(&mut fs, &B10_3);
    let mut ff = FirstFit::new(topo(8, 8)).unwrap();
    place_all(&mut ff, &B10_3);
    let mut asx = AdaptiveScan::new(topo(8, 8)).unwrap();
    place_all(&mut asx, &B10_3);
    let mut bf = BestFit::new(topo(8, 8), BfScore::Neighbours).unwrap();
    place_all(&mut bf, &B10_3);
    let mut bl = BusyList::new(topo(8, 8)).unwrap();
    place_all(&mut bl, &B10_3);
    [
        try_alloc(&mut fs, a, b, true),
        try_alloc(&mut ff, a, b, true),
        try_alloc(&mut asx, a, b, true),
        try_alloc(&mut bf, a, b, true),
        try_alloc(&mut bl, a, b, true),
    ]
}

#[test]
fn b10_3_eight_by_eight() {
    let m = Mesh::corners(8, 8, &B10_3);
    let [fs, ff, asx, bf, bl] = b10_3_all(3, 3);
    assert_eq!(fs, Some(xywh(5, 3, 3, 3)));
    assert_eq!((ff, asx, bf), (Some(xywh(5, 2, 3, 3)), ff, ff));
    assert_eq!(bl, Some(xywh(5, 5, 3, 3)));
    assert_eq!(m.bv(xywh(5, 5, 3, 3)), 7);
    let [fs, ff, asx, _, bl] = b10_3_all(4, 2);
    let r = Some(xywh(2, 2, 4, 2));
    assert_eq!((fs, ff, asx), (r, r, r));
    assert_eq!(bl, Some(xywh(2, 0, 2, 4)));
    assert_eq!(m.bv(xywh(2, 0, 2, 4)), 9);
    let [fs, ff, asx, bf, bl] = b10_3_all(2, 3);
    let r = Some(xywh(2, 0, 2, 3));
    assert_eq!((fs, ff, asx, bf, bl), (r, r, r, r, r));
    assert_eq!(m.bv(xywh(2, 0, 2, 3)), 7);
}

#[test]
fn b5_adaptive_scan_rotates_first_fit_does_not() {
    let col = [(2, 0, 2, 3)];
    let mut asx = AdaptiveScan::new(topo(4, 4)).unwrap();
    place_all(&mut asx, &col);
    assert_eq!(try_alloc(&mut asx, 4, 2, true), Some(xywh(0, 0, 2, 4)));
    let mut asn = AdaptiveScan::new(topo(4, 4)).unwrap();
    place_all(&mut asn, &col);
    assert_eq!(try_alloc(&mut asn, 4, 2, false), None);
    // FF and BF are incomplete: a 2×4 submesh is free, they miss it.
    let mut ff = FirstFit::new(topo(4, 4)).unwrap();
    place_all(&mut ff, &col);
    assert_eq!(try_alloc(&mut ff, 4, 2, true), None);
    let mut bf = BestFit::new(topo(4, 4), BfScore::Neighbours).unwrap();
    place_all(&mut bf, &col);
    assert_eq!(try_alloc(&mut bf, 4, 2, true), None);
    assert!(Mesh::corners(4, 4, &col).any_free(4, 2, true));
}

#[test]
fn b7_frame_sliding_variants() {
    let row = [(0, 0, 6, 0)];
    let mut a = FrameSliding::new(topo(8, 8), FsVariant::A).unwrap();
    place_all(&mut a, &row);
    assert_eq!(try_alloc(&mut a, 2, 2, false), Some(xywh(1, 2, 2, 2)));
    let mut b = FrameSliding::new(topo(8, 8), FsVariant::B).unwrap();
    place_all(&mut b, &row);
    assert_eq!(try_alloc(&mut b, 2, 2, false), None);
}

#[test]
fn frame_sliding_is_incomplete() {
    // 4×3 mesh, busy ⟨0,0⟩, ⟨1,0⟩, ⟨3,1⟩: a 2×2 is free at ⟨0,1⟩ but not
    // on FS's stride grid from x0 = 2.
    let busy = [(0, 0, 1, 0), (3, 1, 3, 1)];
    let mut fs = FrameSliding::new(topo(4, 3), FsVariant::A).unwrap();
    place_all(&mut fs, &busy);
    assert_eq!(try_alloc(&mut fs, 2, 2, true), None);
    let mut ff = FirstFit::new(topo(4, 3)).unwrap();
    place_all(&mut ff, &busy);
    assert_eq!(try_alloc(&mut ff, 2, 2, true), Some(xywh(0, 1, 2, 2)));
}

#[test]
fn b9_buddy_2d_vector() {
    let mut b = Buddy2d::new(topo(8, 8), BuddyOrder::RowMajor).unwrap();
    let r1 = b.allocate(&boxed(3, 3, false)).unwrap();
    let r2 = b.allocate(&boxed(2, 1, false)).unwrap();
    let r3 = b.allocate(&boxed(1, 1, false)).unwrap();
    assert_eq!(granted_rect(&r1), xywh(0, 0, 4, 4));
    assert_eq!(granted_rect(&r2), xywh(4, 0, 2, 2));
    assert_eq!(granted_rect(&r3), xywh(6, 0, 1, 1));
    assert!(b.allocate(&boxed(5, 2, false)).is_err());
    let list = |b: &Buddy2d, s: u32| -> Vec<(u32, u32)> {
        b.free_blocks(s)
            .iter()
            .map(|g| (g.base()[0], g.base()[1]))
            .collect()
    };
    assert_eq!(list(&b, 1), [(7, 0), (6, 1), (7, 1)]);
    assert_eq!(list(&b, 2), [(4, 2), (6, 2)]);
    assert_eq!(list(&b, 4), [(0, 4), (4, 4)]);
    b.release(&r2).unwrap();
    b.release(&r3).unwrap();
    assert_eq!(list(&b, 4), [(4, 0), (0, 4), (4, 4)]);
    assert!(list(&b, 1).is_empty() && list(&b, 2).is_empty());
    assert_eq!(r1.internal_fragmentation(), 7);
}

#[test]
fn buddy_address_order_parameter() {
    // Fill the lower-left 4×4 quadrant with 2×2 blocks, split ⟨4,0⟩ with a
    // fifth, release ⟨2,2⟩: side-2 list {⟨2,2⟩, ⟨6,0⟩, ⟨4,2⟩, ⟨6,2⟩}.
    let next = |order| {
        let mut b = Buddy2d::new(topo(8, 8), order).unwrap();
        let g: Vec<Grant> = (0..5)
            .map(|_| b.allocate(&boxed(2, 2, false)).unwrap())
            .collect();
        let firsts: Vec<GridBox> = g.iter().map(granted_rect).collect();
        assert_eq!(firsts[3], xywh(2, 2, 2, 2));
        assert_eq!(firsts[4], xywh(4, 0, 2, 2));
        b.release(&g[3]).unwrap();
        granted_rect(&b.allocate(&boxed(2, 2, false)).unwrap())
    };
    // Row-major: ⟨6,0⟩ has id 6 < 18; Z-order: ⟨2,2⟩ has index 12 < 20.
    assert_eq!(next(BuddyOrder::RowMajor), xywh(6, 0, 2, 2));
    assert_eq!(next(BuddyOrder::ZOrder), xywh(2, 2, 2, 2));
}

// ----------------------------------------------------------------- properties

/// A random sequence of operations: allocations (sides, rotate) and
/// releases (index into the live list).
fn ops(max_side: u32) -> impl Strategy<Value = Vec<(bool, u32, u32, bool, usize)>> {
    prop::collection::vec(
        (
            prop::bool::weighted(0.65),
            1..=max_side,
            1..=max_side,
            any::<bool>(),
            0usize..64,
        ),
        1..40,
    )
}

fn mesh_of(core: &MeshCore<'_>) -> Mesh {
    Mesh::new(
        core.width,
        core.height,
        &core.obstacles().collect::<Vec<_>>(),
    )
}

/// Drives `t` through `ops`, checking `check` after every step and that a
/// refusal happens only when `complete` allows it.
fn drive<S: Chooser<Record = Partition>>(
    t: &mut Managed<S>,
    ops: &[(bool, u32, u32, bool, usize)],
    complete: bool,
    mut check: impl FnMut(&mut Managed<S>),
) {
    let mut live: Vec<Grant> = Vec::new();
    for &(alloc, a, b, rot, k) in ops {
        if alloc || live.is_empty() {
            let m = mesh_of(&core_of(t));
            let before = m.any_free(a, b, rot);
            match t.allocate(&boxed(a, b, rot)) {
                Ok(g) => {
                    let r = granted_rect(&g);
                    assert!(m.free(
                        i64::from(r.lo(0)),
                        i64::from(r.lo(1)),
                        r.extent(0),
                        r.extent(1)
                    ));
                    live.push(g);
                }
                Err(_) => {
                    if complete {
                        assert!(!before, "refused {a}x{b} rot={rot} though one is free");
                    }
                }
            }
        } else {
            let g = live.swap_remove(k % live.len());
            t.release(&g).unwrap();
        }
        check(t);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The list always equals the brute-force set of maximal free
    /// rectangles, in Definition 1 order, and FSL never refuses a request
    /// that fits somewhere.
    #[test]
    fn fsl_list_is_the_set_of_maximal_free_rectangles(
        w in 1u32..=16, h in 1u32..=16, ops in ops(7),
        faults in prop::collection::vec((0u32..16, 0u32..16), 0..4),
    ) {
        let mut f = Fsl::new(topo(w, h)).unwrap();
        let mut g = Fsl::with_dealloc(topo(w, h), FslDealloc::Incremental).unwrap();
        for &(x, y) in &faults {
            if x < w && y < h {
                f.mark_faulty(x + w * y).unwrap();
                g.mark_faulty(x + w * y).unwrap();
            }
        }
        // Incremental release gives the same list as Fig. 8's rebuild (the
        // same grants follow, since the list decides the choice).
        let mut trace = Vec::new();
        drive(&mut g, &ops, true, |g| trace.push(g.free.clone()));
        let mut step = 0;
        drive(&mut f, &ops, true, |f| {
            assert_eq!(f.free, trace[step], "incremental list differs at step {step}");
            step += 1;
            let mut got = f.free.clone();
            let sorted = {
                let mut s = got.clone();
                s.sort_by_key(|r| (core::cmp::Reverse(r.volume()), r.extent(0).abs_diff(r.extent(1))));
                s
            };
            let areas = |v: &[GridBox]| v.iter().map(|r| (r.volume(), r.extent(0).abs_diff(r.extent(1)))).collect::<Vec<_>>();
            assert_eq!(areas(&got), areas(&sorted), "list not in Definition 1 order");
            got.sort_unstable();
            assert_eq!(got, mesh_of(&core_of(f)).maximal_free());
        });
    }

    /// Recognition completeness on random occupancies up to 32×32 for the
    /// three complete strategies, and agreement of AS with its literal scan.
    #[test]
    fn complete_strategies_grant_whenever_a_submesh_is_free(
        w in 1u32..=32, h in 1u32..=32, ops in ops(12),
    ) {
        let mut f = Fsl::new(topo(w, h)).unwrap();
        drive(&mut f, &ops, true, |_| {});
        let mut b = BusyList::new(topo(w, h)).unwrap();
        drive(&mut b, &ops, true, |_| {});
        let mut s = AdaptiveScan::new(topo(w, h)).unwrap();
        drive(&mut s, &ops, true, |_| {});
    }

    /// The fast searches choose exactly what the literal searches choose.
    #[test]
    fn fast_searches_equal_literal_oracles(
        w in 1u32..=16, h in 1u32..=16, ops in ops(8),
        a in 1u32..=8, b in 1u32..=8, rot in any::<bool>(),
    ) {
        // Build a random occupancy with First Fit, then ask every strategy
        // the same question on the same busy set.
        let mut ff = FirstFit::new(topo(w, h)).unwrap();
        drive(&mut ff, &ops, false, |_| {});
        let busy: Vec<GridBox> = core_of(&ff).obstacles().collect();
        let m = Mesh::new(w, h, &busy);
        let fix = |t: &mut dyn FnMut(GridBox)| for &r in &busy { t(r) };
        macro_rules! fresh {
            ($e:expr) => {{
                let mut s = $e;
                fix(&mut |r| { place(&mut s, r); });
                s
            }};
        }
        let mut s = fresh!(FirstFit::new(topo(w, h)).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.ff(a, b));
        let mut s = fresh!(AdaptiveScan::new(topo(w, h)).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.adaptive_scan(a, b, rot));
        let mut s = fresh!(BestFit::new(topo(w, h), BfScore::Neighbours).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.bf(a, b, false).map(|t| t.0));
        let mut s = fresh!(BestFit::new(topo(w, h), BfScore::Coverage).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.bf(a, b, true).map(|t| t.0));
        let mut s = fresh!(FrameSliding::new(topo(w, h), FsVariant::A).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.fs(a, b, false));
        let mut s = fresh!(FrameSliding::new(topo(w, h), FsVariant::B).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.fs(a, b, true));
        let mut s = fresh!(BusyList::new(topo(w, h)).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.busy_list(a, b, rot, true).map(|t| t.0));
        let mut s = fresh!(BusyList::with_candidates(topo(w, h), BlCandidates::Aligned).unwrap());
        prop_assert_eq!(try_alloc(&mut s, a, b, rot), m.busy_list(a, b, rot, false).map(|t| t.0));
    }
}

#[test]
fn busy_list_aligned_candidates_are_incomplete() {
    // Found by the recognition proptest: a free 9×5 at ⟨2,2⟩ touches
    // ⟨0,0⟩⟨1,5⟩ on the left and ⟨10,0⟩⟨14,1⟩ below without being aligned
    // with a corner of either, and no corner-aligned placement is free.
    let busy = [
        (12, 10, 19, 20),
        (15, 0, 18, 3),
        (2, 0, 2, 0),
        (10, 0, 14, 1),
        (19, 0, 19, 8),
        (0, 11, 8, 20),
        (0, 0, 1, 5),
        (13, 4, 18, 9),
        (0, 7, 9, 10),
    ];
    let m = Mesh::corners(20, 21, &busy);
    assert_eq!(m.ff(9, 5), Some(xywh(2, 2, 9, 5)));
    assert_eq!(m.busy_list(9, 5, false, false), None);
    let mut aligned = BusyList::with_candidates(topo(20, 21), BlCandidates::Aligned).unwrap();
    place_all(&mut aligned, &busy);
    assert_eq!(try_alloc(&mut aligned, 9, 5, false), None);
    let mut complete = BusyList::new(topo(20, 21)).unwrap();
    place_all(&mut complete, &busy);
    assert_eq!(
        try_alloc(&mut complete, 9, 5, false),
        Some(xywh(2, 2, 9, 5))
    );
}

// ---------------------------------------------------------------- 3-D FSL

/// Brute-force maximal free boxes of a 3-D mesh (3-D prefix sums).
fn maximal_free_3d(sides: [u32; 3], busy: &[GridBox]) -> Vec<GridBox> {
    let [w, h, d] = sides.map(|s| s as usize);
    let mut cell = vec![0u32; w * h * d];
    for c in busy {
        for z in c.lo(2)..c.lo(2) + c.extent(2) {
            for y in c.lo(1)..c.lo(1) + c.extent(1) {
                for x in c.lo(0)..c.lo(0) + c.extent(0) {
                    cell[x as usize + w * (y as usize + h * z as usize)] = 1;
                }
            }
        }
    }
    // p[(x, y, z)] = busy cells in [0, x) × [0, y) × [0, z).
    let pi = |x: usize, y: usize, z: usize| x + (w + 1) * (y + (h + 1) * z);
    let mut p = vec![0i64; (w + 1) * (h + 1) * (d + 1)];
    for z in 1..=d {
        for y in 1..=h {
            for x in 1..=w {
                p[pi(x, y, z)] = i64::from(cell[(x - 1) + w * ((y - 1) + h * (z - 1))])
                    + p[pi(x - 1, y, z)]
                    + p[pi(x, y - 1, z)]
                    + p[pi(x, y, z - 1)]
                    - p[pi(x - 1, y - 1, z)]
                    - p[pi(x - 1, y, z - 1)]
                    - p[pi(x, y - 1, z - 1)]
                    + p[pi(x - 1, y - 1, z - 1)];
            }
        }
    }
    let free = |lo: [i64; 3], ext: [i64; 3]| -> bool {
        if (0..3).any(|k| lo[k] < 0 || lo[k] + ext[k] > i64::from(sides[k])) {
            return false;
        }
        let (x0, y0, z0) = (lo[0] as usize, lo[1] as usize, lo[2] as usize);
        let (x1, y1, z1) = (
            x0 + ext[0] as usize,
            y0 + ext[1] as usize,
            z0 + ext[2] as usize,
        );
        p[pi(x1, y1, z1)] - p[pi(x0, y1, z1)] - p[pi(x1, y0, z1)] - p[pi(x1, y1, z0)]
            + p[pi(x0, y0, z1)]
            + p[pi(x0, y1, z0)]
            + p[pi(x1, y0, z0)]
            - p[pi(x0, y0, z0)]
            == 0
    };
    let mut out = Vec::new();
    for z in 0..d as i64 {
        for y in 0..h as i64 {
            for x in 0..w as i64 {
                for ez in 1..=d as i64 - z {
                    for ey in 1..=h as i64 - y {
                        for ex in 1..=w as i64 - x {
                            let (lo, ext) = ([x, y, z], [ex, ey, ez]);
                            if !free(lo, ext) {
                                continue;
                            }
                            let grows = (0..3).any(|k| {
                                let mut l2 = lo;
                                let mut e2 = ext;
                                e2[k] += 1;
                                let up = free(l2, e2);
                                l2[k] -= 1;
                                up || free(l2, e2)
                            });
                            if !grows {
                                out.push(cuboid(lo.map(|v| v as u32), ext.map(|v| v as u32)));
                            }
                        }
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out
}

fn any_free_3d(sides: [u32; 3], busy: &[GridBox], req: [u32; 3], rotate: bool) -> bool {
    let mut ors = Vec::new();
    fsl3d::orientations3(req, rotate, &mut ors);
    ors.iter().any(|o| {
        (0..3).all(|k| o[k] <= sides[k])
            && (0..=sides[2] - o[2]).any(|z| {
                (0..=sides[1] - o[1]).any(|y| {
                    (0..=sides[0] - o[0]).any(|x| {
                        let c = cuboid([x, y, z], *o);
                        !busy.iter().any(|b| b.overlaps(&c))
                    })
                })
            })
    })
}

#[test]
fn fsl_3d_rf_and_first_grant() {
    let s = cuboid([0, 0, 0], [4, 4, 4]);
    // A 2×4×4 slab at x = 1..2 leaves 1×4×4 and 1×4×4: rf 16.
    assert_eq!(rf(&cuboid([1, 0, 0], [2, 4, 4]), &s), 16);
    // A corner 1×1×1 leaves a 3×4×4 slab: rf 48.
    assert_eq!(rf(&cuboid([0, 0, 0], [1, 1, 1]), &s), 48);
    let mut f = Fsl3d::new("mesh:4x4x4".parse().unwrap()).unwrap();
    let g = f.allocate(&Request::boxed(&[1, 1, 1]).unwrap()).unwrap();
    assert_eq!(
        g.partition(),
        &Partition::Box(GridBox::new(&[0, 0, 0], &[1, 1, 1]).unwrap())
    );
    // Three maximal 3×4×4, 4×3×4, 4×4×3 slabs remain.
    assert_eq!(f.free.len(), 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The 3-D list is the set of maximal free boxes after every step, and
    /// a request is refused only if no allowed orientation fits anywhere.
    #[test]
    fn fsl_3d_list_is_the_set_of_maximal_free_boxes(
        sides in [1u32..=4, 1u32..=4, 1u32..=4],
        ops in prop::collection::vec(
            (prop::bool::weighted(0.65), [1u32..=3, 1u32..=3, 1u32..=3], any::<bool>(), 0usize..64),
            1..30,
        ),
        fault in prop::option::of(0u32..64),
    ) {
        let t: Topology = format!("mesh:{}x{}x{}", sides[0], sides[1], sides[2]).parse().unwrap();
        let mut f = Fsl3d::new(t).unwrap();
        if let Some(n) = fault {
            let _ = f.mark_faulty(n);
        }
        let mut live = Vec::new();
        for (alloc, req, rot, k) in ops {
            if alloc || live.is_empty() {
                let before = any_free_3d(sides, &f.obstacles(), req, rot);
                match f.allocate(&Request::Box { sides: partalloc_topology::Coords::new(&req).unwrap(), rotate: rot }) {
                    Ok(g) => live.push(g),
                    Err(_) => prop_assert!(!before, "refused {req:?} rot={rot} though one fits"),
                }
            } else {
                let g = live.swap_remove(k % live.len());
                f.release(&g).unwrap();
            }
            let mut got = f.free.clone();
            got.sort_unstable();
            prop_assert_eq!(got, maximal_free_3d(sides, &f.obstacles()));
        }
    }

    /// On a 2-D mesh the 3-D strategy makes exactly the 2-D FSL's choices.
    #[test]
    fn fsl_3d_on_a_flat_mesh_matches_fsl(w in 1u32..=12, h in 1u32..=12, ops in ops(6)) {
        let mut f2 = Fsl::new(topo(w, h)).unwrap();
        let mut f3 = Fsl3d::new(topo(w, h)).unwrap();
        let mut live: Vec<(Grant, Grant)> = Vec::new();
        for &(alloc, a, b, rot, k) in &ops {
            if alloc || live.is_empty() {
                let q = boxed(a, b, rot);
                match (f2.allocate(&q), f3.allocate(&q)) {
                    (Ok(g2), Ok(g3)) => {
                        prop_assert_eq!(g2.partition(), g3.partition());
                        live.push((g2, g3));
                    }
                    (Err(_), Err(_)) => {}
                    (r2, r3) => prop_assert!(false, "2-D {r2:?} vs 3-D {r3:?}"),
                }
            } else {
                let (g2, g3) = live.swap_remove(k % live.len());
                f2.release(&g2).unwrap();
                f3.release(&g3).unwrap();
            }
            prop_assert_eq!(f2.free_submeshes(), f3.free_submeshes());
        }
    }
}

/// fsl-3d tries orientations in the order of its original fixed
/// permutation table (identity, swap 0-1, swap 1-2, rotations, reversal),
/// repeats dropped; the 2-D strategies in a×b, b×a order.
#[test]
fn orientation_orders_are_the_specified_ones() {
    const PERMS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [1, 0, 2],
        [0, 2, 1],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut got = Vec::new();
    for a in 1..=3 {
        for b in 1..=3 {
            for c in 1..=3 {
                let s = [a, b, c];
                let mut want: Vec<[u32; 3]> = Vec::new();
                for p in PERMS {
                    let o = [s[p[0]], s[p[1]], s[p[2]]];
                    if !want.contains(&o) {
                        want.push(o);
                    }
                }
                fsl3d::orientations3(s, true, &mut got);
                assert_eq!(got, want, "{s:?}");
                fsl3d::orientations3(s, false, &mut got);
                assert_eq!(got, [s]);
            }
        }
        let (or, n) = orientations(a, 2, true);
        if a == 2 {
            assert_eq!(&or[..n], &[(2, 2)]);
        } else {
            assert_eq!(&or[..n], &[(a, 2), (2, a)]);
        }
        assert_eq!(orientations(a, 2, false).1, 1);
    }
}

// ------------------------------------------------- fast and literal searches

/// A small deterministic generator (xorshift64*), so the equivalence runs
/// below replay exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Drives a fast and a literal instance of `name` in lockstep through
/// random allocations, releases, faults and repairs on meshes of 1 to 130
/// columns (one to three row words, ragged and whole), asserting after
/// every step that both granted the same box or refused alike and that
/// `can_allocate` agrees with both. Returns the number of states checked.
fn fast_matches_literal(name: &str, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut states = 0;
    for _ in 0..40 {
        let width = match rng.below(4) {
            0 => 1 + rng.below(12),
            1 => 60 + rng.below(10),
            2 => 126 + rng.below(5),
            _ => 1 + rng.below(40),
        } as u32;
        let height = 1 + rng.below(30) as u32;
        let machine = topo(width, height);
        let mut fast = crate::registry::build(name, &machine).unwrap();
        let literal_name = if name.contains('[') {
            name.replace(']', ",search=literal]")
        } else {
            format!("{name}[search=literal]")
        };
        let mut literal = crate::registry::build(&literal_name, &machine).unwrap();
        assert_eq!(literal.name(), literal_name);
        assert_eq!(fast.name(), name);
        let mut live: Vec<(Grant, Grant)> = Vec::new();
        let nodes = u64::from(width * height);
        for _ in 0..30 {
            // Mostly small requests so the mesh fills up; some up to the
            // whole side, some rotated, a few too large.
            let side = |rng: &mut Rng, s: u32| {
                let s = u64::from(s);
                (1 + if rng.below(3) == 0 {
                    rng.below(s + 1)
                } else {
                    rng.below(s.div_ceil(3))
                }) as u32
            };
            let (a, b) = (side(&mut rng, width), side(&mut rng, height));
            let request = boxed(a, b, rng.below(2) == 0);
            let can_fast = fast.can_allocate(&request).map_err(|e| e.to_string());
            let can_literal = literal.can_allocate(&request).map_err(|e| e.to_string());
            assert_eq!(can_fast, can_literal, "{name} can_allocate {a}x{b}");
            match rng.below(10) {
                0..6 => {
                    let f = fast.allocate(&request);
                    let l = literal.allocate(&request);
                    assert_eq!(
                        f.as_ref()
                            .map(|g| g.partition().clone())
                            .map_err(|e| e.to_string()),
                        l.as_ref()
                            .map(|g| g.partition().clone())
                            .map_err(|e| e.to_string()),
                        "{name} on {width}x{height}: request {a}x{b}"
                    );
                    match &can_fast {
                        Ok(can) => assert_eq!(*can, f.is_ok(), "{name}: can_allocate disagrees"),
                        Err(_) => assert!(f.is_err(), "{name}: granted an invalid request"),
                    }
                    if let (Ok(f), Ok(l)) = (f, l) {
                        live.push((f, l));
                    }
                }
                6..9 if !live.is_empty() => {
                    let (f, l) = live.swap_remove(rng.below(live.len() as u64) as usize);
                    fast.release(&f).unwrap();
                    literal.release(&l).unwrap();
                }
                _ => {
                    let node = rng.below(nodes) as u32;
                    let (f, l) = if rng.below(2) == 0 {
                        (fast.mark_faulty(node), literal.mark_faulty(node))
                    } else {
                        (fast.repair(node), literal.repair(node))
                    };
                    assert_eq!(f.is_ok(), l.is_ok());
                }
            }
            states += 1;
        }
    }
    states
}

#[test]
fn fast_and_literal_searches_choose_the_same_boxes() {
    for (i, name) in [
        "first-fit",
        "adaptive-scan",
        "best-fit",
        "best-fit[score=coverage]",
        "frame-sliding",
        "frame-sliding[variant=b]",
        "busy-list",
        "busy-list[candidates=aligned]",
    ]
    .into_iter()
    .enumerate()
    {
        let states = fast_matches_literal(name, 0x9E37_79B9_7F4A_7C15 ^ i as u64);
        assert!(states >= 1000, "{name}: only {states} states");
    }
}
