//! How far apart a grant's nodes are: per-grant dispersal measures on a
//! mesh or torus.
//!
//! For a set of nodes of a [`Grid`] (a mesh, a torus, or a pod's torus of
//! chips), [`Dispersal`] holds
//! - the **sum of pairwise distances** over unordered pairs and its
//!   **mean** ([`Dispersal::mean_distance`]): L1 (Manhattan) distance on a
//!   mesh, Lee distance (Σ min(|d|, k − |d|)) on a torus — the hop count
//!   [`Grid::distance`] gives, which is what PReMAS logs as "pairwise L1
//!   distance" on its meshes;
//! - the **diameter**, the largest pairwise distance;
//! - the **span**, the bounding box: per dimension the smallest interval
//!   holding every coordinate (on a torus the smallest cyclic interval, so
//!   its base plus extent may pass the side and wrap);
//! - the number of **pieces**, the connected components of the set under
//!   the machine's links (a contiguous grant is one piece).
//!
//! Costs, for n nodes on a machine of N nodes with sides k_i in d
//! dimensions: the sum is O(n + Σ k_i) (coordinate counts per dimension and
//! running sums, never the n² pairs); the pieces O(n·d) (union–find over the
//! nodes' +1 neighbours); the span O(n + Σ k_i); the diameter O(n·2^(d−1))
//! on a mesh (extremes of the ± sums of coordinates) and, on a torus,
//! O(n²) while n(n−1)/2 ≤ N·d, otherwise one multi-source breadth-first
//! search over the machine, O(N·d + n·2^d) (a torus node's farthest member is
//! found from the member nearest its antipodes). [`Measurer`] keeps its
//! buffers between calls, so measuring every grant of a run allocates
//! only while its buffers grow.
//!
//! ```
//! use partalloc_allocators::dispersal::{Dispersal, Measurer};
//! use partalloc_topology::Topology;
//! let mesh: Topology = "mesh:4x4".parse()?;
//! let mut m = Measurer::new(&mesh)?;
//! // Nodes ⟨0,0⟩, ⟨1,0⟩ and ⟨3,3⟩.
//! let d: Dispersal = m.measure(&[0, 1, 15])?;
//! assert_eq!(d.distance_sum, 1 + 6 + 5);
//! assert_eq!(d.mean_distance(), 4.0);
//! assert_eq!((d.diameter, d.pieces), (6, 2));
//! assert_eq!(d.span.as_ref().map(|s| s.extents.as_slice()), Some(&[4, 4][..]));
//! // The same nodes on a torus: ⟨3,3⟩ is now next to neither, but closer.
//! let torus: Topology = "torus:4x4".parse()?;
//! let d = Measurer::new(&torus)?.measure(&[0, 1, 15])?;
//! assert_eq!((d.distance_sum, d.diameter, d.pieces), (1 + 2 + 3, 3, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::ops::{Add, Mul, Sub};

use partalloc_topology::{Coords, Grid, NodeId, Topology, TopologyError};
use thiserror::Error;

use crate::Partition;

/// Why a set of nodes could not be measured.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DispersalError {
    /// The machine has no grid of nodes (a hypercube or a Slurm machine).
    #[error("dispersal is measured on meshes, tori and pods, not on {topology}")]
    Unsupported {
        /// The machine given.
        topology: String,
    },
    /// A node id is not part of the machine.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A node appears twice in the set.
    #[error("node {node} appears twice; give each node once")]
    Duplicate {
        /// The repeated node.
        node: NodeId,
    },
}

/// A bounding box that may wrap: per dimension the first coordinate and
/// the number of coordinates covered (on a torus `base + extent` may exceed
/// the side; the box then continues at 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Span {
    /// The first coordinate along each dimension.
    pub base: Coords,
    /// Coordinates covered along each dimension (at least 1).
    pub extents: Coords,
}

impl Span {
    /// Nodes in the box.
    #[must_use]
    pub fn volume(&self) -> u64 {
        self.extents.product()
    }
}

/// The dispersal of one set of nodes (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Dispersal {
    /// Nodes in the set.
    pub nodes: u64,
    /// Σ of the hop distance over unordered pairs (L1 on a mesh, Lee on a
    /// torus).
    pub distance_sum: u128,
    /// The largest hop distance between two nodes of the set (0 for fewer
    /// than two).
    pub diameter: u32,
    /// The bounding box; `None` for the empty set.
    pub span: Option<Span>,
    /// Connected components under the machine's links.
    pub pieces: u32,
}

/// The mean of `distance_sum` over the unordered pairs of `nodes` nodes;
/// 0 for fewer than two nodes.
///
/// ```
/// assert_eq!(partalloc_allocators::dispersal::mean_pair_distance(6, 3), 2.0);
/// assert_eq!(partalloc_allocators::dispersal::mean_pair_distance(0, 1), 0.0);
/// ```
#[must_use]
pub fn mean_pair_distance(distance_sum: u128, nodes: u64) -> f64 {
    if nodes < 2 {
        return 0.0;
    }
    let pairs = nodes as f64 * (nodes - 1) as f64 / 2.0;
    distance_sum as f64 / pairs
}

impl Dispersal {
    /// The mean hop distance over unordered pairs; 0 for fewer than two
    /// nodes.
    #[must_use]
    pub fn mean_distance(&self) -> f64 {
        mean_pair_distance(self.distance_sum, self.nodes)
    }
}

/// Most entries (nodes × dimensions) of a machine's coordinate table: 16
/// MiB of `u32`; larger machines compute coordinates by division.
const COORD_TABLE_MAX: usize = 1 << 22;

