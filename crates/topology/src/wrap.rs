//! Wrap-aware box operations: [`PodSlice`], the box of a torus that may
//! run across the edge, met, contained, cut and walked on a torus of given
//! sides — the wrap-around counterparts of [`GridBox`](crate::GridBox)'s
//! operations.
//!
//! Along each dimension a slice covers an *arc* of the ring of `k` chips:
//! `lo, lo+1, …, lo+len−1` modulo `k`. An arc of `len = k` is the whole
//! ring. [`PodSlice::on_torus`] writes every arc in one form (`lo < k`, and
//! `lo = 0` for a whole ring), so two slices made by it are equal exactly
//! when they hold the same chips; the operations below return slices in
//! that form.

use crate::pod::PodSlice;
use crate::{Coords, MAX_DIMS, NodeId, TopologyError};

/// An arc of a ring: (first position, length); a whole ring has length ≥ k.
type Arc = (u32, u32);

/// Whether arc `a` holds every position of arc `b` on a ring of `k`.
#[inline]
fn arc_contains(k: u32, a: Arc, b: Arc) -> bool {
    a.1 >= k || (b.1 <= a.1 && (b.0 + k - a.0) % k + b.1 <= a.1)
}

/// Whether arcs `a` and `b` share a position on a ring of `k`.
#[inline]
fn arc_meets(k: u32, a: Arc, b: Arc) -> bool {
    a.1 >= k || b.1 >= k || (b.0 + k - a.0) % k < a.1 || (a.0 + k - b.0) % k < b.1
}

