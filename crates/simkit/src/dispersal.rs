//! How far apart each job's nodes are, measured as a run goes.
//!
//! A [`Simulation`](crate::Simulation) that takes the `dispersal` measure
//! ([`crate::measure`]; a mesh's, torus's, hypercube's or pod's own)
//! measures the grant of each job it starts with a [`DispersalMeter`] (once,
//! when the job starts, by the measure's observer; the meter keeps its
//! buffers, so a run allocates only while they grow) and reports
//! - per measured job, in its [`JobRecord`](crate::JobRecord) and the jobs
//!   CSV, a [`GrantDispersal`]: the sum and the mean of the hop distances
//!   over the grant's unordered node pairs, its diameter, the nodes of its
//!   bounding box (span) and its number of contiguous pieces;
//! - in [`Results`](crate::Results), the mean of each of these over the
//!   measured jobs (`mean_distance_sum`, `mean_pairwise_distance`,
//!   `mean_diameter`, `mean_span`, `mean_pieces`).
//!
//! A box of a mesh and a subcube are measured in closed form (O(d)), so
//! contiguous strategies pay almost nothing for the measures; other grants
//! cost O(n·d) and up (see [`Measurer`]). On a 2-D mesh whose rows fit a
//! word, a list of consecutive ids (how paging grants a run of free nodes)
//! is measured in closed form, and any other node list whose rows come in
//! increasing order (how paging grants) from one bit mask per row, a run
//! of consecutive ids at a time.
//!
//! The distance is the machine's hop count:
//! - on a mesh, L1 (Manhattan); on a torus and a pod's torus of chips, Lee
//!   distance (Σ min(|d|, k − |d|)) — measured by
//!   [`partalloc_allocators::dispersal::Measurer`];
//! - on a hypercube, Hamming distance (the hop count of its links); the
//!   span is the smallest subcube holding the grant (2^(bits that vary)
//!   nodes) and a piece is a connected component under the cube's links;
//! - on a Slurm machine (racks, blocks, switch trees) no hop distance is
//!   defined: nothing is measured, the jobs CSV leaves the five columns
//!   empty and the run means are 0.
//!
//! ```
//! use partalloc_allocators::Partition;
//! use partalloc_simkit::dispersal::DispersalMeter;
//! use partalloc_topology::Topology;
//! let mesh: Topology = "mesh:4x4".parse()?;
//! let mut meter = DispersalMeter::new(&mesh);
//! // Nodes ⟨0,0⟩, ⟨1,0⟩ and ⟨3,3⟩: distances 1, 6 and 5.
//! let d = meter.measure(&Partition::Nodes(vec![0, 1, 15])).expect("a mesh has distances");
//! assert_eq!((d.distance_sum, d.diameter, d.span_nodes, d.pieces), (12, 6, 16, 2));
//! assert_eq!(d.mean_distance(), 4.0);
//! // On a hypercube the distance is Hamming's: 0b000, 0b011, 0b111 (the last
//! // two are neighbours, so two pieces).
//! let cube: Topology = "hypercube:3".parse()?;
//! let d = DispersalMeter::new(&cube).measure(&Partition::Nodes(vec![0, 3, 7])).expect("defined");
//! assert_eq!((d.distance_sum, d.diameter, d.span_nodes, d.pieces), (2 + 3 + 1, 3, 8, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::Partition;
use partalloc_allocators::dispersal::Measurer;
use partalloc_topology::{NodeId, Topology};

/// The dispersal of one grant (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GrantDispersal {
    /// Nodes in the grant.
    pub nodes: u64,
    /// Σ of the hop distance over unordered node pairs.
    pub distance_sum: u128,
    /// The largest hop distance between two of its nodes (0 for one node).
    pub diameter: u32,
    /// Nodes of its bounding box (on a hypercube, of the smallest subcube
    /// holding it).
    pub span_nodes: u64,
    /// Connected components under the machine's links (1 when contiguous).
    pub pieces: u32,
}

impl GrantDispersal {
    /// The mean hop distance over unordered node pairs (0 for one node).
    #[must_use]
    pub fn mean_distance(&self) -> f64 {
        partalloc_allocators::dispersal::mean_pair_distance(self.distance_sum, self.nodes)
    }
}

/// How a machine's grants are measured.
#[derive(Debug, Clone)]
enum Kind {
    Grid(Measurer),
    Cube(CubeMeasurer),
    Undefined,
}

/// Measures the grants of one machine, keeping its buffers between calls.
#[derive(Debug, Clone)]
pub struct DispersalMeter {
    topology: Topology,
    kind: Kind,
    /// The word path of a 2-D mesh whose rows fit a word, for node sets
    /// in increasing order (how paging grants them).
    plane: Option<Plane>,
    ids: Vec<NodeId>,
}

impl DispersalMeter {
    /// A meter for `topology` (one that measures nothing on a machine
    /// without hop distances: see [`is_defined`](Self::is_defined)).
    #[must_use]
    pub fn new(topology: &Topology) -> Self {
        let kind = if let Some(g) = topology.as_grid() {
            Kind::Grid(Measurer::for_grid(g))
        } else if let Some(h) = topology.as_hypercube() {
            Kind::Cube(CubeMeasurer::new(h.dim()))
        } else {
            Kind::Undefined
        };
        let plane = topology
            .as_grid()
            .filter(|g| !g.is_torus() && g.dims() == 2)
            .and_then(|g| Plane::new(g.sides()[0], g.sides()[1]));
        Self {
            topology: topology.clone(),
            kind,
            plane,
            ids: Vec::new(),
        }
    }

    /// Whether grants of this machine have a dispersal (meshes, tori,
    /// pods and hypercubes do; Slurm machines do not).
    #[must_use]
    pub fn is_defined(&self) -> bool {
        !matches!(self.kind, Kind::Undefined)
    }

