//! Isomorphic allocation (Kang, Yu, Youn, Lee & Kim, IEEE TC 2003, §4).
//!
//! A 2^K-ary n-cube is partitioned recursively into 2^n isomorphic
//! 2^{K−1}-ary n-cubes (§3, the dot product Q_n^{2^K} = Q_n^{2^{K−1}} ⊙ H_n).
//! The strategy keeps, as in Fig. 4, one free list F per subcube size and,
//! for every subcube that has been split, a 2^n-bit *status bitmap* of its
//! free children; the bitmaps are linked as the 2^n-ary tree of Fig. 3b.
//! Blocks are addressed by their partition-step address
//! ([`PartitionSteps`]); [`Isomorphic::addresses_of`] reports it for a live
//! grant.
//!
//! - **Algorithm 1** (Fig. 5), isomorphic jobs Q_n^{2^a}: take the lowest
//!   free block of F_a; otherwise the lowest free block of the first
//!   non-empty larger list, decomposed down to size 2^a (always into child 0).
//! - **Algorithm 2** (Fig. 7), cubic jobs 2^{a_{n−1}}×…×2^{a_0}: with
//!   A = Σ a_i, a = A div n, l = A mod n, the job is folded into the
//!   semi-isomorphic shape with 2^{a+1} along dimensions 0 … l−1 and 2^a
//!   along the others, i.e. 2^l sibling Q_n^{2^a} blocks found by the Buddy
//!   scheme in their parent's status bitmap (Hypercube_Request: the lowest
//!   aligned run of 2^l free bits, Al-Dhelaan Alg. 1). Step 2 searches the
//!   split parents of size 2^{a+1} (lowest address first); step 3 searches
//!   F_{a+1}, F_{a+2}, … and decomposes. Release (Hypercube_Release) sets
//!   the bits back and merges 2^n free buddies up the levels.
//! - **Noncubic jobs** (§4.2): an l_{n−1}×…×l_0 job is served as the cubic
//!   job 2^{⌈log2 l_i⌉}; inside the granted box exactly Π l_i nodes are kept
//!   and the rest is released at once. The kept nodes are the requested box
//!   at the granted box's base corner in the first orientation that fits
//!   (the given one, then the other permutations of the sides in
//!   lexicographic order); when no orientation fits (e.g. 3×1 folded into
//!   2×2), the requested box is folded zig-zag onto the granted block's own
//!   sides, which keeps it connected inside the block (see
//!   `docs/paper-errata.md` (k-ary part)), and the grant is a node set.
//! - **Split option** (`isomorphic[split=true]`, [`Isomorphic::with_split`];
//!   Kang §4.2, last paragraph, future work): a noncubic job is split into
//!   cubic pieces (each side written as a sum of powers of two: 3×5 →
//!   2×4, 2×1, 1×4, 1×1) that are placed, largest first, by Algorithm 2
//!   inside one 2^{⌈log2 Π l_i⌉}-node region (a 4×4 for 3×5 instead of a
//!   4×8); the grant is the union of the pieces' boxes
//!   (`Partition::Boxes`), the rest of the region is released at once.
//! - **Cubic systems** 2^{k_{n−1}}×…×2^{k_0} with unequal sides (§4.3): the
//!   longest dimensions are partitioned first (1-bit bitmaps while a single
//!   dimension is longest, 2^n-bit bitmaps once all take part). A job of
//!   2^A nodes takes 2^l sibling blocks of the largest block size 2^B not
//!   above the job (B ≤ A), with l = A − B, by Buddy in their parent's
//!   bitmap (for equal sides this is exactly Algorithm 2).
//!
//! What is granted: the *shape* depends only on the node count, so the
//! granted box's orientation may differ from the request (Kang's folding,
//! footnote 2); [`Request::Box`]'s `rotate` flag is therefore ignored.
//! Ties are broken by the lowest partition-step address (the order of the
//! tree of Fig. 3b), which is the paper's free-list order made
//! deterministic. Machines whose steps split more than six dimensions at
//! once (status bitmaps wider than 64 bits) are refused. Faulty nodes are
//! supported: marking a node faulty carves it out of the tree as a busy
//! single-node block.
//!
//! ```
//! use partalloc_allocators::kary::Isomorphic;
//! use partalloc_allocators::{Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut iso = Isomorphic::new("kary:8^3".parse()?)?;
//! // Kang §4.2: a 2×2×4 job takes two 2×2×2 subpartitions of a 4×4×4.
//! let g = iso.allocate(&Request::boxed(&[4, 2, 2])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0, 0], &[4, 2, 2])?));
//! assert_eq!(iso.addresses_of(&g)?.len(), 2);
//! // A 3×5 job on an 8×8 mesh: a 4×8 partition, 15 nodes kept, 17 released.
//! let mut m = Isomorphic::new("kary:8^2".parse()?)?;
//! let j = m.allocate(&Request::boxed(&[5, 3])?)?;
//! assert_eq!(j.granted_nodes(), 15);
//! assert_eq!(m.free_nodes(), 64 - 15);
//! iso.release(&g)?;
//! assert_eq!(iso.free_list_lengths(), vec![1, 0, 0, 0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{
    Coords, FreeSet, Grid, GridBox, MAX_DIMS, NodeId, NodeSet, OrientationOrder, Orientations,
    PartitionSteps, StepAddress, Topology, TopologyKind,
};

