//! Submesh allocation on 2-D meshes: the Free Submesh List strategy of Kim
//! & Yoon and the baselines they compare against.
//!
//! | type | registry name | source |
//! |---|---|---|
//! | [`Fsl`] | `fsl` | Kim & Yoon §III (Figs. 6 and 8) |
//! | [`AdaptiveScan`] | `adaptive-scan` | Ding & Bhuyan, as in Kim & Yoon §II.4 |
//! | [`BusyList`] | `busy-list` | Das Sharma & Pradhan, as in Kim & Yoon §II.5 |
//! | [`FrameSliding`] | `frame-sliding` | Chuang & Tzeng, as in Kim & Yoon §II.2 |
//! | [`FirstFit`] | `first-fit` | Zhu, as in Kim & Yoon §II.3 |
//! | [`BestFit`] | `best-fit` | Zhu, as in Kim & Yoon §II.3 |
//! | [`Buddy2d`] | `buddy-2d` | Li & Cheng, as in Kim & Yoon §II.1 |
//! | [`Fsl3d`] | `fsl-3d` | FSL extended to 3-D meshes (not in the paper) |
//!
//! Conventions (Kim & Yoon §II): node ⟨x,y⟩ of a W×H mesh has id
//! x + W·y; a request (a, b) is a box of a columns (x extent) by b rows
//! (`Request::Box { sides: [a, b], rotate }`); with `rotate == true` the
//! strategies that rotate may grant b×a instead. A granted submesh is a
//! [`Partition::Box`] whose `Display` form is Kim &
//! Yoon's ⟨x1,y1⟩⟨x2,y2⟩. "Lowest address" means lowest y, then lowest x.
//! Strategies that never rotate ([`FirstFit`], [`BestFit`],
//! [`FrameSliding`], [`Buddy2d`]) refuse as invalid a request that fits the
//! mesh only as b×a, since no state could serve it.
//!
//! Every strategy here accepts 2-D meshes and 2-D tori ([`Fsl3d`] also
//! 3-D ones); on a torus the
//! wrap-around links are ignored (submeshes never wrap), so a torus is
//! treated as the mesh of the same sides. Faulty nodes are treated as busy
//! 1×1 submeshes by every strategy except [`Buddy2d`], which refuses them.
//!
//! ```
//! use partalloc_allocators::{registry, Partition, Request};
//! use partalloc_topology::{GridBox, Topology};
//! let machine: Topology = "mesh:10x10".parse()?;
//! let mut fsl = registry::build("fsl", &machine)?;
//! let g = fsl.allocate(&Request::boxed(&[3, 2])?.any_orientation())?;
//! // On an empty mesh every corner is equally good; the lowest address wins.
//! assert_eq!(g.partition(), &Partition::Box(GridBox::from_corners(&[0, 0], &[2, 1])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::nodeset::word_bit;
use partalloc_topology::{Coords, GridBox, NodeId, OrientationOrder, Orientations, Topology};

pub use crate::rowgrid::SearchMode;
pub(crate) use scan::MeshScratch;

use crate::{AllocError, BuildError, Occupancy, Partition, Request, View};

mod adaptive_scan;
mod best_fit;
mod buddy_2d;
mod busy_list;
mod first_fit;
mod frame_sliding;
mod fsl;
mod fsl3d;
#[cfg(test)]
mod oracle;
mod scan;
#[cfg(test)]
mod tests;

pub use adaptive_scan::AdaptiveScan;
pub use best_fit::{BestFit, BfScore};
pub use buddy_2d::{Buddy2d, BuddyOrder};
pub use busy_list::{BlCandidates, BusyList};
pub use first_fit::{FirstFit, FirstFree};
pub use frame_sliding::{FrameSliding, FsVariant};
pub use fsl::{Fsl, FslDealloc, reservation_factor};
pub use fsl3d::Fsl3d;

pub(crate) use adaptive_scan::ENTRY as ADAPTIVE_SCAN_ENTRY;
pub(crate) use best_fit::ENTRY as BEST_FIT_ENTRY;
pub(crate) use buddy_2d::ENTRY as BUDDY_2D_ENTRY;
pub(crate) use busy_list::ENTRY as BUSY_LIST_ENTRY;
pub(crate) use first_fit::ENTRY as FIRST_FIT_ENTRY;
pub(crate) use frame_sliding::ENTRY as FRAME_SLIDING_ENTRY;
pub(crate) use fsl::ENTRY as FSL_ENTRY;
pub(crate) use fsl3d::ENTRY as FSL_3D_ENTRY;

/// The machine families every mesh strategy accepts (2-D only; checked by
/// the constructors).
pub(crate) const MESH_KINDS: &[partalloc_topology::TopologyKind] = &[
    partalloc_topology::TopologyKind::Mesh,
    partalloc_topology::TopologyKind::Torus,
];

