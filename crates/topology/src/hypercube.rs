//! The binary hypercube Q_n and its subcubes.

use core::fmt;
use core::str::FromStr;

use crate::{NodeId, TopologyError};

/// Largest supported hypercube dimension (2^30 nodes).
pub const MAX_HYPERCUBE_DIM: u32 = 30;

/// The binary n-cube Q_n: 2^n nodes, node id bit i = coordinate along
/// dimension i, links between ids at Hamming distance 1.
///
/// ```
/// use partalloc_topology::Hypercube;
/// let q4 = Hypercube::new(4)?;
/// assert_eq!(q4.num_nodes(), 16);
/// assert_eq!(q4.num_links(), 32);
/// assert_eq!(q4.distance(0b0000, 0b1011)?, 3);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "HypercubeRepr", try_from = "HypercubeRepr")
)]
pub struct Hypercube {
    dim: u32,
}

/// The serialized form of a [`Hypercube`]; deserializing validates the
/// dimension.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct HypercubeRepr {
    dim: u32,
}

#[cfg(feature = "serde")]
impl From<Hypercube> for HypercubeRepr {
    fn from(h: Hypercube) -> Self {
        Self { dim: h.dim }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<HypercubeRepr> for Hypercube {
    type Error = TopologyError;
    fn try_from(r: HypercubeRepr) -> Result<Self, TopologyError> {
        Self::new(r.dim)
    }
}

impl Hypercube {
    /// Q_n with `dim` = n.
    ///
    /// # Errors
    /// [`TopologyError::HypercubeTooLarge`] above [`MAX_HYPERCUBE_DIM`].
    pub fn new(dim: u32) -> Result<Self, TopologyError> {
        if dim > MAX_HYPERCUBE_DIM {
            return Err(TopologyError::HypercubeTooLarge {
                dim,
                max: MAX_HYPERCUBE_DIM,
            });
        }
        Ok(Self { dim })
    }

    /// The dimension n.
    #[must_use]
    pub fn dim(&self) -> u32 {
        self.dim
    }

    /// Number of nodes, 2^n.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        1usize << self.dim
    }

    /// Number of links, n·2^(n−1).
    #[must_use]
    pub fn num_links(&self) -> u64 {
        u64::from(self.dim) * (1u64 << self.dim) / 2
    }

    /// The diameter, n.
    #[must_use]
    pub fn diameter(&self) -> u32 {
        self.dim
    }

    /// Checks that `node` is a node of this hypercube.
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`].
    pub fn check_node(&self, node: NodeId) -> Result<(), TopologyError> {
        if (node as usize) < self.num_nodes() {
            Ok(())
        } else {
            Err(TopologyError::NodeOutOfRange {
                node: u64::from(node),
                nodes: self.num_nodes() as u64,
            })
        }
    }

    /// The n neighbours of `node`, by increasing dimension.
    ///
    /// # Errors
    /// As [`Hypercube::check_node`].
    pub fn neighbours(&self, node: NodeId) -> Result<Vec<NodeId>, TopologyError> {
        self.check_node(node)?;
        Ok((0..self.dim).map(|i| node ^ (1 << i)).collect())
    }

    /// Hamming distance between two nodes.
    ///
    /// # Errors
    /// As [`Hypercube::check_node`], for either node.
    pub fn distance(&self, a: NodeId, b: NodeId) -> Result<u32, TopologyError> {
        self.check_node(a)?;
        self.check_node(b)?;
        Ok((a ^ b).count_ones())
    }

    /// The whole machine as a subcube (`XX…X`).
    #[must_use]
    pub fn whole(&self) -> Subcube {
        Subcube {
            n: self.dim,
            free: mask(self.dim),
            fixed: 0,
        }
    }
}

fn mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// A subcube of Q_n, written as a ternary address over {0, 1, X}: the X
/// positions are the subcube's free dimensions, the others are fixed.
///
/// Printed and parsed most significant dimension first, as in the papers
/// (`0X1X` in Q_4 is nodes {2, 3, 6, 7}).
///
/// ```
/// use partalloc_topology::Subcube;
/// let s: Subcube = "0X1X".parse()?;
/// assert_eq!(s.dim(), 2);
/// assert_eq!(s.nodes().collect::<Vec<_>>(), vec![2, 3, 6, 7]);
/// assert_eq!(s.to_string(), "0X1X");
/// assert!(s.contains(7) && !s.contains(8));
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "SubcubeRepr", try_from = "SubcubeRepr")
)]
pub struct Subcube {
    n: u32,
    free: u32,
    fixed: u32,
}

