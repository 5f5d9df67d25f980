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

use partalloc_topology::{GridBox, NodeId, Topology};

use super::{MeshCore, MeshGeom, orientations, rect, the_box};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::submesh_list::{Chooser, decompose, list_order, rebuild_into, replace_contained, rf};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "fsl";

/// The Free Submesh List strategy.
#[derive(Debug, Clone)]
pub struct Fsl {
    geom: MeshGeom,
    /// The dominant free submeshes, sorted by
    /// [`list_order`](crate::submesh_list::list_order).
    pub(super) free: Vec<GridBox>,
    dealloc: FslDealloc,
    pub(super) chooser: Chooser<GridBox>,
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
    // A mesh box needs no sides.
    (s.dims() == 2 && against.dims() == 2).then(|| rf(&[], s, against))
}

impl Fsl {
    /// FSL on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_dealloc(topology, FslDealloc::Rebuild)
    }

    /// FSL with a choice of deallocation procedure.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn with_dealloc(
        topology: Topology,
        dealloc: FslDealloc,
    ) -> Result<Managed<Self>, BuildError> {
        let geom = MeshGeom::new(NAME, &topology)?;
        let fsl = Self {
            geom,
            free: vec![geom.whole()],
            dealloc,
            chooser: Chooser::default(),
            pieces: Vec::new(),
            near: Vec::new(),
        };
        Ok(Managed::new(topology, fsl))
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

    /// The mesh's sides, for the list order.
    pub(super) fn sides(&self) -> [u32; 2] {
        [self.geom.width, self.geom.height]
    }

    fn sort(&mut self) {
        let sides = self.sides();
        self.free.sort_unstable_by(|a, b| list_order(&sides, a, b));
    }

    /// Fig. 8 step 2: the list rebuilt from the whole mesh and the
    /// allocation list.
    pub(super) fn rebuild(&mut self, core: &MeshCore<'_>) {
        let obstacles = core.obstacles();
        rebuild_into(
            &[],
            self.geom.whole(),
            obstacles,
            &[],
            &mut self.free,
            &mut self.pieces,
        );
        self.sort();
    }

    /// [`FslDealloc::Incremental`]: the dominant free submeshes meeting
    /// the released `r` replace the old entries they contain.
    fn release_incremental(&mut self, core: &MeshCore<'_>, r: GridBox) {
        let obstacles = core.obstacles();
        rebuild_into(
            &[],
            self.geom.whole(),
            obstacles,
            &[r],
            &mut self.near,
            &mut self.pieces,
        );
        replace_contained(&[], &mut self.free, &self.near);
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

impl Fsl {
    /// Kim & Yoon's Fig. 8 after `r` was freed (released or repaired).
    fn freed(&mut self, core: &MeshCore<'_>, r: GridBox) {
        // Fig. 8 step 1 (the obstacle list already lacks r).
        if self.free.is_empty() {
            self.free.push(r);
        } else if core.no_obstacles() {
            self.free.clear();
            self.free.push(self.geom.whole());
        } else if self.dealloc == FslDealloc::Incremental {
            self.release_incremental(core, r);
        } else {
            self.rebuild(core);
        }
    }
}

impl Strategy for Fsl {
    type Record = Partition;

    fn name(&self) -> String {
        match self.dealloc {
            FslDealloc::Rebuild => NAME.to_owned(),
            FslDealloc::Incremental => format!("{NAME}[dealloc=incremental]"),
        }
    }

    fn choose(&mut self, _: &View<'_>, request: &Request) -> Result<Option<Partition>, AllocError> {
        let (a, b, rotate) = self.geom.parse(NAME, request, true)?;
        // a×b first, then b×a if it may rotate: the final tie-break.
        let (or, n) = orientations(a, b, rotate);
        let or = or.map(|(w, h)| [w, h]);
        let sides = self.sides();
        Ok(self
            .chooser
            .choose(&sides, &self.free, &or[..n], &self.geom.whole())
            .map(|(c, _)| Partition::Box(c)))
    }

    fn committed(&mut self, _: &View<'_>, p: &Partition) {
        if let Some(r) = the_box(p) {
            decompose(&[], &mut self.free, &r, &mut self.pieces);
            self.sort();
        }
    }

    fn released(&mut self, view: &View<'_>, p: &Partition) {
        if let Some(r) = the_box(p) {
            self.freed(&self.geom.core(view), r);
        }
    }

    fn faulted(&mut self, _: &View<'_>, node: NodeId) {
        let (x, y) = self.geom.xy(node);
        if let Some(r) = rect(x, y, 1, 1) {
            decompose(&[], &mut self.free, &r, &mut self.pieces);
        }
        self.sort();
    }

    fn repaired(&mut self, view: &View<'_>, node: NodeId) {
        let (x, y) = self.geom.xy(node);
        if let Some(r) = rect(x, y, 1, 1) {
            self.freed(&self.geom.core(view), r);
        }
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.geom.listing(NAME, request, true)
    }

    fn recognises(
        &self,
        _: &View<'_>,
        request: &Request,
        at: &Partition,
    ) -> Result<Partition, AllocError> {
        self.geom.recognises_placement(NAME, request, true, at)
    }
}
