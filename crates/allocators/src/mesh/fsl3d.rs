//! The Free Submesh List strategy on 3-D meshes (beyond the paper).
//!
//! Kim & Yoon note that their strategy "can be easily extended to the
//! meshes of higher dimensions" (§I) but only treat 2-D meshes. This is
//! that extension, kept as close to the 2-D text as possible:
//!
//! - the list holds the dominant (maximal) free boxes, sorted by volume,
//!   then by closeness to a cube measured as surface area (for equal
//!   volume a smaller surface is closer to a cube; on a W×H×1 mesh this is
//!   exactly Definition 1's "closer to the square"), then lowest base
//!   address (z, y, x);
//! - rf(S, S′) is the volume of the largest slab of S′ on one of the six
//!   sides of S when they overlap, the volume of S′ otherwise
//!   (Definition 2 with one term per side);
//! - a request (a, b, c) with `rotate` may be placed in any of the distinct
//!   permutations of its sides, the requested one first; each free box
//!   that accommodates the request yields candidates at its eight corners
//!   in its dominant orientations (largest rf against the box, ties kept);
//! - elimination and the final choice follow Fig. 6 step 2, ties broken by
//!   lowest base address (z, then y, then x), then orientation order;
//! - allocation decomposes every overlapping free box into its (up to six)
//!   maximal parts beside the granted box and keeps the dominant ones;
//!   release rebuilds the list from the whole mesh (Fig. 8).
//!
//! A 2-D mesh is accepted as W×H×1 (with 2-D requests and grants); there
//! it makes exactly the choices of the 2-D [`Fsl`](super::Fsl) (checked in
//! the tests). Faulty nodes are
//! kept as 1×1×1 allocated boxes; a torus is treated as a mesh.
//!
//! ```
//! use partalloc_allocators::{mesh::Fsl3d, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut f = Fsl3d::new("mesh:4x4x4".parse()?)?;
//! let g = f.allocate(&Request::boxed(&[4, 4, 2])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0, 0], &[4, 4, 2])?));
//! assert_eq!(f.free_submeshes().len(), 1); // the upper half
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::cmp::Reverse;

use partalloc_topology::{GridBox, NodeId, Topology};

use super::fsl::{Region, decompose};
use crate::occupancy::occupancy_methods;
use crate::registry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{
    AllocError, Allocator, BuildError, FaultError, Grant, GrantLedger, Occupancy, Partition,
    ReleaseError, Request,
};

const NAME: &str = "fsl-3d";

/// An axis-aligned box of a 3-D mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Cuboid {
    pub(super) lo: [u32; 3],
    pub(super) ext: [u32; 3],
}

impl Cuboid {
    pub(super) const fn new(lo: [u32; 3], ext: [u32; 3]) -> Self {
        Self { lo, ext }
    }

    pub(super) const fn hi(self, d: usize) -> u32 {
        self.lo[d] + self.ext[d] - 1
    }

    pub(super) fn volume(self) -> u64 {
        self.ext.iter().map(|&e| u64::from(e)).product()
    }

    fn surface(self) -> u64 {
        let [a, b, c] = self.ext.map(u64::from);
        a * b + b * c + a * c
    }

    pub(super) fn overlaps(self, o: Self) -> bool {
        (0..3).all(|d| self.lo[d] < o.lo[d] + o.ext[d] && o.lo[d] < self.lo[d] + self.ext[d])
    }

    pub(super) fn contains(self, o: Self) -> bool {
        (0..3).all(|d| o.lo[d] >= self.lo[d] && o.lo[d] + o.ext[d] <= self.lo[d] + self.ext[d])
    }

    /// Volume of the slab of `self` across dimension `d` (extent 1 in d).
    fn cross(self, d: usize) -> u64 {
        (0..3)
            .filter(|&e| e != d)
            .map(|e| u64::from(self.ext[e]))
            .product()
    }

