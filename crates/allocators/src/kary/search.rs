//! The exhaustive window search shared by Sniffing and ETC, in two exact
//! forms: the literal search (every node of every window checked, Kang §2's
//! O(k^n · l^m) per orientation) and a fast one that answers each window in
//! O(2^n) from N-dimensional prefix sums of the unavailable nodes. Both scan
//! orientations in the same order and bases in node-id order, so they
//! choose the same box.

use core::fmt;
use core::str::FromStr;

use partalloc_topology::{
    Coords, Grid, GridBox, MAX_DIMS, NodeId, OrientationOrder, Orientations, Topology,
};

use super::box_sides;
use super::common::odometer;
use crate::registry::{BuildError, ParamInfo};
use crate::{
    AllocError, FaultError, Grant, GrantLedger, Occupancy, Partition, ReleaseError, Request,
};

/// How a job-based search checks windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SearchMode {
    /// Row bit words (or N-dimensional prefix sums when dimension 0 is
    /// longer than 64).
    #[default]
    Fast,
    /// Every node of every window, as analysed by Kang (§2).
    Literal,
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Fast => "fast",
            Self::Literal => "literal",
        })
    }
}

impl FromStr for SearchMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fast" => Ok(Self::Fast),
            "literal" => Ok(Self::Literal),
            _ => Err("expected fast or literal".to_owned()),
        }
    }
}

pub(crate) const SEARCH_PARAM: ParamInfo = ParamInfo {
    name: "search",
    default: "fast",
    doc: "fast (row bit words / N-D prefix sums) or literal (check every node of every window); both choose the same box",
};

pub(crate) fn search_param(spec: &crate::StrategySpec) -> Result<SearchMode, BuildError> {
    Ok(spec.parse_or(SEARCH_PARAM.name, SearchMode::default())?)
}

/// Counts of unavailable nodes over every origin-anchored box: entry
/// p holds the number of unavailable nodes with coordinates < p.
#[derive(Debug, Clone)]
pub(crate) struct PrefixSums {
    n: usize,
    sides: [u32; MAX_DIMS],
    strides: [usize; MAX_DIMS],
    sums: Vec<u32>,
}

impl PrefixSums {
    pub(crate) fn new(grid: &Grid) -> Self {
        let n = grid.dims();
        let mut sides = [1u32; MAX_DIMS];
        let mut strides = [0usize; MAX_DIMS];
        let mut len = 1usize;
        for i in 0..n {
            sides[i] = grid.sides()[i];
            strides[i] = len;
            len *= sides[i] as usize + 1;
        }
        Self {
            n,
            sides,
            strides,
            sums: vec![0; len],
        }
    }

    pub(crate) fn rebuild(&mut self, occ: &Occupancy) {
        self.sums.fill(0);
        let n = self.n;
        let mut c = [0u32; MAX_DIMS];
        let nodes = occ.len();
        for id in 0..nodes {
            if !occ.is_available(id as NodeId) {
                let p: usize = c[..n]
                    .iter()
                    .zip(&self.strides[..n])
                    .map(|(&ci, &st)| (ci as usize + 1) * st)
                    .sum();
                self.sums[p] = 1;
            }
            odometer(&mut c[..n], &self.sides[..n]);
        }
        for d in 0..n {
            let stride = self.strides[d];
            let ext = self.sides[d] as usize + 1;
            for idx in 0..self.sums.len() {
                if !(idx / stride).is_multiple_of(ext) {
                    self.sums[idx] += self.sums[idx - stride];
                }
            }
        }
    }

    /// Unavailable nodes in the box at `base` with extents `ext`.
    #[inline]
    pub(crate) fn box_sum(&self, base: &[u32], ext: &[u32]) -> i64 {
        let n = self.n;
        let mut total = 0i64;
        for mask in 0u32..(1 << n) {
            let mut p = 0;
            for i in 0..n {
                let v = if mask & (1 << i) != 0 {
                    base[i] + ext[i]
                } else {
                    base[i]
                };
                p += v as usize * self.strides[i];
            }
            let s = i64::from(self.sums[p]);
            if (n as u32 - mask.count_ones()).is_multiple_of(2) {
                total += s;
            } else {
                total -= s;
            }
        }
        total
    }
}

/// Free nodes as one word per row along dimension 0 (side ≤ 64): a window
/// test for a whole row of bases is a few word operations, so one
/// orientation is searched in O(rows · Σ s_i) with early exits.
#[derive(Debug, Clone)]
pub(crate) struct RowSearch {
    n: usize,
    sides: [u32; MAX_DIMS],
    free: Vec<u64>,
    work: Vec<u64>,
}