use super::common::{as_box_if_box, odometer};
use super::{any_grid, box_sides};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{
    AllocError, Allocator, FaultError, Grant, GrantLedger, Partition, ReleaseError, Request,
};

const NONE: u8 = 0;
const FREE: u8 = 1;
const SPLIT: u8 = 2;
const BUSY: u8 = 3;

/// Widest status bitmap supported: 2^6 = 64 children.
const MAX_FAN_BITS: u32 = 6;

/// What a live grant holds in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hold {
    /// `mask` children of block `parent` at level `level − 1` (for level 0,
    /// the root: parent 0, mask 1).
    Siblings { level: u32, parent: u64, mask: u64 },
    /// Busy blocks (level, index), after a noncubic job's surplus was
    /// released.
    Blocks(Vec<(u32, u64)>),
}

/// Where Algorithm 2 places a job: optionally a free block (level, index)
/// to decompose through child 0, then `mask` children of `parent`.
#[derive(Debug, Clone, Copy)]
struct Found {
    split_from: Option<(u32, u64)>,
    level: u32,
    parent: u64,
    mask: u64,
}

/// Kang's isomorphic allocation strategy. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Isomorphic {
    topology: Topology,
    grid: Grid,
    steps: PartitionSteps,
    k: u32,
    /// fan[s]: number of dimensions split at step s (fan[0] = 0).
    fan: Vec<u32>,
    /// bits[j]: address bits of a level-j block (2^bits[j] blocks).
    bits: Vec<u32>,
    state: Vec<Vec<u8>>,
    bitmap: Vec<Vec<u64>>,
    free: Vec<FreeSet>,
    /// avail[p][l]: split level-p blocks whose bitmap holds an aligned run
    /// of 2^l free children.
    avail: Vec<Vec<FreeSet>>,
    free_count: usize,
    faulty: NodeSet,
    ledger: GrantLedger<Hold>,
    split: bool,
    /// Cached geometry: dimensions split at each step, extents and volume
    /// of a block at each level.
    step_mask: Vec<u32>,
    level_ext: Vec<[u32; MAX_DIMS]>,
    vol: Vec<u64>,
    /// align[f][l]: start bits of aligned 2^l runs in a 2^f-bit bitmap.
    align: [[u64; 7]; 7],
    /// Reusable bitmap of the nodes a noncubic job keeps, indexed by
    /// position inside its granted block.
    scratch: NodeSet,
    /// Reusable empty strategies on the split option's regions, one per
    /// region shape met so far (left empty after each use).
    minis: Vec<Isomorphic>,
}

fn full_mask(f: u32) -> u64 {
    crate::rowgrid::low_bits(1u32 << f.min(MAX_FAN_BITS))
}

/// Start bits of aligned runs of 2^l set bits in a 2^f-bit bitmap
/// (`align` = bits at multiples of 2^l below 2^f).
#[inline]
fn runs_with(bm: u64, f: u32, l: u32, align: u64) -> u64 {
    let mut m = bm;
    for t in 0..l {
        m &= m >> (1u32 << t);
    }
    m & align & full_mask(f)
}

#[cfg(test)]
fn aligned_runs(bm: u64, f: u32, l: u32) -> u64 {
    let mut align = 0u64;
    let mut i = 0u32;
    while i < (1u32 << f) {
        align |= 1u64 << i;
        i += 1u32 << l;
    }
    runs_with(bm, f, l, align)
}

fn run_mask(l: u32) -> u64 {
    full_mask(l)
}

