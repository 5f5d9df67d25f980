//! Frame Sliding (Chuang & Tzeng 1991, as summarised by Kim & Yoon §II.2).
//!
//! "For a request (a, b), it searches a first free submesh of a×b but not
//! b×a with horizontal stride a and vertical stride b from the first
//! (lower-leftmost) free processor" (Kim & Yoon §II.2). With ⟨x0,y0⟩ the
//! first free node in row-major order, frames are tried at rows y0, y0+b,
//! … and, in each row, at columns x0 mod a, x0 mod a + a, … (variant A,
//! the default) or x0, x0 + a, … (variant B), the first entirely free
//! frame winning (docs/baselines.md#frame-sliding). Variant B can fail on an almost empty
//! mesh (8×8, busy ⟨0,0⟩–⟨6,0⟩, request 2×2), which contradicts Chuang &
//! Tzeng's claim that a frame may start anywhere; hence A is the default.
//! Not complete (fixed strides and orientation). O(W·H) per request with
//! `search=literal`; the default `search=fast` tests a whole row of frames
//! per word operation (row bit-words eroded by a, ANDed over b rows, masked
//! by the stride) and picks the same frame.
//!
//! ```
//! use partalloc_allocators::{mesh::{FrameSliding, FsVariant}, Allocator, Partition, Request};
//! use partalloc_topology::GridBox;
//! let mut fs = FrameSliding::new("mesh:8x8".parse()?, FsVariant::A)?;
//! for x in 0..7 { fs.mark_faulty(x)?; }
//! let g = fs.allocate(&Request::boxed(&[2, 2])?)?;
//! assert_eq!(g.partition(), &Partition::Box(GridBox::new(&[1, 2], &[2, 2])?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{GridBox, Topology};

use crate::{AllocError, Managed, Request, Strategy, View};

use super::scan::{
    SEARCH_PARAM, Search, frame_slide_fast, search_methods, search_param, spec_name,
};
use super::{MeshCore, MeshGeom, MeshScratch, SearchMode, rect};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{BuildError, Partition};

const NAME: &str = "frame-sliding";

/// Where each row of frames starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum FsVariant {
    /// FS-A: every row of frames starts at column x0 mod a.
    #[default]
    A,
    /// FS-B: every row of frames starts at column x0.
    B,
}

/// Frame Sliding with strides (a, b) from the first free node.
#[derive(Debug, Clone)]
pub struct FrameSliding {
    geom: MeshGeom,
    variant: FsVariant,
    search: Search,
}

impl FrameSliding {
    /// Frame Sliding on a 2-D mesh (or torus, wrap ignored).
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] unless the machine is 2-D.
    pub fn new(topology: Topology, variant: FsVariant) -> Result<Managed<Self>, BuildError> {
        let strategy = Self {
            geom: MeshGeom::new(NAME, &topology)?,
            variant,
            search: Search::default(),
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The first free frame from the first free node, by the chosen search.
    fn first_free_frame(
        &self,
        core: &MeshCore<'_>,
        s: &mut MeshScratch,
        a: u32,
        b: u32,
    ) -> Option<GridBox> {
        let first = core.occupancy.blocked().first_absent()? as usize;
        let w = core.width as usize;
        let (x0, y0) = ((first % w) as u32, (first / w) as u32);
        // Testing a frame (word-parallel `rect_free`) costs about b words
        // and the first free frame usually comes early, while the row words
        // cost about 2·H·⌈W/64⌉ per change of the mesh: they pay off only
        // for small frames, of which there are many. Both find the same
        // frame.
        let (width, height) = (core.width, core.height);
        let frames = u64::from(width / a) * u64::from(height / b);
        let words = u64::from(height) * u64::from(width.div_ceil(64));
        if self.search.mode == SearchMode::Fast
            && (frames >= 4 * words || super::scan::WORDS_ALWAYS)
        {
            let xs = match self.variant {
                FsVariant::A => x0 % a,
                FsVariant::B => x0,
            };
            s.load(core);
            return frame_slide_fast(core, s, xs, y0, a, b);
        }
        let mut found = None;
        self.frames(x0, y0, a, b, |r| {
            if core.rect_free(&r) {
                found = Some(r);
                true
            } else {
                false
            }
        });
        found
    }

    /// The variant.
    #[must_use]
    pub fn variant(&self) -> FsVariant {
        self.variant
    }

    fn frames(&self, x0: u32, y0: u32, a: u32, b: u32, mut f: impl FnMut(GridBox) -> bool) {
        let (width, height) = (self.geom.width, self.geom.height);
        if a > width || b > height {
            return;
        }
        let xs = match self.variant {
            FsVariant::A => x0 % a,
            FsVariant::B => x0,
        };
        let mut y = y0;
        while y + b <= height {
            let mut x = xs;
            while x + a <= width {
                if let Some(r) = rect(x, y, a, b)
                    && f(r)
                {
                    return;
                }
                x += a;
            }
            y += b;
        }
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "a×b frames with strides (a, b) from the first free node, fixed orientation",
        source: "Chuang & Tzeng 1991, as described by Kim & Yoon §II.2; docs/baselines.md#frame-sliding",
        params: &[
            ParamInfo {
                name: "variant",
                default: "a",
                doc: "a: rows of frames start at x0 mod a (FS-A); b: they start at x0 (FS-B)",
            },
            SEARCH_PARAM,
        ],
        topologies: super::MESH_KINDS,
    },
    build: |t, spec| {
        let variant = spec.choice(
            "variant",
            &[
                ("a", FsVariant::A),
                ("b", FsVariant::B),
                ("A", FsVariant::A),
                ("B", FsVariant::B),
            ],
        )?;
        Ok(Box::new(
            FrameSliding::new(t.clone(), variant)?.with_search(search_param(spec)?),
        ))
    },
};

search_methods!([] FrameSliding);

impl Strategy for FrameSliding {
    type Record = Partition;

    fn name(&self) -> String {
        let variant: &[&str] = match self.variant {
            FsVariant::A => &[],
            FsVariant::B => &["variant=b"],
        };
        spec_name(NAME, variant, self.search.mode)
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        let core = self.geom.core(view);
        let found = self.search.run(|s| self.first_free_frame(&core, s, a, b));
        Ok(found.map(Partition::Box))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        let core = self.geom.core(view);
        Ok(Some(
            self.search
                .run(|s| self.first_free_frame(&core, s, a, b).is_some()),
        ))
    }

    fn recognizable(&self, _: &View<'_>, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let (a, b, _) = self.geom.parse(NAME, request, false)?;
        let mut v = Vec::new();
        self.frames(0, 0, a, b, |r| {
            v.push(Partition::Box(r));
            false
        });
        Ok(v)
    }

    fn recognises(
        &self,
        _: &View<'_>,
        request: &Request,
        at: &Partition,
    ) -> Result<Partition, AllocError> {
        self.geom
            .recognises(NAME, request, false, at, |a, b, _, r| {
                let mut found = false;
                self.frames(0, 0, a, b, |q| {
                    found = q == *r;
                    found
                });
                found
            })
    }
}
