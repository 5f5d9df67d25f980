//! The Free Submesh List strategy (Kim & Yoon §III).
//!
//! The free submesh list (FSL) holds the *dominant* free submeshes — free
//! submeshes not contained in another free submesh, i.e. the maximal free
//! rectangles — sorted by Definition 1: non-increasing size, and among
//! equal sizes the one closer to a square first. For a request (a, b):
//!
//! 1. **Candidates** (Fig. 6 step 1, Fig. 4): every free submesh S of the
//!    list that accommodates a×b or b×a yields candidates at its four
//!    corners ⟨x1,y1⟩, ⟨x1,y2⟩, ⟨x2,y1⟩, ⟨x2,y2⟩. When both orientations
//!    fit in S only the *dominant* one is used: the one whose candidates
//!    have the larger reservation factor against S (both are kept when the
//!    two factors are equal). With `rotate == false` only a×b is used.
//! 2. **Elimination** (Fig. 6 step 2): against each free submesh of the
//!    list in order, keep only the candidates with the largest reservation
//!    factor (Definition 2); stop as soon as one candidate is left. If
//!    several survive the whole list, keep those with the largest factor
//!    against the entire mesh; if several still tie, take the lowest base
//!    address (lowest y, then lowest x), then the requested orientation
//!    a×b (this final tie-break is ours: the paper leaves it open).
//! 3. **Update** (Fig. 6 step 3): every free submesh overlapping the
//!    granted one is replaced by its (up to four) maximal parts left,
//!    right, below and above the granted submesh, and a part is kept only
//!    if it is dominant — not contained in a surviving free submesh nor in
//!    another new part.
//!
//! Release follows Fig. 8: an empty list becomes {R}; an empty allocation
//! list gives the whole mesh; otherwise the list is rebuilt from the whole
//! mesh by applying the step-3 decomposition for every allocated submesh.
//! The `dealloc=incremental` option ([`FslDealloc::Incremental`], beyond
//! the paper) gives the same list by recomputing only the free submeshes
//! that meet the released one.
//!
//! The reservation factor rf(S, S′) is the size of the largest submesh of
//! S′ left of, right of, below or above S when they overlap, and the size
//! of S′ otherwise (Definition 2, with the signs of the second and fourth
//! terms as the paper's own worked values require; see
//! `docs/paper-errata.md` (mesh part)). Faulty nodes are kept in the allocation list as
//! 1×1 submeshes. The list always equals the set of maximal free
//! rectangles (checked by brute force in the tests). Complete recognition:
//! any free a×b or b×a placement lies in a maximal free rectangle, whose
//! corner then yields a candidate.
//!
//! Complexity: O(N_f²) per allocation and O(N_a·N_f²) per release for N_f
//! free and N_a allocated submeshes (Kim & Yoon §III.4). Kim & Yoon's
//! Theorem 1 (N_f ≤ 4·N_a) does not hold in general: three allocated 1×1
//! submeshes of a 7×7 mesh already leave 13 dominant free submeshes
//! (`docs/paper-errata.md` (mesh part)); the number of maximal free rectangles can grow
//! quadratically in N_a.
//!
//! The design does not depend on the dimension: the decomposition and the
//! reservation factor generalise to boxes of any dimension (2·d parts per
//! decomposed box, one rf term per side). [`Fsl3d`](super::Fsl3d) is that
//! generalisation for 3-D meshes.
//!
//! ```
//! use partalloc_allocators::{mesh::Fsl, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut fsl = Fsl::new("mesh:10x10".parse()?)?;
//! let a = fsl.allocate(&Request::boxed(&[4, 5])?.any_orientation())?;
//! assert_eq!(a.partition(), &Partition::Box(GridBox::from_corners(&[0, 0], &[3, 4])?));
//! let fl: Vec<String> = fsl.free_submeshes().iter().map(|b| b.to_string()).collect();
//! assert_eq!(fl, ["⟨4,0⟩⟨9,9⟩", "⟨0,5⟩⟨9,9⟩"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::cmp::Reverse;