/// Appends the coordinates of `node` (dimension 0 fastest).
fn push_coords(out: &mut Vec<u32>, node: NodeId, sides: &Coords) {
    let mut rest = node;
    for &k in sides.iter() {
        out.push(rest % k);
        rest /= k;
    }
}

/// Measures node sets of one machine, keeping its buffers between calls.
#[derive(Debug, Clone)]
pub struct Measurer {
    sides: Coords,
    wrap: bool,
    nodes: usize,
    /// Per node of the machine: 1 + the node's index in the set being
    /// measured, 0 if not in it (cleared after every call).
    slot: Vec<u32>,
    /// Coordinates of the set, d per node.
    coords: Vec<u32>,
    /// Coordinate counts of one dimension (and, doubled, running sums).
    counts: Vec<u64>,
    sums: Vec<u64>,
    /// Union–find parents and, per root, its component's size (the
    /// smaller tree joins the larger, so finds stay short).
    parent: Vec<u32>,
    size: Vec<u32>,
    /// Per node of the machine, its d coordinates (built on first use for
    /// machines of at most [`COORD_TABLE_MAX`] entries; larger machines
    /// divide instead).
    table: Vec<u32>,
    /// The set's node ids (for partitions).
    ids: Vec<NodeId>,
    /// Breadth-first distances over the machine (torus diameter only).
    dist: Vec<u32>,
    queue: Vec<u32>,
    /// The word-level path (see [`Rows`]), on meshes whose dimension 0
    /// fits a word (boxed: the measurer stays small, and handing the
    /// buffers over per call moves a pointer).
    rows: Option<Box<Rows>>,
}

/// Buffers of the word-level path: on a mesh whose dimension 0 has at most
/// 64 nodes, a set is one 64-bit mask per row (a row: the nodes sharing
/// their coordinates along dimensions 1..d), and most work is per row.
#[derive(Debug, Clone)]
struct Rows {
    /// Nodes per row (the side of dimension 0, 1..=64).
    width: u32,
    /// `log2(width)` when the width is a power of two (rows by shifting).
    shift: Option<u32>,
    /// Per row of the machine, the set's nodes in it (cleared after every
    /// call).
    masks: Vec<u64>,
    /// The rows the set occupies, in the order first met.
    touched: Vec<u32>,
    /// Coordinates along dimensions 1..d of each touched row.
    coords: Vec<u32>,
    /// Per row of the machine: its runs in `runs` (first, end), valid for
    /// touched rows.
    spans: Vec<(u32, u32)>,
    /// Runs of consecutive nodes within a row, as masks; a row's runs lie
    /// in increasing order.
    runs: Vec<u64>,
}

impl Measurer {
    /// A measurer for `topology`'s grid of nodes.
    ///
    /// # Errors
    /// [`DispersalError::Unsupported`] for a machine without a grid.
    pub fn new(topology: &Topology) -> Result<Self, DispersalError> {
        let grid = topology
            .as_grid()
            .ok_or_else(|| DispersalError::Unsupported {
                topology: partalloc_topology::echo(&topology.to_string()),
            })?;
        Ok(Self::for_grid(grid))
    }

    /// A measurer for a grid.
    #[must_use]
    pub fn for_grid(grid: &Grid) -> Self {
        Self {
            sides: *grid.sides(),
            wrap: grid.is_torus(),
            nodes: grid.num_nodes(),
            slot: Vec::new(),
            coords: Vec::new(),
            counts: Vec::new(),
            sums: Vec::new(),
            parent: Vec::new(),
            size: Vec::new(),
            table: Vec::new(),
            ids: Vec::new(),
            dist: Vec::new(),
            queue: Vec::new(),
            rows: Rows::for_grid(grid).map(Box::new),
        }
    }

    /// The dispersal of a granted partition.
    ///
    /// # Errors
    /// The partition does not lie in the machine, or lists a node twice.
    pub fn measure_partition(
        &mut self,
        partition: &Partition,
    ) -> Result<Dispersal, DispersalError> {
        let mut ids = core::mem::take(&mut self.ids);
        ids.clear();
        let grid = Grid::new(&self.sides, self.wrap)?;
        let topo = Topology::Grid(grid);
        let res = partition
            .for_each_node(&topo, |n| ids.push(n))
            .map_err(DispersalError::from)
            .and_then(|()| self.measure(&ids));
        self.ids = ids;
        res
    }

    /// The dispersal of `nodes` (any order, each at most once).
    ///
    /// # Errors
    /// A node outside the machine, or a node listed twice.
    pub fn measure(&mut self, nodes: &[NodeId]) -> Result<Dispersal, DispersalError> {
        if let Some(got) = self.measure_rows(nodes) {
            return Ok(got);
        }
        self.measure_generic(nodes)
    }

    /// The node-by-node path: any grid; also where the word-level path
    /// hands a bad set, so both give the same error.
    fn measure_generic(&mut self, nodes: &[NodeId]) -> Result<Dispersal, DispersalError> {
        if self.slot.len() != self.nodes {
            self.slot = vec![0; self.nodes];
        }
        let res = self.measure_marked(nodes);
        for &n in nodes {
            if let Some(s) = self.slot.get_mut(n as usize) {
                *s = 0;
            }
        }
        res
    }

