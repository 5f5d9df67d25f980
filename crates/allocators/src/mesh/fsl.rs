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

use super::{MeshCore, MeshHooks, mesh_allocator, orientations, rect};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{BuildError, Partition};

const NAME: &str = "fsl";

/// The Free Submesh List strategy.
#[derive(Debug, Clone)]
pub struct Fsl {
    pub(super) core: MeshCore,
    /// The dominant free submeshes, sorted by [`fsl_key`].
    pub(super) free: Vec<GridBox>,
    dealloc: FslDealloc,
    cands: Vec<GridBox>,
    pieces: Vec<GridBox>,
    near: Vec<GridBox>,
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
fn fsl_key(r: &GridBox) -> (Reverse<u64>, u32, u32, u32, Reverse<u32>) {
    let (w, h) = (r.extent(0), r.extent(1));
    (
        // The list's boxes are 2-D: w·h is their volume, without the
        // general product over the dimensions.
        Reverse(u64::from(w) * u64::from(h)),
        w.abs_diff(h),
        r.lo(1),
        r.lo(0),
        Reverse(w),
    )
}

/// rf(s, against), Definition 2, in any number of dimensions: the size of
/// the largest slab of `against` beside `s` (one per side of `s`) if they
/// overlap, the size of `against` otherwise.
pub(super) fn rf(s: &GridBox, against: &GridBox) -> u64 {
    if !s.overlaps(against) {
        return against.volume();
    }
    if s.dims() == 2 && against.dims() == 2 {
        // FSL's inner loop: the four slabs of Definition 2 directly.
        let (w, h) = (u64::from(against.extent(0)), u64::from(against.extent(1)));
        let slab = |below: u32, above: u32| u64::from(below.max(above));
        return (slab(
            s.lo(0).saturating_sub(against.lo(0)),
            against.hi(0).saturating_sub(s.hi(0)),
        ) * h)
            .max(
                slab(
                    s.lo(1).saturating_sub(against.lo(1)),
                    against.hi(1).saturating_sub(s.hi(1)),
                ) * w,
            );
    }
    let mut best = 0u64;
    for d in 0..against.dims() {
        let cross = against.cross_section(d);
        if s.lo(d) > against.lo(d) {
            best = best.max(u64::from(s.lo(d) - against.lo(d)) * cross);
        }
        if against.hi(d) > s.hi(d) {
            best = best.max(u64::from(against.hi(d) - s.hi(d)) * cross);
        }
    }
    best
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
    (s.dims() == 2 && against.dims() == 2).then(|| rf(s, against))
}

/// How far a free box would fall short of holding an orientation `o`:
/// the type reservation factor of Fig. 6 step 1, the largest slab of `s`
/// beside an `o` box at its corner; `None` if `o` does not fit in `s`.
pub(super) fn type_rf(s: &GridBox, o: &[u32]) -> Option<u64> {
    (o.len() == s.dims() && o.iter().enumerate().all(|(d, &e)| e <= s.extent(d))).then(|| {
        o.iter()
            .enumerate()
            .map(|(d, &e)| u64::from(s.extent(d) - e) * s.cross_section(d))
            .max()
            .unwrap_or(0)
    })
}

/// Replaces every free box overlapping `best` by its dominant parts
/// (Fig. 6 step 3). `free` stays a set of maximal free boxes if it was
/// one and `best` was free or is being blocked now.
pub(super) fn decompose(free: &mut Vec<GridBox>, best: &GridBox, pieces: &mut Vec<GridBox>) {
    pieces.clear();
    let mut i = 0;
    while i < free.len() {
        let s = free[i];
        if !s.overlaps(best) {
            i += 1;
            continue;
        }
        free.swap_remove(i);
        for p in s.parts_outside(best) {
            pieces.push(p);
        }
    }
    let survivors = free.len();
    // A part is kept unless a survivor or another part contains it; of
    // equal parts only the first is kept (no sort and dedup needed: the
    // caller orders the list).
    for (k, p) in pieces.iter().enumerate() {
        let covered = free[..survivors].iter().any(|s| s.contains_box(p))
            || pieces
                .iter()
                .enumerate()
                .any(|(j, q)| j != k && q.contains_box(p) && (j < k || q != p));
        if !covered {
            free.push(*p);
        }
    }
}

/// Fig. 6 step 1: the dominant-type candidates at the four corners of every
/// free submesh that accommodates one of the orientations `or`, without
/// duplicates, in tie-break order (lowest y, then x, then a×b before b×a).
pub(super) fn candidates(
    free: &[GridBox],
    a: u32,
    b: u32,
    or: &[(u32, u32)],
    out: &mut Vec<GridBox>,
) {
    out.clear();
    for s in free {
        let Some(top) = or.iter().filter_map(|&(w, h)| type_rf(s, &[w, h])).max() else {
            continue;
        };
        for &(w, h) in or {
            if type_rf(s, &[w, h]) == Some(top) {
                out.extend(s.corner_placements(&[w, h]));
            }
        }
    }
    out.sort_unstable_by_key(|c| {
        (
            c.lo(1),
            c.lo(0),
            u8::from((c.extent(0), c.extent(1)) != (a, b)),
        )
    });
    out.dedup();
}

impl Fsl {
    /// FSL on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology) -> Result<Self, BuildError> {
        Self::with_dealloc(topology, FslDealloc::Rebuild)
    }

