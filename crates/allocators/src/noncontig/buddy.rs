//! The machinery of the multiple buddy strategy, shared by [`Mbs`],
//! [`GranularMbs`] and [`OctetMbs`]: a fixed tree of blocks, one free list
//! per block size (the paper's free block record, FBR), the request's
//! decomposition into block sizes (the request block record, RBR), buddy
//! splitting and merging. The three strategies differ only in the tree.
//!
//! [`Mbs`]: super::Mbs
//! [`GranularMbs`]: super::GranularMbs
//! [`OctetMbs`]: super::OctetMbs
//!
//! Allocation of n nodes (Lo et al. 1997, MBS; the choices the paper leaves
//! open are PReMAS's and SST's, which agree, see docs/baselines.md#mbs):
//! 1. factor n greedily into block sizes: the largest size ≤ what is left,
//!    until nothing is (base 4 for square blocks, base 8 for cubes, base 2
//!    for the granular tree; the count of the largest size is unbounded);
//! 2. take the largest size still requested: if its free list holds a
//!    block, grant the first; otherwise split the first block of the
//!    smallest larger size that has one, down to this size (each split
//!    lists all the children, the first child is split next); if no larger
//!    block is free, replace one request of this size by requests for its
//!    children's size (4, 8 or 2 of them); repeat until n nodes are granted.
//!
//! "First" is the least block in the order (x, y, z of the base, then the
//! extents): the lowest x first, as PReMAS's and SST's block sets are
//! sorted. Release puts each block back and merges a block's parent while
//! all its children are free; the free lists are therefore always the
//! maximal free blocks of the tree, a function of the free nodes alone.
//!
//! Faulty nodes (not in the paper): a faulty node is a 1×1×1 block that is
//! never free. Marking one splits the free block holding it down to it.

use std::sync::Arc;

use partalloc_topology::{FreeSet, GridBox, NodeId, Topology};

use crate::{
    AllocError, BuildError, FaultError, Grant, GrantLedger, Occupancy, Partition, ReleaseError,
    Request,
};

/// "No block" in parent links.
const NONE: u32 = u32::MAX;

/// One block of the tree.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    gbox: GridBox,
    parent: u32,
    children: (u32, u32),
    rank: u32,
    /// Position in its rank's order.
    pos: u32,
}

/// A block tree as a strategy builds it: blocks with parent links, then the
/// roots. Children must be smaller than their parent and exactly tile it.
#[derive(Debug, Default)]
pub(crate) struct TreeBuilder {
    boxes: Vec<GridBox>,
    parents: Vec<u32>,
}

impl TreeBuilder {
    /// Adds a block under `parent` (`None` for a root); returns its index.
    pub(crate) fn add(&mut self, gbox: GridBox, parent: Option<u32>) -> u32 {
        self.boxes.push(gbox);
        self.parents.push(parent.unwrap_or(NONE));
        // At most twice the machine's nodes, which fit u32 with room.
        (self.boxes.len() - 1) as u32
    }

    /// Sets the parent of an existing block (the granular tree is built
    /// bottom up).
    pub(crate) fn set_parent(&mut self, child: u32, parent: u32) {
        self.parents[child as usize] = parent;
    }
}

/// The fixed tree of blocks and its size classes (ranks).
#[derive(Debug)]
pub(crate) struct BlockTree {
    blocks: Vec<Block>,
    child_list: Vec<u32>,
    /// Block size of each rank, ascending (PReMAS's `ordering`).
    sizes: Vec<u64>,
    /// Per rank, its blocks in the order "first" refers to.
    by_rank: Vec<Vec<u32>>,
    /// Per node, its 1×1×1 block.
    leaf_of: Vec<u32>,
    roots: Vec<u32>,
    /// Sides of the machine, padded to three with 1s.
    sides: [u32; 3],
}

/// The most nodes a multiple-buddy strategy is built for. Its block tree
/// holds every block down to single nodes (about 4/3 blocks per node, some
/// 300 bytes per node in all), so a machine of this size already needs
/// about 80 MB and larger ones are refused rather than allocated.
pub const MAX_BUDDY_NODES: u64 = 1 << 18;

