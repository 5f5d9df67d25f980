//! Block placement on a Slurm `topology/block` machine, deciding as
//! Slurm 26.05.3 decides (`select/cons_tres` with `topology/block`).
//!
//! Each rule below is read from Slurm's source at tag `slurm-26-05-3-1`
//! and restated here; the file named with it is where Slurm decides it.
//!
//! 1. **Level from the job's size** (`eval_nodes_block.c`,
//!    `_get_block_level`): a job (or one segment) of `n` nodes needs
//!    `⌈n / base⌉` base blocks; its block level is the smallest configured
//!    level of at least that many base blocks. If no configured level is
//!    that large, the whole machine is one block. The level never grows:
//!    when no block of that level has room, the job waits.
//! 2. **Lower-level limit** (same function and `eval_nodes_block`): the
//!    largest configured level below the job's size is its "lower level";
//!    when a block is not exactly the `⌈n / lower size⌉` lower blocks the
//!    job needs, the job may use at most that many lower blocks, and a
//!    block qualifies only if its fullest lower blocks hold the job.
//! 3. **Which block** (`eval_nodes_block`): among the blocks of the level
//!    that qualify, the one with the fewest free nodes; among equals the
//!    last (highest index).
//! 4. **Which base blocks inside it** (`_choose_best_bblock`): repeatedly
//!    the base block whose free nodes best fit what is left (fewest that
//!    suffice), else the one with the most free nodes; among equals the
//!    last. Under the lower-level limit, base blocks in a lower block
//!    already used come first, then a lower block that holds the rest
//!    (fewest free), else the fullest lower block. Nodes are taken in id
//!    order inside a base block. If this stalls, the attempt fails.
//! 5. **Retrying** (`common_topo.c`, `common_topo_choose_nodes`): after a
//!    failure inside the chosen block Slurm removes the lowest-numbered
//!    node it had picked from the candidates and tries again, until it
//!    succeeds or too few candidates are left; when no block qualifies
//!    the job waits at once.
//! 6. **Segments** (`eval_nodes_block`, `next_segment`): with `--segment=S`
//!    each of the `n / S` segments is placed as a job of `S` nodes (rules
//!    1–4), one after the other, anywhere in the machine. `S` larger than
//!    the job is ignored (new in 26.05); otherwise `S` must divide `n`
//!    (`slurm_opt.c`, `_validate_segment_size`: sbatch refuses the job).
//! 7. **`--consolidate-segments`** (`eval_nodes_block`, the "asblock"): the
//!    whole job must lie in one block of the level of its total size; the
//!    first segment may only use a block whose enclosing block has room for
//!    the whole job, and the rest stay inside that enclosing block. If they
//!    do not fit, that enclosing block is dropped and Slurm tries again.
//! 8. **`--exclusive=topo`** (`select/cons_tres/job_test.c`,
//!    `_block_by_topology`, and `topology_block.c`,
//!    `topology_p_whole_topo`): an exclusive job sees only base blocks no
//!    running job touches; every other job sees none of the base blocks an
//!    exclusive job touches. Placement is otherwise the same.
//! 9. **One node** (`select/cons_tres/job_test.c`, `_get_one_res`): a
//!    job of one node skips the block rules and takes the first free node
//!    it may use, in node order.
//! 10. **Refused at submission** (`job_test.c`, test-only mode): a job
//!     that could not be placed on the empty machine is refused
//!     ([`PlaceError::Unavailable`], Slurm's "Requested node configuration
//!     is not available"), never queued.
//!
//! Where Slurm's rules depend on things partalloc does not model (node
//! weights, CPUs, GRES, required nodes), every node is taken as equal.
//!
//! ```
//! use partalloc_allocators::block::{BlockPlacer, Placement};
//! use partalloc_topology::slurm::SlurmMachine;
//! let conf = "BlockName=r[0-1] Nodes=n[00-17]\nBlockName=r[2-3] Nodes=n[18-35]\n";
//! let m = SlurmMachine::parse_conf(conf, "x.conf")?;
//! let mut p = BlockPlacer::new(m.blocks().expect("blocks"));
//! // 20 nodes: the last base block whole, then the two left from the
//! // best fit among the others (here the only one).
//! let nodes = p.place(20, Placement::default())?;
//! assert_eq!(m.hostlist(&nodes), "n[00-01,18-35]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::NodeId;
use partalloc_topology::slurm::Blocks;

mod buddy;

pub use buddy::BlockBuddy;

/// How a job asks to be placed (its sbatch options).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    /// `--segment=S`: the job is placed as `n / S` segments of `S` nodes.
    pub segment: Option<u32>,
    /// `--exclusive=topo`: the job shares no base block with another job.
    pub exclusive: bool,
    /// `--consolidate-segments`: all segments inside one block of the
    /// level of the job's whole size.
    pub consolidate: bool,
}

pub use crate::error::PlaceError;

/// Why one evaluation failed, and what Slurm's retry loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// No block qualifies: the job waits.
    Break,
    /// The chosen block could not be filled: drop the lowest picked node.
    Hint,
    /// The consolidated segments did not fit their enclosing block: drop
    /// the base blocks `lo..hi`.
    Retry(usize, usize),
}

/// The levels that decide one job or segment size.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// Base blocks per block (the whole machine if no level is large
    /// enough).
    per_block: usize,
    /// Number of blocks.
    blocks: usize,
    /// Base blocks per lower-level block, as a shift.
    low_shift: u32,
    /// Most lower-level blocks the job may use.
    max_low: u32,
    /// Whether that limit applies.
    limited: bool,
}

/// A request as the empty-machine check remembers it: nodes, segment,
/// consolidate, exclusive.
type Request = (u32, Option<u32>, bool, bool);

