//! The buddy strategy on an allocation bitmap (Al-Dhelaan & Bose §III.A,
//! Algorithm 1; Mohapatra et al. §2.1 "Buddy").
//!
//! A Q_k request takes the least α, 0 ≤ α ≤ 2^{n−k} − 1, whose aligned
//! block of nodes α·2^k … (α+1)·2^k − 1 is entirely available, i.e. the
//! leftmost free node at level n − k of the buddy tree (Fig. 3). The
//! paper prints the upper limit as 2^{n−k+1} − 1, which would run past the
//! machine; the code uses 2^{n−k} − 1 (see `docs/paper-errata.md` (hypercube part)).
//! It recognises the 2^{n−k} aligned blocks.
//!
//! **Q_0**: blocks of size 1, so the least α is the lowest available node —
//! Algorithm 1 itself, nothing added.
//!
//! Cost: the search scans the bitmap a word at a time (O(2^n / 64));
//! release clears 2^k bits. Faulty nodes are set in the same bitmap, so a
//! block holding one is never chosen.
//!
//! ```
//! use partalloc_allocators::hypercube::Buddy;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::Hypercube;
//!
//! // Example 5 / Fig. 4: Q0, Q3, Q2, Q1, Q0 on Q_4.
//! let mut b = Buddy::new(Hypercube::new(4)?)?;
//! let got: Vec<String> = [0, 3, 2, 1, 0]
//!     .into_iter()
//!     .map(|k| b.allocate(&Request::subcube(k)).map(|g| g.partition().to_string()))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(got, ["0000", "1XXX", "01XX", "001X", "0001"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Hypercube, Subcube, Topology, TopologyKind};

use super::common::{cube_of, low, requested_dim, sub};
use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "buddy";

/// Bitmap buddy allocation (Algorithm 1).
#[derive(Debug, Clone)]
pub struct Buddy {
    cube: Hypercube,
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "buddy system on an allocation bitmap: least aligned free block",
        source: "Al-Dhelaan & Bose 1988, §III.A, Algorithm 1",
        params: &[],
        topologies: &[TopologyKind::Hypercube],
    },
    build: |t, _| Ok(Box::new(Buddy::new(cube_of(NAME, t)?)?)),
};

impl Buddy {
    /// A buddy allocator for `cube`, all nodes free.
    ///
    /// # Errors
    /// None today: it returns a `Result` like every strategy constructor
    /// (see the crate docs).
    pub fn new(cube: Hypercube) -> Result<Managed<Self>, BuildError> {
        Ok(Managed::new(Topology::Hypercube(cube), Self { cube }))
    }

    fn block(&self, k: u32, alpha: usize) -> Subcube {
        sub(&self.cube, low(k), (alpha as u32) << k)
    }
}

impl Strategy for Buddy {
    type Record = Subcube;

    fn name(&self) -> String {
        NAME.to_owned()
    }

    #[inline]
    fn choose(
        &mut self,
        view: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Option<Subcube>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        let alpha = view.occupancy().blocked().first_empty_block(k);
        Ok(alpha.map(|alpha| self.block(k, alpha)))
    }

    fn fits(
        &self,
        view: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Option<bool>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        Ok(Some(
            view.occupancy().blocked().first_empty_block(k).is_some(),
        ))
    }

    /// Recognises `at` if it is an aligned block of 2^k nodes (one of the
    /// blocks [`recognizable`](Strategy::recognizable) lists); the bitmap
    /// is the whole state, so there is nothing to prepare.
    fn recognises(
        &self,
        _: &View<'_, Subcube>,
        request: &Request,
        at: &Partition,
    ) -> Result<Subcube, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        match at {
            Partition::Subcube(s) if s.cube_dim() == self.cube.dim() && s.free_mask() == low(k) => {
                Ok(*s)
            }
            _ => Err(AllocError::Unrecognized {
                strategy: NAME,
                request: *request,
                partition: Box::new(at.clone()),
            }),
        }
    }

    fn recognizable(
        &self,
        _: &View<'_, Subcube>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let k = requested_dim(NAME, request, self.cube.dim())?;
        Ok((0..1usize << (self.cube.dim() - k))
            .map(|a| Partition::Subcube(self.block(k, a)))
            .collect())
    }
}