/// The w×h box of the mesh based at ⟨x, y⟩ (None if a side is 0).
pub(crate) fn rect(x: u32, y: u32, w: u32, h: u32) -> Option<GridBox> {
    GridBox::new(&[x, y], &[w, h]).ok()
}

/// A mesh strategy's machine: the sides of the 2-D mesh (or torus, wrap
/// ignored) it was built for, checked once by the constructor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeshGeom {
    pub(crate) width: u32,
    pub(crate) height: u32,
    whole: GridBox,
}

impl MeshGeom {
    /// Checks that `topology` is a 2-D mesh or torus.
    pub(crate) fn new(strategy: &'static str, topology: &Topology) -> Result<Self, BuildError> {
        let grid = match topology.as_grid() {
            Some(g) if g.dims() == 2 => g,
            _ => {
                return Err(BuildError::UnsuitableTopology {
                    strategy,
                    topology: topology.to_string(),
                    reason: "needs a 2-D mesh or torus, e.g. mesh:16x16".to_owned(),
                });
            }
        };
        let (width, height) = (grid.sides()[0], grid.sides()[1]);
        let whole =
            GridBox::new(&[0, 0], grid.sides()).map_err(|e| BuildError::UnsuitableTopology {
                strategy,
                topology: topology.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            width,
            height,
            whole,
        })
    }

    /// The whole mesh as a box.
    pub(crate) fn whole(&self) -> GridBox {
        self.whole
    }

    /// The machine as a search reads it.
    pub(crate) fn core<'a>(&self, view: &View<'a>) -> MeshCore<'a> {
        MeshCore {
            width: self.width,
            height: self.height,
            occupancy: view.occupancy(),
            view: *view,
            whole: self.whole,
        }
    }

    /// Node ⟨x,y⟩ of id `node`.
    pub(crate) fn xy(&self, node: NodeId) -> (u32, u32) {
        (node % self.width, node / self.width)
    }

    /// Validates a request: a 2-D box that fits the mesh in at least one
    /// orientation the strategy may use (`rotates`: whether it ever tries
    /// b×a). Returns (a, b, rotate).
    pub(crate) fn parse(
        &self,
        strategy: &'static str,
        request: &Request,
        rotates: bool,
    ) -> Result<(u32, u32, bool), AllocError> {
        let Request::Box { sides, rotate } = *request else {
            return Err(AllocError::Unsupported {
                strategy,
                request: *request,
                reason: "mesh strategies take 2-D box requests (Request::boxed(&[a, b]))",
            });
        };
        if sides.len() != 2 {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "a {}-D box on a 2-D mesh; give two sides (a columns, b rows)",
                    sides.len()
                ),
            });
        }
        let (a, b) = (sides[0], sides[1]);
        let fits = |w: u32, h: u32| w >= 1 && h >= 1 && w <= self.width && h <= self.height;
        let either = rotate && rotates;
        if !(fits(a, b) || (either && fits(b, a))) {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "a {a}x{b} box{} does not fit the {}x{} mesh",
                    if either {
                        " (in either orientation)"
                    } else if rotate {
                        " (this strategy never rotates requests)"
                    } else {
                        ""
                    },
                    self.width,
                    self.height
                ),
            });
        }
        Ok((a, b, rotate))
    }

    /// [`Strategy::recognises`](crate::Strategy::recognises) of a mesh
    /// strategy: the request parses and `at` is a box `places` accepts
    /// for (a, b, rotate).
    pub(crate) fn recognises(
        &self,
        strategy: &'static str,
        request: &Request,
        rotates: bool,
        at: &Partition,
        places: impl FnOnce(u32, u32, bool, &GridBox) -> bool,
    ) -> Result<Partition, AllocError> {
        let (a, b, rotate) = self.parse(strategy, request, rotates)?;
        match at {
            Partition::Box(r) if places(a, b, rotate, r) => Ok(at.clone()),
            _ => Err(AllocError::Unrecognized {
                strategy,
                request: *request,
                partition: Box::new(at.clone()),
            }),
        }
    }

    /// Every a×b placement in row-major base order, then (with `rotate`
    /// and a ≠ b) every b×a one (for `recognizable`).
    /// [`Strategy::recognizable`](crate::Strategy::recognizable) of a
    /// strategy that may grant a box anywhere it fits: every placement of
    /// the request, turned only if the strategy `rotates` and the request
    /// allows it.
    pub(crate) fn listing(
        &self,
        strategy: &'static str,
        request: &Request,
        rotates: bool,
    ) -> Result<Vec<Partition>, AllocError> {
        let (a, b, rotate) = self.parse(strategy, request, rotates)?;
        Ok(self.placements(a, b, rotates && rotate))
    }

    /// [`Strategy::recognises`](crate::Strategy::recognises) of the same
    /// strategies: `at` is one of the placements [`listing`](Self::listing)
    /// gives.
    pub(crate) fn recognises_placement(
        &self,
        strategy: &'static str,
        request: &Request,
        rotates: bool,
        at: &Partition,
    ) -> Result<Partition, AllocError> {
        self.recognises(strategy, request, rotates, at, |a, b, rotate, r| {
            self.places(a, b, rotates && rotate, r)
        })
    }

    pub(crate) fn placements(&self, a: u32, b: u32, rotate: bool) -> Vec<Partition> {
        let mut out = Vec::new();
        let (or, n) = orientations(a, b, rotate);
        for &(w, h) in &or[..n] {
            if w > self.width || h > self.height {
                continue;
            }
            for y in 0..=self.height - h {
                for x in 0..=self.width - w {
                    out.extend(rect(x, y, w, h).map(Partition::Box));
                }
            }
        }
        out
    }

    /// Whether `r` is one of [`placements`](Self::placements)' boxes, in
    /// O(1): an a×b (or, with `rotate`, b×a) box of the machine.
    pub(crate) fn places(&self, a: u32, b: u32, rotate: bool, r: &GridBox) -> bool {
        let (or, n) = orientations(a, b, rotate);
        let (w, h) = (r.extent(0), r.extent(1));
        r.dims() == 2
            && or[..n].contains(&(w, h))
            && u64::from(r.lo(0)) + u64::from(w) <= u64::from(self.width)
            && u64::from(r.lo(1)) + u64::from(h) <= u64::from(self.height)
    }
}

