//! Strided subtori of a torus and their link-disjointness (Gupta & Srimani,
//! TR CS-97-103, 1997, §2.1).
//!
//! In an N_1 × N_2 torus, the subtorus T^{(a,b)}_{N_1/K_1, N_2/K_2} has the
//! nodes (a + i·K_1, b + j·K_2), 0 ≤ i < N_1/K_1, 0 ≤ j < N_2/K_2: every
//! K_1-th row and K_2-th column, starting at offset (a, b), 0 ≤ a < K_1,
//! 0 ≤ b < K_2. It is itself an (N_1/K_1) × (N_2/K_2) torus whose edges are
//! *not* links of the machine: the edge from (x, y) to (x + K_1, y) is routed
//! over the K_1 links (x, y)–(x+1, y)–…–(x+K_1, y), indices mod N_1, and
//! that set of links is the edge's **span**. Two subtori are
//! **link-disjoint** (Definition 1) iff no span of one meets a span of the
//! other.
//!
//! The K_1·K_2 subtori with the same strides partition the machine's nodes.
//! Remark 1 states that T^{(a_1,b_1)} and T^{(a_2,b_2)} are link-disjoint iff
//! a_1 ≠ a_2 and b_1 ≠ b_2, so a set of pairwise link-disjoint subtori has at
//! most min(K_1, K_2) members and the K_1·K_2 subtori split into
//! max(K_1, K_2) such sets.
//!
//! # Conventions
//!
//! - Gupta's node (i, j) is the grid coordinate `[i, j]`: dimension 0 has
//!   side N_1 and stride K_1. Everything here works for any number of
//!   dimensions; the paper's case is two.
//! - An edge is the *forward* edge of a node along a dimension, from
//!   coordinate x to x + K (mod N), as in the paper's edge set
//!   (i_2 = (i_1 + 1) mod N_1). A subtorus side of two nodes therefore has
//!   two edges per line, spanning the two halves of the ring.
//! - A subtorus side of a single node (K = N) has no edges along that
//!   dimension, as a [`Grid`] side of 1 has no links. With that reading
//!   Remark 1 holds exactly when every side of the subtorus has at least
//!   two nodes; in general two subtori with the same strides share a link iff
//!   their offsets agree in all dimensions but one, d, along which the
//!   subtorus has at least two nodes. [`Subtorus::is_link_disjoint`]
//!   implements the general rule (see `docs/paper-errata.md` (topology part)).
//! - The partition into link-disjoint sets puts offset a in set
//!   (Σ_d a_d) mod max_d K_d. For K_1 = K_2 = 2 that gives Gupta's sets
//!   {(0,0), (1,1)} and {(0,1), (1,0)}. No two members of a set have
//!   offsets that agree in all dimensions but one, so a set is pairwise
//!   link-disjoint; the offsets that differ only along the dimension of
//!   largest stride pairwise share links, so no partition has fewer sets.
//!
//! # Example
//!
//! Gupta §2.1: T_{8×8} with K_1 = K_2 = 2.
//!
//! ```
//! use partalloc_topology::{Grid, SubtorusFamily};
//!
//! let t8 = Grid::torus(&[8, 8])?;
//! let family = SubtorusFamily::new(&t8, &[2, 2])?;
//! assert_eq!(family.len(), 4);
//! let s00 = family.subtorus(&[0, 0])?;
//! let s01 = family.subtorus(&[0, 1])?;
//! let s10 = family.subtorus(&[1, 0])?;
//! let s11 = family.subtorus(&[1, 1])?;
//! assert_eq!(s00.shape().as_slice(), &[4, 4]);
//! assert_eq!(s01.to_string(), "T^(0,1)_4x4 of torus:8x8");
//! assert!(s00.is_link_disjoint(&s11)? && s10.is_link_disjoint(&s01)?);
//! assert!(!s01.is_link_disjoint(&s11)?);
//! let sets = family.disjoint_sets();
//! assert_eq!(sets, vec![vec![s00, s11], vec![s10, s01]]);
//! // Node (2, 3) = id 2 + 8·3 belongs to T^(0,1).
//! assert!(s01.contains(2 + 8 * 3));
//! # Ok::<(), partalloc_topology::TopologyError>(())
//! ```