    /// The dispersal of `partition`; `None` on a machine without hop
    /// distances, or for a partition that does not lie in the machine or
    /// lists a node twice (no allocator grants such a partition).
    pub fn measure(&mut self, partition: &Partition) -> Option<GrantDispersal> {
        if let (Kind::Cube(_), Partition::Subcube(s)) = (&self.kind, partition) {
            // Closed form: every free bit splits the 2^f nodes in halves.
            let f = s.dim();
            if s.cube_dim() == self.topology.as_hypercube()?.dim() {
                let n = 1u64 << f;
                return Some(GrantDispersal {
                    nodes: n,
                    distance_sum: u128::from(f) * u128::from(n / 2) * u128::from(n / 2),
                    diameter: f,
                    span_nodes: n,
                    pieces: 1,
                });
            }
        }
        if let (Kind::Grid(_), Partition::Box(b)) = (&self.kind, partition)
            && let Some(g) = self.topology.as_grid()
            && !g.is_torus()
            && g.check_box(b).is_ok()
        {
            return Some(mesh_box(b));
        }
        if matches!(self.kind, Kind::Undefined) {
            return None;
        }
        if let Partition::Nodes(ns) = partition {
            // Listed already: measured in place (a node outside the machine
            // or listed twice gives `None`, as listing it would).
            return self.measure_nodes(ns);
        }
        let mut ids = core::mem::take(&mut self.ids);
        ids.clear();
        let listed = partition.for_each_node(&self.topology, |n| ids.push(n));
        let got = listed.ok().and_then(|()| self.measure_nodes(&ids));
        self.ids = ids;
        got
    }

    /// The dispersal of `nodes` (any order); `None` on a machine without
    /// hop distances, for a node outside the machine or a node listed
    /// twice.
    pub fn measure_nodes(&mut self, nodes: &[NodeId]) -> Option<GrantDispersal> {
        if let Some(plane) = &mut self.plane
            && let Some(d) = plane.measure(nodes)
        {
            return Some(d);
        }
        match &mut self.kind {
            Kind::Grid(m) => {
                let d = m.measure(nodes).ok()?;
                Some(GrantDispersal {
                    nodes: d.nodes,
                    distance_sum: d.distance_sum,
                    diameter: d.diameter,
                    span_nodes: d.span.map_or(0, |s| s.volume()),
                    pieces: d.pieces,
                })
            }
            Kind::Cube(m) => m.measure(nodes),
            Kind::Undefined => None,
        }
    }
}

/// A box of a mesh in closed form: along dimension i the V/eᵢ nodes at
/// each of eᵢ coordinates give (V/eᵢ)²·(eᵢ³ − eᵢ)/6 over the pairs.
fn mesh_box(b: &partalloc_topology::GridBox) -> GrantDispersal {
    let v = b.volume();
    let mut sum = 0u128;
    let mut diameter = 0u32;
    for &e in b.extents().iter() {
        let (e128, m) = (u128::from(e), u128::from(v / u64::from(e)));
        sum += m * m * (e128 * e128 * e128 - e128) / 6;
        diameter += e - 1;
    }
    GrantDispersal {
        nodes: v,
        distance_sum: sum,
        diameter,
        span_nodes: v,
        pieces: 1,
    }
}

/// Σ over j in 0..m of L·(n − L) for L = l + step·j (m ≤ 64, L ≤ n for
/// every j < m): the x boundaries of a stretch of columns that hold `step`
/// nodes each, the first boundary having `l` nodes to its left.
fn stretch_sum(n: u64, l: u64, step: u64, m: u64) -> u128 {
    // Σ j and Σ j² over 0..m.
    let s1 = m * m.saturating_sub(1) / 2;
    let s2 = m.saturating_sub(1) * m * (2 * m).saturating_sub(1) / 6;
    let (n, l, step) = (i128::from(n), i128::from(l), i128::from(step));
    let sum = i128::from(m) * l * (n - l) + step * (n - 2 * l) * i128::from(s1)
        - step * step * i128::from(s2);
    sum as u128
}

/// Bytes with bit `i` of the index spread to byte `i` (0 or 1 each): a
/// row's bits become per-column counts that add a byte lane at a time.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut i = 0;
        while i < 8 {
            if v >> i & 1 == 1 {
                t[v] |= 1 << (8 * i);
            }
            i += 1;
        }
        v += 1;
    }
    t
};

/// Most rows whose column counts add in byte lanes before they are
/// flushed to the wide counts (a lane holds up to 255).
const LANE_ROWS: usize = 255;

/// The word path of a 2-D mesh of `width` ≤ 64 columns: a list of
/// consecutive ids is measured in closed form ([`Plane::measure_run`]);
/// another set whose rows come in increasing order is one bit mask per
/// touched row, and every quantity comes from the masks.
///
/// - Along x, a pair at columns v < w is crossed by the w − v boundaries
///   between them, so the sum is Σ over boundaries of (nodes left) ×
///   (nodes right), from column counts added a byte lane per column
///   ([`SPREAD`]).
/// - Along y, the same over row boundaries, a gap of empty rows counted
///   once per boundary it holds.
/// - The diameter is the larger spread of x + y and x − y (L1 in the
///   plane), from each row's lowest and highest column.
/// - The pieces: when every row is one run, the rows less the rows whose
///   run meets the run of the row below; otherwise each row cut into runs
///   of consecutive columns, a run joined to the runs it overlaps in the
///   row below (union–find).
#[derive(Debug, Clone)]
struct Plane {
    width: u32,
    /// `log2(width)` when it is a power of two (rows by shifting).
    shift: Option<u32>,
    height: u32,
    /// (y, mask) of the touched rows, in increasing y.
    rows: Vec<(u32, u64)>,
    /// Runs of the rows as masks, and the index of each row's first run.
    runs: Vec<u64>,
    parent: Vec<u32>,
}