    /// The box in the machine's `dims` dimensions (2 or 3; a 2-D mesh is
    /// handled as W×H×1).
    fn to_box(self, dims: usize) -> Result<GridBox, partalloc_topology::TopologyError> {
        GridBox::new(&self.lo[..dims], &self.ext[..dims])
    }
}

/// rf(s, against) in three dimensions.
pub(super) fn rf3(s: Cuboid, against: Cuboid) -> u64 {
    if !s.overlaps(against) {
        return against.volume();
    }
    let mut best = 0u64;
    for d in 0..3 {
        let cross = against.cross(d);
        if s.lo[d] > against.lo[d] {
            best = best.max(u64::from(s.lo[d] - against.lo[d]) * cross);
        }
        if against.hi(d) > s.hi(d) {
            best = best.max(u64::from(against.hi(d) - s.hi(d)) * cross);
        }
    }
    best
}

fn key(c: &Cuboid) -> (Reverse<u64>, u64, [u32; 3], Reverse<[u32; 3]>) {
    (
        Reverse(c.volume()),
        c.surface(),
        [c.lo[2], c.lo[1], c.lo[0]],
        Reverse(c.ext),
    )
}

impl Region for Cuboid {
    fn overlaps(self, o: Self) -> bool {
        Self::overlaps(self, o)
    }

    fn contains(self, o: Self) -> bool {
        Self::contains(self, o)
    }

    fn parts_outside(self, best: Self, out: &mut Vec<Self>) {
        let s = self;
        for d in 0..3 {
            if best.lo[d] > s.lo[d] {
                let mut p = s;
                p.ext[d] = best.lo[d] - s.lo[d];
                out.push(p);
            }
            if best.hi(d) < s.hi(d) {
                let mut p = s;
                p.lo[d] = best.hi(d) + 1;
                p.ext[d] = s.hi(d) - best.hi(d);
                out.push(p);
            }
        }
    }
}

/// The distinct orientations of (a, b, c): the requested one first, then
/// the other permutations in a fixed order.
pub(super) fn orientations3(sides: [u32; 3], rotate: bool, out: &mut Vec<[u32; 3]>) {
    const PERMS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [1, 0, 2],
        [0, 2, 1],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    out.clear();
    for p in PERMS.iter().take(if rotate { 6 } else { 1 }) {
        let o = [sides[p[0]], sides[p[1]], sides[p[2]]];
        if !out.contains(&o) {
            out.push(o);
        }
    }
}

/// Calls `f(lo, hi)` for the node-id range of every x-row of `c`.
fn for_rows(sides: [u32; 3], c: Cuboid, mut f: impl FnMut(usize, usize)) {
    let [w, h, _] = sides.map(|s| s as usize);
    for z in c.lo[2]..c.lo[2] + c.ext[2] {
        for y in c.lo[1]..c.lo[1] + c.ext[1] {
            let lo = c.lo[0] as usize + w * (y as usize + h * z as usize);
            f(lo, lo + c.ext[0] as usize);
        }
    }
}

/// The Free Submesh List strategy on a 3-D mesh.
#[derive(Debug, Clone)]
pub struct Fsl3d {
    topology: Topology,
    dims: usize,
    sides: [u32; 3],
    occupancy: Occupancy,
    ledger: GrantLedger<Cuboid>,
    /// Allocated boxes and faulty nodes (as 1×1×1).
    pub(super) obstacles: Vec<Cuboid>,
    /// The dominant free boxes, sorted.
    pub(super) free: Vec<Cuboid>,
    ors: Vec<[u32; 3]>,
    cands: Vec<(Cuboid, usize)>,
    pieces: Vec<Cuboid>,
}

