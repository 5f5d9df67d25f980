//! n-dimensional meshes and tori with arbitrary sides, including k-ary
//! n-cubes.

use crate::{Coords, GridBox, MAX_NODES, NodeId, TopologyError};

/// An n-dimensional mesh (no wrap-around links) or torus (wrap-around links
/// in every dimension), with possibly unequal sides.
///
/// Node ids follow the workspace convention: id = Σ a_i · Π_{j<i} k_j, so
/// dimension 0 varies fastest.
///
/// ```
/// use partalloc_topology::Grid;
/// let t3d = Grid::mesh(&[4, 4, 16])?; // a Cray T3D-like 2^2 × 2^2 × 2^4 machine
/// assert_eq!(t3d.num_nodes(), 256);
/// let id = t3d.id_of(&[1, 2, 3])?;
/// assert_eq!(id, 1 + 4 * 2 + 16 * 3);
/// assert_eq!(t3d.coords_of(id)?.as_slice(), &[1, 2, 3]);
///
/// let ring = Grid::torus(&[8])?;
/// assert_eq!(ring.distance(0, 7)?, 1); // Lee distance wraps around
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "GridRepr", try_from = "GridRepr")
)]
pub struct Grid {
    sides: Coords,
    wrap: bool,
    nodes: u32,
}

/// The serialized form of a [`Grid`]; deserializing validates it like
/// [`Grid::new`], so a file cannot produce a grid with a zero side.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct GridRepr {
    sides: Coords,
    wrap: bool,
}

