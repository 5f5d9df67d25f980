//! `pod-free-list`: Kim & Yoon's Free Submesh List (the mesh version is
//! [`crate::mesh::Fsl`]) carried over to the static torus of a pod.
//!
//! The list holds the maximal free *cyclic* boxes of the pod: boxes that may
//! run across the torus edge (per dimension an arc `lo, lo+1, …, lo+len−1`
//! modulo the side), free of busy and faulty chips, and contained in no
//! other free cyclic box. An arc of the side's full length is a whole ring;
//! it is stored with `lo = 0`, so two boxes are equal exactly when they hold
//! the same chips.
//!
//! - **Order** (Definition 1): larger boxes first; among equal sizes the one
//!   closer to a cube first, measured by the longest minus the shortest
//!   extent (the paper's "closer to a square", generalized: ours); then
//!   (ours) the lowest base chip id, then the extents in reverse
//!   lexicographic order (dimension 0 first, longer first).
//! - **Candidates** (Fig. 6 step 1): every list member S that holds an
//!   orientation o of the shape (o_d ≤ the length of S's arc in d for every
//!   d) yields the placements of o at the corners of S: per dimension two
//!   positions, at the low end of S's arc and at its high end (`lo` and
//!   `lo + len − o_d`, modulo the side), so up to 2^dims corners. Ours: a
//!   dimension where S is a whole ring has no distinct ends; there the ring
//!   is cut at the pod's seam (between chips k−1 and 0) and the two
//!   positions are 0 and k − o_d, the corners the mesh strategy would use
//!   on the unwrapped pod. Every position of a ring leaves the same arc of
//!   k − o_d chips in S, so the cut only decides which position is tried.
//!   When several orientations fit in S, only those whose type reservation
//!   factor against S (the largest slab of S beside o, Fig. 6) is largest
//!   give candidates, as in the mesh strategy. Orientations are those of
//!   [`Orientations`](partalloc_topology::Orientations): the requested shape, and its permutations when the
//!   request or the pod allows rotation.
//! - **Elimination** (Fig. 6 step 2): against each list member in order,
//!   keep the candidates with the largest reservation factor; stop when one
//!   is left; then against the whole pod; then (ours) the lowest base chip
//!   id, then the earliest orientation in [`OrientationOrder::Sorted`](partalloc_topology::OrientationOrder::Sorted) order.
//! - **Reservation factor** (Definition 2) of a candidate C against a box T:
//!   the size of T if they do not meet; otherwise the size of the largest
//!   slab of T beside C, where a slab in dimension d is T with its arc in d
//!   replaced by one arc of T_d minus C_d. On a mesh these arcs are the parts
//!   left and right of C. Ours, on the torus: when T is a whole ring in d,
//!   the chips left and right of C join across the edge into one arc of
//!   k − c_d chips, and when C's arc crosses both ends of T's arc the one
//!   arc left between them counts once.
//! - **Update** (Fig. 6 step 3): every list member meeting the grant is
//!   replaced by its parts outside it — per dimension, each arc of S_d
//!   minus the grant's arc, the other arcs kept (on a torus S_d minus an arc
//!   is at most two arcs: the two sides of the grant, or the one arc left
//!   when the grant's arc covers S's ends, or the whole complement when S
//!   is a ring there) — and a part is kept unless a surviving member or
//!   another part contains it. A new fault is decomposed the same way as a
//!   1×…×1 grant.
//! - **Release and repair** (Fig. 8): the paper rebuilds the list from the
//!   whole pod by decomposing it for every allocated submesh. Here the
//!   blocked regions are the slices this list granted that are still
//!   wholly blocked, then the other blocked chips as runs along dimension
//!   0, and (beyond the paper, as `fsl`'s `dealloc=incremental`) only the
//!   boxes meeting the freed chips are recomputed — every stage keeps only
//!   the boxes that meet them — and they replace the old boxes they
//!   contain. That is the rebuilt list: a maximal free box that misses the
//!   freed chips was free, hence maximal, before. When chips were both
//!   freed and blocked since the list was last used, it is rebuilt whole.
//!
//! The choice of a slice updates the list at once (the allocator then
//! grants exactly that slice). Releases, faults and repairs reach the list
//! when the strategy is next asked for a slice: it compares the blocked
//! chips it was computed for with the allocator's, so they need no other
//! bookkeeping. The list always equals the set of maximal free cyclic
//! boxes (the tests compare it with a brute-force enumeration).
//! Recognition is complete: a free placement of an orientation lies in
//! some maximal free cyclic box, whose corners then give a free candidate,
//! so a request is refused only when no free placement exists, across the
//! edge included.
//!
//! Cost: the candidates and their factors take O(N_f² · 2^dims) per
//! allocation for N_f listed boxes, as in the mesh strategy; the update
//! after a release decomposes for every blocked region but keeps only the
//! few boxes that meet the freed chips.
//!
//! Catalogue requests, rotation, faults, grants and ring/line layouts are
//! those of the other static pod strategies ([`PodAllocator`]).
//!
//! ```
//! use partalloc_allocators::pod::PodAllocator;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::pod::{LinkKind, Pod};
//!
//! let pod: Pod = "4x4:wiring=static:shapes=1x1+2x2+4x2".parse()?;
//! let mut a = PodAllocator::free_list(pod);
//! let g = a.allocate(&Request::boxed(&[4, 2])?)?;
//! assert_eq!(a.layout(&g)?.links, vec![LinkKind::Ring, LinkKind::Line]);
//! // What is left is one box, a ring in dimension 0.
//! let list: Vec<String> = a.free_boxes().iter().map(ToString::to_string).collect();
//! assert_eq!(list, ["4x2 at 0,2"]);
//! // A 2x2 goes to the corner at the seam of that ring.
//! let h = a.allocate(&Request::boxed(&[2, 2])?)?;
//! let list: Vec<String> = a.free_boxes().iter().map(ToString::to_string).collect();
//! assert_eq!(list, ["2x2 at 2,2"]);
//! a.release(&h)?;
//! let list: Vec<String> = a.free_boxes().iter().map(ToString::to_string).collect();
//! assert_eq!(list, ["4x2 at 0,2"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(test)]
mod tests;

