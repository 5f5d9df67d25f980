//! Busy-List (Das Sharma & Pradhan 1993, as summarised by Kim & Yoon §II.5).
//!
//! Candidates are searched "on the corners of allocated (busy) submeshes
//! along with the four corners of the mesh" and the one with the largest
//! *boundary value* is granted (Kim & Yoon §II.5). The boundary value
//! BV(S) is the number of unit edges on the perimeter of S whose outside
//! neighbour is busy or beyond the mesh boundary; a corner node off two
//! mesh sides counts twice (Kim & Yoon's Fig. 1 example gives 9).
//!
//! Candidate generation (docs/baselines.md#busy-list-candidates): for each allowed
//! orientation w×h (a×b first) and each busy submesh B = ⟨x1,y1⟩⟨x2,y2⟩,
//! the 8 placements that share a side with B and align a corner with one
//! of B's corners, plus the 4 corners of the mesh. These alone are not
//! complete (a free placement can touch busy submeshes on the left and
//! below without being aligned with a corner of either; see
//! `docs/paper-errata.md` (mesh part)), so by default ([`BlCandidates::Complete`]) the
//! placements with base x in {0} ∪ {x2 + 1} and base y in {0} ∪ {y2 + 1}
//! over the busy list are added: sliding any free placement left and then
//! down stops at one of them, which restores the complete recognition Kim
//! & Yoon state (Table 1), at their O(n_b³) cost. `candidates=aligned`
//! keeps the corner-aligned set only. Placements leaving the mesh or overlapping a busy
//! submesh are dropped; faulty nodes count as busy 1×1 submeshes. The
//! candidate with the largest BV wins; ties go to the lowest base address
//! (lowest y, then lowest x), then to the requested orientation a×b.
//! Release O(n_b). `search=fast` (default) evaluates the same candidates
//! with the same key but checks each on the free bases of its frame (row
//! bit-words, O(1) per candidate instead of O(n_b)), scores it with word
//! popcounts and reads the lower-left set a row of bases at a time;
//! `search=literal` is the node-by-node form, kept as the oracle.
//!
//! ```
//! use partalloc_allocators::{mesh::BusyList, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! // Kim & Yoon Fig. 1: 7×5 mesh with ⟨4,0⟩⟨6,3⟩ allocated.
//! let mut bl = BusyList::new("mesh:7x5".parse()?)?;
//! let a = bl.allocate(&Request::boxed(&[3, 4])?)?;
//! assert_eq!(a.partition(), &Partition::Box(GridBox::new(&[0, 0], &[3, 4])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::nodeset::set_word_bit;
use partalloc_topology::{GridBox, Topology};

use super::scan::{SEARCH_PARAM, Search, search_methods, search_param, spec_name};
use super::{MeshCore, MeshGeom, MeshScratch, SearchMode, orientations, rect};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "busy-list";

/// Busy-List: the candidate next to a busy submesh or a mesh corner with
/// the largest boundary value.
#[derive(Debug, Clone)]
pub struct BusyList {
    geom: MeshGeom,
    candidates: BlCandidates,
    /// The search and its scratch: the busy list read once per request (no
    /// copy between requests; the ledger and the occupancy are the state)
    /// and the fast search's row words.
    search: Search,
}

/// The best candidate so far: (BV, base y, base x, orientation, box).
type Best = Option<(u32, u32, u32, usize, GridBox)>;

/// Whether a candidate beats `best`: larger BV, then lower (y, x), then
/// the requested orientation.
fn better(bv: u32, r: &GridBox, o: usize, best: &Best) -> bool {
    best.is_none_or(|(bbv, by, bx, bo, _)| {
        (bv, core::cmp::Reverse((r.lo(1), r.lo(0), o))) > (bbv, core::cmp::Reverse((by, bx, bo)))
    })
}

