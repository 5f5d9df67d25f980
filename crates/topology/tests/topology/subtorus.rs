//! Gupta & Srimani (TR CS-97-103) §2.1: strided subtori, spans and
//! link-disjointness, checked against link sets computed by walking the
//! torus for every small torus and every stride.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap values that are valid by construction"
)]

use std::collections::BTreeSet;

use partalloc_topology::{Grid, Link, NodeId, Subtorus, SubtorusFamily, TopologyError};

/// Every (N1, N2) with sides up to `max`.
fn tori(max: u32) -> impl Iterator<Item = Grid> {
    (1..=max).flat_map(move |a| (1..=max).map(move |b| Grid::torus(&[a, b]).unwrap()))
}

fn divisors(n: u32) -> Vec<u32> {
    (1..=n).filter(|&k| n.is_multiple_of(k)).collect()
}

fn all_strides(t: &Grid) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for &side in t.sides().iter() {
        out = out
            .into_iter()
            .flat_map(|p| {
                divisors(side).into_iter().map(move |k| {
                    let mut q = p.clone();
                    q.push(k);
                    q
                })
            })
            .collect();
    }
    out
}

/// The subtorus's nodes by filtering every node of the torus.
fn brute_nodes(t: &Grid, k: &[u32], a: &[u32]) -> Vec<NodeId> {
    (0..t.num_nodes() as NodeId)
        .filter(|&n| {
            let c = t.coords_of(n).unwrap();
            (0..c.len()).all(|d| c[d] % k[d] == a[d])
        })
        .collect()
}

/// The links used by a subtorus, from the paper's definitions: the
/// subtorus has an edge from each node to the next subtorus node along
/// every dimension where it has at least two nodes, and that edge spans the
/// K_d unit steps between them, each of which must be a link of the torus.
fn brute_links(t: &Grid, k: &[u32], a: &[u32]) -> BTreeSet<Link> {
    let mut links = BTreeSet::new();
    for n in brute_nodes(t, k, a) {
        for d in 0..t.dims() {
            if t.sides()[d] / k[d] < 2 {
                continue;
            }
            let mut c = t.coords_of(n).unwrap();
            for _ in 0..k[d] {
                let u = t.id_of(&c).unwrap();
                c[d] = (c[d] + 1) % t.sides()[d];
                let v = t.id_of(&c).unwrap();
                assert!(t.neighbours(u).unwrap().contains(&v), "{u}-{v} is a link");
                links.insert(Link::new(u, v));
            }
        }
    }
    links
}

#[test]
fn gupta_t8x8_example() {
    // T_{8×8}, K1 = K2 = 2: four 4×4 subtori; (0,0)/(1,1) and (1,0)/(0,1) are
    // link-disjoint, (0,1)/(1,1) are not; two sets of two.
    let t = Grid::torus(&[8, 8]).unwrap();
    let f = SubtorusFamily::new(&t, &[2, 2]).unwrap();
    let s = |a: u32, b: u32| f.subtorus(&[a, b]).unwrap();
    assert_eq!(f.len(), 4);
    for sub in f.iter() {
        assert_eq!(sub.shape().as_slice(), &[4, 4]);
        assert_eq!(sub.num_nodes(), 16);
    }
    assert!(s(0, 0).is_link_disjoint(&s(1, 1)).unwrap());
    assert!(s(1, 0).is_link_disjoint(&s(0, 1)).unwrap());
    assert!(!s(0, 1).is_link_disjoint(&s(1, 1)).unwrap());
    assert_eq!(f.num_disjoint_sets(), 2);
    assert_eq!(f.set_size(), 2);
    assert_eq!(
        f.disjoint_sets(),
        vec![vec![s(0, 0), s(1, 1)], vec![s(1, 0), s(0, 1)]]
    );
    // The four subtori partition the 64 nodes.
    let mut all: Vec<NodeId> = f.iter().flat_map(|x| x.nodes()).collect();
    all.sort_unstable();
    assert_eq!(all, (0..64).collect::<Vec<_>>());
    // §2.2's example: T^(0,0) and T^(0,1) "compete for the row links": the
    // links they share all run along j (dimension 1), in rows i ≡ 0 (mod 2).
    let l00: BTreeSet<Link> = s(0, 0).links().collect();
    let l01: BTreeSet<Link> = s(0, 1).links().collect();
    let shared: Vec<&Link> = l00.intersection(&l01).collect();
    assert_eq!(shared.len(), 4 * 8, "rows 0, 2, 4, 6, eight links each");
    for l in shared {
        let (u, v) = l.endpoints();
        let (cu, cv) = (t.coords_of(u).unwrap(), t.coords_of(v).unwrap());
        assert_eq!(cu[0], cv[0]);
        assert_eq!(cu[0] % 2, 0);
    }
    // Each 4×4 subtorus edge spans two links; 32 edges, 64 links.
    assert_eq!(s(0, 0).num_edges(), 32);
    assert_eq!(l00.len(), 64);
}

