//! Slice allocation on accelerator pods ([`partalloc_topology::pod`]).
//!
//! Four strategies share [`PodAllocator`]:
//!
//! - [`PodPolicy::FirstFit`] (static wiring): the first free placement,
//!   bases in node-id order (dimension 0 fastest) and, at each base, the
//!   orientations in [`OrientationOrder::Sorted`] order; placements run across the
//!   torus edge.
//! - [`PodPolicy::BestFit`] (static wiring, catalogue-keeping): among all
//!   free placements, the one after which the catalogue stays most
//!   placeable. Score: the vector, largest catalogue shape first, of the
//!   number of free placements of that shape after the tentative grant;
//!   the lexicographically greatest wins, ties go to the first in
//!   first-fit order.
//! - [`PodPolicy::Reconfigurable`] (optical switches between cubes): a
//!   shape whose sides are multiples of the cube's is served by the
//!   lowest-id wholly free, fault-free cubes, joined in that order, with
//!   wrap-around in every dimension; a shape that fits in a cube is placed
//!   first fit inside one cube, cubes already partly used first (lowest id),
//!   then empty ones, without wrap-around.
//! - [`PodPolicy::FreeList`] (static wiring): Kim & Yoon's free submesh
//!   list on the torus; see [`free_list`].
//!
//! Every grant is a [`Partition::Boxes`];
//! [`layout`](crate::strategy::Managed::layout) says per dimension ring or
//! line and, for whole-cube slices, the cubes in join order.
//!
//! ```
//! use partalloc_allocators::pod::PodAllocator;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::pod::{LinkKind, Pod};
//!
//! let mut a = PodAllocator::reconfigurable(Pod::preset("tpu-v4")?);
//! let g = a.allocate(&Request::boxed(&[4, 4, 8])?)?;
//! let layout = a.layout(&g)?;
//! assert_eq!(layout.cubes, vec![0, 1]);
//! assert_eq!(layout.links, vec![LinkKind::Ring; 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod box_counts;
pub mod free_list;
mod measures;
mod placements;
#[cfg(test)]
mod tests;

pub use measures::{
    ShapeMeasure, largest_placeable, placeable, pod_measures, stranded_chips, stranded_chips_under,
};

use std::sync::Arc;

use partalloc_topology::pod::{LinkKind, Pod, PodSlice};
use partalloc_topology::{
    Coords, GridBox, NodeId, OrientationOrder, Orientations, Topology, TopologyKind,
};

use crate::entry::{AllocatorEntry, Entry, StrategyInfo};
use crate::strategy::{GrantRecord, Managed, Strategy, View};
use crate::{AllocError, BuildError, Grant, Occupancy, Partition, ReleaseError, Request};

/// The machines the pod strategies accept.
const POD_KINDS: &[TopologyKind] = &[TopologyKind::Pod];

/// The pod a registry entry was asked to run on, shared, or why not.
fn pod_of(strategy: &'static str, topology: &Topology) -> Result<Arc<Pod>, BuildError> {
    match topology {
        Topology::Pod(p) => Ok(Arc::clone(p)),
        other => Err(BuildError::UnsuitableTopology {
            strategy,
            topology: other.to_string(),
            reason: "needs a pod, e.g. pod:tpu-v4 or pod:tpu-v5e".to_owned(),
        }),
    }
}

pub(crate) const FIRST_FIT_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "pod-first-fit",
        summary: "static links: the first free catalogue slice in node-id order, across the torus edge",
        source: "docs/pods.md#strategies",
        params: &[],
        topologies: POD_KINDS,
    },
    build: |t, _| {
        Ok(Box::new(PodAllocator::first_fit(pod_of(
            "pod-first-fit",
            t,
        )?)))
    },
};

pub(crate) const BEST_FIT_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "pod-best-fit",
        summary: "static links: the free slice after which the largest catalogue shapes keep the most placements",
        source: "docs/pods.md#strategies",
        params: &[],
        topologies: POD_KINDS,
    },
    build: |t, _| Ok(Box::new(PodAllocator::best_fit(pod_of("pod-best-fit", t)?))),
};

pub(crate) const RECONFIGURABLE_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "pod-reconfigurable",
        summary: "optical switches: whole-cube slices from any free cubes (lowest ids), smaller ones packed into used cubes first",
        source: "Jouppi et al., ISCA 2023 (TPU v4 optical circuit switches); docs/pods.md#strategies",
        params: &[],
        topologies: POD_KINDS,
    },
    build: |t, _| {
        Ok(Box::new(PodAllocator::reconfigurable(pod_of(
            "pod-reconfigurable",
            t,
        )?)))
    },
};

