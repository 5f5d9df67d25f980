//! Axis-aligned boxes (submeshes, subtori without wrap, k-ary subcubes).

use core::fmt;

use crate::{Coords, MAX_DIMS, TopologyError};

/// An axis-aligned box of a grid: a base corner and an extent per
/// dimension (dimension 0 first). Boxes never wrap around.
///
/// Kim & Yoon write a 2-D submesh as ⟨x1,y1⟩⟨x2,y2⟩ with inclusive
/// corners; [`GridBox::from_corners`] accepts that form and the `Display`
/// output uses it.
///
/// ```
/// use partalloc_topology::GridBox;
/// let a = GridBox::from_corners(&[0, 0], &[6, 4])?;
/// assert_eq!(a.extents().as_slice(), &[7, 5]);
/// assert_eq!(a.volume(), 35);
/// assert_eq!(a.to_string(), "⟨0,0⟩⟨6,4⟩");
/// let b = GridBox::new(&[4, 0], &[3, 10])?;
/// assert!(a.overlaps(&b));
/// assert_eq!(a.intersection(&b), Some(GridBox::new(&[4, 0], &[3, 5])?));
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "GridBoxRepr", try_from = "GridBoxRepr")
)]
pub struct GridBox {
    base: Coords,
    extents: Coords,
}

/// The serialized form of a [`GridBox`]; deserializing validates it like
/// [`GridBox::new`], so a file cannot produce a box with a zero extent.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct GridBoxRepr {
    base: Coords,
    extents: Coords,
}