/// Buffers reused between placements, so a placement does not allocate.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Per base block: whether this job may use it at all.
    open: Vec<bool>,
    /// Per base block: nodes this evaluation may still take.
    avail: Vec<u32>,
    /// Per node: removed by the retry loop.
    removed: Vec<bool>,
    /// The removed nodes (to reset `removed`).
    removed_list: Vec<NodeId>,
    /// Per node: picked by this evaluation.
    taken: Vec<bool>,
    /// Per base block: used by the current segment.
    used: Vec<bool>,
    /// Per lower-level block: free nodes at the start of the segment, and
    /// the base blocks of it the segment uses.
    low_free: Vec<u32>,
    low_used: Vec<u32>,
    /// Per block (and per enclosing block): free nodes.
    block_free: Vec<u32>,
    outer_free: Vec<u32>,
    /// Lower-level counts of one block, sorted.
    sort: Vec<u32>,
    /// Whether the empty machine holds a request (nodes, segment,
    /// consolidate, exclusive): it never changes.
    empty_fits: Vec<(Request, bool)>,
}

/// The placement state of one block machine: which nodes are busy, the
/// free count of every base block, and the base blocks held by
/// `--exclusive=topo` jobs.
#[derive(Debug, Clone)]
pub struct BlockPlacer {
    base: u32,
    levels: Vec<u32>,
    /// Per base block: its first node id (and one past the last node).
    first: Vec<u32>,
    /// Per node: its base block.
    block_of: Vec<u32>,
    /// Bit `k` set: blocks of `2^k` base blocks are configured.
    level_bits: u32,
    busy: Vec<bool>,
    free: Vec<u32>,
    /// Base blocks touched by an exclusive job.
    held: Vec<bool>,
    scratch: Scratch,
}

impl BlockPlacer {
    /// An empty machine with the structure of `blocks`.
    #[must_use]
    pub fn new(blocks: &Blocks) -> Self {
        let sizes: Vec<u32> = blocks.block_sizes().collect();
        Self::with_base_blocks(&sizes, blocks.base_size(), blocks.levels())
    }

    /// An empty machine whose base blocks hold `sizes` nodes each (in node
    /// id order; Slurm allows base blocks smaller than the base size), with
    /// `base` nodes as the base block size the levels count in (Slurm's
    /// first `BlockSizes` value) and `levels` base blocks per block at each
    /// level. Levels that are not a power of two are left out; the base
    /// level is always there; a `base` of 0 counts as 1.
    #[must_use]
    pub fn with_base_blocks(sizes: &[u32], base: u32, levels: &[u32]) -> Self {
        let n = sizes.len();
        let mut first = Vec::with_capacity(n + 1);
        let mut block_of = Vec::new();
        let mut next = 0u32;
        for (b, &size) in sizes.iter().enumerate() {
            first.push(next);
            next = next.saturating_add(size);
            block_of.extend(core::iter::repeat_n(b as u32, size as usize));
        }
        first.push(next);
        let nodes = block_of.len();
        let level_bits = levels
            .iter()
            .filter(|m| m.is_power_of_two())
            .fold(1u32, |acc, m| acc | 1 << m.trailing_zeros());
        Self {
            base: base.max(1),
            levels: levels.to_vec(),
            first,
            block_of,
            level_bits,
            busy: vec![false; nodes],
            free: sizes.to_vec(),
            held: vec![false; n],
            scratch: Scratch {
                open: vec![false; n],
                avail: vec![0; n],
                removed: vec![false; nodes],
                removed_list: Vec::new(),
                taken: vec![false; nodes],
                used: vec![false; n],
                low_free: vec![0; n],
                low_used: vec![0; n],
                block_free: vec![0; n],
                outer_free: vec![0; n],
                sort: Vec::with_capacity(n),
                empty_fits: Vec::with_capacity(32),
            },
        }
    }

    /// Nodes of base block `b`.
    fn size(&self, b: usize) -> u32 {
        self.first[b + 1] - self.first[b]
    }

    /// Node ids of base block `b`.
    fn nodes_of(&self, b: usize) -> core::ops::Range<usize> {
        self.first[b] as usize..self.first[b + 1] as usize
    }

    /// Nodes per base block.
    #[must_use]
    pub fn base_size(&self) -> u32 {
        self.base
    }

    /// Base blocks per block at each level (level 0 = base).
    #[must_use]
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// Free nodes of the whole machine.
    #[must_use]
    pub fn free_nodes(&self) -> u32 {
        self.free.iter().sum()
    }

    /// The largest job that can be placed now inside one block of `level`
    /// under `how` (0 if none, or if `level` does not exist): the most
    /// nodes any block of that level offers, counting whole segments per
    /// base block with a segment size, and only base blocks no job touches
    /// when exclusive.
    #[must_use]
    pub fn largest_placeable(&self, level: usize, how: Placement) -> u32 {
        let Some(&m) = self.levels.get(level) else {
            return 0;
        };
        if how.segment == Some(0) {
            return 0;
        }
        (0..self.free.len())
            .step_by((m as usize).max(1))
            .map(|first| {
                (first..(first + m as usize).min(self.free.len()))
                    .map(|b| self.offers(b, how))
                    .sum::<u32>()
            })
            .max()
            .unwrap_or(0)
    }

    /// Free nodes that a job wanting whole base blocks cannot use: those in
    /// base blocks partly busy or held by an exclusive job.
    #[must_use]
    pub fn stranded_nodes(&self) -> u32 {
        (0..self.free.len())
            .filter(|&b| self.held[b] || self.free[b] < self.size(b))
            .map(|b| self.free[b])
            .sum()
    }

    /// Free nodes of base block `b`.
    #[must_use]
    pub fn free_in(&self, b: u32) -> u32 {
        self.free.get(b as usize).copied().unwrap_or(0)
    }

    /// Nodes base block `b` offers to a job asking `how`.
    fn offers(&self, b: usize, how: Placement) -> u32 {
        if self.held[b] {
            return 0;
        }
        match (how.exclusive, how.segment) {
            (true, _) if self.free[b] == self.size(b) => self.free[b],
            (true, _) => 0,
            (false, Some(s)) if s > 0 => self.free[b] / s * s,
            (false, _) => self.free[b],
        }
    }

