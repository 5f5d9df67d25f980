//! Ring placement on a Slurm `topology/ring` machine, deciding as Slurm
//! 26.05.3's `src/plugins/topology/ring/eval_nodes_ring.c` decides for
//! whole-node jobs on nodes of equal weight.
//!
//! A job of `n` nodes gets `n` consecutive ring positions, which may wrap
//! past the last position to the first. Each ring offers at most one
//! window, its first free one (scanning from position 0; after a busy node
//! the scan resumes just past it). Among the rings that offer one, the
//! ring with the fewest free nodes wins (best fit), the earlier ring on a
//! tie. With `segment = S` (sbatch `--segment`, ignored when `S > n`), the
//! job is `n / S` windows of `S` nodes on as many different rings: the
//! `n / S` best rings as a bounded max-heap keeps them, exactly as Slurm's
//! heap does (so among rings with equal free counts the heap's order
//! decides which one a better ring displaces). A one-node job takes the
//! first free node in id order instead: select/cons_tres handles one-node
//! jobs itself when the topology allows it, as `topology/ring` does
//! (`_get_one_res` in `src/plugins/select/cons_tres/job_test.c`, with
//! `topology_p_allow_one_node` in `topology_ring.c`). A job no ring layout could
//! ever hold (even on an idle machine), or whose node count `S` does not
//! divide, is refused as invalid, as sbatch and slurmctld refuse it.
//!
//! ```
//! use partalloc_allocators::ring::RingPlacer;
//! use partalloc_topology::slurm::SlurmMachine;
//! let m = SlurmMachine::parse_conf("RingName=a Nodes=n[0-7]\nRingName=b Nodes=n[8-11]\n", "r.conf")?;
//! let mut p = RingPlacer::new(m.rings().expect("rings"));
//! // Ring b has fewer free nodes and holds 3: best fit.
//! assert_eq!(m.hostlist(&p.place(3, None)?), "n[8-10]");
//! // Two segments of 1 take one node on each of two rings.
//! assert_eq!(m.hostlist(&p.place(2, Some(1))?), "n[0,11]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::NodeId;
use partalloc_topology::slurm::Rings;

use crate::Occupancy;
use crate::error::PlaceError;

/// One ring's window: where it starts and how many nodes were free on the
/// ring (Slurm's `ring_segment_t` with equal node weights).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    ring: u32,
    start: u32,
    ring_free: u32,
}

/// Slurm's "worse" order on windows: more free nodes on the ring is worse.
fn worse(a: &Window, b: &Window) -> bool {
    a.ring_free > b.ring_free
}

/// Ring `ring`'s first window of `size` free positions, scanning as Slurm
/// does (after a busy node, resume just past it), with `free` as each
/// node's state.
fn first_window(
    ring: &core::ops::Range<NodeId>,
    size: u32,
    free: impl Fn(NodeId) -> bool,
) -> Option<u32> {
    let n = ring.end - ring.start;
    let mut start = 0;
    'scan: while start < n {
        for j in 0..size {
            if !free(ring.start + (start + j) % n) {
                start += j + 1;
                continue 'scan;
            }
        }
        return Some(start);
    }
    None
}

/// The windows Slurm would choose for `count` windows of `size` nodes with
/// `free` as each node's state, left in `heap`; false if fewer than
/// `count` rings offer one.
fn choose(
    rings: &[core::ops::Range<NodeId>],
    heap: &mut Vec<Window>,
    size: u32,
    count: usize,
    free: impl Fn(NodeId) -> bool + Copy,
) -> bool {
    heap.clear();
    for (r, ring) in rings.iter().enumerate() {
        let ring_free = ring.clone().filter(|&x| free(x)).count() as u32;
        if ring.end - ring.start < size || ring_free < size {
            continue;
        }
        // Once the heap is full only a ring with fewer free nodes than its
        // worst window may offer one; a ring's offer is its first window.
        if heap.len() == count && heap.first().is_some_and(|w| ring_free >= w.ring_free) {
            continue;
        }
        if let Some(start) = first_window(ring, size, free) {
            let cand = Window {
                ring: r as u32,
                start,
                ring_free,
            };
            RingPlacer::push(heap, count, cand);
        }
    }
    heap.len() == count
}