impl Fsl3d {
    /// FSL on a 3-D mesh (or torus, wrap ignored). A 2-D mesh is accepted
    /// as W×H×1, with 2-D requests and grants.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D or
    /// 3-D.
    pub fn new(topology: Topology) -> Result<Self, BuildError> {
        let grid = match topology.as_grid() {
            Some(g) if g.dims() == 2 || g.dims() == 3 => g,
            _ => {
                return Err(BuildError::UnsuitableTopology {
                    strategy: NAME,
                    topology: topology.to_string(),
                    reason: "needs a 3-D (or 2-D) mesh or torus, e.g. mesh:8x8x8".to_owned(),
                });
            }
        };
        let dims = grid.dims();
        let g = grid.sides();
        let sides = [g[0], g[1], if dims == 3 { g[2] } else { 1 }];
        let whole = Cuboid::new([0; 3], sides);
        Ok(Self {
            topology,
            dims,
            sides,
            occupancy: Occupancy::new(topology.num_nodes()),
            ledger: GrantLedger::new(),
            obstacles: Vec::new(),
            free: vec![whole],
            ors: Vec::new(),
            cands: Vec::new(),
            pieces: Vec::new(),
        })
    }

    /// The free submesh list, in list order.
    #[must_use]
    pub fn free_submeshes(&self) -> Vec<GridBox> {
        self.free
            .iter()
            .filter_map(|c| c.to_box(self.dims).ok())
            .collect()
    }

    fn whole(&self) -> Cuboid {
        Cuboid::new([0; 3], self.sides)
    }

    fn parse(&self, request: &Request) -> Result<([u32; 3], bool), AllocError> {
        let Request::Box { sides, rotate } = *request else {
            return Err(AllocError::Unsupported {
                strategy: NAME,
                request: *request,
                reason: "fsl-3d takes box requests with one side per mesh dimension",
            });
        };
        if sides.len() != self.dims {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "a {}-D box on a {}-D mesh; give one side per dimension",
                    sides.len(),
                    self.dims
                ),
            });
        }
        let s = [
            sides[0],
            sides[1],
            if self.dims == 3 { sides[2] } else { 1 },
        ];
        let mut ors = Vec::new();
        orientations3(s, rotate, &mut ors);
        let fits = |o: &[u32; 3]| (0..3).all(|d| o[d] >= 1 && o[d] <= self.sides[d]);
        if !ors.iter().any(fits) {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "a {}x{}x{} box does not fit the {}x{}x{} mesh in any allowed orientation",
                    s[0], s[1], s[2], self.sides[0], self.sides[1], self.sides[2]
                ),
            });
        }
        Ok((s, rotate))
    }

    fn choose(&mut self, sides: [u32; 3], rotate: bool) -> Option<Cuboid> {
        orientations3(sides, rotate, &mut self.ors);
        self.cands.clear();
        for &s in &self.free {
            let type_rf = |o: [u32; 3]| {
                (0..3).all(|d| o[d] <= s.ext[d]).then(|| {
                    (0..3)
                        .map(|d| u64::from(s.ext[d] - o[d]) * s.cross(d))
                        .max()
                        .unwrap_or(0)
                })
            };
            let Some(top) = self.ors.iter().filter_map(|&o| type_rf(o)).max() else {
                continue;
            };
            for (rank, &o) in self.ors.iter().enumerate() {
                if type_rf(o) != Some(top) {
                    continue;
                }
                for corner in 0..8u32 {
                    let mut lo = s.lo;
                    for d in 0..3 {
                        if corner >> d & 1 == 1 {
                            lo[d] = s.hi(d) + 1 - o[d];
                        }
                    }
                    self.cands.push((Cuboid::new(lo, o), rank));
                }
            }
        }
        self.cands
            .sort_unstable_by_key(|&(c, rank)| ([c.lo[2], c.lo[1], c.lo[0]], rank));
        self.cands.dedup();
        let keep_best = |cands: &mut Vec<(Cuboid, usize)>, against: Cuboid| {
            let top = cands
                .iter()
                .map(|&(c, _)| rf3(c, against))
                .max()
                .unwrap_or(0);
            cands.retain(|&(c, _)| rf3(c, against) == top);
        };
        for &s in &self.free {
            if self.cands.len() <= 1 {
                break;
            }
            keep_best(&mut self.cands, s);
        }
        if self.cands.len() > 1 {
            let whole = self.whole();
            keep_best(&mut self.cands, whole);
        }
        self.cands.first().map(|&(c, _)| c)
    }

    fn sort(&mut self) {
        self.free.sort_unstable_by_key(key);
    }

    fn block(&mut self, c: Cuboid) {
        decompose(&mut self.free, c, &mut self.pieces);
        self.sort();
    }

    fn rebuild(&mut self, released: Cuboid) {
        if self.free.is_empty() {
            self.free.push(released);
            return;
        }
        self.free.clear();
        self.free.push(self.whole());
        for i in 0..self.obstacles.len() {
            let o = self.obstacles[i];
            decompose(&mut self.free, o, &mut self.pieces);
        }
        self.sort();
    }

    fn coords(&self, node: NodeId) -> [u32; 3] {
        let [w, h, _] = self.sides;
        [node % w, (node / w) % h, node / (w * h)]
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "free submesh list best fit extended to 3-D meshes (complete recognition)",
        source: "extension of Kim & Yoon §III to three dimensions (not in the paper)",
        params: &[],
        topologies: super::MESH_KINDS,
    },
    build: |t, _| Ok(Box::new(Fsl3d::new(*t)?)),
};