/// Refuses a machine of more than [`MAX_BUDDY_NODES`] nodes, before its
/// tree is built.
pub(crate) fn check_size(
    strategy: &'static str,
    topology: &Topology,
    sides: [u32; 3],
) -> Result<(), BuildError> {
    let nodes: u64 = sides.iter().map(|&s| u64::from(s)).product();
    if nodes > MAX_BUDDY_NODES {
        return Err(BuildError::UnsuitableTopology {
            strategy,
            topology: topology.to_string(),
            reason: format!(
                "it has {nodes} nodes; the multiple-buddy block tree is built down to single nodes and runs on at most {MAX_BUDDY_NODES}"
            ),
        });
    }
    Ok(())
}

impl BlockTree {
    /// Finishes a tree: ranks by size, the order within each rank, child
    /// lists and the node → leaf map; checks that the roots tile the
    /// machine, that children tile their parent and sit one rank below it,
    /// and that every node has a leaf.
    pub(crate) fn finish(
        strategy: &'static str,
        topology: &Topology,
        sides: [u32; 3],
        b: TreeBuilder,
    ) -> Result<Self, BuildError> {
        let bad = |reason: String| BuildError::UnsuitableTopology {
            strategy,
            topology: topology.to_string(),
            reason,
        };
        let n = b.boxes.len();
        let mut sizes: Vec<u64> = b.boxes.iter().map(GridBox::volume).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let rank_of = |v: u64| sizes.binary_search(&v).unwrap_or(0) as u32;
        let mut kids: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, &p) in b.parents.iter().enumerate() {
            if p == NONE {
                roots.push(i as u32);
            } else {
                kids[p as usize].push(i as u32);
            }
        }
        let mut blocks = Vec::with_capacity(n);
        let mut child_list = Vec::with_capacity(n);
        for (i, gbox) in b.boxes.iter().enumerate() {
            let start = child_list.len() as u32;
            child_list.extend_from_slice(&kids[i]);
            blocks.push(Block {
                gbox: *gbox,
                parent: b.parents[i],
                children: (start, child_list.len() as u32),
                rank: rank_of(gbox.volume()),
                pos: 0,
            });
        }
        let mut by_rank = vec![Vec::new(); sizes.len()];
        for (i, blk) in blocks.iter().enumerate() {
            by_rank[blk.rank as usize].push(i as u32);
        }
        for list in &mut by_rank {
            list.sort_by_key(|&i| take_order(&blocks[i as usize].gbox));
            for (p, &i) in list.iter().enumerate() {
                blocks[i as usize].pos = p as u32;
            }
        }
        let nodes = sides.iter().map(|&s| s as usize).product::<usize>();
        let mut leaf_of = vec![NONE; nodes];
        let mut covered = 0u64;
        for (i, blk) in blocks.iter().enumerate() {
            let kids = &child_list[blk.children.0 as usize..blk.children.1 as usize];
            if kids.is_empty() {
                if blk.gbox.volume() != 1 {
                    return Err(bad(format!("block {} has no children", blk.gbox)));
                }
                let id = blk.gbox.lo(0) as usize
                    + sides[0] as usize
                        * (blk.gbox.lo(1) as usize + sides[1] as usize * blk.gbox.lo(2) as usize);
                leaf_of[id] = i as u32;
            } else {
                let vol: u64 = kids.iter().map(|&c| blocks[c as usize].gbox.volume()).sum();
                let inside = kids.iter().all(|&c| {
                    let k = &blocks[c as usize];
                    blk.gbox.contains_box(&k.gbox) && k.rank + 1 == blk.rank
                });
                if vol != blk.gbox.volume() || !inside {
                    return Err(bad(format!(
                        "the children of block {} do not tile it",
                        blk.gbox
                    )));
                }
            }
        }
        for &r in &roots {
            covered += blocks[r as usize].gbox.volume();
        }
        if covered != nodes as u64 || leaf_of.contains(&NONE) {
            return Err(bad("the blocks do not tile the machine".to_owned()));
        }
        Ok(Self {
            blocks,
            child_list,
            sizes,
            by_rank,
            leaf_of,
            roots,
            sides,
        })
    }

    fn children(&self, b: u32) -> &[u32] {
        let (s, e) = self.blocks[b as usize].children;
        &self.child_list[s as usize..e as usize]
    }

    /// The block sizes, ascending.
    #[cfg(test)]
    pub(crate) fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// The root blocks.
    pub(crate) fn roots(&self) -> impl Iterator<Item = &GridBox> {
        self.roots.iter().map(|&r| &self.blocks[r as usize].gbox)
    }

    fn contains_node(&self, b: u32, node: NodeId) -> bool {
        let g = &self.blocks[b as usize].gbox;
        let [sx, sy, _] = self.sides;
        let c = [node % sx, node / sx % sy, node / (sx * sy)];
        (0..3).all(|d| g.lo(d) <= c[d] && c[d] <= g.hi(d))
    }
}

