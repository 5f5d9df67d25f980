//! Small explicit graphs with tuple-labelled nodes, and the cross product ⊗
//! and dot product ⊙ of Kang et al. (IEEE TC 2003, §3).
//!
//! Kang et al. build the 2^k-ary n-cube (a mesh) in two ways:
//!
//! - by **cross product** of n linear arrays, Q_n^{2^k} = L_{2^k} ⊗ … ⊗ L_{2^k}
//!   ("slice partitioning", Fig. 2a): a node (a, b) of A ⊗ B is the tuple
//!   (a_{n−1}, …, a_0, b_{m−1}, …, b_0), and (a, b) ~ (a′, b′) iff a = a′ and
//!   b ~ b′ in B, or b = b′ and a ~ a′ in A;
//! - by **dot product** of k binary n-cubes, Q_n^{2^k} = H_n ⊙ … ⊙ H_n
//!   ("isomorphic partitioning", Fig. 2b): a node (a, b) of A ⊙ B is the
//!   n-tuple (a_{n−1}b_{n−1}, …, a_0b_0) whose components concatenate the
//!   digits of a and b, and two nodes are adjacent iff their tuples differ
//!   by ±1 in exactly one component.
//!
//! [`TupleGraph`] holds the node tuples and the edge set explicitly, so that
//! the constructions can be compared with each other and with [`Grid`] for
//! identity: same tuples, same edges.
//!
//! # Labels and conventions
//!
//! A tuple is stored dimension 0 first (`t[i]` = a_i), as everywhere in this
//! crate; the papers print it high dimension first. Each dimension has an
//! alphabet size (its *radix*): component i takes values `0..radices[i]`.
//! In a cross product the second factor supplies the low dimensions. In a
//! dot product component i is `a_i · r_i(B) + b_i`, where r_i(B) is B's radix
//! in dimension i; for the power-of-two radices of Kang §3 this is exactly
//! the bit concatenation a_i b_i (a_i the high bits).
//!
//! Kang's dot product is defined from the node labels alone: the edges of A
//! and B are not consulted. It therefore always yields a mesh on the
//! concatenated labels; the dot product of two tori is a mesh too.
//!
//! Nodes are kept sorted by their id in the mixed-radix label space
//! (dimension 0 fastest), which is the id order of [`Grid`], so
//! [`TupleGraph::from_grid`] lists node `i` of the grid as node `i`.
//!
//! # Example
//!
//! Kang Fig. 2: the 8-ary 3-cube by slices (Q_2^8 ⊗ L_8), by isomorphic
//! partitions (Q_3^4 ⊙ H_3, written Q_2^8 ⊙ H_3 in the figure) and as a mesh.
//!
//! ```
//! use partalloc_topology::{Grid, TupleGraph};
//!
//! let l8 = TupleGraph::linear_array(8)?;
//! let h3 = TupleGraph::hypercube(3)?;
//! let q2_8 = l8.cross(&l8)?; // Q_2^8, an 8×8 mesh
//! let slices = q2_8.cross(&l8)?;
//! let q3_4 = h3.dot(&h3)?; // Q_3^4 = H_3 ⊙ H_3
//! let isomorphic = q3_4.dot(&h3)?;
//! let mesh = TupleGraph::from_grid(&Grid::kary_ncube(8, 3, false)?)?;
//! assert_eq!(slices, mesh);
//! assert_eq!(isomorphic, mesh);
//! assert_eq!(mesh.num_nodes(), 512);
//! assert_eq!(mesh.num_edges(), 3 * 8 * 8 * 7);
//! // Kang §4.1: node (3, 5) of Q_2^8 is ((0,1),(1,0),(1,1)) in H_2 ⊙ H_2 ⊙ H_2;
//! // dimension 0 first, that is the tuple [5, 3].
//! let h2 = TupleGraph::hypercube(2)?;
//! let q2_8_dot = h2.dot(&h2)?.dot(&h2)?;
//! assert_eq!(q2_8_dot.index_of(&[5, 3]), Some(3 * 8 + 5));
//! # Ok::<(), partalloc_topology::TopologyError>(())
//! ```

use crate::{Grid, TopologyError};

/// Largest number of nodes a [`TupleGraph`] may have.
pub const MAX_GRAPH_NODES: usize = 1 << 20;

/// Largest number of edges a [`TupleGraph`] may have.
pub const MAX_GRAPH_EDGES: usize = 1 << 24;

