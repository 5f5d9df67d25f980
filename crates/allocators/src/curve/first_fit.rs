//! First fit along the curve (Leung et al. 2002; PReMAS and SST
//! `FirstFitAllocator`).
//!
//! The job takes the first `k` nodes of the first free interval (maximal
//! run of free nodes consecutive on the curve) that holds `k`; when none
//! does, the window of `k` free nodes of smallest span
//! ([`span`](super::span)). O(N/64 + intervals) per allocation.

use partalloc_topology::NodeSet;

use super::{Choice, Fit, KINDS, ORDER_PARAM, build_entry, runs, span};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "curve-first-fit";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the first free interval along a curve that holds the job, else the smallest span",
        source: "Leung et al., IEEE Cluster 2002 (first fit); PReMAS and SST as reference; docs/baselines.md#curve-first-fit",
        params: &[ORDER_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| build_entry(Fit::FirstFit, t, spec),
};

/// The first free interval of at least `k` ranks, else the smallest span.
pub(super) fn choose(free: &NodeSet, k: usize) -> Option<Choice> {
    runs(free)
        .find(|&(lo, hi)| hi - lo >= k)
        .map(|(lo, _)| Choice::Run { lo })
        .or_else(|| span::smallest(free, k))
}
