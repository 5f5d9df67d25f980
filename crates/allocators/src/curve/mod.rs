//! Curve-ordered allocation (Leung et al., IEEE Cluster 2002): the nodes of
//! a mesh are put in one line along a curve, and a job gets free nodes that
//! are close along that line, hence (for a curve that keeps neighbours
//! together) close in the machine. Grants need not be contiguous.
//!
//! | fit | registry name | which free nodes |
//! |---|---|---|
//! | [`Fit::FirstFit`] | `curve-first-fit` | the first free interval of the curve long enough, from its start |
//! | [`Fit::BestFit`] | `curve-best-fit` | the shortest free interval long enough (the first of equals), from its start |
//! | [`Fit::SortedFreeList`] | `curve-sorted-free-list` | the free nodes earliest on the curve |
//!
//! A *free interval* is a maximal run of free nodes consecutive on the
//! curve. When no interval is long enough, first and best fit take the
//! `k` free nodes consecutive among the free ones whose first and last are
//! closest on the curve (the smallest *span*; the earliest of equals), as
//! both reference implementations (PReMAS and SST) do. Sorted free list
//! never needs that: it always takes the `k` earliest free nodes.
//!
//! The curve is the `order` parameter ([`CurveOrder`]): `row-major` (node
//! ids in order), `snake` (rows alternate direction) or `hilbert` (the
//! default; generalised to any sides, [`hilbert`](CurveOrder::Hilbert)).
//! Every curve runs on 1-, 2- and 3-D meshes and on tori, where the wrap
//! links are ignored (SST runs its linear allocators on tori the same
//! way; Leung et al. treat meshes). The order is computed once, when the
//! allocator is built, as two flat tables (rank → node and node → rank,
//! [`Curve`]); the free nodes are kept as a bitset in curve order, so an
//! allocation scans words of that bitset and allocates nothing but the
//! grant's node list. Any request is served by its node count (a box is
//! its volume); faulty nodes are never granted.
//!
//! ```
//! use partalloc_allocators::{registry, Partition, Request};
//! use partalloc_topology::Topology;
//! let machine: Topology = "mesh:4x4".parse()?;
//! let mut ff = registry::build("curve-first-fit[order=snake]", &machine)?;
//! let a = ff.allocate(&Request::nodes(3))?;
//! // Snake: row 0 left to right, then row 1 right to left.
//! assert_eq!(a.partition(), &Partition::Nodes(vec![0, 1, 2]));
//! let b = ff.allocate(&Request::nodes(3))?;
//! assert_eq!(b.partition(), &Partition::Nodes(vec![3, 6, 7]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::str::FromStr;
use std::sync::Arc;

use partalloc_topology::nodeset::set_word_bit;
use partalloc_topology::{Grid, NodeId, NodeSet, Topology, TopologyKind};
use thiserror::Error;

use crate::entry::ParamInfo;
use crate::{
    AllocError, Allocator, BuildError, Managed, Partition, Request, Strategy, StrategySpec, View,
};

mod best_fit;
mod first_fit;
mod hilbert;
mod row_major;
mod snake;
mod sorted_free_list;
mod span;
#[cfg(test)]
mod tests;

pub(crate) use best_fit::ENTRY as BEST_FIT_ENTRY;
pub(crate) use first_fit::ENTRY as FIRST_FIT_ENTRY;
pub(crate) use sorted_free_list::ENTRY as SORTED_FREE_LIST_ENTRY;

/// Sides of a machine of at most three dimensions, padded with 1.
type Sides = [u32; 3];

/// A cell of a walk: coordinates (x, y, z), signed for the walks' arithmetic.
type Cell = [i64; 3];

/// The machine families the curve allocators accept.
const KINDS: &[TopologyKind] = &[TopologyKind::Mesh, TopologyKind::Torus];

/// The most nodes a curve is computed for: its two tables take 8 bytes a
/// node (512 MiB here).
pub const MAX_CURVE_NODES: usize = 1 << 26;

