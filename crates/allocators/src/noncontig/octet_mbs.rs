//! Octet MBS: the multiple buddy strategy with cubes (PReMAS's and SST's
//! `OctetMBSAllocator`, the 3-D variant of Lo et al.'s MBS).
//!
//! The blocks are cubes of power-of-two side, each split into its eight
//! octants; a request is written in base 8 and served as in [`Mbs`]
//! (mechanics in [`buddy`](super::buddy)).
//!
//! Initial division (PReMAS, SST): the largest power-of-two cube that fits
//! the region's shortest side goes at its low corner; then the region
//! beside it along x (as deep and high as the cube), the slab beside both
//! along y (as high as the cube) and the rest above along z are divided the
//! same way. On a 2-D mesh (one plane) every cube is a single node, so
//! octet MBS grants the free nodes with the lowest x, then y — PReMAS does
//! the same; [`Mbs`] is the strategy for planes.
//!
//! [`Mbs`]: super::Mbs
//!
//! ```
//! use partalloc_allocators::{noncontig::OctetMbs, Allocator, Request};
//! let mut o = OctetMbs::new("mesh:4x4x4".parse()?)?;
//! // 10 = 1·8 + 2·1 in base 8: one 2×2×2 cube and two single nodes.
//! let g = o.allocate(&Request::nodes(10))?;
//! assert_eq!(
//!     g.partition().to_string(),
//!     "⟨0,0,0⟩⟨1,1,1⟩ ∪ ⟨0,0,2⟩⟨0,0,2⟩ ∪ ⟨0,0,3⟩⟨0,0,3⟩"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::Topology;

use super::buddy::{BlockTree, TreeBuilder, buddy_allocator};
use super::{box3, grid3, pow2_floor};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

const NAME: &str = "octet-mbs";

buddy_allocator! {
    /// The multiple buddy strategy with power-of-two cubes.
    OctetMbs {
        name: NAME,
        tree: cube_tree,
        new: "Octet MBS on `topology`, a mesh or torus (wrap unused) of one to three dimensions.",
        free_blocks: "The free blocks of each size, smallest size first, each list in the order the strategy takes them.",
        initial_blocks: "The cubes of the initial division.",
    }
}

fn cube_tree(strategy: &'static str, topology: &Topology) -> Result<BlockTree, BuildError> {
    let (dims, sides) = grid3(strategy, topology)?;
    super::buddy::check_size(strategy, topology, sides)?;
    let mut b = TreeBuilder::default();
    let mut regions = vec![(sides, [0u32; 3])];
    let mut cubes = Vec::new();
    while let Some(([w, h, d], [x, y, z])) = regions.pop() {
        let s = pow2_floor(w.min(h).min(d));
        let root = b.add(box3(strategy, topology, dims, [x, y, z], [s, s, s])?, None);
        cubes.push((root, [x, y, z], s));
        if w > s {
            regions.push(([w - s, s, s], [x + s, y, z]));
        }
        if h > s {
            regions.push(([w, h - s, s], [x, y + s, z]));
        }
        if d > s {
            regions.push(([w, h, d - s], [x, y, z + s]));
        }
    }
    while let Some((parent, [x, y, z], s)) = cubes.pop() {
        if s == 1 {
            continue;
        }
        let t = s / 2;
        for oct in 0..8u32 {
            let c = [
                x + t * (oct & 1),
                y + t * (oct >> 1 & 1),
                z + t * (oct >> 2),
            ];
            let id = b.add(box3(strategy, topology, dims, c, [t, t, t])?, Some(parent));
            cubes.push((id, c, t));
        }
    }
    BlockTree::finish(strategy, topology, sides, b)
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "multiple buddy strategy with power-of-two cubes split in octants; the request in base 8 (non-contiguous)",
        source: "Lo et al. 1997 MBS in 3-D as in PReMAS and SST (OctetMBSAllocator); docs/baselines.md#octet-mbs",
        params: &[],
        topologies: super::GRID_KINDS,
    },
    build: |t, _| Ok(Box::new(OctetMbs::new(t.clone())?)),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_division_follows_premas() {
        let roots = |t: &str| {
            let mut v: Vec<String> = OctetMbs::new(t.parse().unwrap())
                .unwrap()
                .initial_blocks()
                .iter()
                .map(ToString::to_string)
                .collect();
            v.sort();
            v
        };
        assert_eq!(roots("mesh:8x8x8"), ["⟨0,0,0⟩⟨7,7,7⟩"]);
        // 6×4×4: a 4-cube, the 2×4×4 region beside it (two 2-cubes).
        assert_eq!(
            roots("mesh:6x4x4"),
            [
                "⟨0,0,0⟩⟨3,3,3⟩",
                "⟨4,0,0⟩⟨5,1,1⟩",
                "⟨4,0,2⟩⟨5,1,3⟩",
                "⟨4,2,0⟩⟨5,3,1⟩",
                "⟨4,2,2⟩⟨5,3,3⟩"
            ]
        );
        // A plane: single nodes only.
        let o = OctetMbs::new("mesh:3x2".parse().unwrap()).unwrap();
        assert_eq!(o.initial_blocks().len(), 6);
        assert!(o.initial_blocks().iter().all(|b| b.volume() == 1));
    }
}
