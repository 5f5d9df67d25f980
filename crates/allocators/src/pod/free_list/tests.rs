use partalloc_topology::pod::{LinkKind, Pod, PodSlice, ShapeCatalogue, Wiring};
use partalloc_topology::{Coords, NodeId, NodeSet};
use proptest::prelude::*;

use super::super::{PodAllocator, all_chips, orientations};
use crate::conformance::{Step, check_script_with};
use crate::strategy::Managed;
use crate::submesh_list::list_order;
use crate::{AllocError, Allocator, Grant, Request};

fn pod(sides: &[u32], shapes: &[&[u32]], rotate: bool) -> Pod {
    Pod::new(
        sides,
        None,
        Wiring::Static,
        ShapeCatalogue::new(shapes).unwrap(),
        rotate,
    )
    .unwrap()
}

/// The pods of the brute-force checks: 2-D and 3-D, with and without
/// rotation.
fn small_pods() -> Vec<Pod> {
    vec![
        pod(
            &[4, 6],
            &[&[1, 1], &[2, 1], &[2, 2], &[3, 2], &[4, 3], &[2, 6]],
            false,
        ),
        pod(
            &[4, 6],
            &[&[1, 1], &[2, 1], &[2, 2], &[3, 2], &[4, 3], &[2, 6]],
            true,
        ),
        pod(
            &[5, 5],
            &[&[1, 1], &[2, 1], &[2, 2], &[3, 2], &[5, 2], &[3, 3]],
            true,
        ),
        pod(
            &[5, 5],
            &[&[1, 1], &[2, 1], &[2, 2], &[3, 2], &[5, 2], &[3, 3]],
            false,
        ),
        pod(
            &[4, 4, 2],
            &[
                &[1, 1, 1],
                &[2, 1, 1],
                &[2, 2, 1],
                &[2, 2, 2],
                &[4, 2, 1],
                &[4, 4, 1],
            ],
            false,
        ),
        pod(
            &[4, 4, 2],
            &[&[1, 1, 1], &[2, 1, 1], &[2, 2, 1], &[4, 2, 1], &[4, 4, 1]],
            true,
        ),
    ]
}

type Boxes = Vec<(Vec<u32>, Vec<u32>)>;

fn list(a: &Managed<PodAllocator>) -> Boxes {
    a.free_boxes()
        .iter()
        .map(|s| {
            (
                s.base().as_slice().to_vec(),
                s.extents().as_slice().to_vec(),
            )
        })
        .collect()
}

fn blocked(a: &Managed<PodAllocator>) -> NodeSet {
    let mut b = a.busy_nodes();
    b.union_with(&a.faulty_nodes());
    b
}

/// Every cyclic box of the torus, whole rings once (`lo == 0`).
fn all_boxes(k: &[u32]) -> Vec<PodSlice> {
    let per: Vec<Vec<(u32, u32)>> = k
        .iter()
        .map(|&s| {
            let mut v = vec![(0, s)];
            for lo in 0..s {
                for len in 1..s {
                    v.push((lo, len));
                }
            }
            v
        })
        .collect();
    let total: usize = per.iter().map(Vec::len).product();
    (0..total)
        .map(|mut i| {
            let (mut lo, mut len) = (vec![0; k.len()], vec![0; k.len()]);
            for d in 0..k.len() {
                (lo[d], len[d]) = per[d][i % per[d].len()];
                i /= per[d].len();
            }
            PodSlice::on_torus(k, &lo, &len).unwrap()
        })
        .collect()
}

/// The maximal free cyclic boxes by brute force, sorted.
fn maximal_free(k: &[u32], down: &NodeSet) -> Boxes {
    let free: Vec<PodSlice> = all_boxes(k)
        .into_iter()
        .filter(|b| b.all_chips(k, |c| !down.contains(c)))
        .collect();
    let mut out: Boxes = free
        .iter()
        .filter(|b| !free.iter().any(|o| o != *b && o.contains_slice(k, b)))
        .map(|b| (b.base().to_vec(), b.extents().to_vec()))
        .collect();
    out.sort();
    out
}

/// Whether some orientation of `shape` has a free placement, any base,
/// across the edge allowed.
fn placeable(p: &Pod, down: &NodeSet, shape: &Coords, rotate: bool) -> bool {
    let k = p.grid().sides().as_slice();
    (0..p.grid().num_nodes() as NodeId).any(|id| {
        let base = p.grid().coords_of(id).unwrap();
        orientations(shape, rotate, k)
            .any(|o| all_chips(k, base.as_slice(), o.as_slice(), |c| !down.contains(c)))
    })
}

fn chips_of(a: &Managed<PodAllocator>, g: &Grant) -> Vec<NodeId> {
    g.partition().node_list(a.topology()).unwrap()
}

fn strings(a: &Managed<PodAllocator>) -> Vec<String> {
    a.free_boxes().iter().map(ToString::to_string).collect()
}

