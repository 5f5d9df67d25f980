//! Three-dimensional tori (`topology/torus3d`, Slurm 26.05), read from the
//! `torus3d:` form of `topology.yaml` (the plugin has no `topology.conf`
//! syntax).
//!
//! A torus has X×Y×Z cells; cell `(x, y, z)` has the linear index
//! `x + y·X + z·X·Y`. Its nodes fill the cells either from one flat list in
//! linear order (`nodes:`) or region by region (`regions:`, each an anchor,
//! dimensions that do not wrap, and a list in the region's own linear
//! order); cells no node fills are holes. A placement is a sub-cube shape
//! with an anchor grid: along each axis the anchors are the seed and its
//! multiples of the spacing (the placement's dimension unless
//! `anchor_spacing` says otherwise), taken modulo the axis; a sub-cube at
//! an anchor may wrap. Placements are kept sorted by size, equal sizes in
//! file order, as Slurm 26.05.3 sorts them
//! (`src/plugins/topology/torus3d/torus3d_record.c`).
//!
//! ```
//! use partalloc_topology::slurm::SlurmMachine;
//! let yaml = "\
//! - topology: pod
//!   torus3d:
//!     toruses:
//!       - name: t0
//!         dims: {x: 4, y: 2, z: 2}
//!         nodes: n[00-15]
//!         placements:
//!           - dims: {x: 2, y: 2, z: 2}
//!           - dims: {x: 2, y: 1, z: 1}
//! ";
//! let m = SlurmMachine::parse_yaml(yaml, "pod.yaml", None)?;
//! let t = &m.toruses().expect("a torus machine").toruses()[0];
//! assert_eq!(t.cell(1, 1, 0), Some(5));
//! assert_eq!(t.placements()[0].size(), 2); // sorted by size
//! assert_eq!(t.placements()[1].anchor_count(), 2);
//! assert_eq!(m.distance(0, 3), 1); // x wraps
//! # Ok::<(), partalloc_topology::slurm::ConfError>(())
//! ```

use std::collections::HashSet;

use super::conf::{ConfError, ConfErrorKind, Reader};
use super::{Shape, hostlist};
use crate::NodeId;

/// A cell no node fills.
const HOLE: NodeId = NodeId::MAX;

/// A torus machine: one or more tori, each holding a run of consecutive
/// node ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Toruses {
    toruses: Vec<Torus>,
}

impl Toruses {
    /// The tori, in file order.
    #[must_use]
    pub fn toruses(&self) -> &[Torus] {
        &self.toruses
    }

    /// The index of the torus holding `node`, if any.
    #[must_use]
    pub fn torus_of(&self, node: NodeId) -> Option<usize> {
        self.toruses.iter().position(|t| t.nodes.contains(&node))
    }
}

/// Where a torus's nodes come from: one rectangular piece of the torus
/// holding a run of consecutive ids in its own linear order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// The lowest corner.
    pub anchor: [u16; 3],
    /// Extent along x, y and z (no wrap).
    pub dims: [u16; 3],
    /// The node ids, in the region's linear order.
    pub nodes: core::ops::Range<NodeId>,
}

/// One torus.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Torus {
    name: String,
    dims: [u16; 3],
    /// Whether the file gave one flat `nodes:` list (else `regions:`).
    flat: bool,
    regions: Vec<Region>,
    nodes: core::ops::Range<NodeId>,
    /// Node id per cell, by linear index ([`HOLE`] for none).
    cells: Vec<NodeId>,
    placements: Vec<PlacementShape>,
}

impl Torus {
    /// The torus's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its extent along x, y and z.
    #[must_use]
    pub fn dims(&self) -> [u16; 3] {
        self.dims
    }

    /// Its node ids.
    #[must_use]
    pub fn nodes(&self) -> core::ops::Range<NodeId> {
        self.nodes.clone()
    }