impl Plane {
    fn new(width: u32, height: u32) -> Option<Self> {
        (1..=64).contains(&width).then(|| Self {
            width,
            shift: width.is_power_of_two().then(|| width.trailing_zeros()),
            height,
            rows: Vec::new(),
            runs: Vec::new(),
            parent: Vec::new(),
        })
    }

    /// The masks of `nodes` (`increasing`: listed in strictly increasing
    /// order); `false` unless the rows they lie in come in increasing order
    /// (any order within a row), no node is listed twice and all are inside
    /// the machine (the general path then measures them).
    #[inline]
    fn mark(&mut self, nodes: &[NodeId], increasing: bool) -> bool {
        self.rows.clear();
        let Some(&last) = nodes.last() else {
            return false;
        };
        if increasing {
            self.mark_runs(nodes);
            return u64::from(last) < u64::from(self.width) * u64::from(self.height);
        }
        let highest = match self.shift {
            Some(shift) => self.mark_blocks(nodes, shift),
            None => self.mark_rows(nodes),
        };
        let Some(highest) = highest else {
            return false;
        };
        // A node listed twice sets its bit once.
        let marked: u64 = self
            .rows
            .iter()
            .map(|&(_, m)| u64::from(m.count_ones()))
            .sum();
        marked == nodes.len() as u64 && highest < u64::from(self.width) * u64::from(self.height)
    }

    /// Whether `nodes` is strictly increasing. Compared as `i32` (one
    /// vector comparison per four ids) from a first id below 2³¹, which
    /// makes every id below 2³¹; a list holding larger ids is called not
    /// increasing, and the row path measures it instead.
    #[inline]
    fn increasing(nodes: &[NodeId]) -> bool {
        let (Some(&first), Some(next)) = (nodes.first(), nodes.get(1..)) else {
            return true;
        };
        let below = |a: NodeId, b: NodeId| u32::from(a.cast_signed() < b.cast_signed());
        i32::try_from(first).is_ok()
            && nodes
                .iter()
                .zip(next)
                .fold(1u32, |acc, (&a, &b)| acc & below(a, b))
                == 1
    }

    /// The dispersal of the consecutive ids `first..=last` in closed form
    /// (`None` past the machine's last node). Within one row they are a
    /// line; over R ≥ 2 rows they are a tail of the first row, R − 2 full
    /// rows and a head of the last, so the first row holds ⟨width − 1, y0⟩
    /// and the last ⟨0, y1⟩: the bounding box is the full width, and these
    /// two nodes, its opposite corners, are the diameter.
    fn measure_run(&self, first: NodeId, last: NodeId) -> Option<GrantDispersal> {
        let w = self.width;
        if u64::from(last) >= u64::from(w) * u64::from(self.height) {
            return None;
        }
        let n = u64::from(last - first) + 1;
        let (x0, y0, x1, y1) = (first % w, first / w, last % w, last / w);
        if y0 == y1 {
            // A line of n nodes: Σ over its n − 1 boundaries of b·(n − b).
            let n128 = u128::from(n);
            return Some(GrantDispersal {
                nodes: n,
                distance_sum: (n128 * n128 * n128 - n128) / 6,
                diameter: (n - 1) as u32,
                span_nodes: n,
                pieces: 1,
            });
        }
        let rows = y1 - y0 + 1;
        // Along y: the boundary below row y0 + k has the first row's nodes
        // and k full rows under it.
        let (w64, head) = (u64::from(w), u64::from(w - x0));
        let mut sum = 0u128;
        let mut below = head;
        for _ in 1..rows {
            sum += u128::from(below) * u128::from(n - below);
            below += w64;
        }
        // Along x: column x holds the full rows, plus the first row's node
        // when x ≥ x0 and the last row's when x ≤ x1.
        // The count changes only at x0 and x1 + 1: the boundaries are
        // passed in three stretches of one count each, each in closed form.
        let full = u64::from(rows - 2);
        let (p1, p2) = ((x1 + 1).min(x0), (x1 + 1).max(x0).min(w - 1));
        let mut left = 0u64;
        for (a, b) in [(0, p1), (p1, p2), (p2, w - 1)] {
            let count = full + u64::from(a >= x0) + u64::from(a <= x1);
            let m = u64::from(b - a);
            sum += stretch_sum(n, left + count, count, m);
            left += count * m;
        }
        Some(GrantDispersal {
            nodes: n,
            distance_sum: sum,
            diameter: w - 1 + (y1 - y0),
            span_nodes: w64 * u64::from(rows),
            // Middle rows are full and join the rest; two rows join when
            // the first row's tail and the last row's head share a column.
            pieces: if rows > 2 || x0 <= x1 { 1 } else { 2 },
        })
    }

