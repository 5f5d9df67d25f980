//! The contract and the defining properties of the non-contiguous family.

use proptest::prelude::*;

use super::{GranularMbs, Mbs, OctetMbs};
use crate::conformance::{Step, check_script};
use crate::registry;
use crate::{Allocator, Partition, Request};
use partalloc_topology::Topology;

const NAMES: [&str; 6] = [
    "mbs",
    "granular-mbs",
    "octet-mbs",
    "gabl",
    "random",
    "random[seed=42]",
];

fn topo(s: &str) -> Topology {
    s.parse().unwrap()
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1u32..=40).prop_map(|n| Step::Allocate(Request::nodes(n))),
        3 => ([1u32..=6, 1u32..=6], any::<bool>()).prop_map(|(s, r)| {
            let q = Request::boxed(&s).unwrap();
            Step::Allocate(if r { q.any_orientation() } else { q })
        }),
        1 => ([1u32..=4, 1u32..=4, 1u32..=4]).prop_map(|s| Step::Allocate(Request::boxed(&s).unwrap())),
        1 => Just(Step::Allocate(Request::nodes(0))),
        1 => Just(Step::Allocate(Request::nodes(500))),
        4 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..130).prop_map(Step::MarkFaulty),
        1 => (0u32..130).prop_map(Step::Repair),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Every strategy of the family keeps the allocator contract on 2-D and
    /// 3-D meshes and tori, power-of-two sides or not, with faults.
    #[test]
    fn every_noncontig_strategy_keeps_the_allocator_contract(
        script in prop::collection::vec(step(), 1..50),
    ) {
        for name in NAMES {
            for machine in ["mesh:8x8", "torus:8x8", "mesh:11x7", "mesh:4x4x4", "mesh:5x3x6", "torus:4x4x2"] {
                let mut a = registry::build(name, &topo(machine)).unwrap();
                if let Err(v) = check_script(a.as_mut(), &script) {
                    prop_assert!(false, "{name} on {machine}: {v}");
                }
            }
        }
    }
}

