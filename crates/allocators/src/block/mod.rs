//! Block placement on a Slurm `topology/block` machine.
//!
//! The rule, as Slurm's topology guide and sbatch's `--segment` and
//! `--exclusive=topo` options document it: a job goes into the smallest
//! aggregated block level that can hold it, and into the best-fit block of
//! that level (fewest free nodes, ties to the lowest block); inside that
//! block it takes nodes from the fullest base blocks first. With a segment
//! size `S`, the nodes come in segments of `S`, each inside one base block;
//! in exclusive-topology mode the job takes whole, fully free base blocks.
//!
//! ```
//! use partalloc_allocators::block::{BlockPlacer, Placement};
//! use partalloc_topology::slurm::SlurmMachine;
//! let conf = "BlockName=r[0-1] Nodes=n[00-17]\nBlockName=r[2-3] Nodes=n[18-35]\n";
//! let m = SlurmMachine::parse_conf(conf, "x.conf")?;
//! let mut p = BlockPlacer::new(m.blocks().expect("blocks"));
//! let nodes = p.place(20, Placement::default())?;
//! assert_eq!(m.hostlist(&nodes), "n[00-19]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::NodeId;
use partalloc_topology::slurm::Blocks;
use thiserror::Error;

mod buddy;

pub use buddy::BlockBuddy;

/// How a job asks to be placed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    /// `--segment=S`: nodes in segments of `S`, each in one base block.
    pub segment: Option<u32>,
    /// `--exclusive=topo`: whole base blocks, shared with no other job.
    pub exclusive: bool,
}

/// Why a job cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PlaceError {
    /// The request can never be placed on this machine.
    #[error("cannot place {nodes} nodes: {reason}")]
    Invalid {
        /// Nodes asked for.
        nodes: u32,
        /// Why.
        reason: String,
    },
    /// No block has room now.
    #[error("no block has room for {nodes} nodes now")]
    NoRoom {
        /// Nodes asked for.
        nodes: u32,
    },
}

/// The placement state of one block machine: which nodes are busy, and the
/// free count of every base block.
#[derive(Debug, Clone)]
pub struct BlockPlacer {
    base: u32,
    levels: Vec<u32>,
    busy: Vec<bool>,
    free: Vec<u32>,
    /// Base blocks held whole by exclusive jobs.
    held: Vec<bool>,
    /// Reused between placements: the chosen block's base blocks in the
    /// order they are filled.
    order: Vec<u32>,
}