use core::cmp::Reverse;
use std::sync::Arc;

use partalloc_topology::pod::{Pod, PodSlice};
use partalloc_topology::{Coords, MAX_DIMS, NodeSet};

use super::{PodAllocator, PodPolicy, all_chips, orientations};

/// A cyclic box: per dimension the arc `lo … lo+len−1` modulo the side;
/// a whole ring has `lo == 0`. Unused dimensions hold zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CBox {
    pub(crate) lo: [u32; MAX_DIMS],
    pub(crate) len: [u32; MAX_DIMS],
}

impl CBox {
    /// The box with those arcs, whole rings normalized to `lo == 0`.
    pub(crate) fn new(k: &[u32], lo: &[u32], len: &[u32]) -> Self {
        let mut b = Self {
            lo: [0; MAX_DIMS],
            len: [0; MAX_DIMS],
        };
        for d in 0..k.len() {
            b.len[d] = len[d];
            b.lo[d] = if len[d] >= k[d] { 0 } else { lo[d] % k[d] };
        }
        b
    }

    /// The whole pod.
    fn whole(k: &[u32]) -> Self {
        Self::new(k, &[0; MAX_DIMS][..k.len()], k)
    }

    fn volume(&self, dims: usize) -> u64 {
        self.len[..dims].iter().map(|&l| u64::from(l)).product()
    }

    /// The chip id of the base corner (dimension 0 fastest).
    fn base_id(&self, k: &[u32]) -> u64 {
        let mut id = 0u64;
        for d in (0..k.len()).rev() {
            id = id * u64::from(k[d]) + u64::from(self.lo[d]);
        }
        id
    }

    fn contains(&self, k: &[u32], other: &Self) -> bool {
        (0..k.len())
            .all(|d| arc_contains(k[d], (self.lo[d], self.len[d]), (other.lo[d], other.len[d])))
    }

    fn meets(&self, k: &[u32], other: &Self) -> bool {
        (0..k.len())
            .all(|d| arc_meets(k[d], (self.lo[d], self.len[d]), (other.lo[d], other.len[d])))
    }

    /// Every chip free of `blocked`.
    fn is_free(&self, k: &[u32], blocked: &NodeSet) -> bool {
        let n = k.len();
        all_chips(k, &self.lo[..n], &self.len[..n], |c| !blocked.contains(c))
    }

    /// The slice with this base and extents.
    pub(crate) fn slice(&self, dims: usize) -> Option<PodSlice> {
        PodSlice::new(&self.lo[..dims], &self.len[..dims]).ok()
    }
}

/// Whether arc `a` holds every chip of arc `b` on a ring of `k` chips.
fn arc_contains(k: u32, a: (u32, u32), b: (u32, u32)) -> bool {
    a.1 >= k || (b.1 <= a.1 && (b.0 + k - a.0) % k + b.1 <= a.1)
}