use partalloc_topology::{GridBox, Topology};

use super::{MeshCore, MeshHooks, Rect, mesh_allocator, orientations};
use crate::registry::{Entry, ParamInfo, StrategyInfo};
use crate::{Partition, RegistryError};

const NAME: &str = "fsl";

/// The Free Submesh List strategy.
#[derive(Debug, Clone)]
pub struct Fsl {
    pub(super) core: MeshCore,
    /// The dominant free submeshes, sorted by [`fsl_key`].
    pub(super) free: Vec<Rect>,
    dealloc: FslDealloc,
    cands: Vec<Rect>,
    pieces: Vec<Rect>,
    near: Vec<Rect>,
}

/// How [`Fsl`] rebuilds its list after a release. Both give the same list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum FslDealloc {
    /// Kim & Yoon's Fig. 8: rebuild from the whole mesh by decomposing it
    /// for every allocated submesh.
    #[default]
    Rebuild,
    /// Beyond the paper: recompute only the dominant free submeshes that
    /// meet the released submesh R (the same decomposition, discarding at
    /// every stage the parts that miss R), then drop the old entries they
    /// contain. Old entries that miss R stay dominant unless a new one
    /// contains them, so the result equals the rebuilt list.
    Incremental,
}

/// Definition 1 order: larger first, then closer to square, then (our
/// tie-break) lowest base address and the wider one first.
fn fsl_key(r: &Rect) -> (Reverse<u64>, u32, u32, u32, Reverse<u32>) {
    (Reverse(r.area()), r.w.abs_diff(r.h), r.y, r.x, Reverse(r.w))
}

/// rf(s, against), Definition 2.
pub(super) fn rf(s: Rect, against: Rect) -> u64 {
    if !s.overlaps(against) {
        return against.area();
    }
    let (lx, ly) = (i64::from(against.w), i64::from(against.h));
    let terms = [
        (i64::from(s.x) - i64::from(against.x)) * ly,
        (i64::from(against.x2()) - i64::from(s.x2())) * ly,
        lx * (i64::from(s.y) - i64::from(against.y)),
        lx * (i64::from(against.y2()) - i64::from(s.y2())),
    ];
    terms.into_iter().max().unwrap_or(0).max(0) as u64
}

/// The reservation factor rf(S, S′) of Kim & Yoon's Definition 2: the size
/// of the largest submesh of `against` (S′) left of, right of, below or
/// above `s` (S) if they overlap, the size of S′ otherwise. `None` unless
/// both boxes are 2-D.
///
/// ```
/// use partalloc_allocators::mesh::reservation_factor;
/// use partalloc_topology::GridBox;
/// let s1 = GridBox::from_corners(&[0, 0], &[6, 4])?;
/// let s2 = GridBox::from_corners(&[4, 0], &[6, 9])?;
/// let s3 = GridBox::from_corners(&[4, 5], &[9, 7])?;
/// assert_eq!(reservation_factor(&s2, &s1), Some(20));
/// assert_eq!(reservation_factor(&s3, &s2), Some(15));
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[must_use]
pub fn reservation_factor(s: &GridBox, against: &GridBox) -> Option<u64> {
    Some(rf(Rect::of_box(s)?, Rect::of_box(against)?))
}

/// A free region of a free submesh list: a [`Rect`] here, a cuboid in
/// [`Fsl3d`](super::Fsl3d).
pub(super) trait Region: Copy + Ord {
    fn overlaps(self, o: Self) -> bool;
    fn contains(self, o: Self) -> bool;
    /// Pushes the dominant parts of `self` that lie outside `best` (one
    /// per side of `best` inside `self`).
    fn parts_outside(self, best: Self, out: &mut Vec<Self>);
}

impl Region for Rect {
    fn overlaps(self, o: Self) -> bool {
        Self::overlaps(self, o)
    }

    fn contains(self, o: Self) -> bool {
        Self::contains(self, o)
    }

