//! [`Allocator::allocate_at`] across the strategies that implement it: on
//! states reached by random allocations and releases, every recognisable
//! partition is granted exactly when it is wholly free, marks exactly its
//! nodes busy and is undone by its release; a busy or unrecognised one is
//! refused with its typed error and changes nothing; granting the
//! partition `allocate` would choose leaves the strategy in a state that
//! chooses as `allocate`'s does afterwards.

use partalloc_topology::{GridBox, NodeSet, Subcube, Topology};
use proptest::prelude::*;

use crate::{AllocError, Allocator, Grant, Partition, Request, registry};

/// The mesh strategies of the registry, each parameter variant that
/// changes their state (free lists, split order), on a power-of-two
/// square so that `buddy-2d` runs too.
const MESH: &[&str] = &[
    "fsl",
    "fsl[dealloc=incremental]",
    "adaptive-scan",
    "busy-list",
    "frame-sliding",
    "first-fit",
    "best-fit",
    "buddy-2d",
    "buddy-2d[order=z-order]",
];

/// One step of the script that sets up a state: allocate (a, b, rotate)
/// or release the live grant at this index (modulo their number).
#[derive(Debug, Clone)]
enum Op {
    Allocate(u32, u32, bool),
    Release(usize),
}

fn ops(side: u32) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (1..=side / 2, 1..=side / 2, any::<bool>()).prop_map(|(a, b, r)| Op::Allocate(a, b, r)),
        1 => any::<usize>().prop_map(Op::Release),
    ];
    proptest::collection::vec(op, 0..14)
}

fn boxed(a: u32, b: u32, rotate: bool) -> Request {
    let r = Request::boxed(&[a, b]).unwrap();
    if rotate { r.any_orientation() } else { r }
}

/// A fresh `spec` on `topology` brought to the script's state (refusals
/// skipped), with its live grants: replaying is how these tests copy a
/// `dyn Allocator`.
fn replay(
    spec: &str,
    topology: &Topology,
    script: &[Op],
    request: impl Fn(u32, u32, bool) -> Request,
) -> (Box<dyn Allocator>, Vec<Grant>) {
    let mut a = registry::build(spec, topology).unwrap();
    let mut live = Vec::new();
    for op in script {
        match *op {
            Op::Allocate(x, y, r) => live.extend(a.allocate(&request(x, y, r)).ok()),
            Op::Release(i) if !live.is_empty() => {
                let g = live.swap_remove(i % live.len());
                a.release(&g).unwrap();
            }
            Op::Release(_) => {}
        }
    }
    (a, live)
}

/// What a caller can see of an allocator's state.
fn seen(a: &dyn Allocator) -> (NodeSet, usize, usize) {
    (a.busy_nodes(), a.free_nodes(), a.live_grants())
}

/// The partitions `allocate` grants for `follow` in turn (None when
/// refused): the later choices, which show the strategy's own state.
fn choices(a: &mut dyn Allocator, follow: &[Request]) -> Vec<Option<Partition>> {
    follow
        .iter()
        .map(|r| a.allocate(r).ok().map(|g| g.partition().clone()))
        .collect()
}