/// The order in which a curve visits the nodes.
///
/// ```
/// use partalloc_allocators::curve::CurveOrder;
/// assert_eq!("snake".parse::<CurveOrder>()?, CurveOrder::Snake);
/// assert_eq!(CurveOrder::default().to_string(), "hilbert");
/// let e = "peano".parse::<CurveOrder>().unwrap_err();
/// assert_eq!(e.to_string(), "unknown curve \"peano\"; known curves: row-major, snake, hilbert");
/// # Ok::<(), partalloc_allocators::curve::CurveError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CurveOrder {
    /// Node ids in increasing order: x fastest, then y, then z.
    RowMajor,
    /// Boustrophedon: each row runs the other way from the one before,
    /// and in 3-D each plane's rows run the other way from the plane
    /// before, so consecutive ranks are neighbours.
    Snake,
    /// The Hilbert curve, generalised to any sides (Červený's
    /// construction; on power-of-two sides the Hilbert curve itself).
    #[default]
    Hilbert,
}

impl CurveOrder {
    /// Every order, in listing order.
    pub const ALL: [Self; 3] = [Self::RowMajor, Self::Snake, Self::Hilbert];

    /// The name the `order` parameter takes.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::RowMajor => "row-major",
            Self::Snake => "snake",
            Self::Hilbert => "hilbert",
        }
    }

    fn walk(self, sides: Sides, visit: &mut dyn FnMut(Cell)) {
        match self {
            Self::RowMajor => row_major::walk(sides, visit),
            Self::Snake => snake::walk(sides, visit),
            Self::Hilbert => hilbert::walk(sides, visit),
        }
    }
}

impl fmt::Display for CurveOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CurveOrder {
    type Err = CurveError;

    fn from_str(s: &str) -> Result<Self, CurveError> {
        Self::ALL
            .into_iter()
            .find(|o| o.name() == s.trim())
            .ok_or_else(|| CurveError::UnknownOrder {
                name: partalloc_topology::echo(s),
            })
    }
}

/// Why a curve could not be made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CurveError {
    /// No curve has this name.
    #[error("unknown curve {name:?}; known curves: row-major, snake, hilbert")]
    UnknownOrder {
        /// The name given.
        name: String,
    },
    /// The machine is not a mesh or torus of one to three dimensions.
    #[error(
        "curves are defined on meshes and tori of 1 to 3 dimensions; this machine has {dims}; use paging or a mesh strategy"
    )]
    Dimensions {
        /// Its number of dimensions (0 for a machine without a grid).
        dims: usize,
    },
    /// The machine is larger than the curve tables are kept for.
    #[error(
        "the machine has {nodes} nodes; curve orders are kept for at most {max} (two 4-byte tables per node)"
    )]
    TooLarge {
        /// Its number of nodes.
        nodes: usize,
        /// [`MAX_CURVE_NODES`].
        max: usize,
    },
    /// The walk did not visit every node exactly once (a defect of this
    /// crate, never of the input).
    #[error("the {order} walk of {sides:?} does not visit every node once; please report this bug")]
    Broken {
        /// The curve.
        order: CurveOrder,
        /// The sides walked.
        sides: Sides,
    },
}

/// A curve through every node of a mesh: the rank of each node along it
/// and the node at each rank, as two flat tables made once.
///
/// ```
/// use partalloc_allocators::curve::{Curve, CurveOrder};
/// use partalloc_topology::Grid;
/// let h = Curve::new(CurveOrder::Hilbert, &Grid::mesh(&[4, 4])?)?;
/// // The Hilbert curve of the 4×4 square: (0,0) (1,0) (1,1) (0,1) (0,2) …
/// assert_eq!(&h.nodes()[..5], &[0, 1, 5, 4, 8]);
/// assert_eq!(h.rank_of(5), Some(2));
/// assert_eq!(h.node_at(15), Some(3)); // it ends at (3,0)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Curve {
    order: CurveOrder,
    sides: Sides,
    nodes: Box<[NodeId]>,
    ranks: Box<[u32]>,
}

