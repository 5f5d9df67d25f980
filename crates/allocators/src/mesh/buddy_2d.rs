//! 2-D Buddy (Li & Cheng 1990/1991, as summarised by Kim & Yoon §II.1).
//!
//! "The Buddy strategy was proposed for a square mesh with side lengths
//! being exactly powers of 2 … For a request of arbitrary side lengths, it
//! allocates the smallest square submesh accommodating the request" (Kim
//! & Yoon §II.1). A request (a, b) gets a block of side
//! s = 2^⌈log2 max(a, b)⌉ (internal fragmentation s² − ab). Blocks of side t
//! are aligned at multiples of t and kept in one free list per side.
//! Allocation takes the first block of the smallest side t ≥ s with a
//! non-empty list and, while t > s, splits it into its four quadrants,
//! keeping the lower-left one and listing the other three. Release merges
//! a block with its three buddies while they are all free (docs/baselines.md#buddy-2d).
//!
//! "First block" is an open choice, the `order` parameter: `row-major`
//! (default: lowest node id of the block base, the project-wide lowest
//! address rule) or `z-order` (quadtree path, lower-left, lower-right,
//! upper-left, upper-right). Only square meshes with a power-of-two side
//! are accepted; faulty nodes are not supported. O(log N) per operation.
//!
//! ```
//! use partalloc_allocators::{mesh::{Buddy2d, BuddyOrder}, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut b = Buddy2d::new("mesh:8x8".parse()?, BuddyOrder::RowMajor)?;
//! let g = b.allocate(&Request::boxed(&[3, 3])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[0, 0], &[4, 4])?));
//! assert_eq!(g.internal_fragmentation(), 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;

use partalloc_topology::{GridBox, Topology};

use super::{MeshGeom, rect, the_box};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{AllocError, BuildError, FaultError, Managed, Partition, Request, Strategy, View};

const NAME: &str = "buddy-2d";

/// Which free block of a side is taken first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum BuddyOrder {
    /// Lowest node id of the block's base (lowest y, then lowest x).
    #[default]
    RowMajor,
    /// Lowest Morton (Z-order, quadtree) index of the block's base.
    ZOrder,
}

/// The 2-D Buddy strategy on a 2^n × 2^n mesh.
#[derive(Debug, Clone)]
pub struct Buddy2d {
    geom: MeshGeom,
    order: BuddyOrder,
    /// `free[k]`: free blocks of side 2^k as (order key, x, y).
    free: Vec<BTreeSet<(u64, u32, u32)>>,
    /// The split chosen by `choose`, applied by `granted`: (level taken,
    /// key, x, y, level wanted).
    pending: Option<(usize, (u64, u32, u32), usize)>,
}

fn morton(x: u32, y: u32) -> u64 {
    let mut z = 0u64;
    for i in 0..32 {
        z |= u64::from((x >> i) & 1) << (2 * i);
        z |= u64::from((y >> i) & 1) << (2 * i + 1);
    }
    z
}

impl Buddy2d {
    /// 2-D Buddy on a square mesh (or torus, wrap ignored) whose side is a
    /// power of two.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] for any other machine.
    pub fn new(topology: Topology, order: BuddyOrder) -> Result<Managed<Self>, BuildError> {
        let core = MeshGeom::new(NAME, &topology)?;
        if core.width != core.height || !core.width.is_power_of_two() {
            return Err(BuildError::UnsuitableTopology {
                strategy: NAME,
                topology: topology.to_string(),
                reason: format!(
                    "needs a square mesh with a power-of-two side (e.g. mesh:16x16), not {}x{}",
                    core.width, core.height
                ),
            });
        }
        let levels = core.width.trailing_zeros() as usize + 1;
        let mut s = Self {
            geom: core,
            order,
            free: vec![BTreeSet::new(); levels],
            pending: None,
        };
        let top = s.entry(0, 0);
        s.free[levels - 1].insert(top);
        Ok(Managed::new(topology, s))
    }

    /// The address order.
    #[must_use]
    pub fn order(&self) -> BuddyOrder {
        self.order
    }

    fn entry(&self, x: u32, y: u32) -> (u64, u32, u32) {
        let key = match self.order {
            BuddyOrder::RowMajor => u64::from(y) * u64::from(self.geom.width) + u64::from(x),
            BuddyOrder::ZOrder => morton(x, y),
        };
        (key, x, y)
    }