    /// The block structure Slurm uses for a job (or segment) of `nodes`.
    fn shape(&self, nodes: u32) -> Shape {
        let count = self.free.len();
        let need = nodes.div_ceil(self.base).max(1);
        // ⌈log2 need⌉: the level a block of `need` base blocks would be.
        let raw = need
            .checked_next_power_of_two()
            .map_or(32, u32::trailing_zeros);
        // The highest configured level under `raw` (level 0 always is).
        let below = if raw == 0 {
            0
        } else {
            let mask = (self.level_bits & (1u32 << raw.min(31)).wrapping_sub(1)) | 1;
            31 - mask.leading_zeros()
        };
        // The lowest configured level at or above `raw`, if any.
        let above = if raw >= 32 {
            0
        } else {
            self.level_bits & !((1u32 << raw) - 1)
        };
        let per_block = if above == 0 {
            count
        } else {
            1usize << above.trailing_zeros()
        };
        let low_size = (1u64 << below) * u64::from(self.base);
        let max_low = u64::from(nodes).div_ceil(low_size) as u32;
        Self::finish(per_block, count, below, max_low)
    }

    fn finish(per_block: usize, count: usize, below: u32, max_low: u32) -> Shape {
        Shape {
            per_block,
            blocks: count.div_ceil(per_block.max(1)),
            low_shift: below,
            max_low,
            limited: per_block as u64 != (1u64 << below) * u64::from(max_low),
        }
    }

    /// Whether node `x` of base block `b` may be taken now by this
    /// evaluation.
    fn node_ok(&self, x: usize, b: usize, empty: bool) -> bool {
        let s = &self.scratch;
        s.open[b] && (empty || !self.busy[x]) && !s.removed[x] && !s.taken[x]
    }

    /// Resets the per-evaluation counts from the state, the job's view of
    /// the base blocks (`_block_by_topology`: an exclusive job sees only
    /// base blocks no job touches, others none an exclusive job touches)
    /// and the nodes removed so far; returns the candidate count.
    fn reset_avail(&mut self, exclusive: bool, empty: bool) -> u64 {
        let s = &mut self.scratch;
        let n = self.free.len();
        let (open, avail) = (&mut s.open[..n], &mut s.avail[..n]);
        if empty {
            open.fill(true);
            for (b, a) in avail.iter_mut().enumerate() {
                *a = self.first[b + 1] - self.first[b];
            }
        } else if exclusive {
            for b in 0..n {
                let whole = !self.held[b] && self.free[b] == self.first[b + 1] - self.first[b];
                open[b] = whole;
                avail[b] = if whole { self.free[b] } else { 0 };
            }
        } else {
            for ((o, a), (&held, &free)) in open
                .iter_mut()
                .zip(avail.iter_mut())
                .zip(self.held.iter().zip(&self.free))
            {
                *o = !held;
                *a = if held { 0 } else { free };
            }
        }
        // Nodes the retry loop removed (each an open, free node).
        for &x in &s.removed_list {
            let b = self.block_of[x as usize] as usize;
            s.avail[b] = s.avail[b].saturating_sub(1);
        }
        s.avail[..n].iter().map(|&a| u64::from(a)).sum()
    }

    /// One of Slurm's evaluations (`eval_nodes_block`) on the current
    /// candidates: writes the picked nodes into `out` (in the order they
    /// were picked) or says why it failed.
    fn evaluate(
        &mut self,
        nodes: u32,
        segment: Option<u32>,
        consolidate: bool,
        empty: bool,
        out: &mut Vec<NodeId>,
    ) -> Result<(), Fail> {
        let size = segment.unwrap_or(nodes);
        let count = self.free.len();
        let shape = self.shape(size);
        // The enclosing block of a consolidated job, in blocks of `shape`.
        let outer = match segment {
            Some(_) if consolidate => {
                let whole = self.shape(nodes);
                Some(if whole.per_block == count {
                    // Slurm counts the whole machine in base blocks here.
                    count
                } else {
                    (whole.per_block / shape.per_block.max(1)).max(1)
                })
            }
            _ => None,
        };
        let mut outer_range: Option<(usize, usize)> = None;
        for _ in 0..nodes / size.max(1) {
            let first = out.is_empty();
            // Free nodes per block and per enclosing block.
            let sums = shape.per_block > 1 || outer.is_some();
            if sums {
                for i in 0..shape.blocks {
                    let lo = i * shape.per_block;
                    let hi = (lo + shape.per_block).min(count);
                    self.scratch.block_free[i] = self.scratch.avail[lo..hi].iter().sum();
                }
            }
            if let (Some(per), true) = (outer, first) {
                let outers = shape.blocks.div_ceil(per);
                for o in 0..outers {
                    let hi = ((o + 1) * per).min(shape.blocks);
                    self.scratch.outer_free[o] = self.scratch.block_free[o * per..hi].iter().sum();
                }
            }
            // The block: fewest free nodes among those that qualify, the
            // last among equals.
            // Scanned from the last block, so the first of the fewest is the
            // last among equals; an exact fit cannot be beaten.
            let mut chosen: Option<(usize, u32)> = None;
            if !sums && !shape.limited {
                // Blocks are base blocks: a tight scan of their counts.
                let counts = &self.scratch.avail[..shape.blocks.min(count)];
                let mut fewest = u32::MAX;
                for (i, &a) in counts.iter().enumerate().rev() {
                    if a >= size && a < fewest {
                        fewest = a;
                        chosen = Some((i, a));
                        if a == size {
                            break;
                        }
                    }
                }
            }
            for i in (0..shape.blocks).rev() {
                if !sums && !shape.limited {
                    break;
                }
                if let (Some(per), true) = (outer, first)
                    && self.scratch.outer_free[i / per] < nodes
                {
                    continue;
                }
                let bnc = if sums {
                    self.scratch.block_free[i]
                } else {
                    self.scratch.avail[i]
                };
                let usable = if shape.limited {
                    self.best_lows(i, shape)
                } else {
                    bnc
                };
                if usable < size || bnc == 0 {
                    continue;
                }
                if chosen.is_none_or(|(_, f)| bnc < f) {
                    chosen = Some((i, bnc));
                    if bnc == size {
                        break;
                    }
                }
            }
            let Some((block, _)) = chosen else {
                return Err(outer_range.map_or(Fail::Break, |(lo, hi)| Fail::Retry(lo, hi)));
            };
            if let (Some(per), true) = (outer, first) {
                let span = per.saturating_mul(shape.per_block);
                let lo = (block / per) * span;
                let hi = lo.saturating_add(span).min(count);
                outer_range = Some((lo, hi));
                // Later segments see only the enclosing block.
                for b in (0..lo).chain(hi..count) {
                    self.scratch.avail[b] = 0;
                }
            }
            if !self.fill(block, shape, size, empty, out) {
                return Err(outer_range.map_or(Fail::Hint, |(lo, hi)| Fail::Retry(lo, hi)));
            }
        }
        Ok(())
    }