    /// Marks a strictly increasing list a run of consecutive ids at a
    /// time. In such a list the k-th id after `first` is at least
    /// `first + k`, with equality exactly along the run starting at
    /// `first`, so each run's end is found by bisection.
    fn mark_runs(&mut self, nodes: &[NodeId]) {
        let mut rest = nodes;
        while let Some(&first) = rest.first() {
            // rest[..lo] is the run; rest[hi..] is not.
            let (mut lo, mut hi) = (1usize, rest.len());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if rest[mid] - first == mid as u32 {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            self.push_range(first, rest[lo - 1]);
            rest = &rest[lo..];
        }
    }

    /// Adds the ids `first..=last` to the rows (the rows so far end at or
    /// before `first`'s row).
    #[inline]
    fn push_range(&mut self, first: NodeId, last: NodeId) {
        let w = self.width;
        let full = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let (y0, y1) = (first / w, last / w);
        for y in y0..=y1 {
            let mut m = full;
            if y == y0 {
                m &= full << (first % w) & full;
            }
            if y == y1 {
                m &= full >> (w - 1 - last % w);
            }
            match self.rows.last_mut() {
                Some((ly, lm)) if *ly == y => *lm |= m,
                _ => self.rows.push((y, m)),
            }
        }
    }

    /// Marks by 64-id blocks (a width that divides 64: a block is whole
    /// rows); returns the highest id, or `None` if the blocks do not come
    /// in increasing order.
    #[inline]
    fn mark_blocks(&mut self, nodes: &[NodeId], shift: u32) -> Option<u64> {
        let (mut block, mut bits) = (u32::MAX, 0u64);
        for &id in nodes {
            let b = id >> 6;
            if b != block {
                if block != u32::MAX {
                    if b < block {
                        return None;
                    }
                    self.split(block, bits, shift);
                }
                (block, bits) = (b, 0);
            }
            bits |= 1 << (id & 63);
        }
        self.split(block, bits, shift);
        Some(u64::from(block) * 64 + u64::from(63 - bits.leading_zeros()))
    }

    /// The rows of the 64-id block `block` whose ids are `bits`.
    #[inline]
    fn split(&mut self, block: u32, bits: u64, shift: u32) {
        let per_block = 64 >> shift;
        let row_mask = if shift == 6 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        };
        for k in 0..per_block {
            let m = bits >> (k << shift) & row_mask;
            if m != 0 {
                self.rows.push((block * per_block + k, m));
            }
        }
    }

    /// Marks row by row (any width up to 64); returns the highest id, or
    /// `None` if the rows do not come in increasing order.
    fn mark_rows(&mut self, nodes: &[NodeId]) -> Option<u64> {
        let (mut y, mut mask) = (u32::MAX, 0u64);
        for &id in nodes {
            let (row, x) = (id / self.width, id % self.width);
            if row != y {
                if y != u32::MAX {
                    if row < y {
                        return None;
                    }
                    self.rows.push((y, mask));
                }
                (y, mask) = (row, 0);
            }
            mask |= 1 << x;
        }
        self.rows.push((y, mask));
        Some(u64::from(y) * u64::from(self.width) + u64::from(63 - mask.leading_zeros()))
    }

    fn measure(&mut self, nodes: &[NodeId]) -> Option<GrantDispersal> {
        let increasing = Self::increasing(nodes);
        if increasing
            && let (Some(&first), Some(&last)) = (nodes.first(), nodes.last())
            && (last - first) as usize == nodes.len() - 1
        {
            // Consecutive ids (how paging grants a run of free nodes).
            return self.measure_run(first, last);
        }
        if !self.mark(nodes, increasing) {
            return None;
        }
        let n = nodes.len() as u64;
        // Along y, and the extremes of x + y and x − y per row.
        let (mut sum_y, mut below, mut union) = (0u128, 0u64, 0u64);
        let (mut s_lo, mut s_hi, mut d_lo, mut d_hi) = (i64::MAX, i64::MIN, i64::MAX, i64::MIN);
        let mut next_y = None::<u32>;
        // Whether every row is one run, and how many rows' runs meet the
        // run of the row below.
        let (mut one_run_rows, mut joins, mut below_mask) = (true, 0u32, 0u64);
        for &(y, m) in &self.rows {
            one_run_rows &= m & m.wrapping_add(m & m.wrapping_neg()) == 0;
            if next_y != Some(y) {
                below_mask = 0;
            }
            joins += u32::from(m & below_mask != 0);
            below_mask = m;
            if let Some(ny) = next_y {
                // Every boundary from the last row to this one splits the
                // set alike.
                sum_y += u128::from(y - ny + 1) * u128::from(below * (n - below));
            }
            below += u64::from(m.count_ones());
            next_y = Some(y + 1);
            union |= m;
            let (lo, hi) = (
                i64::from(m.trailing_zeros()),
                i64::from(63 - m.leading_zeros()),
            );
            let yy = i64::from(y);
            s_lo = s_lo.min(lo + yy);
            s_hi = s_hi.max(hi + yy);
            d_lo = d_lo.min(lo - yy);
            d_hi = d_hi.max(hi - yy);
        }
        // Along x: column counts in byte lanes, then the boundaries.
        let (x_lo, x_hi) = (union.trailing_zeros(), 63 - union.leading_zeros());
        let lanes = self.width.div_ceil(8) as usize;
        let mut sum_x = 0u128;
        let mut left = 0u64;
        if self.rows.len() <= LANE_ROWS {
            let mut acc = [0u64; 8];
            for &(_, m) in &self.rows {
                for (l, a) in acc.iter_mut().enumerate().take(lanes) {
                    *a += SPREAD[(m >> (8 * l) & 0xff) as usize];
                }
            }
            // Each product is at most n²/4 and at most 64 add up: u64
            // holds them while n < 2^29. Every column of the lanes is
            // passed: a boundary outside the set's columns has all of it
            // on one side, and adds 0.
            if n < 1 << 29 {
                let mut sum = 0u64;
                for &lane in &acc[..lanes] {
                    let mut a = lane;
                    for _ in 0..8 {
                        left += a & 0xff;
                        a >>= 8;
                        sum += left * (n - left);
                    }
                }
                sum_x = u128::from(sum);
            } else {
                for x in x_lo..x_hi {
                    left += acc[(x / 8) as usize] >> (8 * (x % 8)) & 0xff;
                    sum_x += u128::from(left * (n - left));
                }
            }
        } else {
            let mut wide = [0u64; 64];
            for chunk in self.rows.chunks(LANE_ROWS) {
                let mut acc = [0u64; 8];
                for &(_, m) in chunk {
                    for (l, a) in acc.iter_mut().enumerate().take(lanes) {
                        *a += SPREAD[(m >> (8 * l) & 0xff) as usize];
                    }
                }
                for (l, a) in acc.iter().enumerate().take(lanes) {
                    for b in 0..8 {
                        wide[8 * l + b] += a >> (8 * b) & 0xff;
                    }
                }
            }
            for &c in &wide[x_lo as usize..x_hi as usize] {
                left += c;
                sum_x += u128::from(left * (n - left));
            }
        }
        let (y_lo, y_hi) = (self.rows[0].0, self.rows[self.rows.len() - 1].0);
        Some(GrantDispersal {
            nodes: n,
            distance_sum: sum_x + sum_y,
            diameter: (s_hi - s_lo).max(d_hi - d_lo) as u32,
            span_nodes: u64::from(x_hi - x_lo + 1) * u64::from(y_hi - y_lo + 1),
            // One run a row: the runs and their joins form paths, one a
            // piece.
            pieces: if one_run_rows {
                self.rows.len() as u32 - joins
            } else {
                self.pieces()
            },
        })
    }

