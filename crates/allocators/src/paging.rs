//! Non-contiguous allocation: any free nodes, lowest ids first.
//!
//! Not from the papers: the "no contiguity" reference against which the
//! cost of contiguous allocation is measured (as in paging-style
//! non-contiguous allocation studies). It grants exactly the requested
//! number of nodes, so it never fragments internally and never refuses a
//! request while enough nodes are free.
//!
//! ```
//! use partalloc_allocators::{paging::Paging, Allocator, Partition, Request};
//! use partalloc_topology::Topology;
//! let mut p = Paging::new("mesh:4x4".parse::<Topology>()?)?;
//! let a = p.allocate(&Request::boxed(&[2, 3])?)?;
//! assert_eq!(a.partition(), &Partition::Nodes(vec![0, 1, 2, 3, 4, 5]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{NodeId, Topology, TopologyKind};

use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::strategy::{GrantRecord, Managed, View};
use crate::{AllocError, BuildError, Occupancy, Partition, Request};

/// The non-contiguous reference strategy. Its grant record is
/// [`PageWords`], the occupancy words a grant took.
#[derive(Debug, Clone, Default)]
pub struct Paging {
    // Word lists of released grants, emptied, for the next grants: a
    // replay then allocates no word list per grant.
    spare: Vec<Vec<(usize, u64)>>,
}

impl Paging {
    /// A paging allocator for any machine.
    ///
    /// # Errors
    /// None today: it returns a `Result` like every strategy constructor
    /// (see the crate docs).
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Ok(Managed::new(topology, Self::default()))
    }

    /// The `want` lowest available ids of `occ`, in increasing order,
    /// with the (word, bits) of its bitset they fill, a word at a time.
    /// The caller has checked that `want` ids are available.
    #[inline]
    fn lowest_free(&mut self, occ: &Occupancy, want: usize) -> PageWords {
        // Sized once and filled a word's ids at a time (no per-id capacity
        // check); cut to what was found.
        #[expect(
            clippy::slow_vector_initialization,
            reason = "a zeroed allocation (`vec![0; want]`, calloc) costs several times a reserve and a fill for a grant's few hundred bytes"
        )]
        let mut ids: Vec<NodeId> = {
            let mut v = Vec::with_capacity(want);
            v.resize(want, 0);
            v
        };
        let mut filled = 0;
        let len = occ.len();
        let mut words = self.spare.pop().unwrap_or_default();
        // At least ⌈want / 64⌉ words hold the ids; one more covers a grant
        // that starts mid-word, so the list rarely grows.
        words.reserve((want.div_ceil(64) + 1).min(len.div_ceil(64)));
        let blocked_words = occ.blocked().words();
        // Bits past the machine, in its last word, read as blocked.
        let last = len.div_ceil(64).saturating_sub(1);
        let tail = crate::rowgrid::low_bits((len - last * 64) as u32);
        let mut word = 0;
        while filled < want {
            let Some(&blocked) = blocked_words.get(word) else {
                break;
            };
            let free = if word == last {
                !blocked & tail
            } else {
                !blocked
            };
            let need = want - filled;
            let count = free.count_ones() as usize;
            let taken = if count <= need {
                free
            } else {
                lowest_bits(free, count, need)
            };
            if taken != 0 {
                // `taken` has at most `need` bits, so they fit.
                filled += fill_ids(ids.get_mut(filled..).unwrap_or_default(), word, taken);
                words.push((word, taken));
            }
            word += 1;
        }
        ids.truncate(filled);
        PageWords { words, ids }
    }
}

/// The lowest `need` set bits of `free`, which has `count` > `need` set
/// bits: a few bits dropped one at a time from whichever end needs fewer,
/// else the bits below the least k with `need` of them below it (k found
/// by halving).
#[inline]
fn lowest_bits(free: u64, count: usize, need: usize) -> u64 {
    const FEW: usize = 8;
    if need <= FEW {
        // Keep the lowest `need`.
        let mut rest = free;
        for _ in 0..need {
            rest &= rest.wrapping_sub(1);
        }
        free & !rest
    } else if count - need <= FEW {
        // Drop the highest `count - need`.
        let mut kept = free;
        for _ in 0..count - need {
            kept &= !(1u64 << (63 - kept.leading_zeros()));
        }
        kept
    } else {
        let (mut k, mut step) = (0u32, 64u32);
        while step > 1 {
            step /= 2;
            if ((free & crate::rowgrid::low_bits(k + step)).count_ones() as usize) < need {
                k += step;
            }
        }
        free & crate::rowgrid::low_bits(k + 1)
    }
}