#[cfg(feature = "serde")]
impl From<Grid> for GridRepr {
    fn from(g: Grid) -> Self {
        Self {
            sides: g.sides,
            wrap: g.wrap,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<GridRepr> for Grid {
    type Error = TopologyError;
    fn try_from(r: GridRepr) -> Result<Self, TopologyError> {
        Self::new(&r.sides, r.wrap)
    }
}

impl Grid {
    /// A grid with the given sides (dimension 0 first); `wrap` makes it a
    /// torus.
    ///
    /// # Errors
    /// No or too many dimensions, a zero side, or more than
    /// [`MAX_NODES`] nodes.
    pub fn new(sides: &[u32], wrap: bool) -> Result<Self, TopologyError> {
        let sides = Coords::new(sides)?;
        if let Some(dim) = sides.iter().position(|&s| s == 0) {
            return Err(TopologyError::ZeroSide { dim });
        }
        // Eight sides of 2^16 already overflow u128; saturating keeps any
        // such shape above MAX_NODES.
        let nodes: u128 = sides
            .iter()
            .fold(1u128, |n, &s| n.saturating_mul(u128::from(s)));
        if nodes > u128::from(MAX_NODES) {
            return Err(TopologyError::TooManyNodes {
                nodes,
                max: MAX_NODES,
            });
        }
        Ok(Self {
            sides,
            wrap,
            // Checked against MAX_NODES (< 2^32) above.
            nodes: nodes as u32,
        })
    }

    /// A mesh with the given sides.
    ///
    /// # Errors
    /// As [`Grid::new`].
    pub fn mesh(sides: &[u32]) -> Result<Self, TopologyError> {
        Self::new(sides, false)
    }

    /// A torus with the given sides.
    ///
    /// # Errors
    /// As [`Grid::new`].
    pub fn torus(sides: &[u32]) -> Result<Self, TopologyError> {
        Self::new(sides, true)
    }

    /// The k-ary n-cube Q_n^k: `n` dimensions of side `k`, a mesh unless
    /// `wrap` (Kang et al. use meshes unless stated).
    ///
    /// # Errors
    /// As [`Grid::new`].
    pub fn kary_ncube(k: u32, n: usize, wrap: bool) -> Result<Self, TopologyError> {
        Self::new(&Coords::filled(n, k)?, wrap)
    }

    /// The sides, dimension 0 first.
    #[must_use]
    pub fn sides(&self) -> &Coords {
        &self.sides
    }

    /// Number of dimensions.
    #[must_use]
    pub fn dims(&self) -> usize {
        self.sides.len()
    }

    /// Whether the grid has wrap-around links (a torus).
    #[must_use]
    pub fn is_torus(&self) -> bool {
        self.wrap
    }

    /// `Some(k)` if every side equals `k` (a k-ary n-cube).
    #[must_use]
    pub fn radix(&self) -> Option<u32> {
        let k = self.sides[0];
        self.sides.iter().all(|&s| s == k).then_some(k)
    }

    /// Number of nodes.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.nodes as usize
    }

    /// Checks that `coords` has one in-range value per dimension.
    ///
    /// # Errors
    /// [`TopologyError::DimensionMismatch`] or
    /// [`TopologyError::CoordinateOutOfRange`].
    pub fn check_coords(&self, coords: &[u32]) -> Result<(), TopologyError> {
        if coords.len() != self.dims() {
            return Err(TopologyError::DimensionMismatch {
                expected: self.dims(),
                got: coords.len(),
            });
        }
        for (dim, (&value, &side)) in coords.iter().zip(self.sides.iter()).enumerate() {
            if value >= side {
                return Err(TopologyError::CoordinateOutOfRange { dim, value, side });
            }
        }
        Ok(())
    }

    /// Checks that `node` is a node of this grid.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`].
    pub fn check_node(&self, node: NodeId) -> Result<(), TopologyError> {
        if node < self.nodes {
            Ok(())
        } else {
            Err(TopologyError::NodeOutOfRange {
                node: u64::from(node),
                nodes: u64::from(self.nodes),
            })
        }
    }

    /// The id of the node at `coords`.
    ///
    /// # Errors
    /// As [`Grid::check_coords`].
    pub fn id_of(&self, coords: &[u32]) -> Result<NodeId, TopologyError> {
        self.check_coords(coords)?;
        Ok(self.id_of_valid(coords))
    }

    /// The id of coordinates already known to be valid.
    #[inline]
    pub(crate) fn id_of_valid(&self, coords: &[u32]) -> NodeId {
        let mut id = 0u32;
        for (&c, &s) in coords.iter().zip(self.sides.iter()).rev() {
            id = id * s + c;
        }
        id
    }

    /// The coordinates of `node`.
    ///
    /// # Errors
    /// As [`Grid::check_node`].
    pub fn coords_of(&self, node: NodeId) -> Result<Coords, TopologyError> {
        self.check_node(node)?;
        Ok(self.coords_of_valid(node))
    }

    #[inline]
    pub(crate) fn coords_of_valid(&self, node: NodeId) -> Coords {
        let mut c = self.sides;
        let mut rest = node;
        for (v, &s) in c.iter_mut().zip(self.sides.iter()) {
            *v = rest % s;
            rest /= s;
        }
        c
    }

    /// The distinct neighbours of `node`, in increasing dimension, minus
    /// before plus. On a torus of side 2 the two directions reach the same
    /// node, which is listed once; a side of 1 contributes no neighbour.
    ///
    /// # Errors
    /// As [`Grid::check_node`].
    pub fn neighbours(&self, node: NodeId) -> Result<Vec<NodeId>, TopologyError> {
        let c = self.coords_of(node)?;
        let mut out = Vec::with_capacity(2 * self.dims());
        let mut stride = 1u32;
        for (&v, &s) in c.iter().zip(self.sides.iter()) {
            let mut push = |nc: u32| {
                let n = node - v * stride + nc * stride;
                if n != node && !out.contains(&n) {
                    out.push(n);
                }
            };
            if v > 0 {
                push(v - 1);
            } else if self.wrap {
                push(s - 1);
            }
            if v + 1 < s {
                push(v + 1);
            } else if self.wrap {
                push(0);
            }
            stride *= s;
        }
        Ok(out)
    }

    /// Hop distance between two nodes: Manhattan distance on a mesh, Lee
    /// distance (Σ min(|d|, k − |d|)) on a torus.
    ///
    /// # Errors
    /// As [`Grid::check_node`], for either node.
    pub fn distance(&self, a: NodeId, b: NodeId) -> Result<u32, TopologyError> {
        let (ca, cb) = (self.coords_of(a)?, self.coords_of(b)?);
        Ok(ca
            .iter()
            .zip(cb.iter())
            .zip(self.sides.iter())
            .map(|((&x, &y), &k)| {
                let d = x.abs_diff(y);
                if self.wrap { d.min(k - d) } else { d }
            })
            .sum())
    }

    /// The largest distance between two nodes.
    #[must_use]
    pub fn diameter(&self) -> u32 {
        self.sides
            .iter()
            .map(|&k| if self.wrap { k / 2 } else { k - 1 })
            .sum()
    }

    /// Number of (undirected) links.
    #[must_use]
    pub fn num_links(&self) -> u64 {
        let n = u64::from(self.nodes);
        self.sides
            .iter()
            .map(|&k| {
                let k = u64::from(k);
                match (self.wrap, k) {
                    (_, 1) => 0,
                    (true, 2) => n / 2,
                    (true, _) => n,
                    (false, _) => n / k * (k - 1),
                }
            })
            .sum()
    }

    /// The box covering the whole grid.
    #[must_use]
    pub fn whole(&self) -> GridBox {
        GridBox::from_parts(
            Coords::filled(self.dims(), 0).unwrap_or(self.sides),
            self.sides,
        )
    }

    /// Checks that `b` lies inside the grid (boxes never wrap around).
    ///
    /// # Errors
    /// [`TopologyError::DimensionMismatch`] or [`TopologyError::BoxOutOfBounds`].
    pub fn check_box(&self, b: &GridBox) -> Result<(), TopologyError> {
        if b.dims() != self.dims() {
            return Err(TopologyError::DimensionMismatch {
                expected: self.dims(),
                got: b.dims(),
            });
        }
        let fits = (0..self.dims()).all(|i| {
            u64::from(b.base()[i]) + u64::from(b.extents()[i]) <= u64::from(self.sides[i])
        });
        if fits {
            Ok(())
        } else {
            Err(TopologyError::BoxOutOfBounds {
                boxed: b.to_string(),
                sides: self.sides.to_vec(),
            })
        }
    }

    /// The node ids of box `b`, in increasing id order.
    ///
    /// # Errors
    /// As [`Grid::check_box`].
    pub fn box_nodes(&self, b: &GridBox) -> Result<BoxNodes, TopologyError> {
        self.check_box(b)?;
        Ok(BoxNodes::new(self, b))
    }
}

/// Iterator over the node ids of a box, in increasing id order (dimension 0
/// fastest). Made by [`Grid::box_nodes`].
#[derive(Debug, Clone)]
pub struct BoxNodes {
    sides: Coords,
    base: Coords,
    extents: Coords,
    offset: Coords,
    done: bool,
}

impl BoxNodes {
    fn new(grid: &Grid, b: &GridBox) -> Self {
        let mut offset = *b.base();
        offset.as_mut_slice().fill(0);
        Self {
            sides: *grid.sides(),
            base: *b.base(),
            extents: *b.extents(),
            offset,
            done: false,
        }
    }
}

impl Iterator for BoxNodes {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.done {
            return None;
        }
        let mut id = 0u32;
        for i in (0..self.sides.len()).rev() {
            id = id * self.sides[i] + self.base[i] + self.offset[i];
        }
        // Odometer increment, dimension 0 fastest.
        self.done = true;
        for i in 0..self.sides.len() {
            self.offset[i] += 1;
            if self.offset[i] < self.extents[i] {
                self.done = false;
                break;
            }
            self.offset[i] = 0;
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_grids_are_rejected() {
        assert_eq!(Grid::mesh(&[4, 0]), Err(TopologyError::ZeroSide { dim: 1 }));
        assert_eq!(Grid::mesh(&[]), Err(TopologyError::NoDimensions));
        assert!(matches!(
            Grid::mesh(&[1 << 16, 1 << 16, 2]),
            Err(TopologyError::TooManyNodes { .. })
        ));
    }

    #[test]
    fn link_counts() {
        assert_eq!(Grid::mesh(&[4, 4]).unwrap().num_links(), 24);
        assert_eq!(Grid::torus(&[4, 4]).unwrap().num_links(), 32);
        assert_eq!(Grid::torus(&[2, 2]).unwrap().num_links(), 4);
        assert_eq!(Grid::torus(&[8, 8]).unwrap().diameter(), 8);
        assert_eq!(Grid::mesh(&[8, 8]).unwrap().diameter(), 14);
    }

    #[test]
    fn neighbours_in_a_corner_and_across_the_wrap() {
        let m = Grid::mesh(&[3, 3]).unwrap();
        assert_eq!(m.neighbours(0).unwrap(), vec![1, 3]);
        let t = Grid::torus(&[3, 3]).unwrap();
        assert_eq!(t.neighbours(0).unwrap(), vec![2, 1, 6, 3]);
        assert!(m.neighbours(9).is_err());
    }

    #[test]
    fn box_nodes_in_id_order() {
        let g = Grid::mesh(&[4, 4]).unwrap();
        let b = GridBox::new(&[1, 2], &[2, 2]).unwrap();
        assert_eq!(
            g.box_nodes(&b).unwrap().collect::<Vec<_>>(),
            vec![9, 10, 13, 14]
        );
        let outside = GridBox::new(&[3, 0], &[2, 1]).unwrap();
        assert!(g.box_nodes(&outside).is_err());
    }
}