    /// Free nodes in the `max_low` fullest lower-level blocks of block `i`
    /// (Slurm counts `per_block / lower size` of them, so a partial last
    /// lower block of a whole-machine block is left out).
    fn best_lows(&mut self, i: usize, shape: Shape) -> u32 {
        let count = self.free.len();
        let per_low = 1usize << shape.low_shift;
        let lows_total = count.div_ceil(per_low);
        let per = shape.per_block / per_low;
        let first = i * per;
        let n = per.min(lows_total.saturating_sub(first));
        let s = &mut self.scratch;
        s.sort.clear();
        for l in first..first + n {
            let lo = l * per_low;
            let hi = (lo + per_low).min(count);
            s.sort.push(s.avail[lo..hi].iter().sum());
        }
        s.sort.sort_unstable_by(|a, b| b.cmp(a));
        s.sort.iter().take(shape.max_low as usize).sum()
    }

    /// Fills `size` nodes from block `block` base block by base block
    /// (`_choose_best_bblock`); false if it stalls.
    fn fill(
        &mut self,
        block: usize,
        shape: Shape,
        size: u32,
        empty: bool,
        out: &mut Vec<NodeId>,
    ) -> bool {
        let count = self.free.len();
        let lo = block * shape.per_block;
        let hi = (lo + shape.per_block).min(count);
        let sh = shape.low_shift;
        {
            let s = &mut self.scratch;
            for b in lo..hi {
                s.used[b] = false;
                s.low_free[b >> sh] = 0;
                s.low_used[b >> sh] = 0;
            }
            for b in lo..hi {
                s.low_free[b >> sh] += s.avail[b];
            }
        }
        let mut rem = size;
        let mut lows_left = i64::from(shape.max_low);
        let mut prev = u64::from(rem) + 1;
        loop {
            if prev == u64::from(rem) {
                return false;
            }
            prev = u64::from(rem);
            let Some((best, best_same)) = self.pick(lo, hi, shape, rem) else {
                return false;
            };
            if lows_left <= 0 && !best_same {
                return false;
            }
            self.scratch.used[best] = true;
            self.scratch.low_used[best >> sh] += 1;
            let mut left = self.scratch.avail[best];
            for x in self.nodes_of(best) {
                if rem == 0 || left == 0 {
                    break;
                }
                if self.node_ok(x, best, empty) {
                    self.scratch.taken[x] = true;
                    self.scratch.avail[best] -= 1;
                    left -= 1;
                    rem -= 1;
                    out.push(x as NodeId);
                }
            }
            if rem == 0 {
                return true;
            }
            if !best_same {
                lows_left -= 1;
            }
        }
    }

    /// The next base block of `lo..hi` for `rem` nodes, and whether its
    /// lower-level block is one the segment already uses.
    fn pick(&self, lo: usize, hi: usize, shape: Shape, rem: u32) -> Option<(usize, bool)> {
        let s = &self.scratch;
        let sh = shape.low_shift;
        let mut best: Option<usize> = None;
        let (mut best_fit, mut best_same) = (false, true);
        for i in lo..hi {
            if s.used[i] {
                continue;
            }
            let fit = s.avail[i] >= rem;
            if shape.limited && best.is_none_or(|b| b >> sh != i >> sh) {
                let same = s.low_used[i >> sh] > 0;
                let Some(b) = best else {
                    (best, best_fit, best_same) = (Some(i), fit, same);
                    continue;
                };
                if same && !best_same {
                    (best, best_fit, best_same) = (Some(i), fit, same);
                    continue;
                }
                if !same && best_same {
                    continue;
                }
                let (bc, ic) = (s.low_free[b >> sh], s.low_free[i >> sh]);
                let (bf, ifit) = (bc >= rem, ic >= rem);
                let better = match (ifit, bf) {
                    (true, false) => Some(true),
                    (false, true) => Some(false),
                    (true, true) => (ic != bc).then_some(ic < bc),
                    (false, false) => (ic != bc).then_some(ic > bc),
                };
                match better {
                    Some(true) => {
                        (best, best_fit, best_same) = (Some(i), fit, same);
                        continue;
                    }
                    Some(false) => continue,
                    None => {}
                }
            }
            let take = match best {
                None => true,
                Some(b) => {
                    // A base block that holds the rest beats one that
                    // does not; among those that do the fewest free, among
                    // those that do not the most; the last among equals.
                    match (fit, best_fit) {
                        (true, false) => true,
                        (false, true) => false,
                        (true, true) => s.avail[i] <= s.avail[b],
                        (false, false) => s.avail[i] >= s.avail[b],
                    }
                }
            };
            if take {
                best = Some(i);
                best_fit = fit;
            }
        }
        best.map(|b| (b, best_same))
    }