    fn measure_marked(&mut self, nodes: &[NodeId]) -> Result<Dispersal, DispersalError> {
        let d = self.sides.len();
        let n = nodes.len();
        for (i, &node) in nodes.iter().enumerate() {
            let Some(s) = self.slot.get_mut(node as usize) else {
                return Err(TopologyError::NodeOutOfRange {
                    node: u64::from(node),
                    nodes: self.nodes as u64,
                }
                .into());
            };
            if *s != 0 {
                return Err(DispersalError::Duplicate { node });
            }
            // Machines have at most 2^31 nodes, so 1 + index fits.
            *s = i as u32 + 1;
        }
        self.coords.clear();
        self.coords.reserve(n * d);
        if self.table.is_empty() && self.nodes * d <= COORD_TABLE_MAX {
            self.table.reserve_exact(self.nodes * d);
            for node in 0..self.nodes as u32 {
                push_coords(&mut self.table, node, &self.sides);
            }
        }
        if self.table.is_empty() {
            for &node in nodes {
                push_coords(&mut self.coords, node, &self.sides);
            }
        } else {
            for &node in nodes {
                // In range: every node was checked against the machine above.
                let at = node as usize * d;
                if let Some(c) = self.table.get(at..at + d) {
                    self.coords.extend_from_slice(c);
                }
            }
        }
        let mut distance_sum = 0u128;
        let mut base = self.sides;
        let mut extents = self.sides;
        for dim in 0..d {
            let (sum, lo, ext) = self.dimension(dim, n);
            distance_sum += sum;
            base[dim] = lo;
            extents[dim] = ext;
        }
        let span = (n > 0).then_some(Span { base, extents });
        let pieces = self.pieces(nodes);
        let diameter = self.diameter(n);
        Ok(Dispersal {
            nodes: n as u64,
            distance_sum,
            diameter,
            span,
            pieces,
        })
    }

    /// The word-level path (a mesh whose dimension 0 has at most 64
    /// nodes); `None` on other machines and for a set with a node outside
    /// the machine or listed twice (the generic path then names it).
    fn measure_rows(&mut self, nodes: &[NodeId]) -> Option<Dispersal> {
        let mut rows = self.rows.take()?;
        let got = self.measure_in_rows(&mut rows, nodes);
        self.rows = Some(rows);
        got
    }

    // Kept out of `measure`, so the node-by-node path compiles as alone.
    #[inline(never)]
    fn measure_in_rows(&mut self, rows: &mut Rows, nodes: &[NodeId]) -> Option<Dispersal> {
        let (d, n) = (self.sides.len(), nodes.len());
        if n == 0 {
            return Some(Dispersal {
                nodes: 0,
                distance_sum: 0,
                diameter: 0,
                span: None,
                pieces: 0,
            });
        }
        // Dimension 0's counts come with the marking.
        let mut c0 = [0u64; 64];
        let (union, increasing) = rows.mark(self.nodes, nodes, &mut c0)?;
        // Every x of the set is a bit of the rows' union.
        let (lo, hi) = (union.trailing_zeros(), 63 - union.leading_zeros());
        let (mut distance_sum, lo, ext) = line(&c0[lo as usize..=hi as usize], n, lo);
        let (mut base, mut extents) = (self.sides, self.sides);
        (base[0], extents[0]) = (lo, ext);
        let e = d - 1;
        let (diameter, pieces) = if e == 1 && increasing {
            // A 2-D mesh with the rows met in increasing y (a set listed in
            // increasing order, as paging grants it): y's sum and the
            // diameter in one pass over the rows, no counts array.
            let (sum, diameter) = rows.plane(n, self.sides[1]);
            distance_sum += sum;
            let first = rows.touched.first().copied().unwrap_or(0);
            let last = rows.touched.last().copied().unwrap_or(0);
            (base[1], extents[1]) = (first, last - first + 1);
            (diameter, self.plane_pieces(rows))
        } else {
            // Coordinates along dimensions 1..d of each touched row (e
            // each; the last is what remains of the row number).
            rows.coords.clear();
            if e > 0 {
                let inner = &self.sides[1..e];
                for &r in &rows.touched {
                    let mut rest = r;
                    for &k in inner {
                        rows.coords.push(rest % k);
                        rest /= k;
                    }
                    rows.coords.push(rest);
                }
            }
            for dim in 1..d {
                self.counts.clear();
                self.counts.resize(self.sides[dim] as usize, 0);
                let (mut lo, mut hi) = (u32::MAX, 0);
                for (t, &r) in rows.touched.iter().enumerate() {
                    let y = rows.coords[t * e + dim - 1];
                    lo = lo.min(y);
                    hi = hi.max(y);
                    self.counts[y as usize] += u64::from(rows.masks[r as usize].count_ones());
                }
                let (sum, lo, ext) = line(&self.counts[lo as usize..=hi as usize], n, lo);
                distance_sum += sum;
                (base[dim], extents[dim]) = (lo, ext);
            }
            let diameter = if n < 2 { 0 } else { rows.diameter(e) };
            (diameter, self.row_pieces(rows))
        };
        for &r in &rows.touched {
            rows.masks[r as usize] = 0;
        }
        Some(Dispersal {
            nodes: n as u64,
            distance_sum,
            diameter,
            span: Some(Span { base, extents }),
            pieces,
        })
    }

    /// Pieces of a marked set on a 2-D mesh whose rows were touched in
    /// increasing y: one pass that cuts each row into runs and joins them
    /// to the overlapping runs of the row below when that row is y − 1.
    fn plane_pieces(&mut self, rows: &mut Rows) -> u32 {
        rows.runs.clear();
        self.parent.clear();
        self.size.clear();
        let mut pieces = 0u32;
        // The row before: its y and where its runs start.
        let mut below: Option<(u32, u32)> = None;
        for &y in &rows.touched {
            let first = rows.runs.len() as u32;
            let mut m = rows.masks[y as usize];
            while m != 0 {
                // As in `push_runs`, each run's union–find slot made with it.
                let t = m.wrapping_add(m & m.wrapping_neg());
                self.parent.push(rows.runs.len() as u32);
                rows.runs.push(m & !t);
                m &= t;
            }
            let end = rows.runs.len() as u32;
            self.size.resize(end as usize, 1);
            pieces += end - first;
            if let Some((yb, start)) = below
                && yb + 1 == y
            {
                pieces -= self.join_runs(&rows.runs, (start, first), (first, end));
            }
            below = Some((y, first));
        }
        pieces
    }