impl BlockPlacer {
    /// An empty machine with the structure of `blocks`.
    #[must_use]
    pub fn new(blocks: &Blocks) -> Self {
        let n = blocks.base_blocks() as usize;
        Self {
            base: blocks.base_size(),
            levels: blocks.levels().to_vec(),
            busy: vec![false; n * blocks.base_size() as usize],
            free: vec![blocks.base_size(); n],
            held: vec![false; n],
            order: Vec::with_capacity(*blocks.levels().last().unwrap_or(&1) as usize),
        }
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
    /// units any block of that level offers, in nodes.
    #[must_use]
    pub fn largest_placeable(&self, level: usize, how: Placement) -> u32 {
        let Some(&m) = self.levels.get(level) else {
            return 0;
        };
        let unit = match (how.exclusive, how.segment) {
            (true, _) => self.base,
            (false, Some(s)) if s > 0 && s <= self.base => s,
            (false, Some(_)) => return 0,
            (false, None) => 1,
        };
        (0..self.free.len())
            .step_by(m as usize)
            .map(|first| {
                (first..(first + m as usize).min(self.free.len()))
                    .map(|b| self.units(b, how))
                    .sum::<u32>()
            })
            .max()
            .map_or(0, |u| u * unit)
    }

    /// Free nodes that a job wanting whole base blocks cannot use: those in
    /// base blocks partly busy or held by an exclusive job.
    #[must_use]
    pub fn stranded_nodes(&self) -> u32 {
        (0..self.free.len())
            .filter(|&b| self.held[b] || self.free[b] < self.base)
            .map(|b| self.free[b])
            .sum()
    }

    /// Free nodes of base block `b`.
    #[must_use]
    pub fn free_in(&self, b: u32) -> u32 {
        self.free.get(b as usize).copied().unwrap_or(0)
    }

    /// How many units (nodes, segments or whole base blocks) base block `b`
    /// offers to `how`.
    fn units(&self, b: usize, how: Placement) -> u32 {
        if self.held[b] {
            return 0;
        }
        match (how.exclusive, how.segment) {
            (true, _) => u32::from(self.free[b] == self.base),
            (false, Some(s)) => self.free[b] / s,
            (false, None) => self.free[b],
        }
    }

    /// Units a job of `nodes` nodes needs under `how`.
    fn need(&self, nodes: u32, how: Placement) -> Result<u32, PlaceError> {
        let invalid = |reason: String| PlaceError::Invalid { nodes, reason };
        let total = self.free.len() as u64 * u64::from(self.base);
        if nodes == 0 || u64::from(nodes) > total {
            return Err(invalid(format!("the machine has {total} nodes")));
        }
        let need = match (how.exclusive, how.segment) {
            (true, _) => nodes.div_ceil(self.base),
            (false, Some(s)) => {
                if s == 0 || s > self.base || !nodes.is_multiple_of(s) {
                    return Err(invalid(format!(
                        "segment {s} must divide the job and fit a base block of {}",
                        self.base
                    )));
                }
                nodes / s
            }
            (false, None) => nodes,
        };
        // A job must fit one block of the largest level, even on an empty
        // machine, or it would wait for ever.
        let widest = self
            .levels
            .last()
            .map_or(1, |&m| m as usize)
            .min(self.free.len()) as u64;
        let per_block = match (how.exclusive, how.segment) {
            (true, _) => 1,
            (false, Some(s)) => u64::from(self.base / s),
            (false, None) => u64::from(self.base),
        };
        if u64::from(need) > widest * per_block {
            return Err(invalid(format!(
                "the largest block ({} nodes) cannot hold it{}",
                widest * u64::from(self.base),
                if how.segment.is_some() {
                    " in whole segments"
                } else {
                    ""
                }
            )));
        }
        Ok(need)
    }

    /// The block the rule chooses: (level, index), or `None` if no block of
    /// any level has room.
    ///
    /// # Errors
    /// A request that can never be placed.
    pub fn choose(&self, nodes: u32, how: Placement) -> Result<Option<(usize, u32)>, PlaceError> {
        let need = self.need(nodes, how)?;
        for (level, &m) in self.levels.iter().enumerate() {
            if u64::from(m) * u64::from(self.base) < u64::from(nodes) {
                continue;
            }
            let mut best: Option<(u32, u32)> = None; // (free nodes, block)
            for (i, run) in self.free.chunks(m as usize).enumerate() {
                let first = i * m as usize;
                let units: u32 = (first..first + run.len()).map(|b| self.units(b, how)).sum();
                let free: u32 = run.iter().sum();
                if units >= need && best.is_none_or(|(f, _)| free < f) {
                    best = Some((free, i as u32));
                }
            }
            if let Some((_, i)) = best {
                return Ok(Some((level, i)));
            }
        }
        Ok(None)
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
    /// [`PlaceError::Invalid`] for a request no state could hold,
    /// [`PlaceError::NoRoom`] when no block has room now; the state is then
    /// unchanged.
    pub fn place_into(
        &mut self,
        nodes: u32,
        how: Placement,
        out: &mut Vec<NodeId>,
    ) -> Result<(), PlaceError> {
        out.clear();
        let Some((level, i)) = self.choose(nodes, how)? else {
            return Err(PlaceError::NoRoom { nodes });
        };
        let m = self.levels[level] as usize;
        let first = i as usize * m;
        let last = (first + m).min(self.free.len());
        // Fullest base blocks first (ties to the lowest), so emptier ones
        // stay whole for later jobs.
        let mut order = core::mem::take(&mut self.order);
        order.clear();
        order.extend(
            (first..last)
                .filter(|&b| self.units(b, how) > 0)
                .map(|b| b as u32),
        );
        order.sort_unstable_by_key(|&b| (self.free[b as usize], b));
        let mut left = nodes;
        for &b in &order {
            let b = b as usize;
            if left == 0 {
                break;
            }
            let take = match (how.exclusive, how.segment) {
                (true, _) => {
                    self.held[b] = true;
                    left.min(self.base)
                }
                (false, Some(s)) => (self.free[b] / s * s).min(left),
                (false, None) => self.free[b].min(left),
            };
            let start = b * self.base as usize;
            let mut got = 0;
            for (k, busy) in self.busy[start..start + self.base as usize]
                .iter_mut()
                .enumerate()
            {
                if got == take {
                    break;
                }
                if !*busy {
                    *busy = true;
                    out.push((start + k) as NodeId);
                    got += 1;
                }
            }
            self.free[b] -= take;
            left -= take;
        }
        self.order = order;
        out.sort_unstable();
        Ok(())
    }

    /// Frees the nodes of a placed job (and the base blocks an exclusive job
    /// held).
    pub fn release(&mut self, nodes: &[NodeId], how: Placement) {
        for &n in nodes {
            let b = (n / self.base) as usize;
            if let Some(busy) = self.busy.get_mut(n as usize).filter(|x| **x) {
                *busy = false;
                self.free[b] += 1;
            }
            if how.exclusive {
                self.held[b] = false;
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

    #[test]
    fn segment_12_job_of_36_nodes_is_three_whole_segments() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        let seg = Placement {
            segment: Some(12),
            exclusive: false,
        };
        let nodes = p.place(36, seg).unwrap();
        // Three base blocks, twelve nodes each: not 17 + 17 + 2.
        assert_eq!(m.hostlist(&nodes), "n[000-011,018-029,036-047]");
        for b in 0..8 {
            let used = nodes.iter().filter(|&&n| n / 18 == b).count();
            assert!(used == 0 || used == 12, "rack {b} has {used}");
        }
        // Without segments the same job fills two racks of the level-36 block.
        let mut q = BlockPlacer::new(m.blocks().unwrap());
        let plain = q.place(36, Placement::default()).unwrap();
        assert_eq!(m.hostlist(&plain), "n[000-035]");
    }

    #[test]
    fn largest_placeable_and_stranded_nodes_follow_the_state() {
        let m = racks(4, 4, "4,8,16");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        let plain = Placement::default();
        let seg2 = Placement {
            segment: Some(2),
            exclusive: false,
        };
        let ex = Placement {
            segment: None,
            exclusive: true,
        };
        assert_eq!(p.largest_placeable(0, plain), 4);
        assert_eq!(p.largest_placeable(2, plain), 16);
        assert_eq!(p.stranded_nodes(), 0);
        let a = p.place(3, plain).unwrap(); // rack 0: one free
        let b = p.place(5, ex).unwrap(); // racks 2 and 3 held, rack 3 with 3 free
        assert_eq!(m.hostlist(&b), "n[008-012]");
        assert_eq!(p.stranded_nodes(), 1 + 3);
        // Rack 1 is the only whole free rack.
        assert_eq!(p.largest_placeable(0, plain), 4);
        assert_eq!(p.largest_placeable(1, plain), 5);
        assert_eq!(p.largest_placeable(1, seg2), 4);
        assert_eq!(p.largest_placeable(1, ex), 4);
        assert_eq!(p.largest_placeable(2, plain), 5);
        assert_eq!(p.largest_placeable(3, plain), 0);
        assert_eq!(p.free_nodes(), 8);
        p.release(&b, ex);
        p.release(&a, plain);
        assert_eq!((p.stranded_nodes(), p.largest_placeable(2, ex)), (0, 16));
    }

    #[test]
    fn jobs_larger_than_the_largest_block_are_invalid_not_waiting() {
        // Levels up to pairs: 4 racks of 4, no block of the whole machine.
        let m = racks(4, 4, "4,8");
        let p = BlockPlacer::new(m.blocks().unwrap());
        assert!(matches!(
            p.choose(9, Placement::default()),
            Err(PlaceError::Invalid { .. })
        ));
        assert!(p.choose(8, Placement::default()).unwrap().is_some());
        // Segments of 3 fit once per rack of 4: at most 6 nodes per pair.
        let seg = Placement {
            segment: Some(3),
            exclusive: false,
        };
        assert!(matches!(p.choose(9, seg), Err(PlaceError::Invalid { .. })));
        assert!(p.choose(6, seg).unwrap().is_some());
    }

    #[test]
    fn place_into_reuses_the_callers_buffer() {
        let m = racks(8, 18, "18,36,72,144");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        let mut out = Vec::with_capacity(144);
        let cap = out.capacity();
        p.place_into(
            36,
            Placement {
                segment: Some(12),
                exclusive: false,
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(m.hostlist(&out), "n[000-011,018-029,036-047]");
        p.place_into(20, Placement::default(), &mut out).unwrap();
        assert_eq!((out.len(), out.capacity()), (20, cap));
        assert_eq!(
            p.place_into(200, Placement::default(), &mut out),
            Err(PlaceError::Invalid {
                nodes: 200,
                reason: "the machine has 144 nodes".into()
            })
        );
        assert!(out.is_empty());
    }

    #[test]
    fn best_fit_chooses_the_fullest_block_of_the_smallest_level() {
        let m = racks(4, 4, "4,8,16");
        let mut p = BlockPlacer::new(m.blocks().unwrap());
        let a = p.place(3, Placement::default()).unwrap();
        assert_eq!(m.hostlist(&a), "n[000-002]");
        // 1 node: rack 0 has 1 free, the fullest block that holds it.
        let b = p.place(1, Placement::default()).unwrap();
        assert_eq!(m.hostlist(&b), "n003");
        // 6 nodes: level 8 (racks 2-3, all free, since racks 0-1 have 4).
        let c = p.place(6, Placement::default()).unwrap();
        assert_eq!(m.hostlist(&c), "n[008-013]");
        // 3 nodes: rack 3 (2 free) cannot, rack 1 (4 free) can: best fit at level 4.
        let d = p.place(3, Placement::default()).unwrap();
        assert_eq!(m.hostlist(&d), "n[004-006]");
        let ex = Placement {
            segment: None,
            exclusive: true,
        };
        assert_eq!(p.place(2, ex), Err(PlaceError::NoRoom { nodes: 2 }));
        p.release(&c, Placement::default());
        let e = p.place(5, ex).unwrap();
        assert_eq!(m.hostlist(&e), "n[008-012]");
        // Rack 3 is held whole by the exclusive job though it has free nodes.
        assert_eq!(
            p.place(1, Placement::default()).map(|v| m.hostlist(&v)),
            Ok("n007".into())
        );
        assert!(matches!(
            p.place(
                4,
                Placement {
                    segment: Some(3),
                    exclusive: false
                }
            ),
            Err(PlaceError::Invalid { .. })
        ));
    }

    /// The rule as a preference over placements, for the brute force: a
    /// placement (a set of free nodes) ranks by the smallest level whose one
    /// block holds it, that block's free nodes and index (best fit), the
    /// nodes it takes from the block's base blocks ordered fullest first
    /// (more is better: emptier ones stay whole), then the lowest ids.
    #[expect(clippy::type_complexity, reason = "a lexicographic key, read once")]
    fn rank(
        p: &BlockPlacer,
        mask: u32,
        how: Placement,
    ) -> Option<(usize, u32, u32, Vec<core::cmp::Reverse<u32>>, Vec<u32>)> {
        let base = p.base;
        let ids: Vec<u32> = (0..32).filter(|i| mask >> i & 1 == 1).collect();
        let nb = p.free.len();
        let mut counts = vec![0u32; nb];
        for &i in &ids {
            let b = (i / base) as usize;
            if b >= nb || p.busy[i as usize] || p.held[b] {
                return None;
            }
            if how.exclusive && p.free[b] != base {
                return None;
            }
            counts[b] += 1;
        }
        if let Some(s) = how.segment
            && counts.iter().any(|c| c % s != 0)
        {
            return None;
        }
        let (lo, hi) = (ids[0] / base, ids[ids.len() - 1] / base);
        let level = p.levels.iter().position(|&m| lo / m == hi / m)?;
        let m = p.levels[level];
        let block = lo / m;
        let range = (block * m) as usize..((block + 1) * m) as usize;
        let free: u32 = range.clone().map(|b| p.free[b]).sum();
        let mut order: Vec<usize> = range.collect();
        order.sort_by_key(|&b| (p.free[b], b));
        let taken = order
            .iter()
            .map(|&b| core::cmp::Reverse(counts[b]))
            .collect();
        Some((level, free, block, taken, ids))
    }

    proptest! {
        /// Every placement of the job on a 12-node machine is enumerated
        /// (every set of free nodes of the right size): the placer's choice
        /// is the best-ranked one, and it refuses exactly when none is
        /// feasible.
        #[test]
        fn placement_is_the_best_of_every_feasible_one(
            ops in prop::collection::vec((1u32..=12, 0u8..3, any::<bool>()), 1..25)
        ) {
            let m = racks(4, 3, "3,6,12");
            let mut p = BlockPlacer::new(m.blocks().unwrap());
            let mut live: Vec<(Vec<NodeId>, Placement)> = Vec::new();
            for (nodes, mode, release) in ops {
                if release && !live.is_empty() {
                    let (v, how) = live.remove(0);
                    p.release(&v, how);
                    continue;
                }
                let how = Placement {
                    segment: (mode == 1 && nodes % 3 == 0).then_some(3),
                    exclusive: mode == 2,
                };
                let best = (0u32..1 << 12)
                    .filter(|mask| mask.count_ones() == nodes)
                    .filter_map(|mask| rank(&p, mask, how))
                    .min();
                match p.place(nodes, how) {
                    Ok(v) => {
                        let best = best.map(|b| b.4);
                        prop_assert_eq!(Some(v.clone()), best);
                        live.push((v, how));
                    }
                    Err(e) => prop_assert!(best.is_none(), "{e} but {best:?} is feasible"),
                }
            }
        }
    }

    proptest! {
        /// Brute force over every block of every level: the chosen block is
        /// feasible, no smaller level has a feasible block, and no feasible
        /// block of its level has fewer free nodes.
        #[test]
        fn choice_agrees_with_exhaustive_search(
            ops in prop::collection::vec((1u32..=12, 0u8..3, any::<bool>()), 1..30)
        ) {
            let m = racks(4, 3, "3,6,12");
            let mut p = BlockPlacer::new(m.blocks().unwrap());
            let mut live: Vec<(Vec<NodeId>, Placement)> = Vec::new();
            for (nodes, mode, release) in ops {
                if release && !live.is_empty() {
                    let (v, how) = live.remove(0);
                    p.release(&v, how);
                    continue;
                }
                let how = Placement {
                    segment: (mode == 1 && nodes % 3 == 0).then_some(3),
                    exclusive: mode == 2,
                };
                let feasible = |p: &BlockPlacer, m: u32, i: usize| {
                    let blocks = i * m as usize..(i + 1) * m as usize;
                    let units: u32 = blocks.clone().map(|b| p.units(b, how)).sum();
                    let free: u32 = blocks.map(|b| p.free[b]).sum();
                    (m * 3 >= nodes && units >= p.need(nodes, how).unwrap_or(u32::MAX)).then_some(free)
                };
                let mut expect = None;
                'l: for (level, &mm) in p.levels.iter().enumerate() {
                    let mut best: Option<(u32, usize)> = None;
                    for i in 0..(4 / mm as usize) {
                        if let Some(f) = feasible(&p, mm, i)
                            && best.is_none_or(|(bf, _)| f < bf)
                        {
                            best = Some((f, i));
                        }
                    }
                    if let Some((_, i)) = best { expect = Some((level, i as u32)); break 'l; }
                }
                prop_assert_eq!(p.choose(nodes, how).unwrap(), expect);
                let free_before: u32 = p.free.iter().sum();
                if let Ok(v) = p.place(nodes, how) {
                    prop_assert_eq!(v.len(), nodes as usize);
                    prop_assert_eq!(free_before - p.free.iter().sum::<u32>(), nodes);
                    if let Some(s) = how.segment {
                        for b in 0..4 {
                            let used = v.iter().filter(|&&n| n / 3 == b).count() as u32;
                            prop_assert!(used.is_multiple_of(s), "segment split");
                        }
                    }
                    live.push((v, how));
                }
            }
        }
    }
}