/// Which placements Busy-List evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum BlCandidates {
    /// The corner-aligned placements next to every busy submesh and the
    /// mesh corners, plus every placement whose left side touches a busy
    /// submesh or the mesh edge and whose bottom does too (base x in
    /// {0} ∪ {x2 + 1}, base y in {0} ∪ {y2 + 1} over the busy list).
    /// Complete recognition, as Kim & Yoon state; O(n_b³) per request.
    #[default]
    Complete,
    /// Only the corner-aligned placements and the mesh corners (the rule as
    /// first written; `docs/baselines.md#busy-list-candidates`). Not
    /// complete: see `docs/paper-errata.md#errata-mesh`.
    Aligned,
}

impl BusyList {
    /// Busy-List on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_candidates(topology, BlCandidates::Complete)
    }

    /// Busy-List with a choice of candidate set.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn with_candidates(
        topology: Topology,
        candidates: BlCandidates,
    ) -> Result<Managed<Self>, BuildError> {
        let strategy = Self {
            geom: MeshGeom::new(NAME, &topology)?,
            candidates,
            search: Search::default(),
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The candidate set.
    #[must_use]
    pub fn candidates(&self) -> BlCandidates {
        self.candidates
    }

    fn bv(&self, core: &MeshCore<'_>, r: &GridBox) -> u32 {
        let c = core;
        let (x, y, x2, y2) = (
            i64::from(r.lo(0)),
            i64::from(r.lo(1)),
            i64::from(r.hi(0)),
            i64::from(r.hi(1)),
        );
        let mut v = 0;
        for i in x..=x2 {
            v += u32::from(c.blocked_at(i, y - 1)) + u32::from(c.blocked_at(i, y2 + 1));
        }
        for j in y..=y2 {
            v += u32::from(c.blocked_at(x - 1, j)) + u32::from(c.blocked_at(x2 + 1, j));
        }
        v
    }

    /// Whether the placement lies in the mesh and meets no busy submesh.
    fn placeable(
        &self,
        core: &MeshCore<'_>,
        busy: &[GridBox],
        x: i64,
        y: i64,
        w: u32,
        h: u32,
    ) -> Option<GridBox> {
        let c = core;
        if x < 0
            || y < 0
            || x + i64::from(w) > i64::from(c.width)
            || y + i64::from(h) > i64::from(c.height)
        {
            return None;
        }
        let r = rect(x as u32, y as u32, w, h)?;
        (!busy.iter().any(|o| o.overlaps(&r))).then_some(r)
    }
}

impl BusyList {
    fn select(
        &self,
        core: &MeshCore<'_>,
        s: &mut MeshScratch,
        a: u32,
        b: u32,
        rotate: bool,
    ) -> Option<GridBox> {
        match self.search.mode {
            SearchMode::Literal => self.select_literal(core, s, a, b, rotate),
            SearchMode::Fast => {
                // The candidate checks cost O(n_b) each against the busy
                // list, O(1) on the row words after an O(H·W/64) read: the
                // words pay off once n_b³ outgrows the mesh's word count.
                let n_b = (core.live_grants() + core.occupancy.faulty_count()) as u64;
                let words = u64::from(core.height) * u64::from(core.width.div_ceil(64));
                if n_b.pow(3) > 4 * words || super::scan::WORDS_ALWAYS {
                    self.select_fast(core, s, a, b, rotate)
                } else {
                    self.select_literal(core, s, a, b, rotate)
                }
            }
        }
    }

    /// The literal candidates, each checked on the free bases of its frame
    /// (row bit-words) and scored with word popcounts; same key, same
    /// choice.
    fn select_fast(
        &self,
        core: &MeshCore<'_>,
        s: &mut MeshScratch,
        a: u32,
        b: u32,
        rotate: bool,
    ) -> Option<GridBox> {
        let (or, n) = orientations(a, b, rotate);
        let (width, height) = (core.width, core.height);
        let (wi64, hi64) = (i64::from(width), i64::from(height));
        s.busy.clear();
        s.busy.extend(core.obstacles());
        s.load(core);
        let mut best: Best = None;
        for (o, &(w, h)) in or[..n].iter().enumerate() {
            if w > width || h > height || s.known_refused(core, w, h) {
                continue;
            }
            if !s.frame_bases(w, h) {
                s.note_refused(w, h);
                continue;
            }
            let (wi, hi) = (i64::from(w), i64::from(h));
            let s = &mut *s;
            let consider = |s: &MeshScratch, x: i64, y: i64, best: &mut Best| {
                if s.is_base(x, y, width, height)
                    && let Some(r) = rect(x as u32, y as u32, w, h)
                {
                    let bv = Self::bv_fast(s, &r, width, height);
                    if better(bv, &r, o, best) {
                        *best = Some((bv, r.lo(1), r.lo(0), o, r));
                    }
                }
            };
            for &(x, y) in &[
                (0, 0),
                (wi64 - wi, 0),
                (0, hi64 - hi),
                (wi64 - wi, hi64 - hi),
            ] {
                consider(s, x, y, &mut best);
            }
            for bi in 0..s.busy.len() {
                for (x, y) in bases_around(&s.busy[bi], wi, hi) {
                    consider(s, x, y, &mut best);
                }
            }
            if self.candidates == BlCandidates::Complete {
                // Bases with x in {0} ∪ {x2 + 1} and y in {0} ∪ {y2 + 1}:
                // a column mask ANDed with the free bases of each such row.
                let nw = s.nw;
                let mut cols = core::mem::take(&mut s.row);
                let mut ys = core::mem::take(&mut s.ys);
                cols.clear();
                cols.resize(nw, 0);
                cols[0] |= 1;
                ys.clear();
                ys.push(0);
                for r in &s.busy {
                    let (x, y) = (r.hi(0) as usize + 1, r.hi(1) + 1);
                    if x < width as usize {
                        set_word_bit(&mut cols, x);
                    }
                    if y < height {
                        ys.push(y);
                    }
                }
                ys.sort_unstable();
                ys.dedup();
                for &y in &ys {
                    for (k, &c) in cols.iter().enumerate() {
                        let mut m = s.bases[y as usize * nw + k] & c;
                        while m != 0 {
                            let x = 64 * k as i64 + i64::from(m.trailing_zeros());
                            consider(s, x, i64::from(y), &mut best);
                            m &= m - 1;
                        }
                    }
                }
                s.row = cols;
                s.ys = ys;
            }
        }
        best.map(|t| t.4)
    }

    /// [`Self::bv`] on the loaded free rows: the horizontal sides by word
    /// popcounts, the vertical ones bit by bit.
    fn bv_fast(s: &MeshScratch, r: &GridBox, width: u32, height: u32) -> u32 {
        let (x, y, x2, y2) = (r.lo(0), r.lo(1), r.hi(0), r.hi(1));
        let (w, h) = (x2 - x + 1, y2 - y + 1);
        let row_blocked = |row: Option<u32>| match row {
            Some(j) if j < height => w - s.free_in_row(j, x, w),
            _ => w,
        };
        let col_blocked = |col: Option<u32>| match col {
            Some(i) if i < width => (y..=y2).filter(|&j| !s.is_free(i, j)).count() as u32,
            _ => h,
        };
        row_blocked(y.checked_sub(1))
            + row_blocked(Some(y2 + 1))
            + col_blocked(x.checked_sub(1))
            + col_blocked(Some(x2 + 1))
    }

    /// Every candidate checked against the busy list and scored node by node.
    fn select_literal(
        &self,
        core: &MeshCore<'_>,
        s: &mut MeshScratch,
        a: u32,
        b: u32,
        rotate: bool,
    ) -> Option<GridBox> {
        let (or, n) = orientations(a, b, rotate);
        let (width, height) = (i64::from(core.width), i64::from(core.height));
        let busy = &mut s.busy;
        busy.clear();
        busy.extend(core.obstacles());
        // Key: larger BV, then lower (y, x), then the requested orientation.
        let busy = &*busy;
        let mut best: Best = None;
        for (o, &(w, h)) in or[..n].iter().enumerate() {
            let (wi, hi) = (i64::from(w), i64::from(h));
            let corners = [
                (0, 0),
                (width - wi, 0),
                (0, height - hi),
                (width - wi, height - hi),
            ];
            let per_busy = busy.iter().flat_map(|b| bases_around(b, wi, hi));
            let obstacles = busy;
            let lower_left = (self.candidates == BlCandidates::Complete)
                .then(|| {
                    let xs =
                        core::iter::once(0).chain(obstacles.iter().map(|b| i64::from(b.hi(0)) + 1));
                    xs.flat_map(move |x| {
                        core::iter::once(0)
                            .chain(obstacles.iter().map(|b| i64::from(b.hi(1)) + 1))
                            .map(move |y| (x, y))
                    })
                })
                .into_iter()
                .flatten();
            for (x, y) in per_busy.chain(corners).chain(lower_left) {
                if let Some(r) = self.placeable(core, busy, x, y, w, h) {
                    let bv = self.bv(core, &r);
                    if better(bv, &r, o, &best) {
                        best = Some((bv, r.lo(1), r.lo(0), o, r));
                    }
                }
            }
        }
        best.map(|t| t.4)
    }
}

/// The eight bases of a wi×hi frame that touch busy submesh `b` along one
/// side and are aligned with one of its corners (Das Sharma & Pradhan's
/// corner-aligned candidates; docs/baselines.md#busy-list-candidates), in
/// selection order; some may lie off the mesh.
pub(super) fn bases_around(b: &GridBox, wi: i64, hi: i64) -> [(i64, i64); 8] {
    let (x1, y1, x2, y2) = (
        i64::from(b.lo(0)),
        i64::from(b.lo(1)),
        i64::from(b.hi(0)),
        i64::from(b.hi(1)),
    );
    [
        (x2 + 1, y1),
        (x2 + 1, y2 - hi + 1),
        (x1 - wi, y1),
        (x1 - wi, y2 - hi + 1),
        (x1, y2 + 1),
        (x2 - wi + 1, y2 + 1),
        (x1, y1 - hi),
        (x2 - wi + 1, y1 - hi),
    ]
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "candidate at a busy submesh or mesh corner with the largest boundary value (complete)",
        source: "Das Sharma & Pradhan 1993, as described by Kim & Yoon §II.5; docs/baselines.md#busy-list",
        params: &[
            ParamInfo {
                name: "candidates",
                default: "complete",
                doc: "complete: corner-aligned placements plus every placement blocked on the \
                      left and below (complete recognition); aligned: corner-aligned placements \
                      and mesh corners only (incomplete: docs/baselines.md#busy-list-candidates)",
            },
            SEARCH_PARAM,
        ],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        let c = spec.choice(
            "candidates",
            &[
                ("complete", BlCandidates::Complete),
                ("aligned", BlCandidates::Aligned),
            ],
        )?;
        Ok(Box::new(
            BusyList::with_candidates(t.clone(), c)?.with_search(search_param(spec)?),
        ))
    },
};

search_methods!([] BusyList);

impl Managed<BusyList> {
    /// The boundary value of a 2-D box lying in the mesh in the current
    /// state (None for other boxes).
    #[must_use]
    pub fn boundary_value(&self, submesh: &GridBox) -> Option<u32> {
        let core = self.geom.core(&self.view());
        (core.whole().contains_box(submesh)).then(|| self.bv(&core, submesh))
    }
}

impl Strategy for BusyList {
    type Record = Partition;

    fn name(&self) -> String {
        let candidates: &[&str] = match self.candidates {
            BlCandidates::Complete => &[],
            BlCandidates::Aligned => &["candidates=aligned"],
        };
        spec_name(NAME, candidates, self.search.mode)
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let (a, b, rotate) = self.geom.parse(NAME, request, true)?;
        let core = self.geom.core(view);
        let found = self.search.run(|s| self.select(&core, s, a, b, rotate));
        Ok(found.map(Partition::Box))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        let (a, b, rotate) = self.geom.parse(NAME, request, true)?;
        let core = self.geom.core(view);
        Ok(Some(
            self.search
                .run(|s| self.select(&core, s, a, b, rotate).is_some()),
        ))
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
