//! GABL, greedy available busy list (Bani-Mohammad, Ould-Khaoua, Ababneh &
//! Mackenzie, "An efficient non-contiguous processor allocation strategy
//! for 2D mesh connected multicomputers", Information Sciences 177(14),
//! 2007).
//!
//! A job is allocated only if enough nodes are free. It gets one free
//! sub-mesh of its own shape if there is one; otherwise the largest free
//! sub-mesh that fits inside its shape, then, again and again, the largest
//! free sub-mesh whose sides do not exceed those of the sub-mesh taken just
//! before and whose size does not exceed the nodes still needed, until it
//! has all its nodes. The first step is the greedy step itself (the largest
//! free sub-mesh inside the request's shape with at most its node count is
//! the request's shape when one is free), so the strategy is one loop:
//!
//! 1. bound = the request's sides; need = its node count;
//! 2. take the largest free box with every side ≤ the bound's and at most
//!    `need` nodes; need −= its nodes; bound = its sides; repeat while
//!    need > 0.
//!
//! Choices the paper leaves open (docs/baselines.md#gabl; PReMAS and SST
//! have no GABL):
//! - **Ties** between boxes of the largest size: the lowest base node id
//!   (row-major, as the busy-list scan meets them), then a box that fits
//!   the bound unrotated, then the larger extent along x, then y.
//! - **Rotation.** With [`Request::any_orientation`](crate::Request::any_orientation)
//!   a box may fit the bound in any orientation (any permutation of its
//!   sides), in every step; otherwise only as given.
//! - **Node-count requests** ([`Request::nodes`](crate::Request::nodes))
//!   have no shape: the first bound is the whole machine.
//! - **3-D meshes**: the same loop with boxes (the paper's meshes are 2-D).
//!
//! The search for the largest box recomputes, per step, the runs of
//! available nodes along each axis (O(N)) and then visits the available
//! bases in id order, each with the boxes it anchors (O(W) per base on a
//! W×H mesh, O(W·H) on a W×H×D one), skipping bases whose runs cannot beat
//! the best box so far and stopping once a box of the largest possible size
//! is found. Once the bound is a single node the rest are the lowest
//! available ids.
//!
//! ```
//! use partalloc_allocators::{noncontig::Gabl, Allocator, Request};
//! let mut g = Gabl::new("mesh:4x4".parse()?)?;
//! let _a = g.allocate(&Request::boxed(&[3, 4])?)?; // columns 0–2
//! // No 2×2 is free in the last column: the largest box inside 2×2 there
//! // is 1×2, and then another 1×2.
//! let b = g.allocate(&Request::boxed(&[2, 2])?)?;
//! assert_eq!(b.partition().to_string(), "⟨3,0⟩⟨3,1⟩ ∪ ⟨3,2⟩⟨3,3⟩");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{GridBox, NodeId, NodeSet, Topology};

use super::{box3, grid3};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::strategy::{Managed, View};
use crate::{AllocError, BuildError, Partition, Request};

const NAME: &str = "gabl";

/// The greedy available busy list strategy on a 1- to 3-D mesh.
#[derive(Debug, Clone)]
pub struct Gabl {
    dims: usize,
    sides: [u32; 3],
    /// Scratch: the blocked nodes while a request is served, its boxes so
    /// far included (each search sees the boxes before it taken).
    taken: NodeSet,
    /// Scratch: runs of available nodes from each node along +x, +y, +z.
    runs: [Vec<u32>; 3],
    /// Scratch: per step along the second loop axis, the least run along
    /// the run axis over the columns visited.
    col: Vec<u32>,
}

/// The largest box found so far: its volume, base id, whether only a
/// rotated bound admits it, its extents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Best {
    volume: u64,
    base: usize,
    rotated: bool,
    extents: [u32; 3],
}