    /// The free blocks of side `side`, in the order they would be taken.
    #[must_use]
    pub fn free_blocks(&self, side: u32) -> Vec<GridBox> {
        if !side.is_power_of_two() {
            return Vec::new();
        }
        self.free
            .get(side.trailing_zeros() as usize)
            .map(|l| {
                l.iter()
                    .filter_map(|&(_, x, y)| GridBox::new(&[x, y], &[side, side]).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn level_for(a: u32, b: u32) -> usize {
        a.max(b).next_power_of_two().trailing_zeros() as usize
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "quad buddy: smallest power-of-two square block with free lists",
        source: "Li & Cheng 1991, as described by Kim & Yoon §II.1; docs/baselines.md#buddy-2d",
        params: &[ParamInfo {
            name: "order",
            default: "row-major",
            doc: "which free block is taken first: row-major (lowest base node id) or z-order",
        }],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        let order = spec.choice(
            "order",
            &[
                ("row-major", BuddyOrder::RowMajor),
                ("z-order", BuddyOrder::ZOrder),
            ],
        )?;
        Ok(Box::new(Buddy2d::new(t.clone(), order)?))
    },
};

impl Strategy for Buddy2d {
    type Record = Partition;

    fn name(&self) -> String {
        match self.order {
            BuddyOrder::RowMajor => NAME.to_owned(),
            BuddyOrder::ZOrder => format!("{NAME}[order=z-order]"),
        }
    }

    fn choose(&mut self, _: &View<'_>, request: &Request) -> Result<Option<Partition>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        let want = Self::level_for(a, b);
        let Some((level, &blk)) = self
            .free
            .iter()
            .enumerate()
            .skip(want)
            .find_map(|(k, l)| l.first().map(|e| (k, e)))
        else {
            return Ok(None);
        };
        self.pending = Some((level, blk, want));
        let side = 1u32 << want;
        Ok(rect(blk.1, blk.2, side, side).map(Partition::Box))
    }

    fn committed(&mut self, _: &View<'_>, p: &Partition) {
        let Some(r) = the_box(p) else {
            return;
        };
        let Some((mut level, blk, want)) = self.pending.take() else {
            return;
        };
        self.free[level].remove(&blk);
        // Split towards r: keep the quadrant holding r's base, list the
        // other three (the lower-left one when `choose` picked r).
        let (mut x, mut y) = (blk.1, blk.2);
        while level > want {
            level -= 1;
            let t = 1u32 << level;
            let (kx, ky) = (
                if r.lo(0) >= x + t { x + t } else { x },
                if r.lo(1) >= y + t { y + t } else { y },
            );
            for (qx, qy) in [(x, y), (x + t, y), (x, y + t), (x + t, y + t)] {
                if (qx, qy) != (kx, ky) {
                    let e = self.entry(qx, qy);
                    self.free[level].insert(e);
                }
            }
            (x, y) = (kx, ky);
        }
    }

    fn prepare_at(&mut self, _: &View<'_>, at: &Partition) -> bool {
        let Some(r) = the_box(at) else {
            return false;
        };
        // The free blocks tile the free nodes and four free buddies are
        // always merged, so a free aligned block lies in exactly one free
        // block, of its side or larger.
        let want = r.extent(0).trailing_zeros() as usize;
        let found = (want..self.free.len()).find_map(|level| {
            let t = 1u32 << level;
            let e = self.entry(r.lo(0) - r.lo(0) % t, r.lo(1) - r.lo(1) % t);
            self.free[level].contains(&e).then_some((level, e))
        });
        match found {
            Some((level, blk)) => {
                self.pending = Some((level, blk, want));
                true
            }
            None => false,
        }
    }

    fn released(&mut self, _: &View<'_>, p: &Partition) {
        let Some(r) = the_box(p) else {
            return;
        };
        let mut level = r.extent(0).trailing_zeros() as usize;
        let (mut x, mut y) = (r.lo(0), r.lo(1));
        while level + 1 < self.free.len() {
            let t = 1u32 << level;
            let (px, py) = (x - x % (2 * t), y - y % (2 * t));
            let quads = [(px, py), (px + t, py), (px, py + t), (px + t, py + t)];
            let all_free = quads
                .iter()
                .filter(|&&q| q != (x, y))
                .all(|&(qx, qy)| self.free[level].contains(&self.entry(qx, qy)));
            if !all_free {
                break;
            }
            for (qx, qy) in quads {
                let e = self.entry(qx, qy);
                self.free[level].remove(&e);
            }
            (x, y) = (px, py);
            level += 1;
        }
        let e = self.entry(x, y);
        self.free[level].insert(e);
    }

    fn takes_faults(&self) -> Result<(), FaultError> {
        Err(FaultError::Unsupported {
            strategy: NAME.to_owned(),
        })
    }

    fn recognises(
        &self,
        _: &View<'_>,
        request: &Request,
        at: &Partition,
    ) -> Result<Partition, AllocError> {
        let width = u64::from(self.geom.width);
        self.geom
            .recognises(NAME, request, false, at, |a, b, _, r| {
                // An aligned square block of the request's level.
                let side = 1u32 << Self::level_for(a, b);
                r.dims() == 2
                    && (r.extent(0), r.extent(1)) == (side, side)
                    && r.lo(0).is_multiple_of(side)
                    && r.lo(1).is_multiple_of(side)
                    && u64::from(r.lo(0)) + u64::from(side) <= width
                    && u64::from(r.lo(1)) + u64::from(side) <= width
            })
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        let side = 1u32 << Self::level_for(a, b);
        let mut v: Vec<(u64, Partition)> = Vec::new();
        let n = self.geom.width / side;
        for j in 0..n {
            for i in 0..n {
                let (x, y) = (i * side, j * side);
                if let Ok(gb) = GridBox::new(&[x, y], &[side, side]) {
                    v.push((self.entry(x, y).0, Partition::Box(gb)));
                }
            }
        }
        v.sort_by_key(|e| e.0);
        Ok(v.into_iter().map(|e| e.1).collect())
    }
}