impl Curve {
    /// The curve `order` through the nodes of `grid` (wrap links, if any,
    /// are ignored).
    ///
    /// # Errors
    /// [`CurveError::Dimensions`] for more than three dimensions,
    /// [`CurveError::TooLarge`] above [`MAX_CURVE_NODES`] nodes.
    pub fn new(order: CurveOrder, grid: &Grid) -> Result<Self, CurveError> {
        let mut sides = [1u32; 3];
        match grid.sides().as_slice() {
            s @ [_] | s @ [_, _] | s @ [_, _, _] => sides[..s.len()].copy_from_slice(s),
            s => return Err(CurveError::Dimensions { dims: s.len() }),
        }
        let n = grid.num_nodes();
        if n > MAX_CURVE_NODES {
            return Err(CurveError::TooLarge {
                nodes: n,
                max: MAX_CURVE_NODES,
            });
        }
        let broken = CurveError::Broken { order, sides };
        let mut nodes = Vec::with_capacity(n);
        let mut ranks = vec![u32::MAX; n];
        let (nx, ny) = (i64::from(sides[0]), i64::from(sides[1]));
        let inside = |c: Cell| (0..3).all(|d| (0..i64::from(sides[d])).contains(&c[d]));
        let mut ok = true;
        order.walk(sides, &mut |c| {
            // Ids fit u32: grids have at most 2^31 nodes.
            let id = c[0] + nx * (c[1] + ny * c[2]);
            match ranks.get_mut(id as usize) {
                Some(r) if inside(c) && *r == u32::MAX => {
                    *r = nodes.len() as u32;
                    nodes.push(id as NodeId);
                }
                _ => ok = false,
            }
        });
        if !ok || nodes.len() != n {
            return Err(broken);
        }
        Ok(Self {
            order,
            sides,
            nodes: nodes.into_boxed_slice(),
            ranks: ranks.into_boxed_slice(),
        })
    }

    /// Which curve this is.
    #[must_use]
    pub fn order(&self) -> CurveOrder {
        self.order
    }

    /// The machine's sides, padded to three with 1.
    #[must_use]
    pub fn sides(&self) -> [u32; 3] {
        self.sides
    }

    /// Number of nodes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the curve has no node (never: machines have one at least).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The nodes in curve order (rank → node).
    #[must_use]
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// The node at `rank`, if the machine has that many nodes.
    #[must_use]
    pub fn node_at(&self, rank: u32) -> Option<NodeId> {
        self.nodes.get(rank as usize).copied()
    }

    /// The rank of `node`, if it is a node of the machine.
    #[must_use]
    pub fn rank_of(&self, node: NodeId) -> Option<u32> {
        self.ranks.get(node as usize).copied()
    }
}

/// How a curve allocator picks free nodes along the curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fit {
    /// The first free interval long enough, from its start.
    FirstFit,
    /// The shortest free interval long enough, from its start.
    BestFit,
    /// The free nodes earliest on the curve.
    SortedFreeList,
}

impl Fit {
    /// The registry name of the allocator with this fit.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::FirstFit => first_fit::NAME,
            Self::BestFit => best_fit::NAME,
            Self::SortedFreeList => sorted_free_list::NAME,
        }
    }
}

/// The `order` parameter every curve allocator takes.
const ORDER_PARAM: ParamInfo = ParamInfo {
    name: "order",
    default: "hilbert",
    doc: "the curve: row-major, snake or hilbert (generalised to any sides; docs/baselines.md#curve-orders)",
};

/// Builds the curve allocator with `fit` from a registry spec.
fn build_entry(
    fit: Fit,
    topology: &Topology,
    spec: &StrategySpec,
) -> Result<Box<dyn Allocator>, BuildError> {
    let order = spec.choice(
        ORDER_PARAM.name,
        &[
            ("hilbert", CurveOrder::Hilbert),
            ("row-major", CurveOrder::RowMajor),
            ("snake", CurveOrder::Snake),
        ],
    )?;
    Ok(Box::new(CurveAllocator::new(topology.clone(), order, fit)?))
}

/// Which free nodes a fit chose, in ranks: a whole run, or every free rank
/// of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    /// Ranks `lo .. lo + k`, all free.
    Run { lo: usize },
    /// The free ranks of `lo ..= hi` (exactly `k` of them).
    Span { lo: usize, hi: usize },
}

/// The ranks a choice takes, applied to the rank bitset once granted.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Taken {
    /// Ranks `lo .. lo + len`.
    Run { lo: usize, len: usize },
    /// Words of the rank bitset: (word index, the bits taken in it).
    Words(Vec<(usize, u64)>),
}

/// The first set bit at or after `from`, a word at a time.
fn next_one(words: &[u64], from: usize) -> Option<usize> {
    let mut wi = from / 64;
    let mut w = words.get(wi)? & (!0u64 << (from % 64));
    loop {
        if w != 0 {
            return Some(wi * 64 + w.trailing_zeros() as usize);
        }
        wi += 1;
        w = *words.get(wi)?;
    }
}