impl Allocator for Fsl3d {
    fn name(&self) -> String {
        NAME.to_owned()
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let (sides, rotate) = self.parse(request)?;
        let c = self.choose(sides, rotate).ok_or(AllocError::NoRoom {
            request: *request,
            free: self.occupancy.free_count(),
            total: self.topology.num_nodes(),
        })?;
        let b = c.to_box(self.dims).map_err(|e| AllocError::Invalid {
            request: *request,
            reason: e.to_string(),
        })?;
        self.block(c);
        let occ = &mut self.occupancy;
        for_rows(self.sides, c, |lo, hi| occ.occupy_range(lo, hi));
        self.obstacles.push(c);
        let id = self.ledger.issue(c);
        Ok(Grant::new(id, Partition::Box(b), request.node_count()))
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let c = self.ledger.take(grant.id())?;
        let occ = &mut self.occupancy;
        for_rows(self.sides, c, |lo, hi| occ.vacate_range(lo, hi));
        if let Some(i) = self.obstacles.iter().position(|&o| o == c) {
            self.obstacles.swap_remove(i);
        }
        self.rebuild(c);
        Ok(())
    }

    occupancy_methods!(occupancy, ledger);

    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        let was = self.occupancy.faulty().contains(node);
        self.occupancy.mark_faulty(node)?;
        if !was {
            let c = Cuboid::new(self.coords(node), [1; 3]);
            self.obstacles.push(c);
            self.block(c);
        }
        Ok(())
    }

    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        let was = self.occupancy.faulty().contains(node);
        self.occupancy.repair(node)?;
        if was {
            let c = Cuboid::new(self.coords(node), [1; 3]);
            if let Some(i) = self.obstacles.iter().position(|&o| o == c) {
                self.obstacles.swap_remove(i);
            }
            self.rebuild(c);
        }
        Ok(())
    }

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let (sides, rotate) = self.parse(request)?;
        let mut ors = Vec::new();
        orientations3(sides, rotate, &mut ors);
        let mut out = Vec::new();
        for o in ors {
            if (0..3).any(|d| o[d] > self.sides[d]) {
                continue;
            }
            for z in 0..=self.sides[2] - o[2] {
                for y in 0..=self.sides[1] - o[1] {
                    for x in 0..=self.sides[0] - o[0] {
                        if let Ok(b) = Cuboid::new([x, y, z], o).to_box(self.dims) {
                            out.push(Partition::Box(b));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}
