//! Extended Tree Collapsing (ETC; Chuang & Wu, IEEE TPDS 11(5), 2000), the
//! recognition-complete job-based baseline of Kang et al. (IEEE TC 2003,
//! §2 and Table 1), as defined in `docs/baselines.md#etc`.
//!
//! For a box job the orientations are the distinct assignments of its sides
//! to the dimensions, in lexicographic order of the dimension permutation
//! (identity first); the search is orientation-major (one collapsed tree is
//! examined completely before the next), and inside an orientation the
//! window base takes every position in node-id order. The first window
//! whose nodes are all free is granted: exactly the job's nodes, no
//! internal fragmentation. A request with `rotate = false` is searched in
//! its given orientation only (the [`Request::Box`] contract); Kang's ETC
//! corresponds to requests made with
//! [`any_orientation`](Request::any_orientation). Windows never wrap
//! around a torus.
//!
//! [`SearchMode::Fast`] (the default) keeps the free nodes as bit words,
//! ⌈side 0 / 64⌉ per row along dimension 0, and tests a whole row of bases
//! with a few word operations (runs along dimension 0 by doubling shifts,
//! windows along the other dimensions by AND-ing rows), so no search does
//! per-node work, even on a million-node machine; [`SearchMode::Literal`] checks every node of
//! every window as in Kang's O(C(n,m)·k^n·l^m) analysis. Both pick the same
//! box; the literal search stays as the test oracle and as the
//! `etc[search=literal]` variant for benchmarks.
//!
//! ```
//! use partalloc_allocators::kary::{Etc, SearchMode};
//! use partalloc_allocators::{Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! // docs/baselines.md#k-ary-worked-examples, example 6: 4×4×4 mesh, every node with d1 odd out of
//! // service; a 2×2×1 job only fits turned to (2,1,2).
//! let mut etc = Etc::with_mode("kary:4^3".parse()?, SearchMode::Fast)?;
//! for id in 0..64u32 {
//!     if (id / 4) % 2 == 1 {
//!         etc.mark_faulty(id)?;
//!     }
//! }
//! let job = Request::boxed(&[2, 2, 1])?;
//! assert!(etc.allocate(&job).is_err()); // given orientation only
//! let g = etc.allocate(&job.any_orientation())?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0, 0], &[2, 1, 2])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Topology, TopologyKind};

use super::any_grid;
use super::search::{JobSearch, SEARCH_PARAM, search_param};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
pub use crate::rowgrid::SearchMode;
use crate::{AllocError, Managed, Partition, Request, Strategy, View};

/// The ETC strategy. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Etc {
    core: JobSearch,
}

impl Etc {
    /// ETC with the fast search on any mesh or torus.
    ///
    /// # Errors
    /// [`BuildError`] for a hypercube.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_mode(topology, SearchMode::Fast)
    }

    /// ETC with the given search mode.
    ///
    /// # Errors
    /// As [`Etc::new`].
    pub fn with_mode(topology: Topology, mode: SearchMode) -> Result<Managed<Self>, BuildError> {
        let grid = any_grid("etc", &topology)?;
        let strategy = Self {
            core: JobSearch::new(grid, mode),
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The search mode.
    #[must_use]
    pub fn mode(&self) -> SearchMode {
        self.core.mode
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "etc",
        summary: "extended tree collapsing: first free box of the job in any orientation (orientation-major, node-id order), recognition-complete",
        source: "Chuang & Wu, IEEE TPDS 2000, as described in Kang et al., IEEE TC 2003, §2; docs/baselines.md#etc",
        params: &[SEARCH_PARAM],
        topologies: &[TopologyKind::Mesh, TopologyKind::Torus],
    },
    build: |t, s| Ok(Box::new(Etc::with_mode(t.clone(), search_param(s)?)?)),
};

impl Strategy for Etc {
    type Record = Partition;

    fn name(&self) -> String {
        match self.core.mode {
            SearchMode::Fast => "etc".to_owned(),
            SearchMode::Literal => "etc[search=literal]".to_owned(),
        }
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        self.core.choose("etc", view, request, true)
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.core.recognizable("etc", request, true)
    }
}
