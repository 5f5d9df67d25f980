//! Granular MBS: the multiple buddy strategy over a binary tree of blocks
//! (PReMAS's and SST's `GranularMBSAllocator`).
//!
//! Instead of Lo et al.'s squares, the blocks are built bottom up: every
//! node starts as a 1×1×1 block, and blocks of equal shape that sit side by
//! side are merged in pairs, along x, then y, then z, over and over, until
//! no two merge. Every block is thus split in two halves, its sizes are
//! powers of two, a request is written in base 2, and the rest is [`Mbs`]
//! (mechanics in [`buddy`](super::buddy)). On a power-of-two square the
//! blocks alternate between squares and 2:1 rectangles (1×1, 2×1, 2×2,
//! 4×2, …), so a request gets twice as many block sizes to fit as in MBS.
//!
//! The merge passes are PReMAS's, literally, since their order decides
//! which blocks pair up on sides that are not powers of two: a pass runs
//! x, y, z in turn; for each it visits the block sizes from the largest
//! down, and within a size the blocks by lowest x, then y, then z; a block
//! is merged with the block of equal extents right after it along that
//! axis, if that one is still unmerged; a new block waits for the next
//! axis or pass. Passes repeat until one merges nothing.
//!
//! [`Mbs`]: super::Mbs
//!
//! ```
//! use partalloc_allocators::{noncontig::GranularMbs, Allocator, Request};
//! let mut g = GranularMbs::new("mesh:4x4".parse()?)?;
//! // 11 = 8 + 2 + 1: a 4×2, a 2×1 and a single node.
//! let a = g.allocate(&Request::nodes(11))?;
//! assert_eq!(
//!     a.partition().to_string(),
//!     "⟨0,0⟩⟨3,1⟩ ∪ ⟨0,2⟩⟨1,2⟩ ∪ ⟨0,3⟩⟨0,3⟩"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use partalloc_topology::Topology;

use super::buddy::{BlockTree, TreeBuilder, buddy_allocator};
use super::{box3, grid3};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};

const NAME: &str = "granular-mbs";

buddy_allocator! {
    /// The multiple buddy strategy over pairwise-merged blocks.
    GranularMbs {
        name: NAME,
        tree: merged_tree,
        new: "Granular MBS on `topology`, a mesh or torus (wrap unused) of one to three dimensions.",
        free_blocks: "The free blocks of each size, smallest size first, each list in the order the strategy takes them.",
        initial_blocks: "The blocks left when the merging stops (the roots of the tree).",
    }
}

/// A block during the merging: base x, y, z, then extents; ordered as the
/// merge visits blocks of one size.
type Key = [u32; 6];

fn merged_tree(strategy: &'static str, topology: &Topology) -> Result<BlockTree, BuildError> {
    let (dims, sides) = grid3(strategy, topology)?;
    super::buddy::check_size(strategy, topology, sides)?;
    let mut b = TreeBuilder::default();
    let mk = |b: &mut TreeBuilder, k: &Key| -> Result<u32, BuildError> {
        let g = box3(
            strategy,
            topology,
            dims,
            [k[0], k[1], k[2]],
            [k[3], k[4], k[5]],
        )?;
        Ok(b.add(g, None))
    };
    // Unmerged blocks by size, each size's blocks by key.
    let mut sets: BTreeMap<u64, BTreeMap<Key, u32>> = BTreeMap::new();
    let singles = sets.entry(1).or_default();
    for z in 0..sides[2] {
        for y in 0..sides[1] {
            for x in 0..sides[0] {
                let k = [x, y, z, 1, 1, 1];
                singles.insert(k, mk(&mut b, &k)?);
            }
        }
    }
    loop {
        let mut merged = false;
        // Blocks already merged as the second of a pair, dropped when the
        // visit reaches them.
        let mut gone: BTreeSet<Key> = BTreeSet::new();
        for axis in 0..3 {
            let sizes: Vec<u64> = sets.keys().rev().copied().collect();
            for size in sizes {
                let keys: Vec<Key> = sets
                    .get(&size)
                    .map(|s| s.keys().copied().collect())
                    .unwrap_or_default();
                for first in keys {
                    let Some(set) = sets.get_mut(&size) else {
                        break;
                    };
                    if gone.remove(&first) {
                        set.remove(&first);
                        continue;
                    }
                    let mut second = first;
                    second[axis] += first[3 + axis];
                    let (Some(&a), Some(&c)) = (set.get(&first), set.get(&second)) else {
                        continue;
                    };
                    set.remove(&first);
                    gone.insert(second);
                    let mut joined = first;
                    joined[3 + axis] *= 2;
                    let id = mk(&mut b, &joined)?;
                    b.set_parent(a, id);
                    b.set_parent(c, id);
                    sets.entry(2 * size).or_default().insert(joined, id);
                    merged = true;
                }
            }
        }
        if !merged {
            break;
        }
    }
    BlockTree::finish(strategy, topology, sides, b)
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "multiple buddy strategy over blocks merged pairwise along x, y, z; the request in base 2 (non-contiguous)",
        source: "MBS (Lo et al. 1997) with PReMAS's and SST's granular blocks (GranularMBSAllocator); docs/baselines.md#granular-mbs",
        params: &[],
        topologies: super::GRID_KINDS,
    },
    build: |t, _| Ok(Box::new(GranularMbs::new(t.clone())?)),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(t: &str) -> Vec<String> {
        let mut v: Vec<String> = GranularMbs::new(t.parse().unwrap())
            .unwrap()
            .initial_blocks()
            .iter()
            .map(ToString::to_string)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn merging_builds_alternating_halves() {
        assert_eq!(roots("mesh:8x8"), ["⟨0,0⟩⟨7,7⟩"]);
        let g = GranularMbs::new("mesh:8x8".parse().unwrap()).unwrap();
        assert_eq!(g.core.tree().sizes(), [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(roots("mesh:4x4x4"), ["⟨0,0,0⟩⟨3,3,3⟩"]);
        // 3×2: the first pass pairs columns 0–1 along x (two 2×1), then
        // those along y (a 2×2), and column 2's two nodes along y.
        assert_eq!(roots("mesh:3x2"), ["⟨0,0⟩⟨1,1⟩", "⟨2,0⟩⟨2,1⟩"]);
        // 6×1: three 2×1 after the first pass, then ⟨0,0⟩⟨3,0⟩ and the
        // last 2×1 stays.
        assert_eq!(roots("mesh:6x1"), ["⟨0,0⟩⟨3,0⟩", "⟨4,0⟩⟨5,0⟩"]);
    }
}
