//! Sub-cube placement on a Slurm `topology/torus3d` machine, deciding as
//! Slurm 26.05.3's `src/plugins/topology/torus3d/eval_nodes_torus3d.c`
//! decides for whole-node jobs on nodes of equal weight.
//!
//! A job of `n` nodes gets one sub-cube of a placement of exactly `n`
//! cells, at one of the placement's anchors, every cell filled and free.
//! Candidates are visited torus by torus, placement by placement (by size),
//! anchor by anchor (x slowest, z fastest); a candidate replaces the best
//! so far when
//!
//! 1. it belongs to the same placement of the same torus and destroys
//!    fewer free sub-cubes of the next larger placement (the first later
//!    placement of more cells: its anchors that overlap the candidate and
//!    whose filled cells are all free, the *fragmentation cost*), or, with
//!    an equal cost,
//! 2. its torus has fewer free nodes (best fit across tori).
//!
//! Otherwise the earlier candidate stays. With `segment = S` (sbatch
//! `--segment`, ignored when `S > n`) the job is `n / S` sub-cubes of `S`
//! cells, chosen one after another by the same rule, each on the nodes the
//! previous ones left (they may lie on different tori); when a later one
//! cannot be found and an earlier one came from a placement whose
//! sub-cubes can overlap, Slurm's generic retry takes the first node of the
//! partial choice out of the available set and tries again, node by node
//! (`common_topo_choose_nodes`). A count no
//! placement has, a segment that does not divide the count, or a job the
//! rule could not place even on an idle machine is refused as invalid.
//!
//! ```
//! use partalloc_allocators::torus3d::TorusPlacer;
//! use partalloc_topology::slurm::SlurmMachine;
//! let yaml = "\
//! - topology: t
//!   torus3d:
//!     toruses:
//!       - name: t0
//!         dims: {x: 4, y: 1, z: 1}
//!         nodes: n[0-3]
//!         placements:
//!           - dims: {x: 1, y: 1, z: 1}
//!           - dims: {x: 2, y: 1, z: 1}
//!             anchor_spacing: {x: 1, y: 1, z: 1}
//! ";
//! let m = SlurmMachine::parse_yaml(yaml, "t.yaml", None)?;
//! let mut p = TorusPlacer::new(m.toruses().expect("tori"));
//! assert_eq!(p.place(1, None)?, vec![0]);
//! // n1 breaks one free pair, (1, 2); n2 would break (1, 2) and (2, 3);
//! // n3 ties with n1 and comes later.
//! assert_eq!(p.place(1, None)?, vec![1]);
//! assert_eq!(p.place(2, None)?, vec![2, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::NodeId;
use partalloc_topology::slurm::{PlacementShape, Torus, Toruses};

use crate::Occupancy;
use crate::error::PlaceError;

/// The best candidate so far.
#[derive(Debug, Clone, Copy)]
struct Best {
    torus: usize,
    placement: usize,
    torus_free: u32,
    /// Fragmentation cost, once computed.
    frag: Option<u32>,
}

/// The placement state of one torus machine.
#[derive(Debug, Clone)]
pub struct TorusPlacer {
    toruses: Vec<Torus>,
    /// Busy nodes.
    nodes: Occupancy,
    /// Reused between placements: nodes taken by earlier segments of the
    /// job being placed, and the cells of the sub-cubes being compared.
    taken: Vec<bool>,
    /// Nodes Slurm's retry has taken out of the available set.
    removed: Vec<bool>,
    cube: Vec<NodeId>,
    best_cube: Vec<NodeId>,
}

fn wrap(a: u16, d: u16, n: u16) -> u16 {
    ((u32::from(a) + u32::from(d)) % u32::from(n)) as u16
}

/// The filled cells of `p`'s sub-cube at `anchor` on `t`, into `out`;
/// false if one is a hole.
fn cube_cells(t: &Torus, p: &PlacementShape, anchor: [u16; 3], out: &mut Vec<NodeId>) -> bool {
    out.clear();
    let dims = t.dims();
    let [px, py, pz] = p.dims();
    let mut whole = true;
    for dz in 0..pz {
        let z = wrap(anchor[2], dz, dims[2]);
        for dy in 0..py {
            let y = wrap(anchor[1], dy, dims[1]);
            for dx in 0..px {
                match t.cell(wrap(anchor[0], dx, dims[0]), y, z) {
                    Some(n) => out.push(n),
                    None => whole = false,
                }
            }
        }
    }
    whole
}