/// The first clear bit at or after `from`, or `len` if none is below it
/// (the bitset has no set bit at or past `len`).
fn next_zero(words: &[u64], len: usize, from: usize) -> usize {
    let mut wi = from / 64;
    let Some(&first) = words.get(wi) else {
        return len;
    };
    let mut w = !first & (!0u64 << (from % 64));
    loop {
        if w != 0 {
            return (wi * 64 + w.trailing_zeros() as usize).min(len);
        }
        wi += 1;
        match words.get(wi) {
            Some(&x) => w = !x,
            None => return len,
        }
    }
}

/// The maximal runs of set bits, as (start, end) with `end` exclusive, in
/// increasing order.
fn runs(set: &NodeSet) -> impl Iterator<Item = (usize, usize)> + '_ {
    let (words, len) = (set.words(), set.universe());
    let mut at = 0;
    core::iter::from_fn(move || {
        let lo = next_one(words, at)?;
        let hi = next_zero(words, len, lo);
        at = hi;
        Some((lo, hi))
    })
}

/// The set bits in increasing order, a word at a time.
fn ones(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    let mut wi = 0;
    let mut w = words.first().copied().unwrap_or(0);
    core::iter::from_fn(move || {
        while w == 0 {
            wi += 1;
            w = *words.get(wi)?;
        }
        let b = w.trailing_zeros() as usize;
        w &= w - 1;
        Some(wi * 64 + b)
    })
}

/// A curve allocator: one of the three [`Fit`]s along one [`Curve`].
///
/// ```
/// use partalloc_allocators::curve::{CurveAllocator, CurveOrder, Fit};
/// use partalloc_allocators::{Allocator, Partition, Request};
/// let mut bf = CurveAllocator::new("mesh:8x1".parse()?, CurveOrder::RowMajor, Fit::BestFit)?;
/// let a = bf.allocate(&Request::nodes(2))?; // 0 1
/// let b = bf.allocate(&Request::nodes(1))?; // 2
/// let _c = bf.allocate(&Request::nodes(2))?; // 3 4
/// bf.release(&a)?;
/// bf.release(&b)?;
/// // Free intervals: 0..=2 (three nodes) and 5..=7 (three); the first of
/// // the shortest that fits wins.
/// let d = bf.allocate(&Request::nodes(3))?;
/// assert_eq!(d.partition(), &Partition::Nodes(vec![0, 1, 2]));
/// assert_eq!(bf.name(), "curve-best-fit[order=row-major]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CurveAllocator {
    fit: Fit,
    curve: Arc<Curve>,
    /// Bit r is set when the node at rank r is available.
    free: NodeSet,
    /// The ranks of the last choice, taken from `free` when it is granted.
    pending: Option<Taken>,
    /// Scratch, zero between calls: a choice's node ids as bits, to list
    /// them in increasing order without sorting.
    ids: Vec<u64>,
}

