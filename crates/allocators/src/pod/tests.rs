use partalloc_topology::pod::{LinkKind, Pod, ShapeCatalogue, Wiring};
use partalloc_topology::{Coords, NodeId, NodeSet};
use proptest::prelude::*;

use super::box_counts::CountMethod;
use super::{PodAllocator, all_chips, orientations, pod_measures, stranded_chips};
use crate::conformance::{Step, check_script_with};
use crate::strategy::Managed;
use crate::{AllocError, Allocator, Request};

fn pod(
    sides: &[u32],
    cube: Option<&[u32]>,
    wiring: Wiring,
    shapes: &[&[u32]],
    rotate: bool,
) -> Pod {
    Pod::new(
        sides,
        cube,
        wiring,
        ShapeCatalogue::new(shapes).unwrap(),
        rotate,
    )
    .unwrap()
}

fn chips_of(a: &Managed<PodAllocator>, g: &crate::Grant) -> Vec<NodeId> {
    g.partition().node_list(a.topology()).unwrap()
}

#[test]
fn a_two_by_two_across_both_edges_is_granted_when_only_the_corners_are_free() {
    let p = pod(&[4, 4], None, Wiring::Static, &[&[1, 1], &[2, 2]], false);
    let mut a = PodAllocator::first_fit(p);
    // Only the four corners (0,0)=0, (3,0)=3, (0,3)=12, (3,3)=15 stay up.
    for n in 0..16 {
        if ![0, 3, 12, 15].contains(&n) {
            a.mark_faulty(n).unwrap();
        }
    }
    let g = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
    // The slice is based at (3,3) and wraps in both dimensions.
    assert_eq!(chips_of(&a, &g), vec![0, 3, 12, 15]);
    let crate::Partition::Boxes(pieces) = g.partition() else {
        panic!("a pod grant is a list of boxes");
    };
    let bases: Vec<Vec<u32>> = pieces
        .iter()
        .map(|b| b.base().as_slice().to_vec())
        .collect();
    assert_eq!(bases, vec![vec![3, 3], vec![0, 3], vec![3, 0], vec![0, 0]]);
    assert_eq!(a.layout(&g).unwrap().links, vec![LinkKind::Line; 2]);
    // With corner 0 down as well, no 2x2 box is free, across the edge or not.
    a.release(&g).unwrap();
    a.mark_faulty(0).unwrap();
    assert!(matches!(
        a.allocate(&Request::boxed(&[2, 2]).unwrap()),
        Err(AllocError::NoRoom { .. })
    ));
}

#[test]
fn a_slice_wraps_only_when_the_box_across_the_edge_is_free() {
    let p = pod(&[4, 2], None, Wiring::Static, &[&[2, 2], &[4, 2]], false);
    let mut a = PodAllocator::first_fit(p);
    // Columns 1 and 2 down: the only free 2x2 is columns 3 and 0.
    for n in [1, 2, 5, 6] {
        a.mark_faulty(n).unwrap();
    }
    let g = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
    assert_eq!(chips_of(&a, &g), vec![0, 3, 4, 7]);
    // Side 2 of 2 in dimension 1: a ring there; 2 of 4 in dimension 0: a line.
    assert_eq!(
        a.layout(&g).unwrap().links,
        vec![LinkKind::Line, LinkKind::Ring]
    );
}

#[test]
fn ring_or_line_follows_the_extent_per_dimension() {
    let p = pod(
        &[4, 4, 2],
        None,
        Wiring::Static,
        &[&[4, 2, 1], &[1, 4, 1]],
        false,
    );
    let mut a = PodAllocator::first_fit(p);
    let g = a.allocate(&Request::boxed(&[4, 2, 1]).unwrap()).unwrap();
    assert_eq!(
        a.layout(&g).unwrap().links,
        vec![LinkKind::Ring, LinkKind::Line, LinkKind::Line]
    );
    let h = a.allocate(&Request::boxed(&[1, 4, 1]).unwrap()).unwrap();
    assert_eq!(
        a.layout(&h).unwrap().links,
        vec![LinkKind::Line, LinkKind::Ring, LinkKind::Line]
    );
}

