//! Center-based nearest allocation: for each candidate *center*, the `k`
//! free nodes nearest it; of those sets, the one a score likes best.
//! Grants need not be contiguous.
//!
//! | method | registry name | centers | nearest by | score (lowest wins) | source |
//! |---|---|---|---|---|---|
//! | [`Method::GenAlg`] | `gen-alg` | free nodes | the metric | sum of pairwise distances | Bender et al. 2008 |
//! | [`Method::Mm`] | `mm` | intersections of the free nodes' coordinates | the metric | sum of pairwise distances | Bender et al. 2008 |
//! | [`Method::Mc1x1`] | `mc1x1` | free nodes | shells: L∞ rings | sum of shell numbers | Mache, Lo & Windisch 1997 |
//! | [`Method::Mc`] | `mc` | free nodes | shells: rings around the job's box | sum of shell numbers | Mache, Lo & Windisch 1997 |
//!
//! The metric of `gen-alg` and `mm` is the `metric` parameter ([`Metric`]):
//! L1 (the default, the papers' and PReMAS's) or L∞. MC1x1 and MC take the
//! inner shells whole and choose the rest of the outermost shell they need
//! greedily (the `outer` parameter, [`Outer`]).
//!
//! Where the papers leave a choice open these strategies take PReMAS's
//! (docs/baselines.md#nearest-allocation): centers are tried in PReMAS's
//! order of free nodes (x slowest, then y, then z), a later center wins
//! only with a strictly lower score, and the `k` nearest of a center are
//! the first `k` of one array of the free nodes that every center's
//! nearest search sorts again, stably, by distance to that center — so
//! nodes at equal distance keep the order the previous center's sort left
//! them in. PReMAS's MC1x1 may pick nodes beyond the outermost shell it
//! needs; `mc1x1[outer=premas]` does too, the default does not
//! (docs/paper-errata.md#pr1-premas-mc1x1-looks-past-the-outer-shell).
//!
//! Meshes of one to three dimensions only: the papers define the methods
//! on meshes and neither reference implementation uses wrap links for
//! them. Any request is served by its node count; MC also reads a box
//! request's sides (any other request is a 1×1 box to it). Faulty nodes
//! are never granted. Costs per allocation with n free nodes: see
//! docs/performance.md#center-based-nearest-allocation.
//!
//! ```
//! use partalloc_allocators::{registry, Partition, Request};
//! use partalloc_topology::Topology;
//! let machine: Topology = "mesh:4x4".parse()?;
//! let mut mc = registry::build("mc1x1", &machine)?;
//! let g = mc.allocate(&Request::nodes(4))?;
//! // Around the first center, (0,0): itself and its three nearest.
//! assert_eq!(g.partition(), &Partition::Nodes(vec![0, 1, 4, 5]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use partalloc_topology::{Coords, NodeId, OrientationOrder, Orientations, Topology, TopologyKind};

use crate::entry::ParamInfo;
use crate::{
    AllocError, BuildError, Managed, Occupancy, Partition, Request, Strategy, StrategySpec, View,
};

mod gen_alg;
mod mc;
mod mc1x1;
mod mm;
#[cfg(test)]
mod tests;

pub(crate) use gen_alg::ENTRY as GEN_ALG_ENTRY;
pub(crate) use mc::ENTRY as MC_ENTRY;
pub(crate) use mc1x1::ENTRY as MC1X1_ENTRY;
pub(crate) use mm::ENTRY as MM_ENTRY;

/// The machine families the nearest strategies accept.
const KINDS: &[TopologyKind] = &[TopologyKind::Mesh];

/// The most nodes a nearest allocator is built for: an allocation costs
/// about (free nodes)² steps, already minutes at this size.
pub const MAX_NEAREST_NODES: usize = 1 << 20;

/// A node's coordinates (x, y, z), padded with 0.
type Point = [u32; 3];

