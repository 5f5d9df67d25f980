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

use std::sync::Arc;

use partalloc_topology::pod::{Pod, PodSlice};
use partalloc_topology::{Coords, MAX_DIMS, NodeSet};

use super::{PodAllocator, PodPolicy, orientations};
use crate::Occupancy;
use crate::strategy::Managed;
use crate::submesh_list::{Chooser, decompose, list_order, rebuild_into, replace_contained};

/// The whole pod as one slice (`None` only for sides no pod has).
fn whole(k: &[u32]) -> Option<PodSlice> {
    PodSlice::on_torus(k, &[0; MAX_DIMS][..k.len()], k).ok()
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
fn runs(k: &[u32], set: &NodeSet) -> Vec<PodSlice> {
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
        // A run stays in its line, so it fits the pod.
        if let Ok(run) = PodSlice::on_torus(k, &coords_of(k, first)[..k.len()], &ext[..k.len()]) {
            out.push(run);
        }
    }
    out
}

/// The free list of a [`PodAllocator`] running `pod-free-list`, and the
/// blocked chips it was computed for.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreeList {
    /// The maximal free cyclic boxes, in list order.
    boxes: Vec<PodSlice>,
    /// The blocked chips `boxes` reflects; `None` before the first build.
    seen: Option<NodeSet>,
    /// Slices this list granted: the first obstacles of a rebuild while
    /// every chip of theirs stays blocked.
    granted: Vec<PodSlice>,
    pieces: Vec<PodSlice>,
    chooser: Chooser<PodSlice>,
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
            replace_contained(k, &mut self.boxes, &near);
        } else {
            let mut all = Vec::new();
            self.obstacles(k, blocked, &mut all, &[]);
            self.boxes = all;
        }
        self.boxes.sort_unstable_by(|a, b| list_order(k, a, b));
        self.seen = Some(blocked.clone());
    }

    /// Fig. 8's rebuild into `out`: the whole pod decomposed for every
    /// blocked region — the slices this list granted that are still wholly
    /// blocked, then the other blocked chips as runs along dimension 0.
    /// With `near` non-empty, only the boxes meeting one of its boxes are
    /// kept at every stage (a box meeting them has every containing box
    /// meet them too, so none is lost).
    fn obstacles(
        &mut self,
        k: &[u32],
        blocked: &NodeSet,
        out: &mut Vec<PodSlice>,
        near: &[PodSlice],
    ) {
        out.clear();
        let Some(whole) = whole(k) else { return };
        self.granted
            .retain(|g| g.all_chips(k, |c| blocked.contains(c)));
        let mut rest = blocked.clone();
        for g in &self.granted {
            g.all_chips(k, |c| {
                let _ = rest.remove(c);
                true
            });
        }
        let obstacles = self.granted.iter().copied().chain(runs(k, &rest));
        rebuild_into(k, whole, obstacles, near, out, &mut self.pieces);
    }

    /// Fig. 6 steps 1 and 2 on the list: the chosen slice.
    fn choose(&mut self, k: &[u32], orients: &[Coords]) -> Option<PodSlice> {
        let whole = whole(k)?;
        self.chooser
            .choose(k, &self.boxes, orients, &whole)
            .map(|(c, _)| c)
    }

    /// Fig. 6 step 3 for a box about to be granted.
    fn grant(&mut self, k: &[u32], g: &PodSlice) {
        decompose(k, &mut self.boxes, g, &mut self.pieces);
        self.boxes.sort_unstable_by(|a, b| list_order(k, a, b));
        if let Some(seen) = &mut self.seen {
            g.all_chips(k, |c| {
                let _ = seen.insert(c);
                true
            });
        }
        self.granted.push(*g);
    }
}

impl Managed<PodAllocator> {
    /// The maximal free cyclic boxes of the pod now, in free-list order (the
    /// list `pod-free-list` chooses from; computed from the busy and faulty
    /// chips for the other strategies).
    #[must_use]
    pub fn free_boxes(&self) -> Vec<PodSlice> {
        self.strategy().free_boxes_under(self.view().occupancy())
    }
}

impl PodAllocator {
    /// The free-list strategy (`pod-free-list`, module
    /// [`free_list`](self)): Kim & Yoon's Free Submesh List on the static
    /// torus (the pod's wiring is not checked, as for
    /// [`first_fit`](Self::first_fit)).
    #[must_use]
    pub fn free_list(pod: impl Into<Arc<Pod>>) -> Managed<Self> {
        Self::with(pod.into(), PodPolicy::FreeList)
    }

    /// The maximal free cyclic boxes with `occupancy`'s blocked chips.
    fn free_boxes_under(&self, occupancy: &Occupancy) -> Vec<PodSlice> {
        let k = *self.pod.grid().sides();
        let mut list = self.free_list.clone();
        list.sync(k.as_slice(), occupancy.blocked());
        list.boxes
    }

    /// The free-list choice for a static request, committed to the list:
    /// the caller grants exactly this slice.
    pub(super) fn free_list_place(
        &mut self,
        occupancy: &Occupancy,
        shape: &Coords,
        rotate: bool,
    ) -> Option<(Coords, Coords)> {
        let k = *self.pod.grid().sides();
        let k = k.as_slice();
        let blocked = occupancy.blocked();
        self.free_list.sync(k, blocked);
        let mut orients = std::mem::take(&mut self.orients);
        orients.clear();
        orients.extend(orientations(shape, rotate, k));
        let c = self.free_list.choose(k, &orients);
        self.orients = orients;
        let c = c?;
        debug_assert!(c.all_chips(k, |chip| !blocked.contains(chip)));
        let place = (*c.base(), *c.extents());
        self.free_list.grant(k, &c);
        Some(place)
    }
}