    /// Connected components of the marked rows under the mesh's links.
    fn pieces(&mut self) -> u32 {
        self.runs.clear();
        self.parent.clear();
        let mut pieces = 0u32;
        // The row before: its y and its runs.
        let mut before = (u32::MAX, 0usize, 0usize);
        for &(y, mut m) in &self.rows {
            let first = self.runs.len();
            while m != 0 {
                // The lowest run: the low bits up to the first gap.
                let low = m & m.wrapping_neg();
                let run = m & !(m.wrapping_add(low));
                m &= !run;
                self.parent.push(self.runs.len() as u32);
                self.runs.push(run);
                pieces += 1;
            }
            let end = self.runs.len();
            if before.0.wrapping_add(1) == y {
                // Both rows' runs in increasing columns: one sweep meets
                // every overlapping pair, passing the run that ends first.
                let (mut i, mut j) = (first, before.1);
                while i < end && j < before.2 {
                    let (a, b) = (self.runs[i], self.runs[j]);
                    if a & b != 0 {
                        let (ra, rb) = (
                            find(&mut self.parent, i as u32),
                            find(&mut self.parent, j as u32),
                        );
                        if ra != rb {
                            self.parent[ra as usize] = rb;
                            pieces -= 1;
                        }
                    }
                    let (top_a, top_b) = (a.leading_zeros(), b.leading_zeros());
                    if top_a >= top_b {
                        i += 1;
                    }
                    if top_b >= top_a {
                        j += 1;
                    }
                }
            }
            before = (y, first, end);
        }
        pieces
    }
}

/// The root of `x` (halving the path on the way).
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[parent[x as usize] as usize];
        parent[x as usize] = p;
        x = p;
    }
    x
}

/// Most node pairs whose Hamming distances are compared one by one for a
/// hypercube grant's diameter; larger grants search the machine instead
/// (when it has at most [`MAX_SEARCHED_CUBE`] nodes).
const MAX_PAIRS: u64 = 1 << 22;

/// Most nodes of a hypercube searched breadth-first for a diameter (one
/// byte each).
const MAX_SEARCHED_CUBE: u64 = 1 << 26;

/// Dispersal on a hypercube Q_n under Hamming distance.
///
/// Costs for a set of m nodes: the sum and the span O(m·n) (per bit, the
/// nodes having it: Σ_b c_b·(m − c_b)); the pieces O(m·n·log m)
/// (union–find, neighbours found in the sorted set); the diameter
/// O(m²) while m(m−1)/2 ≤ 2^22 (stopping early at the span's bound),
/// otherwise one multi-source breadth-first search over the 2^n nodes
/// (the farthest member from a is n minus the distance from a's complement
/// to the set).
#[derive(Debug, Clone)]
struct CubeMeasurer {
    dim: u32,
    sorted: Vec<NodeId>,
    parent: Vec<u32>,
    dist: Vec<u8>,
    queue: Vec<NodeId>,
}