/// Whether `node` lies in `p`'s sub-cube at `anchor` on `t`.
fn cube_holds(t: &Torus, p: &PlacementShape, anchor: [u16; 3], node: NodeId) -> bool {
    let Some(c) = t.coord_of(node) else {
        return false;
    };
    let dims = t.dims();
    (0..3).all(|a| {
        let n = u32::from(dims[a]);
        (u32::from(c[a]) + n - u32::from(anchor[a])) % n < u32::from(p.dims()[a])
    })
}

/// Fragmentation cost of the sub-cube with cells `cells`: anchors of
/// `next` that overlap it and whose filled cells are all available.
fn frag(
    t: &Torus,
    next: &PlacementShape,
    cells: &[NodeId],
    avail: &impl Fn(NodeId) -> bool,
) -> u32 {
    let dims = t.dims();
    let [px, py, pz] = next.dims();
    let mut cost = 0;
    for a in 0..next.anchor_count() {
        let Some(anchor) = next.anchor(a) else {
            continue;
        };
        if !cells.iter().any(|&n| cube_holds(t, next, anchor, n)) {
            continue;
        }
        let all_free = (0..pz).all(|dz| {
            (0..py).all(|dy| {
                (0..px).all(|dx| {
                    t.cell(
                        wrap(anchor[0], dx, dims[0]),
                        wrap(anchor[1], dy, dims[1]),
                        wrap(anchor[2], dz, dims[2]),
                    )
                    .is_none_or(avail)
                })
            })
        });
        cost += u32::from(all_free);
    }
    cost
}

/// Slurm's choice of one sub-cube of `size` cells among the nodes `avail`
/// accepts; `cube` and `best_cube` are scratch.
fn choose(
    toruses: &[Torus],
    size: u32,
    avail: &impl Fn(NodeId) -> bool,
    cube: &mut Vec<NodeId>,
    best_cube: &mut Vec<NodeId>,
) -> Option<Best> {
    let mut best: Option<Best> = None;
    for (ti, t) in toruses.iter().enumerate() {
        let torus_free = t.nodes().filter(|&n| avail(n)).count() as u32;
        for (pi, p) in t.placements().iter().enumerate() {
            if p.size() != size {
                continue;
            }
            // The first later placement with more cells.
            let next = t.placements()[pi + 1..].iter().find(|q| q.size() > size);
            for a in 0..p.anchor_count() {
                let Some(anchor) = p.anchor(a) else {
                    continue;
                };
                if !cube_cells(t, p, anchor, cube) || !cube.iter().all(|&n| avail(n)) {
                    continue;
                }
                let cand = Best {
                    torus: ti,
                    placement: pi,
                    torus_free,
                    frag: None,
                };
                let Some(b) = best.as_mut() else {
                    best = Some(cand);
                    core::mem::swap(cube, best_cube);
                    continue;
                };
                if b.torus == ti && b.placement == pi {
                    let cost = |cells: &[NodeId]| next.map_or(0, |q| frag(t, q, cells, avail));
                    let bf = *b.frag.get_or_insert_with(|| cost(best_cube));
                    let cf = cost(cube);
                    if cf < bf {
                        *b = Best {
                            frag: Some(cf),
                            ..cand
                        };
                        core::mem::swap(cube, best_cube);
                        continue;
                    }
                    if cf > bf {
                        continue;
                    }
                }
                if torus_free < b.torus_free {
                    *b = cand;
                    core::mem::swap(cube, best_cube);
                }
            }
        }
    }
    best
}

impl TorusPlacer {
    /// An idle machine with the tori of `toruses`.
    #[must_use]
    pub fn new(toruses: &Toruses) -> Self {
        let total = toruses
            .toruses()
            .iter()
            .map(|t| t.nodes().end as usize)
            .max()
            .unwrap_or(0);
        Self {
            toruses: toruses.toruses().to_vec(),
            nodes: Occupancy::new(total),
            taken: vec![false; total],
            removed: vec![false; total],
            cube: Vec::new(),
            best_cube: Vec::new(),
        }
    }