#[cfg(feature = "serde")]
impl From<GridBox> for GridBoxRepr {
    fn from(b: GridBox) -> Self {
        Self {
            base: b.base,
            extents: b.extents,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<GridBoxRepr> for GridBox {
    type Error = TopologyError;
    fn try_from(r: GridBoxRepr) -> Result<Self, TopologyError> {
        Self::new(&r.base, &r.extents)
    }
}

impl GridBox {
    /// A box with lowest corner `base` and `extents` nodes per dimension.
    ///
    /// # Errors
    /// Empty or mismatched lengths, or a zero extent.
    #[inline]
    pub fn new(base: &[u32], extents: &[u32]) -> Result<Self, TopologyError> {
        // The common valid case without building an error on the way; the
        // mesh strategies create boxes on their hot paths.
        let n = base.len();
        if (1..=MAX_DIMS).contains(&n)
            && extents.len() == n
            && base
                .iter()
                .zip(extents)
                .all(|(&b, &e)| e > 0 && b.checked_add(e).is_some())
        {
            let mut lanes = [[0u32; MAX_DIMS]; 2];
            lanes[0][..n].copy_from_slice(base);
            lanes[1][..n].copy_from_slice(extents);
            let [b, e] = lanes;
            return Ok(Self::from_parts(
                Coords::from_lanes(n, b),
                Coords::from_lanes(n, e),
            ));
        }
        Self::new_checked(base, extents)
    }

    /// [`GridBox::new`] with every check in turn, naming the first that
    /// fails.
    #[cold]
    fn new_checked(base: &[u32], extents: &[u32]) -> Result<Self, TopologyError> {
        let base = Coords::new(base)?;
        let extents = Coords::new(extents)?;
        if base.len() != extents.len() {
            return Err(TopologyError::DimensionMismatch {
                expected: base.len(),
                got: extents.len(),
            });
        }
        if let Some(dim) = extents.iter().position(|&e| e == 0) {
            return Err(TopologyError::ZeroSide { dim });
        }
        if base
            .iter()
            .zip(extents.iter())
            .any(|(&b, &e)| b.checked_add(e).is_none())
        {
            return Err(TopologyError::BoxOutOfBounds {
                boxed: format!("base {base} extents {extents}"),
                sides: vec![u32::MAX; base.len()],
            });
        }
        Ok(Self { base, extents })
    }

    /// A box from its inclusive lowest and highest corners.
    ///
    /// # Errors
    /// As [`GridBox::new`], or a `hi` coordinate below `lo`.
    pub fn from_corners(lo: &[u32], hi: &[u32]) -> Result<Self, TopologyError> {
        if lo.len() != hi.len() {
            return Err(TopologyError::DimensionMismatch {
                expected: lo.len(),
                got: hi.len(),
            });
        }
        let mut ext = Coords::new(hi)?;
        for (dim, (e, &l)) in ext.iter_mut().zip(lo).enumerate() {
            if *e < l {
                return Err(TopologyError::CoordinateOutOfRange {
                    dim,
                    value: *e,
                    side: l,
                });
            }
            *e = *e - l + 1;
        }
        Self::new(lo, &ext)
    }

    /// Builds a box from parts already known to be valid.
    pub(crate) fn from_parts(base: Coords, extents: Coords) -> Self {
        Self { base, extents }
    }

    /// The lowest corner.
    #[must_use]
    #[inline]
    pub fn base(&self) -> &Coords {
        &self.base
    }

    /// The number of nodes along each dimension.
    #[must_use]
    #[inline]
    pub fn extents(&self) -> &Coords {
        &self.extents
    }

    /// The highest corner, inclusive.
    #[must_use]
    pub fn last(&self) -> Coords {
        let mut hi = self.base;
        for (h, &e) in hi.iter_mut().zip(self.extents.iter()) {
            *h += e - 1;
        }
        hi
    }

    /// Number of dimensions.
    #[must_use]
    #[inline]
    pub fn dims(&self) -> usize {
        self.base.len()
    }

    /// Number of nodes.
    #[must_use]
    #[inline]
    pub fn volume(&self) -> u64 {
        self.extents.product()
    }

    /// Whether the point lies in the box (false on a dimension mismatch).
    #[must_use]
    pub fn contains_point(&self, p: &[u32]) -> bool {
        p.len() == self.dims()
            && (0..self.dims())
                .all(|i| p[i] >= self.base[i] && p[i] - self.base[i] < self.extents[i])
    }

    /// Whether `other` lies entirely inside this box (false on a dimension
    /// mismatch).
    #[must_use]
    #[inline]
    pub fn contains_box(&self, other: &GridBox) -> bool {
        let n = self.dims();
        let (lo, ext) = (self.base.lanes(), self.extents.lanes());
        let (olo, oext) = (other.base.lanes(), other.extents.lanes());
        // base + extent never overflows: the constructors check it.
        // `&` rather than `&&`: the strategies' inner loops test many boxes
        // whose outcomes do not follow a pattern, and four comparisons
        // cost less than a mispredicted branch.
        let inside = |i: usize| (olo[i] >= lo[i]) & (olo[i] + oext[i] <= lo[i] + ext[i]);
        if other.dims() != n {
            return false;
        }
        // The 2-D meshes' strategies test containment in their inner
        // loops: a fixed pair of lanes compiles to four comparisons.
        if n == 2 {
            return inside(0) & inside(1);
        }
        // The bound MAX_DIMS spares the index checks.
        (0..n.min(MAX_DIMS)).all(inside)
    }

    /// Whether the two boxes share a node (false on a dimension mismatch).
    #[must_use]
    #[inline]
    pub fn overlaps(&self, other: &GridBox) -> bool {
        let n = self.dims();
        let (lo, ext) = (self.base.lanes(), self.extents.lanes());
        let (olo, oext) = (other.base.lanes(), other.extents.lanes());
        let meet = |i: usize| (lo[i] < olo[i] + oext[i]) & (olo[i] < lo[i] + ext[i]);
        if other.dims() != n {
            return false;
        }
        // As in `contains_box`: the 2-D case unrolled.
        if n == 2 {
            return meet(0) & meet(1);
        }
        (0..n.min(MAX_DIMS)).all(meet)
    }

    /// The lowest coordinate along dimension `d`; 0 from `dims()` on, as
    /// for the box extended by extent 1 into further dimensions (so a W×H
    /// box reads as the W×H×1 box at z = 0).
    #[must_use]
    #[inline]
    pub fn lo(&self, d: usize) -> u32 {
        self.base.lanes().get(d).copied().unwrap_or(0)
    }

    /// The number of nodes along dimension `d`; 1 from `dims()` on (see
    /// [`GridBox::lo`]).
    #[must_use]
    #[inline]
    pub fn extent(&self, d: usize) -> u32 {
        // Used extents are at least 1, unused lanes hold 0.
        self.extents.lanes().get(d).copied().unwrap_or(0).max(1)
    }

    /// The highest coordinate along dimension `d`, inclusive; 0 from
    /// `dims()` on (see [`GridBox::lo`]).
    #[must_use]
    #[inline]
    pub fn hi(&self, d: usize) -> u32 {
        self.lo(d) + self.extent(d) - 1
    }

    /// The number of nodes in a slab of the box one node thick across
    /// dimension `d`: the product of the other extents (saturating).
    ///
    /// ```
    /// use partalloc_topology::GridBox;
    /// let b = GridBox::new(&[0, 0, 0], &[2, 3, 4])?;
    /// assert_eq!((b.cross_section(0), b.cross_section(1), b.cross_section(2)), (12, 8, 6));
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn cross_section(&self, d: usize) -> u64 {
        self.extents
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != d)
            .fold(1u64, |acc, (_, &e)| acc.saturating_mul(u64::from(e)))
    }

    /// The maximal boxes of this box that miss `hole`: along each
    /// dimension in turn, the part below `hole` and the part above it
    /// (each present only if not empty). When the boxes overlap these are
    /// exactly the maximal boxes of the difference (up to 2·dims of them,
    /// possibly overlapping one another); when they do not (or differ in
    /// dimensions), the box itself is the only part.
    ///
    /// ```
    /// use partalloc_topology::GridBox;
    /// let whole = GridBox::from_corners(&[0, 0], &[9, 9])?;
    /// let hole = GridBox::from_corners(&[0, 0], &[3, 4])?;
    /// let parts: Vec<String> = whole.parts_outside(&hole).map(|p| p.to_string()).collect();
    /// assert_eq!(parts, ["⟨4,0⟩⟨9,9⟩", "⟨0,5⟩⟨9,9⟩"]);
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    pub fn parts_outside<'a>(&'a self, hole: &'a GridBox) -> impl Iterator<Item = GridBox> + 'a {
        let overlapping = self.overlaps(hole);
        let sides = if overlapping { 2 * self.dims() } else { 0 };
        core::iter::once(*self)
            .filter(move |_| !overlapping)
            .chain((0..sides).filter_map(move |k| {
                // d < dims ≤ MAX_DIMS: the lanes are used ones.
                let d = (k / 2).min(MAX_DIMS - 1);
                let (lo, ext) = (self.base.lanes()[d], self.extents.lanes()[d]);
                let (hlo, hext) = (hole.base.lanes()[d], hole.extents.lanes()[d]);
                // Exclusive ends; base + extent never overflows.
                let (end, hend) = (lo + ext, hlo + hext);
                let mut part = *self;
                if k % 2 == 0 {
                    // Below the hole: lo .. hlo (the hole starts inside).
                    (hlo > lo).then(|| {
                        part.extents.lanes_mut()[d] = hlo - lo;
                        part
                    })
                } else {
                    // Above the hole: hend .. end.
                    (hend < end).then(|| {
                        part.base.lanes_mut()[d] = hend;
                        part.extents.lanes_mut()[d] = end - hend;
                        part
                    })
                }
            }))
    }

    /// The boxes of extents `extents` inside this one at each of its
    /// 2^dims corners (corner bit `d` set: flush with the high end along
    /// dimension `d`), in corner order; none unless `extents` has this
    /// box's dimensions and fits inside it. Where an extent equals the
    /// box's, two corners give the same box.
    ///
    /// ```
    /// use partalloc_topology::GridBox;
    /// let s = GridBox::new(&[2, 0], &[5, 3])?;
    /// let at: Vec<String> = s.corner_placements(&[2, 3]).map(|p| p.to_string()).collect();
    /// assert_eq!(at, ["⟨2,0⟩⟨3,2⟩", "⟨5,0⟩⟨6,2⟩", "⟨2,0⟩⟨3,2⟩", "⟨5,0⟩⟨6,2⟩"]);
    /// # Ok::<(), partalloc_topology::TopologyError>(())
    /// ```
    pub fn corner_placements<'a>(
        &'a self,
        extents: &'a [u32],
    ) -> impl Iterator<Item = GridBox> + 'a {
        let n = self.dims();
        let fits = extents.len() == n
            && extents
                .iter()
                .zip(self.extents.iter())
                .all(|(&e, &s)| e >= 1 && e <= s);
        let corners = if fits { 1usize << n } else { 0 };
        (0..corners).map(move |corner| {
            let mut b = *self;
            let (lo, ext) = (self.base.lanes(), self.extents.lanes());
            // `extents` has dims ≤ MAX_DIMS entries when `corners` > 0.
            for (d, &e) in extents.iter().enumerate().take(MAX_DIMS) {
                if corner >> d & 1 == 1 {
                    b.base.lanes_mut()[d] = lo[d] + ext[d] - e;
                }
                b.extents.lanes_mut()[d] = e;
            }
            b
        })
    }