/// Every check of the module for one strategy, one state and one request.
/// Returns how many recognisable partitions were free (granted).
fn check(
    spec: &str,
    topology: &Topology,
    script: &[Op],
    request: impl Fn(u32, u32, bool) -> Request + Copy,
    want: &Request,
    follow: &[Request],
) -> usize {
    let (base, _) = replay(spec, topology, script, request);
    let before = seen(base.as_ref());
    let recognized = base.recognizable(want).unwrap();
    let mut granted = 0;
    for p in &recognized {
        let (mut a, _) = replay(spec, topology, script, request);
        let nodes = p.node_list(topology).unwrap();
        let free = nodes.iter().all(|&n| base.is_available(n));
        match a.allocate_at(want, p) {
            Ok(g) => {
                assert!(free, "{spec}: granted {p} over busy nodes");
                assert_eq!(g.partition(), p, "{spec}");
                assert_eq!(g.requested_nodes(), want.node_count());
                let mut busy = before.0.clone();
                for &n in &nodes {
                    assert_eq!(busy.insert(n), Ok(true), "{spec}: {n} was busy");
                }
                assert_eq!(
                    seen(a.as_ref()),
                    (busy, before.1 - nodes.len(), before.2 + 1)
                );
                // The grant is recorded where the strategy's own state
                // sees it: later grants avoid its nodes.
                let mut b = a.busy_nodes();
                for q in choices(a.as_mut(), follow).into_iter().flatten() {
                    for n in q.node_list(topology).unwrap() {
                        assert_eq!(b.insert(n), Ok(true), "{spec}: {q} overlaps after {p}");
                    }
                }
                let (mut a, _) = replay(spec, topology, script, request);
                let g = a.allocate_at(want, p).unwrap();
                a.release(&g).unwrap();
                assert_eq!(seen(a.as_ref()), before, "{spec}: release of {p}");
                granted += 1;
            }
            Err(e) => {
                assert!(!free, "{spec}: refused free {p}: {e}");
                assert!(matches!(e, AllocError::PartitionBusy { .. }), "{spec}: {e}");
                assert_eq!(
                    seen(a.as_ref()),
                    before,
                    "{spec}: refusal changed the state"
                );
                let (mut b, _) = replay(spec, topology, script, request);
                assert_eq!(choices(a.as_mut(), follow), choices(b.as_mut(), follow));
            }
        }
    }
    // The partition `allocate` chooses, granted by `allocate_at`, leaves a
    // strategy that chooses as after `allocate` (when that partition is
    // one it lists: frame sliding's frames from the first free node are
    // not).
    let (mut chose, _) = replay(spec, topology, script, request);
    if let Ok(g) = chose.allocate(want)
        && recognized.contains(g.partition())
    {
        let (mut at, _) = replay(spec, topology, script, request);
        let h = at.allocate_at(want, g.partition()).unwrap();
        assert_eq!(h.partition(), g.partition());
        assert_eq!(seen(at.as_ref()), seen(chose.as_ref()));
        assert_eq!(
            choices(at.as_mut(), follow),
            choices(chose.as_mut(), follow),
            "{spec}"
        );
    }
    granted
}