pub(crate) const FREE_LIST_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "pod-free-list",
        summary: "static links: free submesh list on the torus, maximal free boxes across the edge, corners chosen by reservation factor",
        source: "Kim & Yoon, A Dynamic Processor Allocation Strategy for Mesh-Connected \
                 Multicomputers, §III (Figs. 6 and 8), on the torus; docs/pods.md#strategies",
        params: &[],
        topologies: POD_KINDS,
    },
    build: |t, _| {
        Ok(Box::new(PodAllocator::free_list(pod_of(
            "pod-free-list",
            t,
        )?)))
    },
};

/// Which pod strategy a [`PodAllocator`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PodPolicy {
    /// Static wiring, first fit with wrap-around.
    FirstFit,
    /// Static wiring, the placement that keeps the catalogue most placeable.
    BestFit,
    /// Reconfigurable wiring: whole cubes by lowest id, sub-cube slices
    /// packed into partly used cubes first.
    Reconfigurable,
    /// Static wiring, Kim & Yoon's free submesh list on the torus.
    FreeList,
}

/// What a grant is made of, beyond its chips.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceLayout {
    /// The granted shape (after rotation).
    pub shape: Coords,
    /// Per dimension, wrap-around or not.
    pub links: Vec<LinkKind>,
    /// For whole-cube slices of a reconfigurable pod, the cube ids in join
    /// order (cube ids number the cube grid like node ids number chips);
    /// empty otherwise.
    pub cubes: Vec<u32>,
}

/// The orientations of `shape` a request may take on a torus of `sides`:
/// the shape itself, then, if it may rotate, its other distinct
/// orientations in increasing order of their sides
/// ([`OrientationOrder::Sorted`]), each kept only if it fits. Allocates
/// nothing.
pub(crate) fn orientations<'a>(
    shape: &Coords,
    rotate: bool,
    sides: &'a [u32],
) -> impl Iterator<Item = Coords> + Clone + 'a {
    Orientations::new(*shape, OrientationOrder::Sorted)
        .take(if rotate { usize::MAX } else { 1 })
        .filter(move |o| o.len() == sides.len() && o.iter().zip(sides).all(|(e, k)| e <= k))
}

/// Calls `f` with every chip of the (possibly wrapping) box at `base` with
/// `ext` on a torus of `sides` ([`PodSlice::all_chips`]); stops early when
/// `f` returns false. Returns whether every call returned true.
#[inline]
pub(crate) fn all_chips(
    sides: &[u32],
    base: &[u32],
    ext: &[u32],
    f: impl FnMut(NodeId) -> bool,
) -> bool {
    // Callers pass a base and extents of the pod's dimensions; building a
    // PodSlice per call (checked coordinates) cost the pod measures 5% of
    // their instructions.
    // What PodSlice::new refuses has no chips to test: false, as before.
    if base.len() != ext.len() || ext.contains(&0) || base.len() > partalloc_topology::MAX_DIMS {
        return false;
    }
    PodSlice::chips_of(sides, base, ext, f)
}

/// What [`Managed`] keeps of a pod grant: its boxes, its layout and, for
/// a static slice, its base chip.
#[derive(Debug, Clone)]
pub struct PodGrant {
    /// The chips, as the granted [`Partition::Boxes`].
    boxes: Partition,
    layout: SliceLayout,
    base: Option<Coords>,
}

impl PodGrant {
    /// Ring/line per dimension and joined cubes.
    #[must_use]
    pub fn layout(&self) -> &SliceLayout {
        &self.layout
    }
}

impl GrantRecord for PodGrant {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, topology: &Topology, busy: bool) {
        self.boxes.mark(occupancy, topology, busy);
    }

    fn available(&self, occupancy: &Occupancy, topology: &Topology) -> bool {
        self.boxes.available(occupancy, topology)
    }

    #[inline]
    fn partition(&self) -> Partition {
        self.boxes.clone()
    }
}

