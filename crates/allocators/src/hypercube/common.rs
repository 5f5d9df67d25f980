//! Building blocks shared by the hypercube strategies: request checking,
//! flat bitsets with aligned-range operations, and per-node busy/faulty
//! state with subcube-level updates.

use partalloc_topology::{Hypercube, NodeId, NodeSet, Subcube, Topology};

use crate::BuildError;
use crate::registry::UnsupportedTopology;
use crate::{AllocError, FaultError, Grant, GrantLedger, Partition, ReleaseError, Request};

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

/// Mask of the low `bits` bits.
#[inline]
pub(crate) fn low(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// The subcube of `cube` with these masks. Construction cannot fail for
/// a valid cube once the masks are trimmed; the whole machine is the
/// (unreachable) fallback so that no path panics.
#[inline]
pub(crate) fn sub(cube: &Hypercube, free: u32, fixed: u32) -> Subcube {
    let m = low(cube.dim());
    Subcube::new(cube.dim(), free & m, fixed & m).unwrap_or_else(|_| cube.whole())
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

/// Bits at the starts of the aligned 2^k-bit blocks of a word (k < 6).
#[inline]
pub(crate) fn block_starts(k: u32) -> u64 {
    let mut starts = 0u64;
    let mut b = 0;
    while b < 64 {
        starts |= 1 << b;
        b += 1 << k;
    }
    starts
}

/// For k < 6: the block-start bits of the aligned 2^k-bit blocks of `w`
/// that are all clear; `starts` is [`block_starts`]`(k)`.
#[inline]
pub(crate) fn clear_block_starts(w: u64, k: u32, starts: u64) -> u64 {
    let mut m = w;
    for s in 0..k {
        m |= m >> (1u32 << s);
    }
    !m & starts
}

/// A flat bitset with word-level range operations (no bounds errors:
/// callers pass ranges inside the set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bits {
    words: Vec<u64>,
}

#[inline]
fn word_mask(start: usize, end: usize) -> u64 {
    if end - start == 64 {
        u64::MAX
    } else {
        ((1u64 << (end - start)) - 1) << start
    }
}

impl Bits {
    pub(crate) fn new(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(64)],
        }
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, v: bool) {
        if let Some(w) = self.words.get_mut(i / 64) {
            if v {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }

    #[inline]
    fn each_word(&mut self, lo: usize, hi: usize, mut f: impl FnMut(&mut u64, u64)) {
        let mut i = lo;
        while i < hi {
            let w = i / 64;
            let start = i % 64;
            let end = (hi - w * 64).min(64);
            if let Some(word) = self.words.get_mut(w) {
                f(word, word_mask(start, end));
            }
            i = w * 64 + end;
        }
    }

    pub(crate) fn set_range(&mut self, lo: usize, hi: usize) {
        self.each_word(lo, hi, |w, m| *w |= m);
    }

    pub(crate) fn clear_range(&mut self, lo: usize, hi: usize) {
        self.each_word(lo, hi, |w, m| *w &= !m);
    }

    /// Whether no bit in `lo..hi` is set.
    #[inline]
    pub(crate) fn range_clear(&self, lo: usize, hi: usize) -> bool {
        let mut i = lo;
        while i < hi {
            let w = i / 64;
            let start = i % 64;
            let end = (hi - w * 64).min(64);
            if self
                .words
                .get(w)
                .is_some_and(|x| x & word_mask(start, end) != 0)
            {
                return false;
            }
            i = w * 64 + end;
        }
        true
    }

    /// The first clear bit in `0..len`.
    pub(crate) fn first_clear(&self, len: usize) -> Option<usize> {
        for (wi, &w) in self.words.iter().enumerate() {
            if w != u64::MAX {
                let i = wi * 64 + (!w).trailing_zeros() as usize;
                return (i < len).then_some(i);
            }
        }
        None
    }

    /// The first `a` in `0..len >> k` whose aligned block
    /// `a·2^k .. (a+1)·2^k` is clear (Al-Dhelaan Alg. 1, step 2).
    pub(crate) fn first_clear_block(&self, k: u32, len: usize) -> Option<usize> {
        let blocks = len >> k;
        if k >= 6 {
            let per = 1usize << (k - 6);
            return (0..blocks).find(|&a| {
                self.words
                    .get(a * per..(a + 1) * per)
                    .is_some_and(|ws| ws.iter().all(|&w| w == 0))
            });
        }
        let starts = block_starts(k);
        for (wi, &w) in self.words.iter().enumerate() {
            let free = clear_block_starts(w, k, starts);
            if free != 0 {
                let a = (wi * 64 + free.trailing_zeros() as usize) >> k;
                return (a < blocks).then_some(a);
            }
        }
        None
    }

    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }
}

/// Which nodes of Q_n are busy and which faulty, with an O(1) free count.
/// `blocked` is busy ∪ faulty, so a search tests one bitset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Nodes {
    n: u32,
    blocked: Bits,
    faulty: Bits,
    free: usize,
}