/// The serialized form of a [`Subcube`]; deserializing validates it like
/// [`Subcube::new`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SubcubeRepr {
    n: u32,
    free: u32,
    fixed: u32,
}

#[cfg(feature = "serde")]
impl From<Subcube> for SubcubeRepr {
    fn from(s: Subcube) -> Self {
        Self {
            n: s.n,
            free: s.free,
            fixed: s.fixed,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<SubcubeRepr> for Subcube {
    type Error = TopologyError;
    fn try_from(r: SubcubeRepr) -> Result<Self, TopologyError> {
        Self::new(r.n, r.free, r.fixed)
    }
}

impl Subcube {
    /// The subcube of Q_`n` whose free dimensions are the set bits of
    /// `free` and whose other address bits are those of `fixed` (bits of
    /// `fixed` under `free` are ignored).
    ///
    /// # Errors
    /// `n` above [`MAX_HYPERCUBE_DIM`], or `free`/`fixed` with bits at or
    /// above position `n`.
    pub fn new(n: u32, free: u32, fixed: u32) -> Result<Self, TopologyError> {
        Hypercube::new(n)?;
        if (free | fixed) & !mask(n) != 0 {
            return Err(TopologyError::InvalidAddress {
                text: format!("free={free:#b} fixed={fixed:#b}"),
                reason: "address bits beyond the cube's dimension",
            });
        }
        Ok(Self {
            n,
            free,
            fixed: fixed & !free,
        })
    }

    /// The buddy-aligned Q_k of Q_n whose low `k` dimensions are free and
    /// whose high bits equal `alpha` (nodes α·2^k … (α+1)·2^k − 1).
    ///
    /// # Errors
    /// `k > n` or `alpha ≥ 2^(n−k)`.
    pub fn aligned(n: u32, k: u32, alpha: u32) -> Result<Self, TopologyError> {
        if k > n || u64::from(alpha) >= 1u64 << (n - k) {
            return Err(TopologyError::InvalidAddress {
                text: format!("Q_{k} block {alpha} of Q_{n}"),
                reason: "block index or size outside the cube",
            });
        }
        Self::new(n, mask(k), alpha << k)
    }

    /// The single-node subcube {`node`} of Q_n.
    ///
    /// # Errors
    /// `node` outside Q_n.
    pub fn node(n: u32, node: NodeId) -> Result<Self, TopologyError> {
        Hypercube::new(n)?.check_node(node)?;
        Self::new(n, 0, node)
    }

    /// The dimension n of the enclosing hypercube.
    #[must_use]
    pub fn cube_dim(&self) -> u32 {
        self.n
    }

    /// The subcube's own dimension (number of X positions).
    #[must_use]
    pub fn dim(&self) -> u32 {
        self.free.count_ones()
    }

    /// Number of nodes, 2^dim.
    #[must_use]
    pub fn len(&self) -> u64 {
        1u64 << self.dim()
    }

    /// Always false: a subcube has at least one node.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bit mask of the free (X) dimensions.
    #[must_use]
    pub fn free_mask(&self) -> u32 {
        self.free
    }

    /// The fixed address bits (zero under the free mask); also the lowest
    /// node id of the subcube.
    #[must_use]
    pub fn base(&self) -> NodeId {
        self.fixed
    }

    /// Whether `node` belongs to the subcube.
    #[must_use]
    pub fn contains(&self, node: NodeId) -> bool {
        node & !mask(self.n) == 0 && node & !self.free == self.fixed
    }

    /// Whether the two subcubes share a node.
    #[must_use]
    pub fn overlaps(&self, other: &Subcube) -> bool {
        let both_fixed = !self.free & !other.free;
        self.n == other.n && (self.fixed ^ other.fixed) & both_fixed == 0
    }

    /// Whether this subcube lies inside `other`.
    #[must_use]
    pub fn is_within(&self, other: &Subcube) -> bool {
        self.n == other.n
            && self.free & !other.free == 0
            && (self.fixed ^ other.fixed) & !other.free == 0
    }

    /// The node ids, in increasing order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + use<> {
        let (free, fixed) = (self.free, self.fixed);
        // Enumerate the subsets of `free` in increasing order.
        let mut sub = Some(0u32);
        core::iter::from_fn(move || {
            let s = sub?;
            sub = if s == free {
                None
            } else {
                Some((s.wrapping_sub(free)) & free)
            };
            Some(fixed | s)
        })
    }
}

impl fmt::Debug for Subcube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Subcube({self})")
    }
}