    /// The common part of two boxes, if any.
    #[must_use]
    pub fn intersection(&self, other: &GridBox) -> Option<GridBox> {
        if !self.overlaps(other) {
            return None;
        }
        let mut base = self.base;
        let mut ext = self.extents;
        for i in 0..self.dims() {
            let lo = self.base[i].max(other.base[i]);
            let hi = (self.base[i] + self.extents[i]).min(other.base[i] + other.extents[i]);
            base[i] = lo;
            ext[i] = hi - lo;
        }
        Some(Self::from_parts(base, ext))
    }

    /// The same base with the extents permuted: extent `i` of the result is
    /// extent `perm[i]` of `self`.
    ///
    /// # Errors
    /// [`TopologyError::DimensionMismatch`] if `perm` is not a permutation of
    /// `0..dims`; [`TopologyError::BoxOutOfBounds`] if a permuted extent
    /// would run past `u32::MAX` from the base.
    pub fn permuted(&self, perm: &[usize]) -> Result<GridBox, TopologyError> {
        let extents = permute(&self.extents, perm)?;
        Self::new(&self.base, &extents)
    }

    /// A 2-D box turned by 90° about its base (extents swapped).
    ///
    /// # Errors
    /// [`TopologyError::DimensionMismatch`] unless the box is 2-D.
    pub fn rotated(&self) -> Result<GridBox, TopologyError> {
        if self.dims() != 2 {
            return Err(TopologyError::DimensionMismatch {
                expected: 2,
                got: self.dims(),
            });
        }
        self.permuted(&[1, 0])
    }
}