/// The state of one multiple-buddy allocator: the tree, the free lists,
/// the node states and the live grants.
#[derive(Debug, Clone)]
pub(crate) struct BuddyCore {
    pub(crate) strategy: &'static str,
    pub(crate) topology: Topology,
    tree: Arc<BlockTree>,
    /// Per rank, the free blocks by position.
    free: Vec<FreeSet>,
    pub(crate) occupancy: Occupancy,
    pub(crate) ledger: GrantLedger<Vec<u32>>,
    /// Scratch: requested blocks per rank.
    rbr: Vec<u64>,
}

impl BuddyCore {
    /// A fresh allocator over `tree`: every root free.
    pub(crate) fn new(strategy: &'static str, topology: Topology, tree: BlockTree) -> Self {
        let mut free: Vec<FreeSet> = tree.by_rank.iter().map(|l| FreeSet::new(l.len())).collect();
        for &r in &tree.roots {
            let b = &tree.blocks[r as usize];
            // In range: positions index their rank's list.
            let _ = free[b.rank as usize].insert(b.pos as usize);
        }
        let ranks = tree.sizes.len();
        Self {
            strategy,
            occupancy: Occupancy::new(topology.num_nodes()),
            topology,
            tree: Arc::new(tree),
            free,
            ledger: GrantLedger::new(),
            rbr: vec![0; ranks],
        }
    }

    /// The tree.
    pub(crate) fn tree(&self) -> &BlockTree {
        &self.tree
    }

    fn is_free(&self, b: u32) -> bool {
        let blk = &self.tree.blocks[b as usize];
        self.free[blk.rank as usize].contains(blk.pos as usize)
    }

    fn set_free(&mut self, b: u32, free: bool) {
        let blk = &self.tree.blocks[b as usize];
        let list = &mut self.free[blk.rank as usize];
        // Positions are in range by construction.
        let _ = if free {
            list.insert(blk.pos as usize)
        } else {
            list.remove(blk.pos as usize)
        };
    }

    fn first_free(&self, rank: usize) -> Option<u32> {
        self.free[rank].first().map(|p| self.tree.by_rank[rank][p])
    }

    /// The free blocks of each size, smallest size first, each list in
    /// the order they would be taken (the FBR).
    pub(crate) fn free_blocks(&self) -> Vec<(u64, Vec<GridBox>)> {
        self.tree
            .sizes
            .iter()
            .enumerate()
            .map(|(r, &s)| {
                let list = self.free[r]
                    .iter()
                    .map(|p| self.tree.blocks[self.tree.by_rank[r][p] as usize].gbox)
                    .collect();
                (s, list)
            })
            .collect()
    }

    /// The node count of a request, validated: any request kind, 1 ..=
    /// the machine's nodes.
    pub(crate) fn want(&self, request: &Request) -> Result<u64, AllocError> {
        crate::allocator::wanted_nodes(request, self.topology.num_nodes())
    }