use core::fmt;

use crate::{Coords, Grid, NodeId, TopologyError};

/// An undirected link of a machine, between two distinct nodes. Built in a
/// canonical form (`lo < hi`), so equal links compare equal.
///
/// ```
/// use partalloc_topology::Link;
/// assert_eq!(Link::new(7, 3), Link::new(3, 7));
/// assert_eq!(Link::new(7, 3).endpoints(), (3, 7));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "LinkRepr", from = "LinkRepr")
)]
pub struct Link {
    lo: NodeId,
    hi: NodeId,
}

/// The serialized form of a [`Link`]; deserializing goes through
/// [`Link::new`], so a file in either order gives the canonical link.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct LinkRepr {
    lo: NodeId,
    hi: NodeId,
}

#[cfg(feature = "serde")]
impl From<Link> for LinkRepr {
    fn from(l: Link) -> Self {
        Self { lo: l.lo, hi: l.hi }
    }
}

#[cfg(feature = "serde")]
impl From<LinkRepr> for Link {
    fn from(r: LinkRepr) -> Self {
        Self::new(r.lo, r.hi)
    }
}

impl Link {
    /// The link between `a` and `b`, in either order.
    #[must_use]
    pub fn new(a: NodeId, b: NodeId) -> Self {
        Self {
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    /// The two end nodes, lower id first.
    #[must_use]
    pub fn endpoints(&self) -> (NodeId, NodeId) {
        (self.lo, self.hi)
    }
}

/// An edge of a [`Subtorus`]: from node `from` to the next subtorus node
/// `to` along dimension `dim` (K nodes further, mod N). Made by
/// [`Subtorus::edges`] and [`Subtorus::edge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SubtorusEdge {
    from: NodeId,
    to: NodeId,
    dim: usize,
}

impl SubtorusEdge {
    /// The node the edge starts at.
    #[must_use]
    pub fn from(&self) -> NodeId {
        self.from
    }

    /// The node the edge ends at.
    #[must_use]
    pub fn to(&self) -> NodeId {
        self.to
    }

    /// The dimension along which the edge runs.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }
}

/// Checks a torus and strides; returns the subtorus shape N_d / K_d.
fn check_strides(torus: &Grid, strides: &[u32]) -> Result<Coords, TopologyError> {
    if !torus.is_torus() {
        return Err(TopologyError::NotATorus {
            sides: torus.sides().to_vec(),
        });
    }
    if strides.len() != torus.dims() {
        return Err(TopologyError::DimensionMismatch {
            expected: torus.dims(),
            got: strides.len(),
        });
    }
    let mut shape = *torus.sides();
    for (dim, (m, &k)) in shape.iter_mut().zip(strides).enumerate() {
        if k == 0 || *m % k != 0 {
            return Err(TopologyError::InvalidStride {
                dim,
                side: *m,
                stride: k,
            });
        }
        *m /= k;
    }
    Ok(shape)
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The strided subtorus T^{(a)}_{N/K} of a torus (Gupta & Srimani §2.1):
/// the nodes whose coordinate along every dimension d is a_d + i·K_d.
///
/// ```
/// use partalloc_topology::{Grid, Subtorus};
/// let t = Grid::torus(&[4, 6])?;
/// let s = Subtorus::new(&t, &[2, 3], &[1, 2])?;
/// assert_eq!(s.num_nodes(), 4);
/// let coords: Vec<_> = s.nodes().map(|n| t.coords_of(n).map(|c| c.to_vec())).collect::<Result<_, _>>()?;
/// assert_eq!(coords, vec![vec![1, 2], vec![3, 2], vec![1, 5], vec![3, 5]]);
/// // Every edge spans K links of the machine.
/// let e = s.edge(s.node_at(&[0, 0])?, 1)?;
/// assert_eq!(s.span(&e)?.count(), 3);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "SubtorusRepr", try_from = "SubtorusRepr")
)]
pub struct Subtorus {
    torus: Grid,
    strides: Coords,
    offset: Coords,
    shape: Coords,
}