impl Isomorphic {
    /// Isomorphic allocation on a mesh or torus whose sides are powers of
    /// two.
    ///
    /// # Errors
    /// [`BuildError`] for a hypercube, sides that are not powers of two,
    /// or a step that splits more than six dimensions.
    pub fn new(topology: Topology) -> Result<Self, BuildError> {
        let grid = any_grid("isomorphic", &topology)?;
        let unsuitable = |reason: String| BuildError::UnsuitableTopology {
            strategy: "isomorphic",
            topology: topology.to_string(),
            reason,
        };
        let steps = PartitionSteps::new(grid.sides()).map_err(|e| unsuitable(e.to_string()))?;
        let k = steps.steps();
        let fan: Vec<u32> = (0..=k).map(|s| steps.step_dims(s).count_ones()).collect();
        if fan.iter().any(|&f| f > MAX_FAN_BITS) {
            return Err(unsuitable(format!(
                "a partition step splits more than {MAX_FAN_BITS} dimensions (status bitmaps are at most 64 bits)"
            )));
        }
        let bits: Vec<u32> = (0..=k).map(|j| steps.level_bits(j)).collect();
        let state: Vec<Vec<u8>> = bits.iter().map(|&b| vec![NONE; 1usize << b]).collect();
        let bitmap = bits[..k as usize]
            .iter()
            .map(|&b| vec![0u64; 1usize << b])
            .collect();
        let free = bits.iter().map(|&b| FreeSet::new(1usize << b)).collect();
        let avail = (0..k as usize)
            .map(|p| {
                (0..fan[p + 1])
                    .map(|_| FreeSet::new(1usize << bits[p]))
                    .collect()
            })
            .collect();
        let mut s = Self {
            topology,
            grid,
            steps,
            k,
            fan,
            bits,
            state,
            bitmap,
            free,
            avail,
            free_count: grid.num_nodes(),
            faulty: NodeSet::new(grid.num_nodes()),
            ledger: GrantLedger::new(),
            split: false,
            step_mask: (0..=k).map(|st| steps.step_dims(st)).collect(),
            level_ext: (0..=k)
                .map(|j| {
                    let mut e = [1u32; MAX_DIMS];
                    for (x, &lg) in e.iter_mut().zip(steps.level_extent_logs(j).iter()) {
                        *x = 1 << lg;
                    }
                    e
                })
                .collect(),
            vol: (0..=k).map(|j| steps.block_box(j, 0).volume()).collect(),
            align: {
                let mut a = [[0u64; 7]; 7];
                for (f, row) in a.iter_mut().enumerate() {
                    for (l, cell) in row.iter_mut().enumerate().take(f + 1) {
                        let mut i = 0u32;
                        while i < (1u32 << f) {
                            *cell |= 1u64 << i;
                            i += 1u32 << l;
                        }
                    }
                }
                a
            },
            scratch: NodeSet::new(0),
            minis: Vec::new(),
        };
        s.state[0][0] = FREE;
        let _ = s.free[0].insert(0);
        Ok(s)
    }

    /// The same strategy with the split option of Kang §4.2 (last
    /// paragraph, left there as future work): a noncubic job is split into
    /// cubic pieces placed together in a 2^{⌈log2 Π l_i⌉}-node region, and
    /// the grant is the union of the pieces' boxes (`Partition::Boxes`).
    #[must_use]
    pub fn with_split(mut self, split: bool) -> Self {
        self.split = split;
        self
    }

    /// The partition-step structure of the machine.
    #[must_use]
    pub fn partition_steps(&self) -> &PartitionSteps {
        &self.steps
    }

    /// The number of free blocks at each level (level 0 = the whole
    /// machine; on a 2^K-ary n-cube level j holds Kang's F_{(K−j)·n}).
    #[must_use]
    pub fn free_list_lengths(&self) -> Vec<usize> {
        self.free.iter().map(FreeSet::count).collect()
    }

    /// The free blocks of level `level`, lowest address first.
    #[must_use]
    pub fn free_list(&self, level: u32) -> Vec<StepAddress> {
        self.free.get(level as usize).map_or_else(Vec::new, |f| {
            f.iter()
                .map(|i| self.steps.address_of_block(level, i as u64))
                .collect()
        })
    }

    /// The partition-step addresses of the blocks a live grant occupies
    /// (2^l sibling blocks for a cubic job; for a noncubic job the blocks
    /// left after the surplus was released), in increasing address order.
    ///
    /// # Errors
    /// As [`GrantLedger::get`].
    pub fn addresses_of(&self, grant: &Grant) -> Result<Vec<StepAddress>, ReleaseError> {
        let hold = self.ledger.get(grant.id())?;
        Ok(self
            .hold_blocks(hold)
            .into_iter()
            .map(|(l, i)| self.steps.address_of_block(l, i))
            .collect())
    }

    fn hold_blocks(&self, hold: &Hold) -> Vec<(u32, u64)> {
        match hold {
            Hold::Siblings {
                level,
                parent,
                mask,
            } => {
                let f = self.fan[*level as usize];
                (0..64u64)
                    .filter(|c| mask & (1 << c) != 0)
                    .map(|c| (*level, (parent << f) | c))
                    .collect()
            }
            Hold::Blocks(v) => v.clone(),
        }
    }

    fn refresh(&mut self, p: u32, idx: u64) {
        let pu = p as usize;
        let f = self.fan[pu + 1];
        let split = self.state[pu][idx as usize] == SPLIT;
        let bm = self.bitmap[pu][idx as usize];
        for l in 0..f {
            if split && runs_with(bm, f, l, self.align[f as usize][l as usize]) != 0 {
                let _ = self.avail[pu][l as usize].insert(idx as usize);
            } else {
                let _ = self.avail[pu][l as usize].remove(idx as usize);
            }
        }
    }

    /// A free block stops being free (taken or split): leave F and clear
    /// its bit in the parent's bitmap.
    fn leave_free(&mut self, level: u32, idx: u64) {
        let _ = self.free[level as usize].remove(idx as usize);
        if level > 0 {
            let f = self.fan[level as usize];
            let p = idx >> f;
            let c = idx & ((1 << f) - 1);
            self.bitmap[level as usize - 1][p as usize] &= !(1u64 << c);
            self.refresh(level - 1, p);
        }
    }

    fn split_free(&mut self, level: u32, idx: u64) {
        self.leave_free(level, idx);
        let lu = level as usize;
        let f = self.fan[lu + 1];
        self.state[lu][idx as usize] = SPLIT;
        self.bitmap[lu][idx as usize] = full_mask(f);
        for c in 0..(1u64 << f) {
            let ch = ((idx << f) | c) as usize;
            self.state[lu + 1][ch] = FREE;
            let _ = self.free[lu + 1].insert(ch);
        }
        self.refresh(level, idx);
    }