    pub(crate) fn no_room(&self, request: &Request) -> AllocError {
        AllocError::NoRoom {
            request: *request,
            free: self.occupancy.free_count(),
            total: self.topology.num_nodes(),
        }
    }

    /// Splits the first free block of the smallest size above `rank` that
    /// has one down to `rank`; false if no larger block is free.
    fn split_larger(&mut self, rank: usize) -> bool {
        let Some(mut r) = (rank + 1..self.free.len()).find(|&r| !self.free[r].is_empty()) else {
            return false;
        };
        while r > rank {
            let Some(b) = self.first_free(r) else {
                return false;
            };
            self.set_free(b, false);
            let tree = Arc::clone(&self.tree);
            for &c in tree.children(b) {
                self.set_free(c, true);
            }
            r -= 1;
        }
        true
    }

    /// Grants `want` nodes (the caller has checked that so many are
    /// available): the blocks in the order taken.
    pub(crate) fn allocate(&mut self, request: &Request, want: u64) -> Grant {
        self.rbr.iter_mut().for_each(|c| *c = 0);
        // Greedy factoring: the largest size ≤ what is left.
        let mut left = want;
        let mut top = 0;
        while left > 0 {
            let r = self
                .tree
                .sizes
                .partition_point(|&s| s <= left)
                .saturating_sub(1);
            let count = left / self.tree.sizes[r];
            self.rbr[r] += count;
            left -= count * self.tree.sizes[r];
            top = top.max(r);
        }
        let mut taken = Vec::new();
        let mut granted = 0u64;
        let mut r = top;
        while granted < want {
            // The largest size still requested (some is: the requested
            // sizes add up to what is not granted yet).
            while self.rbr[r] == 0 && r > 0 {
                r -= 1;
            }
            if let Some(b) = self.first_free(r) {
                self.set_free(b, false);
                taken.push(b);
                granted += self.tree.sizes[r];
                self.rbr[r] -= 1;
            } else if !self.split_larger(r) {
                // Ask for the children's size instead. At rank 0 (single
                // nodes) this cannot happen: the free blocks hold every
                // available node, and want of them are available.
                if r == 0 {
                    break;
                }
                self.rbr[r] -= 1;
                self.rbr[r - 1] += self.tree.sizes[r] / self.tree.sizes[r - 1];
            }
        }
        let mut boxes = Vec::with_capacity(taken.len());
        for &b in &taken {
            let g = self.tree.blocks[b as usize].gbox;
            self.mark(&g, true);
            boxes.push(g);
        }
        let id = self.ledger.issue(taken);
        Grant::new(id, Partition::Boxes(boxes), request.node_count())
    }

    /// Sets the node states of a block's nodes.
    fn mark(&mut self, g: &GridBox, busy: bool) {
        self.occupancy.set_box(self.tree.sides, g, busy);
    }

    /// Lists block `b` free and merges upwards while every child of the
    /// parent is free.
    fn free_and_merge(&mut self, mut b: u32) {
        self.set_free(b, true);
        let tree = Arc::clone(&self.tree);
        loop {
            let p = tree.blocks[b as usize].parent;
            if p == NONE || self.is_free(p) || !tree.children(p).iter().all(|&c| self.is_free(c)) {
                return;
            }
            for &c in tree.children(p) {
                self.set_free(c, false);
            }
            self.set_free(p, true);
            b = p;
        }
    }

    pub(crate) fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let taken = self.ledger.take(grant.id())?;
        for &b in &taken {
            let g = self.tree.blocks[b as usize].gbox;
            self.mark(&g, false);
        }
        for b in taken {
            self.free_and_merge(b);
        }
        Ok(())
    }

    pub(crate) fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        if !self.occupancy.mark_faulty(node)? {
            return Ok(());
        }
        let tree = Arc::clone(&self.tree);
        let leaf = tree.leaf_of[node as usize];
        // The free block that holds the node, then down to the node.
        let mut b = leaf;
        while !self.is_free(b) {
            b = tree.blocks[b as usize].parent;
            if b == NONE {
                // Unreachable: an available node lies in a free block.
                return Ok(());
            }
        }
        while b != leaf {
            self.set_free(b, false);
            let mut next = b;
            for &c in tree.children(b) {
                self.set_free(c, true);
                if tree.contains_node(c, node) {
                    next = c;
                }
            }
            b = next;
        }
        self.set_free(leaf, false);
        Ok(())
    }

    pub(crate) fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        if self.occupancy.repair(node)? {
            let leaf = self.tree.leaf_of[node as usize];
            self.free_and_merge(leaf);
        }
        Ok(())
    }
}

