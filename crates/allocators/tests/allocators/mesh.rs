//! Mesh strategies through the public API: registry, the allocator
//! contract (`conformance::check_script`), request validation.

#![expect(clippy::unwrap_used, reason = "test helpers build fixed, valid inputs")]

use partalloc_allocators::conformance::{Step, check_script};
use partalloc_allocators::mesh::{AdaptiveScan, Buddy2d, BuddyOrder, Fsl};
use partalloc_allocators::{AllocError, Allocator, BuildError, FaultError, Request, registry};
use partalloc_topology::Topology;
use proptest::prelude::*;

const NAMES: [&str; 13] = [
    "fsl",
    "fsl[dealloc=incremental]",
    "adaptive-scan",
    "busy-list",
    "busy-list[candidates=aligned]",
    "frame-sliding",
    "frame-sliding[variant=b]",
    "first-fit",
    "best-fit",
    "best-fit[score=coverage]",
    "buddy-2d",
    "buddy-2d[order=z-order]",
    "fsl-3d",
];

fn topo(s: &str) -> Topology {
    s.parse().unwrap()
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (1u32..=9, 1u32..=9, any::<bool>()).prop_map(|(a, b, r)| {
            let q = Request::boxed(&[a, b]).unwrap();
            Step::Allocate(if r { q.any_orientation() } else { q })
        }),
        1 => Just(Step::Allocate(Request::nodes(3))),
        1 => Just(Step::Allocate(Request::subcube(2))),
        1 => Just(Step::Allocate(Request::boxed(&[2, 2, 2]).unwrap())),
        4 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..70).prop_map(Step::MarkFaulty),
        1 => (0u32..70).prop_map(Step::Repair),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_mesh_strategy_keeps_the_allocator_contract(
        script in prop::collection::vec(step(), 1..60),
    ) {
        for name in NAMES {
            for machine in ["mesh:8x8", "torus:8x8", "mesh:7x5"] {
                let t = topo(machine);
                let Ok(mut a) = registry::build(name, &t) else {
                    prop_assert!(name.starts_with("buddy-2d") && machine == "mesh:7x5");
                    continue;
                };
                if let Err(v) = check_script(a.as_mut(), &script) {
                    prop_assert!(false, "{name} on {machine}: {v}");
                }
            }
        }
    }
}

fn step_3d() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => ([1u32..=5, 1u32..=5, 1u32..=5], any::<bool>()).prop_map(|(s, r)| {
            let q = Request::boxed(&s).unwrap();
            Step::Allocate(if r { q.any_orientation() } else { q })
        }),
        1 => Just(Step::Allocate(Request::boxed(&[2, 2]).unwrap())),
        4 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..70).prop_map(Step::MarkFaulty),
        1 => (0u32..70).prop_map(Step::Repair),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn fsl_3d_keeps_the_allocator_contract(script in prop::collection::vec(step_3d(), 1..50)) {
        for machine in ["mesh:4x4x4", "mesh:5x3x2", "torus:4x4x4"] {
            let mut a = registry::build("fsl-3d", &topo(machine)).unwrap();
            if let Err(v) = check_script(a.as_mut(), &script) {
                prop_assert!(false, "fsl-3d on {machine}: {v}");
            }
        }
    }
}

#[test]
fn registry_lists_the_mesh_strategies_with_parameters() {
    let t = topo("mesh:16x16");
    for name in NAMES {
        let a = registry::build(name, &t).unwrap();
        assert_eq!(a.name(), name);
        assert_eq!(a.free_nodes(), 256);
    }
    for bad in [
        "frame-sliding[variant=c]",
        "best-fit[score=area]",
        "buddy-2d[order=hilbert]",
        "fsl[rf=1]",
        "fsl[dealloc=never]",
        "busy-list[candidates=corners]",
    ] {
        let e = registry::build(bad, &t).unwrap_err();
        assert!(matches!(e, BuildError::Spec(_)), "{bad}: {e}");
    }
}