/// Largest number of dimensions (tuple length) of a [`TupleGraph`].
pub const MAX_GRAPH_DIMS: usize = 64;

/// A small undirected simple graph whose nodes are distinct tuples.
///
/// Two graphs are equal iff they have the same radices, the same node
/// tuples and the same edge set. Node `i` is the `i`-th tuple in increasing
/// mixed-radix id (dimension 0 fastest); an edge is a pair of node indices
/// `(i, j)` with `i < j`, and the edges are kept sorted.
///
/// ```
/// use partalloc_topology::TupleGraph;
/// // A path 0 - 1 - 2 on one dimension of radix 3, nodes given out of order.
/// let g = TupleGraph::new(&[3], &[[2], [0], [1]], &[(0, 2), (1, 2)])?;
/// assert_eq!(g, TupleGraph::linear_array(3)?);
/// assert!(g.has_edge(&[1], &[2]));
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "TupleGraphRepr", try_from = "TupleGraphRepr")
)]
pub struct TupleGraph {
    /// Alphabet size per dimension, dimension 0 first.
    radices: Vec<u32>,
    /// Node tuples, `dims` values per node, sorted by key.
    labels: Vec<u32>,
    /// Mixed-radix id of each node, increasing.
    keys: Vec<u64>,
    /// Edges as node-index pairs `(i, j)`, `i < j`, sorted, distinct.
    edges: Vec<(u32, u32)>,
}

/// The serialized form of a [`TupleGraph`]: radices, node tuples and edges
/// as index pairs into the node list. Deserializing validates it.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct TupleGraphRepr {
    radices: Vec<u32>,
    nodes: Vec<Vec<u32>>,
    edges: Vec<(usize, usize)>,
}