impl RowSearch {
    /// `None` if dimension 0 is longer than 64.
    pub(crate) fn new(grid: &Grid) -> Option<Self> {
        let n = grid.dims();
        if grid.sides()[0] > 64 {
            return None;
        }
        let mut sides = [1u32; MAX_DIMS];
        sides[..n].copy_from_slice(grid.sides());
        let rows = grid.num_nodes() / sides[0] as usize;
        Some(Self {
            n,
            sides,
            free: vec![0; rows],
            work: vec![0; rows],
        })
    }

    pub(crate) fn rebuild(&mut self, occ: &Occupancy) {
        let k0 = self.sides[0] as usize;
        let blocked = occ.blocked().words();
        let mask = if k0 == 64 { u64::MAX } else { (1u64 << k0) - 1 };
        let bits = |w: &[u64], lo: usize| -> u64 {
            let (i, off) = (lo / 64, lo % 64);
            let mut v = w.get(i).copied().unwrap_or(0) >> off;
            if off + k0 > 64 && off > 0 {
                v |= w.get(i + 1).copied().unwrap_or(0) << (64 - off);
            }
            v
        };
        for (r, f) in self.free.iter_mut().enumerate() {
            let lo = r * k0;
            *f = !bits(blocked, lo) & mask;
        }
    }

    /// The first all-free base (node-id order) for extents `ext`.
    pub(crate) fn first(&mut self, ext: &[u32]) -> Option<[u32; MAX_DIMS]> {
        let n = self.n;
        let s0 = ext[0];
        // Runs of s0 free nodes along dimension 0.
        for (w, &f) in self.work.iter_mut().zip(&self.free) {
            let mut r = f;
            let mut t = 1;
            while t < s0 && r != 0 {
                r &= f >> t;
                t += 1;
            }
            *w = r;
        }
        // Windows along dimensions 1.., in place (row i only reads rows ≥ i).
        let mut stride = 1usize;
        for (d, &e) in ext.iter().enumerate().take(n).skip(1) {
            let side = self.sides[d] as usize;
            let s = e as usize;
            let rows = self.work.len();
            for i in 0..rows {
                let coord = (i / stride) % side;
                if coord + s > side {
                    self.work[i] = 0;
                    continue;
                }
                let mut v = self.work[i];
                let mut t = 1;
                while t < s && v != 0 {
                    v &= self.work[i + t * stride];
                    t += 1;
                }
                self.work[i] = v;
            }
            stride *= side;
        }
        let (row, &w) = self.work.iter().enumerate().find(|&(_, &w)| w != 0)?;
        let mut base = [0u32; MAX_DIMS];
        base[0] = w.trailing_zeros();
        let mut r = row;
        for (d, b) in base.iter_mut().enumerate().take(n).skip(1) {
            let side = self.sides[d] as usize;
            *b = (r % side) as u32;
            r /= side;
        }
        Some(base)
    }
}

/// Calls `f` with each distinct orientation of `sides` (all of them, or
/// with `all == false` only the given one) until it returns `Some`: the
/// lexicographic order of the dimension permutation, identity first.
pub(crate) fn for_orientations<T>(
    sides: &[u32],
    all: bool,
    mut f: impl FnMut(&[u32]) -> Option<T>,
) -> Option<T> {
    let sides = Coords::new(sides).ok()?;
    Orientations::new(sides, OrientationOrder::Lexicographic)
        .take(if all { usize::MAX } else { 1 })
        .find_map(|o| f(&o))
}

/// Bases of an `ext` box in node-id order, until `f` returns true.
fn scan_bases(grid: &Grid, ext: &[u32], mut f: impl FnMut(&[u32]) -> bool) -> Option<GridBox> {
    let n = ext.len();
    let mut lim = [0u32; MAX_DIMS];
    for i in 0..n {
        let s = grid.sides()[i];
        if ext[i] > s {
            return None;
        }
        lim[i] = s - ext[i] + 1;
    }
    let mut b = [0u32; MAX_DIMS];
    let count: u64 = lim[..n].iter().map(|&l| u64::from(l)).product();
    for _ in 0..count {
        if f(&b[..n]) {
            return GridBox::new(&b[..n], ext).ok();
        }
        odometer(&mut b[..n], &lim[..n]);
    }
    None
}

/// The job-based search core shared by [`Sniffing`](super::Sniffing) and
/// [`Etc`](super::Etc).
#[derive(Debug, Clone)]
pub(crate) struct JobSearch {
    pub(crate) topology: Topology,
    pub(crate) grid: Grid,
    pub(crate) occ: Occupancy,
    pub(crate) ledger: GrantLedger<GridBox>,
    pub(crate) mode: SearchMode,
    // Built by the first search that needs it: a table of Π(side + 1)
    // counts that the row words and the literal mode never read.
    sums: Option<PrefixSums>,
    rows: Option<RowSearch>,
    dirty: bool,
}