/// Slice allocation on a pod, the strategy [`Managed`] runs; see the
/// module documentation.
#[derive(Debug, Clone)]
pub struct PodAllocator {
    pod: Arc<Pod>,
    policy: PodPolicy,
    /// The cube of each chip (cube ids number the cube grid like node ids
    /// number chips; one cube when the pod has none).
    chip_cube: Vec<u32>,
    /// Busy (kept by `pod-reconfigurable` only, the one that reads them)
    /// and faulty chips per cube, so the cube choice reads counts instead
    /// of chips.
    cube_busy: Vec<u32>,
    cube_faulty: Vec<u32>,
    /// The `pod-free-list` list (empty for the other strategies).
    free_list: free_list::FreeList,
    /// Static first and best fit's blocked-chip counts per catalogue
    /// orientation, kept across requests (`None` for the other strategies).
    counts: Option<box_counts::CatalogueCounts>,
    /// A request's orientations (reused between allocations).
    orients: Vec<Coords>,
}

impl PodAllocator {
    fn with(pod: Arc<Pod>, policy: PodPolicy) -> Managed<Self> {
        let topology = Topology::Pod(Arc::clone(&pod));
        let n = pod.grid().num_nodes();
        let sides = *pod.grid().sides();
        let cube = pod.cube().copied().unwrap_or(sides);
        let chip_cube: Vec<u32> = (0..n)
            .map(|id| {
                // Σ (a_d / c_d) · Π_{j<d} (k_j / c_j), dimension 0 fastest.
                let (mut rest, mut cid, mut scale) = (id as u32, 0u32, 1u32);
                for ((&k, &c), _) in sides.iter().zip(cube.iter()).zip(0..) {
                    cid += (rest % k) / c * scale;
                    scale *= k / c;
                    rest /= k;
                }
                cid
            })
            .collect();
        let cubes = chip_cube.iter().max().map_or(1, |&m| m as usize + 1);
        // Best fit scores against every catalogue shape; first fit keeps
        // counts only for the orientations it is asked for (made on first
        // use), so it updates no others.
        let counts = match policy {
            PodPolicy::BestFit => {
                let shapes: Vec<Vec<Coords>> = pod
                    .catalogue()
                    .shapes()
                    .iter()
                    .rev()
                    .map(|s| orientations(s, pod.rotates(), sides.as_slice()).collect())
                    .collect();
                Some(box_counts::CatalogueCounts::new(sides, &shapes))
            }
            PodPolicy::FirstFit => Some(box_counts::CatalogueCounts::new(sides, &[])),
            _ => None,
        };
        let strategy = Self {
            pod,
            policy,
            chip_cube,
            cube_busy: vec![0; cubes],
            cube_faulty: vec![0; cubes],
            free_list: free_list::FreeList::default(),
            counts,
            orients: Vec::new(),
        };
        Managed::new(topology, strategy)
    }

    /// Static first fit with wrap-around (the pod's wiring is not checked:
    /// it runs any pod as if its links were fixed).
    #[must_use]
    pub fn first_fit(pod: impl Into<Arc<Pod>>) -> Managed<Self> {
        Self::with(pod.into(), PodPolicy::FirstFit)
    }

    /// Static catalogue-keeping best fit.
    #[must_use]
    pub fn best_fit(pod: impl Into<Arc<Pod>>) -> Managed<Self> {
        Self::with(pod.into(), PodPolicy::BestFit)
    }

    /// Reconfigurable cube allocation. A pod without cubes is treated as one
    /// cube.
    #[must_use]
    pub fn reconfigurable(pod: impl Into<Arc<Pod>>) -> Managed<Self> {
        Self::with(pod.into(), PodPolicy::Reconfigurable)
    }

    /// The pod.
    #[must_use]
    pub fn pod(&self) -> &Pod {
        &self.pod
    }

    /// Blocks or frees one chip in best fit's kept counts.
    fn count_chip(&mut self, node: NodeId, block: bool) {
        if let (Some(counts), Ok(at)) = (self.counts.as_mut(), self.pod.grid().coords_of(node)) {
            let one = [1u32; partalloc_topology::MAX_DIMS];
            counts.apply(at.as_slice(), &one[..at.len()], block);
        }
    }