#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SubtorusRepr {
    torus: Grid,
    strides: Coords,
    offset: Coords,
}

#[cfg(feature = "serde")]
impl From<Subtorus> for SubtorusRepr {
    fn from(s: Subtorus) -> Self {
        Self {
            torus: s.torus,
            strides: s.strides,
            offset: s.offset,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<SubtorusRepr> for Subtorus {
    type Error = TopologyError;
    fn try_from(r: SubtorusRepr) -> Result<Self, TopologyError> {
        Self::new(&r.torus, &r.strides, &r.offset)
    }
}

impl Subtorus {
    /// The subtorus of `torus` with strides K (`strides`) and offset a
    /// (`offset`), dimension 0 first.
    ///
    /// # Errors
    /// [`TopologyError::NotATorus`] for a mesh;
    /// [`TopologyError::DimensionMismatch`] if `strides` or `offset` has the
    /// wrong length; [`TopologyError::InvalidStride`] unless every K_d is a
    /// positive divisor of N_d; [`TopologyError::CoordinateOutOfRange`]
    /// unless 0 ≤ a_d < K_d.
    pub fn new(torus: &Grid, strides: &[u32], offset: &[u32]) -> Result<Self, TopologyError> {
        let shape = check_strides(torus, strides)?;
        if offset.len() != torus.dims() {
            return Err(TopologyError::DimensionMismatch {
                expected: torus.dims(),
                got: offset.len(),
            });
        }
        for (dim, (&value, &side)) in offset.iter().zip(strides).enumerate() {
            if value >= side {
                return Err(TopologyError::CoordinateOutOfRange { dim, value, side });
            }
        }
        Ok(Self {
            torus: *torus,
            strides: Coords::new(strides)?,
            offset: Coords::new(offset)?,
            shape,
        })
    }

    /// The enclosing torus.
    #[must_use]
    pub fn torus(&self) -> &Grid {
        &self.torus
    }

    /// The strides K, dimension 0 first.
    #[must_use]
    pub fn strides(&self) -> &Coords {
        &self.strides
    }

    /// The offset a (the subtorus node with the lowest coordinates).
    #[must_use]
    pub fn offset(&self) -> &Coords {
        &self.offset
    }

    /// The number of subtorus nodes along each dimension, N_d / K_d.
    #[must_use]
    pub fn shape(&self) -> &Coords {
        &self.shape
    }

    /// Number of nodes, Π N_d / K_d.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        // At most the torus's node count.
        self.shape.product() as usize
    }

    /// Whether `node` belongs to the subtorus (false outside the torus).
    #[must_use]
    pub fn contains(&self, node: NodeId) -> bool {
        self.torus.coords_of(node).is_ok_and(|c| {
            c.iter()
                .zip(self.strides.iter().zip(self.offset.iter()))
                .all(|(&x, (&k, &a))| x % k == a)
        })
    }

    /// The machine node at subtorus coordinates `local` (i_d < N_d / K_d):
    /// the node with coordinates a_d + i_d·K_d.
    ///
    /// # Errors
    /// [`TopologyError::DimensionMismatch`] or
    /// [`TopologyError::CoordinateOutOfRange`] for `local` outside the
    /// subtorus shape.
    pub fn node_at(&self, local: &[u32]) -> Result<NodeId, TopologyError> {
        let g = Grid::torus(&self.shape)?;
        g.check_coords(local)?;
        let mut c = self.offset;
        for (x, (&i, &k)) in c.iter_mut().zip(local.iter().zip(self.strides.iter())) {
            *x += i * k;
        }
        Ok(self.torus.id_of_valid(&c))
    }

    /// The subtorus coordinates of `node`, if it belongs to the subtorus.
    #[must_use]
    pub fn local_coords(&self, node: NodeId) -> Option<Coords> {
        if !self.contains(node) {
            return None;
        }
        let mut c = self.torus.coords_of_valid(node);
        for (x, &k) in c.iter_mut().zip(self.strides.iter()) {
            *x /= k;
        }
        Some(c)
    }

    /// The nodes, in increasing id order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + use<> {
        let (torus, strides, offset, shape) = (self.torus, self.strides, self.offset, self.shape);
        let mut local = Some(Coords::filled(shape.len(), 0).unwrap_or(shape));
        core::iter::from_fn(move || {
            let cur = local?;
            let mut c = offset;
            for (x, (&i, &k)) in c.iter_mut().zip(cur.iter().zip(strides.iter())) {
                *x += i * k;
            }
            // Odometer, dimension 0 fastest: ids increase.
            let mut next = cur;
            local = None;
            for (v, &m) in next.iter_mut().zip(shape.iter()) {
                *v += 1;
                if *v < m {
                    local = Some(next);
                    break;
                }
                *v = 0;
            }
            Some(torus.id_of_valid(&c))
        })
    }

    /// Number of edges: one per node for each dimension along which the
    /// subtorus has at least two nodes.
    #[must_use]
    pub fn num_edges(&self) -> usize {
        self.shape.iter().filter(|&&m| m >= 2).count() * self.num_nodes()
    }

    /// The forward edge of subtorus node `from` along `dim`.
    ///
    /// # Errors
    /// [`TopologyError::NoSuchEdge`] if `from` is not a node of the
    /// subtorus, `dim` is not a dimension, or the subtorus has a single node
    /// along `dim`.
    pub fn edge(&self, from: NodeId, dim: usize) -> Result<SubtorusEdge, TopologyError> {
        let none = TopologyError::NoSuchEdge {
            from: u64::from(from),
            dim,
        };
        if !self.contains(from) || dim >= self.shape.len() || self.shape[dim] < 2 {
            return Err(none);
        }
        let mut c = self.torus.coords_of_valid(from);
        c[dim] = (c[dim] + self.strides[dim]) % self.torus.sides()[dim];
        Ok(SubtorusEdge {
            from,
            to: self.torus.id_of_valid(&c),
            dim,
        })
    }

    /// Every edge: for each node in increasing id order, its forward edges
    /// by increasing dimension.
    pub fn edges(&self) -> impl Iterator<Item = SubtorusEdge> + use<> {
        let s = *self;
        self.nodes()
            .flat_map(move |n| (0..s.shape.len()).filter_map(move |d| s.edge(n, d).ok()))
    }

    /// The span of `edge` (Gupta §2.1): the K_d machine links it is routed
    /// over, from `edge.from()` forward along its dimension.
    ///
    /// # Errors
    /// [`TopologyError::NoSuchEdge`] unless `edge` is an edge of this
    /// subtorus.
    pub fn span(&self, edge: &SubtorusEdge) -> Result<Span, TopologyError> {
        let own = self.edge(edge.from, edge.dim)?;
        if own != *edge {
            return Err(TopologyError::NoSuchEdge {
                from: u64::from(edge.from),
                dim: edge.dim,
            });
        }
        let d = edge.dim;
        let c = self.torus.coords_of_valid(edge.from);
        let stride: u32 = self.torus.sides()[..d].iter().product();
        let side = self.torus.sides()[d];
        Ok(Span {
            line: edge.from - c[d] * stride,
            stride,
            side,
            pos: c[d],
            left: self.strides[d],
        })
    }

    /// The machine links used by the subtorus: the union of the spans of its
    /// edges, each link once. Along a dimension with at least two subtorus
    /// nodes these are all the links of the lines through the subtorus.
    pub fn links(&self) -> impl Iterator<Item = Link> + use<> {
        let s = *self;
        self.edges()
            .filter(move |e| {
                // On a machine side of 2 both forward edges of a line use the
                // same single link; keep the one from coordinate 0.
                let d = e.dim;
                s.torus.sides()[d] != 2 || s.torus.coords_of_valid(e.from)[d] == 0
            })
            .flat_map(move |e| s.span(&e).into_iter().flatten())
    }

    /// Whether no link is used by both subtori (Definition 1), for two
    /// subtori of the same torus, with the same strides or not.
    ///
    /// The lines along dimension d used by T^{(a)}_{N/K} are those whose
    /// other coordinates x_e satisfy x_e ≡ a_e (mod K_e); two such systems
    /// of congruences have a common solution iff a_e ≡ a′_e
    /// (mod gcd(K_e, K′_e)). The subtori therefore share a link iff for
    /// some d both have at least two nodes along d and their offsets agree
    /// modulo gcd(K_e, K′_e) in every other dimension e. With equal strides
    /// and at least two nodes per side this is Remark 1: disjoint iff the
    /// offsets differ in at least two dimensions.
    ///
    /// # Errors
    /// [`TopologyError::MachineMismatch`] if the tori differ.
    pub fn is_link_disjoint(&self, other: &Subtorus) -> Result<bool, TopologyError> {
        if self.torus != other.torus {
            return Err(TopologyError::MachineMismatch {
                left: self.torus.sides().to_vec(),
                right: other.torus.sides().to_vec(),
            });
        }
        let n = self.shape.len();
        let agrees = |e: usize| {
            let g = gcd(self.strides[e], other.strides[e]);
            self.offset[e] % g == other.offset[e] % g
        };
        let share = (0..n).any(|d| {
            self.shape[d] >= 2 && other.shape[d] >= 2 && (0..n).all(|e| e == d || agrees(e))
        });
        Ok(!share)
    }
}

/// Printed as `T^(a,b)_m1xm2 of torus:N1xN2` (offset and shape dimension 0
/// first).
impl fmt::Display for Subtorus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T^{}_", self.offset)?;
        for (i, m) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str("x")?;
            }
            write!(f, "{m}")?;
        }
        write!(f, " of {}", crate::Topology::Grid(self.torus))
    }
}

