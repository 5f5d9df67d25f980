//! The fallback of first and best fit when no free interval holds the
//! job: among the windows of `k` free ranks consecutive among the free
//! ones, the one whose first and last ranks are closest (the smallest
//! span); the earliest of equal spans. This is what PReMAS's and SST's
//! `LinearAllocator::minSpanAllocate` compute (both keep a window only
//! when its span is strictly smaller). O(N/64 + free nodes).

use partalloc_topology::NodeSet;

use super::{Choice, ones};

/// The window of `k` free ranks of smallest span, if `k` ranks are free.
pub(super) fn smallest(free: &NodeSet, k: usize) -> Option<Choice> {
    let words = free.words();
    let mut lag = ones(words);
    let mut lead = ones(words);
    let mut lo = lag.next()?;
    let mut hi = lead.nth(k.checked_sub(1)?)?;
    let mut best = (hi - lo, lo, hi);
    for next in lead {
        hi = next;
        // The lag runs k − 1 set bits behind the lead, so it has one.
        lo = lag.next()?;
        if hi - lo < best.0 {
            best = (hi - lo, lo, hi);
        }
    }
    Some(Choice::Span {
        lo: best.1,
        hi: best.2,
    })
}
