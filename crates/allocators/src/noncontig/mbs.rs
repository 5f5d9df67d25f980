//! MBS, the multiple buddy strategy (Lo, Windisch, Liu & Nitzberg,
//! "Noncontiguous processor allocation algorithms for mesh-connected
//! multicomputers", IEEE TPDS 8(7), 1997).
//!
//! The mesh is divided once into square blocks whose sides are powers of
//! two; each block is the root of a quad tree of buddies down to single
//! nodes. A request for n nodes is written in base 4, n = Σ dᵢ·4ⁱ, and
//! served with dᵢ free blocks of side 2ⁱ from the largest down: a missing
//! block is split off a larger free one (buddy style), or, when none is
//! larger, asked for as four blocks of the next smaller side. So MBS grants
//! exactly n nodes whenever n are free, as a few square blocks. The
//! mechanics are in [`buddy`](super::buddy).
//!
//! Where the paper is silent this follows PReMAS and SST, which agree
//! (docs/baselines.md#mbs):
//! - **Initial division.** The largest power-of-two square that fits the
//!   region's shorter side goes at its lower-left corner; then the strip to
//!   its right (the region's full height) and the strip above it (the
//!   square's width) are divided the same way. A 12×12 mesh is one 8×8,
//!   then four 4×4s to its right and above.
//! - **Which free block.** The one with the lowest x, then y, then z.
//! - **Three dimensions.** Layered: every xy-plane is divided as above and
//!   blocks never span planes (PReMAS's and SST's MBS; [`OctetMbs`] is the
//!   cube variant).
//!
//! [`OctetMbs`]: super::OctetMbs
//!
//! ```
//! use partalloc_allocators::{noncontig::Mbs, Allocator, Request};
//! let mut mbs = Mbs::new("mesh:8x8".parse()?)?;
//! // 21 = 1·16 + 1·4 + 1·1.
//! let g = mbs.allocate(&Request::nodes(21))?;
//! assert_eq!(
//!     g.partition().to_string(),
//!     "⟨0,0⟩⟨3,3⟩ ∪ ⟨0,4⟩⟨1,5⟩ ∪ ⟨0,6⟩⟨0,6⟩"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::Topology;

use super::buddy::{BlockTree, TreeBuilder, buddy_allocator};
use super::{box3, grid3, pow2_floor};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

const NAME: &str = "mbs";

buddy_allocator! {
    /// The multiple buddy strategy on a 1- to 3-D mesh (layered in 3-D).
    Mbs {
        name: NAME,
        tree: layered_tree,
        new: "MBS on `topology`, a mesh or torus (wrap unused) of one to three dimensions.",
        free_blocks: "The free blocks of each size, smallest size first, each list in the order MBS takes them (the paper's free block record).",
        initial_blocks: "The blocks of the initial division.",
    }
}

/// The layered tree: per xy-plane, the initial division into power-of-two
/// squares, each with its quad tree down to single nodes.
fn layered_tree(strategy: &'static str, topology: &Topology) -> Result<BlockTree, BuildError> {
    let (dims, sides) = grid3(strategy, topology)?;
    super::buddy::check_size(strategy, topology, sides)?;
    let mut b = TreeBuilder::default();
    // Regions (width, height, x, y) still to divide; the order they are
    // divided in does not matter, only the blocks.
    let mut regions = vec![(sides[0], sides[1], 0u32, 0u32)];
    let mut squares = Vec::new();
    while let Some((w, h, x, y)) = regions.pop() {
        let s = pow2_floor(w.min(h));
        for z in 0..sides[2] {
            let root = b.add(box3(strategy, topology, dims, [x, y, z], [s, s, 1])?, None);
            squares.push((root, [x, y, z], s));
        }
        if w > s {
            regions.push((w - s, h, x + s, y));
        }
        if h > s {
            regions.push((s, h - s, x, y + s));
        }
    }
    while let Some((parent, [x, y, z], s)) = squares.pop() {
        if s == 1 {
            continue;
        }
        let t = s / 2;
        for (cx, cy) in [(x, y), (x, y + t), (x + t, y), (x + t, y + t)] {
            let c = b.add(
                box3(strategy, topology, dims, [cx, cy, z], [t, t, 1])?,
                Some(parent),
            );
            squares.push((c, [cx, cy, z], t));
        }
    }
    BlockTree::finish(strategy, topology, sides, b)
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "multiple buddy strategy: the request in base 4, served by free power-of-two square blocks (non-contiguous)",
        source: "Lo, Windisch, Liu & Nitzberg, IEEE TPDS 8(7) 1997; open choices as PReMAS and SST, docs/baselines.md#mbs",
        params: &[],
        topologies: super::GRID_KINDS,
    },
    build: |t, _| Ok(Box::new(Mbs::new(t.clone())?)),
};