/// The positions of arc `s` outside arc `r` on a ring of `k`: at most two
/// arcs (the two sides of `r`, or the one arc left when `r` covers both
/// ends of `s`, or the whole complement of `r` when `s` is the ring), the
/// count in `.1`.
fn arc_minus(k: u32, s: Arc, r: Arc) -> ([Arc; 2], usize) {
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
    // s ∩ c, both proper arcs, in positions relative to s.0.
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

impl PodSlice {
    /// The slice of a torus of `sides` with that base and those extents,
    /// in the one form of the module documentation (base coordinates taken
    /// modulo the side, a whole ring based at 0).
    ///
    /// ```
    /// use partalloc_topology::pod::PodSlice;
    /// let s = PodSlice::on_torus(&[4, 4], &[6, 3], &[2, 4])?;
    /// assert_eq!(s.base().as_slice(), &[2, 0]);
    /// assert_eq!(s, PodSlice::on_torus(&[4, 4], &[2, 1], &[2, 4])?);
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    ///
    /// # Errors
    /// Lengths differing from `sides`', or an extent that is 0 or longer
    /// than its side.
    #[inline]
    pub fn on_torus(sides: &[u32], base: &[u32], extents: &[u32]) -> Result<Self, TopologyError> {
        let n = sides.len();
        if !(1..=MAX_DIMS).contains(&n) || base.len() != n || extents.len() != n {
            return Err(TopologyError::DimensionMismatch {
                expected: n,
                got: if base.len() == n {
                    extents.len()
                } else {
                    base.len()
                },
            });
        }
        let mut lanes = [[0u32; MAX_DIMS]; 2];
        for d in 0..n {
            let (k, e) = (sides[d], extents[d]);
            if e == 0 {
                return Err(TopologyError::ZeroSide { dim: d });
            }
            if e > k {
                return Err(TopologyError::CoordinateOutOfRange {
                    dim: d,
                    value: e,
                    side: k,
                });
            }
            lanes[0][d] = if e == k { 0 } else { base[d] % k };
            lanes[1][d] = e;
        }
        let [b, e] = lanes;
        Ok(Self::from_parts(
            Coords::from_lanes(n, b),
            Coords::from_lanes(n, e),
        ))
    }

    /// The arc along dimension `d`.
    #[inline]
    fn arc(&self, d: usize) -> Arc {
        (self.base().lanes()[d], self.extents().lanes()[d])
    }

    /// The dimensions both slices and `sides` have, or `None` when they
    /// differ.
    #[inline]
    fn shared_dims(&self, sides: &[u32], other: &PodSlice) -> Option<usize> {
        let n = sides.len();
        (self.base().len() == n && other.base().len() == n).then_some(n.min(MAX_DIMS))
    }

    /// Whether the two slices share a chip on a torus of `sides` (false on
    /// a dimension mismatch).
    ///
    /// ```
    /// use partalloc_topology::pod::PodSlice;
    /// let k = [8];
    /// let edge = PodSlice::on_torus(&k, &[6], &[4])?; // chips 6, 7, 0, 1
    /// assert!(edge.meets(&k, &PodSlice::on_torus(&k, &[1], &[1])?));
    /// assert!(!edge.meets(&k, &PodSlice::on_torus(&k, &[2], &[4])?));
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn meets(&self, sides: &[u32], other: &PodSlice) -> bool {
        self.shared_dims(sides, other)
            .is_some_and(|n| (0..n).all(|d| arc_meets(sides[d], self.arc(d), other.arc(d))))
    }

    /// Whether every chip of `other` lies in this slice on a torus of
    /// `sides` (false on a dimension mismatch).
    #[must_use]
    #[inline]
    pub fn contains_slice(&self, sides: &[u32], other: &PodSlice) -> bool {
        self.shared_dims(sides, other)
            .is_some_and(|n| (0..n).all(|d| arc_contains(sides[d], self.arc(d), other.arc(d))))
    }

    /// The number of chips in a slab of the slice one chip thick across
    /// dimension `d`: the product of the other extents (saturating).
    #[must_use]
    #[inline]
    pub fn cross_section(&self, d: usize) -> u64 {
        self.extents()
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != d)
            .fold(1u64, |acc, (_, &e)| acc.saturating_mul(u64::from(e)))
    }

    /// The maximal slices of this one that miss `hole` on a torus of
    /// `sides`: along each dimension in turn, the slice with its arc
    /// replaced by each arc of it outside the hole's arc (at most two).
    /// When the slices meet these are exactly the maximal slices of the
    /// difference; when they do not (or differ in dimensions), the slice
    /// itself is the only part.
    ///
    /// ```
    /// use partalloc_topology::pod::PodSlice;
    /// let k = [8, 2];
    /// let ring = PodSlice::on_torus(&k, &[0, 0], &[8, 2])?;
    /// let hole = PodSlice::on_torus(&k, &[7, 0], &[2, 1])?; // across the edge
    /// let parts: Vec<String> = ring.parts_outside(&k, &hole).map(|p| p.to_string()).collect();
    /// assert_eq!(parts, ["6x2 at 1,0", "8x1 at 0,1"]);
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    pub fn parts_outside<'a>(
        &'a self,
        sides: &'a [u32],
        hole: &'a PodSlice,
    ) -> impl Iterator<Item = PodSlice> + 'a {
        let meeting = self.meets(sides, hole);
        let dims = if meeting {
            sides.len().min(MAX_DIMS)
        } else {
            0
        };
        core::iter::once(*self)
            .filter(move |_| !meeting)
            .chain((0..dims).flat_map(move |d| {
                let (arcs, n) = arc_minus(sides[d], self.arc(d), hole.arc(d));
                arcs.into_iter().take(n).map(move |(lo, len)| {
                    let mut part = *self;
                    part.base_mut().lanes_mut()[d] = lo;
                    part.extents_mut().lanes_mut()[d] = len;
                    part
                })
            }))
    }

    /// The slices of `extents` inside this one at each of its 2^dims
    /// corners on a torus of `sides` (corner bit `d` set: flush with the
    /// high end of the arc along `d`), in corner order; none unless
    /// `extents` has the slice's dimensions and fits in it. Along a
    /// dimension where the slice is the whole ring, which has no ends, the
    /// ring is cut at the seam between chips k−1 and 0: the two positions
    /// are 0 and k − extent.
    ///
    /// ```
    /// use partalloc_topology::pod::PodSlice;
    /// let k = [8, 4];
    /// let s = PodSlice::on_torus(&k, &[6, 0], &[4, 4])?;
    /// let at: Vec<String> = s.corner_placements(&k, &[2, 2]).map(|p| p.to_string()).collect();
    /// assert_eq!(at, ["2x2 at 6,0", "2x2 at 0,0", "2x2 at 6,2", "2x2 at 0,2"]);
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    pub fn corner_placements<'a>(
        &'a self,
        sides: &'a [u32],
        extents: &'a [u32],
    ) -> impl Iterator<Item = PodSlice> + 'a {
        let n = sides.len();
        let fits = self.base().len() == n
            && extents.len() == n
            && (0..n).all(|d| (1..=self.extents()[d]).contains(&extents[d]));
        let corners = if fits { 1usize << n } else { 0 };
        let mut pos = [[0u32; 2]; MAX_DIMS];
        if fits {
            for d in 0..n {
                let (k, (lo, len), e) = (sides[d], self.arc(d), extents[d]);
                pos[d] = if len >= k {
                    [0, k - e]
                } else {
                    [lo, (lo + len - e) % k]
                };
            }
        }
        (0..corners).map(move |corner| {
            let mut at = *self;
            for (d, &e) in extents.iter().enumerate().take(MAX_DIMS) {
                let k = sides[d];
                at.base_mut().lanes_mut()[d] = if e >= k { 0 } else { pos[d][corner >> d & 1] };
                at.extents_mut().lanes_mut()[d] = e;
            }
            at
        })
    }

    /// Calls `f` with every chip of the slice on a torus of `sides`
    /// (offsets from the base, dimension 0 fastest, each coordinate taken
    /// modulo its side), without allocating; stops at the first call that
    /// returns false. Returns whether every call returned true (true for a
    /// slice whose dimensions differ from `sides`', which has no chips
    /// there).
    ///
    /// ```
    /// use partalloc_topology::pod::PodSlice;
    /// let s = PodSlice::new(&[3, 0], &[2, 2])?; // on a 4x4 torus
    /// let mut chips = Vec::new();
    /// assert!(s.all_chips(&[4, 4], |c| { chips.push(c); true }));
    /// assert_eq!(chips, [3, 0, 7, 4]);
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    pub fn all_chips(&self, sides: &[u32], f: impl FnMut(NodeId) -> bool) -> bool {
        Self::chips_of(sides, self.base().as_slice(), self.extents().as_slice(), f)
    }

    /// [`PodSlice::all_chips`] of the slice with this base and these
    /// extents, without building it: for hot loops over many candidate
    /// placements. Slices of other lengths than `sides` (or of more than
    /// [`MAX_DIMS`] dimensions) have no chips there: true, no call.
    ///
    /// ```
    /// use partalloc_topology::pod::PodSlice;
    /// let mut chips = Vec::new();
    /// assert!(PodSlice::chips_of(&[4, 4], &[3, 0], &[2, 2], |c| { chips.push(c); true }));
    /// assert_eq!(chips, [3, 0, 7, 4]);
    /// ```
    #[inline]
    pub fn chips_of(
        sides: &[u32],
        base: &[u32],
        ext: &[u32],
        mut f: impl FnMut(NodeId) -> bool,
    ) -> bool {
        let n = sides.len();
        if base.len() != n || ext.len() != n || n > MAX_DIMS || ext.contains(&0) {
            return true;
        }
        let mut off = [0u32; MAX_DIMS];
        loop {
            let mut id = 0u32;
            for d in (0..n).rev() {
                id = id * sides[d] + (base[d] + off[d]) % sides[d];
            }
            if !f(id) {
                return false;
            }
            let mut d = 0;
            loop {
                if d == n {
                    return true;
                }
                off[d] += 1;
                if off[d] < ext[d] {
                    break;
                }
                off[d] = 0;
                d += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn chips(s: &PodSlice, k: &[u32]) -> BTreeSet<NodeId> {
        let mut out = BTreeSet::new();
        s.all_chips(k, |c| {
            out.insert(c);
            true
        });
        out
    }

    /// A torus of up to three dimensions and two slices on it.
    fn two_slices() -> impl Strategy<Value = (Vec<u32>, PodSlice, PodSlice)> {
        prop::collection::vec(1u32..6, 1..=3).prop_flat_map(|k| {
            let slice = {
                let k = k.clone();
                k.iter()
                    .map(|&side| (0..side, 1..=side))
                    .collect::<Vec<_>>()
                    .prop_map(move |arcs| {
                        let (lo, len): (Vec<u32>, Vec<u32>) = arcs.into_iter().unzip();
                        PodSlice::on_torus(&k, &lo, &len).unwrap()
                    })
            };
            (Just(k), slice.clone(), slice)
        })
    }

    #[test]
    fn arcs_minus_an_arc_on_a_ring() {
        // Inside: two sides.
        assert_eq!(arc_minus(12, (0, 10), (3, 2)), ([(0, 3), (5, 5)], 2));
        // Across both ends of s: the middle once.
        assert_eq!(arc_minus(12, (0, 10), (8, 6)).0[0], (2, 6));
        assert_eq!(arc_minus(12, (0, 10), (8, 6)).1, 1);
        // A ring minus an arc: the complement, across the edge.
        assert_eq!(arc_minus(6, (0, 6), (1, 2)), ([(3, 4), (0, 0)], 1));
        // Covered: nothing.
        assert_eq!(arc_minus(6, (4, 3), (3, 5)).1, 0);
        assert_eq!(arc_minus(6, (4, 3), (0, 6)).1, 0);
    }

    #[test]
    fn one_form_per_chip_set() {
        let k = [4, 3];
        assert_eq!(
            PodSlice::on_torus(&k, &[5, 2], &[4, 1]).unwrap(),
            PodSlice::on_torus(&k, &[0, 2], &[4, 1]).unwrap()
        );
        assert!(PodSlice::on_torus(&k, &[0, 0], &[5, 1]).is_err());
        assert!(PodSlice::on_torus(&k, &[0, 0], &[0, 1]).is_err());
        assert!(PodSlice::on_torus(&k, &[0], &[1]).is_err());
    }

    proptest! {
        /// Meeting, containment and the parts outside agree with the chip
        /// sets: the parts are the maximal slices of the difference.
        #[test]
        fn operations_agree_with_the_chips((k, a, b) in two_slices()) {
            let (ca, cb) = (chips(&a, &k), chips(&b, &k));
            prop_assert_eq!(ca.len() as u64, a.volume());
            prop_assert_eq!(a.meets(&k, &b), !ca.is_disjoint(&cb));
            prop_assert_eq!(a.contains_slice(&k, &b), cb.is_subset(&ca));
            let parts: Vec<PodSlice> = a.parts_outside(&k, &b).collect();
            let mut covered = BTreeSet::new();
            for p in &parts {
                let cp = chips(p, &k);
                prop_assert!(cp.is_subset(&ca) && cp.is_disjoint(&cb));
                prop_assert_eq!(p, &PodSlice::on_torus(&k, p.base(), p.extents()).unwrap());
                covered.extend(cp);
            }
            let rest: BTreeSet<NodeId> = ca.difference(&cb).copied().collect();
            prop_assert_eq!(covered, rest);
            // Maximal: no part grows by one chip along any dimension and
            // stays outside the hole.
            for p in &parts {
                for d in 0..k.len() {
                    if p.extents()[d] < k[d] {
                        let mut len = *p.extents();
                        len[d] += 1;
                        for lo in [p.base()[d] + k[d] - 1, p.base()[d]] {
                            let mut base = *p.base();
                            base[d] = lo;
                            let g = PodSlice::on_torus(&k, &base, &len).unwrap();
                            let cg = chips(&g, &k);
                            prop_assert!(!(cg.is_subset(&ca) && cg.is_disjoint(&cb)));
                        }
                    }
                }
            }
        }

        /// Every corner placement lies in the slice, with the asked
        /// extents, in the one form.
        #[test]
        fn corners_lie_inside((k, a, b) in two_slices()) {
            let ext = b.extents();
            let corners: Vec<PodSlice> = a.corner_placements(&k, ext).collect();
            let fits = (0..k.len()).all(|d| ext[d] <= a.extents()[d]);
            prop_assert_eq!(corners.len(), if fits { 1 << k.len() } else { 0 });
            for c in &corners {
                prop_assert!(a.contains_slice(&k, c));
                prop_assert_eq!(c.extents(), ext);
                prop_assert_eq!(c, &PodSlice::on_torus(&k, c.base(), ext).unwrap());
            }
        }
    }
}