/// The distance `gen-alg` and `mm` measure nearness and spread with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Metric {
    /// Manhattan distance: hops on the mesh.
    #[default]
    L1,
    /// Chebyshev distance: the largest coordinate difference.
    LInf,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Self::L1 => "l1",
            Self::LInf => "linf",
        }
    }

    fn distance(self, a: Point, b: Point) -> u32 {
        match self {
            Self::L1 => l1(a, b),
            Self::LInf => linf(a, b),
        }
    }
}

/// Which nodes MC1x1 and MC choose the last part of a grant from, after
/// taking every shell inside the outermost one they need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Outer {
    /// From the outermost shell needed, as the paper's cost requires:
    /// repeatedly the node of least total L1 distance to the nodes chosen
    /// so far, then least L1 distance to the center, then lowest (x, y, z).
    #[default]
    Shell,
    /// The same greedy choice among every free node outside the inner
    /// shells, as PReMAS's `GreedyLInfPointCollector` does; it may take a
    /// node beyond the outermost shell.
    Premas,
}

impl Outer {
    fn name(self) -> &'static str {
        match self {
            Self::Shell => "shell",
            Self::Premas => "premas",
        }
    }
}

/// Which member of the nearest family an allocator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// Bender et al.'s Gen-Alg: every free node as center.
    GenAlg(Metric),
    /// Bender et al.'s MM: every intersection of the coordinate lines
    /// (planes) through free nodes as center.
    Mm(Metric),
    /// Mache, Lo & Windisch's MC1x1: shells of L∞ rings around every free
    /// node.
    Mc1x1(Outer),
    /// Mache, Lo & Windisch's MC: shell 0 is the job's box around the
    /// center, shell i the box grown by i on every side.
    Mc(Outer),
}

impl Method {
    /// The registry name of the allocator with this method.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::GenAlg(_) => gen_alg::NAME,
            Self::Mm(_) => mm::NAME,
            Self::Mc1x1(_) => mc1x1::NAME,
            Self::Mc(_) => mc::NAME,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match *self {
            Self::GenAlg(m) | Self::Mm(m) if m != Metric::L1 => write!(f, "[metric={}]", m.name()),
            Self::Mc1x1(o) | Self::Mc(o) if o != Outer::Shell => {
                write!(f, "[outer={}]", o.name())
            }
            _ => Ok(()),
        }
    }
}

/// The `metric` parameter of `gen-alg` and `mm`.
const METRIC_PARAM: ParamInfo = ParamInfo {
    name: "metric",
    default: "l1",
    doc: "l1 or linf: the distance the nearest nodes and the pairwise sum are measured in",
};

/// The `outer` parameter of `mc1x1` and `mc`.
const OUTER_PARAM: ParamInfo = ParamInfo {
    name: "outer",
    default: "shell",
    doc: "shell (the outermost shell needed, as the paper's cost requires) or premas (any node outside the inner shells, as PReMAS)",
};

fn metric_param(spec: &StrategySpec) -> Result<Metric, BuildError> {
    Ok(spec.choice(
        METRIC_PARAM.name,
        &[("l1", Metric::L1), ("linf", Metric::LInf)],
    )?)
}

fn outer_param(spec: &StrategySpec) -> Result<Outer, BuildError> {
    Ok(spec.choice(
        OUTER_PARAM.name,
        &[("shell", Outer::Shell), ("premas", Outer::Premas)],
    )?)
}

fn l1(a: Point, b: Point) -> u32 {
    a[0].abs_diff(b[0]) + a[1].abs_diff(b[1]) + a[2].abs_diff(b[2])
}

fn linf(a: Point, b: Point) -> u32 {
    a[0].abs_diff(b[0])
        .max(a[1].abs_diff(b[1]))
        .max(a[2].abs_diff(b[2]))
}