#[test]
fn nodes_edges_and_spans_agree_with_walking_the_torus() {
    for t in tori(6) {
        for k in all_strides(&t) {
            let f = SubtorusFamily::new(&t, &k).unwrap();
            for s in f.iter() {
                let a = s.offset().to_vec();
                assert_eq!(
                    s.nodes().collect::<Vec<_>>(),
                    brute_nodes(&t, &k, &a),
                    "{s}"
                );
                for n in 0..t.num_nodes() as NodeId {
                    assert_eq!(s.contains(n), brute_nodes(&t, &k, &a).contains(&n));
                    if let Some(local) = s.local_coords(n) {
                        assert_eq!(s.node_at(&local).unwrap(), n);
                    }
                }
                let mut edges = 0;
                for e in s.edges() {
                    edges += 1;
                    let span: Vec<Link> = s.span(&e).unwrap().collect();
                    assert_eq!(span.len() as u32, k[e.dim()]);
                    // A span is a path from `from` to `to` along the dimension.
                    let path: BTreeSet<NodeId> = span
                        .iter()
                        .flat_map(|l| [l.endpoints().0, l.endpoints().1])
                        .collect();
                    assert!(path.contains(&e.from()) && path.contains(&e.to()));
                }
                assert_eq!(edges, s.num_edges());
                let links: Vec<Link> = s.links().collect();
                let set: BTreeSet<Link> = links.iter().copied().collect();
                assert_eq!(set.len(), links.len(), "links() lists each link once: {s}");
                assert_eq!(set, brute_links(&t, &k, &a), "{s}");
            }
        }
    }
}

#[test]
fn link_disjointness_agrees_with_link_sets_and_remark_1() {
    let mut remark_cases = 0;
    for t in tori(8) {
        let subtori: Vec<Subtorus> = all_strides(&t)
            .iter()
            .flat_map(|k| SubtorusFamily::new(&t, k).unwrap().iter())
            .collect();
        let links: Vec<BTreeSet<Link>> = subtori.iter().map(|s| s.links().collect()).collect();
        for (i, s) in subtori.iter().enumerate() {
            for (j, u) in subtori.iter().enumerate() {
                let disjoint = links[i].is_disjoint(&links[j]);
                assert_eq!(s.is_link_disjoint(u).unwrap(), disjoint, "{s} vs {u}");
                let nondegenerate = s.shape().iter().all(|&m| m >= 2);
                if s.strides() == u.strides() && nondegenerate {
                    // Remark 1: link-disjoint iff a1 ≠ a2 and b1 ≠ b2.
                    let remark = s.offset()[0] != u.offset()[0] && s.offset()[1] != u.offset()[1];
                    assert_eq!(disjoint, remark, "{s} vs {u}");
                    remark_cases += 1;
                }
            }
        }
    }
    assert!(remark_cases > 1000);
}