    fn parts_outside(self, best: Self, out: &mut Vec<Self>) {
        let s = self;
        if best.x > s.x {
            out.push(Rect::new(s.x, s.y, best.x - s.x, s.h));
        }
        if best.x2() < s.x2() {
            out.push(Rect::new(best.x2() + 1, s.y, s.x2() - best.x2(), s.h));
        }
        if best.y > s.y {
            out.push(Rect::new(s.x, s.y, s.w, best.y - s.y));
        }
        if best.y2() < s.y2() {
            out.push(Rect::new(s.x, best.y2() + 1, s.w, s.y2() - best.y2()));
        }
    }
}

/// Replaces every free region overlapping `best` by its dominant parts
/// (Fig. 6 step 3). `free` stays a set of maximal free regions if it was
/// one and `best` was free or is being blocked now.
pub(super) fn decompose<R: Region>(free: &mut Vec<R>, best: R, pieces: &mut Vec<R>) {
    pieces.clear();
    let mut i = 0;
    while i < free.len() {
        let s = free[i];
        if !s.overlaps(best) {
            i += 1;
            continue;
        }
        free.swap_remove(i);
        s.parts_outside(best, pieces);
    }
    pieces.sort_unstable();
    pieces.dedup();
    let survivors = free.len();
    for (k, &p) in pieces.iter().enumerate() {
        let covered = free[..survivors].iter().any(|s| s.contains(p))
            || pieces
                .iter()
                .enumerate()
                .any(|(j, &q)| j != k && q.contains(p));
        if !covered {
            free.push(p);
        }
    }
}

/// Fig. 6 step 1: the dominant-type candidates at the four corners of every
/// free submesh that accommodates one of the orientations `or`, without
/// duplicates, in tie-break order (lowest y, then x, then a×b before b×a).
pub(super) fn candidates(free: &[Rect], a: u32, b: u32, or: &[(u32, u32)], out: &mut Vec<Rect>) {
    out.clear();
    for &s in free {
        let type_rf = |(w, h): (u32, u32)| {
            (w <= s.w && h <= s.h).then(|| {
                let (sw, sh) = (u64::from(s.w), u64::from(s.h));
                ((sw - u64::from(w)) * sh).max(sw * (sh - u64::from(h)))
            })
        };
        let Some(top) = or.iter().filter_map(|&t| type_rf(t)).max() else {
            continue;
        };
        for &(w, h) in or {
            if type_rf((w, h)) != Some(top) {
                continue;
            }
            let (xr, yt) = (s.x2() + 1 - w, s.y2() + 1 - h);
            for (x, y) in [(s.x, s.y), (s.x, yt), (xr, s.y), (xr, yt)] {
                out.push(Rect::new(x, y, w, h));
            }
        }
    }
    out.sort_unstable_by_key(|c| (c.y, c.x, u8::from((c.w, c.h) != (a, b))));
    out.dedup();
}

impl Fsl {
    /// FSL on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`RegistryError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology) -> Result<Self, RegistryError> {
        Self::with_dealloc(topology, FslDealloc::Rebuild)
    }

    /// FSL with a choice of deallocation procedure.
    ///
    /// # Errors
    /// [`RegistryError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn with_dealloc(topology: Topology, dealloc: FslDealloc) -> Result<Self, RegistryError> {
        let core = MeshCore::new(NAME, topology)?;
        let whole = core.whole();
        Ok(Self {
            core,
            free: vec![whole],
            dealloc,
            cands: Vec::new(),
            pieces: Vec::new(),
            near: Vec::new(),
        })
    }

    /// The deallocation procedure.
    #[must_use]
    pub fn dealloc(&self) -> FslDealloc {
        self.dealloc
    }

    /// The free submesh list, in list order (Definition 1).
    #[must_use]
    pub fn free_submeshes(&self) -> Vec<GridBox> {
        self.free.iter().filter_map(|r| r.to_box().ok()).collect()
    }

    fn sort(&mut self) {
        self.free.sort_unstable_by_key(fsl_key);
    }

    /// Fig. 8 step 2: the list rebuilt from the whole mesh and the
    /// allocation list.
    pub(super) fn rebuild(&mut self) {
        self.free.clear();
        self.free.push(self.core.whole());
        for o in self.core.obstacles() {
            decompose(&mut self.free, o, &mut self.pieces);
        }
        self.sort();
    }

    /// [`FslDealloc::Incremental`]: the dominant free submeshes meeting
    /// the released `r` replace the old entries they contain.
    fn release_incremental(&mut self, r: Rect) {
        self.near.clear();
        self.near.push(self.core.whole());
        for o in self.core.obstacles() {
            decompose(&mut self.near, o, &mut self.pieces);
            self.near.retain(|n| n.overlaps(r));
        }
        let near = &self.near;
        self.free.retain(|m| !near.iter().any(|n| n.contains(*m)));
        self.free.extend_from_slice(near);
        self.sort();
    }
}