/// The links of one subtorus edge, made by [`Subtorus::span`].
#[derive(Debug, Clone)]
pub struct Span {
    line: NodeId,
    stride: u32,
    side: u32,
    pos: u32,
    left: u32,
}

impl Iterator for Span {
    type Item = Link;

    fn next(&mut self) -> Option<Link> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let next = (self.pos + 1) % self.side;
        let link = Link::new(
            self.line + self.pos * self.stride,
            self.line + next * self.stride,
        );
        self.pos = next;
        Some(link)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Span {}

/// The Π K_d subtori of a torus with the same strides K, and their
/// partition into pairwise link-disjoint sets (Gupta & Srimani §2.1).
///
/// ```
/// use partalloc_topology::{Grid, SubtorusFamily};
/// let t = Grid::torus(&[8, 12])?;
/// let f = SubtorusFamily::new(&t, &[2, 3])?;
/// assert_eq!(f.len(), 6);
/// assert_eq!(f.num_disjoint_sets(), 3); // max(K1, K2)
/// assert_eq!(f.set_size(), 2); // min(K1, K2)
/// assert_eq!(f.disjoint_set_of(&[1, 2])?, 0);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "SubtorusFamilyRepr", try_from = "SubtorusFamilyRepr")
)]
pub struct SubtorusFamily {
    torus: Grid,
    strides: Coords,
}