/// The machine and the buffers every search reuses, so an allocation
/// allocates nothing beyond its grant once they have grown.
#[derive(Debug, Clone)]
struct Search {
    /// The mesh's dimensions (1 to 3) and sides, padded with 1.
    dims: usize,
    sides: [u32; 3],
    /// Coordinates by node id.
    points: Box<[Point]>,
    /// The free nodes in PReMAS's order (x slowest, then y, then z).
    free: Vec<NodeId>,
    /// The candidate centers, in the order they are tried.
    centers: Vec<Point>,
    /// The array the nearest search sorts in place, center after center.
    order: Vec<NodeId>,
    /// Sort scratch: the sorted copy, the keys by position, key counts.
    spare: Vec<NodeId>,
    keys: Vec<u32>,
    counts: Vec<u32>,
    /// Per-dimension counts of coordinate values (pairwise L1 sums and
    /// distance sums to a group).
    tally: [Vec<u64>; 3],
    /// Greedy outer-shell choice: its candidates.
    cands: Vec<Cand>,
    /// The set being built for one center and the best one so far.
    group: Vec<NodeId>,
    best: Vec<NodeId>,
}

impl Search {
    fn new(dims: usize, sides: [u32; 3]) -> Self {
        let [nx, ny, nz] = sides;
        let mut points = Vec::with_capacity((nx * ny * nz) as usize);
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    points.push([x, y, z]);
                }
            }
        }
        Self {
            dims,
            sides,
            points: points.into_boxed_slice(),
            free: Vec::new(),
            centers: Vec::new(),
            order: Vec::new(),
            spare: Vec::new(),
            keys: Vec::new(),
            counts: Vec::new(),
            tally: sides.map(|s| vec![0; s as usize]),
            cands: Vec::new(),
            group: Vec::new(),
            best: Vec::new(),
        }
    }

    fn point(&self, node: NodeId) -> Point {
        self.points[node as usize]
    }

    fn id(&self, p: Point) -> NodeId {
        p[0] + self.sides[0] * (p[1] + self.sides[1] * p[2])
    }

    /// Lists the available nodes in PReMAS's order: x slowest, z fastest.
    fn load_free(&mut self, occupancy: &Occupancy) {
        let [nx, ny, nz] = self.sides;
        self.free.clear();
        for x in 0..nx {
            for y in 0..ny {
                for z in 0..nz {
                    let id = self.id([x, y, z]);
                    if occupancy.is_available(id) {
                        self.free.push(id);
                    }
                }
            }
        }
        self.order.clear();
        self.order.extend_from_slice(&self.free);
    }

    /// Sorts `order` stably by `key` (a counting sort: the same permutation
    /// as any stable sort, in O(n + largest key)).
    fn sort_by(&mut self, key: impl Fn(Point) -> u32) {
        self.keys.clear();
        let mut top = 0;
        for &v in &self.order {
            let k = key(self.points[v as usize]);
            top = top.max(k);
            self.keys.push(k);
        }
        self.counts.clear();
        self.counts.resize(top as usize + 2, 0);
        for &k in &self.keys {
            self.counts[k as usize + 1] += 1;
        }
        for i in 1..self.counts.len() {
            self.counts[i] += self.counts[i - 1];
        }
        self.spare.clear();
        self.spare.resize(self.order.len(), 0);
        for (&v, &k) in self.order.iter().zip(&self.keys) {
            let at = &mut self.counts[k as usize];
            self.spare[*at as usize] = v;
            *at += 1;
        }
        core::mem::swap(&mut self.order, &mut self.spare);
    }

    /// The sum of pairwise distances in `metric` of the first `k` nodes of
    /// `order`.
    fn pairwise(&mut self, metric: Metric, k: usize) -> u64 {
        match metric {
            Metric::L1 => {
                // Per dimension: Σ over value pairs of count·count·gap.
                let mut sum = 0;
                for d in 0..3 {
                    for &v in &self.order[..k] {
                        self.tally[d][self.points[v as usize][d] as usize] += 1;
                    }
                    let (mut below, mut below_sum) = (0u64, 0u64);
                    for (x, c) in self.tally[d].iter_mut().enumerate() {
                        let x = x as u64;
                        sum += *c * (x * below - below_sum);
                        below += *c;
                        below_sum += *c * x;
                        *c = 0;
                    }
                }
                sum
            }
            Metric::LInf => {
                let mut sum = 0;
                for (i, &a) in self.order[..k].iter().enumerate() {
                    let pa = self.points[a as usize];
                    for &b in &self.order[i + 1..k] {
                        sum += u64::from(linf(pa, self.points[b as usize]));
                    }
                }
                sum
            }
        }
    }

    /// Gen-Alg and MM once the centers are listed: for each center, sort
    /// the free nodes by distance to it and score the first `k` by their
    /// pairwise sum; the best set ends in `best`.
    fn nearest_by_pairwise(&mut self, metric: Metric, k: usize) {
        let mut best = u64::MAX;
        for i in 0..self.centers.len() {
            let c = self.centers[i];
            self.sort_by(|p| metric.distance(c, p));
            let score = self.pairwise(metric, k);
            if score < best {
                best = score;
                self.best.clear();
                self.best.extend_from_slice(&self.order[..k]);
            }
        }
    }

    /// MC1x1 and MC: for each free node as center and each box `shape`
    /// (in the order given), the shell numbers of the free nodes around
    /// the box centered there; the inner shells whole and the rest
    /// greedily (`outer`); the set of least total shell number ends in
    /// `best`.
    ///
    /// The nodes chosen for a center do not depend on any order of the
    /// free nodes (the inner shells are a set, the greedy breaks every tie
    /// by coordinates), so no sort is needed: a histogram of shell numbers
    /// gives the outermost shell needed and a lower bound of the cost (the
    /// inner shells plus the rest at the outermost shell's number, which is
    /// the cost itself with `outer=shell`). A center whose bound does not
    /// beat the best so far cannot win and is passed over.
    fn nearest_by_shells(&mut self, shapes: &[Point], outer: Outer, k: usize) {
        let mut best = u64::MAX;
        for i in 0..self.free.len() {
            let c = self.point(self.free[i]);
            for &shape in shapes {
                let mut top = 0;
                self.keys.clear();
                for &v in &self.free {
                    let s = shell_number(c, shape, self.points[v as usize]);
                    top = top.max(s);
                    self.keys.push(s);
                }
                self.counts.clear();
                self.counts.resize(top as usize + 1, 0);
                for &s in &self.keys {
                    self.counts[s as usize] += 1;
                }
                // The outermost shell needed, the nodes inside it and their cost.
                let (mut inner, mut inner_cost, mut last) = (0usize, 0u64, 0u32);
                for (s, &n) in self.counts.iter().enumerate() {
                    // Shell numbers are below the mesh's sides, which fit u32.
                    last = s as u32;
                    if inner + n as usize >= k {
                        break;
                    }
                    inner += n as usize;
                    inner_cost += u64::from(last) * u64::from(n);
                }
                let bound = inner_cost + (k - inner) as u64 * u64::from(last);
                if bound >= best {
                    continue;
                }
                self.greedy(c, last, outer, k);
                let score: u64 = self
                    .group
                    .iter()
                    .map(|&v| u64::from(shell_number(c, shape, self.points[v as usize])))
                    .sum();
                if score < best {
                    best = score;
                    self.best.clear();
                    self.best.extend_from_slice(&self.group);
                }
            }
        }
    }

    /// Fills `group` with the free nodes of shell number below `last`
    /// (`keys` holds each free node's) and then the `k − |group|` nodes
    /// chosen one at a time among those of shell `last` (with `outer=premas`,
    /// of shell `last` or more): least total L1 distance to the group so
    /// far, then least L1 distance to `center`, then lowest (x, y, z).
    fn greedy(&mut self, center: Point, last: u32, outer: Outer, k: usize) {
        self.group.clear();
        for (&v, &s) in self.free.iter().zip(&self.keys) {
            if s < last {
                self.group.push(v);
                for (t, &x) in self.tally.iter_mut().zip(&self.points[v as usize]) {
                    t[x as usize] += 1;
                }
            }
        }
        // Candidates with their distance sum to the inner shells (from the
        // per-dimension counts).
        self.cands.clear();
        for (&v, &s) in self.free.iter().zip(&self.keys) {
            if s == last || (s > last && outer == Outer::Premas) {
                let p = self.points[v as usize];
                let mut g = 0;
                for (tally, &pd) in self.tally.iter().zip(&p) {
                    for (x, &n) in tally.iter().enumerate() {
                        g += n * u64::from((x as u32).abs_diff(pd));
                    }
                }
                self.cands.push((g, l1(center, p), p[0], p[1], p[2], v));
            }
        }
        for t in &mut self.tally {
            t.iter_mut().for_each(|n| *n = 0);
        }
        let key = |c: &Cand| (c.0, c.1, c.2, c.3, c.4);
        let mut next = (0..self.cands.len()).min_by_key(|&i| key(&self.cands[i]));
        while self.group.len() < k {
            let Some(at) = next else { return };
            let picked = self.cands.swap_remove(at);
            self.group.push(picked.5);
            // Add the pick's distance to every other candidate and find the
            // next pick in the same pass.
            let p = [picked.2, picked.3, picked.4];
            next = None;
            for i in 0..self.cands.len() {
                let c = &mut self.cands[i];
                c.0 += u64::from(l1([c.2, c.3, c.4], p));
                if next.is_none_or(|j: usize| key(&self.cands[i]) < key(&self.cands[j])) {
                    next = Some(i);
                }
            }
        }
    }
}

