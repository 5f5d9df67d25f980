//! MC (Mache, Lo & Windisch, PDCS 1997): for a job that asks for an a×b
//! (×c) box, shell 0 around a free node is that box centered on it and
//! shell i the box grown by i on every side; a center's cost is the least
//! sum of shell numbers of `k` free nodes, and the cheapest center wins.
//! With a 1×1 box it is MC1x1, and any request other than a box is
//! served as one.
//!
//! The paper leaves open where an even side puts the center (here: a side
//! s spans `c − ⌊(s−1)/2⌋ ..= c + ⌈(s−1)/2⌉`), whether the box may turn
//! (here: every distinct orientation, the requested one first, when the
//! request allows rotation; later orientations win only when strictly
//! cheaper), and which nodes of the outermost shell to take (as
//! [MC1x1](super::mc1x1)). Neither reference implementation has MC.
//! O(r·n·(n + D + s·k)) for r orientations.

use super::{
    KINDS, Method, NearestAllocator, OUTER_PARAM, Outer, Point, Search, orientations, outer_param,
};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "mc";

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "non-contiguous: the free node whose k nearest in rings around the job's box have the least total ring number",
        source: "Mache, Lo & Windisch, PDCS 1997 (MC); docs/baselines.md#mc",
        params: &[OUTER_PARAM],
        topologies: KINDS,
    },
    build: |t, spec| {
        let method = Method::Mc(outer_param(spec)?);
        Ok(Box::new(NearestAllocator::new(t.clone(), method)?))
    },
};

/// Shells around the job's box (each allowed orientation) on every free
/// node.
pub(super) fn choose(s: &mut Search, shape: Point, rotate: bool, outer: Outer, k: usize) {
    let shapes = orientations(shape, rotate, s.dims);
    s.nearest_by_shells(&shapes, outer, k);
}