    /// FSL with a choice of deallocation procedure.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn with_dealloc(topology: Topology, dealloc: FslDealloc) -> Result<Self, BuildError> {
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
        self.free.clone()
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
            decompose(&mut self.free, &o, &mut self.pieces);
        }
        self.sort();
    }

    /// [`FslDealloc::Incremental`]: the dominant free submeshes meeting
    /// the released `r` replace the old entries they contain.
    fn release_incremental(&mut self, r: GridBox) {
        self.near.clear();
        self.near.push(self.core.whole());
        for o in self.core.obstacles() {
            decompose(&mut self.near, &o, &mut self.pieces);
            self.near.retain(|n| n.overlaps(&r));
        }
        let near = &self.near;
        self.free
            .retain(|m| !near.iter().any(|n| n.contains_box(m)));
        self.free.extend_from_slice(near);
        self.sort();
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
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
        let dealloc = spec.choice(
            "dealloc",
            &[
                ("rebuild", FslDealloc::Rebuild),
                ("incremental", FslDealloc::Incremental),
            ],
        )?;
        Ok(Box::new(Fsl::with_dealloc(t.clone(), dealloc)?))
    },
};

impl MeshHooks for Fsl {
    fn strategy_name(&self) -> String {
        match self.dealloc {
            FslDealloc::Rebuild => NAME.to_owned(),
            FslDealloc::Incremental => format!("{NAME}[dealloc=incremental]"),
        }
    }

    fn choose(&mut self, a: u32, b: u32, rotate: bool) -> Option<GridBox> {
        let (or, n) = orientations(a, b, rotate);
        let or = &or[..n];
        // Step 1: candidates at the four corners of each accommodating S.
        candidates(&self.free, a, b, or, &mut self.cands);
        if self.cands.is_empty() {
            return None;
        }
        // Step 2: eliminate against each free submesh in list order.
        let keep_best = |cands: &mut Vec<GridBox>, against: &GridBox| {
            let top = cands.iter().map(|c| rf(c, against)).max().unwrap_or(0);
            cands.retain(|c| rf(c, against) == top);
        };
        for s in &self.free {
            if self.cands.len() == 1 {
                break;
            }
            keep_best(&mut self.cands, s);
        }
        if self.cands.len() > 1 {
            keep_best(&mut self.cands, &self.core.whole());
        }
        self.cands.first().copied()
    }

    fn granted(&mut self, r: GridBox) {
        decompose(&mut self.free, &r, &mut self.pieces);
        self.sort();
    }

    fn released(&mut self, r: GridBox) {
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
        if let Some(r) = rect(x, y, 1, 1) {
            decompose(&mut self.free, &r, &mut self.pieces);
        }
        self.sort();
    }

    fn repaired(&mut self, x: u32, y: u32) {
        if let Some(r) = rect(x, y, 1, 1) {
            self.released(r);
        }
    }

    fn recognizable_rects(&self, a: u32, b: u32, rotate: bool) -> Vec<Partition> {
        self.core.placements(a, b, rotate)
    }
}

mesh_allocator!(Fsl, NAME);