#[test]
fn remark_1_fails_only_for_single_node_sides() {
    // T_{2×4} with K = (2, 2): subtori are 1×2 rings (a single node along
    // dimension 0). T^(0,0) and T^(1,0) have a1 ≠ a2 but b1 = b2, so Remark 1
    // calls them not link-disjoint; they lie in different rows and use no
    // column links, so they share nothing.
    let t = Grid::torus(&[2, 4]).unwrap();
    let s0 = Subtorus::new(&t, &[2, 2], &[0, 0]).unwrap();
    let s1 = Subtorus::new(&t, &[2, 2], &[1, 0]).unwrap();
    let l0: BTreeSet<Link> = s0.links().collect();
    let l1: BTreeSet<Link> = s1.links().collect();
    assert_eq!(l0.len(), 4);
    assert!(l0.is_disjoint(&l1));
    assert!(s0.is_link_disjoint(&s1).unwrap());
    // T_{4×4}, K = (4, 2): the four subtori with b = 0 lie in four different
    // rows, so more than min(K1, K2) = 2 of them are pairwise link-disjoint.
    let t = Grid::torus(&[4, 4]).unwrap();
    let f = SubtorusFamily::new(&t, &[4, 2]).unwrap();
    let column: Vec<Subtorus> = (0..4).map(|a| f.subtorus(&[a, 0]).unwrap()).collect();
    assert_eq!(max_disjoint_set(&f.iter().collect::<Vec<_>>()), 4);
    for (i, s) in column.iter().enumerate() {
        for u in &column[i + 1..] {
            assert!(s.is_link_disjoint(u).unwrap());
        }
    }
}

/// The largest set of pairwise link-disjoint subtori, by exhaustive search.
fn max_disjoint_set(subtori: &[Subtorus]) -> usize {
    fn grow(subtori: &[Subtorus], chosen: &mut Vec<usize>, from: usize) -> usize {
        let mut best = chosen.len();
        for i in from..subtori.len() {
            if chosen
                .iter()
                .all(|&c| subtori[c].is_link_disjoint(&subtori[i]).unwrap())
            {
                chosen.push(i);
                best = best.max(grow(subtori, chosen, i + 1));
                chosen.pop();
            }
        }
        best
    }
    grow(subtori, &mut Vec::new(), 0)
}

#[test]
fn partition_into_max_k_sets_of_min_k_link_disjoint_subtori() {
    for t in tori(8) {
        for k in all_strides(&t) {
            let f = SubtorusFamily::new(&t, &k).unwrap();
            let sets = f.disjoint_sets();
            assert_eq!(sets.len(), k[0].max(k[1]) as usize);
            let mut seen = BTreeSet::new();
            for set in &sets {
                assert_eq!(set.len(), k[0].min(k[1]) as usize);
                assert_eq!(set.len(), f.set_size());
                for (i, s) in set.iter().enumerate() {
                    assert!(seen.insert(s.offset().to_vec()), "each subtorus once");
                    assert_eq!(
                        f.disjoint_set_of(s.offset()).unwrap(),
                        sets.iter().position(|x| x == set).unwrap()
                    );
                    for u in &set[i + 1..] {
                        assert!(s.is_link_disjoint(u).unwrap(), "{s} vs {u}");
                    }
                }
            }
            assert_eq!(seen.len(), f.len());
            let all: Vec<Subtorus> = f.iter().collect();
            let nondegenerate = all[0].shape().iter().all(|&m| m >= 2);
            if nondegenerate {
                // A maximal set has min(K1, K2) subtori, and the subtori with
                // the same offset along the smaller stride pairwise share
                // links, so no partition uses fewer than max(K1, K2) sets.
                assert_eq!(max_disjoint_set(&all), f.set_size());
                let big = if k[0] >= k[1] { 0 } else { 1 };
                let line: Vec<&Subtorus> =
                    all.iter().filter(|s| s.offset()[1 - big] == 0).collect();
                assert_eq!(line.len(), f.num_disjoint_sets());
                for (i, s) in line.iter().enumerate() {
                    for u in &line[i + 1..] {
                        assert!(!s.is_link_disjoint(u).unwrap());
                    }
                }
            }
        }
    }
}

