//! Adaptive Scan (Ding & Bhuyan 1993, as summarised by Kim & Yoon §II.4).
//!
//! "For an allocation request (a, b), this strategy first finds an a×b
//! free submesh from the coordinate ⟨0,0⟩ to ⟨Lx−1, Ly−1⟩ by increasing
//! x-coordinate prior to y-coordinate. If an a×b free submesh does not
//! exist, the strategy tries to find a b×a free submesh" (Kim & Yoon
//! §II.4). The adaptive horizontal stride (jump past the busy submesh that
//! blocks a frame) never skips a feasible base, so the result is exactly
//! the first free a×b frame in row-major order and, only if none exists
//! anywhere, the first free b×a frame (docs/baselines.md#adaptive-scan). It is therefore
//! computed with the same one-pass coverage search as
//! [`FirstFit`](super::FirstFit) (`search=fast` on row bit-words by
//! default, `search=literal` node by node); the literal scan is kept as a test
//! oracle. Complete recognition; with `rotate == false` only a×b is tried.
//!
//! ```
//! use partalloc_allocators::{mesh::AdaptiveScan, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! // docs/baselines.md#adaptive-scan: 4×4 mesh, busy column x = 2; no 4×2 fits, so 2×4.
//! let mut a = AdaptiveScan::new("mesh:4x4".parse()?)?;
//! a.mark_faulty(2)?; a.mark_faulty(6)?; a.mark_faulty(10)?; a.mark_faulty(14)?;
//! let g = a.allocate(&Request::boxed(&[4, 2])?.any_orientation())?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0], &[2, 4])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::first_fit::FirstFree;
use super::scan::{SEARCH_PARAM, search_param};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

pub(super) const NAME: &str = "adaptive-scan";

/// Adaptive Scan: first fit over a×b, then over b×a (First Fit's search
/// with rotation, [`FirstFree`]).
pub type AdaptiveScan = FirstFree<true>;

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "first free a×b submesh in row-major order, else the first b×a (complete)",
        source: "Ding & Bhuyan 1993, as described by Kim & Yoon §II.4; docs/baselines.md#adaptive-scan",
        params: &[SEARCH_PARAM],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        Ok(Box::new(
            AdaptiveScan::new(t.clone())?.with_search(search_param(spec)?),
        ))
    },
};