/// The block sizes of a grant, largest first.
fn sizes(p: &Partition) -> Vec<u64> {
    let Partition::Boxes(bs) = p else {
        return Vec::new();
    };
    let mut v: Vec<u64> = bs.iter().map(partalloc_topology::GridBox::volume).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

/// n in base `b`: the digits as repeated sizes, largest first.
fn digits(mut n: u64, b: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut size = 1;
    while n > 0 {
        for _ in 0..n % b {
            out.push(size);
        }
        n /= b;
        size *= b;
    }
    out.reverse();
    out
}

#[test]
fn a_fresh_grant_is_the_base_4_8_2_decomposition() {
    // On a fresh power-of-two machine every block size is available, so a
    // request for n nodes is served by exactly the blocks of n written in
    // base 4 (MBS, squares), base 8 (octet, cubes) or base 2 (granular).
    for n in 1..=256u32 {
        let mut m = Mbs::new(topo("mesh:16x16")).unwrap();
        let g = m.allocate(&Request::nodes(n)).unwrap();
        assert_eq!(sizes(g.partition()), digits(u64::from(n), 4), "mbs {n}");
        let mut gm = GranularMbs::new(topo("mesh:16x16")).unwrap();
        let g = gm.allocate(&Request::nodes(n)).unwrap();
        assert_eq!(
            sizes(g.partition()),
            digits(u64::from(n), 2),
            "granular {n}"
        );
    }
    for n in 1..=512u32 {
        let mut o = OctetMbs::new(topo("mesh:8x8x8")).unwrap();
        let g = o.allocate(&Request::nodes(n)).unwrap();
        assert_eq!(sizes(g.partition()), digits(u64::from(n), 8), "octet {n}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// After any history, a request whose every digit finds a free block of
    /// its size or larger is served by its base-4 digits, each block taken
    /// from the free lists (a block of the free lists, or a descendant of
    /// one that was split); only when no block is large enough is a
    /// request split into four.
    #[test]
    fn mbs_serves_the_digits_when_blocks_are_there(
        history in prop::collection::vec((any::<bool>(), 1u32..=64), 0..30),
        n in 1u32..=256,
    ) {
        let t = topo("mesh:16x16");
        let mut m = Mbs::new(t.clone()).unwrap();
        let mut live = Vec::new();
        for (grow, k) in history {
            if grow || live.is_empty() {
                if let Ok(g) = m.allocate(&Request::nodes(k)) {
                    live.push(g);
                }
            } else {
                let g = live.swap_remove(k as usize % live.len());
                m.release(&g).unwrap();
            }
        }
        prop_assume!(u64::from(n) <= m.free_nodes() as u64);
        let before = m.free_blocks();
        // Whether the digits can be served without splitting a request:
        // from the largest digit down, a free block of that size or larger
        // (counting capacity as the free lists would after splits).
        let want = digits(u64::from(n), 4);
        let mut capacity: Vec<(u64, u64)> = before.iter().map(|(s, l)| (*s, l.len() as u64)).collect();
        let mut served = true;
        for &d in &want {
            // Take the smallest free size ≥ d, splitting it down to d.
            let Some(i) = capacity.iter().position(|&(s, c)| s >= d && c > 0) else {
                served = false;
                break;
            };
            capacity[i].1 -= 1;
            let mut s = capacity[i].0;
            while s > d {
                s /= 4;
                if let Some(e) = capacity.iter_mut().find(|e| e.0 == s) {
                    e.1 += 3;
                }
            }
        }
        let g = m.allocate(&Request::nodes(n)).unwrap();
        let got = sizes(g.partition());
        if served {
            prop_assert_eq!(got, want);
        } else {
            // A split request: more, smaller blocks; never a larger one.
            prop_assert!(got.len() > want.len());
            prop_assert!(got[0] <= want[0]);
        }
        // Every granted block lies inside a block that was free before.
        let Partition::Boxes(bs) = g.partition() else { unreachable!() };
        for b in bs {
            prop_assert!(before.iter().any(|(_, l)| l.iter().any(|f| f.contains_box(b))));
        }
    }
}

#[test]
fn tori_are_served_as_the_mesh_of_the_same_sides() {
    for name in ["mbs", "granular-mbs", "octet-mbs", "gabl"] {
        for (mesh, torus) in [("mesh:9x6", "torus:9x6"), ("mesh:4x5x3", "torus:4x5x3")] {
            let mut a = registry::build(name, &topo(mesh)).unwrap();
            let mut b = registry::build(name, &topo(torus)).unwrap();
            for n in [5u32, 17, 3, 9, 1] {
                let (ga, gb) = (
                    a.allocate(&Request::nodes(n)).unwrap(),
                    b.allocate(&Request::nodes(n)).unwrap(),
                );
                assert_eq!(ga.partition(), gb.partition(), "{name} {mesh}");
            }
        }
    }
}

#[test]
fn bad_machines_and_requests_are_typed_errors() {
    for name in ["mbs", "granular-mbs", "octet-mbs", "gabl"] {
        let e = registry::build(name, &topo("mesh:2x2x2x2"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("one to three dimensions"), "{name}: {e}");
        let e = registry::build(name, &topo("hypercube:4"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not run on hypercube:4"), "{name}: {e}");
        let mut a = registry::build(name, &topo("mesh:4x4")).unwrap();
        for bad in [Request::nodes(0), Request::nodes(17)] {
            assert!(
                matches!(a.allocate(&bad), Err(crate::AllocError::Invalid { .. })),
                "{name}"
            );
        }
    }
    // A 3-D box on a 2-D mesh cannot be GABL's shape.
    let mut g = registry::build("gabl", &topo("mesh:4x4")).unwrap();
    let e = g
        .allocate(&Request::boxed(&[1, 1, 2]).unwrap())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid request 1x1x2 box: a 3-D box on a 2-D mesh"
    );
    let e = registry::build("random[seed=-1]", &topo("mesh:4x4"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("seed"), "{e}");
}

#[test]
fn buddy_trees_beyond_the_node_limit_are_refused_before_they_are_built() {
    // 512x512 and 64x64x64 are exactly MAX_BUDDY_NODES; one more row or
    // plane is refused with the limit in the message, and nothing else
    // (gabl, random) is limited by it.
    assert_eq!(super::MAX_BUDDY_NODES, 512 * 512);
    for name in ["mbs", "granular-mbs", "octet-mbs"] {
        for big in ["mesh:512x513", "mesh:64x64x65", "torus:2048x2048"] {
            let e = registry::build(name, &topo(big)).unwrap_err().to_string();
            assert!(e.contains("at most 262144"), "{name} on {big}: {e}");
        }
    }
    registry::build("mbs", &topo("mesh:512x512")).unwrap();
    for name in ["gabl", "random"] {
        registry::build(name, &topo("mesh:512x513")).unwrap();
    }
}