    /// Free nodes.
    #[must_use]
    pub fn free_nodes(&self) -> u32 {
        // At most the nodes of the tori, which the topology counts in u32.
        self.nodes.free_count() as u32
    }

    /// Chooses `count` sub-cubes of `size` cells one after another, each
    /// among the nodes the earlier ones left (on an idle machine with
    /// `idle`; never a `removed` node), writing their nodes to `out`.
    /// `Ok(())` if all were found; otherwise `Err(hint)`, `out` holding the
    /// sub-cubes found so far and `hint` true when one of them came from a
    /// placement whose sub-cubes can overlap (Slurm then answers
    /// `ESLURM_TOPO_SEGMENT_NO_FIT` with a retry hint, else it gives up).
    fn select(
        &mut self,
        size: u32,
        count: u32,
        idle: bool,
        out: &mut Vec<NodeId>,
    ) -> Result<(), bool> {
        out.clear();
        let mut result = Ok(());
        let mut overlap = false;
        for _ in 0..count {
            let (state, taken, removed) = (&self.nodes, &self.taken, &self.removed);
            let avail = |n: NodeId| {
                let i = n as usize;
                !taken[i] && !removed[i] && (idle || state.is_available(n))
            };
            let Some(best) = choose(
                &self.toruses,
                size,
                &avail,
                &mut self.cube,
                &mut self.best_cube,
            ) else {
                result = Err(overlap);
                break;
            };
            overlap |= self.toruses[best.torus].placements()[best.placement].has_overlap();
            for &n in &self.best_cube {
                self.taken[n as usize] = true;
                out.push(n);
            }
        }
        for &n in out.iter() {
            self.taken[n as usize] = false;
        }
        result
    }

    /// [`select`](Self::select) with the retry of Slurm's
    /// `common_topo_choose_nodes` (`src/plugins/topology/common/common_topo.c`):
    /// after a failure with a retry hint it takes out of the available
    /// nodes, one per attempt, the first node (in node order, all nodes
    /// being equal) of the partial selection not yet passed over, and
    /// tries again, until the job fits, the hint is gone, or no more than
    /// the job's nodes are left. True if the job fits; its nodes in `out`.
    fn select_with_retry(
        &mut self,
        size: u32,
        count: u32,
        nodes: u32,
        idle: bool,
        out: &mut Vec<NodeId>,
    ) -> bool {
        let Err(mut hint) = self.select(size, count, idle, out) else {
            return true;
        };
        // The available nodes when the retries start, in node order.
        let order: Vec<NodeId> = (0..self.nodes.len() as NodeId)
            .filter(|&n| idle || self.nodes.is_available(n))
            .collect();
        let mut left = order.len();
        let mut idx = 0;
        let mut fits = false;
        while hint && left > nodes as usize && !out.is_empty() {
            let Some(tmp) = (idx..order.len()).find(|&k| out.contains(&order[k])) else {
                break;
            };
            self.removed[order[tmp] as usize] = true;
            left -= 1;
            if tmp == idx {
                idx += 1;
            }
            if idx >= order.len() {
                break;
            }
            match self.select(size, count, idle, out) {
                Ok(()) => {
                    fits = true;
                    break;
                }
                Err(h) => hint = h,
            }
        }
        for &n in &order {
            self.removed[n as usize] = false;
        }
        fits
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
        if nodes == 0 || nodes as usize > self.nodes.len() {
            return Err(invalid(format!(
                "the machine has {} nodes",
                self.nodes.len()
            )));
        }
        let seg = segment.filter(|&s| s > 0 && s <= nodes).unwrap_or(nodes);
        if !nodes.is_multiple_of(seg) {
            return Err(PlaceError::SegmentSize {
                nodes,
                segment: seg,
            });
        }
        let sized = self
            .toruses
            .iter()
            .any(|t| t.placements().iter().any(|p| p.size() == seg));
        if !sized {
            return Err(invalid(format!("no torus has a placement of {seg} nodes")));
        }
        let count = nodes / seg;
        if !self.select_with_retry(seg, count, nodes, true, out) {
            out.clear();
            return Err(invalid(format!(
                "{count} sub-cubes of {seg} nodes do not fit even an idle machine"
            )));
        }
        if !self.select_with_retry(seg, count, nodes, false, out) {
            out.clear();
            return Err(PlaceError::NoRoom { nodes });
        }
        self.nodes.occupy(out.iter().copied());
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
        self.nodes.vacate(nodes.iter().copied());
    }