    /// Slurm's retry loop (`common_topo_choose_nodes`) around
    /// [`evaluate`](Self::evaluate), on the current state or, with
    /// `empty`, on the empty machine. The picked nodes are left in `out`.
    fn run(
        &mut self,
        nodes: u32,
        segment: Option<u32>,
        how: Placement,
        empty: bool,
        out: &mut Vec<NodeId>,
    ) -> bool {
        let mut ok = false;
        loop {
            self.clear_taken(out);
            let candidates = self.reset_avail(how.exclusive, empty);
            if candidates < u64::from(nodes) {
                break;
            }
            match self.evaluate(nodes, segment, how.consolidate, empty, out) {
                Ok(()) => {
                    ok = true;
                    break;
                }
                Err(Fail::Break) => break,
                Err(_) if candidates <= u64::from(nodes) => break,
                Err(Fail::Retry(lo, hi)) => {
                    for b in lo..hi {
                        for x in self.nodes_of(b) {
                            if self.scratch.open[b]
                                && (empty || !self.busy[x])
                                && !self.scratch.removed[x]
                            {
                                self.remove(x);
                            }
                        }
                    }
                }
                Err(Fail::Hint) => {
                    let lowest = out.iter().copied().min().map(|x| x as usize).or_else(|| {
                        (0..self.busy.len()).find(|&x| {
                            let b = self.block_of[x] as usize;
                            self.scratch.open[b]
                                && (empty || !self.busy[x])
                                && !self.scratch.removed[x]
                        })
                    });
                    let Some(x) = lowest else { break };
                    self.remove(x);
                }
            }
        }
        if !ok {
            self.clear_taken(out);
        }
        let s = &mut self.scratch;
        for &x in &s.removed_list {
            s.removed[x as usize] = false;
        }
        s.removed_list.clear();
        ok
    }

    /// Whether the empty machine holds the job (what Slurm checks at
    /// submission), remembered for the last few requests.
    fn fits_empty(
        &mut self,
        nodes: u32,
        segment: Option<u32>,
        how: Placement,
        out: &mut Vec<NodeId>,
    ) -> bool {
        let key = (nodes, segment, how.consolidate, how.exclusive);
        if let Some(&(_, fits)) = self.scratch.empty_fits.iter().find(|(k, _)| *k == key) {
            return fits;
        }
        let fits = self.run(nodes, segment, how, true, out);
        self.clear_taken(out);
        let cache = &mut self.scratch.empty_fits;
        if cache.len() >= 32 {
            cache.remove(0);
        }
        cache.push((key, fits));
        fits
    }

    fn remove(&mut self, x: usize) {
        let s = &mut self.scratch;
        s.removed[x] = true;
        s.removed_list.push(x as NodeId);
    }

    fn clear_taken(&mut self, out: &mut Vec<NodeId>) {
        for &x in out.iter() {
            if let Some(t) = self.scratch.taken.get_mut(x as usize) {
                *t = false;
            }
        }
        out.clear();
    }

    /// The segment size Slurm uses for a job of `nodes` (none when the
    /// segment is larger than the job), checked.
    fn segment_for(&self, nodes: u32, how: Placement) -> Result<Option<u32>, PlaceError> {
        match how.segment {
            None => Ok(None),
            Some(0) => Err(PlaceError::Invalid {
                nodes,
                reason: "a segment has at least one node".to_owned(),
            }),
            Some(s) if s > nodes => Ok(None),
            Some(s) if !nodes.is_multiple_of(s) => {
                Err(PlaceError::SegmentSize { nodes, segment: s })
            }
            Some(s) => Ok(Some(s)),
        }
    }

    /// Places a job and returns its nodes in increasing id order.
    ///
    /// # Errors
    /// As [`place_into`](Self::place_into).
    pub fn place(&mut self, nodes: u32, how: Placement) -> Result<Vec<NodeId>, PlaceError> {
        let mut out = Vec::with_capacity(nodes as usize);
        self.place_into(nodes, how, &mut out)?;
        Ok(out)
    }

    /// Places a job and writes its nodes, in increasing id order, into
    /// `out` (cleared first). With a reused `out` no placement allocates.
    ///
    /// # Errors
    /// [`PlaceError::Invalid`] for no nodes or more than the machine,
    /// [`PlaceError::SegmentSize`] for a segment that does not divide the
    /// job, [`PlaceError::Unavailable`] for a job the empty machine could
    /// not hold, [`PlaceError::NoRoom`] when it has to wait; the state is
    /// then unchanged.
    pub fn place_into(
        &mut self,
        nodes: u32,
        how: Placement,
        out: &mut Vec<NodeId>,
    ) -> Result<(), PlaceError> {
        out.clear();
        let total = self.busy.len() as u64;
        if nodes == 0 || u64::from(nodes) > total {
            return Err(PlaceError::Invalid {
                nodes,
                reason: format!("the machine has {total} nodes"),
            });
        }
        let segment = self.segment_for(nodes, how)?;
        if nodes == 1 {
            // A one-node job never reaches the block plugin's placement
            // (select/cons_tres `_get_one_res`): the first free node the
            // job may use, in node order.
            let view = |b: usize| !self.held[b] && (!how.exclusive || self.free[b] == self.size(b));
            let node = (0..self.free.len())
                .filter(|&b| self.free[b] > 0 && view(b))
                .find_map(|b| self.nodes_of(b).find(|&x| !self.busy[x]));
            let Some(x) = node else {
                return Err(PlaceError::NoRoom { nodes });
            };
            let b = self.block_of[x] as usize;
            self.busy[x] = true;
            self.free[b] -= 1;
            if how.exclusive {
                self.held[b] = true;
            }
            out.push(x as NodeId);
            return Ok(());
        }
        if self.run(nodes, segment, how, false, out) {
            for &x in out.iter() {
                let x = x as usize;
                let b = self.block_of[x] as usize;
                self.scratch.taken[x] = false;
                self.busy[x] = true;
                self.free[b] -= 1;
                if how.exclusive {
                    self.held[b] = true;
                }
            }
            out.sort_unstable();
            return Ok(());
        }
        let never = !self.fits_empty(nodes, segment, how, out);
        Err(if never {
            PlaceError::Unavailable { nodes }
        } else {
            PlaceError::NoRoom { nodes }
        })
    }