    /// Where its nodes come from (one region covering the torus for a flat
    /// list).
    #[must_use]
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The linear index of cell `(x, y, z)`.
    #[must_use]
    pub fn index(&self, x: u16, y: u16, z: u16) -> usize {
        let [dx, dy, _] = self.dims;
        x as usize + y as usize * dx as usize + z as usize * dx as usize * dy as usize
    }

    /// The node at `(x, y, z)`, if the cell exists and is filled.
    #[must_use]
    pub fn cell(&self, x: u16, y: u16, z: u16) -> Option<NodeId> {
        let [dx, dy, dz] = self.dims;
        if x >= dx || y >= dy || z >= dz {
            return None;
        }
        self.cells
            .get(self.index(x, y, z))
            .copied()
            .filter(|&n| n != HOLE)
    }

    /// The cell of `node`, if it is on this torus.
    #[must_use]
    pub fn coord_of(&self, node: NodeId) -> Option<[u16; 3]> {
        let r = self.regions.iter().find(|r| r.nodes.contains(&node))?;
        let k = node - r.nodes.start;
        let [rx, ry, _] = r.dims.map(u32::from);
        let [ax, ay, az] = r.anchor;
        Some([
            ax + (k % rx) as u16,
            ay + ((k / rx) % ry) as u16,
            az + (k / (rx * ry)) as u16,
        ])
    }

    /// The placements, by size (equal sizes in file order).
    #[must_use]
    pub fn placements(&self) -> &[PlacementShape] {
        &self.placements
    }
}

/// A placement: a sub-cube shape and its anchor grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlacementShape {
    dims: [u16; 3],
    seed: [u16; 3],
    spacing: [u16; 3],
    has_overlap: bool,
    /// Anchor positions along each axis, seed first.
    axes: [Vec<u16>; 3],
}

impl PlacementShape {
    /// The sub-cube's extent along x, y and z.
    #[must_use]
    pub fn dims(&self) -> [u16; 3] {
        self.dims
    }

    /// Cells per sub-cube.
    #[must_use]
    pub fn size(&self) -> u32 {
        self.dims.iter().map(|&d| u32::from(d)).product()
    }

    /// The anchor grid's offset.
    #[must_use]
    pub fn seed(&self) -> [u16; 3] {
        self.seed
    }

    /// The anchor grid's spacing.
    #[must_use]
    pub fn spacing(&self) -> [u16; 3] {
        self.spacing
    }

    /// Whether two of its sub-cubes, or one of it and one of another
    /// placement of its size, can overlap (Slurm's `has_overlap`).
    #[must_use]
    pub fn has_overlap(&self) -> bool {
        self.has_overlap
    }

    /// Number of anchors.
    #[must_use]
    pub fn anchor_count(&self) -> usize {
        self.axes.iter().map(Vec::len).product()
    }

    /// Anchor `i`, in Slurm's order: x slowest, z fastest.
    #[must_use]
    pub fn anchor(&self, i: usize) -> Option<[u16; 3]> {
        let [xs, ys, zs] = &self.axes;
        let (nz, ny) = (zs.len(), ys.len());
        if nz == 0 || ny == 0 {
            return None;
        }
        Some([
            *xs.get(i / (ny * nz))?,
            *ys.get((i / nz) % ny)?,
            *zs.get(i % nz)?,
        ])
    }
}

/// A torus as `topology.yaml` gives it, before any check.
#[derive(Debug, Default)]
pub(super) struct TorusConfig {
    pub(super) line: usize,
    pub(super) name: Option<String>,
    pub(super) dims: [u16; 3],
    pub(super) nodes: Option<(String, usize)>,
    pub(super) regions: Vec<RegionConfig>,
    pub(super) placements: Vec<PlacementConfig>,
}

/// A region as given.
#[derive(Debug, Default)]
pub(super) struct RegionConfig {
    pub(super) line: usize,
    pub(super) anchor: [u16; 3],
    pub(super) dims: [u16; 3],
    pub(super) nodes: Option<String>,
}

/// A placement as given (zero spacing: the placement's dimension).
#[derive(Debug, Default)]
pub(super) struct PlacementConfig {
    pub(super) line: usize,
    pub(super) dims: [u16; 3],
    pub(super) seed: [u16; 3],
    pub(super) spacing: [u16; 3],
}

