//! Best fit along the curve (Leung et al. 2002; PReMAS and SST
//! `BestFitAllocator`).
//!
//! The job takes the first `k` nodes of the shortest free interval that
//! holds `k` (the earliest of equally short ones); when none does, the
//! window of `k` free nodes of smallest span ([`span`](super::span)).
//! O(N/64 + intervals) per allocation.

use partalloc_topology::NodeSet;

use super::{Choice, Fit, KINDS, ORDER_PARAM, build_entry, runs, span};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "curve-best-fit";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the shortest free interval along a curve that holds the job, else the smallest span",
        source: "Leung et al., IEEE Cluster 2002 (best fit); PReMAS and SST as reference; docs/baselines.md#curve-best-fit",
        params: &[ORDER_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| build_entry(Fit::BestFit, t, spec),
};

/// The earliest of the shortest free intervals of at least `k` ranks,
/// else the smallest span.
pub(super) fn choose(free: &NodeSet, k: usize) -> Option<Choice> {
    let mut best: Option<(usize, usize)> = None;
    for (lo, hi) in runs(free) {
        let len = hi - lo;
        if len >= k && best.is_none_or(|(b, _)| len < b) {
            best = Some((len, lo));
            if len == k {
                break;
            }
        }
    }
    best.map(|(_, lo)| Choice::Run { lo })
        .or_else(|| span::smallest(free, k))
}
