//! A small fixed-capacity coordinate vector, used for node coordinates, box
//! bases and box extents without heap allocation.

use core::fmt;
use core::ops::{Deref, DerefMut};

use crate::TopologyError;

/// The largest number of dimensions a [`Grid`](crate::Grid) or
/// [`GridBox`](crate::GridBox) may have.
///
/// Eight covers every machine in the literature this crate serves (the
/// papers use two- and three-dimensional meshes and tori) while keeping
/// coordinates `Copy` and allocation-free on the allocators' hot paths.
pub const MAX_DIMS: usize = 8;

/// Up to [`MAX_DIMS`] unsigned values, indexed by dimension (dimension 0
/// first).
///
/// `Coords` dereferences to `[u32]`, so it can be used wherever a slice is
/// expected.
///
/// ```
/// use partalloc_topology::Coords;
/// let c = Coords::new(&[3, 5])?;
/// assert_eq!(c.len(), 2);
/// assert_eq!(c[1], 5);
/// assert_eq!(c.product(), 15);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
// Equality and order compare the length, then the used values. The unused
// slots are always zero, so comparing (len, all slots) gives the same
// answer and is what the impls do; `Hash` reads every slot for the same
// reason.
#[expect(
    clippy::derived_hash_with_manual_eq,
    reason = "the unused slots are zero, so equal values hash equally"
)]
#[derive(Clone, Copy, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "Vec<u32>", try_from = "Vec<u32>")
)]
pub struct Coords {
    len: u8,
    values: [u32; MAX_DIMS],
}

impl Coords {
    /// Copies `values` (dimension 0 first).
    ///
    /// # Errors
    /// [`TopologyError::NoDimensions`] for an empty slice and
    /// [`TopologyError::TooManyDimensions`] above [`MAX_DIMS`].
    pub fn new(values: &[u32]) -> Result<Self, TopologyError> {
        let mut c = Self::filled(values.len(), 0)?;
        c.values[..values.len()].copy_from_slice(values);
        Ok(c)
    }

    /// `len` copies of `value`.
    ///
    /// # Errors
    /// As [`Coords::new`].
    pub fn filled(len: usize, value: u32) -> Result<Self, TopologyError> {
        if len == 0 {
            return Err(TopologyError::NoDimensions);
        }
        if len > MAX_DIMS {
            return Err(TopologyError::TooManyDimensions {
                got: len,
                max: MAX_DIMS,
            });
        }
        let mut values = [0; MAX_DIMS];
        values[..len].fill(value);
        // `len <= MAX_DIMS` was checked above, so it fits in a u8.
        Ok(Self {
            len: len as u8,
            values,
        })
    }

    /// The values as a slice (dimension 0 first).
    #[must_use]
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        // `len <= MAX_DIMS` always; the `min` tells the compiler so, and
        // costs less than the bounds check it replaces.
        &self.values[..usize::from(self.len).min(MAX_DIMS)]
    }

    /// The number of values (at least 1, at most [`MAX_DIMS`]), read
    /// without building the slice.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Always false: a `Coords` holds at least one value.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `len` of `values` (1 ≤ `len` ≤ [`MAX_DIMS`], the rest of
    /// `values` zero: the caller checks both).
    #[inline]
    pub(crate) fn from_lanes(len: usize, values: [u32; MAX_DIMS]) -> Self {
        debug_assert!((1..=MAX_DIMS).contains(&len) && values[len..].iter().all(|&v| v == 0));
        // len <= MAX_DIMS fits in a u8.
        Self {
            len: len as u8,
            values,
        }
    }

    /// All [`MAX_DIMS`] slots, the unused ones (from `len()` on) zero:
    /// lets box tests run over a fixed number of lanes.
    #[inline]
    pub(crate) fn lanes(&self) -> &[u32; MAX_DIMS] {
        &self.values
    }

    /// All [`MAX_DIMS`] slots, for writing the used ones (from 0 to
    /// `len()`) without a bounds check per dimension. The caller keeps the
    /// unused slots zero: equality, order and hashing read every slot.
    #[inline]
    pub(crate) fn lanes_mut(&mut self) -> &mut [u32; MAX_DIMS] {
        &mut self.values
    }

    /// The values as a mutable slice (dimension 0 first).
    pub fn as_mut_slice(&mut self) -> &mut [u32] {
        &mut self.values[..usize::from(self.len).min(MAX_DIMS)]
    }

    /// The product of the values, as the number of nodes of a box with these
    /// extents; `u64::MAX` if it does not fit (eight values of up to 2^32
    /// can reach 2^256).
    #[must_use]
    #[inline]
    pub fn product(&self) -> u64 {
        self.as_slice()
            .iter()
            .fold(1u64, |acc, &v| acc.saturating_mul(u64::from(v)))
    }

    /// The sum of the values.
    #[must_use]
    pub fn sum(&self) -> u64 {
        self.as_slice().iter().map(|&v| u64::from(v)).sum()
    }
}