    /// The catalogue shape a request asks for, or why it is refused.
    fn shape_of(&self, request: &Request) -> Result<(Coords, bool), AllocError> {
        let invalid = |reason: String| AllocError::Invalid {
            request: *request,
            reason,
        };
        let cat = self.pod.catalogue();
        match *request {
            Request::Box { sides, rotate } => {
                let rotate = rotate || self.pod.rotates();
                if sides.len() != self.pod.grid().dims() {
                    return Err(invalid(format!(
                        "the pod has {} dimensions",
                        self.pod.grid().dims()
                    )));
                }
                let listed = orientations(&sides, rotate, self.pod.grid().sides().as_slice())
                    .any(|o| cat.check(o.as_slice()).is_ok());
                if listed {
                    Ok((sides, rotate))
                } else {
                    Err(invalid(
                        cat.check(sides.as_slice())
                            .err()
                            .map_or_else(String::new, |e| e.to_string()),
                    ))
                }
            }
            Request::Nodes { count } => cat
                .round_up(u64::from(count))
                .map(|s| (s, self.pod.rotates()))
                .map_err(|e| invalid(e.to_string())),
            _ => Err(AllocError::Unsupported {
                strategy: "pod",
                request: *request,
                reason: "pods take box (slice shape) or node-count requests",
            }),
        }
    }

    fn placement_free(&self, occupancy: &Occupancy, base: &[u32], ext: &[u32]) -> bool {
        all_chips(self.pod.grid().sides().as_slice(), base, ext, |c| {
            occupancy.is_available(c)
        })
    }

    /// Every free static placement, in first-fit order.
    #[cfg(test)]
    fn static_candidates(
        &self,
        occupancy: &Occupancy,
        shape: &Coords,
        rotate: bool,
    ) -> Vec<(Coords, Coords)> {
        let grid = self.pod.grid();
        let orients = orientations(shape, rotate, self.pod.grid().sides().as_slice());
        let mut out = Vec::new();
        for id in 0..grid.num_nodes() as NodeId {
            let Ok(base) = grid.coords_of(id) else {
                continue;
            };
            for o in orients.clone() {
                if self.placement_free(occupancy, base.as_slice(), o.as_slice()) {
                    out.push((base, o));
                }
            }
        }
        out
    }

    /// First fit (the lowest base, then the earliest orientation) or, when
    /// `best`, best fit (see the module documentation), both from the
    /// counts of [`box_counts`] kept across requests.
    fn place_kept(
        &mut self,
        occupancy: &Occupancy,
        shape: &Coords,
        rotate: bool,
        best: bool,
    ) -> Option<(Coords, Coords)> {
        let mut orients = std::mem::take(&mut self.orients);
        orients.clear();
        orients.extend(orientations(
            shape,
            rotate,
            self.pod.grid().sides().as_slice(),
        ));
        let chosen = self.place_kept_among(occupancy, &orients, best);
        self.orients = orients;
        chosen
    }

    fn place_kept_among(
        &mut self,
        occupancy: &Occupancy,
        orients: &[Coords],
        best: bool,
    ) -> Option<(Coords, Coords)> {
        let blocked = || occupancy.blocked().clone();
        let counts = self.counts.as_mut()?;
        let (b, o) = if best {
            counts.choose(orients, blocked)
        } else {
            counts.first(orients, blocked)
        }?;
        let base = self.pod.grid().coords_of(b).ok()?;
        Some((base, *orients.get(o)?))
    }

    /// The first free placement by trying each base and orientation: the
    /// reference first fit must agree with.
    #[cfg(test)]
    fn static_first_reference(
        &self,
        occupancy: &Occupancy,
        shape: &Coords,
        rotate: bool,
    ) -> Option<(Coords, Coords)> {
        let grid = self.pod.grid();
        let orients = orientations(shape, rotate, self.pod.grid().sides().as_slice());
        for id in 0..grid.num_nodes() as NodeId {
            let Ok(base) = grid.coords_of(id) else {
                continue;
            };
            for o in orients.clone() {
                if self.placement_free(occupancy, base.as_slice(), o.as_slice()) {
                    return Some((base, o));
                }
            }
        }
        None
    }

    #[cfg(test)]
    fn best_fit_score(&self, occupancy: &Occupancy, base: &Coords, ext: &Coords) -> Vec<usize> {
        let sides = *self.pod.grid().sides();
        let mut taken = Vec::with_capacity(ext.product() as usize);
        all_chips(sides.as_slice(), base.as_slice(), ext.as_slice(), |c| {
            taken.push(c);
            true
        });
        let mut occupancy = occupancy.clone();
        occupancy.occupy(taken.iter().copied());
        let rotate = self.pod.rotates();
        let shapes: Vec<Coords> = self
            .pod
            .catalogue()
            .shapes()
            .iter()
            .rev()
            .copied()
            .collect();
        shapes
            .iter()
            .map(|s| self.static_candidates(&occupancy, s, rotate).len())
            .collect()
    }