    /// Frees the nodes of a placed job (and the base blocks an exclusive job
    /// held).
    pub fn release(&mut self, nodes: &[NodeId], how: Placement) {
        for &n in nodes {
            let Some(&b) = self.block_of.get(n as usize) else {
                continue;
            };
            let b = b as usize;
            if let Some(busy) = self.busy.get_mut(n as usize).filter(|x| **x) {
                *busy = false;
                self.free[b] += 1;
            }
            if how.exclusive
                && let Some(h) = self.held.get_mut(b)
            {
                *h = false;
            }
        }
    }

    /// Marks `nodes` busy as a running job placed elsewhere (for replaying
    /// another scheduler's decisions); `exclusive` as for
    /// [`Placement::exclusive`]. Ids outside the machine are skipped.
    pub fn occupy(&mut self, nodes: &[NodeId], exclusive: bool) {
        for &n in nodes {
            let Some(&b) = self.block_of.get(n as usize) else {
                continue;
            };
            let b = b as usize;
            if let Some(busy) = self.busy.get_mut(n as usize).filter(|x| !**x) {
                *busy = true;
                self.free[b] -= 1;
            }
            if exclusive && let Some(h) = self.held.get_mut(b) {
                *h = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use partalloc_topology::slurm::SlurmMachine;
    use proptest::prelude::*;

    use super::*;

    fn racks(n: u32, size: u32, sizes: &str) -> SlurmMachine {
        let mut conf = String::new();
        for r in 0..n {
            let lo = r * size;
            conf.push_str(&format!(
                "BlockName=rack{r} Nodes=n[{lo:03}-{:03}]\n",
                lo + size - 1
            ));
        }
        conf.push_str(&format!("BlockSizes={sizes}\n"));
        SlurmMachine::parse_conf(&conf, "test.conf").unwrap()
    }

    fn plain() -> Placement {
        Placement::default()
    }

    fn seg(s: u32, consolidate: bool) -> Placement {
        Placement {
            segment: Some(s),
            consolidate,
            ..Placement::default()
        }
    }

    /// Busy nodes `lo..hi`, placed as one running job.
    fn fill(p: &mut BlockPlacer, lo: u32, hi: u32) {
        let v: Vec<NodeId> = (lo..hi).collect();
        p.occupy(&v, false);
    }

    #[test]
    fn ties_go_to_the_last_block_and_base_block() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        assert_eq!(m.hostlist(&p.place(10, plain()).unwrap()), "n[126-135]");
        // Rack 7 keeps 8 free: the best fit for 8 nodes.
        assert_eq!(m.hostlist(&p.place(8, plain()).unwrap()), "n[136-143]");
        // 20 nodes: level 36; pairs 0-2 all free (36): the last, racks 4-5.
        // Inside: both racks hold none alone, the last (rack 5) first, then
        // the best fit for 2 is rack 4.
        assert_eq!(
            m.hostlist(&p.place(20, plain()).unwrap()),
            "n[072-073,090-107]"
        );
    }

    #[test]
    fn the_level_never_climbs_a_job_waits() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        for r in 0..8 {
            fill(&mut p, r * 18, r * 18 + 12);
        }
        // Six free nodes per rack, 48 in all: a 10-node job wants one rack,
        // a 19-node job a pair (12 free), 40 or 48 nodes four racks (24).
        for n in [10, 19, 40, 48] {
            assert_eq!(p.place(n, plain()), Err(PlaceError::NoRoom { nodes: n }));
        }
        // Six nodes fit a rack: the last.
        assert_eq!(m.hostlist(&p.place(6, plain()).unwrap()), "n[138-143]");
    }

    #[test]
    fn inside_the_block_the_best_fit_for_the_rest() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        // Rack 0: 16 free, rack 1: 8 free; every other pair is full.
        fill(&mut p, 0, 2);
        fill(&mut p, 18, 28);
        fill(&mut p, 36, 144);
        // 20 nodes: rack 0 gives its 16 (most, none holds all), then rack 1
        // the best fit for 4.
        assert_eq!(
            m.hostlist(&p.place(20, plain()).unwrap()),
            "n[002-017,028-031]"
        );
    }

