//! The curves' defining properties and the fits against brute force.

use proptest::prelude::*;

use super::*;
use crate::Grant;
use crate::conformance::{Step, check_script};
use crate::registry;
use proptest::strategy::Strategy;

/// The cells of the curve through a mesh with these sides, in rank order.
fn cells(order: CurveOrder, sides: &[u32]) -> Vec<[i64; 3]> {
    let curve = Curve::new(order, &Grid::mesh(sides).unwrap()).unwrap();
    let [nx, ny, _] = curve.sides().map(i64::from);
    curve
        .nodes()
        .iter()
        .map(|&n| {
            let n = i64::from(n);
            [n % nx, n / nx % ny, n / (nx * ny)]
        })
        .collect()
}

/// (L1, L∞) length of each step of a walk.
fn steps(cs: &[[i64; 3]]) -> Vec<(i64, i64)> {
    cs.windows(2)
        .map(|p| {
            let d = [0, 1, 2].map(|i| (p[0][i] - p[1][i]).abs());
            (d.iter().sum(), d.into_iter().max().unwrap_or(0))
        })
        .collect()
}

/// Every box up to these sides, as side lists (2-D up to 20, 3-D up to 7).
fn boxes() -> Vec<Vec<u32>> {
    let mut v = Vec::new();
    for w in 1..=20 {
        v.push(vec![w]);
        for h in 1..=20 {
            v.push(vec![w, h]);
        }
    }
    for w in 1..=7 {
        for h in 1..=7 {
            for d in 1..=7 {
                v.push(vec![w, h, d]);
            }
        }
    }
    v
}

#[test]
fn every_curve_is_a_bijection_on_any_sides() {
    for sides in boxes() {
        let n: u32 = sides.iter().product();
        for order in CurveOrder::ALL {
            let c = Curve::new(order, &Grid::mesh(&sides).unwrap()).unwrap();
            let mut seen: Vec<u32> = c.nodes().to_vec();
            seen.sort_unstable();
            assert!(seen.iter().copied().eq(0..n), "{order} {sides:?}");
            for (r, &node) in c.nodes().iter().enumerate() {
                assert_eq!(c.rank_of(node), Some(r as u32), "{order} {sides:?}");
            }
            assert_eq!((c.node_at(n), c.rank_of(n)), (None, None));
        }
    }
}

#[test]
fn row_major_is_id_order_and_snake_steps_to_neighbours() {
    for sides in boxes() {
        let c = Curve::new(CurveOrder::RowMajor, &Grid::mesh(&sides).unwrap()).unwrap();
        assert!(c.nodes().iter().copied().eq(0..c.len() as u32));
        let snake = cells(CurveOrder::Snake, &sides);
        assert!(steps(&snake).iter().all(|&(l1, _)| l1 == 1), "{sides:?}");
        assert_eq!(snake[0], [0, 0, 0]);
    }
    // 3×2×2: row 0 east, row 1 west, then plane 1 from row 1 back to row 0.
    let s = cells(CurveOrder::Snake, &[3, 2, 2]);
    let want = [
        [0, 0, 0],
        [1, 0, 0],
        [2, 0, 0],
        [2, 1, 0],
        [1, 1, 0],
        [0, 1, 0],
        [0, 1, 1],
        [1, 1, 1],
        [2, 1, 1],
        [2, 0, 1],
        [1, 0, 1],
        [0, 0, 1],
    ];
    assert_eq!(s, want);
}

/// On power-of-two sides the walk is a Hilbert curve: it starts at the
/// origin, every step goes to a neighbour, and every aligned sub-square or
/// sub-cube of side 2^j (j up to the smallest side's exponent) is one
/// interval of ranks.
#[test]
fn hilbert_on_power_of_two_sides_is_a_hilbert_curve() {
    let mut shapes: Vec<Vec<u32>> = Vec::new();
    for a in 0..=5 {
        for b in 0..=5 {
            shapes.push(vec![1 << a, 1 << b]);
        }
    }
    for a in 0..=3 {
        for b in 0..=3 {
            for c in 0..=3 {
                shapes.push(vec![1 << a, 1 << b, 1 << c]);
            }
        }
    }
    for sides in shapes {
        let cs = cells(CurveOrder::Hilbert, &sides);
        assert_eq!(cs[0], [0, 0, 0], "{sides:?}");
        assert!(steps(&cs).iter().all(|&(l1, _)| l1 == 1), "{sides:?}");
        let min = *sides.iter().min().unwrap();
        let mut j = 1;
        while j <= min {
            // Rank range of each aligned block of side j.
            let mut span = std::collections::HashMap::new();
            for (r, c) in cs.iter().enumerate() {
                let key = c.map(|x| x / i64::from(j));
                let e = span.entry(key).or_insert((r, r, 0usize));
                e.0 = e.0.min(r);
                e.1 = e.1.max(r);
                e.2 += 1;
            }
            for (lo, hi, n) in span.into_values() {
                assert_eq!(hi - lo + 1, n, "{sides:?}, blocks of side {j}");
            }
            j *= 2;
        }
    }
}