impl PartialEq for Coords {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.values == other.values
    }
}

impl Eq for Coords {}

impl PartialOrd for Coords {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Coords {
    #[inline]
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.len
            .cmp(&other.len)
            .then_with(|| self.values.cmp(&other.values))
    }
}

impl Deref for Coords {
    type Target = [u32];
    #[inline]
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl DerefMut for Coords {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u32] {
        self.as_mut_slice()
    }
}

impl fmt::Debug for Coords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Printed as `(v0,v1,…)`, dimension 0 first.
impl fmt::Display for Coords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, v) in self.as_slice().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{v}")?;
        }
        f.write_str(")")
    }
}

impl AsRef<[u32]> for Coords {
    fn as_ref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl From<Coords> for Vec<u32> {
    fn from(c: Coords) -> Self {
        c.as_slice().to_vec()
    }
}

impl TryFrom<Vec<u32>> for Coords {
    type Error = TopologyError;
    fn try_from(v: Vec<u32>) -> Result<Self, TopologyError> {
        Self::new(&v)
    }
}

impl TryFrom<&[u32]> for Coords {
    type Error = TopologyError;
    fn try_from(v: &[u32]) -> Result<Self, TopologyError> {
        Self::new(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_and_oversized() {
        assert_eq!(Coords::new(&[]), Err(TopologyError::NoDimensions));
        assert!(matches!(
            Coords::new(&[1; MAX_DIMS + 1]),
            Err(TopologyError::TooManyDimensions { got: 9, .. })
        ));
    }

    #[test]
    fn product_saturates_instead_of_overflowing() {
        assert_eq!(Coords::new(&[65536; 5]).unwrap().product(), u64::MAX);
        assert_eq!(Coords::new(&[1 << 22; 3]).unwrap().product(), u64::MAX);
        assert_eq!(Coords::new(&[u32::MAX; 8]).unwrap().product(), u64::MAX);
        assert_eq!(Coords::new(&[1 << 21; 3]).unwrap().product(), 1 << 63);
        // A zero value gives zero wherever it stands.
        assert_eq!(
            Coords::new(&[u32::MAX, u32::MAX, u32::MAX, 0])
                .unwrap()
                .product(),
            0
        );
    }

    proptest::proptest! {
        /// Equality and order read every slot; they agree with comparing
        /// the length, then the used values as slices.
        #[test]
        fn order_is_length_then_values(
            a in proptest::collection::vec(0u32..4, 1..=MAX_DIMS),
            b in proptest::collection::vec(0u32..4, 1..=MAX_DIMS),
        ) {
            let (ca, cb) = (Coords::new(&a).unwrap(), Coords::new(&b).unwrap());
            let naive = a.len().cmp(&b.len()).then_with(|| a.cmp(&b));
            proptest::prop_assert_eq!(ca.cmp(&cb), naive);
            proptest::prop_assert_eq!(ca == cb, a == b);
            proptest::prop_assert_eq!((ca.len(), ca.is_empty()), (a.len(), false));
        }
    }

    #[test]
    fn equality_ignores_unused_slots() {
        let mut a = Coords::new(&[1, 2, 3]).unwrap();
        a.as_mut_slice()[2] = 3;
        let b = Coords::new(&[1, 2, 3]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "(1,2,3)");
        assert_eq!(a.sum(), 6);
    }
}