    /// Marks `nodes` busy without a job (as the replay of another
    /// scheduler's decisions needs); ids outside the machine or already
    /// busy are skipped.
    pub fn occupy(&mut self, nodes: &[NodeId]) {
        self.nodes.occupy(nodes.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use partalloc_topology::slurm::SlurmMachine;
    use proptest::prelude::*;

    use super::*;

    /// A machine of tori `dims`, each with the placements `shapes`
    /// (dims and spacing), filled flat.
    fn machine(dims: &[[u16; 3]], shapes: &[([u16; 3], [u16; 3])]) -> SlurmMachine {
        let mut y = String::from("- topology: t\n  torus3d:\n    toruses:\n");
        let mut first = 0u32;
        for (i, d) in dims.iter().enumerate() {
            let n: u32 = d.iter().map(|&x| u32::from(x)).product();
            y += &format!(
                "      - name: t{i}\n        dims: {{x: {}, y: {}, z: {}}}\n        nodes: n[{first}-{}]\n        placements:\n",
                d[0],
                d[1],
                d[2],
                first + n - 1
            );
            for (p, sp) in shapes {
                let p = [p[0].min(d[0]), p[1].min(d[1]), p[2].min(d[2])];
                let sp = [sp[0].min(d[0]), sp[1].min(d[1]), sp[2].min(d[2])];
                y += &format!(
                    "          - dims: {{x: {}, y: {}, z: {}}}\n            anchor_spacing: {{x: {}, y: {}, z: {}}}\n",
                    p[0], p[1], p[2], sp[0], sp[1], sp[2]
                );
            }
            first += n;
        }
        SlurmMachine::parse_yaml(&y, "t.yaml", None).unwrap()
    }

    /// Cells of a sub-cube, by coordinates, as a set.
    fn cells(t: &Torus, dims: [u16; 3], at: [u16; 3]) -> Option<BTreeSet<NodeId>> {
        let d = t.dims();
        let mut out = BTreeSet::new();
        for x in 0..dims[0] {
            for y in 0..dims[1] {
                for z in 0..dims[2] {
                    out.insert(t.cell(
                        (at[0] + x) % d[0],
                        (at[1] + y) % d[1],
                        (at[2] + z) % d[2],
                    )?);
                }
            }
        }
        Some(out)
    }

    /// Slurm's ranking of a sub-cube: torus free nodes, torus, placement,
    /// fragmentation cost, anchor.
    type Rank = (u32, usize, usize, u32, usize);

    /// Every feasible sub-cube for `n` nodes ranked by Slurm's rule: (free
    /// nodes of its torus, torus, placement, fragmentation cost, anchor).
    fn brute(m: &SlurmMachine, busy: &BTreeSet<NodeId>, n: u32) -> Option<Vec<NodeId>> {
        let ts = m.toruses().unwrap().toruses();
        let mut best: Option<(Rank, BTreeSet<NodeId>)> = None;
        for (ti, t) in ts.iter().enumerate() {
            let free = t.nodes().filter(|x| !busy.contains(x)).count() as u32;
            for (pi, p) in t.placements().iter().enumerate() {
                if p.size() != n {
                    continue;
                }
                let next = t.placements()[pi + 1..].iter().find(|q| q.size() > n);
                for a in 0..p.anchor_count() {
                    let Some(c) = cells(t, p.dims(), p.anchor(a).unwrap()) else {
                        continue;
                    };
                    if c.iter().any(|x| busy.contains(x)) {
                        continue;
                    }
                    let frag = next.map_or(0, |q| {
                        (0..q.anchor_count())
                            .filter(|&b| {
                                let at = q.anchor(b).unwrap();
                                let d = t.dims();
                                // Filled cells of the larger sub-cube.
                                let mut cs = BTreeSet::new();
                                for x in 0..q.dims()[0] {
                                    for y in 0..q.dims()[1] {
                                        for z in 0..q.dims()[2] {
                                            if let Some(k) = t.cell(
                                                (at[0] + x) % d[0],
                                                (at[1] + y) % d[1],
                                                (at[2] + z) % d[2],
                                            ) {
                                                cs.insert(k);
                                            }
                                        }
                                    }
                                }
                                !cs.is_disjoint(&c) && cs.iter().all(|k| !busy.contains(k))
                            })
                            .count() as u32
                    });
                    let key = (free, ti, pi, frag, a);
                    if best.as_ref().is_none_or(|(k, _)| key < *k) {
                        best = Some((key, c));
                    }
                }
            }
        }
        best.map(|(_, c)| c.into_iter().collect())
    }

    #[test]
    fn the_guides_example_takes_sub_cubes_of_the_listed_sizes() {
        let yaml = "- topology: topo-torus\n  torus3d:\n    toruses:\n      - name: pod1\n        dims: {x: 4, y: 4, z: 2}\n        nodes: node[01-32]\n        placements:\n          - dims: {x: 2, y: 2, z: 1}\n          - dims: {x: 2, y: 2, z: 2}\n          - dims: {x: 4, y: 4, z: 2}\n";
        let m = SlurmMachine::parse_yaml(yaml, "t.yaml", None).unwrap();
        let mut p = TorusPlacer::new(m.toruses().unwrap());
        // 16 nodes in segments of 8: two 2x2x2 cubes.
        let g = p.place(16, Some(8)).unwrap();
        // The first 2x2x2 anchor, then the next one along y.
        assert_eq!(
            m.hostlist(&g),
            "node[01-02,05-06,09-10,13-14,17-18,21-22,25-26,29-30]"
        );
        assert_eq!(g.len(), 16);
        // 3 nodes: no placement has 3 cells.
        assert!(matches!(p.place(3, None), Err(PlaceError::Invalid { .. })));
        // 12 in segments of 8 does not divide.
        assert_eq!(
            p.place(12, Some(8)),
            Err(PlaceError::SegmentSize {
                nodes: 12,
                segment: 8
            })
        );
        // 32 waits for the 16 to leave.
        assert_eq!(p.place(32, None), Err(PlaceError::NoRoom { nodes: 32 }));
        p.release(&g);
        assert_eq!(p.place(32, None).unwrap().len(), 32);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The chosen sub-cube is the best feasible one under Slurm's
        /// order, every feasible sub-cube enumerated.
        #[test]
        fn the_choice_is_the_best_feasible_sub_cube(
            dims in prop::collection::vec((1u16..5, 1u16..4, 1u16..3), 1..3),
            shapes in prop::collection::vec(((1u16..3, 1u16..3, 1u16..3), (1u16..4, 1u16..4, 1u16..3)), 1..4),
            busy_bits in any::<u64>(),
            pick in 0usize..4,
        ) {
            let dims: Vec<[u16; 3]> = dims.iter().map(|&(x, y, z)| [x, y, z]).collect();
            let shapes: Vec<_> = shapes.iter().map(|&((a, b, c), (d, e, f))| ([a, b, c], [d, e, f])).collect();
            let m = machine(&dims, &shapes);
            let sizes: Vec<u32> = m.toruses().unwrap().toruses().iter().flat_map(|t| t.placements().iter().map(PlacementShape::size)).collect();
            let n = sizes[pick % sizes.len()];
            let busy: BTreeSet<NodeId> = (0..m.num_nodes() as NodeId).filter(|&i| i < 64 && busy_bits >> i & 1 == 1).collect();
            let mut p = TorusPlacer::new(m.toruses().unwrap());
            p.occupy(&busy.iter().copied().collect::<Vec<_>>());
            let want = brute(&m, &busy, n);
            match p.place(n, None) {
                Ok(got) => prop_assert_eq!(Some(got), want),
                Err(PlaceError::NoRoom { .. }) => prop_assert_eq!(None, want),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}