/// On other sides every step is to a neighbour or a diagonal one. In 2-D
/// a diagonal step occurs exactly once when the longer side is odd and
/// the shorter even and at least 4 (no walk between the two corners of
/// the long side exists then, and the cut needs one), never otherwise; in
/// 3-D boxes with even sides take none.
#[test]
fn hilbert_on_other_sides_steps_at_most_diagonally() {
    for sides in boxes() {
        let st = steps(&cells(CurveOrder::Hilbert, &sides));
        assert!(st.iter().all(|&(_, linf)| linf == 1), "{sides:?}");
        let diagonal = st.iter().filter(|&&(l1, _)| l1 > 1).count();
        match sides.as_slice() {
            [w, h] => {
                let (long, short) = (w.max(h), w.min(h));
                let forced = long % 2 == 1 && short % 2 == 0 && *short > 2;
                assert_eq!(diagonal, usize::from(forced), "{sides:?}");
            }
            [w, h, d] if w % 2 == 0 && h % 2 == 0 && d % 2 == 0 => {
                assert_eq!(diagonal, 0, "{sides:?}");
            }
            _ => {}
        }
    }
}

#[test]
fn curves_refuse_machines_they_do_not_fit_with_typed_errors() {
    let four_d = Grid::mesh(&[2, 2, 2, 2]).unwrap();
    assert_eq!(
        Curve::new(CurveOrder::Hilbert, &four_d),
        Err(CurveError::Dimensions { dims: 4 })
    );
    let huge = Grid::mesh(&[1 << 14, 1 << 13]).unwrap();
    assert!(matches!(
        Curve::new(CurveOrder::Snake, &huge),
        Err(CurveError::TooLarge { .. })
    ));
    let mesh4: Topology = "mesh:2x2x2x2".parse().unwrap();
    let e = registry::build("curve-best-fit", &mesh4).unwrap_err();
    assert!(
        matches!(&e, BuildError::UnsuitableTopology { strategy, .. } if *strategy == "curve-best-fit"),
        "{e}"
    );
    assert!(e.to_string().contains("1 to 3 dimensions"), "{e}");
    let cube: Topology = "hypercube:4".parse().unwrap();
    assert!(matches!(
        registry::build("curve-first-fit", &cube),
        Err(BuildError::UnsupportedTopology(_))
    ));
    let mesh: Topology = "mesh:4x4".parse().unwrap();
    let e = registry::build("curve-first-fit[order=peano]", &mesh).unwrap_err();
    assert!(matches!(e, BuildError::Spec(_)), "{e}");
    assert!(
        e.to_string()
            .contains("expected hilbert, row-major or snake"),
        "{e}"
    );
    let pod: Topology = "pod:tpu-v4:4x4x4".parse().unwrap();
    assert!(matches!(
        CurveAllocator::new(pod, CurveOrder::Hilbert, Fit::FirstFit),
        Err(BuildError::UnsuitableTopology { .. })
    ));
}