/// The whole side×side mesh: never granted for a box of sides at most
/// side / 2 (not even as buddy-2d's rounded-up square).
fn whole(side: u32) -> Partition {
    Partition::Box(GridBox::new(&[0, 0], &[side, side]).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn mesh_strategies_grant_every_free_recognised_box_and_only_those(
        script in ops(8),
        (a, b, rotate) in (1u32..=4, 1u32..=4, any::<bool>()),
        follow in proptest::collection::vec((1u32..=4, 1u32..=4, any::<bool>()), 1..4),
    ) {
        let topology: Topology = "mesh:8x8".parse().unwrap();
        let follow: Vec<Request> = follow.iter().map(|&(x, y, r)| boxed(x, y, r)).collect();
        for spec in MESH {
            check(spec, &topology, &script, boxed, &boxed(a, b, rotate), &follow);
            let (mut s, _) = replay(spec, &topology, &script, boxed);
            let before = seen(s.as_ref());
            for wrong in [whole(8), Partition::Nodes(vec![0])] {
                let e = s.allocate_at(&boxed(a, b, false), &wrong).unwrap_err();
                prop_assert!(matches!(e, AllocError::Unrecognized { .. }), "{}: {}", spec, e);
            }
            prop_assert_eq!(seen(s.as_ref()), before);
        }
    }

    #[test]
    fn buddy_grants_every_free_aligned_block_and_only_those(
        script in proptest::collection::vec(
            prop_oneof![
                3 => (0u32..=3).prop_map(|k| Op::Allocate(k, 0, false)),
                1 => any::<usize>().prop_map(Op::Release),
            ],
            0..14,
        ),
        k in 0u32..=3,
        follow in proptest::collection::vec(0u32..=3, 1..4),
    ) {
        let topology: Topology = "hypercube:5".parse().unwrap();
        let cube = |k: u32, _: u32, _: bool| Request::subcube(k);
        let follow: Vec<Request> = follow.into_iter().map(Request::subcube).collect();
        check("buddy", &topology, &script, cube, &Request::subcube(k), &follow);
        // Q_k blocks that are not aligned: higher free dimensions, or fewer.
        let (mut s, _) = replay("buddy", &topology, &script, cube);
        let before = seen(s.as_ref());
        let shifted = Subcube::new(5, ((1 << k) - 1) << 1, 0).unwrap();
        let smaller = Subcube::new(5, (1 << k) >> 1, 0).unwrap();
        for wrong in [shifted, smaller] {
            if wrong.free_mask() == (1 << k) - 1 {
                continue;
            }
            let e = s.allocate_at(&Request::subcube(k), &Partition::Subcube(wrong)).unwrap_err();
            prop_assert!(matches!(e, AllocError::Unrecognized { .. }), "{}", e);
        }
        prop_assert_eq!(seen(s.as_ref()), before);
    }
}

/// Paging grants any increasing list of free ids of the requested length
/// and refuses the rest, changing nothing.
#[test]
fn paging_grants_any_free_increasing_list_of_the_requested_length() {
    let topology: Topology = "mesh:10x10".parse().unwrap();
    let mut p = registry::build("paging", &topology).unwrap();
    let first = p.allocate(&Request::nodes(3)).unwrap(); // 0, 1, 2
    let want = Request::nodes(3);
    let at = Partition::Nodes(vec![5, 63, 64]);
    let g = p.allocate_at(&want, &at).unwrap();
    assert_eq!(g.partition(), &at);
    let busy: Vec<u32> = p.busy_nodes().iter().collect();
    assert_eq!(busy, [0, 1, 2, 5, 63, 64]);
    let before = seen(p.as_ref());
    for wrong in [
        Partition::Nodes(vec![7, 6, 8]),
        Partition::Nodes(vec![6, 6, 8]),
        Partition::Nodes(vec![6, 7]),
        Partition::Nodes(vec![6, 7, 100]),
        Partition::Box(GridBox::new(&[0, 5], &[3, 1]).unwrap()),
    ] {
        let e = p.allocate_at(&want, &wrong).unwrap_err();
        assert!(matches!(e, AllocError::Unrecognized { .. }), "{wrong}: {e}");
    }
    let e = p
        .allocate_at(&want, &Partition::Nodes(vec![4, 5, 6]))
        .unwrap_err();
    assert!(matches!(e, AllocError::PartitionBusy { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "[4, 5, 6] is not wholly free now; pick a free partition or wait"
    );
    assert_eq!(seen(p.as_ref()), before);
    p.release(&g).unwrap();
    p.release(&first).unwrap();
    assert_eq!(p.free_nodes(), 100);
    // The released words are free again for `allocate`'s lowest-first walk.
    let again = p.allocate(&Request::nodes(6)).unwrap();
    assert_eq!(again.partition(), &Partition::Nodes(vec![0, 1, 2, 3, 4, 5]));
}

/// A strategy without placement refuses with the unsupported error and
/// changes nothing; the messages of the two other refusals name the
/// partition and the request.
#[test]
fn other_strategies_refuse_placement_as_unsupported() {
    let topology: Topology = "hypercube:4".parse().unwrap();
    let mut gray = registry::build("gray-code", &topology).unwrap();
    let at = Partition::Subcube(Subcube::aligned(4, 1, 0).unwrap());
    let e = gray.allocate_at(&Request::subcube(1), &at).unwrap_err();
    assert!(matches!(e, AllocError::PlacementUnsupported { .. }), "{e}");
    assert_eq!(gray.free_nodes(), 16);
    let mut fsl = registry::build("fsl", &"mesh:4x4".parse().unwrap()).unwrap();
    let e = fsl.allocate_at(&boxed(2, 2, false), &whole(4)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "fsl never grants {} for {}; pick one of its recognizable partitions",
            whole(4),
            boxed(2, 2, false)
        )
    );
}

/// On the empty machine a mesh strategy grants a box exactly when it is
/// one of its `recognizable` partitions for the request: checked for every
/// box of 8×8 and 4×4 meshes and every request up to the side, in both
/// orientation modes, so the strategies' direct `recognises` tests agree
/// with their listings.
#[test]
fn on_the_empty_mesh_exactly_the_listed_boxes_are_granted() {
    for side in [4u32, 8] {
        let topology: Topology = format!("mesh:{side}x{side}").parse().unwrap();
        let boxes: Vec<Partition> = (0..side)
            .flat_map(|y| (0..side).map(move |x| (x, y)))
            .flat_map(|(x, y)| {
                (1..=side - x).flat_map(move |w| {
                    (1..=side - y)
                        .map(move |h| Partition::Box(GridBox::new(&[x, y], &[w, h]).unwrap()))
                })
            })
            .collect();
        for spec in MESH {
            let mut a = registry::build(spec, &topology).unwrap();
            for (p, q, rotate) in (1..=side)
                .flat_map(|p| (1..=side).flat_map(move |q| [false, true].map(move |r| (p, q, r))))
            {
                let request = boxed(p, q, rotate);
                let listed = a.recognizable(&request).unwrap();
                for at in &boxes {
                    let granted = a.allocate_at(&request, at);
                    assert_eq!(
                        granted.is_ok(),
                        listed.contains(at),
                        "{spec} {request} at {at}: {granted:?}"
                    );
                    if let Ok(g) = granted {
                        a.release(&g).unwrap();
                    }
                }
            }
        }
    }
}