#[test]
fn three_dimensional_partition_is_link_disjoint() {
    let t = Grid::torus(&[4, 6, 4]).unwrap();
    for k in all_strides(&t) {
        let f = SubtorusFamily::new(&t, &k).unwrap();
        let links: Vec<(Subtorus, BTreeSet<Link>)> =
            f.iter().map(|s| (s, s.links().collect())).collect();
        for (i, (s, ls)) in links.iter().enumerate() {
            for (u, lu) in &links[i + 1..] {
                assert_eq!(s.is_link_disjoint(u).unwrap(), ls.is_disjoint(lu));
            }
        }
        let sets = f.disjoint_sets();
        assert_eq!(sets.len(), *k.iter().max().unwrap() as usize);
        for set in sets {
            assert_eq!(set.len(), f.set_size());
            for (i, s) in set.iter().enumerate() {
                for u in &set[i + 1..] {
                    assert!(s.is_link_disjoint(u).unwrap(), "{s} vs {u}");
                }
            }
        }
    }
}

#[test]
fn invalid_subtori_are_rejected() {
    let t = Grid::torus(&[8, 6]).unwrap();
    let m = Grid::mesh(&[8, 6]).unwrap();
    assert!(matches!(
        Subtorus::new(&m, &[2, 2], &[0, 0]),
        Err(TopologyError::NotATorus { .. })
    ));
    assert_eq!(
        Subtorus::new(&t, &[3, 2], &[0, 0]),
        Err(TopologyError::InvalidStride {
            dim: 0,
            side: 8,
            stride: 3
        })
    );
    assert!(matches!(
        SubtorusFamily::new(&t, &[2, 0]),
        Err(TopologyError::InvalidStride {
            dim: 1,
            stride: 0,
            ..
        })
    ));
    assert!(matches!(
        Subtorus::new(&t, &[2, 2], &[0, 2]),
        Err(TopologyError::CoordinateOutOfRange {
            dim: 1,
            value: 2,
            side: 2
        })
    ));
    assert!(matches!(
        Subtorus::new(&t, &[2], &[0, 0]),
        Err(TopologyError::DimensionMismatch {
            expected: 2,
            got: 1
        })
    ));
    assert!(matches!(
        Subtorus::new(&t, &[2, 2], &[0]),
        Err(TopologyError::DimensionMismatch {
            expected: 2,
            got: 1
        })
    ));
    let s = Subtorus::new(&t, &[2, 2], &[1, 0]).unwrap();
    assert!(matches!(
        s.edge(0, 0),
        Err(TopologyError::NoSuchEdge { .. })
    ));
    assert!(matches!(
        s.edge(1, 2),
        Err(TopologyError::NoSuchEdge { .. })
    ));
    assert!(s.node_at(&[4, 0]).is_err());
    assert_eq!(s.local_coords(0), None);
    assert!(!s.contains(1000));
    let other = Subtorus::new(&Grid::torus(&[8, 8]).unwrap(), &[2, 2], &[0, 0]).unwrap();
    assert!(matches!(
        s.is_link_disjoint(&other),
        Err(TopologyError::MachineMismatch { .. })
    ));
    // An edge of another subtorus has no span here.
    let e = other.edges().next().unwrap();
    assert!(s.span(&e).is_err());
    // A subtorus with one node along dimension 1 has no edge there.
    let row = Subtorus::new(&t, &[1, 6], &[0, 3]).unwrap();
    assert_eq!(row.num_edges(), 8);
    assert!(row.edge(row.node_at(&[0, 0]).unwrap(), 1).is_err());
}