/// A candidate of the greedy outer-shell choice: distance sum to the
/// group, L1 distance to the center, x, y, z, and the node.
type Cand = (u64, u32, u32, u32, u32, NodeId);

/// The shell of `p` around the box of sides `shape` centered on `c`: 0
/// inside the box, i on the ring of the box grown by i on every side. A
/// side s covers `c − ⌊(s−1)/2⌋ ..= c + ⌈(s−1)/2⌉` (an even side reaches
/// one further up than down). With a 1×1×1 shape this is the L∞ distance.
fn shell_number(c: Point, shape: Point, p: Point) -> u32 {
    let mut shell = 0;
    for d in 0..3 {
        let lo = i64::from(c[d]) - i64::from((shape[d] - 1) / 2);
        let hi = lo + i64::from(shape[d]) - 1;
        let x = i64::from(p[d]);
        // A gap of at most the mesh's side fits u32.
        let gap = (lo - x).max(x - hi).max(0) as u32;
        shell = shell.max(gap);
    }
    shell
}

/// A center-based nearest allocator: one [`Method`] on a mesh of one to
/// three dimensions.
///
/// ```
/// use partalloc_allocators::nearest::{Method, Metric, NearestAllocator};
/// use partalloc_allocators::{Allocator, Partition, Request};
/// let mut g = NearestAllocator::new("mesh:3x3".parse()?, Method::GenAlg(Metric::L1))?;
/// // A 2×2 square has the least pairwise L1 sum of four nodes (8). The
/// // first center whose four nearest form one is (2,0): the centers before
/// // it met ties at distance 2 that their predecessors' sorts had ordered
/// // the other way, and found T shapes (9) or worse.
/// let a = g.allocate(&Request::nodes(4))?;
/// assert_eq!(a.partition(), &Partition::Nodes(vec![1, 2, 4, 5]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct NearestAllocator {
    method: Method,
    /// Nodes of the machine.
    total: usize,
    search: Search,
}