impl JobSearch {
    pub(crate) fn new(topology: Topology, grid: Grid, mode: SearchMode) -> Self {
        Self {
            topology,
            occ: Occupancy::new(grid.num_nodes()),
            sums: None,
            rows: RowSearch::new(&grid),
            grid,
            ledger: GrantLedger::new(),
            mode,
            dirty: true,
        }
    }

    fn window_free_literal(&self, base: &[u32], ext: &[u32]) -> bool {
        // Every node is checked, as in the paper's complexity analysis.
        let mut busy = 0u64;
        if let Ok(b) = GridBox::new(base, ext)
            && let Ok(it) = self.grid.box_nodes(&b)
        {
            for nd in it {
                if !self.occ.is_available(nd) {
                    busy += 1;
                }
            }
        }
        busy == 0
    }

    /// The first free box in the strategy's order.
    pub(crate) fn search(&mut self, sides: &[u32], all: bool) -> Option<GridBox> {
        if self.mode == SearchMode::Fast {
            if let Some(rows) = self.rows.as_mut() {
                if self.dirty {
                    rows.rebuild(&self.occ);
                    self.dirty = false;
                }
                let n = sides.len();
                let gs = self.grid.sides();
                return for_orientations(sides, all, |ext| {
                    if ext.iter().zip(gs.iter()).any(|(e, g)| e > g) {
                        return None;
                    }
                    rows.first(ext)
                        .and_then(|b| GridBox::new(&b[..n], ext).ok())
                });
            }
            let grid = self.grid;
            let sums = self.sums.get_or_insert_with(|| PrefixSums::new(&grid));
            if self.dirty {
                sums.rebuild(&self.occ);
                self.dirty = false;
            }
        }
        let this = &*self;
        for_orientations(sides, all, |ext| {
            scan_bases(&this.grid, ext, |b| match this.mode {
                SearchMode::Fast => this.sums.as_ref().is_some_and(|s| s.box_sum(b, ext) == 0),
                SearchMode::Literal => this.window_free_literal(b, ext),
            })
        })
    }

    pub(crate) fn allocate(
        &mut self,
        strategy: &'static str,
        request: &Request,
        all: bool,
    ) -> Result<Grant, AllocError> {
        let (sides, rotate) = box_sides(strategy, &self.grid, request)?;
        let all = all && rotate;
        let fits = for_orientations(sides, all, |o| {
            o.iter()
                .zip(self.grid.sides().iter())
                .all(|(a, b)| a <= b)
                .then_some(())
        });
        if fits.is_none() {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "no orientation of the box fits the machine {}",
                    self.topology
                ),
            });
        }
        let mut s = [0u32; MAX_DIMS];
        s[..sides.len()].copy_from_slice(sides);
        let b = self
            .search(&s[..sides.len()], all)
            .ok_or(AllocError::NoRoom {
                request: *request,
                free: self.occ.free_count(),
                total: self.grid.num_nodes(),
            })?;
        if let Ok(it) = self.grid.box_nodes(&b) {
            self.occ.occupy(it);
        }
        self.dirty = true;
        let id = self.ledger.issue(b);
        Ok(Grant::new(id, Partition::Box(b), request.node_count()))
    }

    pub(crate) fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let b = self.ledger.take(grant.id())?;
        if let Ok(it) = self.grid.box_nodes(&b) {
            self.occ.vacate(it);
        }
        self.dirty = true;
        Ok(())
    }

    pub(crate) fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.grid.check_node(node)?;
        self.occ.mark_faulty(node)?;
        self.dirty = true;
        Ok(())
    }

    pub(crate) fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.grid.check_node(node)?;
        self.occ.repair(node)?;
        self.dirty = true;
        Ok(())
    }

    pub(crate) fn recognizable(
        &self,
        strategy: &'static str,
        request: &Request,
        all: bool,
    ) -> Result<Vec<Partition>, AllocError> {
        let (sides, rotate) = box_sides(strategy, &self.grid, request)?;
        let mut out = Vec::new();
        for_orientations(sides, all && rotate, |ext| {
            scan_bases(&self.grid, ext, |b| {
                if let Ok(bx) = GridBox::new(b, ext) {
                    out.push(Partition::Box(bx));
                }
                false
            });
            None::<()>
        });
        if out.is_empty() {
            return Err(AllocError::Invalid {
                request: *request,
                reason: "no orientation of the box fits the machine".to_owned(),
            });
        }
        Ok(out)
    }
}
