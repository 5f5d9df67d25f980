//! Sorted free list along the curve (Leung et al. 2002; PReMAS and SST
//! `SortedFreeListAllocator`).
//!
//! The job takes the `k` free nodes earliest on the curve, whatever the
//! gaps between them: with the row-major order this is the `paging`
//! strategy. O(N/64) per allocation (a popcount per word).

use partalloc_topology::NodeSet;

use super::{Choice, Fit, KINDS, ORDER_PARAM, build_entry};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "curve-sorted-free-list";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the free nodes earliest along a curve",
        source: "Leung et al., IEEE Cluster 2002 (sorted free list); PReMAS and SST as reference; docs/baselines.md#curve-sorted-free-list",
        params: &[ORDER_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| build_entry(Fit::SortedFreeList, t, spec),
};

/// The ranks from the first free one to the `k`-th free one.
pub(super) fn choose(free: &NodeSet, k: usize) -> Option<Choice> {
    let lo = free.first()? as usize;
    let mut need = k;
    for (wi, &w) in free.words().iter().enumerate() {
        let n = w.count_ones() as usize;
        if n < need {
            need -= n;
            continue;
        }
        // The need-th set bit of w: drop the need − 1 lowest.
        let mut b = w;
        for _ in 1..need {
            b &= b - 1;
        }
        let hi = wi * 64 + b.trailing_zeros() as usize;
        return Some(Choice::Span { lo, hi });
    }
    None
}