#[cfg(feature = "serde")]
impl From<TupleGraph> for TupleGraphRepr {
    fn from(g: TupleGraph) -> Self {
        Self {
            nodes: g.nodes().map(<[u32]>::to_vec).collect(),
            edges: g.edges().collect(),
            radices: g.radices,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<TupleGraphRepr> for TupleGraph {
    type Error = TopologyError;
    fn try_from(r: TupleGraphRepr) -> Result<Self, TopologyError> {
        Self::new(&r.radices, &r.nodes, &r.edges)
    }
}

fn too_large(what: &'static str, value: u128, max: u128) -> TopologyError {
    TopologyError::GraphTooLarge { what, value, max }
}

/// Validates radices and returns the size of the label space.
fn label_space(radices: &[u32]) -> Result<u64, TopologyError> {
    if radices.len() > MAX_GRAPH_DIMS {
        return Err(TopologyError::TooManyDimensions {
            got: radices.len(),
            max: MAX_GRAPH_DIMS,
        });
    }
    if let Some(dim) = radices.iter().position(|&r| r == 0) {
        return Err(TopologyError::ZeroSide { dim });
    }
    let mut space: u128 = 1;
    for &r in radices {
        space = space.saturating_mul(u128::from(r));
    }
    u64::try_from(space).map_err(|_| too_large("labels", space, u64::MAX.into()))
}

fn check_counts(nodes: u128, edges: u128) -> Result<(), TopologyError> {
    if nodes > MAX_GRAPH_NODES as u128 {
        return Err(too_large("nodes", nodes, MAX_GRAPH_NODES as u128));
    }
    if edges > MAX_GRAPH_EDGES as u128 {
        return Err(too_large("edges", edges, MAX_GRAPH_EDGES as u128));
    }
    Ok(())
}

/// The mixed-radix id of a tuple already checked against `radices`.
fn key_of(radices: &[u32], tuple: &[u32]) -> u64 {
    let mut key = 0u64;
    for (&t, &r) in tuple.iter().zip(radices).rev() {
        key = key * u64::from(r) + u64::from(t);
    }
    key
}

fn index_u32(i: usize) -> u32 {
    // Node counts are bounded by MAX_GRAPH_NODES < 2^32.
    i as u32
}

impl TupleGraph {
    /// A graph on the given node tuples (each `radices.len()` long, dimension
    /// 0 first) with edges given as index pairs into `nodes`. Repeated edges
    /// (in either orientation) are kept once.
    ///
    /// # Errors
    /// A zero radix ([`TopologyError::ZeroSide`]); a tuple of the wrong
    /// length ([`TopologyError::DimensionMismatch`]) or with a component
    /// outside its radix ([`TopologyError::CoordinateOutOfRange`]); a tuple
    /// listed twice ([`TopologyError::DuplicateNode`]); an edge index outside
    /// the node list ([`TopologyError::NodeOutOfRange`]) or a loop
    /// ([`TopologyError::SelfLoop`]); more than [`MAX_GRAPH_DIMS`]
    /// dimensions, [`MAX_GRAPH_NODES`] nodes or [`MAX_GRAPH_EDGES`] edges.
    pub fn new<T: AsRef<[u32]>>(
        radices: &[u32],
        nodes: &[T],
        edges: &[(usize, usize)],
    ) -> Result<Self, TopologyError> {
        label_space(radices)?;
        check_counts(nodes.len() as u128, edges.len() as u128)?;
        let dims = radices.len();
        let mut keyed = Vec::with_capacity(nodes.len());
        for (given, t) in nodes.iter().enumerate() {
            let t = t.as_ref();
            if t.len() != dims {
                return Err(TopologyError::DimensionMismatch {
                    expected: dims,
                    got: t.len(),
                });
            }
            for (dim, (&value, &side)) in t.iter().zip(radices).enumerate() {
                if value >= side {
                    return Err(TopologyError::CoordinateOutOfRange { dim, value, side });
                }
            }
            keyed.push((key_of(radices, t), given));
        }
        keyed.sort_unstable();
        if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(TopologyError::DuplicateNode {
                tuple: nodes[w[0].1].as_ref().to_vec(),
            });
        }
        // position[given] = index in the sorted order.
        let mut position = vec![0u32; nodes.len()];
        for (i, &(_, given)) in keyed.iter().enumerate() {
            position[given] = index_u32(i);
        }
        let mut pairs = Vec::with_capacity(edges.len());
        for &(a, b) in edges {
            for x in [a, b] {
                if x >= nodes.len() {
                    return Err(TopologyError::NodeOutOfRange {
                        node: x as u64,
                        nodes: nodes.len() as u64,
                    });
                }
            }
            if a == b {
                return Err(TopologyError::SelfLoop { node: a as u64 });
            }
            let (i, j) = (position[a], position[b]);
            pairs.push((i.min(j), i.max(j)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut labels = Vec::with_capacity(nodes.len() * dims);
        for &(_, given) in &keyed {
            labels.extend_from_slice(nodes[given].as_ref());
        }
        Ok(Self {
            radices: radices.to_vec(),
            labels,
            keys: keyed.iter().map(|&(k, _)| k).collect(),
            edges: pairs,
        })
    }

    /// The graph on *every* tuple of the label space, with edges between
    /// tuples that differ by one in exactly one component: the mesh with
    /// sides `radices`. Built directly, for the constructions below.
    fn full_mesh(radices: &[u32]) -> Result<Self, TopologyError> {
        let space = label_space(radices)?;
        let edges: u128 = radices
            .iter()
            .map(|&r| u128::from(space) / u128::from(r) * u128::from(r - 1))
            .sum();
        check_counts(u128::from(space), edges)?;
        let dims = radices.len();
        // `space` ≤ MAX_GRAPH_NODES was checked above.
        let n = space as usize;
        let mut labels = Vec::with_capacity(n * dims);
        let mut t = vec![0u32; dims];
        for _ in 0..n {
            labels.extend_from_slice(&t);
            for (v, &r) in t.iter_mut().zip(radices) {
                *v += 1;
                if *v < r {
                    break;
                }
                *v = 0;
            }
        }
        let mut pairs = Vec::with_capacity(edges as usize);
        for i in 0..n {
            let mut stride = 1usize;
            for (d, &r) in radices.iter().enumerate() {
                if labels[i * dims + d] + 1 < r {
                    pairs.push((index_u32(i), index_u32(i + stride)));
                }
                stride *= r as usize;
            }
        }
        pairs.sort_unstable();
        Ok(Self {
            radices: radices.to_vec(),
            labels,
            keys: (0..space).collect(),
            edges: pairs,
        })
    }

    /// The trivial graph with one node, the all-zero `dims`-tuple, and all
    /// radices 1: Q_0 of Al-Dhelaan & Bose (§II) for `dims = 0`, and the
    /// 1-ary n-cube Q_n^{2^0} from which Kang's dot products start.
    ///
    /// # Errors
    /// More than [`MAX_GRAPH_DIMS`] dimensions.
    pub fn point(dims: usize) -> Result<Self, TopologyError> {
        if dims > MAX_GRAPH_DIMS {
            return Err(TopologyError::TooManyDimensions {
                got: dims,
                max: MAX_GRAPH_DIMS,
            });
        }
        Self::full_mesh(&vec![1; dims])
    }

    /// Kang's L_k: k nodes 0..k on one dimension forming a linear array
    /// (k − 1 edges, no wrap-around).
    ///
    /// # Errors
    /// [`TopologyError::ZeroSide`] for `k = 0`; more than
    /// [`MAX_GRAPH_NODES`] nodes.
    pub fn linear_array(k: u32) -> Result<Self, TopologyError> {
        Self::full_mesh(&[k])
    }

    /// The cycle C_k on one dimension: L_k plus the wrap-around edge
    /// (k − 1, 0). Following [`Grid`], a cycle of 2 nodes has one edge and a
    /// cycle of 1 node none. Cross products of cycles are tori (Kang §3,
    /// footnote 1).
    ///
    /// # Errors
    /// As [`TupleGraph::linear_array`].
    pub fn cycle(k: u32) -> Result<Self, TopologyError> {
        let mut g = Self::full_mesh(&[k])?;
        if k >= 3 {
            g.edges.push((0, k - 1));
            g.edges.sort_unstable();
        }
        Ok(g)
    }

    /// Kang's H_n: the binary n-cube as an n-dimensional graph of radix 2
    /// in every dimension (nodes are binary n-tuples; edges join tuples at
    /// Hamming distance one). H_0 is the trivial graph.
    ///
    /// # Errors
    /// More than [`MAX_GRAPH_NODES`] nodes (n > 20).
    pub fn hypercube(n: u32) -> Result<Self, TopologyError> {
        if n as usize > MAX_GRAPH_DIMS {
            return Err(TopologyError::TooManyDimensions {
                got: n as usize,
                max: MAX_GRAPH_DIMS,
            });
        }
        Self::full_mesh(&vec![2; n as usize])
    }

    /// The mesh or torus `grid` as an explicit graph: its coordinates as
    /// tuples (so node `i` is grid node `i`) and its links as edges.
    ///
    /// # Errors
    /// More than [`MAX_GRAPH_NODES`] nodes or [`MAX_GRAPH_EDGES`] edges.
    pub fn from_grid(grid: &Grid) -> Result<Self, TopologyError> {
        check_counts(grid.num_nodes() as u128, u128::from(grid.num_links()))?;
        let mut g = Self::full_mesh(grid.sides())?;
        if grid.is_torus() {
            g.edges.clear();
            for u in 0..grid.num_nodes() {
                let u = index_u32(u);
                for v in grid.neighbours(u)? {
                    if u < v {
                        g.edges.push((u, v));
                    }
                }
            }
            g.edges.sort_unstable();
        }
        Ok(g)
    }

    /// The cross product `self ⊗ other` (Kang §3): node (a, b) is the tuple
    /// a followed by b, printed (a_{n−1}, …, a_0, b_{m−1}, …, b_0), so
    /// `other` supplies dimensions `0..m` and `self` dimensions `m..m+n`.
    /// (a, b) ~ (a′, b′) iff a = a′ and b ~ b′, or b = b′ and a ~ a′.
    ///
    /// Node (a, b) has index `index(a) · |V(other)| + index(b)`, and
    /// |E| = |V(self)|·|E(other)| + |V(other)|·|E(self)|.
    ///
    /// # Errors
    /// A result above [`MAX_GRAPH_DIMS`], [`MAX_GRAPH_NODES`] or
    /// [`MAX_GRAPH_EDGES`].
    pub fn cross(&self, other: &TupleGraph) -> Result<TupleGraph, TopologyError> {
        let mut radices = other.radices.clone();
        radices.extend_from_slice(&self.radices);
        let space_b = label_space(&other.radices)?;
        label_space(&radices)?;
        let (na, nb) = (self.num_nodes(), other.num_nodes());
        let (ea, eb) = (self.num_edges(), other.num_edges());
        check_counts(
            na as u128 * nb as u128,
            na as u128 * eb as u128 + nb as u128 * ea as u128,
        )?;
        let dims = radices.len();
        let mut labels = Vec::with_capacity(na * nb * dims);
        let mut keys = Vec::with_capacity(na * nb);
        for ia in 0..na {
            for ib in 0..nb {
                labels.extend_from_slice(other.tuple(ib));
                labels.extend_from_slice(self.tuple(ia));
                keys.push(self.keys[ia] * space_b + other.keys[ib]);
            }
        }
        let at = |ia: u32, ib: u32| ia * index_u32(nb) + ib;
        let mut edges = Vec::with_capacity(na * eb + nb * ea);
        for ia in 0..index_u32(na) {
            edges.extend(other.edges.iter().map(|&(b, b2)| (at(ia, b), at(ia, b2))));
        }
        for &(a, a2) in &self.edges {
            edges.extend((0..index_u32(nb)).map(|ib| (at(a, ib), at(a2, ib))));
        }
        edges.sort_unstable();
        Ok(TupleGraph {
            radices,
            labels,
            keys,
            edges,
        })
    }

    /// The dot product `self ⊙ other` (Kang §3) of two graphs with the same
    /// number of dimensions n: node (a, b) is the n-tuple with components
    /// `a_i · r_i + b_i` (r_i = `other`'s radix in dimension i; for radices
    /// that are powers of two, the concatenation a_i b_i), and two nodes are
    /// adjacent iff their tuples differ by ±1 in exactly one component. The
    /// edges of the factors play no part.
    ///
    /// # Errors
    /// [`TopologyError::DimensionMismatch`] if the numbers of dimensions
    /// differ; a result above [`MAX_GRAPH_NODES`] or [`MAX_GRAPH_EDGES`], or
    /// a radix product above `u32::MAX`.
    pub fn dot(&self, other: &TupleGraph) -> Result<TupleGraph, TopologyError> {
        if self.dims() != other.dims() {
            return Err(TopologyError::DimensionMismatch {
                expected: self.dims(),
                got: other.dims(),
            });
        }
        let mut radices = Vec::with_capacity(self.dims());
        for (&ra, &rb) in self.radices.iter().zip(&other.radices) {
            let r = u64::from(ra) * u64::from(rb);
            radices.push(
                u32::try_from(r).map_err(|_| too_large("labels", r.into(), u32::MAX.into()))?,
            );
        }
        label_space(&radices)?;
        let (na, nb) = (self.num_nodes(), other.num_nodes());
        let nodes = na as u128 * nb as u128;
        check_counts(nodes, 0)?;
        let dims = radices.len();
        let mut keyed: Vec<(u64, u32, u32)> = Vec::with_capacity(na * nb);
        let mut t = vec![0u32; dims];
        for ia in 0..na {
            for ib in 0..nb {
                for (i, v) in t.iter_mut().enumerate() {
                    *v = self.tuple(ia)[i] * other.radices[i] + other.tuple(ib)[i];
                }
                keyed.push((key_of(&radices, &t), index_u32(ia), index_u32(ib)));
            }
        }
        keyed.sort_unstable();
        let mut labels = Vec::with_capacity(keyed.len() * dims);
        for &(_, ia, ib) in &keyed {
            for i in 0..dims {
                labels.push(
                    self.tuple(ia as usize)[i] * other.radices[i] + other.tuple(ib as usize)[i],
                );
            }
        }
        let keys: Vec<u64> = keyed.iter().map(|&(k, _, _)| k).collect();
        let mut edges = Vec::new();
        for (i, &key) in keys.iter().enumerate() {
            let mut stride = 1u64;
            for (d, &r) in radices.iter().enumerate() {
                if labels[i * dims + d] + 1 < r
                    && let Ok(j) = keys.binary_search(&(key + stride))
                {
                    if edges.len() == MAX_GRAPH_EDGES {
                        return Err(too_large(
                            "edges",
                            edges.len() as u128 + 1,
                            MAX_GRAPH_EDGES as u128,
                        ));
                    }
                    edges.push((index_u32(i), index_u32(j)));
                }
                stride *= u64::from(r);
            }
        }
        edges.sort_unstable();
        Ok(TupleGraph {
            radices,
            labels,
            keys,
            edges,
        })
    }

    /// Number of dimensions (tuple length).
    #[must_use]
    pub fn dims(&self) -> usize {
        self.radices.len()
    }

    /// The alphabet size of each dimension, dimension 0 first.
    #[must_use]
    pub fn radices(&self) -> &[u32] {
        &self.radices
    }

    /// Number of nodes.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.keys.len()
    }

    /// Number of edges.
    #[must_use]
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// The tuple of node `i` (dimension 0 first), or `None` past the last
    /// node.
    #[must_use]
    pub fn node(&self, i: usize) -> Option<&[u32]> {
        (i < self.num_nodes()).then(|| self.tuple(i))
    }

    /// The tuple of a node index known to be valid.
    fn tuple(&self, i: usize) -> &[u32] {
        let d = self.dims();
        &self.labels[i * d..(i + 1) * d]
    }

    /// The node tuples in index order.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.num_nodes()).map(|i| self.tuple(i))
    }

    /// The index of the node with tuple `tuple`, if the graph has it.
    #[must_use]
    pub fn index_of(&self, tuple: &[u32]) -> Option<usize> {
        let fits =
            tuple.len() == self.dims() && tuple.iter().zip(&self.radices).all(|(t, r)| t < r);
        if !fits {
            return None;
        }
        self.keys.binary_search(&key_of(&self.radices, tuple)).ok()
    }

    /// The edges as node-index pairs `(i, j)`, `i < j`, in increasing order.
    pub fn edges(&self) -> impl ExactSizeIterator<Item = (usize, usize)> + '_ {
        self.edges.iter().map(|&(i, j)| (i as usize, j as usize))
    }

    /// Whether the nodes with tuples `a` and `b` are adjacent.
    #[must_use]
    pub fn has_edge(&self, a: &[u32], b: &[u32]) -> bool {
        match (self.index_of(a), self.index_of(b)) {
            (Some(i), Some(j)) => {
                let (i, j) = (index_u32(i.min(j)), index_u32(i.max(j)));
                self.edges.binary_search(&(i, j)).is_ok()
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_graphs_are_rejected() {
        let none: &[(usize, usize)] = &[];
        assert_eq!(
            TupleGraph::new(&[2, 0], &[[0, 0]], none),
            Err(TopologyError::ZeroSide { dim: 1 })
        );
        assert!(matches!(
            TupleGraph::new(&[2], &[[0, 0]], none),
            Err(TopologyError::DimensionMismatch {
                expected: 1,
                got: 2
            })
        ));
        assert!(matches!(
            TupleGraph::new(&[2], &[[2]], none),
            Err(TopologyError::CoordinateOutOfRange { value: 2, .. })
        ));
        assert_eq!(
            TupleGraph::new(&[2], &[[1], [1]], none),
            Err(TopologyError::DuplicateNode { tuple: vec![1] })
        );
        assert!(matches!(
            TupleGraph::new(&[2], &[[0], [1]], &[(0, 2)]),
            Err(TopologyError::NodeOutOfRange { node: 2, nodes: 2 })
        ));
        assert_eq!(
            TupleGraph::new(&[2], &[[0], [1]], &[(1, 1)]),
            Err(TopologyError::SelfLoop { node: 1 })
        );
        assert!(matches!(
            TupleGraph::hypercube(21),
            Err(TopologyError::GraphTooLarge { what: "nodes", .. })
        ));
        assert!(matches!(
            TupleGraph::linear_array(8)
                .unwrap()
                .dot(&TupleGraph::hypercube(2).unwrap()),
            Err(TopologyError::DimensionMismatch {
                expected: 1,
                got: 2
            })
        ));
    }

    #[test]
    fn repeated_and_reversed_edges_are_one_edge() {
        let g = TupleGraph::new(&[3], &[[0], [1]], &[(0, 1), (1, 0), (0, 1)]).unwrap();
        assert_eq!(g.num_edges(), 1);
        assert!(g.has_edge(&[1], &[0]));
        assert!(!g.has_edge(&[1], &[2]));
    }

    #[test]
    fn cycles_follow_the_grid_convention() {
        assert_eq!(TupleGraph::cycle(1).unwrap().num_edges(), 0);
        assert_eq!(TupleGraph::cycle(2).unwrap().num_edges(), 1);
        assert_eq!(TupleGraph::cycle(5).unwrap().num_edges(), 5);
        assert!(TupleGraph::cycle(5).unwrap().has_edge(&[4], &[0]));
    }

    #[test]
    fn point_is_the_identity_of_both_products() {
        let l5 = TupleGraph::linear_array(5).unwrap();
        assert_eq!(TupleGraph::point(0).unwrap().cross(&l5).unwrap(), l5);
        assert_eq!(l5.cross(&TupleGraph::point(0).unwrap()).unwrap(), l5);
        assert_eq!(TupleGraph::point(1).unwrap().dot(&l5).unwrap(), l5);
        assert_eq!(l5.dot(&TupleGraph::point(1).unwrap()).unwrap(), l5);
        assert_eq!(TupleGraph::point(0).unwrap().num_nodes(), 1);
    }
}