/// Whether arcs `a` and `b` share a chip on a ring of `k` chips.
fn arc_meets(k: u32, a: (u32, u32), b: (u32, u32)) -> bool {
    a.1 >= k || b.1 >= k || (b.0 + k - a.0) % k < a.1 || (a.0 + k - b.0) % k < b.1
}

/// The chips of arc `s` outside arc `r` on a ring of `k` chips: at most two
/// arcs (`(lo, len)`, whole rings with `lo == 0`), the count in `.1`.
fn arc_minus(k: u32, s: (u32, u32), r: (u32, u32)) -> ([(u32, u32); 2], usize) {
    let mut out = [(0, 0); 2];
    if r.1 >= k {
        return (out, 0);
    }
    // The complement of r, one arc.
    let c = ((r.0 + r.1) % k, k - r.1);
    if s.1 >= k {
        out[0] = c;
        return (out, 1);
    }
    // s ∩ c, both proper arcs, in coordinates relative to s.0.
    let t = (c.0 + k - s.0) % k;
    let mut n = 0;
    if t + c.1 > k {
        // c runs past s.0: the part of c from s.0 on.
        let end = (t + c.1 - k).min(s.1);
        out[n] = (s.0, end);
        n += 1;
    }
    if t < s.1 {
        let end = (t + c.1).min(s.1);
        out[n] = ((s.0 + t) % k, end - t);
        n += 1;
    }
    (out, n)
}

/// rf(c, t), Definition 2 on the torus: the size of `t` if they do not meet,
/// else the largest slab of `t` beside `c` (see the module documentation).
fn rf(k: &[u32], c: &CBox, t: &CBox) -> u64 {
    let dims = k.len();
    let vol = t.volume(dims);
    if !c.meets(k, t) {
        return vol;
    }
    let mut best = 0u64;
    for (d, &kd) in k.iter().enumerate() {
        let cross = vol / u64::from(t.len[d]);
        let (arcs, n) = arc_minus(kd, (t.lo[d], t.len[d]), (c.lo[d], c.len[d]));
        for a in &arcs[..n] {
            best = best.max(u64::from(a.1) * cross);
        }
    }
    best
}

/// The type reservation factor of Fig. 6: the largest slab of `s` beside an
/// `o` box at its corner; `None` if `o` does not fit in `s`.
fn type_rf(dims: usize, s: &CBox, o: &[u32]) -> Option<u64> {
    let vol = s.volume(dims);
    (0..dims).all(|d| o[d] <= s.len[d]).then(|| {
        (0..dims)
            .map(|d| u64::from(s.len[d] - o[d]) * (vol / u64::from(s.len[d])))
            .max()
            .unwrap_or(0)
    })
}

/// Definition 1 and our tie-breaks (module documentation).
fn list_key(k: &[u32], b: &CBox) -> (Reverse<u64>, u32, u64, Reverse<[u32; MAX_DIMS]>) {
    let dims = k.len();
    let ext = &b.len[..dims];
    let spread = ext.iter().max().unwrap_or(&0) - ext.iter().min().unwrap_or(&0);
    (
        Reverse(b.volume(dims)),
        spread,
        b.base_id(k),
        Reverse(b.len),
    )
}

/// Replaces every box of `free` meeting `r` by its parts outside `r` that
/// no survivor or other part contains (Fig. 6 step 3). `free` stays the set
/// of maximal free cyclic boxes if it was and `r` is now blocked.
fn decompose(k: &[u32], free: &mut Vec<CBox>, r: &CBox, pieces: &mut Vec<CBox>) {
    pieces.clear();
    let mut i = 0;
    while i < free.len() {
        let s = free[i];
        if !s.meets(k, r) {
            i += 1;
            continue;
        }
        free.swap_remove(i);
        for (d, &kd) in k.iter().enumerate() {
            let (arcs, n) = arc_minus(kd, (s.lo[d], s.len[d]), (r.lo[d], r.len[d]));
            for a in &arcs[..n] {
                let mut p = s;
                p.lo[d] = a.0;
                p.len[d] = a.1;
                pieces.push(p);
            }
        }
    }
    let survivors = free.len();
    for (j, p) in pieces.iter().enumerate() {
        let covered = free[..survivors].iter().any(|s| s.contains(k, p))
            || pieces
                .iter()
                .enumerate()
                .any(|(q, o)| q != j && o.contains(k, p) && (q < j || o != p));
        if !covered {
            free.push(*p);
        }
    }
}