#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SubtorusFamilyRepr {
    torus: Grid,
    strides: Coords,
}

#[cfg(feature = "serde")]
impl From<SubtorusFamily> for SubtorusFamilyRepr {
    fn from(f: SubtorusFamily) -> Self {
        Self {
            torus: f.torus,
            strides: f.strides,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<SubtorusFamilyRepr> for SubtorusFamily {
    type Error = TopologyError;
    fn try_from(r: SubtorusFamilyRepr) -> Result<Self, TopologyError> {
        Self::new(&r.torus, &r.strides)
    }
}

impl SubtorusFamily {
    /// The subtori of `torus` with strides `strides`.
    ///
    /// # Errors
    /// As [`Subtorus::new`], for the torus and the strides.
    pub fn new(torus: &Grid, strides: &[u32]) -> Result<Self, TopologyError> {
        check_strides(torus, strides)?;
        Ok(Self {
            torus: *torus,
            strides: Coords::new(strides)?,
        })
    }

    /// The enclosing torus.
    #[must_use]
    pub fn torus(&self) -> &Grid {
        &self.torus
    }

    /// The strides K.
    #[must_use]
    pub fn strides(&self) -> &Coords {
        &self.strides
    }

    /// Number of subtori, Π K_d.
    #[must_use]
    pub fn len(&self) -> usize {
        // Π K_d divides the node count.
        self.strides.product() as usize
    }

    /// Always false: a torus has at least one subtorus.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The subtorus with offset `offset`.
    ///
    /// # Errors
    /// As [`Subtorus::new`].
    pub fn subtorus(&self, offset: &[u32]) -> Result<Subtorus, TopologyError> {
        Subtorus::new(&self.torus, &self.strides, offset)
    }

    /// Every subtorus, by offset with dimension 0 fastest (for K_1 = K_2 = 2:
    /// (0,0), (1,0), (0,1), (1,1)).
    pub fn iter(&self) -> impl Iterator<Item = Subtorus> + use<> {
        let strides_grid = Grid::mesh(&self.strides).ok();
        let family = *self;
        let count = self.len();
        (0..count).filter_map(move |i| {
            let g = strides_grid?;
            let offset = g.coords_of(i as NodeId).ok()?;
            family.subtorus(&offset).ok()
        })
    }

    /// Number of sets of the partition, max_d K_d.
    #[must_use]
    pub fn num_disjoint_sets(&self) -> usize {
        self.strides.iter().copied().max().unwrap_or(1) as usize
    }

    /// Number of subtori in each set, Π K_d / max_d K_d (min(K_1, K_2) in
    /// two dimensions). When every subtorus side has at least two nodes this
    /// is the largest number of pairwise link-disjoint subtori.
    #[must_use]
    pub fn set_size(&self) -> usize {
        self.len() / self.num_disjoint_sets()
    }

    /// The set of the partition holding the subtorus with offset `offset`:
    /// (Σ_d a_d) mod max_d K_d.
    ///
    /// # Errors
    /// As [`Subtorus::new`].
    pub fn disjoint_set_of(&self, offset: &[u32]) -> Result<usize, TopologyError> {
        let s = self.subtorus(offset)?;
        Ok((s.offset().sum() % self.num_disjoint_sets() as u64) as usize)
    }

    /// The partition of the subtori into [`num_disjoint_sets`] sets of
    /// [`set_size`] pairwise link-disjoint subtori; set `t` lists its
    /// members in the order of [`SubtorusFamily::iter`].
    ///
    /// [`num_disjoint_sets`]: SubtorusFamily::num_disjoint_sets
    /// [`set_size`]: SubtorusFamily::set_size
    #[must_use]
    pub fn disjoint_sets(&self) -> Vec<Vec<Subtorus>> {
        let q = self.num_disjoint_sets();
        let mut sets = vec![Vec::with_capacity(self.set_size()); q];
        for s in self.iter() {
            sets[(s.offset().sum() % q as u64) as usize].push(s);
        }
        sets
    }
}