pub(crate) const ENTRY: Entry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "free submesh list best fit by reservation factor (complete recognition)",
        source: "Kim & Yoon, A Dynamic Processor Allocation Strategy for Mesh-Connected \
                 Multicomputers, §III (Figs. 6 and 8)",
        params: &[ParamInfo {
            name: "dealloc",
            default: "rebuild",
            doc: "rebuild: Fig. 8, rebuild the list from the allocation list; \
                  incremental: recompute only the free submeshes meeting the released one \
                  (same list, faster with many jobs)",
        }],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        let dealloc = match spec.get("dealloc").map(str::trim) {
            None | Some("rebuild") => FslDealloc::Rebuild,
            Some("incremental") => FslDealloc::Incremental,
            Some(_) => {
                return Err(spec
                    .invalid("dealloc", "expected rebuild or incremental")
                    .into());
            }
        };
        Ok(Box::new(Fsl::with_dealloc(*t, dealloc)?))
    },
};

impl MeshHooks for Fsl {
    fn strategy_name(&self) -> String {
        match self.dealloc {
            FslDealloc::Rebuild => NAME.to_owned(),
            FslDealloc::Incremental => format!("{NAME}[dealloc=incremental]"),
        }
    }

    fn choose(&mut self, a: u32, b: u32, rotate: bool) -> Option<Rect> {
        let (or, n) = orientations(a, b, rotate);
        let or = &or[..n];
        // Step 1: candidates at the four corners of each accommodating S.
        candidates(&self.free, a, b, or, &mut self.cands);
        if self.cands.is_empty() {
            return None;
        }
        // Step 2: eliminate against each free submesh in list order.
        let keep_best = |cands: &mut Vec<Rect>, against: Rect| {
            let top = cands.iter().map(|&c| rf(c, against)).max().unwrap_or(0);
            cands.retain(|&c| rf(c, against) == top);
        };
        for &s in &self.free {
            if self.cands.len() == 1 {
                break;
            }
            keep_best(&mut self.cands, s);
        }
        if self.cands.len() > 1 {
            keep_best(&mut self.cands, self.core.whole());
        }
        self.cands.first().copied()
    }

    fn granted(&mut self, r: Rect) {
        decompose(&mut self.free, r, &mut self.pieces);
        self.sort();
    }

    fn released(&mut self, r: Rect) {
        // Fig. 8 step 1 (the obstacle list already lacks r).
        if self.free.is_empty() {
            self.free.push(r);
        } else if self.core.no_obstacles() {
            self.free.clear();
            self.free.push(self.core.whole());
        } else if self.dealloc == FslDealloc::Incremental {
            self.release_incremental(r);
        } else {
            self.rebuild();
        }
    }

    fn faulted(&mut self, x: u32, y: u32) {
        decompose(&mut self.free, Rect::new(x, y, 1, 1), &mut self.pieces);
        self.sort();
    }

    fn repaired(&mut self, x: u32, y: u32) {
        let r = Rect::new(x, y, 1, 1);
        self.released(r);
    }

    fn recognizable_rects(&self, a: u32, b: u32, rotate: bool) -> Vec<Partition> {
        self.core.placements(a, b, rotate)
    }
}

mesh_allocator!(Fsl, NAME);