impl CurveAllocator {
    /// The allocator with `fit` along `order` on a mesh or torus of one to
    /// three dimensions.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] for any other machine, or one of
    /// more than [`MAX_CURVE_NODES`] nodes.
    pub fn new(
        topology: Topology,
        order: CurveOrder,
        fit: Fit,
    ) -> Result<Managed<Self>, BuildError> {
        let unsuitable = |e: CurveError| BuildError::UnsuitableTopology {
            strategy: fit.name(),
            topology: topology.to_string(),
            reason: e.to_string(),
        };
        let grid = match (&topology, topology.kind()) {
            (Topology::Grid(g), TopologyKind::Mesh | TopologyKind::Torus) => g,
            _ => return Err(unsuitable(CurveError::Dimensions { dims: 0 })),
        };
        let curve = Curve::new(order, grid).map_err(unsuitable)?;
        let n = curve.len();
        let strategy = Self {
            free: NodeSet::full(n),
            pending: None,
            ids: vec![0; n.div_ceil(64)],
            curve: Arc::new(curve),
            fit,
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The curve in use.
    #[must_use]
    pub fn curve(&self) -> &Curve {
        &self.curve
    }

    /// The fit in use.
    #[must_use]
    pub fn fit(&self) -> Fit {
        self.fit
    }

    /// The node count of a request this machine can ever serve.
    fn wanted(&self, request: &Request) -> Result<usize, AllocError> {
        let want = crate::allocator::wanted_nodes(request, self.curve.len())?;
        // At most the machine's size, which fits usize.
        Ok(want as usize)
    }

    /// Notes the node at each rank `taken` holds in the scratch words;
    /// returns the range of words touched.
    fn note(&mut self, taken: &Taken) -> core::ops::Range<usize> {
        let (mut lo, mut hi) = (usize::MAX, 0);
        let (nodes, ids) = (&self.curve.nodes, &mut self.ids);
        let mut mark = |r: usize| {
            let node = nodes[r] as usize;
            set_word_bit(ids, node);
            lo = lo.min(node / 64);
            hi = hi.max(node / 64 + 1);
        };
        match taken {
            Taken::Run { lo, len } => (*lo..*lo + *len).for_each(&mut mark),
            Taken::Words(words) => {
                for &(wi, bits) in words {
                    let mut b = bits;
                    while b != 0 {
                        mark(wi * 64 + b.trailing_zeros() as usize);
                        b &= b - 1;
                    }
                }
            }
        }
        lo.min(hi)..hi
    }

    /// The ranks of `choice` (`k` of them, all free) and their node ids
    /// in increasing order, a word at a time; nothing changes.
    fn ranks_of(&mut self, choice: Choice, k: usize) -> (Vec<NodeId>, Taken) {
        let taken = match choice {
            Choice::Run { lo } => Taken::Run { lo, len: k },
            Choice::Span { lo, hi } => {
                let mut words = Vec::new();
                for wi in lo / 64..=hi / 64 {
                    let from = if wi == lo / 64 { lo % 64 } else { 0 };
                    let to = if wi == hi / 64 { hi % 64 } else { 63 };
                    let mask = (!0u64 << from) & (!0u64 >> (63 - to));
                    let bits = self.free.words()[wi] & mask;
                    if bits != 0 {
                        words.push((wi, bits));
                    }
                }
                Taken::Words(words)
            }
        };
        let touched = self.note(&taken);
        let mut nodes = Vec::with_capacity(k);
        for wi in touched {
            let mut b = core::mem::take(&mut self.ids[wi]);
            while b != 0 {
                // Ids are below the machine's size, which fits u32.
                nodes.push((wi * 64) as NodeId + b.trailing_zeros());
                b &= b - 1;
            }
        }
        (nodes, taken)
    }
}

impl Strategy for CurveAllocator {
    type Record = Partition;

    fn name(&self) -> String {
        match self.curve.order {
            CurveOrder::Hilbert => self.fit.name().to_owned(),
            o => format!("{}[order={o}]", self.fit.name()),
        }
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let k = self.wanted(request)?;
        if k > view.occupancy().free_count() {
            return Ok(None);
        }
        let choice = match self.fit {
            Fit::FirstFit => first_fit::choose(&self.free, k),
            Fit::BestFit => best_fit::choose(&self.free, k),
            Fit::SortedFreeList => sorted_free_list::choose(&self.free, k),
        };
        // Every fit finds k nodes when k are free.
        let Some(choice) = choice else {
            return Ok(None);
        };
        let (nodes, taken) = self.ranks_of(choice, k);
        self.pending = Some(taken);
        Ok(Some(Partition::Nodes(nodes)))
    }

    fn committed(&mut self, _: &View<'_>, _: &Partition) {
        match self.pending.take() {
            Some(Taken::Run { lo, len }) => drop(self.free.remove_range(lo, lo + len)),
            Some(Taken::Words(words)) => {
                for (wi, bits) in words {
                    let _ = self.free.remove_word_bits(wi, bits);
                }
            }
            None => {}
        }
    }

    fn released(&mut self, _: &View<'_>, partition: &Partition) {
        if let Partition::Nodes(nodes) = partition {
            for &node in nodes {
                if let Some(r) = self.curve.rank_of(node) {
                    let _ = self.free.insert(r);
                }
            }
        }
    }

    fn faulted(&mut self, _: &View<'_>, node: NodeId) {
        if let Some(r) = self.curve.rank_of(node) {
            let _ = self.free.remove(r);
        }
    }

    fn repaired(&mut self, _: &View<'_>, node: NodeId) {
        if let Some(r) = self.curve.rank_of(node) {
            let _ = self.free.insert(r);
        }
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        // Every fit grants whenever enough nodes are free.
        Ok(Some(self.wanted(request)? <= view.occupancy().free_count()))
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let k = self.wanted(request)?;
        // On an empty machine every fit takes the first k ranks.
        let mut nodes = self.curve.nodes[..k].to_vec();
        nodes.sort_unstable();
        Ok(vec![Partition::Nodes(nodes)])
    }
}