#[test]
fn shapes_outside_the_catalogue_are_refused_with_the_nearest_ones() {
    let mut a = PodAllocator::first_fit(Pod::preset("tpu-v5e").unwrap());
    let e = a.allocate(&Request::boxed(&[3, 3]).unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid request 3x3 box: shape 3x3 is not in the catalogue; nearest allowed shapes: 2x4, 2x2, 4x4"
    );
    assert_eq!(a.free_nodes(), 256);
    // v5e rotates: 4x2 is the catalogue's 2x4.
    let g = a.allocate(&Request::boxed(&[4, 2]).unwrap()).unwrap();
    assert_eq!(g.granted_nodes(), 8);
    // A count rounds up to the smallest catalogue shape holding it.
    let g = a.allocate(&Request::nodes(9)).unwrap();
    assert_eq!(a.layout(&g).unwrap().shape.as_slice(), &[4, 4]);
    assert_eq!((g.requested_nodes(), g.granted_nodes()), (9, 16));
}

#[test]
fn a_faulty_cube_hosts_sub_cube_slices_but_joins_no_whole_cube_slice() {
    let p = pod(
        &[8, 4],
        Some(&[4, 4]),
        Wiring::Reconfigurable,
        &[&[2, 2], &[4, 4], &[8, 4]],
        false,
    );
    let mut a = PodAllocator::reconfigurable(p);
    a.mark_faulty(0).unwrap(); // chip (0,0), in cube 0
    let whole = a.allocate(&Request::boxed(&[4, 4]).unwrap()).unwrap();
    assert_eq!(a.layout(&whole).unwrap().cubes, vec![1]);
    assert!(matches!(
        a.allocate(&Request::boxed(&[8, 4]).unwrap()),
        Err(AllocError::NoRoom { .. })
    ));
    let small = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
    // First fit inside cube 0 avoiding chip 0: base (1,0).
    assert_eq!(chips_of(&a, &small), vec![1, 2, 9, 10]);
    assert_eq!(a.layout(&small).unwrap().links, vec![LinkKind::Line; 2]);
    a.release(&whole).unwrap();
    a.release(&small).unwrap();
    a.repair(0).unwrap();
    let both = a.allocate(&Request::boxed(&[8, 4]).unwrap()).unwrap();
    let l = a.layout(&both).unwrap();
    assert_eq!(
        (l.cubes.clone(), l.links.clone()),
        (vec![0, 1], vec![LinkKind::Ring; 2])
    );
}

#[test]
fn sub_cube_slices_fill_partly_used_cubes_first() {
    let p = pod(
        &[8, 4],
        Some(&[4, 4]),
        Wiring::Reconfigurable,
        &[&[2, 2], &[4, 4]],
        false,
    );
    let mut a = PodAllocator::reconfigurable(p);
    let first = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
    let whole = a.allocate(&Request::boxed(&[4, 4]).unwrap()).unwrap();
    assert_eq!(a.layout(&whole).unwrap().cubes, vec![1]);
    a.release(&whole).unwrap();
    for _ in 0..3 {
        let g = a.allocate(&Request::boxed(&[2, 2]).unwrap()).unwrap();
        // All land in cube 0 (x < 4), keeping cube 1 whole.
        assert!(chips_of(&a, &g).iter().all(|c| c % 8 < 4));
    }
    let _ = first;
    let last = a.allocate(&Request::boxed(&[4, 4]).unwrap()).unwrap();
    assert_eq!(a.layout(&last).unwrap().cubes, vec![1]);
}

#[test]
fn measures_count_copies_and_stranded_chips() {
    let p = pod(&[4, 4], None, Wiring::Static, &[&[2, 2], &[4, 4]], false);
    let mut down = NodeSet::new(16);
    // Chips 5 and 10: (1,1) and (2,2). Free 2x2 boxes remain, e.g. at (2,0).
    for n in [5, 10] {
        down.insert(n).unwrap();
    }
    let m = pod_measures(&p, &down);
    assert!(m[0].placeable && !m[1].placeable);
    assert!(m[0].disjoint_copies >= 2);
    assert_eq!(m[1].disjoint_copies, 0);
    assert_eq!(stranded_chips(&p, &NodeSet::new(16)), 0);
    // Only one chip free: it is stranded (no 2x2 around it).
    let mut all_but_one = NodeSet::full(16);
    all_but_one.remove(7).unwrap();
    assert_eq!(stranded_chips(&p, &all_but_one), 1);
}

/// Every placement of `shape` on the torus, in first-fit order, with
/// whether it is free.
fn oracle(p: &Pod, down: &NodeSet, shape: &Coords) -> Vec<Vec<NodeId>> {
    let mut out = Vec::new();
    for id in 0..p.grid().num_nodes() as NodeId {
        let base = p.grid().coords_of(id).unwrap();
        for o in orientations(shape, p.rotates(), p.grid().sides().as_slice()) {
            let mut chips = Vec::new();
            all_chips(
                p.grid().sides().as_slice(),
                base.as_slice(),
                o.as_slice(),
                |c| {
                    chips.push(c);
                    true
                },
            );
            if chips.iter().all(|&c| !down.contains(c)) {
                chips.sort_unstable();
                out.push(chips);
            }
        }
    }
    out
}