/// The placement state of one ring machine.
#[derive(Debug, Clone)]
pub struct RingPlacer {
    rings: Vec<core::ops::Range<NodeId>>,
    /// Busy nodes.
    nodes: Occupancy,
    /// Free nodes per ring.
    free: Vec<u32>,
    /// Reused between placements: the bounded heap of chosen windows.
    heap: Vec<Window>,
}

impl RingPlacer {
    /// An idle machine with the rings of `rings`.
    #[must_use]
    pub fn new(rings: &Rings) -> Self {
        let ranges: Vec<_> = (0..rings.len()).map(|i| rings.nodes(i)).collect();
        let total = ranges.last().map_or(0, |r| r.end as usize);
        Self {
            free: ranges.iter().map(|r| r.end - r.start).collect(),
            nodes: Occupancy::new(total),
            heap: Vec::with_capacity(ranges.len()),
            rings: ranges,
        }
    }

    /// Free nodes.
    #[must_use]
    pub fn free_nodes(&self) -> u32 {
        self.free.iter().sum()
    }

    /// Offers `cand` to the heap of at most `cap` windows, as Slurm's
    /// `_heap_push` does. Its sift-down compares a child with the value
    /// left in the slot it moves from (not with the window being placed),
    /// so it stops one level down; this keeps that.
    fn push(heap: &mut Vec<Window>, cap: usize, cand: Window) {
        if heap.len() < cap {
            heap.push(cand);
            let mut i = heap.len() - 1;
            while i > 0 {
                let parent = (i - 1) / 2;
                if !worse(&cand, &heap[parent]) {
                    break;
                }
                heap[i] = heap[parent];
                i = parent;
            }
            heap[i] = cand;
            return;
        }
        let Some(root) = heap.first() else { return };
        if worse(&cand, root) || cand.ring_free == root.ring_free {
            return;
        }
        heap[0] = cand;
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut top = i;
            if l < heap.len() && worse(&heap[l], &heap[top]) {
                top = l;
            }
            if r < heap.len() && worse(&heap[r], &heap[top]) {
                top = r;
            }
            if top == i {
                break;
            }
            heap[i] = heap[top];
            i = top;
        }
        heap[i] = cand;
    }

    /// Places a job of `nodes` nodes (in segments of `segment`), marking
    /// the nodes busy; the nodes are written to `out` in increasing order.
    ///
    /// # Errors
    /// [`PlaceError::Invalid`] for a job the rule refuses or could never
    /// place on this machine, [`PlaceError::NoRoom`] when it must wait.
    pub fn place_into(
        &mut self,
        nodes: u32,
        segment: Option<u32>,
        out: &mut Vec<NodeId>,
    ) -> Result<(), PlaceError> {
        out.clear();
        let invalid = |reason: String| PlaceError::Invalid { nodes, reason };
        if nodes == 0 {
            return Err(invalid("a job needs at least one node".to_owned()));
        }
        let seg = segment.filter(|&s| s > 0 && s <= nodes).unwrap_or(nodes);
        if !nodes.is_multiple_of(seg) {
            return Err(PlaceError::SegmentSize {
                nodes,
                segment: seg,
            });
        }
        // One node: select/cons_tres takes the first free node in node
        // order and never asks the ring plugin's evaluation
        // (`_get_one_res`, since topology/ring allows one-node jobs).
        if nodes == 1 {
            let Some(x) = self.nodes.blocked().first_absent() else {
                return Err(PlaceError::NoRoom { nodes });
            };
            self.occupy(&[x]);
            out.push(x);
            return Ok(());
        }
        let count = (nodes / seg) as usize;
        if count > self.rings.len() || !choose(&self.rings, &mut self.heap, seg, count, |_| true) {
            return Err(invalid(format!(
                "no {count} rings hold {seg} consecutive nodes each (rings hold at most 16)"
            )));
        }
        let state = &self.nodes;
        if !choose(&self.rings, &mut self.heap, seg, count, |x| {
            state.is_available(x)
        }) {
            return Err(PlaceError::NoRoom { nodes });
        }
        for w in &self.heap {
            let ring = &self.rings[w.ring as usize];
            let n = ring.end - ring.start;
            for j in 0..seg {
                let x = ring.start + (w.start + j) % n;
                self.nodes.occupy_node(x);
                out.push(x);
            }
            self.free[w.ring as usize] -= seg;
        }
        out.sort_unstable();
        Ok(())
    }

    /// As [`place_into`](Self::place_into), into a new list.
    ///
    /// # Errors
    /// As [`place_into`](Self::place_into).
    pub fn place(&mut self, nodes: u32, segment: Option<u32>) -> Result<Vec<NodeId>, PlaceError> {
        let mut out = Vec::new();
        self.place_into(nodes, segment, &mut out)?;
        Ok(out)
    }

    /// Frees `nodes` (ids outside the machine or already free are skipped).
    pub fn release(&mut self, nodes: &[NodeId]) {
        for &x in nodes {
            if self.nodes.vacate_node(x) {
                self.count(x, 1);
            }
        }
    }

    /// Marks `nodes` busy without a job (as the replay of another
    /// scheduler's decisions needs); ids outside the machine or already
    /// busy are skipped.
    pub fn occupy(&mut self, nodes: &[NodeId]) {
        for &x in nodes {
            if self.nodes.occupy_node(x) {
                self.count(x, -1);
            }
        }
    }

    /// Adds `delta` to the free count of `x`'s ring.
    fn count(&mut self, x: NodeId, delta: i32) {
        if let Some(r) = self.rings.iter().position(|r| r.contains(&x)) {
            self.free[r] = self.free[r].wrapping_add_signed(delta);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use partalloc_topology::slurm::SlurmMachine;
    use proptest::prelude::*;

    use super::*;

    fn machine(sizes: &[u32]) -> SlurmMachine {
        let mut conf = String::new();
        let mut first = 0;
        for (i, s) in sizes.iter().enumerate() {
            conf += &format!("RingName=r{i} Nodes=n[{first}-{}]\n", first + s - 1);
            first += s;
        }
        SlurmMachine::parse_conf(&conf, "r.conf").unwrap()
    }

    /// Every feasible window ranked by Slurm's rule without segments: the
    /// ring's free nodes, the ring, the start.
    fn brute(m: &SlurmMachine, busy: &BTreeSet<NodeId>, n: u32) -> Option<Vec<NodeId>> {
        if n == 1 {
            return (0..m.num_nodes() as NodeId)
                .find(|x| !busy.contains(x))
                .map(|x| vec![x]);
        }
        let rings = m.rings().unwrap();
        let mut best: Option<((u32, usize, u32), Vec<NodeId>)> = None;
        for r in 0..rings.len() {
            let ring: Vec<NodeId> = rings.nodes(r).collect();
            let len = ring.len() as u32;
            if len < n {
                continue;
            }
            let free = ring.iter().filter(|x| !busy.contains(x)).count() as u32;
            for start in 0..len {
                let w: Vec<NodeId> = (0..n).map(|j| ring[((start + j) % len) as usize]).collect();
                if w.iter().any(|x| busy.contains(x)) {
                    continue;
                }
                let key = (free, r, start);
                if best.as_ref().is_none_or(|(k, _)| key < *k) {
                    let mut w = w;
                    w.sort_unstable();
                    best = Some((key, w));
                }
            }
        }
        best.map(|(_, w)| w)
    }

    #[test]
    fn windows_wrap_and_the_fullest_ring_wins() {
        let m = machine(&[8, 8]);
        let mut p = RingPlacer::new(m.rings().unwrap());
        p.occupy(&[2, 3, 4, 5]);
        // Ring 0 has 4 free: positions 6, 7, 0, 1 wrap round.
        assert_eq!(m.hostlist(&p.place(4, None).unwrap()), "n[0-1,6-7]");
        assert_eq!(
            p.place(9, None),
            Err(PlaceError::Invalid {
                nodes: 9,
                reason: "no 1 rings hold 9 consecutive nodes each (rings hold at most 16)".into()
            })
        );
        assert_eq!(
            p.place(6, Some(4)),
            Err(PlaceError::SegmentSize {
                nodes: 6,
                segment: 4
            })
        );
        // 16 in segments of 8 needs both rings whole: it waits.
        assert_eq!(p.place(16, Some(8)), Err(PlaceError::NoRoom { nodes: 16 }));
        // A segment larger than the job is ignored.
        assert_eq!(m.hostlist(&p.place(2, Some(8)).unwrap()), "n[8-9]");
    }

    #[test]
    fn a_better_ring_displaces_the_root_of_slurms_heap() {
        // Three segments of 1 on five rings with 4, 4, 3, 2, 4 free nodes:
        // the heap holds rings 0, 1, 2 (root 0 or 1, 4 free); ring 3 (2
        // free) displaces the root; ring 4 (4 free) cannot get in.
        let m = machine(&[4, 4, 4, 4, 4]);
        let mut p = RingPlacer::new(m.rings().unwrap());
        p.occupy(&[8, 12, 13]);
        let g = p.place(3, Some(1)).unwrap();
        let rings: BTreeSet<usize> = g
            .iter()
            .map(|&x| m.rings().unwrap().ring_of(x).unwrap())
            .collect();
        assert_eq!(g.len(), 3);
        assert!(
            rings.contains(&2) && rings.contains(&3) && !rings.contains(&4),
            "{g:?}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Without segments the window is the best feasible one, every
        /// feasible window enumerated; with segments every window is its
        /// ring's first free one, on distinct rings.
        #[test]
        fn the_choice_is_the_best_feasible_window(
            sizes in prop::collection::vec(1u32..=16, 1..5),
            busy_bits in any::<u64>(),
            n in 1u32..=16,
            seg in 1u32..=8,
        ) {
            let m = machine(&sizes);
            let busy: BTreeSet<NodeId> = (0..m.num_nodes() as NodeId).filter(|&i| i < 64 && busy_bits >> i & 1 == 1).collect();
            let mut p = RingPlacer::new(m.rings().unwrap());
            p.occupy(&busy.iter().copied().collect::<Vec<_>>());
            let want = brute(&m, &busy, n);
            match p.clone().place(n, None) {
                Ok(got) => prop_assert_eq!(Some(got), want),
                Err(PlaceError::NoRoom { .. }) => prop_assert_eq!(None, want),
                Err(PlaceError::Invalid { .. }) => prop_assert!(sizes.iter().all(|&s| s < n)),
                Err(e) => prop_assert!(false, "{e}"),
            }
            let total = seg * (n % 4 + 1);
            if let Ok(g) = p.place(total, Some(seg)) {
                let rings = m.rings().unwrap();
                let mut used = BTreeSet::new();
                for r in 0..rings.len() {
                    let mine: Vec<NodeId> = g.iter().copied().filter(|&x| rings.ring_of(x) == Some(r)).collect();
                    if mine.is_empty() {
                        continue;
                    }
                    used.insert(r);
                    let ring: Vec<NodeId> = rings.nodes(r).collect();
                    let len = ring.len() as u32;
                    let first = (0..len).find_map(|s| {
                        let w: Vec<NodeId> = (0..seg).map(|j| ring[((s + j) % len) as usize]).collect();
                        w.iter().all(|x| !busy.contains(x)).then(|| { let mut w = w; w.sort_unstable(); w })
                    });
                    prop_assert_eq!(Some(mine), first);
                }
                prop_assert_eq!(used.len() as u32, total / seg.min(total));
            }
        }
    }
}
