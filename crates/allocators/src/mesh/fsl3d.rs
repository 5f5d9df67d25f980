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
//! the tests). Faulty nodes count as 1×1×1 allocated boxes; a torus is
//! treated as a mesh.
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

use partalloc_topology::{Coords, GridBox, NodeId, OrientationOrder, Orientations, Topology};

use super::the_box;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::submesh_list::{Chooser, decompose, rebuild_into};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "fsl-3d";

/// The search key of the list: volume (larger first), closeness to a cube
/// as surface area (smaller first), lowest base address (z, y, x), then
/// the larger extents first.
fn key(c: &GridBox) -> (Reverse<u64>, u64, [u32; 3], Reverse<[u32; 3]>) {
    let surface = (0..3).map(|d| c.cross_section(d)).sum();
    (
        Reverse(c.volume()),
        surface,
        [c.lo(2), c.lo(1), c.lo(0)],
        Reverse([c.extent(0), c.extent(1), c.extent(2)]),
    )
}

/// The orientations of (a, b, c) a request allows: every distinct one
/// with `rotate`, in [`OrientationOrder::Insertion`] (a b c, b a c, a c b,
/// b c a, c a b, c b a), else only the requested one.
pub(super) fn orientations3(sides: [u32; 3], rotate: bool, out: &mut Vec<[u32; 3]>) {
    out.clear();
    if let Ok(sides) = Coords::new(&sides) {
        let all = Orientations::new(sides, OrientationOrder::Insertion);
        out.extend(
            all.take(if rotate { usize::MAX } else { 1 })
                .map(|o| [o[0], o[1], o[2]]),
        );
    }
}

/// The 3-D box at `lo` with extents `ext` (None if an extent is 0).
pub(super) fn cuboid(lo: [u32; 3], ext: [u32; 3]) -> Option<GridBox> {
    GridBox::new(&lo, &ext).ok()
}

/// The box in the machine's `dims` dimensions (2 or 3; a 2-D mesh is
/// handled as W×H×1).
fn to_machine(c: &GridBox, dims: usize) -> Result<GridBox, partalloc_topology::TopologyError> {
    GridBox::new(&c.base()[..dims], &c.extents()[..dims])
}

/// A granted box (2-D on a 2-D mesh) as the 3-D box the list works on.
fn to_cuboid(b: &GridBox) -> Option<GridBox> {
    cuboid(
        [b.lo(0), b.lo(1), b.lo(2)],
        [b.extent(0), b.extent(1), b.extent(2)],
    )
}

/// The busy list: the granted boxes (from the live grants), then the
/// faulty nodes as 1×1×1 boxes (the faulty set is scanned only when it is
/// not empty). Read from the state rather than kept beside it.
fn busy_boxes<'a>(view: &View<'a>, sides: [u32; 3]) -> impl Iterator<Item = GridBox> + 'a {
    let occupancy = view.occupancy();
    let [w, h, _] = sides;
    let faulty = (occupancy.faulty_count() > 0)
        .then(|| {
            occupancy
                .faulty()
                .iter()
                .filter_map(move |n| cuboid([n % w, (n / w) % h, n / (w * h)], [1; 3]))
        })
        .into_iter()
        .flatten();
    view.grants()
        .filter_map(|p| the_box(p).as_ref().and_then(to_cuboid))
        .chain(faulty)
}

/// The Free Submesh List strategy on a 3-D mesh.
#[derive(Debug, Clone)]
pub struct Fsl3d {
    dims: usize,
    sides: [u32; 3],
    /// The dominant free boxes, sorted, all 3-D.
    pub(super) free: Vec<GridBox>,
    whole: GridBox,
    ors: Vec<[u32; 3]>,
    chooser: Chooser<GridBox>,
    pieces: Vec<GridBox>,
}

impl Fsl3d {
    /// FSL on a 3-D mesh (or torus, wrap ignored). A 2-D mesh is accepted
    /// as W×H×1, with 2-D requests and grants.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D or
    /// 3-D.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
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
        let whole = GridBox::new(&[0; 3], &sides).map_err(|e| BuildError::UnsuitableTopology {
            strategy: NAME,
            topology: topology.to_string(),
            reason: e.to_string(),
        })?;
        let strategy = Self {
            dims,
            sides,
            free: vec![whole],
            whole,
            ors: Vec::new(),
            chooser: Chooser::default(),
            pieces: Vec::new(),
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The free submesh list, in list order.
    #[must_use]
    pub fn free_submeshes(&self) -> Vec<GridBox> {
        self.free
            .iter()
            .filter_map(|c| to_machine(c, self.dims).ok())
            .collect()
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

    fn choose_box(&mut self, sides: [u32; 3], rotate: bool) -> Option<GridBox> {
        orientations3(sides, rotate, &mut self.ors);
        self.chooser
            .choose(&self.sides, &self.free, &self.ors, &self.whole)
            .map(|(c, _)| c)
    }

    fn sort(&mut self) {
        self.free.sort_unstable_by_key(key);
    }

    fn block(&mut self, c: GridBox) {
        decompose(&[], &mut self.free, &c, &mut self.pieces);
        self.sort();
    }

    fn rebuild(&mut self, view: &View<'_>, released: GridBox) {
        if self.free.is_empty() {
            self.free.push(released);
            return;
        }
        let obstacles = busy_boxes(view, self.sides);
        rebuild_into(
            &[],
            self.whole,
            obstacles,
            &[],
            &mut self.free,
            &mut self.pieces,
        );
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
    build: |t, _| Ok(Box::new(Fsl3d::new(t.clone())?)),
};

#[cfg(test)]
impl Managed<Fsl3d> {
    /// The allocated boxes and the faulty nodes (as 1×1×1), all 3-D.
    pub(super) fn obstacles(&self) -> Vec<GridBox> {
        busy_boxes(&self.view(), self.sides).collect()
    }
}

impl Strategy for Fsl3d {
    type Record = Partition;

    fn name(&self) -> String {
        NAME.to_owned()
    }

    fn choose(&mut self, _: &View<'_>, request: &Request) -> Result<Option<Partition>, AllocError> {
        let (sides, rotate) = self.parse(request)?;
        let Some(c) = self.choose_box(sides, rotate) else {
            return Ok(None);
        };
        let b = to_machine(&c, self.dims).map_err(|e| AllocError::Invalid {
            request: *request,
            reason: e.to_string(),
        })?;
        Ok(Some(Partition::Box(b)))
    }

    fn committed(&mut self, _: &View<'_>, p: &Partition) {
        if let Some(c) = the_box(p).as_ref().and_then(to_cuboid) {
            self.block(c);
        }
    }

    fn released(&mut self, view: &View<'_>, p: &Partition) {
        if let Some(c) = the_box(p).as_ref().and_then(to_cuboid) {
            self.rebuild(view, c);
        }
    }

    fn faulted(&mut self, _: &View<'_>, node: NodeId) {
        if let Some(c) = cuboid(self.coords(node), [1; 3]) {
            self.block(c);
        }
    }

    fn repaired(&mut self, view: &View<'_>, node: NodeId) {
        if let Some(c) = cuboid(self.coords(node), [1; 3]) {
            self.rebuild(view, c);
        }
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
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
                        if let Some(b) =
                            cuboid([x, y, z], o).and_then(|c| to_machine(&c, self.dims).ok())
                        {
                            out.push(Partition::Box(b));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}