    fn place_static(
        &mut self,
        occupancy: &Occupancy,
        shape: &Coords,
        rotate: bool,
    ) -> Option<(Coords, Coords)> {
        match self.policy {
            PodPolicy::BestFit => self.place_kept(occupancy, shape, rotate, true),
            PodPolicy::FreeList => self.free_list_place(occupancy, shape, rotate),
            _ => self.place_kept(occupancy, shape, rotate, false),
        }
    }

    fn cube_sides(&self) -> Coords {
        self.pod.cube().copied().unwrap_or(*self.pod.grid().sides())
    }

    /// Cube grid sides and the number of cubes.
    fn cube_grid(&self) -> (Coords, u32) {
        let mut g = *self.pod.grid().sides();
        let c = self.cube_sides();
        for (g, c) in g.as_mut_slice().iter_mut().zip(c.iter()) {
            *g /= c;
        }
        let n = g.product() as u32;
        (g, n)
    }

    fn cube_base(&self, cube: u32) -> Coords {
        let (cg, _) = self.cube_grid();
        let cs = self.cube_sides();
        let mut b = cg;
        let mut rest = cube;
        for ((b, &k), &c) in b.as_mut_slice().iter_mut().zip(cg.iter()).zip(cs.iter()) {
            *b = (rest % k) * c;
            rest /= k;
        }
        b
    }

    /// (used chips, faulty chips) of a cube, from the kept counts.
    fn cube_state(&self, cube: u32) -> (usize, usize) {
        let i = cube as usize;
        (
            self.cube_busy.get(i).map_or(0, |&b| b as usize),
            self.cube_faulty.get(i).map_or(0, |&f| f as usize),
        )
    }

    /// (used chips, faulty chips) of a cube, read from its chips: the
    /// reference the kept counts must equal.
    #[cfg(test)]
    fn cube_state_from_chips(&self, occupancy: &Occupancy, cube: u32) -> (usize, usize) {
        let base = self.cube_base(cube);
        let cs = self.cube_sides();
        let (mut used, mut bad) = (0, 0);
        all_chips(
            self.pod.grid().sides().as_slice(),
            base.as_slice(),
            cs.as_slice(),
            |c| {
                let faulty = occupancy.faulty().contains(c);
                used += usize::from(!faulty && !occupancy.is_available(c));
                bad += usize::from(faulty);
                true
            },
        );
        (used, bad)
    }

