//! MM (Bender et al., Algorithmica 2008): as Gen-Alg, but the candidate
//! centers are every point whose x, y and z each occur among the free
//! nodes' coordinates (the intersections of the lines, or planes, through
//! free nodes), busy or free. The paper proves it a 7/4-approximation of
//! the least pairwise L1 sum on 2-D meshes and 2 − 1/(2d) in d dimensions.
//!
//! Centers are tried as PReMAS's `IntersectionCenterGen` lists them: the
//! x values, the y values and the z values each in the order they first
//! occur in the free nodes' order, x slowest. `metric=linf` as for
//! Gen-Alg. O(c·(n + D)) per allocation for c ≤ the machine's size centers.

use super::{KINDS, METRIC_PARAM, Method, Metric, NearestAllocator, Search, metric_param};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "mm";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the k free nodes nearest some intersection of free nodes' coordinates, the set of least pairwise distance",
        source: "Bender et al., Algorithmica 2008 (MM); PReMAS MM as reference; docs/baselines.md#mm",
        params: &[METRIC_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| {
        let method = Method::Mm(metric_param(spec)?);
        Ok(Box::new(NearestAllocator::new(t.clone(), method)?))
    },
};

/// The intersections of the free nodes' coordinates as centers.
pub(super) fn choose(s: &mut Search, metric: Metric, k: usize) {
    // Each dimension's values in order of first occurrence.
    let mut values: [Vec<u32>; 3] = Default::default();
    let mut seen: [Vec<bool>; 3] = s.sides.map(|n| vec![false; n as usize]);
    for &v in &s.free {
        let p = s.points[v as usize];
        for d in 0..3 {
            if !seen[d][p[d] as usize] {
                seen[d][p[d] as usize] = true;
                values[d].push(p[d]);
            }
        }
    }
    s.centers.clear();
    for &x in &values[0] {
        for &y in &values[1] {
            for &z in &values[2] {
                s.centers.push([x, y, z]);
            }
        }
    }
    s.nearest_by_pairwise(metric, k);
}