/// The order free blocks of one size are taken in: lowest x, then y, then
/// z, then the extents.
fn take_order(g: &GridBox) -> [u32; 6] {
    [
        g.lo(0),
        g.lo(1),
        g.lo(2),
        g.extent(0),
        g.extent(1),
        g.extent(2),
    ]
}

/// Declares a multiple-buddy strategy: the struct (the doc comments given
/// first) around a [`BuddyCore`], its constructor from the strategy's
/// block-tree builder `tree(name, &topology)`, its inspection methods (the
/// doc line of `new` and of `initial_blocks` given) and its
/// [`Allocator`](crate::Allocator) impl. The three strategies differ only in
/// the tree.
macro_rules! buddy_allocator {
    (
        $(#[$doc:meta])*
        $ty:ident {
            name: $name:expr,
            tree: $tree:path,
            new: $new_doc:literal,
            free_blocks: $free_doc:literal,
            initial_blocks: $init_doc:literal $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $ty {
            pub(super) core: $crate::noncontig::buddy::BuddyCore,
        }

        impl $ty {
            #[doc = $new_doc]
            ///
            /// # Errors
            /// [`BuildError::UnsuitableTopology`](crate::BuildError::UnsuitableTopology)
            /// for any other machine.
            pub fn new(topology: partalloc_topology::Topology) -> Result<Self, $crate::BuildError> {
                let tree = $tree($name, &topology)?;
                Ok(Self {
                    core: $crate::noncontig::buddy::BuddyCore::new($name, topology, tree),
                })
            }

            #[doc = $free_doc]
            #[must_use]
            pub fn free_blocks(&self) -> Vec<(u64, Vec<partalloc_topology::GridBox>)> {
                self.core.free_blocks()
            }

            #[doc = $init_doc]
            #[must_use]
            pub fn initial_blocks(&self) -> Vec<partalloc_topology::GridBox> {
                self.core.tree().roots().copied().collect()
            }
        }

        impl $crate::Allocator for $ty {
            fn name(&self) -> String {
                self.core.strategy.to_owned()
            }

            fn topology(&self) -> &partalloc_topology::Topology {
                &self.core.topology
            }

            fn allocate(
                &mut self,
                request: &$crate::Request,
            ) -> Result<$crate::Grant, $crate::AllocError> {
                let want = self.core.want(request)?;
                if want > self.core.occupancy.free_count() as u64 {
                    return Err(self.core.no_room(request));
                }
                Ok(self.core.allocate(request, want))
            }

            fn can_allocate(&self, request: &$crate::Request) -> Result<bool, $crate::AllocError> {
                let want = self.core.want(request)?;
                Ok(want <= self.core.occupancy.free_count() as u64)
            }

            fn release(&mut self, grant: &$crate::Grant) -> Result<(), $crate::ReleaseError> {
                self.core.release(grant)
            }

            $crate::occupancy::occupancy_methods!(core.occupancy, core.ledger);

            fn mark_faulty(
                &mut self,
                node: partalloc_topology::NodeId,
            ) -> Result<(), $crate::FaultError> {
                self.core.mark_faulty(node)
            }

            fn repair(
                &mut self,
                node: partalloc_topology::NodeId,
            ) -> Result<(), $crate::FaultError> {
                self.core.repair(node)
            }
        }
    };
}
pub(crate) use buddy_allocator;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;
    use crate::noncontig::{GranularMbs, Mbs, OctetMbs};

    /// PReMAS's `MBSAllocator`, literally: the FBR as one ordered set per
    /// size, the RBR as an ordered map, `splitLarger` recursive,
    /// `splitRequest`, and release that lists every block first and then
    /// runs `mergeBlock` on each one's parent, in block order.
    struct Literal {
        tree: Arc<BlockTree>,
        fbr: Vec<BTreeSet<([u32; 6], u32)>>,
        live: Vec<Vec<u32>>,
    }

    impl Literal {
        fn new(core: &BuddyCore) -> Self {
            let tree = Arc::clone(&core.tree);
            let mut fbr = vec![BTreeSet::new(); tree.sizes.len()];
            for &r in &tree.roots {
                fbr[tree.blocks[r as usize].rank as usize].insert(Self::key(&tree, r));
            }
            Self {
                tree,
                fbr,
                live: Vec::new(),
            }
        }

        fn key(tree: &BlockTree, b: u32) -> ([u32; 6], u32) {
            (take_order(&tree.blocks[b as usize].gbox), b)
        }

        fn rank(&self, b: u32) -> usize {
            self.tree.blocks[b as usize].rank as usize
        }

        fn split_larger(&mut self, rank: usize) -> bool {
            if rank + 1 >= self.fbr.len() {
                return false;
            }
            if self.fbr[rank + 1].is_empty() && !self.split_larger(rank + 1) {
                return false;
            }
            let to_split = *self.fbr[rank + 1].iter().next().unwrap();
            for &c in self.tree.clone().children(to_split.1) {
                self.fbr[rank].insert(Self::key(&self.tree, c));
            }
            self.fbr[rank + 1].remove(&to_split);
            true
        }

        fn allocate(&mut self, want: u64) -> Vec<u32> {
            let sizes = self.tree.sizes.clone();
            let mut rbr: BTreeMap<usize, u64> = BTreeMap::new();
            let mut procs = 0;
            while procs < want {
                let r = sizes.iter().rposition(|&s| s <= want - procs).unwrap();
                *rbr.entry(r).or_default() += 1;
                procs += sizes[r];
            }
            let mut got = Vec::new();
            let mut allocated = 0;
            while allocated < want {
                let (&r, _) = rbr.iter().next_back().unwrap();
                if let Some(&b) = self.fbr[r].iter().next() {
                    self.fbr[r].remove(&b);
                    got.push(b.1);
                    allocated += sizes[r];
                    let c = rbr.get_mut(&r).unwrap();
                    *c -= 1;
                    if *c == 0 {
                        rbr.remove(&r);
                    }
                } else if !self.split_larger(r) {
                    let c = rbr.get_mut(&r).unwrap();
                    *c -= 1;
                    if *c == 0 {
                        rbr.remove(&r);
                    }
                    *rbr.entry(r - 1).or_default() += sizes[r] / sizes[r - 1];
                }
            }
            got
        }

        fn merge(&mut self, p: u32) {
            if p == NONE {
                return;
            }
            let key = Self::key(&self.tree, p);
            if self.fbr[self.rank(p)].contains(&key) {
                return;
            }
            let tree = self.tree.clone();
            let kids = tree.children(p);
            if !kids
                .iter()
                .all(|&c| self.fbr[self.rank(c)].contains(&Self::key(&tree, c)))
            {
                return;
            }
            for &c in kids {
                let r = self.rank(c);
                self.fbr[r].remove(&Self::key(&tree, c));
            }
            let r = self.rank(p);
            self.fbr[r].insert(key);
            self.merge(tree.blocks[p as usize].parent);
        }

        fn release(&mut self, blocks: &[u32]) {
            let mut sorted: Vec<u32> = blocks.to_vec();
            // Block order: size, then base, then extents.
            sorted.sort_by_key(|&b| {
                (
                    self.tree.blocks[b as usize].gbox.volume(),
                    Self::key(&self.tree, b).0,
                )
            });
            for &b in &sorted {
                let r = self.rank(b);
                self.fbr[r].insert(Self::key(&self.tree, b));
            }
            for &b in &sorted {
                self.merge(self.tree.blocks[b as usize].parent);
            }
        }

        fn fbr_boxes(&self) -> Vec<(u64, Vec<GridBox>)> {
            self.fbr
                .iter()
                .enumerate()
                .map(|(r, set)| {
                    (
                        self.tree.sizes[r],
                        set.iter()
                            .map(|&(_, b)| self.tree.blocks[b as usize].gbox)
                            .collect(),
                    )
                })
                .collect()
        }
    }

    fn core_of(name: &str, topo: &Topology) -> BuddyCore {
        let t = topo.clone();
        match name {
            "mbs" => Mbs::new(t).unwrap().core,
            "granular-mbs" => GranularMbs::new(t).unwrap().core,
            _ => OctetMbs::new(t).unwrap().core,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        /// The free-list core grants exactly the blocks the literal PReMAS
        /// algorithm takes, and holds the same free lists after every step,
        /// over random allocate/release scripts on 2-D and 3-D meshes whose
        /// sides are mostly not powers of two.
        #[test]
        fn core_takes_the_blocks_premas_takes(
            name in prop::sample::select(vec!["mbs", "granular-mbs", "octet-mbs"]),
            sides in prop_oneof![
                prop::collection::vec(1u32..=13, 2),
                prop::collection::vec(1u32..=6, 3),
            ],
            ops in prop::collection::vec((any::<bool>(), any::<u32>()), 1..60),
        ) {
            let text: Vec<String> = sides.iter().map(ToString::to_string).collect();
            let topo: Topology = format!("mesh:{}", text.join("x")).parse().unwrap();
            let mut core = core_of(name, &topo);
            let mut lit = Literal::new(&core);
            let mut live: Vec<Grant> = Vec::new();
            let n = topo.num_nodes() as u32;
            for (grow, x) in ops {
                if grow || live.is_empty() {
                    let free = core.occupancy.free_count() as u32;
                    if free == 0 {
                        continue;
                    }
                    let want = 1 + x % free.min(n / 2 + 1);
                    let req = Request::nodes(want);
                    let g = core.allocate(&req, u64::from(want));
                    let blocks = lit.allocate(u64::from(want));
                    let boxes: Vec<GridBox> =
                        blocks.iter().map(|&b| lit.tree.blocks[b as usize].gbox).collect();
                    prop_assert_eq!(g.partition(), &Partition::Boxes(boxes));
                    lit.live.push(blocks);
                    live.push(g);
                } else {
                    let i = x as usize % live.len();
                    let g = live.swap_remove(i);
                    let blocks = lit.live.swap_remove(i);
                    core.release(&g).unwrap();
                    lit.release(&blocks);
                }
                prop_assert_eq!(core.free_blocks(), lit.fbr_boxes());
            }
        }
    }

    /// With faults: the free lists are the maximal free blocks of the
    /// tree, whatever the order of faults, grants and repairs.
    #[test]
    fn faults_split_down_and_repairs_merge_back() {
        let topo: Topology = "mesh:8x8".parse().unwrap();
        let mut core = core_of("mbs", &topo);
        core.mark_faulty(9).unwrap();
        // ⟨1,1⟩ faulty: the 8×8 splits into 4×4s, the first into 2×2s, the
        // first 2×2 into nodes; three nodes, three 2×2, three 4×4 free.
        let counts: Vec<usize> = core.free_blocks().iter().map(|(_, l)| l.len()).collect();
        assert_eq!(counts, [3, 3, 3, 0]);
        let g = core.allocate(&Request::nodes(60), 60);
        assert_eq!(g.granted_nodes(), 60);
        assert!(!g.partition().node_list(&topo).unwrap().contains(&9));
        core.release(&g).unwrap();
        core.repair(9).unwrap();
        let counts: Vec<usize> = core.free_blocks().iter().map(|(_, l)| l.len()).collect();
        assert_eq!(counts, [0, 0, 0, 1]);
    }
}