    /// Joins each run in `runs[a.0..a.1]` to the runs of `runs[b.0..b.1]`
    /// it overlaps (both ranges in increasing order, stepping past
    /// whichever run ends first, the smaller mask); how many joins merged
    /// two pieces.
    #[inline]
    fn join_runs(&mut self, runs: &[u64], a: (u32, u32), b: (u32, u32)) -> u32 {
        let ((mut i, a_end), (mut j, b_end)) = (a, b);
        let mut merged = 0;
        while i < a_end && j < b_end {
            let (x, y) = (runs[i as usize], runs[j as usize]);
            if x & y != 0 && self.union(i, j) {
                merged += 1;
            }
            if x < y {
                i += 1;
            } else {
                j += 1;
            }
        }
        merged
    }

    /// Pieces of a marked set: union–find over the runs of each row, a run
    /// joined to the runs it overlaps in the next row along each dimension
    /// 1..d.
    fn row_pieces(&mut self, rows: &mut Rows) -> u32 {
        let e = self.sides.len() - 1;
        rows.runs.clear();
        for &r in &rows.touched {
            let first = rows.runs.len() as u32;
            push_runs(&mut rows.runs, rows.masks[r as usize]);
            rows.spans[r as usize] = (first, rows.runs.len() as u32);
        }
        self.reset_union(rows.runs.len());
        let mut pieces = rows.runs.len() as u32;
        let sides = self.sides;
        for (t, &r) in rows.touched.iter().enumerate() {
            let mut stride = 1usize;
            for (&k, &c) in sides.iter().skip(1).zip(&rows.coords[t * e..t * e + e]) {
                let next = r as usize + stride;
                stride *= k as usize;
                if c + 1 >= k || rows.masks[next] == 0 {
                    continue;
                }
                pieces -= self.join_runs(&rows.runs, rows.spans[r as usize], rows.spans[next]);
            }
        }
        pieces
    }

    /// Along one dimension: the sum of pairwise distances between the
    /// coordinates, and the span (first coordinate, extent).
    fn dimension(&mut self, dim: usize, n: usize) -> (u128, u32, u32) {
        let d = self.sides.len();
        let k = self.sides[dim] as usize;
        self.counts.clear();
        self.counts.resize(k, 0);
        for i in 0..n {
            self.counts[self.coords[i * d + dim] as usize] += 1;
        }
        if n == 0 {
            return (0, 0, 0);
        }
        if !self.wrap {
            return line(&self.counts, n, 0);
        }
        // A cycle of k positions: for each occupied v, the coordinates at
        // offsets 1..=h ahead (h = ⌊k/2⌋) are that far away, those at offsets
        // h+1..k−1 are k − offset away. Running sums over the doubled array
        // give each window in O(1); every pair is counted from both ends.
        let h = k / 2;
        self.sums.clear();
        self.sums.resize(2 * (2 * k + 1), 0);
        let (cnt, wsum) = self.sums.split_at_mut(2 * k + 1);
        for j in 0..2 * k {
            let c = self.counts[j % k];
            cnt[j + 1] = cnt[j] + c;
            wsum[j + 1] = wsum[j] + c * j as u64;
        }
        let range = |a: &[u64], lo: usize, hi: usize| u128::from(a[hi] - a[lo]);
        let mut twice = 0u128;
        for v in 0..k {
            let c = self.counts[v];
            if c == 0 {
                continue;
            }
            // Near window: positions v+1 ..= v+h, distance (j − v).
            let (a, b) = (v + 1, v + h + 1);
            let near = range(wsum, a, b) - (v as u128) * range(cnt, a, b);
            // Far window: positions v+h+1 ..= v+k−1, distance (v + k − j).
            let (a, b) = (v + h + 1, v + k);
            let far = ((v + k) as u128) * range(cnt, a, b) - range(wsum, a, b);
            twice += u128::from(c) * (near + far);
        }
        // The smallest cyclic interval: everything but the longest cyclic
        // run of empty positions; of equally long runs, the one that leaves
        // the lowest base. Two laps find runs that wrap past k − 1.
        let (mut best_gap, mut best_base) = (0usize, 0usize);
        let mut run = 0usize;
        for j in 0..2 * k {
            if self.counts[j % k] == 0 {
                run += 1;
                let base = (j + 1) % k;
                if run < k && (run > best_gap || (run == best_gap && base < best_base)) {
                    best_gap = run;
                    best_base = base;
                }
            } else {
                run = 0;
            }
        }
        let (lo, ext) = if best_gap == 0 {
            (0, k)
        } else {
            (best_base, k - best_gap)
        };
        (twice / 2, lo as u32, ext as u32)
    }

    #[inline]
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    /// Fresh union–find over `n` singletons.
    fn reset_union(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
        self.size.clear();
        self.size.resize(n, 1);
    }