fn cells_of(d: [u16; 3]) -> u64 {
    d.iter().map(|&x| u64::from(x)).product()
}

/// Anchor positions along one axis of length `size`: the seed, then steps
/// of `stride` modulo the axis until the seed comes round again.
fn axis(size: u16, stride: u16, seed: u16) -> Vec<u16> {
    let mut v = vec![seed];
    let mut pos = seed;
    loop {
        pos = ((u32::from(pos) + u32::from(stride)) % u32::from(size)) as u16;
        if pos == seed {
            return v;
        }
        v.push(pos);
    }
}

fn gcd(mut a: u16, mut b: u16) -> u16 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether two anchor grids can put sub-cubes on common cells along one
/// axis of length `len` (Slurm's per-axis test).
fn grids_meet(a: (u16, u16, u16), b: (u16, u16, u16), len: u16) -> bool {
    let ((sa, pa, da), (sb, pb, db)) = (a, b);
    let g = gcd(gcd(pa, pb), len);
    if sa == sb || g == 0 {
        return true;
    }
    if sb > sa {
        let r = (sb - sa) % g;
        r < da || g - r < db
    } else {
        let r = (sa - sb) % g;
        r < db || g - r < da
    }
}

fn mark_overlaps(dims: [u16; 3], ps: &mut [PlacementShape]) {
    for p in ps.iter_mut() {
        p.has_overlap = (0..3).any(|a| gcd(p.spacing[a], dims[a]) < p.dims[a]);
    }
    for i in 0..ps.len() {
        for j in i + 1..ps.len() {
            if ps[j].size() != ps[i].size() {
                break;
            }
            if ps[i].has_overlap && ps[j].has_overlap {
                continue;
            }
            let meet = (0..3).all(|a| {
                grids_meet(
                    (ps[i].seed[a], ps[i].spacing[a], ps[i].dims[a]),
                    (ps[j].seed[a], ps[j].spacing[a], ps[j].dims[a]),
                    dims[a],
                )
            });
            if meet {
                ps[i].has_overlap = true;
                ps[j].has_overlap = true;
            }
        }
    }
}

fn placement(
    torus: &str,
    dims: [u16; 3],
    c: &PlacementConfig,
    r: &Reader<'_>,
) -> Result<PlacementShape, ConfError> {
    let name = || torus.to_owned();
    if c.dims.contains(&0) {
        return Err(r.err(c.line, ConfErrorKind::PlacementZeroDims(name())));
    }
    if (0..3).any(|a| c.dims[a] > dims[a]) {
        let kind = ConfErrorKind::PlacementTooLarge {
            torus: name(),
            dims: c.dims,
        };
        return Err(r.err(c.line, kind));
    }
    let spacing: [u16; 3] = core::array::from_fn(|a| {
        if c.spacing[a] == 0 {
            c.dims[a]
        } else {
            c.spacing[a]
        }
    });
    if (0..3).any(|a| spacing[a] > dims[a]) {
        return Err(r.err(c.line, ConfErrorKind::AnchorSpacing(name())));
    }
    if (0..3).any(|a| c.seed[a] >= dims[a]) {
        return Err(r.err(c.line, ConfErrorKind::AnchorSeed(name())));
    }
    Ok(PlacementShape {
        dims: c.dims,
        seed: c.seed,
        spacing,
        has_overlap: false,
        axes: core::array::from_fn(|a| axis(dims[a], spacing[a], c.seed[a])),
    })
}

/// Most placements one torus may list. Placements of one size are
/// compared pairwise for overlap, so the bound keeps reading fast; real
/// tori list a handful.
pub const MAX_PLACEMENTS: usize = 4096;