#[test]
fn a_slice_across_the_edge_is_chosen_at_the_corner_with_the_lowest_base() {
    let mut a = PodAllocator::free_list(pod(&[4, 4], &[&[1, 1], &[2, 2]], false));
    // Columns 1 and 2 down: the free chips form one box, columns 3 and 0,
    // a ring in dimension 1.
    for y in 0..4 {
        a.mark_faulty(y * 4 + 1).unwrap();
        a.mark_faulty(y * 4 + 2).unwrap();
    }
    assert_eq!(strings(&a), ["2x4 at 3,0"]);
    // Corners: x = 3 (both ends of the arc 3,0), y = 0 or 2 (the ring cut
    // at the seam); every reservation factor is 4 against the box and 8
    // against the pod, so the lowest base, (3,0), wins.
    let g = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &g), vec![0, 3, 4, 7]);
    assert_eq!(a.layout(&g).unwrap().links, vec![LinkKind::Line; 2]);
    assert_eq!(strings(&a), ["2x2 at 3,2"]);
    let h = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &h), vec![8, 11, 12, 15]);
    assert!(a.free_boxes().is_empty());
    assert!(matches!(
        a.allocate(&Request::boxed(&[1, 1]).unwrap()),
        Err(AllocError::NoRoom { .. })
    ));
    a.release(&g).unwrap();
    assert_eq!(strings(&a), ["2x2 at 3,0"]);
}

#[test]
fn a_full_ring_dimension_gives_a_ring_link_and_leaves_the_rest_whole() {
    let mut a = PodAllocator::free_list(pod(&[4, 6], &[&[1, 1], &[2, 6], &[1, 2]], false));
    // On the empty pod the corners of the 2x6 are x = 0 or 2, y = 0; both
    // leave a 2x6 ring beside (rf 12 against the pod): the lower base wins.
    let g = a.allocate(&Request::boxed(&[2, 6]).unwrap()).unwrap();
    assert_eq!(
        a.layout(&g).unwrap().links,
        vec![LinkKind::Line, LinkKind::Ring]
    );
    assert_eq!(chips_of(&a, &g).len(), 12);
    assert!(chips_of(&a, &g).iter().all(|c| c % 4 < 2));
    assert_eq!(strings(&a), ["2x6 at 2,0"]);
    // A 1x2 in the 2x6 ring: corners x = 2 or 3, y = 0 or 4; each leaves
    // a 2x4 slab of the ring (rf 8 > the 1x6 column beside, 6), so the
    // lowest base, (2,0), wins, and the list keeps the rest of the ring
    // across the edge.
    let h = a.allocate(&Request::boxed(&[1, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &h), vec![2, 6]);
    assert_eq!(strings(&a), ["2x4 at 2,2", "1x6 at 3,0"]);
    // The other 2x6 ring is gone, so a second 2x6 does not fit.
    assert!(matches!(
        a.allocate(&Request::boxed(&[2, 6]).unwrap()),
        Err(AllocError::NoRoom { .. })
    ));
    a.release(&h).unwrap();
    assert_eq!(strings(&a), ["2x6 at 2,0"]);
    let i = a.allocate(&Request::boxed(&[2, 6]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &i).iter().filter(|c| *c % 4 >= 2).count(), 12);
    assert_eq!(a.free_nodes(), 0);
}

#[test]
fn the_list_is_kept_in_definition_1_order() {
    let p = pod(&[5, 5], &[&[1, 1], &[2, 1]], true);
    let mut a = PodAllocator::free_list(p);
    for c in [0, 7, 13, 21] {
        a.mark_faulty(c).unwrap();
    }
    let _ = a.allocate(&Request::boxed(&[2, 1]).unwrap()).unwrap();
    let k = [5u32, 5];
    let boxes = a.free_boxes();
    assert!(boxes.len() > 2);
    assert!(
        boxes
            .windows(2)
            .all(|w| list_order(&k, &w[0], &w[1]).is_lt())
    );
}

#[test]
fn the_strategy_is_listed_for_pods() {
    let t: partalloc_topology::Topology = "pod:tpu-v5e".parse().unwrap();
    let a = crate::registry::build("pod-free-list", &t).unwrap();
    assert_eq!(a.name(), "pod-free-list");
}

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    Allocate(usize),
    Release(usize),
    Fault(u32),
    Repair(u32),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            4 => (0usize..6).prop_map(Op::Allocate),
            2 => (0usize..8).prop_map(Op::Release),
            1 => (0u32..32).prop_map(Op::Fault),
            1 => (0u32..32).prop_map(Op::Repair),
        ],
        1..24,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// (1) the list equals the brute-force maximal free cyclic boxes after
    /// every step; (2) a request is granted exactly when a free placement
    /// exists, on free chips; (5) releasing a grant at once restores the
    /// list exactly.
    #[test]
    fn the_list_is_the_set_of_maximal_free_boxes_and_recognition_is_complete(
        which in 0usize..6,
        steps in ops(),
    ) {
        let p = small_pods()[which].clone();
        let k = *p.grid().sides();
        let k = k.as_slice();
        let n = p.grid().num_nodes() as u32;
        let shapes = p.catalogue().shapes().to_vec();
        let mut a = PodAllocator::free_list(p.clone());
        let mut live: Vec<Grant> = Vec::new();
        for op in steps {
            match op {
                Op::Allocate(i) => {
                    let shape = shapes[i % shapes.len()];
                    let req = Request::boxed(shape.as_slice()).unwrap();
                    let down = blocked(&a);
                    let exists = placeable(&p, &down, &shape, p.rotates());
                    let before = list(&a);
                    match a.allocate(&req) {
                        Ok(g) => {
                            prop_assert!(exists);
                            let chips = chips_of(&a, &g);
                            prop_assert_eq!(chips.len() as u64, shape.product());
                            prop_assert!(chips.iter().all(|&c| !down.contains(c)));
                            // (5): release restores the list; the same
                            // request then gets the same slice.
                            a.release(&g).unwrap();
                            prop_assert_eq!(&list(&a), &before);
                            let again = a.allocate(&req).unwrap();
                            prop_assert_eq!(chips_of(&a, &again), chips);
                            live.push(again);
                        }
                        Err(AllocError::NoRoom { .. }) => prop_assert!(!exists, "refused {:?}", shape),
                        Err(e) => prop_assert!(false, "{e}"),
                    }
                }
                Op::Release(i) => {
                    if !live.is_empty() {
                        let g = live.remove(i % live.len());
                        a.release(&g).unwrap();
                    }
                }
                Op::Fault(c) => {
                    let _ = a.mark_faulty(c % n);
                }
                Op::Repair(c) => {
                    a.repair(c % n).unwrap();
                }
            }
            let mut got = list(&a);
            got.sort();
            prop_assert_eq!(got, maximal_free(k, &blocked(&a)));
        }
    }

    /// (4) the allocator contract of the crate.
    #[test]
    fn the_free_list_keeps_the_allocator_contract(steps in prop::collection::vec(
        prop_oneof![
            (0usize..5).prop_map(|i| Step::Allocate(Request::boxed([[1u32, 1], [2, 2], [4, 2], [4, 4], [8, 4]][i].as_slice()).unwrap())),
            (1u32..12).prop_map(|n| Step::Allocate(Request::nodes(n))),
            (0usize..4).prop_map(Step::Release),
            (0usize..4).prop_map(Step::ReleaseTwice),
            (0u32..34).prop_map(Step::MarkFaulty),
            (0u32..34).prop_map(Step::Repair),
        ], 0..24), rotate in any::<bool>()) {
        let p = pod(&[8, 4], &[&[1, 1], &[2, 2], &[4, 2], &[4, 4], &[8, 4]], rotate);
        let build = move || -> Box<dyn Allocator> { Box::new(PodAllocator::free_list(p.clone())) };
        let mut a = build();
        let fresh = move || Ok(build());
        check_script_with(a.as_mut(), &fresh, &steps).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
}