#[cfg(test)]
mod tests {
    use partalloc_topology::GridBox;

    use super::*;
    use crate::{Allocator, Request};

    fn squares(mbs: &Mbs) -> Vec<String> {
        mbs.initial_blocks()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn initial_division_follows_premas() {
        // 12×12: an 8×8, then the 4×12 strip on its right (three 4×4s), then
        // the 8×4 strip above it (two 4×4s).
        let mut got = squares(&Mbs::new("mesh:12x12".parse().unwrap()).unwrap());
        got.sort();
        let mut want = vec![
            "⟨0,0⟩⟨7,7⟩",
            "⟨8,0⟩⟨11,3⟩",
            "⟨8,4⟩⟨11,7⟩",
            "⟨8,8⟩⟨11,11⟩",
            "⟨0,8⟩⟨3,11⟩",
            "⟨4,8⟩⟨7,11⟩",
        ];
        want.sort_unstable();
        assert_eq!(got, want);
        // 5×3: a 2×2, the 3×3 strip right of it (2×2, then 1×1s), the
        // 2×1 strip above it (two 1×1).
        let m = Mbs::new("mesh:5x3".parse().unwrap()).unwrap();
        let sizes: Vec<u64> = m.initial_blocks().iter().map(GridBox::volume).collect();
        assert_eq!(sizes.iter().sum::<u64>(), 15);
        assert_eq!(sizes.iter().filter(|&&v| v == 4).count(), 2);
        // Layered: one division per plane of a 3-D mesh.
        let m = Mbs::new("mesh:4x4x3".parse().unwrap()).unwrap();
        assert_eq!(
            squares(&m),
            ["⟨0,0,0⟩⟨3,3,0⟩", "⟨0,0,1⟩⟨3,3,1⟩", "⟨0,0,2⟩⟨3,3,2⟩"]
        );
    }

    #[test]
    fn premas_small_run_on_an_8x8() {
        // Requests of 4, 7, 16 and 3 nodes in turn on an empty 8×8: the node
        // ids PReMAS logged for them (`logs=visual`, mesh[8,8,1], MBS).
        let mut mbs = Mbs::new("mesh:8x8".parse().unwrap()).unwrap();
        let topo = mbs.topology().clone();
        let mut ids = |n: u32| {
            let g = mbs.allocate(&Request::nodes(n)).unwrap();
            let mut v = g.partition().node_list(&topo).unwrap();
            v.sort_unstable();
            (g, v)
        };
        let (_, a) = ids(4);
        assert_eq!(a, [0, 1, 8, 9]);
        let (g7, b) = ids(7);
        assert_eq!(b, [2, 3, 10, 16, 17, 24, 25]);
        let (_, c) = ids(16);
        assert_eq!(
            c,
            [
                32, 33, 34, 35, 40, 41, 42, 43, 48, 49, 50, 51, 56, 57, 58, 59
            ]
        );
        let (_, d) = ids(3);
        assert_eq!(d, [11, 18, 26]);
        // Releasing the 7 merges nothing: each of its blocks has a busy
        // buddy (⟨0,0⟩ and ⟨3,1⟩).
        mbs.release(&g7).unwrap();
        let fbr: Vec<(u64, Vec<String>)> = mbs
            .free_blocks()
            .into_iter()
            .map(|(s, l)| (s, l.iter().map(ToString::to_string).collect()))
            .collect();
        let list = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            fbr,
            [
                (
                    1,
                    list(&[
                        "⟨2,0⟩⟨2,0⟩",
                        "⟨2,1⟩⟨2,1⟩",
                        "⟨3,0⟩⟨3,0⟩",
                        "⟨3,2⟩⟨3,2⟩",
                        "⟨3,3⟩⟨3,3⟩"
                    ])
                ),
                (4, list(&["⟨0,2⟩⟨1,3⟩"])),
                (16, list(&["⟨4,0⟩⟨7,3⟩", "⟨4,4⟩⟨7,7⟩"])),
                (64, list(&[])),
            ]
        );
    }
}
