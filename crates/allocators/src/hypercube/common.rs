//! Building blocks shared by the hypercube strategies: request checking,
//! subcubes as aligned id ranges, and subcube-level updates of the shared
//! [`Occupancy`].

use partalloc_topology::{Hypercube, NodeId, Subcube, Topology};

use crate::BuildError;
use crate::error::UnsupportedTopology;
use crate::{AllocError, Occupancy, Partition, Request};

/// The dimension k of a subcube request on Q_n.
pub(crate) fn requested_dim(
    strategy: &'static str,
    request: &Request,
    n: u32,
) -> Result<u32, AllocError> {
    match *request {
        Request::Subcube { dim } if dim <= n => Ok(dim),
        Request::Subcube { dim } => Err(AllocError::Invalid {
            request: *request,
            reason: format!("a Q_{dim} does not fit in the machine Q_{n}"),
        }),
        _ => Err(AllocError::Unsupported {
            strategy,
            request: *request,
            reason: "hypercube strategies grant subcubes only; ask for Request::subcube(k)",
        }),
    }
}

/// The hypercube of a topology the registry already checked.
pub(crate) fn cube_of(strategy: &'static str, t: &Topology) -> Result<Hypercube, BuildError> {
    t.as_hypercube().copied().ok_or_else(|| {
        UnsupportedTopology::new(strategy, t, &[partalloc_topology::TopologyKind::Hypercube]).into()
    })
}

/// Mask of the low `bits` bits of an address.
#[inline]
pub(crate) fn low(bits: u32) -> u32 {
    // Truncation keeps the low 32 of the (at most 64) bits.
    crate::rowgrid::low_bits(bits) as u32
}

/// The subcube of `cube` with these masks. Construction cannot fail for
/// a valid cube once the masks are trimmed; the whole machine is the
/// (unreachable) fallback so that no path panics.
#[inline]
pub(crate) fn sub(cube: &Hypercube, free: u32, fixed: u32) -> Subcube {
    let m = low(cube.dim());
    Subcube::new(cube.dim(), free & m, fixed & m).unwrap_or_else(|_| cube.whole())
}

/// Every node as a 0-dimensional subcube, in id order: what the Gray-code
/// strategies recognise for a request of one node.
pub(crate) fn single_nodes(cube: &Hypercube) -> Vec<Partition> {
    (0..cube.num_nodes() as NodeId)
        .map(|v| Partition::Subcube(sub(cube, 0, v)))
        .collect()
}

/// Calls `f(lo, hi)` for the maximal aligned id ranges that make up `s`:
/// its low run of free dimensions gives the range length, the other free
/// dimensions are enumerated. Stops early when `f` returns false; returns
/// whether it ran to the end.
#[inline]
pub(crate) fn for_ranges(s: &Subcube, f: impl FnMut(usize, usize) -> bool) -> bool {
    for_mask_ranges(s.free_mask(), s.base(), f)
}

/// As [`for_ranges`], for the subcube with free mask `free` and lowest node
/// `base` (no bit of `base` under `free`).
#[inline]
pub(crate) fn for_mask_ranges(
    free: u32,
    base: u32,
    mut f: impl FnMut(usize, usize) -> bool,
) -> bool {
    let run = free.trailing_ones();
    let len = 1usize << run;
    let high = free & !low(run);
    let mut x = 0u32;
    loop {
        let lo = (base | x) as usize;
        if !f(lo, lo + len) {
            return false;
        }
        if x == high {
            return true;
        }
        x = x.wrapping_sub(high) & high;
    }
}

/// Subcube-level operations of the hypercube strategies on the shared
/// [`Occupancy`]: a subcube is a few aligned id ranges ([`for_ranges`]),
/// each tested or marked a word at a time.
impl Occupancy {
    /// Whether every node of `s` is available.
    #[inline]
    pub(crate) fn subcube_available(&self, s: &Subcube) -> bool {
        for_ranges(s, |lo, hi| self.range_available(lo, hi))
    }

    /// Whether every node of the subcube (`free`, `base`) is available.
    #[inline]
    pub(crate) fn masks_available(&self, free: u32, base: u32) -> bool {
        for_mask_ranges(free, base, |lo, hi| self.range_available(lo, hi))
    }

    /// The lowest available node.
    pub(crate) fn lowest_available(&self) -> Option<NodeId> {
        self.blocked().first_absent()
    }

    /// Marks an available subcube busy.
    pub(crate) fn occupy_subcube(&mut self, s: &Subcube) {
        for_ranges(s, |lo, hi| {
            self.occupy_range(lo, hi);
            true
        });
    }

    /// Marks a busy subcube free.
    pub(crate) fn vacate_subcube(&mut self, s: &Subcube) {
        for_ranges(s, |lo, hi| {
            self.vacate_range(lo, hi);
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_subcube() {
        let s: Subcube = "X01X0X".parse().unwrap();
        let mut got = Vec::new();
        for_ranges(&s, |lo, hi| {
            got.extend(lo as u32..hi as u32);
            true
        });
        got.sort_unstable();
        assert_eq!(got, s.nodes().collect::<Vec<_>>());
    }
}
