//! Property tests of the machines and their partitions against brute force:
//! addressing round trips, distances against breadth-first search over
//! `neighbours`, link counts, diameters, and box and subcube set relations
//! against explicit node sets.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap values that are valid by construction"
)]

#[path = "machines/slurm_hostlists.rs"]
mod slurm_hostlists;

use std::collections::{BTreeSet, VecDeque};

use partalloc_topology::{Grid, GridBox, Hypercube, NodeId, Subcube, Topology};
use proptest::prelude::*;

/// Hop counts from `src` to every node, by BFS over `neighbours`.
fn bfs(t: &Topology, src: NodeId) -> Vec<u32> {
    let mut dist = vec![u32::MAX; t.num_nodes()];
    dist[src as usize] = 0;
    let mut queue = VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
        for v in t.neighbours(u).unwrap() {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    dist
}

fn grid_strategy(max_side: u32) -> impl Strategy<Value = Grid> {
    (prop::collection::vec(1..=max_side, 1..=4), any::<bool>())
        .prop_map(|(sides, wrap)| Grid::new(&sides, wrap).unwrap())
}

/// Small machines: meshes, tori (1..=4 dimensions) and hypercubes.
fn machine() -> impl Strategy<Value = Topology> {
    prop_oneof![
        grid_strategy(5).prop_map(Topology::from),
        (0u32..=6).prop_map(|n| Topology::from(Hypercube::new(n).unwrap())),
    ]
}

/// Every machine checked exhaustively.
fn small_machines() -> Vec<Topology> {
    let mut out: Vec<Topology> = (0..=5).map(|n| Hypercube::new(n).unwrap().into()).collect();
    for sides in [
        vec![1],
        vec![2],
        vec![7],
        vec![1, 1],
        vec![2, 2],
        vec![3, 4],
        vec![5, 5],
        vec![2, 3, 4],
        vec![3, 3, 3],
        vec![2, 1, 2, 3],
    ] {
        out.push(Grid::mesh(&sides).unwrap().into());
        out.push(Grid::torus(&sides).unwrap().into());
    }
    out
}

#[test]
fn distance_is_the_bfs_hop_count_and_diameter_the_largest() {
    for t in small_machines() {
        let mut diameter = 0;
        for a in 0..t.num_nodes() as NodeId {
            let hops = bfs(&t, a);
            for b in 0..t.num_nodes() as NodeId {
                assert_eq!(t.distance(a, b).unwrap(), hops[b as usize], "{t} {a} {b}");
                diameter = diameter.max(hops[b as usize]);
            }
        }
        assert_eq!(t.diameter(), diameter, "{t}");
    }
}

#[test]
fn links_are_half_the_neighbour_list_lengths() {
    for t in small_machines() {
        let mut degree_sum = 0u64;
        for u in 0..t.num_nodes() as NodeId {
            let ns = t.neighbours(u).unwrap();
            let distinct: BTreeSet<_> = ns.iter().collect();
            assert_eq!(distinct.len(), ns.len(), "no repeated neighbour");
            assert!(!ns.contains(&u), "no loop");
            for &v in &ns {
                assert!(t.neighbours(v).unwrap().contains(&u), "symmetric");
            }
            degree_sum += ns.len() as u64;
        }
        assert_eq!(t.num_links() * 2, degree_sum, "{t}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ids_and_coordinates_round_trip(g in grid_strategy(9), salt in any::<u32>()) {
        let n = g.num_nodes() as u32;
        let id = salt % n;
        let c = g.coords_of(id).unwrap();
        prop_assert_eq!(g.id_of(&c).unwrap(), id);
        // Dimension 0 varies fastest: id = Σ c_i Π_{j<i} k_j.
        let mut expect = 0u64;
        let mut stride = 1u64;
        for (&ci, &k) in c.iter().zip(g.sides().iter()) {
            prop_assert!(ci < k);
            expect += u64::from(ci) * stride;
            stride *= u64::from(k);
        }
        prop_assert_eq!(expect, u64::from(id));
        prop_assert!(g.coords_of(n).is_err());
        let mut bad = c;
        bad[0] = g.sides()[0];
        prop_assert!(g.id_of(&bad).is_err());
        prop_assert!(g.id_of(&c[..c.len() - 1]).is_err() || c.len() == 1);
    }

    #[test]
    fn distance_is_a_metric(t in machine(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
        let n = t.num_nodes() as u32;
        let (a, b, c) = (a % n, b % n, c % n);
        let d = |x, y| t.distance(x, y).unwrap();
        prop_assert_eq!(d(a, b), d(b, a));
        prop_assert_eq!(d(a, b) == 0, a == b);
        prop_assert!(d(a, c) <= d(a, b) + d(b, c));
        prop_assert!(d(a, b) <= t.diameter());
        prop_assert!(t.distance(a, n).is_err());
    }

    #[test]
    fn bfs_agrees_on_random_machines(t in machine(), src in any::<u32>()) {
        let src = src % t.num_nodes() as u32;
        let hops = bfs(&t, src);
        for (b, &h) in hops.iter().enumerate() {
            prop_assert_eq!(t.distance(src, b as NodeId).unwrap(), h);
        }
        // The diameter is the largest BFS eccentricity.
        let ecc = (0..t.num_nodes() as NodeId)
            .map(|s| bfs(&t, s).into_iter().max().unwrap_or(0))
            .max()
            .unwrap_or(0);
        prop_assert_eq!(t.diameter(), ecc);
    }
}

fn boxed(g: &Grid) -> impl Strategy<Value = GridBox> + use<> {
    let sides = g.sides().to_vec();
    sides
        .iter()
        .map(|&s| (0..s).prop_flat_map(move |b| (Just(b), 1..=s - b)))
        .collect::<Vec<_>>()
        .prop_map(|parts| {
            let (base, ext): (Vec<u32>, Vec<u32>) = parts.into_iter().unzip();
            GridBox::new(&base, &ext).unwrap()
        })
}

fn node_set(g: &Grid, b: &GridBox) -> BTreeSet<NodeId> {
    (0..g.num_nodes() as NodeId)
        .filter(|&n| b.contains_point(&g.coords_of(n).unwrap()))
        .collect()
}

fn grid_and_boxes() -> impl Strategy<Value = (Grid, GridBox, GridBox)> {
    grid_strategy(6).prop_flat_map(|g| (Just(g), boxed(&g), boxed(&g)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn boxes_agree_with_node_sets((g, a, b) in grid_and_boxes()) {
        let (na, nb) = (node_set(&g, &a), node_set(&g, &b));
        prop_assert_eq!(na.len() as u64, a.volume());
        prop_assert_eq!(g.box_nodes(&a).unwrap().collect::<BTreeSet<_>>(), na.clone());
        prop_assert_eq!(a.overlaps(&b), !na.is_disjoint(&nb));
        prop_assert_eq!(a.contains_box(&b), nb.is_subset(&na));
        let common: BTreeSet<NodeId> = na.intersection(&nb).copied().collect();
        match a.intersection(&b) {
            Some(i) => prop_assert_eq!(node_set(&g, &i), common),
            None => prop_assert!(common.is_empty()),
        }
        // Ids come out increasing.
        let ids: Vec<NodeId> = g.box_nodes(&a).unwrap().collect();
        prop_assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
}

fn subcube(n: u32) -> impl Strategy<Value = Subcube> {
    let m = (1u32 << n) - 1;
    (0..=m, 0..=m).prop_map(move |(free, fixed)| Subcube::new(n, free, fixed).unwrap())
}

fn cube_and_subcubes() -> impl Strategy<Value = (Subcube, Subcube)> {
    (0u32..=6).prop_flat_map(|n| (subcube(n), subcube(n)))
}

/// The nodes of a subcube by matching its ternary address character by
/// character against every node's binary address.
fn address_nodes(s: &Subcube) -> BTreeSet<NodeId> {
    let n = s.cube_dim();
    let addr: Vec<char> = s.to_string().chars().collect();
    (0..1u32 << n)
        .filter(|&v| {
            (0..n).all(|i| {
                let bit = v >> (n - 1 - i) & 1;
                match addr[i as usize] {
                    'X' => true,
                    '1' => bit == 1,
                    _ => bit == 0,
                }
            })
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn subcubes_agree_with_node_sets((a, b) in cube_and_subcubes()) {
        let (na, nb) = (address_nodes(&a), address_nodes(&b));
        let listed: Vec<NodeId> = a.nodes().collect();
        prop_assert!(listed.windows(2).all(|w| w[0] < w[1]));
        prop_assert_eq!(listed.iter().copied().collect::<BTreeSet<_>>(), na.clone());
        prop_assert_eq!(na.len() as u64, a.len());
        prop_assert_eq!(a.overlaps(&b), !na.is_disjoint(&nb));
        prop_assert_eq!(a.is_within(&b), na.is_subset(&nb));
        for v in 0..1u32 << a.cube_dim() {
            prop_assert_eq!(a.contains(v), na.contains(&v));
        }
        // The address prints and parses back.
        prop_assert_eq!(a.to_string().parse::<Subcube>().unwrap(), a);
        // A subcube of Q_n is a Q_dim: its nodes induce dim·2^(dim−1) links.
        let q = Hypercube::new(a.cube_dim()).unwrap();
        let inside = listed
            .iter()
            .map(|&u| q.neighbours(u).unwrap().iter().filter(|v| na.contains(v)).count())
            .sum::<usize>();
        prop_assert_eq!(inside as u64, u64::from(a.dim()) * a.len());
    }
}