    /// Takes the `mask` children of `parent` (free) at `level`.
    fn take(&mut self, level: u32, parent: u64, mask: u64) {
        let lu = level as usize;
        let f = self.fan[lu];
        for c in 0..(1u64 << f) {
            if mask & (1 << c) != 0 {
                let ch = ((parent << f) | c) as usize;
                self.state[lu][ch] = BUSY;
                let _ = self.free[lu].remove(ch);
            }
        }
        if level > 0 {
            self.bitmap[lu - 1][parent as usize] &= !mask;
            self.refresh(level - 1, parent);
        }
    }

    /// Returns the busy `mask` children of `parent` at `level`, merging
    /// buddies up the levels (Release steps 1–3).
    fn give(&mut self, mut level: u32, mut parent: u64, mut mask: u64) {
        loop {
            let lu = level as usize;
            let f = self.fan[lu];
            if level == 0 {
                self.state[0][0] = FREE;
                let _ = self.free[0].insert(0);
                return;
            }
            let bm = self.bitmap[lu - 1][parent as usize] | mask;
            if bm == full_mask(f) {
                // All 2^f buddies free: merge into the parent.
                for c in 0..(1u64 << f) {
                    let ch = ((parent << f) | c) as usize;
                    self.state[lu][ch] = NONE;
                    let _ = self.free[lu].remove(ch);
                }
                self.bitmap[lu - 1][parent as usize] = 0;
                self.state[lu - 1][parent as usize] = BUSY;
                self.refresh(level - 1, parent);
                let pf = self.fan[lu - 1];
                mask = 1u64 << (parent & ((1u64 << pf) - 1));
                parent >>= pf;
                level -= 1;
            } else {
                for c in 0..(1u64 << f) {
                    if mask & (1 << c) != 0 {
                        let ch = ((parent << f) | c) as usize;
                        self.state[lu][ch] = FREE;
                        let _ = self.free[lu].insert(ch);
                    }
                }
                self.bitmap[lu - 1][parent as usize] = bm;
                self.refresh(level - 1, parent);
                return;
            }
        }
    }

    fn give_block(&mut self, level: u32, idx: u64) {
        let f = self.fan[level as usize];
        self.give(level, idx >> f, 1u64 << (idx & ((1u64 << f) - 1)));
    }

    /// Level c and run length l for a job of 2^a_total nodes.
    fn level_for(&self, a_total: u32) -> Option<(u32, u32)> {
        let total = self.bits[self.k as usize];
        if a_total > total {
            return None;
        }
        (0..=self.k)
            .find(|&c| total - self.bits[c as usize] <= a_total)
            .map(|c| (c, a_total - (total - self.bits[c as usize])))
    }

    /// Algorithm 2 (Algorithm 1 when l = 0): the (level, parent, mask) to
    /// take, without changing anything.
    fn find(&self, c: u32, l: u32) -> Option<Found> {
        if c == 0 {
            return (self.state[0][0] == FREE).then_some(Found {
                split_from: None,
                level: 0,
                parent: 0,
                mask: 1,
            });
        }
        let p = c - 1;
        let f = self.fan[c as usize];
        // Step 2: 2^l free siblings in a split parent of size 2^{a+1}.
        if l == 0 {
            if let Some(i) = self.free[c as usize].first() {
                let i = i as u64;
                return Some(Found {
                    split_from: None,
                    level: c,
                    parent: i >> f,
                    mask: 1u64 << (i & ((1u64 << f) - 1)),
                });
            }
        } else if let Some(pi) = self.avail[p as usize][l as usize].first() {
            let bm = self.bitmap[p as usize][pi];
            let start = runs_with(bm, f, l, self.align[f as usize][l as usize]).trailing_zeros();
            return Some(Found {
                split_from: None,
                level: c,
                parent: pi as u64,
                mask: run_mask(l) << start,
            });
        }
        // Step 3: the smallest larger free block, decomposed through child 0.
        for j in (0..=p).rev() {
            if let Some(i) = self.free[j as usize].first() {
                let mut cur = i as u64;
                for lv in j..=p {
                    cur <<= self.fan[lv as usize + 1];
                }
                return Some(Found {
                    split_from: Some((j, i as u64)),
                    level: c,
                    parent: cur >> f,
                    mask: run_mask(l),
                });
            }
        }
        None
    }

