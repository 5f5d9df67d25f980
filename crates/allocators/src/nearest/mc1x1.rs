//! MC1x1 (Mache, Lo & Windisch, "Minimizing message-passing contention in
//! fragmentation-free processor allocation", PDCS 1997): MC with a 1×1
//! shell 0, for jobs whose shape is not known. Around each free node as
//! center, shell i is the ring of nodes at L∞ distance i; a center's cost
//! is the least sum of shell numbers of `k` free nodes (every inner shell
//! whole and part of the outermost one needed), and the cheapest center
//! wins.
//!
//! Which nodes of the outermost shell to take the paper leaves open;
//! PReMAS's `MC1x1` takes them greedily (least total L1 distance to the
//! nodes taken so far, then least L1 distance to the center, then lowest
//! (x, y, z)), and so does this. PReMAS lets that greedy choice reach
//! nodes beyond the outermost shell, which can raise the cost; `outer=premas`
//! does the same, for replaying PReMAS. O(n·(n + D + s·k)) per allocation
//! for n free nodes, an outermost shell of s candidates (n − inner with
//! `outer=premas`).

use super::{KINDS, Method, NearestAllocator, OUTER_PARAM, Outer, Search, outer_param};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "mc1x1";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the free node whose k nearest in L∞ rings have the least total ring number",
        source: "Mache, Lo & Windisch, PDCS 1997 (MC1x1); PReMAS MC1x1 as reference; docs/baselines.md#mc1x1",
        params: &[OUTER_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| {
        let method = Method::Mc1x1(outer_param(spec)?);
        Ok(Box::new(NearestAllocator::new(t.clone(), method)?))
    },
};

/// L∞ shells around every free node.
pub(super) fn choose(s: &mut Search, outer: Outer, k: usize) {
    s.nearest_by_shells(&[[1, 1, 1]], outer, k);
}