    /// Reconfigurable placement: whole cubes or a box inside one cube.
    fn place_reconfigurable(
        &self,
        occupancy: &Occupancy,
        shape: &Coords,
        rotate: bool,
    ) -> Result<Option<(Vec<GridBox>, SliceLayout)>, String> {
        let cs = self.cube_sides();
        let (_, ncubes) = self.cube_grid();
        let dims = shape.len();
        for o in orientations(shape, rotate, self.pod.grid().sides().as_slice()) {
            if o.iter().zip(cs.iter()).all(|(&e, &c)| e % c == 0) {
                let need = (o.product() / cs.product()) as usize;
                let cubes: Vec<u32> = (0..ncubes)
                    .filter(|&c| self.cube_state(c) == (0, 0))
                    .take(need)
                    .collect();
                if cubes.len() < need {
                    return Ok(None);
                }
                let boxes = cubes
                    .iter()
                    .map(|&c| GridBox::new(self.cube_base(c).as_slice(), cs.as_slice()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                let layout = SliceLayout {
                    shape: o,
                    links: vec![LinkKind::Ring; dims],
                    cubes,
                };
                return Ok(Some((boxes, layout)));
            }
        }
        let inside: Vec<Coords> = orientations(shape, rotate, self.pod.grid().sides().as_slice())
            .filter(|o| o.iter().zip(cs.iter()).all(|(&e, &c)| e <= c))
            .collect();
        if inside.is_empty() {
            return Err(format!(
                "a reconfigurable pod serves whole-cube shapes (multiples of {}) or shapes inside one cube",
                cs.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
            ));
        }
        // Partly used (or faulty) cubes first, then empty ones, each in id
        // order; a cube with fewer free chips than the shape is skipped
        // (a chip both busy and faulty counts once, so at most
        // cells − max(used, bad) chips are free).
        let cells = cs.product();
        let volume = shape.product();
        for empty_pass in [false, true] {
            for cube in 0..ncubes {
                let (used, bad) = self.cube_state(cube);
                if (used + bad == 0) != empty_pass
                    || cells.saturating_sub(used.max(bad) as u64) < volume
                {
                    continue;
                }
                if let Some(found) = self.place_in_cube(occupancy, cube, &inside, dims)? {
                    return Ok(Some(found));
                }
            }
        }
        Ok(None)
    }

    /// The first free box of one of `inside` (orientations that fit a
    /// cube) inside `cube`: local bases in chip order, orientations in
    /// their order at each base.
    fn place_in_cube(
        &self,
        occupancy: &Occupancy,
        cube: u32,
        inside: &[Coords],
        dims: usize,
    ) -> Result<Option<(Vec<GridBox>, SliceLayout)>, String> {
        let cs = self.cube_sides();
        let cb = self.cube_base(cube);
        let mut local = Coords::filled(dims, 0).map_err(|e| e.to_string())?;
        for i in 0..cs.product() {
            let mut rest = i;
            for (l, &c) in local.as_mut_slice().iter_mut().zip(cs.iter()) {
                *l = (rest % u64::from(c)) as u32;
                rest /= u64::from(c);
            }
            for o in inside {
                if local
                    .iter()
                    .zip(o.iter())
                    .zip(cs.iter())
                    .any(|((&l, &e), &c)| l + e > c)
                {
                    continue;
                }
                let mut base = cb;
                for (b, &l) in base.as_mut_slice().iter_mut().zip(local.iter()) {
                    *b += l;
                }
                if self.placement_free(occupancy, base.as_slice(), o.as_slice()) {
                    let b =
                        GridBox::new(base.as_slice(), o.as_slice()).map_err(|e| e.to_string())?;
                    let layout = SliceLayout {
                        shape: *o,
                        links: vec![LinkKind::Line; dims],
                        cubes: Vec::new(),
                    };
                    return Ok(Some((vec![b], layout)));
                }
            }
        }
        Ok(None)
    }
}

impl PodAllocator {
    /// Adds (`busy`) or takes away the chips of `boxes` in the per-cube
    /// busy counts of `pod-reconfigurable`: each of its boxes is a whole
    /// cube or lies inside one, the cube of its lowest chip.
    fn count_cubes(&mut self, boxes: &Partition, busy: bool) {
        if self.policy != PodPolicy::Reconfigurable {
            return;
        }
        let Partition::Boxes(boxes) = boxes else {
            return;
        };
        for b in boxes {
            let Ok(first) = self.pod.grid().id_of(b.base().as_slice()) else {
                continue;
            };
            let cube = self.chip_cube.get(first as usize).copied();
            if let Some(n) = cube.and_then(|k| self.cube_busy.get_mut(k as usize)) {
                let v = b.volume() as u32;
                if busy {
                    *n += v;
                } else {
                    *n -= v;
                }
            }
        }
    }

    /// Adds (`faulty`) or takes away one faulty chip in the kept counts.
    fn count_fault(&mut self, node: NodeId, faulty: bool) {
        if let Some(n) = self
            .chip_cube
            .get(node as usize)
            .and_then(|&k| self.cube_faulty.get_mut(k as usize))
        {
            if faulty {
                *n += 1;
            } else {
                *n -= 1;
            }
        }
        self.count_chip(node, faulty);
    }
}

impl Strategy for PodAllocator {
    type Record = PodGrant;

    fn name(&self) -> String {
        match self.policy {
            PodPolicy::FirstFit => "pod-first-fit",
            PodPolicy::BestFit => "pod-best-fit",
            PodPolicy::Reconfigurable => "pod-reconfigurable",
            PodPolicy::FreeList => "pod-free-list",
        }
        .to_owned()
    }

    fn placement_rules(&self) -> Option<crate::PlacementRules> {
        use partalloc_topology::pod::Wiring;
        Some(crate::PlacementRules::Pod(match self.policy {
            PodPolicy::Reconfigurable => Wiring::Reconfigurable,
            PodPolicy::FirstFit | PodPolicy::BestFit | PodPolicy::FreeList => Wiring::Static,
        }))
    }

    fn choose(
        &mut self,
        view: &View<'_, PodGrant>,
        request: &Request,
    ) -> Result<Option<PodGrant>, AllocError> {
        let (shape, rotate) = self.shape_of(request)?;
        let occupancy = view.occupancy();
        if self.policy == PodPolicy::Reconfigurable {
            let found = self
                .place_reconfigurable(occupancy, &shape, rotate)
                .map_err(|reason| AllocError::Invalid {
                    request: *request,
                    reason,
                })?;
            return Ok(found.map(|(boxes, layout)| PodGrant {
                boxes: Partition::Boxes(boxes),
                layout,
                base: None,
            }));
        }
        let Some((base, ext)) = self.place_static(occupancy, &shape, rotate) else {
            return Ok(None);
        };
        let invalid = |reason: String| AllocError::Invalid {
            request: *request,
            reason,
        };
        let slice =
            PodSlice::new(base.as_slice(), ext.as_slice()).map_err(|e| invalid(e.to_string()))?;
        let boxes = self
            .pod
            .slice_pieces(&slice)
            .map_err(|e| invalid(e.to_string()))?;
        let links = self.pod.static_links(&slice);
        Ok(Some(PodGrant {
            boxes: Partition::Boxes(boxes),
            layout: SliceLayout {
                shape: ext,
                links,
                cubes: Vec::new(),
            },
            base: Some(base),
        }))
    }

    /// Refused ([`AllocError::ProbeUnsupported`]): a probe on a copy would
    /// copy the kept counts and free list; a caller tries and gives back.
    fn fits(&self, _: &View<'_, PodGrant>, _: &Request) -> Result<Option<bool>, AllocError> {
        Err(AllocError::ProbeUnsupported {
            strategy: self.name(),
        })
    }

    fn committed(&mut self, _: &View<'_, PodGrant>, grant: &PodGrant) {
        self.count_cubes(&grant.boxes, true);
        if let (Some(counts), Some(base)) = (self.counts.as_mut(), grant.base.as_ref()) {
            counts.apply(base.as_slice(), grant.layout.shape.as_slice(), true);
        }
    }

    fn released(&mut self, _: &View<'_, PodGrant>, grant: &PodGrant) {
        if let (Some(counts), Some(base)) = (self.counts.as_mut(), grant.base.as_ref()) {
            counts.apply(base.as_slice(), grant.layout.shape.as_slice(), false);
        }
        self.count_cubes(&grant.boxes, false);
    }

    fn faulted(&mut self, _: &View<'_, PodGrant>, node: NodeId) {
        self.count_fault(node, true);
    }

    fn repaired(&mut self, _: &View<'_, PodGrant>, node: NodeId) {
        self.count_fault(node, false);
    }
}

impl Managed<PodAllocator> {
    /// Ring/line per dimension and joined cubes of a live grant.
    ///
    /// # Errors
    /// The grant is not live here.
    pub fn layout(&self, grant: &Grant) -> Result<&SliceLayout, ReleaseError> {
        self.record(grant).map(PodGrant::layout)
    }

    /// (used chips, faulty chips) of a cube, read from its chips: the
    /// reference the kept counts must equal.
    #[cfg(test)]
    pub(crate) fn cube_state_from_chips(&self, cube: u32) -> (usize, usize) {
        self.strategy()
            .cube_state_from_chips(self.view().occupancy(), cube)
    }

    /// Best fit by trying every placement and recounting every shape's
    /// free placements, first fit by trying each base and orientation:
    /// the references the kept counts must agree with.
    #[cfg(test)]
    pub(crate) fn place_static_reference(
        &self,
        shape: &Coords,
        rotate: bool,
    ) -> Option<(Coords, Coords)> {
        let (s, occupancy) = (self.strategy(), self.view().occupancy());
        match s.policy {
            PodPolicy::BestFit => {
                let mut best: Option<(Vec<usize>, (Coords, Coords))> = None;
                for cand in s.static_candidates(occupancy, shape, rotate) {
                    let score = s.best_fit_score(occupancy, &cand.0, &cand.1);
                    if best.as_ref().is_none_or(|(b, _)| score > *b) {
                        best = Some((score, cand));
                    }
                }
                best.map(|(_, c)| c)
            }
            _ => s.static_first_reference(occupancy, shape, rotate),
        }
    }

    /// The placement the strategy would choose for a static request now.
    #[cfg(test)]
    pub(crate) fn place_static_now(
        &mut self,
        shape: &Coords,
        rotate: bool,
    ) -> Option<(Coords, Coords)> {
        let (s, view) = self.strategy_and_view();
        s.place_static(view.occupancy(), shape, rotate)
    }
}