#[test]
fn elimination_prefers_the_small_box_that_spares_the_largest_one() {
    // Columns 3 and 5 of a 6x4 pod down: free boxes 3x4 at 0,0 and 1x4 at
    // 4,0, both rings in dimension 1.
    let mut a = PodAllocator::free_list(pod(&[6, 4], &[&[1, 1], &[1, 2], &[3, 4]], false));
    for y in 0..4 {
        a.mark_faulty(y * 6 + 3).unwrap();
        a.mark_faulty(y * 6 + 5).unwrap();
    }
    assert_eq!(strings(&a), ["3x4 at 0,0", "1x4 at 4,0"]);
    // Against the 3x4 (listed first) only the candidates in the 1x4 keep
    // its whole size (12); of those, (4,0) has the lower base. First fit
    // would take (0,0) and cut the 3x4.
    let g = a.allocate(&Request::boxed(&[1, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &g), vec![4, 10]);
    assert_eq!(strings(&a), ["3x4 at 0,0", "1x2 at 4,2"]);
    let h = a.allocate(&Request::boxed(&[1, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &h), vec![16, 22]);
    assert_eq!(strings(&a), ["3x4 at 0,0"]);
    let i = a.allocate(&Request::boxed(&[3, 4]).unwrap()).unwrap();
    assert_eq!(
        a.layout(&i).unwrap().links,
        vec![LinkKind::Line, LinkKind::Ring]
    );
    let mut ff = PodAllocator::first_fit(pod(&[6, 4], &[&[1, 1], &[1, 2], &[3, 4]], false));
    for y in 0..4 {
        ff.mark_faulty(y * 6 + 3).unwrap();
        ff.mark_faulty(y * 6 + 5).unwrap();
    }
    let f = ff.allocate(&Request::boxed(&[1, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&ff, &f), vec![0, 6]);
}