/// The coordinates of chip `id` (dimension 0 fastest).
fn coords_of(k: &[u32], id: u32) -> [u32; MAX_DIMS] {
    let mut c = [0u32; MAX_DIMS];
    let mut rest = id;
    for d in 0..k.len() {
        c[d] = rest % k[d];
        rest /= k[d];
    }
    c
}

/// The chips of `set` as runs along dimension 0, in chip order.
fn runs(k: &[u32], set: &NodeSet) -> Vec<CBox> {
    let ones = [1u32; MAX_DIMS];
    let mut out = Vec::new();
    let mut it = set.iter().peekable();
    while let Some(first) = it.next() {
        let mut len = 1u32;
        while it.next_if(|&c| c == first + len && c % k[0] != 0).is_some() {
            len += 1;
        }
        let mut ext = ones;
        ext[0] = len;
        out.push(CBox::new(
            k,
            &coords_of(k, first)[..k.len()],
            &ext[..k.len()],
        ));
    }
    out
}

/// The free list of a [`PodAllocator`] running `pod-free-list`, and the
/// blocked chips it was computed for.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreeList {
    /// The maximal free cyclic boxes, in list order.
    boxes: Vec<CBox>,
    /// The blocked chips `boxes` reflects; `None` before the first build.
    seen: Option<NodeSet>,
    /// Slices this list granted: the first obstacles of a rebuild while
    /// every chip of theirs stays blocked.
    granted: Vec<CBox>,
    pieces: Vec<CBox>,
    cands: Vec<(CBox, usize)>,
    scores: Vec<u64>,
}

impl FreeList {
    /// Brings the list up to date with `blocked`: decomposition when chips
    /// were only added; when chips were only freed, the boxes meeting the
    /// freed chips are recomputed and replace the old ones they contain
    /// (the same list as a rebuild: a maximal free box missing the freed
    /// chips was free and maximal before); a rebuild otherwise.
    fn sync(&mut self, k: &[u32], blocked: &NodeSet) {
        let (mut added, mut removed) = (blocked.clone(), NodeSet::new(blocked.universe()));
        match &self.seen {
            Some(s) if s == blocked => return,
            Some(s) => {
                added.difference_with(s);
                removed.clone_from(s);
                removed.difference_with(blocked);
            }
            None => removed = blocked.clone(),
        }
        if self.seen.is_some() && removed.is_empty() {
            for r in runs(k, &added) {
                decompose(k, &mut self.boxes, &r, &mut self.pieces);
            }
        } else if self.seen.is_some() && added.is_empty() {
            let freed = runs(k, &removed);
            let mut near = Vec::new();
            self.obstacles(k, blocked, &mut near, &freed);
            self.boxes
                .retain(|m| !near.iter().any(|n| n.contains(k, m)));
            self.boxes.extend_from_slice(&near);
        } else {
            let mut all = Vec::new();
            self.obstacles(k, blocked, &mut all, &[]);
            self.boxes = all;
        }
        self.boxes.sort_unstable_by_key(|b| list_key(k, b));
        self.seen = Some(blocked.clone());
    }

    /// Fig. 8's rebuild into `out`: the whole pod decomposed for every
    /// blocked region — the slices this list granted that are still wholly
    /// blocked, then the other blocked chips as runs along dimension 0.
    /// With `near` non-empty, only the boxes meeting one of its boxes are
    /// kept at every stage (a box meeting them has every containing box
    /// meet them too, so none is lost).
    fn obstacles(&mut self, k: &[u32], blocked: &NodeSet, out: &mut Vec<CBox>, near: &[CBox]) {
        let n = k.len();
        out.clear();
        out.push(CBox::whole(k));
        self.granted
            .retain(|g| all_chips(k, &g.lo[..n], &g.len[..n], |c| blocked.contains(c)));
        let mut rest = blocked.clone();
        for g in &self.granted {
            all_chips(k, &g.lo[..n], &g.len[..n], |c| {
                let _ = rest.remove(c);
                true
            });
        }
        for r in self.granted.iter().copied().chain(runs(k, &rest)) {
            decompose(k, out, &r, &mut self.pieces);
            if !near.is_empty() {
                out.retain(|b| near.iter().any(|f| f.meets(k, b)));
            }
        }
    }