/// What a fit must choose, computed from a plain list of free ranks.
fn brute_force(fit: Fit, free: &[bool], k: usize) -> Vec<usize> {
    let ranks: Vec<usize> = (0..free.len()).filter(|&r| free[r]).collect();
    // Maximal runs of consecutive free ranks.
    let mut intervals: Vec<Vec<usize>> = Vec::new();
    for &r in &ranks {
        match intervals.last_mut() {
            Some(run) if *run.last().unwrap() + 1 == r => run.push(r),
            _ => intervals.push(vec![r]),
        }
    }
    let fitting = intervals.iter().filter(|i| i.len() >= k);
    let pick = match fit {
        Fit::SortedFreeList => return ranks[..k].to_vec(),
        Fit::FirstFit => fitting.min_by_key(|i| i[0]),
        Fit::BestFit => fitting.min_by_key(|i| (i.len(), i[0])),
    };
    match pick {
        Some(i) => i[..k].to_vec(),
        None => {
            // Every window of k free ranks; the smallest span, then the earliest.
            let w = (0..=ranks.len() - k)
                .min_by_key(|&s| (ranks[s + k - 1] - ranks[s], s))
                .unwrap();
            ranks[w..w + k].to_vec()
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Allocate(u32),
    Release(usize),
    Fault(u32),
    Repair(u32),
}

fn ops(nodes: u32) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        5 => (1..=nodes / 2 + 1).prop_map(Op::Allocate),
        3 => any::<usize>().prop_map(Op::Release),
        1 => (0..nodes).prop_map(Op::Fault),
        1 => (0..nodes).prop_map(Op::Repair),
    ];
    proptest::collection::vec(op, 1..60)
}

fn machine() -> impl Strategy<Value = (Vec<u32>, CurveOrder, Fit)> {
    let sides = prop_oneof![
        (1u32..=12, 1u32..=12).prop_map(|(a, b)| vec![a, b]),
        (1u32..=5, 1u32..=5, 1u32..=5).prop_map(|(a, b, c)| vec![a, b, c]),
        (1u32..=150).prop_map(|a| vec![a]),
    ];
    let order = prop_oneof![
        Just(CurveOrder::RowMajor),
        Just(CurveOrder::Snake),
        Just(CurveOrder::Hilbert)
    ];
    let fit = prop_oneof![
        Just(Fit::FirstFit),
        Just(Fit::BestFit),
        Just(Fit::SortedFreeList)
    ];
    (sides, order, fit)
}

proptest! {
    /// Every grant is what the fit's definition picks from the list of
    /// free intervals (brute force over the free ranks), on states reached
    /// by random allocations, releases, faults and repairs; the rank bitset
    /// stays the available nodes.
    #[test]
    fn fits_choose_what_brute_force_over_free_intervals_chooses(
        ((sides, order, fit), script) in machine()
            .prop_flat_map(|m| {
                let n: u32 = m.0.iter().product();
                (Just(m), ops(n))
            })
    ) {
        let topology = Topology::Grid(Grid::mesh(&sides).unwrap());
        let mut a = CurveAllocator::new(topology, order, fit).unwrap();
        let curve = a.curve().clone();
        let n = curve.len();
        let mut live: Vec<Grant> = Vec::new();
        for op in script {
            let free: Vec<bool> = curve.nodes().iter().map(|&v| a.is_available(v)).collect();
            match op {
                Op::Allocate(k) => {
                    let k = k as usize;
                    let got = a.allocate(&Request::nodes(k as u32));
                    if k > free.iter().filter(|&&f| f).count() {
                        let refused = matches!(got, Err(AllocError::NoRoom { .. }));
                        prop_assert!(refused);
                        continue;
                    }
                    let g = got.unwrap();
                    let mut want: Vec<u32> = brute_force(fit, &free, k)
                        .into_iter()
                        .map(|r| curve.nodes()[r])
                        .collect();
                    want.sort_unstable();
                    prop_assert_eq!(g.partition(), &Partition::Nodes(want));
                    live.push(g);
                }
                Op::Release(i) if !live.is_empty() => {
                    let g = live.swap_remove(i % live.len());
                    a.release(&g).unwrap();
                }
                Op::Release(_) => {}
                Op::Fault(v) => drop(a.mark_faulty(v)),
                Op::Repair(v) => drop(a.repair(v)),
            }
            for r in 0..n {
                prop_assert_eq!(a.free.contains(r as u32), a.is_available(curve.nodes()[r]));
            }
        }
    }

    /// The allocator contract, through the registry's names.
    #[test]
    fn curve_allocators_keep_the_allocator_contract(
        ((sides, order, fit), steps) in machine().prop_flat_map(|m| {
            let n: u32 = m.0.iter().product();
            let step = prop_oneof![
                4 => (1..=n / 2 + 1).prop_map(|k| Step::Allocate(Request::nodes(k))),
                1 => Just(Step::Allocate(Request::boxed(&[2, 2]).unwrap())),
                1 => Just(Step::Allocate(Request::nodes(0))),
                1 => Just(Step::Allocate(Request::nodes(n + 1))),
                3 => (0usize..16).prop_map(Step::Release),
                1 => (0usize..16).prop_map(Step::ReleaseTwice),
                1 => (0..n + 2).prop_map(Step::MarkFaulty),
                1 => (0..n + 2).prop_map(Step::Repair),
            ];
            (Just(m), proptest::collection::vec(step, 1..40))
        })
    ) {
        let topology = Topology::Grid(Grid::mesh(&sides).unwrap());
        let name = CurveAllocator::new(topology.clone(), order, fit).unwrap().name();
        let mut a = registry::build(&name, &topology).unwrap();
        prop_assert_eq!(a.name(), name);
        if let Err(v) = check_script(a.as_mut(), &steps) {
            return Err(TestCaseError::fail(v.to_string()));
        }
    }
}