/// Writes the ids `64·word + b` of the set bits `b` of `taken`, in
/// increasing order, at the start of `dst` (if they fit); returns their
/// count.
#[inline]
fn fill_ids(dst: &mut [NodeId], word: usize, taken: u64) -> usize {
    // Machines have at most 2^32 nodes, so ids fit `NodeId`.
    let base = (word * 64) as NodeId;
    let count = taken.count_ones() as usize;
    if let Some(dst) = dst.get_mut(..count) {
        let low = taken.trailing_zeros();
        if (taken >> low) & (taken >> low).wrapping_add(1) == 0 {
            // One run of nodes: consecutive ids.
            let start = base + low;
            for (i, slot) in dst.iter_mut().enumerate() {
                // At most 64 ids: `i` fits.
                *slot = start + i as NodeId;
            }
        } else {
            let mut bits = taken;
            for slot in dst {
                *slot = base + bits.trailing_zeros();
                bits &= bits.wrapping_sub(1);
            }
        }
    }
    count
}

/// A paging grant as the words of the occupancy bitset it took: `(word,
/// bits)` pairs in increasing word order, naming node `64·word + b` for
/// each set bit `b`. It marks and frees a word at a
/// time and turns into the increasing node list paging grants (built while
/// choosing and handed to the grant, so a live record holds only its
/// words).
#[derive(Debug, Clone, Default)]
pub struct PageWords {
    words: Vec<(usize, u64)>,
    /// The node list, from the choice until the grant takes it.
    ids: Vec<NodeId>,
}

impl PageWords {
    /// The node ids, in increasing order.
    #[must_use]
    pub fn ids(&self) -> Vec<NodeId> {
        let nodes = self
            .words
            .iter()
            .map(|&(_, b)| b.count_ones() as usize)
            .sum();
        let mut ids = vec![0; nodes];
        let mut filled = 0;
        for &(word, taken) in &self.words {
            filled += fill_ids(ids.get_mut(filled..).unwrap_or_default(), word, taken);
        }
        ids
    }

    /// The words of `ids`, a list in strictly increasing order.
    pub(crate) fn of_increasing(ids: &[NodeId]) -> Self {
        let mut words: Vec<(usize, u64)> = Vec::new();
        for &n in ids {
            let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
            match words.last_mut() {
                Some((w, bits)) if *w == word => *bits |= bit,
                _ => words.push((word, bit)),
            }
        }
        Self {
            words,
            ids: Vec::new(),
        }
    }
}

impl GrantRecord for PageWords {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, _: &Topology, busy: bool) {
        for &(word, bits) in &self.words {
            if busy {
                occupancy.occupy_word_bits(word, bits);
            } else {
                occupancy.vacate_word_bits(word, bits);
            }
        }
    }

    fn available(&self, occupancy: &Occupancy, _: &Topology) -> bool {
        let blocked = occupancy.blocked().words();
        self.words.iter().all(|&(word, bits)| {
            let inside = word * 64 + (64 - bits.leading_zeros() as usize) <= occupancy.len();
            inside && blocked.get(word).is_some_and(|&b| b & bits == 0)
        })
    }

    fn partition(&self) -> Partition {
        Partition::Nodes(self.ids())
    }

    #[inline]
    fn take_partition(&mut self) -> Partition {
        if self.ids.is_empty() {
            self.partition()
        } else {
            Partition::Nodes(core::mem::take(&mut self.ids))
        }
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "paging",
        summary: "non-contiguous reference: any free nodes, lowest ids first",
        source: "not from the papers; the no-contiguity baseline for trace replays",
        params: &[],
        topologies: &[
            TopologyKind::Hypercube,
            TopologyKind::Mesh,
            TopologyKind::Torus,
            TopologyKind::Blocks,
            TopologyKind::Tree,
            TopologyKind::Ring,
            TopologyKind::Torus3d,
            TopologyKind::Capacity,
        ],
    },
    build: |t, _| Ok(Box::new(Paging::new(t.clone())?)),
};

impl crate::strategy::Strategy for Paging {
    type Record = PageWords;

    fn name(&self) -> String {
        "paging".to_owned()
    }

    #[inline]
    fn choose(
        &mut self,
        view: &View<'_, PageWords>,
        request: &Request,
    ) -> Result<Option<PageWords>, AllocError> {
        let want = view.wanted_nodes(request)?;
        let occ = view.occupancy();
        if want > occ.free_count() as u64 {
            return Ok(None);
        }
        Ok(Some(self.lowest_free(occ, want as usize)))
    }

    fn fits(
        &self,
        view: &View<'_, PageWords>,
        request: &Request,
    ) -> Result<Option<bool>, AllocError> {
        let want = view.wanted_nodes(request)?;
        Ok(Some(want <= view.occupancy().free_count() as u64))
    }

    #[inline]
    fn recycle(&mut self, record: PageWords) {
        let mut words = record.words;
        words.clear();
        self.spare.push(words);
    }