    fn siblings_box(&self, level: u32, parent: u64, mask: u64) -> Option<GridBox> {
        let f = self.fan[level as usize];
        let start = u64::from(mask.trailing_zeros());
        let l = mask.count_ones().trailing_zeros();
        let n = self.grid.dims();
        // Base corner: the digits of the first `level` steps, first step
        // most significant (PartitionSteps::block_base, with cached masks).
        let idx = (parent << f) | start;
        let mut base = [0u32; MAX_DIMS];
        let mut shift = self.bits[level as usize];
        for st in 1..=level as usize {
            let dims = self.step_mask[st];
            shift -= self.fan[st];
            let d = (idx >> shift) as u32;
            let bit = self.k - st as u32;
            let mut t = 0;
            for (i, b) in base.iter_mut().enumerate().take(n) {
                if dims & (1 << i) != 0 {
                    *b |= ((d >> t) & 1) << bit;
                    t += 1;
                }
            }
        }
        let mut ext = self.level_ext[level as usize];
        let dims = self.step_mask[level as usize];
        let mut t = 0;
        for (i, e) in ext.iter_mut().enumerate().take(n) {
            if dims & (1 << i) != 0 {
                if t < l {
                    *e *= 2;
                }
                t += 1;
            }
        }
        GridBox::new(&base[..n], &ext[..n]).ok()
    }

    fn cubic_exponents(sides: &[u32]) -> (u32, bool) {
        let mut total = 0;
        let mut cubic = true;
        for &s in sides {
            // Sides above 2^31 round to 2^32, far beyond any machine.
            let c = s
                .checked_next_power_of_two()
                .map_or(32, u32::trailing_zeros);
            cubic &= s.is_power_of_two();
            total += c;
        }
        (total, cubic)
    }

    /// log2 of the nodes a job is searched for, and whether it is cubic:
    /// Σ ⌈log2 l_i⌉, or with `split` for a noncubic job ⌈log2 Π l_i⌉.
    fn job_exponent(&self, sides: &[u32]) -> (u32, bool) {
        let (total, cubic) = Self::cubic_exponents(sides);
        if cubic || !self.split {
            return (total, cubic);
        }
        let vol = sides
            .iter()
            .fold(1u64, |acc, &s| acc.saturating_mul(u64::from(s)));
        (
            vol.checked_next_power_of_two()
                .map_or(64, u64::trailing_zeros),
            false,
        )
    }

    /// The split option (Kang §4.2, last paragraph): the job's sides are
    /// written as sums of powers of two, the job as the product of those
    /// parts (3×5 = (2+1)×(4+1) → 2×4, 2×1, 1×4, 1×1), and the cubic pieces
    /// are placed, largest first, by Algorithm 2 inside the 2^{⌈log2 Π l_i⌉}
    /// region `g` (for 3×5 a 4×4 instead of a 4×8), using `mini`, an empty
    /// strategy on a mesh of `g`'s shape, which is left empty again.
    /// Placing decreasing power-of-two sizes in a power-of-two region
    /// always succeeds.
    fn split_pieces(mini: &mut Self, g: &GridBox, sides: &[u32]) -> Option<Partition> {
        let mut pieces: Vec<Vec<u32>> = vec![Vec::new()];
        for &s in sides {
            let parts: Vec<u32> = (0..32u32)
                .rev()
                .filter(|b| s & (1 << b) != 0)
                .map(|b| 1u32 << b)
                .collect();
            pieces = pieces
                .iter()
                .flat_map(|p| {
                    parts.iter().map(move |&q| {
                        let mut v = p.clone();
                        v.push(q);
                        v
                    })
                })
                .collect();
        }
        pieces
            .sort_by_key(|p| core::cmp::Reverse(p.iter().map(|&x| u64::from(x)).product::<u64>()));
        let mut grants = Vec::with_capacity(pieces.len());
        let mut boxes = Vec::with_capacity(pieces.len());
        let mut ok = true;
        for p in pieces {
            let Some(gr) = Request::boxed(&p).ok().and_then(|r| mini.allocate(&r).ok()) else {
                ok = false;
                break;
            };
            if let Partition::Box(b) = gr.partition() {
                let mut base = *b.base();
                for (x, &o) in base.iter_mut().zip(g.base().iter()) {
                    *x += o;
                }
                boxes.extend(GridBox::new(&base, b.extents()).ok());
            } else {
                ok = false;
            }
            grants.push(gr);
        }
        for gr in &grants {
            // Grants of `mini` itself: releasing them cannot fail.
            let _ = mini.release(gr);
        }
        if !ok || boxes.len() != grants.len() {
            return None;
        }
        boxes.sort_unstable();
        Some(Partition::Boxes(boxes))
    }

    /// An empty strategy on a mesh of `g`'s shape for the split option.
    fn mini_for(g: &GridBox) -> Option<Self> {
        let region = Grid::mesh(g.extents()).ok()?;
        Self::new(region.into()).ok()
    }

    /// The nodes a noncubic job keeps inside the granted box `g`: the
    /// requested box at `g`'s base in the first orientation that fits, else
    /// a fold of it ([`Self::folded`]).
    fn kept(&self, g: &GridBox, sides: &[u32]) -> Option<Partition> {
        let ext = g.extents();
        // The given orientation, then the others in lexicographic order.
        if let Ok(sides) = Coords::new(sides) {
            for o in Orientations::new(sides, OrientationOrder::Lexicographic) {
                if o.iter().zip(ext.iter()).all(|(s, e)| s <= e)
                    && let Ok(b) = GridBox::new(g.base(), &o)
                {
                    return Some(Partition::Box(b));
                }
            }
        }
        self.folded(g, sides)
    }

