//! Best Fit (Zhu 1992, as summarised by Kim & Yoon §II.3).
//!
//! "The BF strategy selects a submesh whose base node, the lower-leftmost
//! node of the submesh, has the largest number of busy (allocated)
//! neighbors (a boundary node of mesh is considered as having a busy
//! neighbor beyond that boundary)" (Kim & Yoon §II.3). Fixed orientation
//! a×b. Among the free bases (Zhu's coverage array, built in O(W·H)) BF
//! maximises the score; ties go to the first base in row-major order
//! (lowest y, then lowest x). `search=fast` (default) finds the bases on
//! row bit-words and scores 64 of them per word operation; `search=literal`
//! scores node by node; both choose the same base.
//!
//! The score is an open choice (docs/baselines.md#best-fit), the `score` parameter:
//! - `neighbours` (default, Kim & Yoon's wording): how many of the base
//!   node's 4 neighbours are busy, faulty or off the mesh;
//! - `coverage`: how many of the base's 4 neighbouring positions in the
//!   coverage array are not free bases (off-grid counts).
//!
//! ```
//! use partalloc_allocators::{mesh::{BestFit, BfScore}, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut bf = BestFit::new("mesh:6x6".parse()?, BfScore::Neighbours)?;
//! let g = bf.allocate(&Request::boxed(&[2, 2])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0], &[2, 2])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{GridBox, Topology};

use super::scan::{SEARCH_PARAM, Search, best_base_fast, search_methods, search_param, spec_name};
use super::{MeshCore, MeshGeom, MeshScratch, SearchMode, free_bases, rect};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "best-fit";

/// How Best Fit scores a free base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum BfScore {
    /// Busy or off-mesh neighbours of the base node (Kim & Yoon §II.3).
    #[default]
    Neighbours,
    /// Neighbouring positions in the coverage array that are not free
    /// bases (off-grid counts).
    Coverage,
}

/// Best Fit: the free a×b base with the highest score, first in row-major
/// order on ties.
#[derive(Debug, Clone)]
pub struct BestFit {
    geom: MeshGeom,
    score: BfScore,
    search: Search,
}

impl BestFit {
    /// Best Fit on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology, score: BfScore) -> Result<Managed<Self>, BuildError> {
        let strategy = Self {
            geom: MeshGeom::new(NAME, &topology)?,
            score,
            search: Search::default(),
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The scoring rule.
    #[must_use]
    pub fn score(&self) -> BfScore {
        self.score
    }
}

impl BestFit {
    fn best(&self, core: &MeshCore<'_>, s: &mut MeshScratch, a: u32, b: u32) -> Option<GridBox> {
        match self.search.mode {
            SearchMode::Literal => self.best_literal(core, s, a, b),
            SearchMode::Fast => {
                if a > core.width || b > core.height {
                    return None;
                }
                s.load(core);
                if s.known_refused(core, a, b) || !s.frame_bases(a, b) {
                    return None;
                }
                let coverage = self.score == BfScore::Coverage;
                best_base_fast(s, coverage, core.height).and_then(|(x, y)| rect(x, y, a, b))
            }
        }
    }

    /// Every free base scored node by node on Zhu's coverage array.
    fn best_literal(
        &self,
        core: &MeshCore<'_>,
        s: &mut MeshScratch,
        a: u32,
        b: u32,
    ) -> Option<GridBox> {
        free_bases(core, a, b, &mut s.cov, &mut s.run);
        let (width, height) = (core.width as i64, core.height as i64);
        let cov = &s.cov;
        let is_base = |x: i64, y: i64| {
            x >= 0 && y >= 0 && x < width && y < height && cov[(x + width * y) as usize]
        };
        let mut best: Option<(u32, u32, u32)> = None;
        for y in 0..=(height - i64::from(b)) {
            for x in 0..=(width - i64::from(a)) {
                if !is_base(x, y) {
                    continue;
                }
                let nb = [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)];
                let s = match self.score {
                    BfScore::Neighbours => {
                        nb.iter().filter(|&&(i, j)| core.blocked_at(i, j)).count()
                    }
                    BfScore::Coverage => nb.iter().filter(|&&(i, j)| !is_base(i, j)).count(),
                } as u32;
                if best.is_none_or(|(bs, _, _)| s > bs) {
                    best = Some((s, x as u32, y as u32));
                }
            }
        }
        best.and_then(|(_, x, y)| rect(x, y, a, b))
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "free a×b base with the most blocked neighbours, fixed orientation",
        source: "Zhu 1992, as described by Kim & Yoon §II.3; docs/baselines.md#best-fit",
        params: &[
            ParamInfo {
                name: "score",
                default: "neighbours",
                doc: "neighbours: busy/off-mesh neighbours of the base node (Kim & Yoon); \
                      coverage: neighbouring positions that are not free bases",
            },
            SEARCH_PARAM,
        ],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        let score = spec.choice(
            "score",
            &[
                ("neighbours", BfScore::Neighbours),
                ("coverage", BfScore::Coverage),
            ],
        )?;
        Ok(Box::new(
            BestFit::new(t.clone(), score)?.with_search(search_param(spec)?),
        ))
    },
};

search_methods!([] BestFit);

impl Strategy for BestFit {
    type Record = Partition;

    fn name(&self) -> String {
        let score: &[&str] = match self.score {
            BfScore::Neighbours => &[],
            BfScore::Coverage => &["score=coverage"],
        };
        spec_name(NAME, score, self.search.mode)
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        let core = self.geom.core(view);
        Ok(self
            .search
            .run(|s| self.best(&core, s, a, b))
            .map(Partition::Box))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        // Best Fit finds a base iff First Fit does.
        let core = self.geom.core(view);
        Ok(Some(self.search.first_fit(&core, a, b, false).is_some()))
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.geom.listing(NAME, request, false)
    }

    fn recognises(
        &self,
        _: &View<'_>,
        request: &Request,
        at: &Partition,
    ) -> Result<Partition, AllocError> {
        self.geom.recognises_placement(NAME, request, false, at)
    }
}