/// The box of a mesh grant (every mesh strategy grants one box).
pub(crate) fn the_box(p: &Partition) -> Option<GridBox> {
    match p {
        Partition::Box(r) => Some(*r),
        _ => None,
    }
}

/// The mesh as a search reads it: the sides, the node states (the
/// occupancy's `blocked` set is what the scanning strategies read) and the
/// live grants, whose rectangles with the faulty nodes form the papers'
/// "busy list" ([`MeshCore::obstacles`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeshCore<'a> {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) occupancy: &'a Occupancy,
    view: View<'a>,
    whole: GridBox,
}

impl<'a> MeshCore<'a> {
    /// The whole mesh as a box.
    pub(crate) fn whole(&self) -> GridBox {
        self.whole
    }

    #[inline]
    pub(crate) fn idx(&self, x: u32, y: u32) -> usize {
        x as usize + self.width as usize * y as usize
    }

    /// Whether ⟨x,y⟩ is busy, faulty or outside the mesh (signed
    /// coordinates so callers can look past the edges).
    #[inline]
    pub(crate) fn blocked_at(&self, x: i64, y: i64) -> bool {
        x < 0
            || y < 0
            || x >= i64::from(self.width)
            || y >= i64::from(self.height)
            || !self
                .occupancy
                .is_available((x + i64::from(self.width) * y) as NodeId)
    }

    /// Whether every node of `r` is available (r must lie in the mesh).
    /// Word-parallel on the occupancy's blocked set.
    pub(crate) fn rect_free(&self, r: &GridBox) -> bool {
        let w = r.extent(0) as usize;
        (r.lo(1)..=r.hi(1)).all(|y| {
            let lo = self.idx(r.lo(0), y);
            self.occupancy.range_available(lo, lo + w)
        })
    }

    /// The allocated submeshes, then the faulty nodes as 1×1 submeshes: the
    /// "busy list" / "allocation list" of the papers, read from the live
    /// grants and the occupancy (the faulty set is scanned only when it is
    /// not empty).
    pub(crate) fn obstacles(&self) -> impl Iterator<Item = GridBox> + 'a {
        let occupancy = self.occupancy;
        let faulty = (occupancy.faulty_count() > 0)
            .then(|| {
                let w = self.width;
                occupancy
                    .faulty()
                    .iter()
                    .filter_map(move |n| rect(n % w, n / w, 1, 1))
            })
            .into_iter()
            .flatten();
        self.view.grants().filter_map(the_box).chain(faulty)
    }

    /// Number of live grants.
    pub(crate) fn live_grants(&self) -> usize {
        self.view.live_grants()
    }

    /// Whether no submesh is allocated and no node is faulty.
    pub(crate) fn no_obstacles(&self) -> bool {
        self.view.live_grants() == 0 && self.occupancy.faulty_count() == 0
    }

    /// A number that changes whenever a node's state does.
    pub(crate) fn generation(&self) -> u64 {
        self.view.generation()
    }
}