#[test]
fn a_torus_is_walked_as_the_mesh_of_the_same_sides() {
    for order in CurveOrder::ALL {
        let mesh = Curve::new(order, &Grid::mesh(&[6, 5, 3]).unwrap()).unwrap();
        let torus = Curve::new(order, &Grid::torus(&[6, 5, 3]).unwrap()).unwrap();
        assert_eq!(mesh, torus);
    }
    let t: Topology = "torus:8x8".parse().unwrap();
    assert!(registry::build("curve-sorted-free-list", &t).is_ok());
}

#[test]
fn no_interval_long_enough_takes_the_smallest_span() {
    // 1-D, row-major: free ranks 0 2 3 5 7 8 9 12 (intervals of 1, 2, 1, 3, 1).
    let t: Topology = "mesh:13".parse().unwrap();
    for fit in [Fit::FirstFit, Fit::BestFit] {
        let mut a = CurveAllocator::new(t.clone(), CurveOrder::RowMajor, fit).unwrap();
        for v in [1, 4, 6, 10, 11] {
            a.mark_faulty(v).unwrap();
        }
        // Four nodes: windows 0-5 (span 5), 2-7 (5), 3-8 (5), 5-9 (4), 7-12 (5).
        let g = a.allocate(&Request::nodes(4)).unwrap();
        assert_eq!(g.partition(), &Partition::Nodes(vec![5, 7, 8, 9]));
        a.release(&g).unwrap();
        // Three: 7 8 9 is an interval; best and first fit both take it.
        let g = a.allocate(&Request::nodes(3)).unwrap();
        assert_eq!(g.partition(), &Partition::Nodes(vec![7, 8, 9]));
        a.release(&g).unwrap();
        // Two: first fit takes 2 3, best fit too (the shortest that fits).
        let g = a.allocate(&Request::nodes(2)).unwrap();
        assert_eq!(g.partition(), &Partition::Nodes(vec![2, 3]));
    }
    let mut sfl = CurveAllocator::new(t, CurveOrder::RowMajor, Fit::SortedFreeList).unwrap();
    sfl.mark_faulty(1).unwrap();
    let g = sfl.allocate(&Request::nodes(4)).unwrap();
    assert_eq!(g.partition(), &Partition::Nodes(vec![0, 2, 3, 4]));
}

#[test]
fn sorted_free_list_on_row_major_is_paging() {
    let t: Topology = "mesh:7x9".parse().unwrap();
    let mut a = CurveAllocator::new(t.clone(), CurveOrder::RowMajor, Fit::SortedFreeList).unwrap();
    let mut p = crate::paging::Paging::new(t).unwrap();
    let mut live = Vec::new();
    for (i, k) in [5u32, 9, 1, 13, 2, 8, 8, 3, 20].into_iter().enumerate() {
        let (ga, gp) = (
            a.allocate(&Request::nodes(k)),
            p.allocate(&Request::nodes(k)),
        );
        assert_eq!(
            ga.as_ref().map(Grant::partition),
            gp.as_ref().map(Grant::partition)
        );
        if let (Ok(ga), Ok(gp)) = (ga, gp) {
            live.push((ga, gp));
        }
        if i % 3 == 2 {
            let (ga, gp) = live.remove(0);
            a.release(&ga).unwrap();
            p.release(&gp).unwrap();
        }
    }
}