/// Builds a torus machine: every count and bound is checked before any
/// node list is expanded or any cell table is made.
pub(super) fn read(configs: &[TorusConfig], r: &mut Reader<'_>) -> Result<Shape, ConfError> {
    let mut total = 0u64;
    let mut names = HashSet::new();
    for c in configs {
        let Some(name) = c.name.clone().filter(|n| !n.is_empty()) else {
            return Err(r.err(c.line, ConfErrorKind::TorusNoName));
        };
        if !names.insert(name.clone()) {
            return Err(r.err(c.line, ConfErrorKind::DuplicateName(name)));
        }
        if c.placements.len() > MAX_PLACEMENTS {
            let kind = ConfErrorKind::TooManyPlacements {
                torus: crate::echo(&name),
                count: c.placements.len(),
                max: MAX_PLACEMENTS,
            };
            return Err(r.err(c.line, kind));
        }
        if c.nodes.is_some() && !c.regions.is_empty() {
            return Err(r.err(c.line, ConfErrorKind::TorusNodesAndRegions(name)));
        }
        if c.dims.contains(&0) {
            return Err(r.err(c.line, ConfErrorKind::TorusZeroDims(name)));
        }
        let cells = cells_of(c.dims);
        if cells > super::MAX_SLURM_NODES as u64 {
            let kind = ConfErrorKind::TorusTooLarge {
                name,
                cells,
                max: super::MAX_SLURM_NODES,
            };
            return Err(r.err(c.line, kind));
        }
        let mut lists: Vec<(&str, usize, u64)> = Vec::new();
        if let Some((expr, line)) = &c.nodes {
            let n = hostlist::count(expr).map_err(|e| r.err(*line, e.into()))?;
            if n != cells {
                let kind = ConfErrorKind::TorusNodeCount {
                    name,
                    dims: c.dims,
                    nodes: n,
                };
                return Err(r.err(*line, kind));
            }
            lists.push((expr, *line, n));
        }
        for g in &c.regions {
            let Some(expr) = g.nodes.as_deref().filter(|e| !e.is_empty()) else {
                return Err(r.err(g.line, ConfErrorKind::RegionNoNodes(name)));
            };
            let outside = (0..3)
                .any(|a| u32::from(g.anchor[a]) + u32::from(g.dims[a]) > u32::from(c.dims[a]));
            if outside {
                return Err(r.err(g.line, ConfErrorKind::RegionOutside(name)));
            }
            let n = hostlist::count(expr).map_err(|e| r.err(g.line, e.into()))?;
            if n != cells_of(g.dims) {
                let kind = ConfErrorKind::RegionNodeCount {
                    torus: name,
                    cells: cells_of(g.dims),
                    nodes: n,
                };
                return Err(r.err(g.line, kind));
            }
            lists.push((expr, g.line, n));
        }
        for (_, line, n) in lists {
            total = total.saturating_add(n);
            if total > super::MAX_SLURM_NODES as u64 {
                let kind = ConfErrorKind::TooManyNodes {
                    total,
                    max: super::MAX_SLURM_NODES,
                };
                return Err(r.err(line, kind));
            }
        }
    }
    let mut toruses = Vec::with_capacity(configs.len());
    for c in configs {
        let name = c.name.clone().unwrap_or_default();
        let first = r.node_count() as NodeId;
        let mut cells = vec![HOLE; cells_of(c.dims) as usize];
        let mut regions = Vec::new();
        if let Some((expr, line)) = &c.nodes {
            r.add_nodes(expr, *line)?;
            regions.push(Region {
                anchor: [0; 3],
                dims: c.dims,
                nodes: first..r.node_count() as NodeId,
            });
        }
        for g in &c.regions {
            let start = r.node_count() as NodeId;
            r.add_nodes(g.nodes.as_deref().unwrap_or_default(), g.line)?;
            regions.push(Region {
                anchor: g.anchor,
                dims: g.dims,
                nodes: start..r.node_count() as NodeId,
            });
        }
        let mut torus = Torus {
            name: name.clone(),
            dims: c.dims,
            flat: c.nodes.is_some(),
            regions,
            nodes: first..r.node_count() as NodeId,
            cells: Vec::new(),
            placements: Vec::new(),
        };
        for (k, g) in torus.regions.iter().enumerate() {
            for node in g.nodes.clone() {
                let Some([x, y, z]) = torus.coord_of(node) else {
                    continue;
                };
                let at = torus.index(x, y, z);
                if cells[at] != HOLE {
                    let line = c.regions.get(k).map_or(c.line, |g| g.line);
                    let kind = ConfErrorKind::RegionOverlap {
                        torus: name,
                        at: [x, y, z],
                    };
                    return Err(r.err(line, kind));
                }
                cells[at] = node;
            }
        }
        torus.cells = cells;
        let mut ps = c
            .placements
            .iter()
            .map(|p| placement(&name, c.dims, p, r))
            .collect::<Result<Vec<_>, _>>()?;
        // Stable, as glibc's merge sort behind Slurm's qsort is.
        ps.sort_by_key(PlacementShape::size);
        mark_overlaps(c.dims, &mut ps);
        torus.placements = ps;
        toruses.push(torus);
    }
    Ok(Shape::Toruses(Toruses { toruses }))
}