impl CubeMeasurer {
    fn new(dim: u32) -> Self {
        Self {
            dim,
            sorted: Vec::new(),
            parent: Vec::new(),
            dist: Vec::new(),
            queue: Vec::new(),
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    fn measure(&mut self, nodes: &[NodeId]) -> Option<GrantDispersal> {
        let n = self.dim;
        let machine = 1u64 << n;
        if nodes.iter().any(|&x| u64::from(x) >= machine) {
            return None;
        }
        self.sorted.clear();
        self.sorted.extend_from_slice(nodes);
        self.sorted.sort_unstable();
        if self.sorted.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        let m = self.sorted.len() as u64;
        let Some(&first) = self.sorted.first() else {
            return Some(GrantDispersal::default());
        };
        let mut distance_sum = 0u128;
        for b in 0..n {
            let c = self.sorted.iter().filter(|&&x| x >> b & 1 == 1).count() as u64;
            distance_sum += u128::from(c) * u128::from(m - c);
        }
        let varying = self.sorted.iter().fold(0u32, |v, &x| v | (x ^ first));
        // Pieces: join each node to its neighbours above it.
        self.parent.clear();
        self.parent.extend(0..m as u32);
        let mut pieces = m as u32;
        for i in 0..self.sorted.len() {
            let x = self.sorted[i];
            for b in 0..n {
                if x >> b & 1 == 1 {
                    continue;
                }
                if let Ok(j) = self.sorted.binary_search(&(x | 1 << b)) {
                    let (a, c) = (self.find(i as u32), self.find(j as u32));
                    if a != c {
                        self.parent[a as usize] = c;
                        pieces -= 1;
                    }
                }
            }
        }
        let diameter = self.diameter(varying.count_ones(), machine);
        Some(GrantDispersal {
            nodes: m,
            distance_sum,
            diameter,
            span_nodes: 1u64 << varying.count_ones(),
            pieces,
        })
    }

    /// The largest pairwise Hamming distance of the sorted set, which is at
    /// most `bound` (the bits that vary).
    fn diameter(&mut self, bound: u32, machine: u64) -> u32 {
        let m = self.sorted.len() as u64;
        if m * m.saturating_sub(1) / 2 > MAX_PAIRS && machine <= MAX_SEARCHED_CUBE {
            return self.diameter_by_search(machine);
        }
        let mut best = 0;
        for (i, &x) in self.sorted.iter().enumerate() {
            for &y in &self.sorted[i + 1..] {
                best = best.max((x ^ y).count_ones());
            }
            if best == bound {
                break;
            }
        }
        best
    }

    fn diameter_by_search(&mut self, machine: u64) -> u32 {
        self.dist.clear();
        self.dist.resize(machine as usize, u8::MAX);
        self.queue.clear();
        for &x in &self.sorted {
            self.dist[x as usize] = 0;
            self.queue.push(x);
        }
        let mut head = 0;
        while let Some(&v) = self.queue.get(head) {
            head += 1;
            let dv = self.dist[v as usize];
            for b in 0..self.dim {
                let w = v ^ 1 << b;
                if self.dist[w as usize] == u8::MAX {
                    self.dist[w as usize] = dv + 1;
                    self.queue.push(w);
                }
            }
        }
        let mask = (machine - 1) as u32;
        self.sorted
            .iter()
            .map(|&x| self.dim - u32::from(self.dist[(!x & mask) as usize]))
            .max()
            .unwrap_or(0)
    }
}

/// The `dispersal` measure ([`crate::measure`]) as an
/// [`Observer`](crate::observe::Observer): each started job's grant
/// measured once, kept per running slot for its record, and summed over
/// the measured jobs for the run means.
#[derive(Debug, Clone)]
pub(crate) struct DispersalObserver {
    meter: DispersalMeter,
    held: Vec<Option<GrantDispersal>>,
    /// A grant measured before its start (for the run-time model), taken
    /// by the next [`started`](crate::observe::Observer::started).
    ahead: Option<Option<GrantDispersal>>,
    sums: DispersalSums,
}

impl DispersalObserver {
    pub(crate) fn new(topology: &Topology) -> Self {
        Self {
            meter: DispersalMeter::new(topology),
            held: Vec::new(),
            ahead: None,
            sums: DispersalSums::default(),
        }
    }

    /// The dispersal of a grant about to start, measured now and kept for
    /// its start (what a run-time model reads before the start).
    pub(crate) fn measure_ahead(&mut self, partition: &Partition) -> Option<GrantDispersal> {
        let d = self.meter.measure(partition);
        self.ahead = Some(d);
        d
    }

    /// The dispersal of the grant running in `slot`.
    pub(crate) fn of_slot(&self, slot: u32) -> Option<GrantDispersal> {
        self.held.get(slot as usize).copied().flatten()
    }

    /// The run means (sum, mean distance, diameter, span, pieces).
    pub(crate) fn means(&self) -> [f64; 5] {
        self.sums.means()
    }
}

impl crate::observe::Observer for DispersalObserver {
    #[inline]
    fn started(
        &mut self,
        slot: u32,
        _job: &partalloc_workload::Job,
        grant: &partalloc_allocators::Grant,
        _now: f64,
    ) {
        let d = match self.ahead.take() {
            Some(d) => d,
            None => self.meter.measure(grant.partition()),
        };
        let i = slot as usize;
        if self.held.len() <= i {
            self.held.resize(i + 1, None);
        }
        self.held[i] = d;
    }

    #[inline]
    fn departed(&mut self, d: &crate::observe::Departure<'_>) {
        if d.measured
            && let Some(g) = self.of_slot(d.slot)
        {
            self.sums.add(&g);
        }
    }
}

/// Running sums of the measured jobs' dispersal, for the run means.
#[derive(Debug, Clone, Copy, Default)]
struct DispersalSums {
    jobs: u64,
    distance_sum: f64,
    mean_distance: f64,
    diameter: f64,
    span: f64,
    pieces: f64,
}

impl DispersalSums {
    fn add(&mut self, d: &GrantDispersal) {
        self.jobs += 1;
        self.distance_sum += d.distance_sum as f64;
        self.mean_distance += d.mean_distance();
        self.diameter += f64::from(d.diameter);
        self.span += d.span_nodes as f64;
        self.pieces += f64::from(d.pieces);
    }

    /// The means (sum, mean distance, diameter, span, pieces); zeros
    /// without a measured job.
    fn means(&self) -> [f64; 5] {
        if self.jobs == 0 {
            return [0.0; 5];
        }
        let n = self.jobs as f64;
        [
            self.distance_sum / n,
            self.mean_distance / n,
            self.diameter / n,
            self.span / n,
            self.pieces / n,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_cube(dim: u32, nodes: &[NodeId]) -> GrantDispersal {
        let m = nodes.len();
        // Hamming distance; pieces by flood fill over single-bit flips.
        let (sum, diameter, pieces) =
            partalloc_testkit::brute_dispersal(m, |i, j| (nodes[i] ^ nodes[j]).count_ones());
        // The smallest subcube: every bit on which two nodes differ is free.
        let mut free = 0;
        for b in 0..dim {
            if nodes.iter().any(|&x| (x ^ nodes[0]) >> b & 1 == 1) {
                free += 1;
            }
        }
        GrantDispersal {
            nodes: m as u64,
            distance_sum: sum,
            diameter,
            span_nodes: if m == 0 { 0 } else { 1 << free },
            pieces,
        }
    }

    fn cube_set() -> impl Strategy<Value = (u32, Vec<NodeId>)> {
        (1u32..=6).prop_flat_map(|dim| {
            let all: Vec<NodeId> = (0..1u32 << dim).collect();
            (
                Just(dim),
                prop::sample::subsequence(all, 1..=(1usize << dim)),
            )
                .prop_map(|(d, mut s)| {
                    s.reverse();
                    (d, s)
                })
        })
    }

    proptest! {
        /// Hypercube measures equal their brute-force definitions.
        #[test]
        fn hypercube_measures_equal_brute_force((dim, nodes) in cube_set()) {
            let mut m = CubeMeasurer::new(dim);
            let got = m.measure(&nodes).unwrap();
            prop_assert_eq!(got, brute_cube(dim, &nodes));
            // Forced through the breadth-first search, the diameter agrees.
            prop_assert_eq!(m.diameter_by_search(1 << dim), got.diameter);
        }

        /// A subcube's closed form equals measuring its nodes.
        #[test]
        fn subcubes_in_closed_form_equal_their_nodes(dim in 1u32..=6, free in any::<u32>(), fixed in any::<u32>()) {
            let mask = (1u32 << dim) - 1;
            let s = partalloc_topology::Subcube::new(dim, free & mask, fixed & mask & !free).unwrap();
            let topology: Topology = format!("hypercube:{dim}").parse().unwrap();
            let mut meter = DispersalMeter::new(&topology);
            let closed = meter.measure(&Partition::Subcube(s)).unwrap();
            let nodes: Vec<NodeId> = s.nodes().collect();
            prop_assert_eq!(closed, meter.measure_nodes(&nodes).unwrap());
        }
    }

    proptest! {
        /// A mesh box's closed form equals measuring its nodes.
        #[test]
        fn mesh_boxes_in_closed_form_equal_their_nodes(
            sides in prop::collection::vec(1u32..=7, 1..=3),
            seed in any::<u64>(),
        ) {
            let grid = partalloc_topology::Grid::mesh(&sides).unwrap();
            let (mut base, mut ext) = (Vec::new(), Vec::new());
            for (i, &k) in sides.iter().enumerate() {
                let r = (seed >> (8 * i)) as u32;
                let lo = r % k;
                base.push(lo);
                ext.push(1 + (r >> 8) % (k - lo));
            }
            let b = partalloc_topology::GridBox::new(&base, &ext).unwrap();
            let mut meter = DispersalMeter::new(&Topology::Grid(grid));
            let closed = meter.measure(&Partition::Box(b)).unwrap();
            let nodes: Vec<NodeId> = grid.box_nodes(&b).unwrap().collect();
            prop_assert_eq!(closed, meter.measure_nodes(&nodes).unwrap());
        }
    }

    /// A 2-D mesh set's dispersal by the definitions: every pair's L1
    /// distance, the bounding box, pieces by flood fill.
    fn brute_plane(width: u32, nodes: &[NodeId]) -> GrantDispersal {
        let xy = |i: usize| (nodes[i] % width, nodes[i] / width);
        let (sum, diameter, pieces) = partalloc_testkit::brute_dispersal(nodes.len(), |i, j| {
            let ((a, b), (c, d)) = (xy(i), xy(j));
            a.abs_diff(c) + b.abs_diff(d)
        });
        let xs = (0..nodes.len()).map(|i| xy(i).0);
        let ys = (0..nodes.len()).map(|i| xy(i).1);
        let extent = |v: Vec<u32>| u64::from(v.iter().max().unwrap() - v.iter().min().unwrap() + 1);
        GrantDispersal {
            nodes: nodes.len() as u64,
            distance_sum: sum,
            diameter,
            span_nodes: extent(xs.collect()) * extent(ys.collect()),
            pieces,
        }
    }

    fn plane_set() -> impl Strategy<Value = (u32, u32, Vec<NodeId>)> {
        (prop_oneof![1u32..=20, 60u32..=64], 1u32..=9).prop_flat_map(|(w, h)| {
            let all: Vec<NodeId> = (0..w * h).collect();
            let most = all.len().min(120);
            (Just(w), Just(h), prop::sample::subsequence(all, 1..=most))
        })
    }

    proptest! {
        /// The word path of a 2-D mesh (a set in increasing order) equals
        /// the definitions, and the general path (the same set reversed).
        #[test]
        fn plane_word_path_equals_brute_force((w, h, nodes) in plane_set()) {
            let topology: Topology = format!("mesh:{w}x{h}").parse().unwrap();
            let mut meter = DispersalMeter::new(&topology);
            let mut plane = Plane::new(w, h).unwrap();
            let fast = plane.measure(&nodes).unwrap();
            prop_assert_eq!(fast, brute_plane(w, &nodes));
            prop_assert_eq!(meter.measure_nodes(&nodes), Some(fast));
            // Reversed, the rows come in decreasing order: the general
            // path measures the set unless it lies in one row (or block).
            let reversed: Vec<NodeId> = nodes.iter().rev().copied().collect();
            prop_assert!(plane.measure(&reversed).is_none_or(|d| d == fast));
            prop_assert_eq!(meter.measure_nodes(&reversed), Some(fast));
            let mut general = partalloc_allocators::dispersal::Measurer::new(&topology).unwrap();
            let g = general.measure(&reversed).unwrap();
            prop_assert_eq!(
                (g.distance_sum, g.diameter, g.span.map_or(0, |s| s.volume()), g.pieces),
                (fast.distance_sum, fast.diameter, fast.span_nodes, fast.pieces)
            );
        }
    }

    proptest! {
        /// A run of consecutive ids (how paging grants a run of free
        /// nodes), measured in closed form, equals the definitions and the
        /// general path, on widths that do and do not divide a word.
        #[test]
        fn plane_runs_in_closed_form_equal_brute_force(
            w in prop_oneof![1u32..=20, 29u32..=33, 60u32..=64],
            h in 1u32..=9,
            at in any::<u32>(),
            len in 1u32..=150,
        ) {
            let total = w * h;
            let first = at % total;
            let last = (first + len - 1).min(total - 1);
            let nodes: Vec<NodeId> = (first..=last).collect();
            let plane = Plane::new(w, h).unwrap();
            let fast = plane.measure_run(first, last).unwrap();
            prop_assert_eq!(fast, brute_plane(w, &nodes));
            let topology: Topology = format!("mesh:{w}x{h}").parse().unwrap();
            let mut general = partalloc_allocators::dispersal::Measurer::new(&topology).unwrap();
            let reversed: Vec<NodeId> = nodes.iter().rev().copied().collect();
            let g = general.measure(&reversed).unwrap();
            prop_assert_eq!(
                (g.distance_sum, g.diameter, g.span.map_or(0, |s| s.volume()), g.pieces),
                (fast.distance_sum, fast.diameter, fast.span_nodes, fast.pieces)
            );
            // Past the machine's last node, nothing.
            prop_assert_eq!(plane.measure_run(first, total), None);
        }
    }

    proptest! {
        /// A stretch's closed form equals adding its boundaries one by
        /// one, up to grants of 2³² nodes.
        #[test]
        fn stretch_sums_equal_their_boundaries(
            n in 1u64..=1 << 32,
            m in 0u64..=64,
            seed in any::<u64>(),
        ) {
            let step = seed % (n.checked_div(m).unwrap_or(n) + 1);
            let l = if m == 0 { 0 } else { (seed >> 7) % (n - step * (m - 1) + 1) };
            let want: u128 = (0..m)
                .map(|j| {
                    let left = l + step * j;
                    u128::from(left) * u128::from(n - left)
                })
                .sum();
            prop_assert_eq!(stretch_sum(n, l, step, m), want);
        }
    }

    #[test]
    fn plane_word_path_refuses_what_it_cannot_measure() {
        let mut plane = Plane::new(4, 4).unwrap();
        assert_eq!(plane.measure(&[]), None);
        assert_eq!(plane.measure(&[1, 1]), None);
        assert_eq!(plane.measure(&[3, 16]), None);
        assert!(Plane::new(65, 2).is_none());
        // Nodes ⟨0,0⟩ and ⟨0,2⟩, two rows apart: two pieces.
        let d = plane.measure(&[0, 8]).unwrap();
        assert_eq!(
            (d.distance_sum, d.diameter, d.span_nodes, d.pieces),
            (2, 2, 3, 2)
        );
        // A column of 300 nodes counts past a byte lane's 255 through the
        // flush of the lanes.
        let (w, h) = (64u32, 300u32);
        let column: Vec<NodeId> = (0..h).map(|y| y * w + 5).collect();
        let mut tall = Plane::new(w, h).unwrap();
        assert_eq!(tall.measure(&column), Some(brute_plane(w, &column)));
    }

    #[test]
    fn plane_ids_past_two_to_the_31_are_measured_alike() {
        // 64 × 40,000,000 nodes: ids past 2³¹ are inside the machine, and
        // a list reaching them is not taken for an increasing one by the
        // signed comparison; every form still equals the definitions.
        let (w, h) = (64u32, 40_000_000u32);
        let mut plane = Plane::new(w, h).unwrap();
        let big = 1u32 << 31;
        for nodes in [
            vec![big - 1, big],
            vec![big - 2, big - 1, big, big + 1, big + 64, big + 130],
            vec![big + 3, big + 4, big + 5],
            vec![big + 5, big + 3, big + 70],
            vec![5, big + 5],
        ] {
            assert_eq!(
                plane.measure(&nodes),
                Some(brute_plane(w, &nodes)),
                "{nodes:?}"
            );
        }
        assert!(Plane::increasing(&[1, 2, 7]));
        assert!(!Plane::increasing(&[1, 2, 2]));
        assert!(!Plane::increasing(&[big, big + 1]));
        assert!(!Plane::increasing(&[3, big]));
    }

    #[test]
    fn large_hypercube_sets_take_the_search_and_agree() {
        // 3,000 of Q_12's nodes: 4.5 million pairs, more than MAX_PAIRS.
        let nodes: Vec<NodeId> = (0..4096u32).filter(|x| x % 4 != 1).take(3000).collect();
        let mut m = CubeMeasurer::new(12);
        let got = m.measure(&nodes).unwrap();
        let mut want = 0;
        for (i, &x) in nodes.iter().enumerate() {
            for &y in &nodes[i + 1..] {
                want = want.max((x ^ y).count_ones());
            }
        }
        assert_eq!(got.diameter, want);
    }

    #[test]
    fn bad_sets_and_slurm_machines_measure_nothing() {
        let cube: Topology = "hypercube:3".parse().unwrap();
        let mut m = DispersalMeter::new(&cube);
        assert!(m.is_defined());
        assert_eq!(m.measure_nodes(&[1, 1]), None);
        assert_eq!(m.measure_nodes(&[8]), None);
        assert_eq!(m.measure_nodes(&[]), Some(GrantDispersal::default()));
        let mesh: Topology = "mesh:4x4".parse().unwrap();
        let mut g = DispersalMeter::new(&mesh);
        assert_eq!(g.measure(&Partition::Nodes(vec![16])), None);
        assert_eq!(
            g.measure(&Partition::Nodes(vec![3])).map(|d| d.pieces),
            Some(1)
        );
    }
}
