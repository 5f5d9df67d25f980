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
use crate::occupancy::occupancy_methods;
use crate::{
    AllocError, Allocator, BuildError, Grant, GrantLedger, Occupancy, Partition, ReleaseError,
    Request,
};

/// The non-contiguous reference allocator.
#[derive(Debug, Clone)]
pub struct Paging {
    topology: Topology,
    occupancy: Occupancy,
    // Each grant's nodes as (word, bits) of the occupancy bitset, kept here
    // so a release trusts only our own record and frees a word at a time.
    ledger: GrantLedger<Vec<(usize, u64)>>,
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
    pub fn new(topology: Topology) -> Result<Self, BuildError> {
        Ok(Self {
            occupancy: Occupancy::new(topology.num_nodes()),
            topology,
            ledger: GrantLedger::new(),
            spare: Vec::new(),
        })
    }
}

impl Paging {
    /// Marks the `want` lowest available ids busy and returns them in
    /// increasing order, with the (word, bits) of the occupancy bitset they
    /// took, a word at a time. The caller has checked that `want` ids are
    /// available.
    fn take_lowest_free(&mut self, want: usize) -> (Vec<NodeId>, Vec<(usize, u64)>) {
        // Sized once and filled a word's ids at a time (no per-id capacity
        // check); cut to what was found.
        #[expect(
            clippy::slow_vector_initialization,
            reason = "a zeroed allocation (`vec![0; want]`, calloc) costs several times a reserve and a fill for a grant's few hundred bytes"
        )]
        let mut nodes: Vec<NodeId> = {
            let mut v = Vec::with_capacity(want);
            v.resize(want, 0);
            v
        };
        let mut filled = 0;
        let len = self.occupancy.len();
        let mut words = self.spare.pop().unwrap_or_default();
        // At least ⌈want / 64⌉ words hold the ids; one more covers a grant
        // that starts mid-word, so the list rarely grows.
        words.reserve((want.div_ceil(64) + 1).min(len.div_ceil(64)));
        let mut word = 0;
        while filled < want {
            let Some(&blocked) = self.occupancy.blocked().words().get(word) else {
                break;
            };
            // Bits past the machine read as blocked.
            let inside = len - word * 64;
            let free = !blocked & crate::rowgrid::low_bits(inside.min(64) as u32);
            let need = want - filled;
            let taken = if free.count_ones() as usize <= need {
                free
            } else {
                // The lowest `need` free bits: the free bits below the
                // least k with `need` of them below it (k found by
                // halving; `need` < 64 here).
                let (mut k, mut step) = (0u32, 64u32);
                while step > 1 {
                    step /= 2;
                    if ((free & crate::rowgrid::low_bits(k + step)).count_ones() as usize) < need {
                        k += step;
                    }
                }
                free & crate::rowgrid::low_bits(k + 1)
            };
            if taken != 0 {
                // Machines have at most 2^32 nodes, so ids fit `NodeId`.
                let base = (word * 64) as NodeId;
                let count = taken.count_ones() as usize;
                // `taken` has at most `need` bits, so they fit.
                if let Some(dst) = nodes.get_mut(filled..filled + count) {
                    let low = taken.trailing_zeros();
                    if (taken >> low) & (taken >> low).wrapping_add(1) == 0 {
                        // One run of free nodes: consecutive ids.
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
                filled += count;
                self.occupancy.occupy_word_bits(word, taken);
                words.push((word, taken));
            }
            word += 1;
        }
        nodes.truncate(filled);
        (nodes, words)
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

impl Allocator for Paging {
    fn name(&self) -> String {
        "paging".to_owned()
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let want = crate::allocator::wanted_nodes(request, self.topology.num_nodes())?;
        if want > self.occupancy.free_count() as u64 {
            return Err(AllocError::NoRoom {
                request: *request,
                free: self.occupancy.free_count(),
                total: self.topology.num_nodes(),
            });
        }
        let (nodes, words) = self.take_lowest_free(want as usize);
        let gid = self.ledger.issue(words);
        Ok(Grant::new(gid, Partition::Nodes(nodes), want))
    }

    fn can_allocate(&self, request: &Request) -> Result<bool, AllocError> {
        let want = crate::allocator::wanted_nodes(request, self.topology.num_nodes())?;
        Ok(want <= self.occupancy.free_count() as u64)
    }

    /// Grants `at` if it is a list of exactly the requested number of
    /// node ids in strictly increasing order (the form paging grants), all
    /// available. Any such list is one paging would grant in some state,
    /// so it is accepted although [`recognizable`](Allocator::recognizable)
    /// lists only the empty machine's lowest ids.
    fn allocate_at(&mut self, request: &Request, at: &Partition) -> Result<Grant, AllocError> {
        let want = crate::allocator::wanted_nodes(request, self.topology.num_nodes())?;
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
            .is_none_or(|&n| (n as usize) < self.topology.num_nodes());
        if ids.len() as u64 != want || !increasing || !inside {
            return Err(unrecognized());
        }
        if !ids.iter().all(|&n| self.occupancy.is_available(n)) {
            return Err(AllocError::PartitionBusy {
                request: *request,
                partition: Box::new(at.clone()),
            });
        }
        // Checked above: `want` increasing ids inside the machine, so at
        // most `want` words.
        let mut words: Vec<(usize, u64)> = Vec::new();
        for &n in ids {
            let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
            match words.last_mut() {
                Some((w, bits)) if *w == word => *bits |= bit,
                _ => words.push((word, bit)),
            }
        }
        for &(word, bits) in &words {
            self.occupancy.occupy_word_bits(word, bits);
        }
        let gid = self.ledger.issue(words);
        Ok(Grant::new(gid, at.clone(), want))
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let mut words = self.ledger.take(grant.id())?;
        for &(word, bits) in &words {
            self.occupancy.vacate_word_bits(word, bits);
        }
        words.clear();
        self.spare.push(words);
        Ok(())
    }

    occupancy_methods!(occupancy, ledger, faults);

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let want = request.node_count();
        if want == 0 || want > self.topology.num_nodes() as u64 {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!("needs {want} nodes"),
            });
        }
        // On an empty machine paging always grants the lowest ids.
        Ok(vec![Partition::Nodes((0..want as NodeId).collect())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