impl Best {
    /// Whether `self` is preferred to `other` found at the same or a later
    /// base (the scan meets bases in id order).
    fn beats(&self, other: &Option<Best>) -> bool {
        match other {
            None => true,
            Some(o) if self.volume != o.volume => self.volume > o.volume,
            Some(o) if self.base != o.base => false,
            Some(o) => (!self.rotated, self.extents) > (!o.rotated, o.extents),
        }
    }
}

impl Gabl {
    /// GABL on a mesh or torus (wrap unused) of one to three dimensions.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] for any other machine.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        let (dims, sides) = grid3(NAME, &topology)?;
        // Every box the search may build is inside the machine.
        box3(NAME, &topology, dims, [0; 3], sides)?;
        let strategy = Self {
            dims,
            sides,
            taken: NodeSet::new(topology.num_nodes()),
            runs: [Vec::new(), Vec::new(), Vec::new()],
            col: Vec::new(),
        };
        Ok(Managed::new(topology, strategy))
    }

    fn coords(&self, id: usize) -> [u32; 3] {
        let [sx, sy, _] = self.sides.map(|s| s as usize);
        [
            (id % sx) as u32,
            (id / sx % sy) as u32,
            (id / (sx * sy)) as u32,
        ]
    }

    fn stride(&self, axis: usize) -> usize {
        self.sides[..axis].iter().map(|&s| s as usize).product()
    }

    /// Recomputes the runs of available nodes along each axis.
    fn load_runs(&mut self, taken: &NodeSet) {
        let n = taken.universe();
        let strides = [1, self.stride(1), self.stride(2)];
        for r in &mut self.runs {
            r.clear();
            r.resize(n + 1, 0);
        }
        for id in (0..n).rev() {
            if taken.contains(id as NodeId) {
                continue;
            }
            let c = self.coords(id);
            for axis in 0..3 {
                let next = if c[axis] + 1 < self.sides[axis] {
                    self.runs[axis][id + strides[axis]]
                } else {
                    0
                };
                self.runs[axis][id] = next + 1;
            }
        }
    }

    /// The largest free box with at most `cap` nodes that fits one of
    /// `bounds` (the first is the unrotated one), by the tie rule.
    fn largest(&mut self, taken: &NodeSet, bounds: &[[u32; 3]], cap: u64) -> Option<Best> {
        self.load_runs(taken);
        // The run axis: the last with a side above 1; loops over the others.
        let r = (0..3).rev().find(|&a| self.sides[a] > 1).unwrap_or(0);
        let (l0, l1) = match r {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        let strides = [1, self.stride(1), self.stride(2)];
        let mut reach = [0u32; 3];
        for b in bounds {
            for a in 0..3 {
                reach[a] = reach[a].max(b[a].min(self.sides[a]));
            }
        }
        let limit = cap.min(
            bounds
                .iter()
                .map(|b| b.iter().map(|&s| u64::from(s)).product())
                .max()
                .unwrap_or(0),
        );
        let mut best: Option<Best> = None;
        self.col.resize(self.sides[l1] as usize, 0);
        for base in 0..taken.universe() {
            if self.runs[r][base] == 0 {
                continue;
            }
            let top = best.map_or(0, |b| b.volume);
            let ub = (0..3)
                .map(|a| u64::from(self.runs[a][base].min(reach[a])))
                .product::<u64>()
                .min(limit);
            if ub <= top {
                continue;
            }
            let e0_max = self.runs[l0][base].min(reach[l0]);
            let e1_max = self.runs[l1][base].min(reach[l1]) as usize;
            self.col[..e1_max].fill(u32::MAX);
            for e0 in 1..=e0_max {
                let column = base + (e0 as usize - 1) * strides[l0];
                let mut least = u32::MAX;
                for t in 0..e1_max {
                    let run = self.runs[r][column + t * strides[l1]];
                    self.col[t] = self.col[t].min(run);
                    least = least.min(self.col[t]);
                    if least == 0 {
                        break;
                    }
                    let e1 = t as u32 + 1;
                    let mut ext = [0u32; 3];
                    ext[l0] = e0;
                    ext[l1] = e1;
                    // The deepest box the bounds, the cap and the runs allow.
                    let room = cap / (u64::from(e0) * u64::from(e1));
                    let deep = bounds
                        .iter()
                        .filter(|b| e0 <= b[l0] && e1 <= b[l1])
                        .map(|b| u64::from(least.min(b[r])).min(room) as u32)
                        .max()
                        .unwrap_or(0);
                    if deep == 0 {
                        continue;
                    }
                    ext[r] = deep;
                    let rotated = !(ext[0] <= bounds[0][0]
                        && ext[1] <= bounds[0][1]
                        && ext[2] <= bounds[0][2]);
                    let cand = Best {
                        volume: u64::from(e0) * u64::from(e1) * u64::from(deep),
                        base,
                        rotated,
                        extents: ext,
                    };
                    if cand.beats(&best) {
                        best = Some(cand);
                    }
                }
            }
            if best.is_some_and(|b| b.volume == limit) {
                break;
            }
        }
        best
    }

    /// The machine's box at `base` with `extents` (3-D, z = 0 on a plane);
    /// a box3 refusal becomes the request's error.
    fn machine_box(
        &self,
        topology: &Topology,
        request: &Request,
        base: [u32; 3],
        extents: [u32; 3],
    ) -> Result<GridBox, AllocError> {
        box3(NAME, topology, self.dims, base, extents).map_err(|e| AllocError::Invalid {
            request: *request,
            reason: e.to_string(),
        })
    }

    /// Marks the nodes of `g` in `taken`, one x-row range at a time.
    fn take(&self, taken: &mut NodeSet, g: &GridBox) {
        let [sx, sy, _] = self.sides.map(|s| s as usize);
        let w = g.extent(0) as usize;
        for z in g.lo(2)..=g.hi(2) {
            for y in g.lo(1)..=g.hi(1) {
                let lo = g.lo(0) as usize + sx * (y as usize + sy * z as usize);
                // Inside the machine: box3 built it.
                let _ = taken.insert_range(lo, lo + w);
            }
        }
    }

    /// The request's first bound and whether it may rotate.
    fn bound(&self, request: &Request) -> Result<([u32; 3], bool), AllocError> {
        match *request {
            Request::Box { sides, rotate } => {
                if sides.len() > self.dims {
                    return Err(AllocError::Invalid {
                        request: *request,
                        reason: format!("a {}-D box on a {}-D mesh", sides.len(), self.dims),
                    });
                }
                let mut b = [1u32; 3];
                b[..sides.len()].copy_from_slice(&sides);
                Ok((b, rotate))
            }
            _ => Ok((self.sides, false)),
        }
    }
}