impl NearestAllocator {
    /// `method` on a mesh of one to three dimensions.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] for any other machine.
    pub fn new(topology: Topology, method: Method) -> Result<Managed<Self>, BuildError> {
        let unsuitable = |reason: String| BuildError::UnsuitableTopology {
            strategy: method.name(),
            topology: topology.to_string(),
            reason,
        };
        let grid = match (&topology, topology.kind()) {
            (Topology::Grid(g), TopologyKind::Mesh) if g.dims() <= 3 => g,
            _ => {
                return Err(unsuitable(
                    "needs a mesh of 1 to 3 dimensions (no torus: the papers measure distance without wrap links)"
                        .to_owned(),
                ));
            }
        };
        if grid.num_nodes() > MAX_NEAREST_NODES {
            return Err(unsuitable(format!(
                "it has {} nodes; nearest allocation is quadratic in the free nodes and runs on at most {MAX_NEAREST_NODES}",
                grid.num_nodes()
            )));
        }
        let mut sides = [1u32; 3];
        sides[..grid.dims()].copy_from_slice(grid.sides().as_slice());
        let strategy = Self {
            total: grid.num_nodes(),
            search: Search::new(grid.dims(), sides),
            method,
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The method in use.
    #[must_use]
    pub fn method(&self) -> Method {
        self.method
    }

    /// The node count of a request this machine can ever serve, and the
    /// box shape MC reads from it.
    fn wanted(&self, request: &Request) -> Result<(usize, Point), AllocError> {
        let want = request.node_count();
        let total = self.total;
        let invalid = |reason: String| AllocError::Invalid {
            request: *request,
            reason,
        };
        if want == 0 || want > total as u64 {
            return Err(invalid(format!(
                "needs {want} nodes; the machine has {total}"
            )));
        }
        let mut shape = [1; 3];
        if let Request::Box { sides, .. } = request {
            let dims = self.search.dims;
            if sides.iter().skip(dims).any(|&s| s > 1) {
                return Err(invalid(format!(
                    "the box has more dimensions than the {dims}-D mesh"
                )));
            }
            let n = sides.len().min(dims);
            shape[..n].copy_from_slice(&sides.as_slice()[..n]);
        }
        // At most the machine's size, which fits usize.
        Ok((want as usize, shape))
    }

    /// Runs the method for `k` nodes on the current free nodes; the chosen
    /// nodes end in `search.best`.
    fn choose_in(&mut self, occupancy: &Occupancy, request: &Request, k: usize, shape: Point) {
        let s = &mut self.search;
        s.load_free(occupancy);
        s.best.clear();
        if k == s.free.len() {
            // PReMAS's shortcut: exactly enough free nodes, all of them.
            s.best.extend_from_slice(&s.free);
            return;
        }
        match self.method {
            Method::GenAlg(metric) => gen_alg::choose(s, metric, k),
            Method::Mm(metric) => mm::choose(s, metric, k),
            Method::Mc1x1(outer) => mc1x1::choose(s, outer, k),
            Method::Mc(outer) => {
                let rotate = matches!(request, Request::Box { rotate: true, .. });
                mc::choose(s, shape, rotate, outer, k);
            }
        }
    }
}

/// The distinct orientations of a box shape, the given one first (only
/// the given one without `rotate`;
/// turned only within the mesh's `dims` dimensions).
fn orientations(shape: Point, rotate: bool, dims: usize) -> Vec<Point> {
    let Ok(sides) = Coords::new(&shape[..dims.clamp(1, 3)]) else {
        return vec![shape];
    };
    if !rotate {
        return vec![shape];
    }
    Orientations::new(sides, OrientationOrder::Lexicographic)
        .map(|o| {
            let mut p = [1; 3];
            p[..o.len()].copy_from_slice(o.as_slice());
            p
        })
        .collect()
}

impl Strategy for NearestAllocator {
    type Record = Partition;

    fn name(&self) -> String {
        self.method.to_string()
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let (k, shape) = self.wanted(request)?;
        let occupancy = view.occupancy();
        if k > occupancy.free_count() {
            return Ok(None);
        }
        self.choose_in(occupancy, request, k, shape);
        let mut nodes = self.search.best.clone();
        nodes.sort_unstable();
        Ok(Some(Partition::Nodes(nodes)))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        // Every method grants whenever enough nodes are free.
        Ok(Some(
            self.wanted(request)?.0 <= view.occupancy().free_count(),
        ))
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        // On an empty machine the choice is one set: make it on a fresh copy.
        let (k, shape) = self.wanted(request)?;
        let mut fresh = self.clone();
        fresh.choose_in(&Occupancy::new(self.total), request, k, shape);
        let mut nodes = fresh.search.best;
        nodes.sort_unstable();
        Ok(vec![Partition::Nodes(nodes)])
    }
}