fn small_pods() -> Vec<Pod> {
    vec![
        pod(
            &[4, 3],
            None,
            Wiring::Static,
            &[&[1, 1], &[2, 1], &[2, 2], &[4, 1], &[2, 3]],
            true,
        ),
        pod(
            &[3, 2, 2],
            None,
            Wiring::Static,
            &[&[1, 1, 1], &[2, 2, 1], &[3, 1, 2], &[2, 2, 2]],
            false,
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn static_strategies_agree_with_the_oracle(which in 0usize..2, faults in prop::collection::vec(0u32..12, 0..8)) {
        let p = small_pods()[which].clone();
        for shape in p.catalogue().shapes().to_vec() {
            let mut ff = PodAllocator::first_fit(p.clone());
            let mut bf = PodAllocator::best_fit(p.clone());
            let mut down = NodeSet::new(12);
            for &f in &faults {
                ff.mark_faulty(f).unwrap();
                bf.mark_faulty(f).unwrap();
                down.insert(f).unwrap();
            }
            let expect = oracle(&p, &down, &shape);
            let req = Request::boxed(shape.as_slice()).unwrap();
            match ff.allocate(&req) {
                Ok(g) => prop_assert_eq!(Some(&chips_of(&ff, &g)), expect.first()),
                Err(e) => prop_assert!(expect.is_empty(), "{e}"),
            }
            match bf.allocate(&req) {
                Ok(g) => prop_assert!(expect.contains(&chips_of(&bf, &g))),
                Err(e) => prop_assert!(expect.is_empty(), "{e}"),
            }
        }
    }

    #[test]
    fn reconfigurable_finds_a_slice_whenever_one_exists(faults in prop::collection::vec(0u32..32, 0..6), pre in 0usize..4) {
        let p = pod(&[8, 4], Some(&[4, 2]), Wiring::Reconfigurable, &[&[1, 1], &[2, 2], &[4, 2], &[4, 4], &[8, 4]], false);
        let mut a = PodAllocator::reconfigurable(p.clone());
        for &f in &faults {
            a.mark_faulty(f).unwrap();
        }
        for _ in 0..pre {
            let _ = a.allocate(&Request::boxed(&[1, 1]).unwrap());
        }
        let mut down = a.busy_nodes();
        down.union_with(&a.faulty_nodes());
        for shape in p.catalogue().shapes().to_vec() {
            let req = Request::boxed(shape.as_slice()).unwrap();
            let cubes_needed = (shape.product() / 8) as usize;
            let exists = if shape[0] % 4 == 0 && shape[1] % 2 == 0 {
                // Whole cubes: enough clean cubes (the four 4x2 cubes).
                let clean = (0..4u32).filter(|&c| {
                    let (bx, by) = ((c % 2) * 4, (c / 2) * 2);
                    let mut ok = true;
                    all_chips(&[8, 4], &[bx, by], &[4, 2], |n| { ok &= !down.contains(n); true });
                    ok
                }).count();
                clean >= cubes_needed
            } else {
                // Inside one cube: a free box within a 4x2 cube.
                shape[0] <= 4 && shape[1] <= 2 && (0..4u32).any(|c| {
                    let (bx, by) = ((c % 2) * 4, (c / 2) * 2);
                    (bx..=bx + 4 - shape[0]).any(|x| (by..=by + 2 - shape[1]).any(|y| {
                        all_chips(&[8, 4], &[x, y], shape.as_slice(), |n| !down.contains(n))
                    }))
                })
            };
            let mut b = PodAllocator::reconfigurable(p.clone());
            for &f in &faults { b.mark_faulty(f).unwrap(); }
            for _ in 0..pre { let _ = b.allocate(&Request::boxed(&[1, 1]).unwrap()); }
            match b.allocate(&req) {
                Ok(g) => {
                    prop_assert!(exists, "granted {} but the oracle found none", g.partition());
                    prop_assert!(chips_of(&b, &g).iter().all(|&c| !down.contains(c)));
                }
                Err(AllocError::NoRoom { .. }) => prop_assert!(!exists, "refused {:?}", shape),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }

    #[test]
    fn pod_strategies_keep_the_allocator_contract(steps in prop::collection::vec(
        prop_oneof![
            (0usize..5).prop_map(|i| Step::Allocate(Request::boxed([[1u32, 1], [2, 2], [4, 2], [4, 4], [8, 4]][i].as_slice()).unwrap())),
            (1u32..12).prop_map(|n| Step::Allocate(Request::nodes(n))),
            (0usize..4).prop_map(Step::Release),
            (0usize..4).prop_map(Step::ReleaseTwice),
            (0u32..34).prop_map(Step::MarkFaulty),
            (0u32..34).prop_map(Step::Repair),
        ], 0..24), which in 0usize..3) {
        let p = pod(&[8, 4], Some(&[4, 2]), Wiring::Reconfigurable, &[&[1, 1], &[2, 2], &[4, 2], &[4, 4], &[8, 4]], false);
        let build = move || -> Box<dyn Allocator> {
            match which {
                0 => Box::new(PodAllocator::first_fit(p.clone())),
                1 => Box::new(PodAllocator::best_fit(p.clone())),
                _ => Box::new(PodAllocator::reconfigurable(p.clone())),
            }
        };
        let mut a = build();
        let fresh = move || Ok(build());
        check_script_with(a.as_mut(), &fresh, &steps).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
}

#[test]
fn stranded_chips_and_the_largest_shape_follow_the_wiring_rules() {
    use super::{largest_placeable, stranded_chips_under};
    // An 8x4 torus of two 4x4 cubes; chip 0 = (0,0) is busy.
    let p = pod(
        &[8, 4],
        Some(&[4, 4]),
        Wiring::Reconfigurable,
        &[&[4, 4], &[8, 4]],
        false,
    );
    let mut busy = NodeSet::new(32);
    busy.insert(0).unwrap();
    let shape = |s: Option<Coords>| s.map(|s| s.as_slice().to_vec());
    // Static: 4x4 boxes at columns 1..4 are free and cover columns 1..=7;
    // column 0 keeps rows 1..=3 free but in no free 4x4.
    assert_eq!(stranded_chips_under(&p, &busy, Wiring::Static), 3);
    assert_eq!(
        shape(largest_placeable(&p, &busy, Wiring::Static)),
        Some(vec![4, 4])
    );
    // Reconfigurable: cube 0 is not clean, so its 15 free chips join no
    // whole-cube slice, and no shape fits inside a cube otherwise.
    assert_eq!(stranded_chips_under(&p, &busy, Wiring::Reconfigurable), 15);
    assert_eq!(
        shape(largest_placeable(&p, &busy, Wiring::Reconfigurable)),
        Some(vec![4, 4])
    );
    // With a 2x2 in the catalogue every free chip of cube 0 lies in a free
    // 2x2 inside the cube.
    let p2 = pod(
        &[8, 4],
        Some(&[4, 4]),
        Wiring::Reconfigurable,
        &[&[2, 2], &[4, 4], &[8, 4]],
        false,
    );
    assert_eq!(stranded_chips_under(&p2, &busy, Wiring::Reconfigurable), 0);
    // Both cubes dirty: only 2x2 slices remain.
    busy.insert(4).unwrap();
    assert_eq!(
        shape(largest_placeable(&p2, &busy, Wiring::Reconfigurable)),
        Some(vec![2, 2])
    );
    // Nothing free: nothing placeable, nothing stranded.
    let mut full = NodeSet::new(32);
    full.insert_range(0, 32).unwrap();
    assert_eq!(largest_placeable(&p2, &full, Wiring::Static), None);
    assert_eq!(stranded_chips_under(&p2, &full, Wiring::Reconfigurable), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The fast static searches choose exactly what trying every placement
    /// chooses, on states reached by random grants, releases, faults and
    /// repairs, with requests that may rotate on pods that do not; best
    /// fit's kept counts always equal counts made afresh, whichever
    /// counting method it is made to use.
    #[test]
    fn fast_static_searches_choose_what_the_exhaustive_ones_choose(
        which in 0usize..6,
        best in any::<bool>(),
        method in 0usize..4,
        steps in prop::collection::vec((0usize..8, 0u8..8, any::<bool>()), 1..14),
        faults in prop::collection::vec(0u32..12, 0..3),
    ) {
        let mut pods = small_pods();
        pods.push(pod(
            &[4, 4, 4],
            Some(&[2, 2, 2]),
            Wiring::Static,
            &[&[1, 1, 1], &[2, 1, 1], &[2, 2, 1], &[2, 2, 2], &[4, 2, 2], &[4, 4, 2], &[4, 4, 4]],
            true,
        ));
        pods.push(pod(
            &[6, 4, 3],
            None,
            Wiring::Static,
            &[&[1, 1, 1], &[2, 1, 1], &[3, 2, 1], &[2, 2, 3], &[4, 4, 2], &[6, 4, 3]],
            false,
        ));
        // Lines of 64 chips (one bitmap word) and of more than 64 (counts
        // only).
        for k0 in [64, 66] {
            pods.push(pod(
                &[k0, 2],
                None,
                Wiring::Static,
                &[&[1, 1], &[4, 1], &[3, 2], &[32, 2], &[k0, 1], &[k0, 2]],
                true,
            ));
        }
        let p = pods[which].clone();
        let shapes = p.catalogue().shapes().to_vec();
        let mut a = if best { PodAllocator::best_fit(p.clone()) } else { PodAllocator::first_fit(p.clone()) };
        a = a.map(|mut s| {
            if let Some(counts) = s.counts.as_mut() {
                counts.force = [None, Some(CountMethod::PerCandidate), Some(CountMethod::PerFreeBase), Some(CountMethod::Window)][method];
            }
            s
        });
        for f in faults {
            let _ = a.mark_faulty(f);
        }
        let n = p.grid().num_nodes() as u32;
        let mut live = Vec::new();
        for (pick, act, release) in steps {
            match act {
                0 => {
                    let _ = a.mark_faulty(pick as u32 * 7 % n);
                }
                1 => {
                    let _ = a.repair(pick as u32 * 7 % n);
                }
                _ if release && !live.is_empty() => {
                    let g = live.remove(pick % live.len());
                    a.release(&g).unwrap();
                }
                _ => {
                    let shape = shapes[pick % shapes.len()];
                    let rotate = p.rotates() || act == 2;
                    let fast = a.place_static_now(&shape, rotate);
                    let slow = a.place_static_reference(&shape, rotate);
                    prop_assert_eq!(fast, slow);
                    if let Ok(g) = a.allocate(&Request::Box { sides: shape, rotate }) {
                        live.push(g);
                    }
                }
            }
            if let Some(counts) = &a.counts {
                prop_assert!(counts.matches(a.view().occupancy().blocked()));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Stranded chips from dilated free-base maps equal the count from
    /// trying every placement.
    #[test]
    fn fast_stranded_chips_match_the_exhaustive_count(
        which in 0usize..2,
        down in prop::collection::vec(0u32..12, 0..10),
    ) {
        // Without 1-chip shapes, so that chips can be stranded.
        let p = [
            pod(&[4, 3], None, Wiring::Static, &[&[2, 1], &[2, 2], &[4, 1], &[2, 3]], true),
            pod(&[3, 2, 2], None, Wiring::Static, &[&[2, 2, 1], &[3, 1, 2]], false),
        ][which]
            .clone();
        let mut set = NodeSet::new(12);
        for d in down {
            let _ = set.insert(d);
        }
        prop_assert_eq!(
            stranded_chips(&p, &set),
            super::measures::stranded_chips_reference(&p, &set)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The per-cube busy and faulty counts stay equal to what the cube's
    /// chips say, through grants, releases, faults and repairs.
    #[test]
    fn kept_cube_counts_match_the_chips(
        steps in prop::collection::vec((0usize..8, 0u8..4), 1..30),
    ) {
        let p = pod(
            &[8, 4],
            Some(&[4, 2]),
            Wiring::Reconfigurable,
            &[&[1, 1], &[2, 2], &[4, 2], &[4, 4], &[8, 4]],
            false,
        );
        let shapes = p.catalogue().shapes().to_vec();
        let mut a = PodAllocator::reconfigurable(p);
        let mut live = Vec::new();
        for (pick, op) in steps {
            match op {
                0 => {
                    if let Ok(g) = a.allocate(&Request::boxed(shapes[pick % shapes.len()].as_slice()).unwrap()) {
                        live.push(g);
                    }
                }
                1 if !live.is_empty() => {
                    let g = live.remove(pick % live.len());
                    a.release(&g).unwrap();
                }
                2 => {
                    let _ = a.mark_faulty((pick * 5 % 32) as NodeId);
                }
                _ => {
                    let _ = a.repair((pick * 5 % 32) as NodeId);
                }
            }
            for cube in 0..4 {
                prop_assert_eq!(a.cube_state(cube), a.cube_state_from_chips(cube));
            }
        }
    }
}
