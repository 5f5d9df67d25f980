//! The free-submesh-list logic of Kim & Yoon (§III, Figs. 6 and 8), once,
//! for boxes of a mesh ([`GridBox`], never wrapping: `fsl`, `fsl-3d`) and
//! of a torus ([`PodSlice`], wrapping across the edge: `pod-free-list`).
//!
//! - [`rf`]: the reservation factor of Definition 2 — the size of T when C
//!   misses it, else the size of the largest part of T outside C (a slab
//!   of T beside C).
//! - [`type_rf`]: Fig. 6 step 1's type reservation factor — the largest
//!   slab of S beside an o box at its corner, `None` if o does not fit.
//! - [`decompose`]: Fig. 6 step 3 — every listed box meeting a newly
//!   blocked box R is replaced by its maximal parts outside R, each kept
//!   unless a survivor or another part contains it.
//! - [`rebuild_into`] and [`replace_contained`]: Fig. 8's rebuild from the
//!   whole machine and the obstacles, optionally keeping only the boxes
//!   that meet freed ones (the incremental release).
//! - [`Chooser`]: Fig. 6 steps 1 and 2 — candidates at the corners of
//!   every listed box in its dominant orientations, then elimination by
//!   the largest reservation factor against each listed box in list order
//!   and then the whole machine; ties go to the lowest base id, then the
//!   earliest orientation.
//!
//! The box operations themselves (meeting, containment, parts outside,
//! corner placements) are the boxes' own, in `partalloc_topology`; the
//! [`ListBox`] trait only names them, with the machine's sides that a
//! wrapping box needs (a mesh box ignores them).

use partalloc_topology::pod::PodSlice;
use partalloc_topology::{GridBox, MAX_DIMS};

/// A box a free submesh list can hold; `sides` are the machine's.
pub(crate) trait ListBox: Copy + PartialEq {
    /// Number of dimensions.
    fn dims(&self) -> usize;
    /// The lowest coordinate (the base) along dimension `d`.
    fn lo(&self, d: usize) -> u32;
    /// The number of nodes along dimension `d`.
    fn extent(&self, d: usize) -> u32;
    /// Number of nodes.
    fn volume(&self) -> u64;
    /// The nodes of a slab one node thick across dimension `d`.
    fn cross_section(&self, d: usize) -> u64;
    /// Whether the boxes share a node.
    fn meets(&self, sides: &[u32], other: &Self) -> bool;
    /// Whether every node of `other` lies in this box.
    fn holds(&self, sides: &[u32], other: &Self) -> bool;
    /// The maximal boxes of this one outside `hole` (this box alone when
    /// they do not meet).
    fn parts_outside<'a>(
        &'a self,
        sides: &'a [u32],
        hole: &'a Self,
    ) -> impl Iterator<Item = Self> + 'a;
    /// The boxes of `extents` at this box's corners, in corner order.
    fn corner_placements<'a>(
        &'a self,
        sides: &'a [u32],
        extents: &'a [u32],
    ) -> impl Iterator<Item = Self> + 'a;
    /// The size of the largest part of this box outside `hole`, which it
    /// meets.
    fn largest_part_outside(&self, sides: &[u32], hole: &Self) -> u64 {
        self.parts_outside(sides, hole)
            .map(|p| p.volume())
            .max()
            .unwrap_or(0)
    }
    /// The node id of the base on a machine of `sides` (dimension 0
    /// fastest): the lowest address first.
    #[inline]
    fn base_id(&self, sides: &[u32]) -> u64 {
        (0..sides.len()).rev().fold(0u64, |id, d| {
            id * u64::from(sides[d]) + u64::from(self.lo(d))
        })
    }
}