    fn recognizable(
        &self,
        view: &View<'_, PageWords>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let want = request.node_count();
        if want == 0 || want > view.total_nodes() as u64 {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!("needs {want} nodes"),
            });
        }
        // On an empty machine paging always grants the lowest ids.
        Ok(vec![Partition::Nodes((0..want as NodeId).collect())])
    }

    /// Recognises `at` if it is a list of exactly the requested number of
    /// node ids in strictly increasing order (the form paging grants)
    /// inside the machine. Any such list is one paging would grant in some
    /// state, so it is accepted although
    /// [`recognizable`](crate::strategy::Strategy::recognizable) lists
    /// only the empty machine's lowest ids.
    fn recognises(
        &self,
        view: &View<'_, PageWords>,
        request: &Request,
        at: &Partition,
    ) -> Result<PageWords, AllocError> {
        let want = view.wanted_nodes(request)?;
        let unrecognized = || AllocError::Unrecognized {
            strategy: "paging",
            request: *request,
            partition: Box::new(at.clone()),
        };
        let Partition::Nodes(ids) = at else {
            return Err(unrecognized());
        };
        let increasing = ids.windows(2).all(|w| w[0] < w[1]);
        let inside = ids
            .last()
            .is_none_or(|&n| (n as usize) < view.total_nodes());
        if ids.len() as u64 != want || !increasing || !inside {
            return Err(unrecognized());
        }
        Ok(PageWords::of_increasing(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Allocator, Grant};
    use partalloc_topology::NodeSet;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Allocate(u32),
        Release(usize),
        Fault(NodeId),
        Repair(NodeId),
    }

    fn ops(nodes: u32) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            4 => (1..=nodes / 3 + 1).prop_map(Op::Allocate),
            3 => any::<usize>().prop_map(Op::Release),
            1 => (0..nodes).prop_map(Op::Fault),
            1 => (0..nodes).prop_map(Op::Repair),
        ];
        proptest::collection::vec(op, 1..80)
    }

    proptest! {
        /// The lowest `need` set bits of a word, whichever way they are
        /// found, are those of a bit-by-bit walk.
        #[test]
        fn lowest_bits_are_the_first_set_bits(free in any::<u64>(), pick in any::<usize>()) {
            let count = free.count_ones() as usize;
            prop_assume!(count >= 2);
            let need = 1 + pick % (count - 1);
            let mut walk = 0u64;
            for b in (0..64).filter(|b| free >> b & 1 == 1).take(need) {
                walk |= 1 << b;
            }
            prop_assert_eq!(lowest_bits(free, count, need), walk);
        }

        /// The word-at-a-time search grants exactly the ids the literal
        /// node-by-node walk picks (the `want` lowest available ids), on
        /// states reached by random allocations, releases and faults, and
        /// the occupancy stays the union of the live grants.
        #[test]
        fn word_search_picks_what_the_node_walk_picks(
            (sides, script) in (1u32..=40, 1u32..=9)
                .prop_flat_map(|(a, b)| (Just((a, b)), ops(a * b)))
        ) {
            let topology: Topology = format!("mesh:{}x{}", sides.0, sides.1).parse().unwrap();
            let mut p = Paging::new(topology.clone()).unwrap();
            let nodes = topology.num_nodes() as NodeId;
            let mut live: Vec<Grant> = Vec::new();
            for op in script {
                match op {
                    Op::Allocate(want) => {
                        let walk: Vec<NodeId> =
                            (0..nodes).filter(|&n| p.is_available(n)).take(want as usize).collect();
                        let free_before = p.free_nodes();
                        match p.allocate(&Request::nodes(want)) {
                            Ok(g) => {
                                prop_assert_eq!(g.partition(), &Partition::Nodes(walk));
                                // The record kept names the nodes granted.
                                prop_assert_eq!(&p.record(&g).unwrap().partition(), g.partition());
                                prop_assert_eq!(p.free_nodes(), free_before - want as usize);
                                live.push(g);
                            }
                            Err(_) => prop_assert!(walk.len() < want as usize),
                        }
                    }
                    Op::Release(i) if !live.is_empty() => {
                        let g = live.swap_remove(i % live.len());
                        p.release(&g).unwrap();
                    }
                    Op::Release(_) => {}
                    Op::Fault(n) => drop(p.mark_faulty(n)),
                    Op::Repair(n) => drop(p.repair(n)),
                }
                let mut held = NodeSet::new(nodes as usize);
                for g in &live {
                    if let Partition::Nodes(ids) = g.partition() {
                        for &n in ids {
                            prop_assert_eq!(held.insert(n), Ok(true));
                        }
                    }
                }
                prop_assert_eq!(p.busy_nodes(), held);
                let faulty = p.faulty_nodes().count();
                prop_assert_eq!(p.free_nodes(), nodes as usize - p.busy_nodes().count() - faulty);
            }
        }
    }
}
