//! The exhaustive window search shared by Sniffing and ETC, in two exact
//! forms: the literal search (every node of every window checked, Kang §2's
//! O(k^n · l^m) per orientation) and a fast one that tests a whole row of
//! bases at once on bit words of the free nodes. Both scan
//! orientations in the same order and bases in node-id order, so they
//! choose the same box.

use partalloc_topology::{Coords, Grid, GridBox, MAX_DIMS, OrientationOrder, Orientations};

use super::box_sides;
use super::common::odometer;
use crate::BuildError;
use crate::entry::ParamInfo;
use crate::rowgrid::{RowGrid, SearchMode};
use crate::{AllocError, Occupancy, Partition, Request, View};

pub(crate) const SEARCH_PARAM: ParamInfo = ParamInfo {
    name: "search",
    default: "fast",
    doc: "fast (row bit words) or literal (check every node of every window); both choose the same box",
};

pub(crate) fn search_param(spec: &crate::StrategySpec) -> Result<SearchMode, BuildError> {
    Ok(spec.parse_or(SEARCH_PARAM.name, SearchMode::default())?)
}

/// Free nodes as bit words, one row of words per line along dimension 0
/// (⌈side 0 / 64⌉ words a row). A window test for a whole row of bases is
/// a few word operations, so one orientation is searched in
/// O(rows · words per row · (log s_0 + Σ_{i>0} s_i)) word operations with
/// early exits: no per-node work, whatever the machine's size.
#[derive(Debug, Clone)]
pub(crate) struct RowSearch {
    n: usize,
    sides: [u32; MAX_DIMS],
    /// Words per row.
    per_row: usize,
    free: RowGrid,
    work: Vec<u64>,
}

impl RowSearch {
    pub(crate) fn new(grid: &Grid) -> Self {
        let n = grid.dims();
        let mut sides = [1u32; MAX_DIMS];
        sides[..n].copy_from_slice(grid.sides());
        let k0 = sides[0] as usize;
        let per_row = k0.div_ceil(64);
        let words = grid.num_nodes() / k0 * per_row;
        Self {
            n,
            sides,
            per_row,
            free: RowGrid::default(),
            work: vec![0; words],
        }
    }

    pub(crate) fn rebuild(&mut self, occ: &Occupancy) {
        self.free.load_free(occ.blocked(), self.sides[0] as usize);
    }

    /// The first all-free base (node-id order) for extents `ext`.
    pub(crate) fn first(&mut self, ext: &[u32]) -> Option<[u32; MAX_DIMS]> {
        let n = self.n;
        let w = self.per_row;
        let s0 = ext[0] as usize;
        self.work.copy_from_slice(self.free.words());
        // Runs of s0 free nodes along dimension 0: bit b of a row stays set
        // while b..b+t are all free, t doubling (at most) each step.
        for row in self.work.chunks_exact_mut(w) {
            let mut t = 1;
            while t < s0 && row.iter().any(|&x| x != 0) {
                let step = t.min(s0 - t);
                and_shifted(row, step);
                t += step;
            }
        }
        // Windows along dimensions 1.., in place (row i only reads rows ≥ i).
        let mut stride = 1usize;
        for (d, &e) in ext.iter().enumerate().take(n).skip(1) {
            let side = self.sides[d] as usize;
            let s = e as usize;
            let rows = self.work.len() / w;
            for i in 0..rows {
                let coord = (i / stride) % side;
                if coord + s > side {
                    self.work[i * w..(i + 1) * w].fill(0);
                    continue;
                }
                for t in 1..s {
                    let other = (i + t * stride) * w;
                    let mut any = 0;
                    for j in 0..w {
                        self.work[i * w + j] &= self.work[other + j];
                        any |= self.work[i * w + j];
                    }
                    if any == 0 {
                        break;
                    }
                }
            }
            stride *= side;
        }
        let (p, &word) = self.work.iter().enumerate().find(|&(_, &x)| x != 0)?;
        let mut base = [0u32; MAX_DIMS];
        // Below side 0, which is a u32.
        base[0] = ((p % w) * 64) as u32 + word.trailing_zeros();
        let mut r = p / w;
        for (d, b) in base.iter_mut().enumerate().take(n).skip(1) {
            let side = self.sides[d] as usize;
            *b = (r % side) as u32;
            r /= side;
        }
        Some(base)
    }
}

/// `row &= row >> k` on a multi-word bit row (bit 0 of word 0 first; bits
/// shifted in from past the row are clear).
fn and_shifted(row: &mut [u64], k: usize) {
    let (q, r) = (k / 64, k % 64);
    // Word j reads words j + q and j + q + 1, not yet changed.
    for j in 0..row.len() {
        let lo = row.get(j + q).copied().unwrap_or(0);
        let shifted = if r == 0 {
            lo
        } else {
            (lo >> r) | (row.get(j + q + 1).copied().unwrap_or(0) << (64 - r))
        };
        row[j] &= shifted;
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
    pub(crate) grid: Grid,
    pub(crate) mode: SearchMode,
    rows: RowSearch,
    /// The generation of the view `rows` was loaded from.
    loaded: Option<u64>,
}

impl JobSearch {
    pub(crate) fn new(grid: Grid, mode: SearchMode) -> Self {
        Self {
            rows: RowSearch::new(&grid),
            grid,
            mode,
            loaded: None,
        }
    }

    fn window_free_literal(&self, occ: &Occupancy, base: &[u32], ext: &[u32]) -> bool {
        // Every node is checked, as in the paper's complexity analysis.
        let mut busy = 0u64;
        if let Ok(b) = GridBox::new(base, ext)
            && let Ok(it) = self.grid.box_nodes(&b)
        {
            for nd in it {
                if !occ.is_available(nd) {
                    busy += 1;
                }
            }
        }
        busy == 0
    }

    /// The first free box in the strategy's order.
    pub(crate) fn search(&mut self, view: &View<'_>, sides: &[u32], all: bool) -> Option<GridBox> {
        let occ = view.occupancy();
        if self.mode == SearchMode::Fast {
            if self.loaded != Some(view.generation()) {
                self.rows.rebuild(occ);
                self.loaded = Some(view.generation());
            }
            let n = sides.len();
            let gs = self.grid.sides();
            let rows = &mut self.rows;
            return for_orientations(sides, all, |ext| {
                if ext.iter().zip(gs.iter()).any(|(e, g)| e > g) {
                    return None;
                }
                rows.first(ext)
                    .and_then(|b| GridBox::new(&b[..n], ext).ok())
            });
        }
        let this = &*self;
        for_orientations(sides, all, |ext| {
            scan_bases(&this.grid, ext, |b| this.window_free_literal(occ, b, ext))
        })
    }

    /// The box to grant for `request` (every orientation if `all` and
    /// the request may rotate), or None if none is free.
    pub(crate) fn choose(
        &mut self,
        strategy: &'static str,
        view: &View<'_>,
        request: &Request,
        all: bool,
    ) -> Result<Option<Partition>, AllocError> {
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
                    view.topology()
                ),
            });
        }
        let mut s = [0u32; MAX_DIMS];
        s[..sides.len()].copy_from_slice(sides);
        Ok(self
            .search(view, &s[..sides.len()], all)
            .map(Partition::Box))
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