    /// Fig. 6 steps 1 and 2 on the list: the chosen box and orientation.
    fn choose(&mut self, k: &[u32], orients: &[Coords]) -> Option<CBox> {
        let dims = k.len();
        self.cands.clear();
        for s in &self.boxes {
            let Some(top) = orients
                .iter()
                .filter_map(|o| type_rf(dims, s, o.as_slice()))
                .max()
            else {
                continue;
            };
            for (oi, o) in orients.iter().enumerate() {
                if type_rf(dims, s, o.as_slice()) != Some(top) {
                    continue;
                }
                // Two positions per dimension: the ends of S's arc, or the
                // seam's two sides when S is a ring there.
                let mut pos = [[0u32; 2]; MAX_DIMS];
                for d in 0..dims {
                    pos[d] = if s.len[d] >= k[d] {
                        [0, k[d] - o[d]]
                    } else {
                        [s.lo[d], (s.lo[d] + s.len[d] - o[d]) % k[d]]
                    };
                }
                for corner in 0..(1usize << dims) {
                    let mut lo = [0u32; MAX_DIMS];
                    for d in 0..dims {
                        lo[d] = pos[d][corner >> d & 1];
                    }
                    self.cands
                        .push((CBox::new(k, &lo[..dims], o.as_slice()), oi));
                }
            }
        }
        self.cands
            .sort_unstable_by_key(|(c, oi)| (c.base_id(k), *oi, c.len));
        self.cands.dedup();
        // Each factor computed once: kept in `scores`, then the candidates
        // with the top one compacted in place, in order.
        let mut scores = core::mem::take(&mut self.scores);
        let mut keep_best = |cands: &mut Vec<(CBox, usize)>, against: &CBox| {
            scores.clear();
            scores.extend(cands.iter().map(|(c, _)| rf(k, c, against)));
            let top = scores.iter().copied().max().unwrap_or(0);
            let mut w = 0;
            for r in 0..cands.len() {
                if scores[r] == top {
                    cands[w] = cands[r];
                    w += 1;
                }
            }
            cands.truncate(w);
        };
        for s in &self.boxes {
            if self.cands.len() <= 1 {
                break;
            }
            keep_best(&mut self.cands, s);
        }
        if self.cands.len() > 1 {
            keep_best(&mut self.cands, &CBox::whole(k));
        }
        self.scores = scores;
        self.cands.first().map(|&(c, _)| c)
    }

    /// Fig. 6 step 3 for a box about to be granted.
    fn grant(&mut self, k: &[u32], g: &CBox) {
        decompose(k, &mut self.boxes, g, &mut self.pieces);
        self.boxes.sort_unstable_by_key(|b| list_key(k, b));
        if let Some(seen) = &mut self.seen {
            let n = k.len();
            all_chips(k, &g.lo[..n], &g.len[..n], |c| {
                let _ = seen.insert(c);
                true
            });
        }
        self.granted.push(*g);
    }
}

impl PodAllocator {
    /// The free-list strategy (`pod-free-list`, module
    /// [`free_list`](self)): Kim & Yoon's Free Submesh List on the static
    /// torus (the pod's wiring is not checked, as for
    /// [`first_fit`](Self::first_fit)).
    #[must_use]
    pub fn free_list(pod: impl Into<Arc<Pod>>) -> Self {
        Self::with(pod.into(), PodPolicy::FreeList)
    }

    /// The maximal free cyclic boxes of the pod now, in free-list order (the
    /// list `pod-free-list` chooses from; computed from the busy and faulty
    /// chips for the other strategies).
    #[must_use]
    pub fn free_boxes(&self) -> Vec<PodSlice> {
        let k = *self.pod.grid().sides();
        let mut list = self.free_list.clone();
        list.sync(k.as_slice(), &self.blocked());
        list.boxes.iter().filter_map(|b| b.slice(k.len())).collect()
    }

    /// The free-list choice for a static request, committed to the list:
    /// the caller grants exactly this slice.
    pub(super) fn free_list_place(
        &mut self,
        shape: &Coords,
        rotate: bool,
    ) -> Option<(Coords, Coords)> {
        let k = *self.pod.grid().sides();
        let k = k.as_slice();
        let blocked = self.blocked();
        self.free_list.sync(k, &blocked);
        let mut orients = std::mem::take(&mut self.orients);
        orients.clear();
        orients.extend(orientations(shape, rotate, k));
        let c = self.free_list.choose(k, &orients);
        self.orients = orients;
        let c = c?;
        debug_assert!(c.is_free(k, &blocked));
        let dims = k.len();
        let place = (
            Coords::new(&c.lo[..dims]).ok()?,
            Coords::new(&c.len[..dims]).ok()?,
        );
        self.free_list.grant(k, &c);
        Some(place)
    }
}