/// The ternary address, most significant dimension first.
impl fmt::Display for Subcube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in (0..self.n).rev() {
            let c = if self.free >> i & 1 == 1 {
                'X'
            } else if self.fixed >> i & 1 == 1 {
                '1'
            } else {
                '0'
            };
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// Parses a ternary address such as `0X1X` (`x` and `*` also mean X);
/// its length is the dimension of the enclosing cube.
impl FromStr for Subcube {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Self, TopologyError> {
        let err = |reason| TopologyError::InvalidAddress {
            text: crate::echo(s),
            reason,
        };
        let n = s.chars().count();
        if n > MAX_HYPERCUBE_DIM as usize {
            return Err(err("longer than the largest supported cube"));
        }
        let (mut free, mut fixed) = (0u32, 0u32);
        for c in s.chars() {
            free <<= 1;
            fixed <<= 1;
            match c {
                '0' => {}
                '1' => fixed |= 1,
                'X' | 'x' | '*' => free |= 1,
                _ => return Err(err("only 0, 1 and X are allowed")),
            }
        }
        // n ≤ MAX_HYPERCUBE_DIM was checked above.
        Self::new(n as u32, free, fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_blocks_are_buddy_blocks() {
        let s = Subcube::aligned(4, 2, 3).unwrap();
        assert_eq!(s.to_string(), "11XX");
        assert_eq!(s.nodes().collect::<Vec<_>>(), vec![12, 13, 14, 15]);
        assert!(Subcube::aligned(4, 2, 4).is_err());
        assert!(Subcube::aligned(4, 5, 0).is_err());
    }

    #[test]
    fn overlap_and_containment() {
        let a: Subcube = "0XXX".parse().unwrap();
        let b: Subcube = "X1X0".parse().unwrap();
        let c: Subcube = "1X00".parse().unwrap();
        assert!(a.overlaps(&b));
        assert!(!a.overlaps(&c));
        assert!("01X0".parse::<Subcube>().unwrap().is_within(&b));
        assert!(!b.is_within(&a));
    }

    #[test]
    fn parse_errors() {
        assert!("01a".parse::<Subcube>().is_err());
        assert_eq!("".parse::<Subcube>().unwrap().len(), 1);
        assert!(Subcube::new(3, 0b1000, 0).is_err());
    }

    #[test]
    fn q0_subcube_lists_its_node() {
        let s = Subcube::node(3, 5).unwrap();
        assert_eq!(s.nodes().collect::<Vec<_>>(), vec![5]);
        assert_eq!(s.to_string(), "101");
    }
}
