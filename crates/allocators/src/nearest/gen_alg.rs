//! Gen-Alg (Bender et al., "Communication-aware processor allocation for
//! supercomputers: finding point sets of small average distance",
//! Algorithmica 2008): every free node is a candidate center; each center
//! gets the `k` free nodes nearest it, and the set with the least sum of
//! pairwise distances wins. The paper proves it a (2 − 2/k)-approximation
//! of the least pairwise sum in any metric.
//!
//! PReMAS's `genAlg` is this with the L1 metric; `metric=linf` measures
//! nearness and the pairwise sum in L∞. O(n·(n + D)) per allocation for n
//! free nodes on a mesh of sides summing to D (a counting sort and an L1
//! pairwise sum per center; O(n·(n + k²)) in L∞).

use super::{KINDS, METRIC_PARAM, Method, Metric, NearestAllocator, Search, metric_param};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "gen-alg";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the k free nodes nearest some free node, the set of least pairwise distance",
        source: "Bender et al., Algorithmica 2008 (Gen-Alg); PReMAS genAlg as reference; docs/baselines.md#gen-alg",
        params: &[METRIC_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| {
        let method = Method::GenAlg(metric_param(spec)?);
        Ok(Box::new(NearestAllocator::new(t.clone(), method)?))
    },
};

/// Every free node as center, in the free nodes' order.
pub(super) fn choose(s: &mut Search, metric: Metric, k: usize) {
    s.centers.clear();
    for i in 0..s.free.len() {
        let p = s.point(s.free[i]);
        s.centers.push(p);
    }
    s.nearest_by_pairwise(metric, k);
}