/// The torus machine as `topology.yaml` text that reads back equal.
pub(super) fn to_yaml(
    t: &Toruses,
    hostlist: impl Fn(core::ops::Range<NodeId>) -> String,
) -> String {
    use core::fmt::Write as _;
    let xyz = |d: [u16; 3]| format!("{{x: {}, y: {}, z: {}}}", d[0], d[1], d[2]);
    let mut out =
        String::from("- topology: torus3d\n  cluster_default: true\n  torus3d:\n    toruses:\n");
    for torus in &t.toruses {
        let _ = writeln!(out, "      - name: {}", torus.name);
        let _ = writeln!(out, "        dims: {}", xyz(torus.dims));
        if torus.flat {
            let _ = writeln!(out, "        nodes: {}", hostlist(torus.nodes.clone()));
        } else if !torus.regions.is_empty() {
            out.push_str("        regions:\n");
            for g in &torus.regions {
                let _ = writeln!(out, "          - anchor: {}", xyz(g.anchor));
                let _ = writeln!(out, "            dims: {}", xyz(g.dims));
                let _ = writeln!(out, "            nodes: {}", hostlist(g.nodes.clone()));
            }
        }
        if !torus.placements.is_empty() {
            out.push_str("        placements:\n");
            for p in &torus.placements {
                let _ = writeln!(out, "          - dims: {}", xyz(p.dims));
                let _ = writeln!(out, "            anchor_seed: {}", xyz(p.seed));
                let _ = writeln!(out, "            anchor_spacing: {}", xyz(p.spacing));
            }
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::SlurmMachine;
    use super::*;

    pub(super) const REGIONS: &str = "\
- topology: topo-torus
  cluster_default: true
  torus3d:
    toruses:
      - name: pod1
        dims:
          x: 4
          y: 4
          z: 2
        regions:
          - anchor: {x: 0, y: 0, z: 0}
            dims: {x: 4, y: 2, z: 2}
            nodes: rack1-node[01-16]
          - anchor: {x: 0, y: 2, z: 0}
            dims: {x: 4, y: 2, z: 2}
            nodes: rack2-node[01-16]
        placements:
          - dims: {x: 2, y: 2, z: 2}
          - dims: {x: 4, y: 2, z: 1}
            anchor_spacing: {x: 2, y: 2, z: 1}
          - dims: {x: 4, y: 2, z: 1}
            anchor_seed: {x: 1, y: 0, z: 0}
";

    #[test]
    fn the_guides_region_example_reads() {
        let m = SlurmMachine::parse_yaml(REGIONS, "t.yaml", None).unwrap();
        assert_eq!(m.num_nodes(), 32);
        let t = &m.toruses().unwrap().toruses()[0];
        // rack2-node01 is the 17th node, at (0, 2, 0).
        assert_eq!(t.cell(0, 2, 0), Some(16));
        assert_eq!(t.coord_of(16), Some([0, 2, 0]));
        assert_eq!(t.cell(3, 1, 1), Some(15));
        let p = t.placements();
        assert_eq!(
            p.iter().map(PlacementShape::size).collect::<Vec<_>>(),
            [8, 8, 8]
        );
        // Equal sizes keep file order: 2x2x2, then the spaced 4x2x1.
        assert_eq!(p[0].dims(), [2, 2, 2]);
        assert_eq!(p[1].spacing(), [2, 2, 1]);
        assert_eq!(p[2].seed(), [1, 0, 0]);
        assert_eq!(p[0].anchor_count(), 2 * 2);
        assert_eq!(p[1].anchor_count(), 2 * 2 * 2);
        assert_eq!(p[1].anchor(1), Some([0, 0, 1]));
        assert_eq!(p[1].anchor(2), Some([0, 2, 0]));
        // 4x2x1 sub-cubes spaced 2 along x overlap each other.
        assert!(p[1].has_overlap());
        let back = SlurmMachine::parse_yaml(&m.to_conf(), "t.yaml", None).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn bad_tori_are_refused_with_their_line() {
        let base = "- topology: t\n  torus3d:\n    toruses:\n      - name: a\n";
        let cases: [(&str, usize, &str); 8] = [
            (
                "        dims: {x: 2, y: 2, z: 2}\n        nodes: n[0-6]\n",
                6,
                "2x2x2 = 8 cells",
            ),
            (
                "        dims: {x: 2, y: 0, z: 2}\n        nodes: n[0-6]\n",
                4,
                "x, y and z",
            ),
            (
                "        dims: {x: 2048, y: 2048, z: 2}\n",
                4,
                "more than the 524288",
            ),
            (
                "        dims: {x: 2, y: 2, z: 1}\n        nodes: n[0-3]\n        placements:\n          - dims: {x: 3, y: 1, z: 1}\n",
                8,
                "larger than the torus",
            ),
            (
                "        dims: {x: 2, y: 2, z: 1}\n        nodes: n[0-3]\n        placements:\n          - dims: {x: 1, y: 1, z: 1}\n            anchor_seed: {x: 2}\n",
                8,
                "anchor_seed",
            ),
            (
                "        dims: {x: 4, y: 1, z: 1}\n        regions:\n          - anchor: {x: 3}\n            dims: {x: 2, y: 1, z: 1}\n            nodes: n[0-1]\n",
                7,
                "reaches past",
            ),
            (
                "        dims: {x: 4, y: 1, z: 1}\n        regions:\n          - anchor: {x: 0}\n            dims: {x: 2, y: 1, z: 1}\n            nodes: n[0-1]\n          - anchor: {x: 1}\n            dims: {x: 2, y: 1, z: 1}\n            nodes: n[2-3]\n",
                10,
                "overlap at (1, 0, 0)",
            ),
            (
                "        dims: {x: 2, y: 1, z: 1}\n        nodes: n[0-1]\n        regions:\n          - anchor: {x: 0}\n",
                4,
                "both",
            ),
        ];
        for (tail, line, says) in cases {
            let text = format!("{base}{tail}");
            let e = SlurmMachine::parse_yaml(&text, "t.yaml", None).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn anchors_wrap_and_step_by_the_spacing() {
        assert_eq!(axis(4, 2, 1), vec![1, 3]);
        assert_eq!(axis(6, 4, 0), vec![0, 4, 2]);
        assert_eq!(axis(3, 3, 2), vec![2]);
        assert!(grids_meet((0, 2, 2), (1, 2, 2), 4));
        assert!(!grids_meet((0, 2, 1), (1, 2, 1), 4));
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::super::SlurmMachine;

    #[test]
    fn ring_and_torus_machines_round_trip_through_json() {
        let t = SlurmMachine::parse_yaml(super::tests::REGIONS, "t.yaml", None).unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<SlurmMachine>(&json).unwrap(), t);
        let r = SlurmMachine::parse_conf(
            "RingName=a Nodes=n[0-3]\nRingName=b Nodes=m[0-1]\n",
            "r.conf",
        )
        .unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<SlurmMachine>(&json).unwrap(), r);
    }
}