impl ListBox for GridBox {
    #[inline]
    fn dims(&self) -> usize {
        GridBox::dims(self)
    }
    #[inline]
    fn lo(&self, d: usize) -> u32 {
        GridBox::lo(self, d)
    }
    #[inline]
    fn extent(&self, d: usize) -> u32 {
        GridBox::extent(self, d)
    }
    #[inline]
    fn volume(&self) -> u64 {
        GridBox::volume(self)
    }
    #[inline]
    fn cross_section(&self, d: usize) -> u64 {
        GridBox::cross_section(self, d)
    }
    #[inline(always)]
    fn meets(&self, _: &[u32], other: &Self) -> bool {
        self.overlaps(other)
    }
    #[inline(always)]
    fn holds(&self, _: &[u32], other: &Self) -> bool {
        self.contains_box(other)
    }
    fn parts_outside<'a>(
        &'a self,
        _: &'a [u32],
        hole: &'a Self,
    ) -> impl Iterator<Item = Self> + 'a {
        GridBox::parts_outside(self, hole)
    }
    fn corner_placements<'a>(
        &'a self,
        _: &'a [u32],
        extents: &'a [u32],
    ) -> impl Iterator<Item = Self> + 'a {
        GridBox::corner_placements(self, extents)
    }
    #[inline]
    fn base_id(&self, sides: &[u32]) -> u64 {
        if let [w, _] = *sides {
            // The 2-D meshes sort their lists by this, often.
            return u64::from(self.lo(0)) + u64::from(w) * u64::from(self.lo(1));
        }
        (0..sides.len()).rev().fold(0u64, |id, d| {
            id * u64::from(sides[d]) + u64::from(self.lo(d))
        })
    }
    #[inline]
    fn largest_part_outside(&self, _: &[u32], s: &Self) -> u64 {
        if s.dims() == 2 && self.dims() == 2 {
            // FSL's inner loop: the four slabs of Definition 2 directly.
            let (w, h) = (u64::from(self.extent(0)), u64::from(self.extent(1)));
            let slab = |below: u32, above: u32| u64::from(below.max(above));
            return (slab(
                s.lo(0).saturating_sub(self.lo(0)),
                self.hi(0).saturating_sub(s.hi(0)),
            ) * h)
                .max(
                    slab(
                        s.lo(1).saturating_sub(self.lo(1)),
                        self.hi(1).saturating_sub(s.hi(1)),
                    ) * w,
                );
        }
        let mut best = 0u64;
        for d in 0..self.dims() {
            let cross = self.cross_section(d);
            if s.lo(d) > self.lo(d) {
                best = best.max(u64::from(s.lo(d) - self.lo(d)) * cross);
            }
            if self.hi(d) > s.hi(d) {
                best = best.max(u64::from(self.hi(d) - s.hi(d)) * cross);
            }
        }
        best
    }
}

impl ListBox for PodSlice {
    #[inline]
    fn dims(&self) -> usize {
        self.base().len()
    }
    #[inline]
    fn lo(&self, d: usize) -> u32 {
        self.base().get(d).copied().unwrap_or(0)
    }
    #[inline]
    fn extent(&self, d: usize) -> u32 {
        self.extents().get(d).copied().unwrap_or(1)
    }
    #[inline]
    fn volume(&self) -> u64 {
        PodSlice::volume(self)
    }
    #[inline]
    fn cross_section(&self, d: usize) -> u64 {
        PodSlice::cross_section(self, d)
    }
    #[inline]
    fn meets(&self, sides: &[u32], other: &Self) -> bool {
        PodSlice::meets(self, sides, other)
    }
    #[inline]
    fn holds(&self, sides: &[u32], other: &Self) -> bool {
        self.contains_slice(sides, other)
    }
    fn parts_outside<'a>(
        &'a self,
        sides: &'a [u32],
        hole: &'a Self,
    ) -> impl Iterator<Item = Self> + 'a {
        PodSlice::parts_outside(self, sides, hole)
    }
    fn corner_placements<'a>(
        &'a self,
        sides: &'a [u32],
        extents: &'a [u32],
    ) -> impl Iterator<Item = Self> + 'a {
        PodSlice::corner_placements(self, sides, extents)
    }
}

