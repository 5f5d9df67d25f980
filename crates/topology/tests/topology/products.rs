//! Kang et al. (IEEE TC 2003) §3: the cross product ⊗ and the dot product ⊙,
//! checked against the definitions applied literally (every pair of nodes)
//! and against the mesh built directly as a `Grid`.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap values that are valid by construction"
)]

use std::collections::BTreeSet;

use partalloc_topology::{Grid, TupleGraph};
use proptest::prelude::*;

type Tuple = Vec<u32>;

/// A graph as plain sets: node tuples and unordered edges between tuples.
fn as_sets(g: &TupleGraph) -> (BTreeSet<Tuple>, BTreeSet<(Tuple, Tuple)>) {
    let nodes: Vec<Tuple> = g.nodes().map(<[u32]>::to_vec).collect();
    let edges = g
        .edges()
        .map(|(i, j)| {
            let (a, b) = (nodes[i].clone(), nodes[j].clone());
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    (nodes.into_iter().collect(), edges)
}

fn adjacent(edges: &BTreeSet<(Tuple, Tuple)>, a: &Tuple, b: &Tuple) -> bool {
    edges.contains(&(a.clone(), b.clone())) || edges.contains(&(b.clone(), a.clone()))
}

/// A ⊗ B from Kang's definition, over every pair of product nodes. The
/// tuple (a, b) is a followed by b high dimension first, i.e. b's
/// components then a's, dimension 0 first.
fn cross_oracle(a: &TupleGraph, b: &TupleGraph) -> (BTreeSet<Tuple>, BTreeSet<(Tuple, Tuple)>) {
    let (va, ea) = as_sets(a);
    let (vb, eb) = as_sets(b);
    let mut nodes = Vec::new();
    for x in &va {
        for y in &vb {
            nodes.push((x.clone(), y.clone()));
        }
    }
    let tuple = |(x, y): &(Tuple, Tuple)| -> Tuple { y.iter().chain(x).copied().collect() };
    let mut edges = BTreeSet::new();
    for (i, p) in nodes.iter().enumerate() {
        for q in &nodes[i + 1..] {
            let adj = (p.0 == q.0 && adjacent(&eb, &p.1, &q.1))
                || (p.1 == q.1 && adjacent(&ea, &p.0, &q.0));
            if adj {
                let (s, t) = (tuple(p), tuple(q));
                edges.insert(if s < t { (s, t) } else { (t, s) });
            }
        }
    }
    (nodes.iter().map(tuple).collect(), edges)
}

/// A ⊙ B from Kang's definition: components a_i·r_i(B) + b_i, adjacency by
/// ±1 in exactly one component, over every pair of product nodes.
fn dot_oracle(a: &TupleGraph, b: &TupleGraph) -> (BTreeSet<Tuple>, BTreeSet<(Tuple, Tuple)>) {
    let r = b.radices().to_vec();
    let mut nodes = Vec::new();
    for x in a.nodes() {
        for y in b.nodes() {
            nodes.push((0..r.len()).map(|i| x[i] * r[i] + y[i]).collect::<Tuple>());
        }
    }
    let mut edges = BTreeSet::new();
    for (i, p) in nodes.iter().enumerate() {
        for q in &nodes[i + 1..] {
            let diff: Vec<usize> = (0..p.len()).filter(|&d| p[d] != q[d]).collect();
            if diff.len() == 1 && p[diff[0]].abs_diff(q[diff[0]]) == 1 {
                edges.insert(if p < q {
                    (p.clone(), q.clone())
                } else {
                    (q.clone(), p.clone())
                });
            }
        }
    }
    (nodes.into_iter().collect(), edges)
}

fn mesh(sides: &[u32]) -> TupleGraph {
    TupleGraph::from_grid(&Grid::mesh(sides).unwrap()).unwrap()
}

/// Q_n^k by n cross products of L_k.
fn by_cross(k: u32, n: usize) -> TupleGraph {
    let l = TupleGraph::linear_array(k).unwrap();
    (0..n).fold(TupleGraph::point(0).unwrap(), |g, _| g.cross(&l).unwrap())
}

/// Q_n^{2^k} by k dot products of H_n, from the 1-ary n-cube.
fn by_dot(n: u32, k: u32) -> TupleGraph {
    let h = TupleGraph::hypercube(n).unwrap();
    (0..k).fold(TupleGraph::point(n as usize).unwrap(), |g, _| {
        g.dot(&h).unwrap()
    })
}

#[test]
fn kang_fig2_slice_and_isomorphic_partitions_build_the_same_8_ary_3_cube() {
    let l8 = TupleGraph::linear_array(8).unwrap();
    let h3 = TupleGraph::hypercube(3).unwrap();
    let q3_8 = mesh(&[8, 8, 8]);
    // Fig. 2a: Q_3^8 = Q_2^8 ⊗ L_8, Q_2^8 = Q_1^8 ⊗ L_8, Q_1^8 = Q_0^8 ⊗ L_8.
    let q0 = TupleGraph::point(0).unwrap();
    let q1_8 = q0.cross(&l8).unwrap();
    let q2_8 = q1_8.cross(&l8).unwrap();
    assert_eq!(q1_8, mesh(&[8]));
    assert_eq!(q2_8, mesh(&[8, 8]));
    assert_eq!(q2_8.cross(&l8).unwrap(), q3_8);
    // Fig. 2b: Q_3^{2^3} = Q_3^{2^2} ⊙ H_3 = (Q_3^{2^1} ⊙ H_3) ⊙ H_3, with
    // Q_3^{2^0} the single node (see docs/paper-errata.md (topology part) on the
    // figure's subscripts).
    let q3_1 = TupleGraph::point(3).unwrap();
    let q3_2 = q3_1.dot(&h3).unwrap();
    let q3_4 = q3_2.dot(&h3).unwrap();
    assert_eq!(q3_2, h3);
    assert_eq!(q3_4, mesh(&[4, 4, 4]));
    assert_eq!(q3_4.dot(&h3).unwrap(), q3_8);
    // Same node tuples and the same edge set, counted: 8^3 nodes and
    // 3 · 8^2 · 7 links.
    assert_eq!(q3_8.num_nodes(), 512);
    assert_eq!(q3_8.num_edges(), 1344);
    assert_eq!(
        q3_8.num_edges() as u64,
        Grid::mesh(&[8, 8, 8]).unwrap().num_links()
    );
    // "Informally, a dot product A ⊙ B can be drawn by replacing each node of
    // A with graph B": the nodes of Q_3^4 ⊙ H_3 whose Q_3^4 part is fixed
    // form a copy of H_3 (a 2×2×2 block at even coordinates).
    for base in [[0u32, 0, 0], [2, 4, 6], [6, 6, 6]] {
        let block: Vec<Tuple> = (0..8u32)
            .map(|v| (0..3).map(|i| base[i] + (v >> i & 1)).collect())
            .collect();
        let inside = block
            .iter()
            .flat_map(|p| block.iter().map(move |q| (p, q)))
            .filter(|(p, q)| q3_8.has_edge(p, q))
            .count();
        assert_eq!(inside, 2 * 12, "H_3 has 12 edges, each seen twice");
    }
}

#[test]
fn kang_section_4_1_node_3_5_is_01_10_11() {
    // Q_2^8 = H_2 ⊙ H_2 ⊙ H_2; node (a_1, a_0) = (3, 5) = (011, 101) is
    // ((0,1), (1,0), (1,1)): the first H_2 gives the most significant bits.
    let h2 = TupleGraph::hypercube(2).unwrap();
    let first = h2.dot(&h2).unwrap().dot(&h2).unwrap();
    assert_eq!(first, mesh(&[8, 8]));
    let steps = [[1u32, 0], [0, 1], [1, 1]]; // dimension 0 first
    let mut tuple = [0u32, 0];
    for s in steps {
        for i in 0..2 {
            tuple[i] = tuple[i] * 2 + s[i];
        }
    }
    assert_eq!(tuple, [5, 3]);
    assert_eq!(first.index_of(&tuple), Some(3 * 8 + 5));
    // Subcube B = ((1,0),(1,1)) = (11*, 01*): the 2×2 block at (6, 2)…(7, 3)
    // (a_1 = 11*, a_0 = 01*), itself a copy of H_2.
    let b: Vec<[u32; 2]> = vec![[2, 6], [3, 6], [2, 7], [3, 7]];
    assert!(first.has_edge(&b[0], &b[1]) && first.has_edge(&b[0], &b[2]));
    assert!(first.has_edge(&b[1], &b[3]) && first.has_edge(&b[2], &b[3]));
    assert!(!first.has_edge(&b[0], &b[3]));
}

#[test]
fn the_three_constructions_are_identical_for_small_n_and_k() {
    for n in 1..=3u32 {
        for k in 0..=3u32 {
            let side = 1u32 << k;
            let direct = mesh(&vec![side; n as usize]);
            assert_eq!(by_cross(side, n as usize), direct, "L ⊗ … ⊗ L, n={n} k={k}");
            assert_eq!(by_dot(n, k), direct, "H ⊙ … ⊙ H, n={n} k={k}");
        }
    }
}

#[test]
fn aldhelaan_q_n_is_k2_times_q_n_minus_1() {
    // Al-Dhelaan & Bose §II: Q_0 is a single node, Q_n = K_2 × Q_{n−1}.
    let k2 = TupleGraph::linear_array(2).unwrap();
    let mut q = TupleGraph::point(0).unwrap();
    for n in 1..=6u32 {
        q = k2.cross(&q).unwrap();
        assert_eq!(q, TupleGraph::hypercube(n).unwrap());
        assert_eq!(q.num_edges() as u64, n as u64 * (1 << n) / 2);
    }
}

#[test]
fn cross_products_of_cycles_are_tori() {
    // Kang §3, footnote 1: with L_k a cycle the cross product is a torus.
    for sides in [vec![1u32, 4], vec![2, 3], vec![3, 3], vec![5, 2, 4]] {
        let g = sides
            .iter()
            .rev()
            .fold(TupleGraph::point(0).unwrap(), |g, &k| {
                g.cross(&TupleGraph::cycle(k).unwrap()).unwrap()
            });
        let torus = Grid::torus(&sides).unwrap();
        assert_eq!(g, TupleGraph::from_grid(&torus).unwrap(), "{sides:?}");
        assert_eq!(g.num_edges() as u64, torus.num_links());
    }
}

#[test]
fn cross_product_dimension_order_follows_kang() {
    // (a, b) in A ⊗ B is (a_{n−1}, …, a_0, b_{m−1}, …, b_0): B supplies the
    // low dimensions. L_2 ⊗ L_3 has tuples [b, a] with b < 3, a < 2.
    let g = TupleGraph::linear_array(2)
        .unwrap()
        .cross(&TupleGraph::linear_array(3).unwrap())
        .unwrap();
    assert_eq!(g.radices(), &[3, 2]);
    assert_eq!(g, mesh(&[3, 2]));
}

fn small_graph() -> impl Strategy<Value = TupleGraph> {
    (
        prop::collection::vec(1u32..=3, 0..=2),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(|(radices, node_bits, edge_bits)| {
            let all = mesh_or_point(&radices);
            let nodes: Vec<Tuple> = all
                .nodes()
                .enumerate()
                .filter(|(i, _)| node_bits >> (i % 64) & 1 == 1 || *i == 0)
                .map(|(_, t)| t.to_vec())
                .collect();
            let mut edges = Vec::new();
            let mut bit = 0;
            for i in 0..nodes.len() {
                for j in i + 1..nodes.len() {
                    if edge_bits >> (bit % 64) & 1 == 1 {
                        edges.push((i, j));
                    }
                    bit += 1;
                }
            }
            TupleGraph::new(&radices, &nodes, &edges).unwrap()
        })
}

fn mesh_or_point(radices: &[u32]) -> TupleGraph {
    if radices.is_empty() {
        TupleGraph::point(0).unwrap()
    } else {
        mesh(radices)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cross_matches_the_definition_and_counts(a in small_graph(), b in small_graph()) {
        let p = a.cross(&b).unwrap();
        prop_assert_eq!(p.num_nodes(), a.num_nodes() * b.num_nodes());
        prop_assert_eq!(
            p.num_edges(),
            a.num_nodes() * b.num_edges() + b.num_nodes() * a.num_edges()
        );
        prop_assert_eq!(p.dims(), a.dims() + b.dims());
        prop_assert_eq!(as_sets(&p), cross_oracle(&a, &b));
    }

    #[test]
    fn dot_matches_the_definition(a in small_graph(), b in small_graph()) {
        prop_assume!(a.dims() == b.dims());
        let p = a.dot(&b).unwrap();
        prop_assert_eq!(p.num_nodes(), a.num_nodes() * b.num_nodes());
        prop_assert_eq!(as_sets(&p), dot_oracle(&a, &b));
    }

    #[test]
    fn dot_of_full_meshes_is_the_mesh_of_the_radix_products(
        ra in prop::collection::vec(1u32..=4, 1..=3),
        rb in prop::collection::vec(1u32..=4, 3),
    ) {
        let rb = &rb[..ra.len()];
        let (a, b) = (mesh(&ra), mesh(rb));
        let sides: Vec<u32> = ra.iter().zip(rb).map(|(x, y)| x * y).collect();
        let expected = Grid::mesh(&sides).unwrap();
        let ab = a.dot(&b).unwrap();
        prop_assert_eq!(ab.num_nodes(), expected.num_nodes());
        prop_assert_eq!(ab.num_edges() as u64, expected.num_links());
        prop_assert_eq!(&ab, &TupleGraph::from_grid(&expected).unwrap());
        // On full label sets ⊙ commutes and ⊗ of linear arrays gives the same mesh.
        prop_assert_eq!(&ab, &b.dot(&a).unwrap());
    }

    #[test]
    fn cross_of_meshes_is_the_concatenated_mesh(
        ra in prop::collection::vec(1u32..=4, 1..=2),
        rb in prop::collection::vec(1u32..=4, 1..=2),
    ) {
        let p = mesh(&ra).cross(&mesh(&rb)).unwrap();
        let sides: Vec<u32> = rb.iter().chain(&ra).copied().collect();
        prop_assert_eq!(p, mesh(&sides));
    }
}