    /// Kang's folding (§4.2, footnote 2) of the job into the block `g`
    /// when the requested box fits it in no orientation (`None` only if the
    /// shapes cannot be matched, which equal power-of-two volumes exclude).
    ///
    /// The job's 2^{⌈log2 l_i⌉} box has the volume of `g`. Job dimension i
    /// goes to `g`'s dimension i, unless swapping two dimensions' targets
    /// needs fewer folds. Then, while some job dimension p is longer than
    /// its target t, it is folded zig-zag (an accordion fold) onto the
    /// first dimension q shorter than its target: p is cut into segments
    /// of length t, segment u keeps p (u even) or mirrors it (u odd), and
    /// the segments are laid side by side along q, each as wide as the
    /// job's occupied range [0, H) of q, mirrored in q when u is odd. A q
    /// that grows past its target is folded on in turn. Consecutive
    /// segments meet at a node pair that differs in q only, so the kept
    /// nodes — the image of the requested box, all inside `g` — stay
    /// connected.
    fn folded(&self, g: &GridBox, sides: &[u32]) -> Option<Partition> {
        let n = sides.len();
        let target = g.extents();
        let mut ext = [1u32; MAX_DIMS];
        let mut hi = [1u32; MAX_DIMS];
        for i in 0..n {
            ext[i] = sides[i].checked_next_power_of_two()?;
            hi[i] = sides[i];
        }
        let mut sigma = [0usize; MAX_DIMS];
        for (i, x) in sigma.iter_mut().enumerate() {
            *x = i;
        }
        let cost = |e: u32, t: u32| e.trailing_zeros().abs_diff(t.trailing_zeros());
        let mut improved = true;
        while improved {
            improved = false;
            for i in 0..n {
                for j in i + 1..n {
                    let now = cost(ext[i], target[sigma[i]]) + cost(ext[j], target[sigma[j]]);
                    let swapped = cost(ext[i], target[sigma[j]]) + cost(ext[j], target[sigma[i]]);
                    if swapped < now {
                        sigma.swap(i, j);
                        improved = true;
                    }
                }
            }
        }
        let want: [u32; MAX_DIMS] =
            core::array::from_fn(|i| if i < n { target[sigma[i]] } else { 1 });
        // Folds (p, q, segment length t, occupied width H of q).
        let mut folds = [(0usize, 0usize, 0u32, 0u32); MAX_DIMS];
        let mut count = 0;
        while let Some(p) = (0..n).find(|&i| ext[i] > want[i]) {
            let q = (0..n).find(|&i| ext[i] < want[i])?;
            let t = want[p];
            let width = hi[q];
            *folds.get_mut(count)? = (p, q, t, width);
            count += 1;
            hi[q] = hi[p].div_ceil(t) * width;
            hi[p] = hi[p].min(t);
            ext[q] *= ext[p] / t;
            ext[p] = t;
        }
        if ext[..n] != want[..n] {
            return None;
        }
        let total: u64 = sides.iter().map(|&s| u64::from(s)).product();
        let mut nodes = Vec::with_capacity(usize::try_from(total).ok()?);
        let mut x = [0u32; MAX_DIMS];
        for _ in 0..total {
            let mut y = x;
            for &(p, q, t, width) in &folds[..count] {
                let (u, v) = (y[p] / t, y[p] % t);
                if u.is_multiple_of(2) {
                    y[p] = v;
                    y[q] += u * width;
                } else {
                    y[p] = t - 1 - v;
                    y[q] = u * width + width - 1 - y[q];
                }
            }
            let mut c = *g.base();
            for i in 0..n {
                c[sigma[i]] += y[i];
            }
            nodes.push(self.grid.id_of(&c).ok()?);
            odometer(&mut x[..n], sides);
        }
        nodes.sort_unstable();
        Some(as_box_if_box(&self.grid, nodes))
    }

    /// Splits busy blocks so that only the kept nodes stay busy; returns
    /// the busy blocks. `keep` is a bitmap of the nodes of the granted block
    /// `g`, by position inside it (dimension 0 fastest).
    fn carve(
        &mut self,
        level: u32,
        idx: u64,
        g: &GridBox,
        keep: &NodeSet,
        out: &mut Vec<(u32, u64)>,
    ) {
        let b = self.steps.block_box(level, idx);
        let inside = kept_count(&b, g, keep);
        if inside == b.volume() {
            out.push((level, idx));
        } else if inside == 0 {
            self.give_block(level, idx);
        } else {
            let lu = level as usize;
            let f = self.fan[lu + 1];
            self.state[lu][idx as usize] = SPLIT;
            self.bitmap[lu][idx as usize] = 0;
            for c in 0..(1u64 << f) {
                self.state[lu + 1][((idx << f) | c) as usize] = BUSY;
            }
            self.refresh(level, idx);
            for c in 0..(1u64 << f) {
                self.carve(level + 1, (idx << f) | c, g, keep, out);
            }
        }
    }

    fn node_path(&self, node: NodeId) -> Option<(u32, u64, u8)> {
        let coords = self.grid.coords_of(node).ok()?;
        let full = self.steps.block_index(self.k, &coords);
        let total = self.bits[self.k as usize];
        for j in 0..=self.k {
            let idx = full >> (total - self.bits[j as usize]);
            let s = self.state[j as usize][idx as usize];
            if s != SPLIT {
                return Some((j, idx, s));
            }
        }
        None
    }