/// The distinct orientations of `b` (b first), all of them when `rotate`.
fn orientations(b: [u32; 3], rotate: bool) -> Vec<[u32; 3]> {
    let mut v = vec![b];
    if rotate {
        for p in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let o = [b[p[0]], b[p[1]], b[p[2]]];
            if !v.contains(&o) {
                v.push(o);
            }
        }
    }
    v
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "greedy available busy list: the job's shape if free, else the largest free sub-meshes, each inside the last (non-contiguous)",
        source: "Bani-Mohammad, Ould-Khaoua, Ababneh & Mackenzie, Information Sciences 177(14) 2007; ties and 3-D in docs/baselines.md#gabl",
        params: &[],
        topologies: super::GRID_KINDS,
    },
    build: |t, _| Ok(Box::new(Gabl::new(t.clone())?)),
};

impl crate::strategy::Strategy for Gabl {
    type Record = Partition;

    fn name(&self) -> String {
        NAME.to_owned()
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let topology = view.topology();
        let total = view.total_nodes();
        let want = view.wanted_nodes(request)?;
        let (first, rotate) = self.bound(request)?;
        let occupancy = view.occupancy();
        if want > occupancy.free_count() as u64 {
            return Ok(None);
        }
        // The blocked nodes, copied into `taken` only when a second search
        // follows a box (it must see the boxes before it).
        let mut taken = core::mem::take(&mut self.taken);
        let mut copied = false;
        let mut boxes = Vec::new();
        let mut need = want;
        let mut bounds = orientations(first, rotate);
        while need > 0 {
            let seen = if copied { &taken } else { occupancy.blocked() };
            if bounds.iter().all(|b| b.iter().all(|&s| s == 1)) {
                // Single nodes from here: the lowest available ids (each
                // met once, so none needs marking).
                let mut id = 0;
                while need > 0 && id < total {
                    if !seen.contains(id as NodeId) {
                        let g = self.machine_box(topology, request, self.coords(id), [1; 3])?;
                        boxes.push(g);
                        need -= 1;
                    }
                    id += 1;
                }
                break;
            }
            let Some(best) = self.largest(seen, &bounds, need) else {
                break;
            };
            // In the machine: the search keeps boxes inside it, which the
            // constructor checked box3 accepts.
            let g = self.machine_box(topology, request, self.coords(best.base), best.extents)?;
            need -= best.volume;
            if need > 0 {
                if !copied {
                    taken.reset(total);
                    taken.union_with(occupancy.blocked());
                    copied = true;
                }
                self.take(&mut taken, &g);
            }
            boxes.push(g);
            bounds = orientations(best.extents, rotate);
        }
        self.taken = taken;
        // Unreachable with need left (a single free node always fits).
        Ok((need == 0).then_some(Partition::Boxes(boxes)))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        let want = view.wanted_nodes(request)?;
        self.bound(request)?;
        Ok(Some(want <= view.occupancy().free_count() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Allocator, Grant};
    use proptest::prelude::*;

    /// The literal greedy: every box of the machine, free, inside a bound,
    /// at most `need` nodes; the largest, then the lowest base, then the
    /// unrotated, then the larger extents.
    fn literal(a: &Managed<Gabl>, request: &Request) -> Vec<GridBox> {
        let (first, rotate) = a.bound(request).unwrap();
        let free = |c: [u32; 3]| {
            let [sx, sy, _] = a.sides;
            a.view()
                .occupancy()
                .is_available(c[0] + sx * (c[1] + sy * c[2]))
        };
        let mut taken: Vec<[u32; 3]> = Vec::new();
        let mut need = request.node_count();
        let mut bounds = orientations(first, rotate);
        let mut out = Vec::new();
        while need > 0 {
            let mut best: Option<(u64, usize, bool, [u32; 3])> = None;
            let [sx, sy, sz] = a.sides;
            for base in 0..a.view().total_nodes() {
                let c = a.coords(base);
                for ex in 1..=sx - c[0] {
                    for ey in 1..=sy - c[1] {
                        for ez in 1..=sz - c[2] {
                            let e = [ex, ey, ez];
                            let vol = u64::from(ex * ey * ez);
                            if vol > need {
                                continue;
                            }
                            let fits = |b: &[u32; 3]| (0..3).all(|i| e[i] <= b[i]);
                            if !bounds.iter().any(fits) {
                                continue;
                            }
                            let all_free = (0..ex).all(|i| {
                                (0..ey).all(|j| {
                                    (0..ez).all(|k| {
                                        let p = [c[0] + i, c[1] + j, c[2] + k];
                                        free(p) && !taken.contains(&p)
                                    })
                                })
                            });
                            if !all_free {
                                continue;
                            }
                            let key = (vol, usize::MAX - base, fits(&bounds[0]), e);
                            if best.is_none_or(|b| key > (b.0, usize::MAX - b.1, !b.2, b.3)) {
                                best = Some((vol, base, !fits(&bounds[0]), e));
                            }
                        }
                    }
                }
            }
            let (vol, base, _, e) = best.unwrap();
            let c = a.coords(base);
            for i in 0..e[0] {
                for j in 0..e[1] {
                    for k in 0..e[2] {
                        taken.push([c[0] + i, c[1] + j, c[2] + k]);
                    }
                }
            }
            out.push(box3(NAME, a.topology(), a.dims, c, e).unwrap());
            need -= vol;
            bounds = orientations(e, rotate);
        }
        out
    }

    #[derive(Debug, Clone)]
    enum Op {
        Alloc(Vec<u32>, bool),
        Nodes(u32),
        Release(usize),
        Fault(u32),
    }

    fn script(dims: usize) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            4 => (prop::collection::vec(1u32..=5, dims), any::<bool>()).prop_map(|(s, r)| Op::Alloc(s, r)),
            2 => (1u32..=20).prop_map(Op::Nodes),
            3 => any::<usize>().prop_map(Op::Release),
            1 => (0u32..200).prop_map(Op::Fault),
        ];
        prop::collection::vec(op, 1..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(120))]
        /// Every grant is the literal greedy sequence of largest free
        /// sub-meshes, on 2-D and 3-D meshes, with and without rotation,
        /// faults and node-count requests.
        #[test]
        fn grants_are_the_greedy_largest_submesh_sequence(
            (sides, ops) in prop_oneof![
                (prop::collection::vec(1u32..=7, 2), script(2)).prop_map(|(s, o)| (s, o)),
                (prop::collection::vec(1u32..=4, 3), script(3)).prop_map(|(s, o)| (s, o)),
            ]
        ) {
            let text: Vec<String> = sides.iter().map(ToString::to_string).collect();
            let topo: Topology = format!("mesh:{}", text.join("x")).parse().unwrap();
            let mut a = Gabl::new(topo.clone()).unwrap();
            let mut live: Vec<Grant> = Vec::new();
            for op in ops {
                let req = match op {
                    Op::Alloc(s, r) => {
                        let b = Request::boxed(&s).unwrap();
                        if r { b.any_orientation() } else { b }
                    }
                    Op::Nodes(n) => Request::nodes(n),
                    Op::Release(i) => {
                        if !live.is_empty() {
                            let g = live.swap_remove(i % live.len());
                            a.release(&g).unwrap();
                        }
                        continue;
                    }
                    Op::Fault(n) => {
                        let _ = a.mark_faulty(n % topo.num_nodes() as u32);
                        continue;
                    }
                };
                if req.node_count() > a.free_nodes() as u64 {
                    let refused = a.allocate(&req).is_err();
                    prop_assert!(refused);
                    continue;
                }
                let want = literal(&a, &req);
                let g = a.allocate(&req).unwrap();
                prop_assert_eq!(g.partition(), &Partition::Boxes(want));
                live.push(g);
            }
        }
    }

    #[test]
    fn the_request_shape_wins_when_free() {
        let mut a = Gabl::new("mesh:6x6".parse().unwrap()).unwrap();
        let g = a.allocate(&Request::boxed(&[2, 5]).unwrap()).unwrap();
        assert_eq!(g.partition().to_string(), "⟨0,0⟩⟨1,4⟩");
        // 5×2 does not fit unrotated beside it (4 columns left) but does
        // rotated, as 2×5 at x = 2.
        let g = a
            .allocate(&Request::boxed(&[5, 2]).unwrap().any_orientation())
            .unwrap();
        assert_eq!(g.partition().to_string(), "⟨2,0⟩⟨3,4⟩");
        // Unrotated, 5×2 is split. Free: columns 4–5 of rows 0–4 and all of
        // row 5. The largest box inside 5×2 is 5×1 in row 5 (5 nodes beat
        // any 2×2); inside 5×1 then 2×1 twice at the lowest bases, and the
        // last node is the lowest free id, ⟨4,2⟩.
        let g = a.allocate(&Request::boxed(&[5, 2]).unwrap()).unwrap();
        assert_eq!(
            g.partition().to_string(),
            "⟨0,5⟩⟨4,5⟩ ∪ ⟨4,0⟩⟨5,0⟩ ∪ ⟨4,1⟩⟨5,1⟩ ∪ ⟨4,2⟩⟨4,2⟩"
        );
    }
}