/// `values` reordered so that entry `i` of the result is `values[perm[i]]`.
///
/// # Errors
/// [`TopologyError::DimensionMismatch`] if `perm` is not a permutation of
/// `0..values.len()`.
pub fn permute(values: &Coords, perm: &[usize]) -> Result<Coords, TopologyError> {
    let n = values.len();
    let mut seen = [false; crate::MAX_DIMS];
    let valid = perm.len() == n
        && perm
            .iter()
            .all(|&p| p < n && !core::mem::replace(&mut seen[p], true));
    if !valid {
        return Err(TopologyError::DimensionMismatch {
            expected: n,
            got: perm.len(),
        });
    }
    let mut out = *values;
    for (o, &p) in out.iter_mut().zip(perm) {
        *o = values[p];
    }
    Ok(out)
}

impl fmt::Debug for GridBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GridBox{{base: {}, extents: {}}}",
            self.base, self.extents
        )
    }
}

/// Printed as inclusive corners, `⟨x1,y1⟩⟨x2,y2⟩`, dimension 0 first.
impl fmt::Display for GridBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let corner = |f: &mut fmt::Formatter<'_>, c: &Coords| -> fmt::Result {
            f.write_str("⟨")?;
            for (i, v) in c.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{v}")?;
            }
            f.write_str("⟩")
        };
        corner(f, &self.base)?;
        corner(f, &self.last())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn volume_saturates() {
        let b = GridBox::new(&[0, 0, 0], &[1 << 22; 3]).unwrap();
        assert_eq!(b.volume(), u64::MAX);
    }

    #[test]
    fn corners_and_containment() {
        let m = GridBox::from_corners(&[0, 0], &[9, 9]).unwrap();
        let a = GridBox::from_corners(&[7, 0], &[9, 4]).unwrap();
        assert!(m.contains_box(&a));
        assert!(!a.contains_box(&m));
        assert!(a.contains_point(&[9, 4]));
        assert!(!a.contains_point(&[6, 4]));
        assert_eq!(a.last().as_slice(), &[9, 4]);
        assert!(GridBox::from_corners(&[3, 0], &[2, 0]).is_err());
    }

    #[test]
    fn rotation_and_permutation() {
        let b = GridBox::new(&[1, 1], &[3, 2]).unwrap();
        assert_eq!(b.rotated().unwrap().extents().as_slice(), &[2, 3]);
        let c = GridBox::new(&[0, 0, 0], &[4, 2, 1]).unwrap();
        assert_eq!(
            c.permuted(&[2, 0, 1]).unwrap().extents().as_slice(),
            &[1, 4, 2]
        );
        assert!(c.permuted(&[0, 0, 1]).is_err());
        assert!(c.rotated().is_err());
        // A turn that would carry the box past the coordinate range is an
        // error, not an overflow later in `overlaps`.
        let edge = GridBox::new(&[u32::MAX - 1, 0], &[1, 5]).unwrap();
        assert!(matches!(
            edge.rotated(),
            Err(TopologyError::BoxOutOfBounds { .. })
        ));
    }

    #[test]
    fn dimensions_beyond_the_box_read_as_extent_one_at_zero() {
        let b = GridBox::new(&[2, 3], &[4, 5]).unwrap();
        assert_eq!((b.lo(1), b.extent(1), b.hi(1)), (3, 5, 7));
        assert_eq!((b.lo(2), b.extent(2), b.hi(2)), (0, 1, 0));
        assert_eq!((b.lo(99), b.extent(99), b.hi(99)), (0, 1, 0));
        assert_eq!(b.cross_section(0), 5);
        assert_eq!(b.cross_section(5), 20);
    }

    #[test]
    fn the_fast_constructor_reports_the_checked_errors() {
        let cases: [(&[u32], &[u32]); 5] = [
            (&[], &[]),
            (&[0; 9], &[1; 9]),
            (&[0, 0], &[1]),
            (&[0, 0], &[1, 0]),
            (&[u32::MAX, 0], &[1, 1]),
        ];
        for (base, ext) in cases {
            let got = GridBox::new(base, ext);
            assert!(got.is_err(), "{base:?} {ext:?}");
            assert_eq!(got, GridBox::new_checked(base, ext));
        }
    }

    #[test]
    fn corners_of_a_3d_box() {
        let s = GridBox::new(&[1, 1, 1], &[3, 3, 3]).unwrap();
        let at: Vec<GridBox> = s.corner_placements(&[1, 2, 3]).collect();
        assert_eq!(at.len(), 8);
        assert!(
            at.iter()
                .all(|c| s.contains_box(c) && c.extents().as_slice() == [1, 2, 3])
        );
        assert_eq!(at[0].base().as_slice(), &[1, 1, 1]);
        assert_eq!(at[7].base().as_slice(), &[3, 2, 1]);
        assert_eq!(s.corner_placements(&[4, 1, 1]).count(), 0);
        assert_eq!(s.corner_placements(&[1, 1]).count(), 0);
    }

    fn small_box(dims: usize) -> impl Strategy<Value = GridBox> {
        (
            prop::collection::vec(0u32..5, dims),
            prop::collection::vec(1u32..5, dims),
        )
            .prop_map(|(b, e)| GridBox::new(&b, &e).unwrap())
    }

    fn nodes(b: &GridBox) -> Vec<Vec<u32>> {
        let mut out = vec![vec![]];
        for d in 0..b.dims() {
            out = out
                .into_iter()
                .flat_map(|p| {
                    (b.lo(d)..=b.hi(d)).map(move |v| {
                        let mut q = p.clone();
                        q.push(v);
                        q
                    })
                })
                .collect();
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The unrolled 2-D tests and the lane-wise corner placements agree
        /// with a per-dimension reading of the boxes, in 2-D and beyond.
        #[test]
        fn fast_paths_match_per_dimension_tests(
            (a, b) in (1usize..=4).prop_flat_map(|d| (small_box(d), small_box(d))),
            ext in prop::collection::vec(1u32..4, 1..=4),
        ) {
            let n = a.dims();
            let per_dim = |f: &dyn Fn(usize) -> bool| (0..n).all(f);
            prop_assert_eq!(
                a.overlaps(&b),
                per_dim(&|d| a.lo(d) <= b.hi(d) && b.lo(d) <= a.hi(d))
            );
            prop_assert_eq!(
                a.contains_box(&b),
                per_dim(&|d| a.lo(d) <= b.lo(d) && b.hi(d) <= a.hi(d))
            );
            let corners: Vec<GridBox> = a.corner_placements(&ext).collect();
            if ext.len() == n && per_dim(&|d| ext[d] <= a.extent(d)) {
                prop_assert_eq!(corners.len(), 1 << n);
                for (corner, c) in corners.iter().enumerate() {
                    for (d, &e) in ext.iter().enumerate() {
                        let lo = if corner >> d & 1 == 1 { a.hi(d) + 1 - e } else { a.lo(d) };
                        prop_assert_eq!((c.lo(d), c.extent(d)), (lo, e));
                    }
                }
            } else {
                prop_assert!(corners.is_empty());
            }
        }

        /// Against node sets: overlap, containment, and the parts outside
        /// a hole cover exactly the box minus the hole, each part maximal.
        #[test]
        fn box_operations_match_node_sets(
            (a, h) in (1usize..=3).prop_flat_map(|d| (small_box(d), small_box(d)))
        ) {
            let (na, nh) = (nodes(&a), nodes(&h));
            prop_assert_eq!(a.overlaps(&h), na.iter().any(|p| nh.contains(p)));
            prop_assert_eq!(a.contains_box(&h), nh.iter().all(|p| na.contains(p)));
            let parts: Vec<GridBox> = a.parts_outside(&h).collect();
            let outside: Vec<&Vec<u32>> = na.iter().filter(|p| !nh.contains(p)).collect();
            for p in &outside {
                prop_assert!(parts.iter().any(|q| q.contains_point(p)));
            }
            for q in &parts {
                prop_assert!(a.contains_box(q));
                if a.overlaps(&h) {
                    prop_assert!(!q.overlaps(&h));
                    // Maximal: growing it by one node along any side
                    // leaves the box or meets the hole.
                    for d in 0..q.dims() {
                        for grow_low in [true, false] {
                            let mut lo = q.base().to_vec();
                            let mut ext = q.extents().to_vec();
                            if grow_low {
                                if lo[d] == 0 { continue; }
                                lo[d] -= 1;
                            }
                            ext[d] += 1;
                            let g = GridBox::new(&lo, &ext).unwrap();
                            prop_assert!(!a.contains_box(&g) || g.overlaps(&h));
                        }
                    }
                } else {
                    prop_assert_eq!(q, &a);
                }
            }
        }
    }

    #[test]
    fn zero_extent_is_rejected() {
        assert_eq!(
            GridBox::new(&[0, 0], &[1, 0]),
            Err(TopologyError::ZeroSide { dim: 1 })
        );
    }
}