    /// Joins the components of `x` and `y` (the smaller under the larger);
    /// whether they were apart.
    #[inline]
    fn union(&mut self, x: u32, y: u32) -> bool {
        let (a, b) = (self.find(x), self.find(y));
        if a == b {
            return false;
        }
        let (big, small) = if self.size[a as usize] < self.size[b as usize] {
            (b, a)
        } else {
            (a, b)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        true
    }

    /// Connected components: every node joined to its +1 neighbour along
    /// each dimension when that neighbour is in the set.
    fn pieces(&mut self, nodes: &[NodeId]) -> u32 {
        let d = self.sides.len();
        let n = nodes.len();
        self.reset_union(n);
        let mut pieces = n as u32;
        for (i, &node) in nodes.iter().enumerate() {
            let mut stride = 1u32;
            for dim in 0..d {
                let k = self.sides[dim];
                let c = self.coords[i * d + dim];
                let next = if c + 1 < k {
                    Some(node + stride)
                } else if self.wrap && k > 2 {
                    Some(node - c * stride)
                } else {
                    None
                };
                stride = stride.wrapping_mul(k);
                let Some(j) = next.and_then(|m| self.slot.get(m as usize).copied()) else {
                    continue;
                };
                if j == 0 {
                    continue;
                }
                if self.union(i as u32, j - 1) {
                    pieces -= 1;
                }
            }
        }
        pieces
    }

    fn diameter(&mut self, n: usize) -> u32 {
        let d = self.sides.len();
        if n < 2 {
            return 0;
        }
        if !self.wrap {
            // max over pairs of Σ|a_i − b_i| = max over signs s of
            // (max s·p − min s·p); s and −s give the same, so fix s_0 = +.
            let mut best = 0i64;
            for signs in 0..1u32 << (d - 1) {
                let (mut lo, mut hi) = (i64::MAX, i64::MIN);
                for p in self.coords.chunks_exact(d) {
                    let mut v = i64::from(p[0]);
                    for (i, &x) in p.iter().enumerate().skip(1) {
                        if signs >> (i - 1) & 1 == 1 {
                            v -= i64::from(x);
                        } else {
                            v += i64::from(x);
                        }
                    }
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
                best = best.max(hi - lo);
            }
            return best as u32;
        }
        let pairs = n as u64 * (n as u64 - 1) / 2;
        if pairs <= self.nodes as u64 * d as u64 {
            let mut best = 0;
            for i in 0..n {
                for j in i + 1..n {
                    best = best.max(self.lee(i, j));
                }
            }
            return best;
        }
        self.torus_diameter_by_search(n)
    }

    fn lee(&self, i: usize, j: usize) -> u32 {
        let d = self.sides.len();
        let (a, b) = (
            &self.coords[i * d..i * d + d],
            &self.coords[j * d..j * d + d],
        );
        a.iter()
            .zip(b)
            .zip(self.sides.iter())
            .map(|((&x, &y), &k)| {
                let t = x.abs_diff(y);
                t.min(k - t)
            })
            .sum()
    }

    /// On a torus, along a cycle of k, d(a, b) = ⌊k/2⌋ − (distance from b
    /// to the nearer of a's antipodes a + ⌊k/2⌋ and, for odd k,
    /// a + ⌈k/2⌉). Summed over dimensions, the farthest member from a is
    /// Σ⌊k/2⌋ minus the distance from the nearest antipode combination to
    /// the set, which one multi-source breadth-first search gives for every
    /// node of the machine.
    fn torus_diameter_by_search(&mut self, n: usize) -> u32 {
        let d = self.sides.len();
        self.dist.clear();
        self.dist.resize(self.nodes, u32::MAX);
        self.queue.clear();
        for i in 0..n {
            let (mut id, mut stride) = (0u32, 1u32);
            for (&x, &k) in self.coords[i * d..i * d + d].iter().zip(self.sides.iter()) {
                id += x * stride;
                stride = stride.wrapping_mul(k);
            }
            self.dist[id as usize] = 0;
            self.queue.push(id);
        }
        let mut head = 0;
        while head < self.queue.len() {
            let v = self.queue[head];
            head += 1;
            let dv = self.dist[v as usize];
            let mut rest = v;
            let mut stride = 1u32;
            for dim in 0..d {
                let k = self.sides[dim];
                let c = rest % k;
                rest /= k;
                if k > 1 {
                    let up = if c + 1 < k {
                        v + stride
                    } else {
                        v - c * stride
                    };
                    let down = if c > 0 {
                        v - stride
                    } else {
                        v + (k - 1) * stride
                    };
                    for m in [up, down] {
                        if self.dist[m as usize] == u32::MAX {
                            self.dist[m as usize] = dv + 1;
                            self.queue.push(m);
                        }
                    }
                }
                stride = stride.wrapping_mul(k);
            }
        }
        let half: u32 = self.sides.iter().map(|&k| k / 2).sum();
        // Each odd side has two antipodes: one bit of `pick` per dimension
        // chooses (the bit of an even side is ignored, so those picks
        // repeat a combination, which costs a lookup and nothing else).
        let odd = self
            .sides
            .iter()
            .enumerate()
            .filter(|&(_, &k)| k % 2 == 1)
            .fold(0u32, |m, (i, _)| m | 1 << i);
        let mut best = 0;
        for i in 0..n {
            let mut nearest = u32::MAX;
            let mut pick = odd;
            loop {
                // Submasks of `odd`, from `odd` itself down to 0.
                let (mut id, mut stride) = (0u32, 1u32);
                for dim in 0..d {
                    let k = self.sides[dim];
                    let a = self.coords[i * d + dim] + k / 2 + (pick >> dim & 1);
                    id += (a % k) * stride;
                    stride = stride.wrapping_mul(k);
                }
                nearest = nearest.min(self.dist[id as usize]);
                if pick == 0 {
                    break;
                }
                pick = (pick - 1) & odd;
            }
            best = best.max(half - nearest);
        }
        best
    }
}

impl Rows {
    fn for_grid(grid: &Grid) -> Option<Self> {
        let width = *grid.sides().first()?;
        if grid.is_torus() || width == 0 || width > 64 {
            return None;
        }
        if grid.num_nodes() / width as usize > COORD_TABLE_MAX {
            return None;
        }
        Some(Self {
            width,
            shift: width.is_power_of_two().then(|| width.trailing_zeros()),
            masks: Vec::new(),
            touched: Vec::new(),
            coords: Vec::new(),
            spans: Vec::new(),
            runs: Vec::new(),
        })
    }

    /// Sets each node's bit in its row and counts its x in `c0`; the union
    /// of the rows and whether the rows were met in increasing order, or
    /// `None` (and nothing marked) for a node outside the machine's `nodes`
    /// or a node listed twice.
    fn mark(&mut self, nodes: usize, set: &[NodeId], c0: &mut [u64; 64]) -> Option<(u64, bool)> {
        let rows = nodes / self.width as usize;
        if self.masks.len() != rows {
            self.masks = vec![0; rows];
            self.spans = vec![(0, 0); rows];
        }
        self.touched.clear();
        let w = self.width;
        let inside = match self.shift {
            Some(s) => self.mark_split(set, c0, |v| (v >> s, v & (w - 1))),
            None => self.mark_split(set, c0, |v| (v / w, v % w)),
        };
        // Without repeats, the rows hold as many bits as the set has nodes.
        let (mut ones, mut union) = (0u64, 0u64);
        let (mut increasing, mut prev) = (true, None);
        for &r in &self.touched {
            let m = self.masks[r as usize];
            ones += u64::from(m.count_ones());
            union |= m;
            increasing &= prev < Some(r);
            prev = Some(r);
        }
        if inside && ones == set.len() as u64 {
            return Some((union, increasing));
        }
        for &r in &self.touched {
            self.masks[r as usize] = 0;
        }
        None
    }

    fn mark_split(
        &mut self,
        set: &[NodeId],
        c0: &mut [u64; 64],
        split: impl Fn(NodeId) -> (u32, u32),
    ) -> bool {
        // The bits of consecutive nodes of one row gather in a register and
        // reach the row's mask once (a set in increasing order touches each
        // row once); a bit set twice is caught by the caller's count.
        let Some((&first, rest)) = set.split_first() else {
            return true;
        };
        let (mut row, x) = split(first);
        let mut bits = 1u64 << x;
        // x < width ≤ 64: the mask changes nothing.
        c0[x as usize & 63] += 1;
        for &node in rest {
            let (r, x) = split(node);
            if r != row {
                if !self.or_row(row, bits) {
                    return false;
                }
                (row, bits) = (r, 0);
            }
            bits |= 1 << x;
            c0[x as usize & 63] += 1;
        }
        self.or_row(row, bits)
    }

    /// Adds `bits` to row `r`'s mask; false for a row past the machine.
    #[inline]
    fn or_row(&mut self, r: u32, bits: u64) -> bool {
        // Rows × width = nodes, so a row past the last is a node past it.
        let Some(m) = self.masks.get_mut(r as usize) else {
            return false;
        };
        if *m == 0 {
            self.touched.push(r);
        }
        *m |= bits;
        true
    }

    /// On a 2-D mesh whose marked rows (n ≥ 1 nodes) are touched in
    /// increasing y, with `height` rows: the sum of pairwise distances
    /// along y, and the diameter (the widest spread of x + y and of x − y,
    /// taken at each row's lowest and highest x).
    fn plane(&self, n: usize, height: u32) -> (u128, u32) {
        let points = self.touched.iter().map(|&y| {
            let m = self.masks[y as usize];
            (y, u64::from(m.count_ones()))
        });
        let sum = if n < 1 << 20 && height < 1 << 20 {
            u128::from(line_points::<u64>(points, n as u64))
        } else {
            line_points::<u128>(points, n as u64)
        };
        if n < 2 {
            return (sum, 0);
        }
        // x ± y + height keeps every value at or above 0.
        let (mut lo_plus, mut hi_plus) = (u64::MAX, 0u64);
        let (mut lo_minus, mut hi_minus) = (u64::MAX, 0u64);
        for &y in &self.touched {
            let m = self.masks[y as usize];
            let (a, b) = (
                u64::from(m.trailing_zeros()),
                u64::from(63 - m.leading_zeros()),
            );
            let (y, h) = (u64::from(y), u64::from(height));
            lo_plus = lo_plus.min(a + y);
            hi_plus = hi_plus.max(b + y);
            lo_minus = lo_minus.min(a + h - y);
            hi_minus = hi_minus.max(b + h - y);
        }
        (sum, (hi_plus - lo_plus).max(hi_minus - lo_minus) as u32)
    }

    /// The largest L1 distance of the marked set (two nodes or more): per
    /// sign vector over dimensions 1..d, the widest spread of x ± y… taken
    /// at each row's lowest and highest x.
    fn diameter(&self, e: usize) -> u32 {
        let mut best = 0i64;
        for signs in 0..1u32 << e {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for (t, &r) in self.touched.iter().enumerate() {
                let m = self.masks[r as usize];
                let mut s = 0i64;
                for (i, &y) in self.coords[t * e..t * e + e].iter().enumerate() {
                    if signs >> i & 1 == 1 {
                        s -= i64::from(y);
                    } else {
                        s += i64::from(y);
                    }
                }
                lo = lo.min(s + i64::from(m.trailing_zeros()));
                hi = hi.max(s + i64::from(63 - m.leading_zeros()));
            }
            best = best.max(hi - lo);
        }
        best as u32
    }
}

/// Appends the runs of consecutive set bits of `m` to `runs`, lowest first.
#[inline]
fn push_runs(runs: &mut Vec<u64>, mut m: u64) {
    while m != 0 {
        // Adding the lowest set bit clears the lowest run and sets the bit
        // above it (or carries out at bit 63).
        let t = m.wrapping_add(m & m.wrapping_neg());
        runs.push(m & !t);
        m &= t;
    }
}

/// Along a line of a mesh holding `counts[v]` of the set's `n` (≥ 1) nodes
/// at coordinate `offset + v`: the sum of pairwise distances and the span
/// (first coordinate, extent).
fn line(counts: &[u64], n: usize, offset: u32) -> (u128, u32, u32) {
    // Below 2^20 nodes and 2^20 coordinates every partial sum stays under
    // n²·k < 2^60, so words suffice.
    let (total, lo, ext) = if n < 1 << 20 && counts.len() < 1 << 20 {
        let (total, lo, ext) = line_in::<u64>(counts);
        (u128::from(total), lo, ext)
    } else {
        line_in::<u128>(counts)
    };
    (total, offset + lo, ext)
}

fn line_in<T>(counts: &[u64]) -> (T, u32, u32)
where
    T: Copy + From<u64> + Add<Output = T> + Sub<Output = T> + Mul<Output = T>,
{
    let lo = counts.iter().position(|&c| c != 0).unwrap_or(0);
    let hi = counts.iter().rposition(|&c| c != 0).unwrap_or(0).max(lo);
    // A pair at v < w is w − v apart: it crosses each boundary between
    // consecutive coordinates from v to w once. So the sum is, over the
    // boundaries, (nodes below) × (nodes above): one product per
    // coordinate, no branch.
    let (mut below, mut total) = (T::from(0), T::from(0));
    let Some(span) = counts.get(lo..=hi) else {
        return (total, 0, 1);
    };
    let all = T::from(span.iter().sum());
    for &c in &span[..span.len() - 1] {
        below = below + T::from(c);
        total = total + below * (all - below);
    }
    (total, lo as u32, (hi - lo + 1) as u32)
}

/// The sum of pairwise distances along a line holding `n` nodes at the
/// given points (coordinate, count), in increasing coordinate: over each
/// gap between consecutive points, its length × (nodes below) × (nodes
/// above).
#[inline]
fn line_points<T>(points: impl Iterator<Item = (u32, u64)>, n: u64) -> T
where
    T: Copy + From<u64> + Add<Output = T> + Sub<Output = T> + Mul<Output = T>,
{
    let all = T::from(n);
    let (mut below, mut total) = (T::from(0), T::from(0));
    let mut last = None;
    for (w, c) in points {
        if let Some(v) = last {
            total = total + T::from(u64::from(w - v)) * below * (all - below);
        }
        below = below + T::from(c);
        last = Some(w);
    }
    total
}

/// The dispersal of `nodes` on `topology` (a one-off [`Measurer`]).
///
/// # Errors
/// As [`Measurer::new`] and [`Measurer::measure`].
pub fn dispersal(topology: &Topology, nodes: &[NodeId]) -> Result<Dispersal, DispersalError> {
    Measurer::new(topology)?.measure(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Brute force: every pair, a flood fill over neighbours (distance 1),
    /// every cyclic interval.
    fn brute(grid: &Grid, nodes: &[NodeId]) -> Dispersal {
        let n = nodes.len();
        let (sum, diameter, pieces) = partalloc_testkit::brute_dispersal(n, |i, j| {
            grid.distance(nodes[i], nodes[j]).unwrap()
        });
        let span = (n > 0).then(|| {
            let mut base = *grid.sides();
            let mut extents = *grid.sides();
            for dim in 0..grid.dims() {
                let k = grid.sides()[dim];
                let cs: Vec<u32> = nodes
                    .iter()
                    .map(|&x| grid.coords_of(x).unwrap()[dim])
                    .collect();
                // Every interval [lo, lo + e) (wrapping on a torus) that
                // holds every coordinate; the shortest, then the lowest lo.
                let mut best = (k + 1, 0);
                for lo in 0..k {
                    for e in 1..=k {
                        let inside = |c: u32| {
                            if grid.is_torus() {
                                (c + k - lo) % k < e
                            } else {
                                c >= lo && c < lo + e
                            }
                        };
                        if (grid.is_torus() || lo + e <= k) && cs.iter().all(|&c| inside(c)) {
                            if (e, lo) < best {
                                best = (e, lo);
                            }
                            break;
                        }
                    }
                }
                extents[dim] = best.0;
                base[dim] = if best.0 == k { 0 } else { best.1 };
            }
            Span { base, extents }
        });
        Dispersal {
            nodes: n as u64,
            distance_sum: sum,
            diameter,
            span,
            pieces,
        }
    }

    fn machine() -> impl Strategy<Value = (Grid, Vec<NodeId>)> {
        (prop::collection::vec(1u32..=7, 1..=3), any::<bool>()).prop_flat_map(|(sides, wrap)| {
            let grid = Grid::new(&sides, wrap).unwrap();
            let n = grid.num_nodes() as u32;
            let subset = prop::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n as usize);
            (Just(grid), subset).prop_map(|(g, mut s)| {
                // Any order is accepted; reverse some sets.
                if s.len() % 2 == 1 {
                    s.reverse();
                }
                (g, s)
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// Every measure equals its brute-force definition, on meshes and
        /// tori of one to three dimensions (odd and even sides, sides of 1
        /// and 2).
        #[test]
        fn measures_equal_brute_force((grid, nodes) in machine()) {
            let mut m = Measurer::for_grid(&grid);
            let got = m.measure(&nodes).unwrap();
            prop_assert_eq!(got, brute(&grid, &nodes));
            // The buffers are left clean: measuring again agrees.
            prop_assert_eq!(m.measure(&nodes).unwrap(), got);
        }

        /// The torus diameter by breadth-first search equals the pairwise
        /// maximum (forced here on small sets).
        #[test]
        fn torus_diameter_search_equals_pairs((grid, nodes) in machine()) {
            prop_assume!(grid.is_torus() && nodes.len() >= 2);
            let mut m = Measurer::for_grid(&grid);
            let want = brute(&grid, &nodes).diameter;
            m.measure(&nodes).unwrap();
            // Reload the coordinates, then search.
            for (i, &x) in nodes.iter().enumerate() {
                m.slot[x as usize] = i as u32 + 1;
            }
            let d = grid.dims();
            m.coords.clear();
            for &x in &nodes {
                m.coords.extend_from_slice(&grid.coords_of(x).unwrap()[..d]);
            }
            prop_assert_eq!(m.torus_diameter_by_search(nodes.len()), want);
        }
    }

    /// A mesh of one to three dimensions with sides up to 70 (so dimension
    /// 0 is at times too wide for a word) and at most about 5,000 nodes,
    /// with a subset of any size in random order.
    fn mesh_set() -> impl Strategy<Value = (Grid, Vec<NodeId>)> {
        prop::collection::vec(1u32..=70, 1..=3).prop_flat_map(|mut sides| {
            if let [a, b, c] = sides[..] {
                sides[2] = c.min(5000 / (a * b)).max(1);
            }
            let grid = Grid::mesh(&sides).unwrap();
            let all: Vec<NodeId> = (0..grid.num_nodes() as NodeId).collect();
            let n = all.len();
            (
                Just(grid),
                prop::sample::subsequence(all, 0..=n).prop_shuffle(),
            )
        })
    }

    proptest! {
        /// The word-level path gives every field of the node-by-node path,
        /// and the same error for a node repeated or outside the machine.
        #[test]
        fn word_rows_equal_the_generic_path(
            (grid, nodes) in mesh_set(),
            at in any::<prop::sample::Index>(),
            outside in any::<bool>(),
        ) {
            let mut m = Measurer::for_grid(&grid);
            prop_assert_eq!(m.rows.is_some(), grid.sides()[0] <= 64);
            let fast = m.measure(&nodes);
            prop_assert!(fast.is_ok());
            prop_assert_eq!(&fast, &m.measure_generic(&nodes));
            // In increasing order (as paging grants), the rows are met in
            // increasing order too: the one-pass path of a 2-D mesh.
            let mut sorted = nodes.clone();
            sorted.sort_unstable();
            prop_assert_eq!(&m.measure(&sorted), &fast);
            let mut wrong = nodes.clone();
            let extra = if outside || nodes.is_empty() {
                grid.num_nodes() as NodeId
            } else {
                nodes[at.index(nodes.len())]
            };
            wrong.insert(at.index(nodes.len() + 1), extra);
            let refused = m.measure(&wrong);
            prop_assert!(refused.is_err());
            prop_assert_eq!(refused, m.measure_generic(&wrong));
            // In increasing order (the order of the 2-D one-pass path),
            // refused alike.
            wrong.sort_unstable();
            let refused = m.measure(&wrong);
            prop_assert!(refused.is_err());
            prop_assert_eq!(refused, m.measure_generic(&wrong));
            // Refusing left the rows clean.
            prop_assert_eq!(m.measure(&nodes), fast);
        }
    }

    #[test]
    fn large_sets_take_the_search_path_and_agree() {
        // 20×20 torus, 300 nodes: 44,850 pairs > 400·2, so the search runs.
        let grid = Grid::torus(&[20, 21]).unwrap();
        let nodes: Vec<NodeId> = (0..420).filter(|x| x % 7 != 3).take(300).collect();
        let got = Measurer::for_grid(&grid).measure(&nodes).unwrap();
        assert_eq!(got, brute(&grid, &nodes));
    }

    #[test]
    fn bad_input_is_refused_and_leaves_the_measurer_clean() {
        let t: Topology = "mesh:4x4".parse().unwrap();
        let mut m = Measurer::new(&t).unwrap();
        assert_eq!(
            m.measure(&[1, 2, 1]),
            Err(DispersalError::Duplicate { node: 1 })
        );
        assert!(matches!(
            m.measure(&[3, 16]),
            Err(DispersalError::Topology(TopologyError::NodeOutOfRange {
                node: 16,
                ..
            }))
        ));
        assert_eq!(m.measure(&[1, 2]).unwrap().distance_sum, 1);
        let cube: Topology = "hypercube:3".parse().unwrap();
        let e = Measurer::new(&cube).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dispersal is measured on meshes, tori and pods, not on hypercube:3"
        );
        let empty = m.measure(&[]).unwrap();
        assert_eq!((empty.nodes, empty.pieces, empty.span), (0, 0, None));
        assert_eq!(empty.mean_distance(), 0.0);
    }

    #[test]
    fn partitions_are_measured_by_their_nodes() {
        let t: Topology = "mesh:8x8".parse().unwrap();
        let b = partalloc_topology::GridBox::new(&[2, 3], &[2, 2]).unwrap();
        let mut m = Measurer::new(&t).unwrap();
        let d = m.measure_partition(&Partition::Box(b)).unwrap();
        // A 2×2 square: four pairs at 1, two at 2.
        assert_eq!((d.distance_sum, d.diameter, d.pieces), (8, 2, 1));
        assert_eq!(
            d.span,
            Some(Span {
                base: *b.base(),
                extents: *b.extents()
            })
        );
    }
}