/// The first free a×b submesh in row-major order, then (with `rotate` and
/// a ≠ b) the first free b×a one; `run` and `cnt` are scratch buffers.
pub(crate) fn first_fit(
    core: &MeshCore<'_>,
    a: u32,
    b: u32,
    rotate: bool,
    run: &mut Vec<u32>,
    cnt: &mut Vec<u32>,
) -> Option<GridBox> {
    let (or, n) = orientations(a, b, rotate);
    or[..n].iter().find_map(|&(w, h)| {
        first_free_base(core, w, h, run, cnt).and_then(|(x, y)| rect(x, y, w, h))
    })
}

/// [`first_fit`] by the chosen search: the literal node-by-node scan or
/// the word-level one of [`scan`], which picks the same box.
pub(crate) fn first_fit_by(
    core: &MeshCore<'_>,
    mode: SearchMode,
    s: &mut MeshScratch,
    a: u32,
    b: u32,
    rotate: bool,
) -> Option<GridBox> {
    match mode {
        SearchMode::Literal => first_fit(core, a, b, rotate, &mut s.run, &mut s.cnt),
        SearchMode::Fast => {
            s.load(core);
            let (or, n) = orientations(a, b, rotate);
            or[..n].iter().find_map(|&(w, h)| {
                scan::first_free_base_fast(core, s, w, h).and_then(|(x, y)| rect(x, y, w, h))
            })
        }
    }
}

/// Row-major first fit of a w×h frame on the blocked array: the free base
/// with the lowest y, then the lowest x. O(W·H) with two row-length scratch
/// buffers; stops at the first row that completes a free frame.
pub(crate) fn first_free_base(
    core: &MeshCore<'_>,
    w: u32,
    h: u32,
    run: &mut Vec<u32>,
    cnt: &mut Vec<u32>,
) -> Option<(u32, u32)> {
    let (width, height) = (core.width as usize, core.height as usize);
    let (w, h) = (w as usize, h as usize);
    if w > width || h > height {
        return None;
    }
    run.clear();
    run.resize(width + 1, 0);
    cnt.clear();
    cnt.resize(width, 0);
    let blocked = core.occupancy.blocked().words();
    for r in 0..height {
        // run[x] = free nodes from x rightwards in this row.
        for x in (0..width).rev() {
            let i = x + r * width;
            run[x] = if word_bit(blocked, i) {
                0
            } else {
                run[x + 1] + 1
            };
        }
        for x in 0..=width - w {
            cnt[x] = if run[x] as usize >= w { cnt[x] + 1 } else { 0 };
        }
        if r + 1 >= h
            && let Some(x) = (0..=width - w).find(|&x| cnt[x] as usize >= h)
        {
            return Some((x as u32, (r + 1 - h) as u32));
        }
    }
    None
}

/// The coverage array of Zhu's technique: `out[x + W·y]` is true iff the
/// w×h frame based at ⟨x,y⟩ lies in the mesh and is entirely free. O(W·H).
pub(crate) fn free_bases(
    core: &MeshCore<'_>,
    w: u32,
    h: u32,
    out: &mut Vec<bool>,
    runs: &mut Vec<u32>,
) {
    let (width, height) = (core.width as usize, core.height as usize);
    let n = width * height;
    out.clear();
    out.resize(n, false);
    runs.clear();
    runs.resize(n, 0);
    let (w, h) = (w as usize, h as usize);
    if w > width || h > height {
        return;
    }
    let blocked = core.occupancy.blocked().words();
    for y in 0..height {
        let mut run = 0u32;
        for x in (0..width).rev() {
            let i = x + width * y;
            run = if word_bit(blocked, i) { 0 } else { run + 1 };
            runs[i] = run;
        }
    }
    // Vertical pass: runs[i] becomes the number of consecutive rows upwards
    // from y whose horizontal run at x is at least w.
    for x in 0..=width - w {
        let mut up = 0usize;
        for y in (0..height).rev() {
            let i = x + width * y;
            up = if runs[i] as usize >= w { up + 1 } else { 0 };
            out[i] = up >= h;
        }
    }
}

/// The orientations of an a×b request the strategy may grant: the
/// [`Orientations`] of (a, b) (a×b, then b×a unless a = b), only the first
/// without `rotate`; as a fixed array and the number of entries used.
pub(crate) fn orientations(a: u32, b: u32, rotate: bool) -> ([(u32, u32); 2], usize) {
    let mut out = [(a, b); 2];
    let mut n = 0;
    if let Ok(sides) = Coords::new(&[a, b]) {
        let all = Orientations::new(sides, OrientationOrder::Lexicographic);
        for (slot, o) in out.iter_mut().zip(all.take(if rotate { 2 } else { 1 })) {
            *slot = (o[0], o[1]);
            n += 1;
        }
    }
    (out, n)
}