    fn no_room(&self, request: &Request) -> AllocError {
        AllocError::NoRoom {
            request: *request,
            free: self.free_count,
            total: self.grid.num_nodes(),
        }
    }
}

/// Position of `c` inside the box `g` (dimension 0 fastest), or `None`
/// outside it.
fn local_index(g: &GridBox, c: &[u32]) -> Option<usize> {
    let (base, ext) = (g.base(), g.extents());
    let mut idx = 0usize;
    let mut stride = 1usize;
    for i in 0..c.len() {
        let d = c[i].checked_sub(base[i]).filter(|&d| d < ext[i])?;
        idx += d as usize * stride;
        stride *= ext[i] as usize;
    }
    Some(idx)
}

/// Calls `f(start, len)` for each row of the box `b` along dimension 0:
/// the run of positions inside `g` ([`local_index`]) it covers. Parts of
/// `b` outside `g` are skipped.
fn rows_in(b: &GridBox, g: &GridBox, mut f: impl FnMut(usize, usize)) {
    let n = b.base().len();
    let ext = b.extents();
    if n == 0 || ext[0] == 0 {
        return;
    }
    let rows = b.volume() / u64::from(ext[0]);
    let mut x = [0u32; MAX_DIMS];
    let mut c = [0u32; MAX_DIMS];
    for _ in 0..rows {
        for i in 0..n {
            c[i] = b.base()[i] + x[i];
        }
        if let Some(start) = local_index(g, &c[..n]) {
            f(start, ext[0] as usize);
        }
        odometer(&mut x[1..n], &ext[1..n]);
    }
}

/// How many nodes of the box `b` (inside `g`) are set in `keep`, a bitmap
/// of `g`'s nodes by [`local_index`]: one masked popcount per row.
fn kept_count(b: &GridBox, g: &GridBox, keep: &NodeSet) -> u64 {
    let mut count = 0;
    rows_in(b, g, |start, len| {
        count += keep.count_range(start, start + len).unwrap_or(0) as u64;
    });
    count
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "isomorphic",
        summary: "isomorphic partitioning into 2^n-ary trees of subcubes with free lists and status bitmaps; cubic jobs folded to semi-isomorphic shapes",
        source: "Kang, Yu, Youn, Lee & Kim, IEEE TC 2003, §4 (Alg. 1, Alg. 2, §4.2, §4.3)",
        params: &[ParamInfo {
            name: "split",
            default: "false",
            doc: "true: split a noncubic job into cubic pieces placed in a 2^⌈log2 nodes⌉ region (Kang §4.2 future work), granted as a union of boxes",
        }],
        topologies: &[TopologyKind::Mesh, TopologyKind::Torus],
    },
    build: |t, s| {
        let split = s.parse_or("split", false)?;
        Ok(Box::new(Isomorphic::new(t.clone())?.with_split(split)))
    },
};

impl Allocator for Isomorphic {
    fn name(&self) -> String {
        if self.split {
            "isomorphic[split=true]".to_owned()
        } else {
            "isomorphic".to_owned()
        }
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let (sides, _) = box_sides("isomorphic", &self.grid, request)?;
        let (a_total, cubic) = self.job_exponent(sides);
        let (c, l) = self.level_for(a_total).ok_or_else(|| AllocError::Invalid {
            request: *request,
            reason: format!(
                "it needs 2^{a_total} nodes after rounding up to powers of two; the machine has {}",
                self.grid.num_nodes()
            ),
        })?;
        let Found {
            split_from,
            level,
            parent,
            mask,
        } = self.find(c, l).ok_or_else(|| self.no_room(request))?;
        let granted = self
            .siblings_box(level, parent, mask)
            .ok_or_else(|| self.no_room(request))?;
        let part = if cubic {
            None
        } else if self.split {
            let pos = self
                .minis
                .iter()
                .position(|m| m.grid.sides() == granted.extents());
            let mut mini = match pos {
                Some(i) => self.minis.swap_remove(i),
                None => Self::mini_for(&granted).ok_or_else(|| self.no_room(request))?,
            };
            let pieces = Self::split_pieces(&mut mini, &granted, sides);
            self.minis.push(mini);
            Some(pieces.ok_or_else(|| self.no_room(request))?)
        } else {
            Some(self.kept(&granted, sides).ok_or(AllocError::Unsupported {
                strategy: "isomorphic",
                request: *request,
                reason: "the job box cannot be folded into its block",
            })?)
        };
        // Step 3/4: decompose the free block found through child 0.
        if let Some((j, mut idx)) = split_from {
            for lv in j..level {
                self.split_free(lv, idx);
                idx <<= self.fan[lv as usize + 1];
            }
        }
        self.take(level, parent, mask);
        let want = request.node_count();
        let Some(part) = part else {
            self.free_count -= granted.volume() as usize;
            let id = self.ledger.issue(Hold::Siblings {
                level,
                parent,
                mask,
            });
            return Ok(Grant::new(id, Partition::Box(granted), want));
        };
        // Noncubic: keep the job's nodes, release the rest at once. The
        // kept nodes are marked in a reusable bitmap of the granted block,
        // so the work is O(block), not O(machine).
        let mut keep = core::mem::take(&mut self.scratch);
        keep.reset(granted.volume() as usize);
        let mut mark = |st: usize, len: usize| {
            let _ = keep.insert_range(st, st + len);
        };
        match &part {
            Partition::Box(b) => rows_in(b, &granted, &mut mark),
            Partition::Boxes(v) => {
                for b in v {
                    rows_in(b, &granted, &mut mark);
                }
            }
            other => {
                let grid = self.grid;
                let _ = other.for_each_node(&self.topology, |nd| {
                    if let Ok(c) = grid.coords_of(nd)
                        && let Some(i) = local_index(&granted, c.as_slice())
                    {
                        mark(i, 1);
                    }
                });
            }
        }
        let mut blocks = Vec::new();
        let f = self.fan[level as usize];
        for ch in 0..64u64 {
            if mask & (1 << ch) != 0 {
                self.carve(level, (parent << f) | ch, &granted, &keep, &mut blocks);
            }
        }
        self.scratch = keep;
        blocks.sort_unstable();
        self.free_count -= part.len() as usize;
        let id = self.ledger.issue(Hold::Blocks(blocks));
        Ok(Grant::new(id, part, want))
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let hold = self.ledger.take(grant.id())?;
        match hold {
            Hold::Siblings {
                level,
                parent,
                mask,
            } => {
                let vol = self.vol[level as usize] * u64::from(mask.count_ones());
                self.free_count += vol as usize;
                self.give(level, parent, mask);
            }
            Hold::Blocks(v) => {
                for (level, idx) in v {
                    self.free_count += self.vol[level as usize] as usize;
                    self.give_block(level, idx);
                }
            }
        }
        Ok(())
    }