/// The longest minus the shortest extent: how far from a cube.
#[inline]
fn spread<B: ListBox>(b: &B) -> u32 {
    let (lo, hi) = (0..b.dims())
        .map(|d| b.extent(d))
        .fold((u32::MAX, 0), |(lo, hi), e| (lo.min(e), hi.max(e)));
    hi.saturating_sub(lo)
}

/// Definition 1's list order, generalized (ours beyond two dimensions):
/// larger first; among equal sizes the one closer to a cube first,
/// measured by the longest minus the shortest extent (the paper's "closer
/// to a square"); then the lowest base id; then the longer extents first
/// (dimension 0 first). Each criterion is computed only on a tie of the
/// ones before.
#[inline]
pub(crate) fn list_order<B: ListBox>(sides: &[u32], a: &B, b: &B) -> core::cmp::Ordering {
    b.volume()
        .cmp(&a.volume())
        .then_with(|| spread(a).cmp(&spread(b)))
        .then_with(|| a.base_id(sides).cmp(&b.base_id(sides)))
        .then_with(|| {
            let ext = |x: &B| (0..x.dims()).map(|d| x.extent(d)).collect::<ExtentsKey>();
            ext(b).cmp(&ext(a))
        })
}

/// A box's extents, compared dimension 0 first (no allocation).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct ExtentsKey([u32; MAX_DIMS]);

impl FromIterator<u32> for ExtentsKey {
    fn from_iter<I: IntoIterator<Item = u32>>(it: I) -> Self {
        let mut k = [0u32; MAX_DIMS];
        for (slot, e) in k.iter_mut().zip(it) {
            *slot = e;
        }
        Self(k)
    }
}

/// rf(c, t), Definition 2: the size of `t` if `c` misses it, else the size
/// of the largest part of `t` outside `c` (a slab of `t` beside `c`).
#[inline]
pub(crate) fn rf<B: ListBox>(sides: &[u32], c: &B, t: &B) -> u64 {
    if c.meets(sides, t) {
        t.largest_part_outside(sides, c)
    } else {
        t.volume()
    }
}

/// The type reservation factor of Fig. 6 step 1: the largest slab of `s`
/// beside an `o` box at its corner; `None` if `o` does not fit in `s`.
pub(crate) fn type_rf<B: ListBox>(s: &B, o: &[u32]) -> Option<u64> {
    (o.len() == s.dims() && o.iter().enumerate().all(|(d, &e)| e <= s.extent(d))).then(|| {
        o.iter()
            .enumerate()
            .map(|(d, &e)| u64::from(s.extent(d) - e) * s.cross_section(d))
            .max()
            .unwrap_or(0)
    })
}

/// Replaces every box of `free` meeting `r` by its maximal parts outside
/// `r`, each kept unless a survivor or another part contains it; of equal
/// parts only the first is kept (Fig. 6 step 3). `free` stays the set of
/// maximal free boxes if it was and `r` is now blocked. The order of
/// `free` is left to the caller (it sorts the list).
pub(crate) fn decompose<B: ListBox>(sides: &[u32], free: &mut Vec<B>, r: &B, pieces: &mut Vec<B>) {
    pieces.clear();
    let mut i = 0;
    while i < free.len() {
        let s = free[i];
        if !s.meets(sides, r) {
            i += 1;
            continue;
        }
        free.swap_remove(i);
        for p in s.parts_outside(sides, r) {
            pieces.push(p);
        }
    }
    let survivors = free.len();
    for (j, p) in pieces.iter().enumerate() {
        // The few other parts first: they often cover it.
        let covered = pieces
            .iter()
            .enumerate()
            .any(|(q, o)| q != j && o.holds(sides, p) && (q < j || o != p))
            || free[..survivors].iter().any(|s| s.holds(sides, p));
        if !covered {
            free.push(*p);
        }
    }
}