    #[test]
    fn segments_are_placed_one_by_one_anywhere() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        // Three segments of 12: rack 7, rack 6, then rack 5 (7 and 6 keep 6).
        assert_eq!(
            m.hostlist(&p.place(36, seg(12, false)).unwrap()),
            "n[090-101,108-119,126-137]"
        );
        // A segment larger than the job is ignored (26.05).
        assert_eq!(
            m.hostlist(&p.place(6, seg(12, false)).unwrap()),
            "n[138-143]"
        );
        assert_eq!(
            p.place(30, seg(12, false)),
            Err(PlaceError::SegmentSize {
                nodes: 30,
                segment: 12
            })
        );
    }

    #[test]
    fn consolidated_segments_stay_in_one_block_or_are_refused() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        // 36 nodes in segments of 12 inside one pair of racks: never.
        assert_eq!(
            p.place(36, seg(12, true)),
            Err(PlaceError::Unavailable { nodes: 36 })
        );
        // 24 nodes in segments of 12: both in the last pair.
        assert_eq!(
            m.hostlist(&p.place(24, seg(12, true)).unwrap()),
            "n[108-119,126-137]"
        );
        // Pair 2-3 has 17 + 8 free: the first segment fits rack 2 only and
        // the second then has no room, so Slurm drops the pair and tries the
        // next; racks 0-1 take it, the last rack first.
        fill(&mut p, 36, 37);
        fill(&mut p, 54, 64);
        fill(&mut p, 72, 108);
        assert_eq!(
            m.hostlist(&p.place(24, seg(12, true)).unwrap()),
            "n[000-011,018-029]"
        );
    }

    #[test]
    fn a_job_larger_than_every_level_uses_the_whole_machine() {
        let m = racks(4, 4, "4,8");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        // 12 nodes: three racks; the limit is two pairs, the machine has two.
        let v = p.place(12, plain()).unwrap();
        assert_eq!(v.len(), 12);
        assert_eq!(p.free_nodes(), 4);
        p.release(&v, plain());
        // With six racks and levels up to pairs, 14 nodes may use at most
        // two pairs (16 nodes): refused on a machine whose pairs are split.
        let m6 = racks(6, 4, "4,8");
        let mut q = BlockPlacer::new(m6.blocks().unwrap());
        assert!(q.place(16, plain()).is_ok());
        assert!(q.place(24, plain()).is_err());
    }

    #[test]
    fn exclusive_jobs_and_others_never_share_a_base_block() {
        let m = racks(4, 4, "4,8,16");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        let ex = Placement {
            exclusive: true,
            ..Placement::default()
        };
        let a = p.place(3, plain()).unwrap();
        assert_eq!(m.hostlist(&a), "n[012-014]");
        // The exclusive job may not use rack 3: racks 2, 1 and 0 are whole;
        // the last (rack 2).
        let b = p.place(2, ex).unwrap();
        assert_eq!(m.hostlist(&b), "n[008-009]");
        // Rack 2's two free nodes would be the best fit for two, but they
        // are closed to everyone else: racks 0 and 1 (4 free), the last.
        assert_eq!(m.hostlist(&p.place(2, plain()).unwrap()), "n[004-005]");
        assert_eq!(p.stranded_nodes(), 2 + 2 + 1);
        p.release(&b, ex);
        assert_eq!(m.hostlist(&p.place(4, plain()).unwrap()), "n[008-011]");
        assert_eq!(
            p.place(4, ex).map(|v| m.hostlist(&v)),
            Ok("n[000-003]".into())
        );
        // No whole free rack is left for an exclusive job, even of one node.
        assert_eq!(p.place(1, ex), Err(PlaceError::NoRoom { nodes: 1 }));
        // One plain node: the first free node outside the held rack 0.
        assert_eq!(
            p.place(1, plain()).map(|v| m.hostlist(&v)),
            Ok("n006".into())
        );
    }

    #[test]
    fn place_into_reuses_the_callers_buffer_and_errors_leave_no_trace() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        let mut out = Vec::with_capacity(144);
        let cap = out.capacity();
        p.place_into(36, seg(12, false), &mut out).unwrap();
        p.place_into(20, plain(), &mut out).unwrap();
        assert_eq!((out.len(), out.capacity()), (20, cap));
        assert_eq!(
            p.place_into(200, plain(), &mut out),
            Err(PlaceError::Invalid {
                nodes: 200,
                reason: "the machine has 144 nodes".into()
            })
        );
        assert!(out.is_empty());
        let before = p.clone();
        assert!(p.place_into(144, plain(), &mut out).is_err());
        assert_eq!((p.busy.clone(), p.free.clone()), (before.busy, before.free));
        assert!(p.scratch.taken.iter().all(|t| !t));
        assert!(p.scratch.removed.iter().all(|t| !t));
    }

    #[test]
    fn largest_placeable_and_stranded_nodes_follow_the_state() {
        let m = racks(4, 4, "4,8,16");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        assert_eq!(p.largest_placeable(2, plain()), 16);
        let a = p.place(3, plain()).unwrap();
        assert_eq!(p.stranded_nodes(), 1);
        assert_eq!(p.largest_placeable(0, plain()), 4);
        assert_eq!(p.largest_placeable(2, plain()), 13);
        assert_eq!(p.largest_placeable(3, plain()), 0);
        p.release(&a, plain());
        assert_eq!(p.stranded_nodes(), 0);
    }

    /// The rule restated plainly, for a machine where no lower-level limit
    /// applies (every level configured): the block level from the size, the
    /// qualifying block with the fewest free nodes (the last of equals),
    /// then base blocks by best fit for the rest, else the most free (the
    /// last of equals), lowest free ids first. `None`: the job waits.
    fn expected(p: &BlockPlacer, nodes: u32) -> Option<Vec<NodeId>> {
        if nodes == 1 {
            // One node: the first free one.
            return p.busy.iter().position(|b| !b).map(|x| vec![x as NodeId]);
        }
        let (base, count) = (p.base as usize, p.free.len());
        let need = (nodes as usize).div_ceil(base);
        let per = p
            .levels
            .iter()
            .map(|&m| m as usize)
            .find(|&m| m >= need)
            .unwrap_or(count);
        let mut best: Option<(u32, usize)> = None;
        for i in 0..count.div_ceil(per) {
            let free: u32 = p.free[i * per..((i + 1) * per).min(count)].iter().sum();
            if free >= nodes && best.is_none_or(|(f, _)| free <= f) {
                best = Some((free, i));
            }
        }
        let (_, i) = best?;
        let mut left: Vec<usize> = (i * per..((i + 1) * per).min(count)).collect();
        let (mut rem, mut out) = (nodes, Vec::new());
        while rem > 0 {
            let fits = left.iter().copied().filter(|&b| p.free[b] >= rem);
            let pick = fits
                .min_by_key(|&b| (p.free[b], core::cmp::Reverse(b)))
                .or_else(|| left.iter().copied().max_by_key(|&b| (p.free[b], b)))?;
            left.retain(|&b| b != pick);
            let ids = (pick * base..(pick + 1) * base).filter(|&x| !p.busy[x]);
            for x in ids.take(rem as usize) {
                out.push(x as NodeId);
                rem -= 1;
            }
        }
        out.sort_unstable();
        Some(out)
    }

    proptest! {
        /// Against the plain restatement, after any history of jobs and
        /// releases: the same nodes, or waiting exactly when it says so.
        #[test]
        fn placement_is_the_restated_rule(
            ops in prop::collection::vec((1u32..=16, any::<bool>()), 1..40)
        ) {
            let m = racks(8, 2, "2,4,8,16");
            let mut p = BlockPlacer::new(m.blocks().unwrap());
            let mut live: Vec<Vec<NodeId>> = Vec::new();
            for (nodes, release) in ops {
                if release && !live.is_empty() {
                    let v = live.remove(0);
                    p.release(&v, plain());
                    continue;
                }
                let want = expected(&p, nodes);
                match p.place(nodes, plain()) {
                    Ok(v) => {
                        prop_assert_eq!(Some(v.clone()), want);
                        live.push(v);
                    }
                    Err(e) => {
                        prop_assert!(want.is_none(), "{e} but {want:?} follows the rule");
                        prop_assert_eq!(e, PlaceError::NoRoom { nodes });
                    }
                }
            }
        }
    }

    proptest! {
        /// Brute force over every block of every level on a machine with a
        /// gap in its levels (pairs missing), with segments and exclusive
        /// jobs: a placed job lies in one block of the level its size (or
        /// segment size) asks for, uses at most the lower-level blocks the
        /// limit allows, never shares a base block with the other kind of
        /// job, and a job that waits has no block of that level whose free
        /// nodes alone could hold it.
        #[test]
        fn placements_stay_in_one_block_of_their_level(
            ops in prop::collection::vec((1u32..=16, 0u8..4, any::<bool>()), 1..40)
        ) {
            let m = racks(8, 2, "2,8");
            let mut p = BlockPlacer::new(m.blocks().unwrap());
            let mut live: Vec<(Vec<NodeId>, Placement)> = Vec::new();
            for (nodes, mode, release) in ops {
                if release && !live.is_empty() {
                    let (v, how) = live.remove(0);
                    p.release(&v, how);
                    continue;
                }
                let even = nodes % 2 == 0;
                let how = Placement {
                    segment: ((mode == 1 || mode == 3) && even).then_some(2),
                    exclusive: mode == 2,
                    consolidate: mode == 3 && even,
                };
                let before = p.clone();
                let size = how.segment.unwrap_or(nodes);
                // Levels of 1 and 4 racks, else the whole machine (8); the
                // lower level is 4 racks only above 4.
                let per = match size.div_ceil(2) { 1 => 1usize, 2..=4 => 4, _ => 8 };
                let low = if per == 8 { 4 } else { 1 };
                let max_low = (size as usize).div_ceil(low * 2);
                let open = |b: usize| {
                    !before.held[b] && (!how.exclusive || before.free[b] == 2)
                };
                // Some block of the level whose fullest allowed lower
                // blocks hold the job.
                let roomy = (0..8usize.div_ceil(per)).any(|i| {
                    let mut lows: Vec<u32> = (0..per / low)
                        .map(|l| {
                            (0..low)
                                .map(|k| i * per + l * low + k)
                                .filter(|&b| b < 8 && open(b))
                                .map(|b| before.free[b])
                                .sum()
                        })
                        .collect();
                    lows.sort_unstable_by(|a, b| b.cmp(a));
                    lows.iter().take(max_low).sum::<u32>() >= size
                });
                match p.place(nodes, how) {
                    Ok(v) => {
                        prop_assert_eq!(v.len(), nodes as usize);
                        let racks_used: std::collections::BTreeSet<usize> =
                            v.iter().map(|&n| n as usize / 2).collect();
                        for &r in &racks_used {
                            let others = (r * 2..r * 2 + 2)
                                .filter(|&x| before.busy[x])
                                .count();
                            if how.exclusive {
                                prop_assert_eq!(others, 0, "exclusive shares rack {}", r);
                            }
                            prop_assert!(!before.held[r], "rack {r} is held");
                        }
                        if how.segment.is_none() {
                            prop_assert!(roomy, "{v:?} placed with no block of {per} that holds it");
                            let blocks: std::collections::BTreeSet<usize> =
                                racks_used.iter().map(|r| r / per).collect();
                            prop_assert_eq!(blocks.len(), 1, "{:?} spans blocks of {}", v, per);
                            let lows: std::collections::BTreeSet<usize> =
                                racks_used.iter().map(|r| r / low).collect();
                            prop_assert!(lows.len() <= max_low, "{v:?} uses {} lower blocks", lows.len());
                        }
                        if how.consolidate && how.segment.is_some() {
                            let whole = match nodes.div_ceil(2) { 1 => 1usize, 2..=4 => 4, _ => 8 };
                            let outer: std::collections::BTreeSet<usize> =
                                racks_used.iter().map(|r| r / whole).collect();
                            prop_assert_eq!(outer.len(), 1);
                        }
                        live.push((v, how));
                    }
                    Err(PlaceError::NoRoom { .. }) => {
                        prop_assert_eq!(p.busy.clone(), before.busy.clone());
                    }
                    Err(PlaceError::Unavailable { .. } | PlaceError::SegmentSize { .. }) => {
                        prop_assert_eq!(p.busy.clone(), before.busy.clone());
                    }
                    Err(e) => prop_assert!(false, "{e}"),
                }
            }
        }
    }

    proptest! {
        /// On racks of any sizes up to the base block size, every job of up
        /// to `Blocks::largest_job_nodes` nodes starts on the empty
        /// machine, and the next size (when a configured level would still
        /// pick its block) does not: the machine file's bound is the
        /// placer's.
        #[test]
        fn the_largest_job_of_uneven_racks_is_the_placers(
            racks in prop::collection::vec(1u32..=6, 1..=9),
            base in 1u32..=6,
            extra in prop::collection::vec(any::<bool>(), 4),
        ) {
            let mut conf = String::new();
            let mut next = 0;
            for (i, &r) in racks.iter().enumerate() {
                let size = r.min(base);
                conf += &format!("BlockName=r{i} Nodes=n[{next}-{}]\n", next + size - 1);
                next += size;
            }
            let sizes: Vec<String> = std::iter::once(0)
                .chain((1..=4).filter(|&k| extra[k - 1]))
                .map(|k| (base << k).to_string())
                .collect();
            conf += &format!("BlockSizes={}\n", sizes.join(","));
            let m = SlurmMachine::parse_conf(&conf, "p.conf").unwrap();
            let b = m.blocks().unwrap();
            let largest = b.largest_job_nodes();
            let empty = BlockPlacer::new(b);
            for k in 1..=largest {
                let mut p = empty.clone();
                prop_assert!(p.place(k, Placement::default()).is_ok(), "{k} of {largest}: {conf}");
            }
            let top = b.levels().last().copied().unwrap_or(1) * base;
            if largest < top.min(next) {
                let mut p = empty.clone();
                prop_assert!(p.place(largest + 1, Placement::default()).is_err(), "{conf}");
            }
        }
    }
}