    fn free_nodes(&self) -> usize {
        self.free_count
    }

    fn live_grants(&self) -> usize {
        self.ledger.len()
    }

    fn is_available(&self, node: NodeId) -> bool {
        matches!(self.node_path(node), Some((_, _, FREE)))
    }

    fn busy_nodes(&self) -> NodeSet {
        let mut set = NodeSet::new(self.grid.num_nodes());
        for (_, hold) in self.ledger.iter() {
            for (l, i) in self.hold_blocks(hold) {
                if let Ok(it) = self.grid.box_nodes(&self.steps.block_box(l, i)) {
                    for nd in it {
                        let _ = set.insert(nd);
                    }
                }
            }
        }
        set
    }

    fn faulty_nodes(&self) -> NodeSet {
        self.faulty.clone()
    }

    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.grid.check_node(node)?;
        if self.faulty.contains(node) {
            return Ok(());
        }
        let (mut level, mut idx, s) = self.node_path(node).ok_or(FaultError::Busy { node })?;
        if s != FREE {
            return Err(FaultError::Busy { node });
        }
        let coords = self.grid.coords_of(node)?;
        while level < self.k {
            self.split_free(level, idx);
            level += 1;
            idx = self.steps.block_index(level, &coords);
        }
        let f = self.fan[level as usize];
        self.take(level, idx >> f, 1u64 << (idx & ((1u64 << f) - 1)));
        self.faulty.insert(node)?;
        self.free_count -= 1;
        Ok(())
    }

    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.grid.check_node(node)?;
        if !self.faulty.remove(node)? {
            return Ok(());
        }
        let coords = self.grid.coords_of(node)?;
        let idx = self.steps.block_index(self.k, &coords);
        self.give_block(self.k, idx);
        self.free_count += 1;
        Ok(())
    }

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let (sides, _) = box_sides("isomorphic", &self.grid, request)?;
        let (a_total, cubic) = self.job_exponent(sides);
        let (c, l) = self.level_for(a_total).ok_or_else(|| AllocError::Invalid {
            request: *request,
            reason: "larger than the machine".to_owned(),
        })?;
        let mut out = Vec::new();
        let parents = if c == 0 {
            1
        } else {
            1u64 << self.bits[c as usize - 1]
        };
        let f = self.fan[c as usize];
        let runs = if c == 0 { 1 } else { (1u64 << f) >> l };
        for p in 0..parents {
            for r in 0..runs {
                let mask = if c == 0 { 1 } else { run_mask(l) << (r << l) };
                if let Some(b) = self.siblings_box(c, p, mask) {
                    if cubic {
                        out.push(Partition::Box(b));
                    } else if self.split {
                        if let Some(mut mini) = Self::mini_for(&b) {
                            out.extend(Self::split_pieces(&mut mini, &b, sides));
                        }
                    } else {
                        out.extend(self.kept(&b, sides));
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs() {
        assert_eq!(aligned_runs(0b1111_0110, 3, 1), 0b0101_0000);
        assert_eq!(aligned_runs(0b1111_0110, 3, 2), 0b0001_0000);
        assert_eq!(aligned_runs(u64::MAX, 6, 5), 1 | (1 << 32));
        assert_eq!(full_mask(2), 0b1111);
    }
}