/// Fig. 8's rebuild into `out`: `whole` decomposed for every obstacle in
/// turn. With `near` not empty only the boxes meeting one of `near` are
/// kept at every stage (a box meeting them has every box containing it
/// meet them too, so none of those is lost): the maximal free boxes that
/// meet `near`.
pub(crate) fn rebuild_into<B: ListBox>(
    sides: &[u32],
    whole: B,
    obstacles: impl IntoIterator<Item = B>,
    near: &[B],
    out: &mut Vec<B>,
    pieces: &mut Vec<B>,
) {
    out.clear();
    out.push(whole);
    for o in obstacles {
        decompose(sides, out, &o, pieces);
        if !near.is_empty() {
            out.retain(|b| near.iter().any(|n| n.meets(sides, b)));
        }
    }
}

/// The incremental release: the maximal free boxes `near` that meet the
/// freed nodes replace the listed boxes they contain. A listed box missing
/// the freed nodes was free, hence stays maximal unless one of `near`
/// contains it, so the result is the rebuilt list (unsorted).
pub(crate) fn replace_contained<B: ListBox>(sides: &[u32], free: &mut Vec<B>, near: &[B]) {
    free.retain(|m| !near.iter().any(|n| n.holds(sides, m)));
    free.extend_from_slice(near);
}

/// Fig. 6 steps 1 and 2, with buffers reused between requests.
#[derive(Debug, Clone)]
pub(crate) struct Chooser<B> {
    /// Candidates: base id (the sort key, computed once), the rank of
    /// the orientation, the box.
    cands: Vec<(u64, usize, B)>,
    /// Each candidate's factor against the box being eliminated against.
    scores: Vec<u64>,
}

impl<B> Default for Chooser<B> {
    fn default() -> Self {
        Self {
            cands: Vec::new(),
            scores: Vec::new(),
        }
    }
}

impl<B: ListBox> Chooser<B> {
    /// Step 1: the candidates at the corners of every box of `free` that
    /// holds one of `orients`, in the orientations whose type reservation
    /// factor against it is the largest; without repeats, by base id,
    /// then orientation rank.
    pub(crate) fn candidates<O: AsRef<[u32]>>(
        &mut self,
        sides: &[u32],
        free: &[B],
        orients: &[O],
    ) -> &[(u64, usize, B)] {
        self.cands.clear();
        for s in free {
            let Some(top) = orients.iter().filter_map(|o| type_rf(s, o.as_ref())).max() else {
                continue;
            };
            for (rank, o) in orients.iter().enumerate() {
                if type_rf(s, o.as_ref()) == Some(top) {
                    for c in s.corner_placements(sides, o.as_ref()) {
                        self.cands.push((c.base_id(sides), rank, c));
                    }
                }
            }
        }
        // Equal (base, rank) means equal boxes.
        self.cands.sort_unstable_by_key(|&(id, rank, _)| (id, rank));
        self.cands.dedup_by_key(|&mut (id, rank, _)| (id, rank));
        &self.cands
    }

    /// Steps 1 and 2: the chosen box and the rank of its orientation, or
    /// `None` when no box of `free` holds an orientation. Against each
    /// box of `free` in list order, then `whole`, only the candidates with
    /// the largest reservation factor stay, until one is left; then the
    /// first in candidate order.
    pub(crate) fn choose<O: AsRef<[u32]>>(
        &mut self,
        sides: &[u32],
        free: &[B],
        orients: &[O],
        whole: &B,
    ) -> Option<(B, usize)> {
        self.candidates(sides, free, orients);
        for against in free.iter().chain(core::iter::once(whole)) {
            if self.cands.len() <= 1 {
                break;
            }
            self.keep_best(sides, against);
        }
        self.cands.first().map(|&(_, rank, c)| (c, rank))
    }

    /// Keeps the candidates with the largest factor against `against`, in
    /// order; each factor computed once.
    fn keep_best(&mut self, sides: &[u32], against: &B) {
        let (cands, scores) = (&mut self.cands, &mut self.scores);
        scores.clear();
        scores.extend(cands.iter().map(|(_, _, c)| rf(sides, c, against)));
        let top = scores.iter().copied().max().unwrap_or(0);
        let mut w = 0;
        for r in 0..cands.len() {
            if scores[r] == top {
                cands[w] = cands[r];
                w += 1;
            }
        }
        cands.truncate(w);
    }
}