impl Nodes {
    pub(crate) fn new(n: u32) -> Self {
        let len = 1usize << n;
        Self {
            n,
            blocked: Bits::new(len),
            faulty: Bits::new(len),
            free: len,
        }
    }

    pub(crate) fn len(&self) -> usize {
        1usize << self.n
    }

    pub(crate) fn free(&self) -> usize {
        self.free
    }

    /// Busy ∪ faulty.
    pub(crate) fn blocked(&self) -> &Bits {
        &self.blocked
    }

    #[inline]
    pub(crate) fn is_available(&self, node: NodeId) -> bool {
        (node as usize) < self.len() && !self.blocked.get(node as usize)
    }

    /// Whether every node of `lo..hi` is available.
    #[inline]
    pub(crate) fn range_available(&self, lo: usize, hi: usize) -> bool {
        self.blocked.range_clear(lo, hi)
    }

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
        self.blocked.first_clear(self.len()).map(|i| i as NodeId)
    }

    /// Marks an available subcube busy.
    pub(crate) fn occupy(&mut self, s: &Subcube) {
        for_ranges(s, |lo, hi| {
            self.blocked.set_range(lo, hi);
            true
        });
        self.free -= s.len() as usize;
    }

    /// Marks a busy subcube free.
    pub(crate) fn vacate(&mut self, s: &Subcube) {
        for_ranges(s, |lo, hi| {
            self.blocked.clear_range(lo, hi);
            true
        });
        self.free += s.len() as usize;
    }

    /// Marks a free node faulty; `Ok(false)` if it already is.
    pub(crate) fn fault(&mut self, node: NodeId) -> Result<bool, FaultError> {
        self.check_node(node)?;
        if self.faulty.get(node as usize) {
            return Ok(false);
        }
        if self.blocked.get(node as usize) {
            return Err(FaultError::Busy { node });
        }
        self.faulty.set(node as usize, true);
        self.blocked.set(node as usize, true);
        self.free -= 1;
        Ok(true)
    }

    /// Returns a faulty node to service; `Ok(false)` if it was not faulty.
    pub(crate) fn mend(&mut self, node: NodeId) -> Result<bool, FaultError> {
        self.check_node(node)?;
        if !self.faulty.get(node as usize) {
            return Ok(false);
        }
        self.faulty.set(node as usize, false);
        self.blocked.set(node as usize, false);
        self.free += 1;
        Ok(true)
    }

    fn check_node(&self, node: NodeId) -> Result<(), FaultError> {
        Hypercube::new(self.n)
            .and_then(|h| h.check_node(node))
            .map_err(FaultError::from)
    }

    /// Why `request` was refused: no room among the available nodes.
    pub(crate) fn no_room(&self, request: &Request) -> AllocError {
        AllocError::NoRoom {
            request: *request,
            free: self.free,
            total: self.len(),
        }
    }

    /// Occupies the available subcube `s`, records it in `ledger` and
    /// returns its grant.
    pub(crate) fn grant(
        &mut self,
        ledger: &mut GrantLedger<Subcube>,
        s: Subcube,
        request: &Request,
    ) -> Grant {
        self.occupy(&s);
        let id = ledger.issue(s);
        Grant::new(id, Partition::Subcube(s), request.node_count())
    }

    /// Takes the grant's subcube out of `ledger` and frees its nodes.
    pub(crate) fn release(
        &mut self,
        ledger: &mut GrantLedger<Subcube>,
        grant: &Grant,
    ) -> Result<Subcube, ReleaseError> {
        let s = ledger.take(grant.id())?;
        self.vacate(&s);
        Ok(s)
    }

    pub(crate) fn busy_set(&self) -> NodeSet {
        let mut s = NodeSet::new(self.len());
        for (wi, (&b, &f)) in self
            .blocked
            .words()
            .iter()
            .zip(self.faulty.words())
            .enumerate()
        {
            push_bits(&mut s, wi, b & !f);
        }
        s
    }

    pub(crate) fn faulty_set(&self) -> NodeSet {
        to_nodeset(&self.faulty, self.len())
    }
}

fn push_bits(s: &mut NodeSet, wi: usize, mut w: u64) {
    while w != 0 {
        let b = w.trailing_zeros() as usize;
        w &= w - 1;
        let _ = s.insert((wi * 64 + b) as NodeId);
    }
}

/// Copies a bitset into a [`NodeSet`] (introspection only).
pub(crate) fn to_nodeset(bits: &Bits, len: usize) -> NodeSet {
    let mut s = NodeSet::new(len);
    for (wi, &w) in bits.words().iter().enumerate() {
        push_bits(&mut s, wi, w);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_clear_block_matches_literal_scan() {
        for n in 0..=8u32 {
            let len = 1usize << n;
            for seed in 0..20u64 {
                let mut b = Bits::new(len);
                let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for i in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x % 5 == 0 {
                        b.set(i, true);
                    }
                }
                for k in 0..=n {
                    let want = (0..len >> k).find(|&a| b.range_clear(a << k, (a + 1) << k));
                    assert_eq!(b.first_clear_block(k, len), want, "n={n} k={k}");
                }
            }
        }
    }

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
