//! Sniffing (Gautam & Chaudhary, PDCS 1993), the first job-based baseline
//! of Kang et al. (IEEE TC 2003, §2), as defined in
//! `docs/baselines.md#sniffing`.
//!
//! The job is placed in its given orientation only: its sides lie on the
//! dimensions in the order given. Window bases are scanned in node-id order
//! (the k-ary m-planes in address order, and inside a plane every position
//! with 0 ≤ base_i ≤ k − l_i); the first all-free window is granted. A
//! plane therefore holds (k − l + 1)^m positions, not Kang's (k − l)^m (see
//! `docs/paper-errata.md` (k-ary part)). The search is the exact fast search of
//! [`Etc`](super::Etc) restricted to the identity orientation.
//!
//! ```
//! use partalloc_allocators::kary::Sniffing;
//! use partalloc_allocators::{Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! // docs/baselines.md#k-ary-worked-examples, example 6: node 0 busy, a 2×2×1 job → base (1,0,0).
//! let mut s = Sniffing::new("kary:4^3".parse()?)?;
//! s.mark_faulty(0)?;
//! let g = s.allocate(&Request::boxed(&[2, 2, 1])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[1, 0, 0], &[2, 2, 1])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Topology, TopologyKind};

use super::any_grid;
use super::search::{JobSearch, SEARCH_PARAM, search_param};
use crate::BuildError;
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::rowgrid::SearchMode;
use crate::{AllocError, Managed, Partition, Request, Strategy, View};

/// The Sniffing strategy. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Sniffing {
    core: JobSearch,
}

impl Sniffing {
    /// Sniffing with the fast search on any mesh or torus.
    ///
    /// # Errors
    /// [`BuildError`] for a hypercube.
    pub fn new(topology: Topology) -> Result<Managed<Self>, BuildError> {
        Self::with_mode(topology, SearchMode::Fast)
    }

    /// Sniffing with the given search mode.
    ///
    /// # Errors
    /// As [`Sniffing::new`].
    pub fn with_mode(topology: Topology, mode: SearchMode) -> Result<Managed<Self>, BuildError> {
        let grid = any_grid("sniffing", &topology)?;
        let strategy = Self {
            core: JobSearch::new(grid, mode),
        };
        Ok(Managed::new(topology, strategy))
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "sniffing",
        summary: "first free window of the job in its given orientation, planes and bases in node-id order",
        source: "Gautam & Chaudhary, PDCS 1993, as described in Kang et al., IEEE TC 2003, §2; docs/baselines.md#sniffing",
        params: &[SEARCH_PARAM],
        topologies: &[TopologyKind::Mesh, TopologyKind::Torus],
    },
    build: |t, s| Ok(Box::new(Sniffing::with_mode(t.clone(), search_param(s)?)?)),
};

impl Strategy for Sniffing {
    type Record = Partition;

    fn name(&self) -> String {
        match self.core.mode {
            SearchMode::Fast => "sniffing".to_owned(),
            SearchMode::Literal => "sniffing[search=literal]".to_owned(),
        }
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        self.core.choose("sniffing", view, request, false)
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.core.recognizable("sniffing", request, false)
    }
}