#[test]
fn unsuitable_machines_are_refused_with_a_reason() {
    let e = registry::build("buddy-2d", &topo("mesh:8x6")).unwrap_err();
    assert!(matches!(e, BuildError::UnsuitableTopology { .. }), "{e}");
    assert!(e.to_string().contains("power-of-two"), "{e}");
    let e = registry::build("buddy-2d", &topo("mesh:12x12")).unwrap_err();
    assert!(matches!(e, BuildError::UnsuitableTopology { .. }), "{e}");
    let e = registry::build("fsl", &topo("mesh:4x4x4")).unwrap_err();
    assert!(matches!(e, BuildError::UnsuitableTopology { .. }), "{e}");
    let e = registry::build("adaptive-scan", &topo("hypercube:4")).unwrap_err();
    assert!(matches!(e, BuildError::UnsupportedTopology { .. }), "{e}");
}

#[test]
fn bad_requests_are_typed_errors_and_change_nothing() {
    let mut f = Fsl::new(topo("mesh:8x4")).unwrap();
    let unsupported = f.allocate(&Request::nodes(4)).unwrap_err();
    assert!(matches!(unsupported, AllocError::Unsupported { .. }));
    let three_d = f
        .allocate(&Request::boxed(&[2, 2, 2]).unwrap())
        .unwrap_err();
    assert!(matches!(three_d, AllocError::Invalid { .. }));
    // 2×8 only fits as 8×2: invalid without rotation, granted with it.
    let tall = Request::boxed(&[2, 8]).unwrap();
    assert!(matches!(
        f.allocate(&tall).unwrap_err(),
        AllocError::Invalid { .. }
    ));
    assert_eq!(f.free_nodes(), 32);
    let g = f.allocate(&tall.any_orientation()).unwrap();
    assert_eq!(g.granted_nodes(), 16);
    let full = f.allocate(&Request::boxed(&[8, 3]).unwrap()).unwrap_err();
    assert!(matches!(full, AllocError::NoRoom { .. }));
    // A strategy that never rotates calls a request that fits only rotated
    // invalid rather than waiting for room forever.
    let mut ff = registry::build("first-fit", &topo("mesh:8x4")).unwrap();
    let e = ff.allocate(&tall.any_orientation()).unwrap_err();
    assert!(matches!(e, AllocError::Invalid { .. }), "{e}");
    assert!(e.to_string().contains("never rotates"), "{e}");
}

#[test]
fn buddy_refuses_faults_and_others_treat_them_as_busy() {
    let mut b = Buddy2d::new(topo("mesh:4x4"), BuddyOrder::RowMajor).unwrap();
    assert!(matches!(
        b.mark_faulty(0),
        Err(FaultError::Unsupported { .. })
    ));
    let mut s = AdaptiveScan::new(topo("mesh:4x4")).unwrap();
    s.mark_faulty(0).unwrap();
    let g = s.allocate(&Request::boxed(&[4, 4]).unwrap());
    assert!(matches!(g, Err(AllocError::NoRoom { .. })));
    s.repair(0).unwrap();
    assert!(s.allocate(&Request::boxed(&[4, 4]).unwrap()).is_ok());
}

#[test]
fn recognizable_sets_show_who_is_complete() {
    let t = topo("mesh:6x4");
    let q = Request::boxed(&[3, 2]).unwrap().any_orientation();
    let count = |n: &str| {
        registry::build(n, &t)
            .unwrap()
            .recognizable(&q)
            .unwrap()
            .len()
    };
    // 4·3 placements of 3×2 plus 5·2 of 2×3.
    assert_eq!(count("fsl"), 22);
    assert_eq!(count("adaptive-scan"), 22);
    assert_eq!(count("busy-list"), 22);
    assert_eq!(count("first-fit"), 12);
    assert_eq!(count("best-fit"), 12);
    // Strides (3, 2) from ⟨0,0⟩: x ∈ {0, 3}, y ∈ {0, 2}.
    assert_eq!(count("frame-sliding"), 4);
}

#[test]
fn fsl_dealloc_parameter_builds_both_procedures() {
    let t = topo("mesh:8x8");
    let a = registry::build("fsl[dealloc=incremental]", &t).unwrap();
    assert_eq!(a.name(), "fsl[dealloc=incremental]");
    assert!(registry::build("fsl[dealloc=lazy]", &t).is_err());
}
