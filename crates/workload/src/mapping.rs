//! Mapping a processor count onto a shape for a target machine.
//!
//! Traces such as the Parallel Workloads Archive's record only how many
//! processors a job used. To replay them on a partitionable machine each
//! count p becomes a shape:
//!
//! - hypercube Q_n: the subcube Q_⌈log₂ p⌉ (the smallest that holds p);
//! - mesh or torus with sides L_0, …, L_{d−1}: the *most square box that
//!   fits* — among boxes with s_i ≤ L_i and Π s_i ≥ p, the one with the
//!   shortest longest side; ties by fewest nodes (least internal
//!   fragmentation); remaining ties by the longer sides in the lower
//!   dimensions (lexicographically largest (s_0, s_1, …)). For example on
//!   a 16×16 mesh: 7 → 3×3, 8 → 3×3, 6 → 3×2, 12 → 4×3, 17 → 5×4;
//! - pod: the smallest catalogue shape that holds p (ties: the
//!   lexicographically smallest sides), as `ShapeCatalogue::round_up`;
//! - any machine, non-contiguous: the plain count;
//! - nodes of c cores (a Slurm machine, where jobs ask for nodes): the
//!   plain count ⌈p / c⌉ ([`ShapeMapping::nodes_of_cores`]).
//!
//! ```
//! use partalloc_workload::{JobShape, ShapeMapping};
//! use partalloc_topology::Topology;
//!
//! let mesh = ShapeMapping::for_topology(&"mesh:16x16".parse::<Topology>()?);
//! assert_eq!(mesh.shape_for(12)?.to_string(), "4x3");
//! let cube = ShapeMapping::for_topology(&"hypercube:7".parse::<Topology>()?);
//! assert_eq!(cube.shape_for(33)?, JobShape::Cube { dim: 6 });
//! assert!(cube.shape_for(129).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{Coords, MAX_DIMS, Topology};

use crate::{JobShape, WorkloadError};

/// Which way a trace's processor counts become requests, as
/// `--mapping`, a sweep file's `mapping = "…"` and Python's `mapping=`
/// name it; [`TraceMapping::on`] gives the [`ShapeMapping`] of a machine.
///
/// ```
/// use partalloc_workload::TraceMapping;
/// assert_eq!("nodes".parse::<TraceMapping>()?, TraceMapping::Nodes);
/// assert_eq!(
///     "boxes".parse::<TraceMapping>().unwrap_err().to_string(),
///     "mapping \"boxes\": use \"shapes\" (subcubes, the most square box or the smallest catalogue shape) or \"nodes\" (plain counts)"
/// );
/// # Ok::<(), partalloc_workload::UnknownMapping>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TraceMapping {
    /// The machine's own shapes ([`ShapeMapping::for_topology`]).
    #[default]
    Shapes,
    /// Plain node counts, for non-contiguous allocation
    /// ([`ShapeMapping::nodes_of`]).
    Nodes,
}

impl TraceMapping {
    /// Every mapping, in the order messages list them.
    pub const ALL: [TraceMapping; 2] = [TraceMapping::Shapes, TraceMapping::Nodes];

    /// Its name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Shapes => "shapes",
            Self::Nodes => "nodes",
        }
    }

    /// The mapping of counts onto `topology`.
    #[must_use]
    pub fn on(self, topology: &Topology) -> ShapeMapping {
        match self {
            Self::Shapes => ShapeMapping::for_topology(topology),
            Self::Nodes => ShapeMapping::nodes_of(topology),
        }
    }
}

impl core::fmt::Display for TraceMapping {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A mapping name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error(
    "mapping \"{name}\": use \"shapes\" (subcubes, the most square box or the smallest catalogue shape) or \"nodes\" (plain counts)"
)]
pub struct UnknownMapping {
    /// The name given, cut for echoing.
    pub name: String,
}

impl core::str::FromStr for TraceMapping {
    type Err = UnknownMapping;

    fn from_str(s: &str) -> Result<Self, UnknownMapping> {
        TraceMapping::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| UnknownMapping {
                name: partalloc_topology::echo(s),
            })
    }
}

/// How processor counts become shapes on one machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per replay; the inline catalogue keeps the mapping Copy"
)]
pub enum ShapeMapping {
    /// Subcubes of an n-cube.
    Hypercube {
        /// n.
        dim: u32,
    },
    /// Boxes of a mesh or torus with these sides.
    Grid {
        /// The machine's sides, dimension 0 first.
        sides: Coords,
    },
    /// Plain node counts on a machine of `total` nodes.
    Nodes {
        /// The machine's nodes.
        total: u64,
    },
    /// Node counts from processor counts: p processors on nodes of
    /// `cores_per_node` processors ask for ⌈p / cores_per_node⌉ nodes.
    NodesOfCores {
        /// The machine's nodes.
        total: u64,
        /// Processors per node, at least 1.
        cores_per_node: u32,
    },
    /// A pod's catalogue shapes: the smallest that holds the count.
    Catalogue {
        /// The catalogue (its weights are not used).
        shapes: crate::CatalogueShapes,
        /// The pod's chips.
        total: u64,
    },
}

impl ShapeMapping {
    /// Subcubes for a hypercube, catalogue shapes for a pod (boxes if its
    /// catalogue is longer than [`crate::MAX_CATALOGUE_SHAPES`]), boxes for
    /// a mesh or torus.
    #[must_use]
    pub fn for_topology(topology: &Topology) -> Self {
        let catalogue = topology
            .as_pod()
            .and_then(|p| crate::CatalogueShapes::new(p.catalogue(), None).ok());
        if let Some(shapes) = catalogue {
            Self::Catalogue {
                shapes,
                total: topology.num_nodes() as u64,
            }
        } else if let Some(h) = topology.as_hypercube() {
            Self::Hypercube { dim: h.dim() }
        } else if let Some(g) = topology.as_grid() {
            Self::Grid { sides: *g.sides() }
        } else {
            Self::Nodes {
                total: topology.num_nodes() as u64,
            }
        }
    }

    /// Plain node counts on any machine (for non-contiguous allocation).
    #[must_use]
    pub fn nodes_of(topology: &Topology) -> Self {
        Self::Nodes {
            total: topology.num_nodes() as u64,
        }
    }

    /// Node counts of ⌈p / `cores_per_node`⌉ for a job of p processors,
    /// on any machine.
    ///
    /// ```
    /// use partalloc_workload::{JobShape, ShapeMapping};
    /// use partalloc_topology::Topology;
    /// let m = ShapeMapping::nodes_of_cores(&"mesh:12x12".parse::<Topology>()?, 72)?;
    /// assert_eq!(m.shape_for(145)?, JobShape::Nodes { count: 3 });
    /// assert!(m.shape_for(144 * 72 + 1).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`WorkloadError::NotPositive`] for 0 cores per node.
    pub fn nodes_of_cores(topology: &Topology, cores_per_node: u32) -> Result<Self, WorkloadError> {
        if cores_per_node == 0 {
            return Err(WorkloadError::NotPositive {
                name: "cores per node",
                value: 0.0,
            });
        }
        Ok(Self::NodesOfCores {
            total: topology.num_nodes() as u64,
            cores_per_node,
        })
    }

    /// The machine's nodes.
    #[must_use]
    pub fn machine_nodes(&self) -> u64 {
        match self {
            Self::Hypercube { dim } => 1u64.checked_shl(*dim).unwrap_or(u64::MAX),
            Self::Grid { sides } => sides.product(),
            Self::Nodes { total }
            | Self::NodesOfCores { total, .. }
            | Self::Catalogue { total, .. } => *total,
        }
    }

    /// The shape for a job of `processors` processors.
    ///
    /// # Errors
    /// [`WorkloadError::BadSize`] for 0 processors or more than the machine
    /// has.
    #[inline]
    pub fn shape_for(&self, processors: u64) -> Result<JobShape, WorkloadError> {
        if let Self::NodesOfCores {
            total,
            cores_per_node,
        } = *self
        {
            let nodes = processors.div_ceil(u64::from(cores_per_node.max(1)));
            return Self::Nodes { total }.shape_for(nodes);
        }
        let machine = self.machine_nodes();
        if processors == 0 || processors > machine {
            return Err(WorkloadError::BadSize {
                nodes: processors,
                machine,
            });
        }
        match self {
            Self::Hypercube { .. } => Ok(JobShape::Cube {
                dim: processors.next_power_of_two().trailing_zeros(),
            }),
            Self::Grid { sides } => Ok(JobShape::Box {
                sides: most_square_box(sides, processors).ok_or(WorkloadError::BadSize {
                    nodes: processors,
                    machine,
                })?,
            }),
            Self::Catalogue { shapes, .. } => {
                let fit = shapes.shapes().iter().find(|s| s.product() >= processors);
                fit.map(|&sides| JobShape::Box { sides })
                    .ok_or_else(|| WorkloadError::BadShape {
                        reason: format!(
                            "no catalogue shape holds {processors} chips; the largest holds {}",
                            shapes.shapes().last().map_or(0, Coords::product)
                        ),
                    })
            }
            Self::Nodes { .. } | Self::NodesOfCores { .. } => Ok(JobShape::Nodes {
                count: u32::try_from(processors).map_err(|_| WorkloadError::BadSize {
                    nodes: processors,
                    machine,
                })?,
            }),
        }
    }
}

/// The most square box of at least `p` nodes within `limits` (see the
/// module docs for the order), or `None` if none fits.
fn most_square_box(limits: &Coords, p: u64) -> Option<Coords> {
    let max_side = limits.iter().copied().max()?;
    let d = limits.len();
    // The longest side is at least ⌈p^{1/d}⌉.
    let mut cap = 1u32;
    while cap < max_side && u64::from(cap).checked_pow(d as u32).is_some_and(|v| v < p) {
        cap += 1;
    }
    let mut caps = [0u32; MAX_DIMS];
    let mut cur = [1u32; MAX_DIMS];
    while cap <= max_side {
        for (c, &l) in caps.iter_mut().zip(limits.iter()) {
            *c = l.min(cap);
        }
        let mut best: Option<(u64, [u32; MAX_DIMS])> = None;
        search(&caps[..d], p, 0, 1, &mut cur, &mut best);
        if let Some((_, sides)) = best {
            return Coords::new(sides.get(..d)?).ok();
        }
        cap += 1;
    }
    None
}

/// Depth-first over sides in descending order; the last side is the
/// smallest that reaches `p`. Keeps the first box of least area, which in
/// this order is the lexicographically largest among them.
fn search(
    caps: &[u32],
    p: u64,
    i: usize,
    prod: u64,
    cur: &mut [u32; MAX_DIMS],
    best: &mut Option<(u64, [u32; MAX_DIMS])>,
) {
    let Some(&cap) = caps.get(i) else {
        return;
    };
    if i + 1 == caps.len() {
        let need = p.div_ceil(prod).max(1);
        if need <= u64::from(cap) {
            let area = prod * need;
            if best.is_none_or(|(a, _)| area < a)
                && let (Some(slot), Ok(n)) = (cur.get_mut(i), u32::try_from(need))
            {
                *slot = n;
                *best = Some((area, *cur));
            }
        }
        return;
    }
    // The remaining dimensions can multiply by at most this much.
    let rest: u64 = caps.iter().skip(i + 1).map(|&c| u64::from(c)).product();
    for s in (1..=cap).rev() {
        let prod = prod * u64::from(s);
        if prod.saturating_mul(rest) < p {
            break; // smaller s cannot reach p either
        }
        if let Some(slot) = cur.get_mut(i) {
            *slot = s;
        }
        search(caps, p, i + 1, prod, cur, best);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mesh(sides: &[u32]) -> ShapeMapping {
        ShapeMapping::Grid {
            sides: Coords::new(sides).unwrap(),
        }
    }

    #[test]
    fn huge_machines_saturate() {
        assert_eq!(mesh(&[65536; 5]).machine_nodes(), u64::MAX);
    }

    fn sides(m: &ShapeMapping, p: u64) -> Vec<u32> {
        match m.shape_for(p).unwrap() {
            JobShape::Box { sides } => sides.to_vec(),
            other => panic!("{other}"),
        }
    }

    /// The literal definition: every box, sorted by the documented keys.
    fn brute(limits: &[u32], p: u64) -> Option<Vec<u32>> {
        let mut all: Vec<Vec<u32>> = vec![vec![]];
        for &l in limits {
            all = all
                .into_iter()
                .flat_map(|b| {
                    (1..=l).map(move |s| {
                        let mut b = b.clone();
                        b.push(s);
                        b
                    })
                })
                .collect();
        }
        all.into_iter()
            .filter(|b| b.iter().map(|&s| u64::from(s)).product::<u64>() >= p)
            .min_by(|a, b| {
                let key = |x: &Vec<u32>| {
                    (
                        *x.iter().max().unwrap(),
                        x.iter().map(|&s| u64::from(s)).product::<u64>(),
                    )
                };
                key(a).cmp(&key(b)).then_with(|| b.cmp(a))
            })
    }

    #[test]
    fn documented_examples() {
        let m = mesh(&[16, 16]);
        assert_eq!(sides(&m, 1), vec![1, 1]);
        assert_eq!(sides(&m, 7), vec![3, 3]);
        assert_eq!(sides(&m, 8), vec![3, 3]);
        assert_eq!(sides(&m, 6), vec![3, 2]);
        assert_eq!(sides(&m, 12), vec![4, 3]);
        assert_eq!(sides(&m, 17), vec![5, 4]);
        assert_eq!(sides(&m, 256), vec![16, 16]);
        // A thin machine forces long boxes.
        let thin = mesh(&[2, 64]);
        assert_eq!(sides(&thin, 20), vec![2, 10]);
        assert!(matches!(
            m.shape_for(257),
            Err(WorkloadError::BadSize {
                nodes: 257,
                machine: 256
            })
        ));
        assert!(m.shape_for(0).is_err());
        let c = ShapeMapping::Hypercube { dim: 7 };
        assert_eq!(c.shape_for(1).unwrap(), JobShape::Cube { dim: 0 });
        assert_eq!(c.shape_for(64).unwrap(), JobShape::Cube { dim: 6 });
        assert_eq!(c.shape_for(65).unwrap(), JobShape::Cube { dim: 7 });
        let n = ShapeMapping::Nodes { total: 10 };
        assert_eq!(n.shape_for(7).unwrap(), JobShape::Nodes { count: 7 });
        assert!(n.shape_for(11).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn matches_brute_force(
            limits in proptest::collection::vec(1u32..9, 1..4),
            frac in 0.0f64..1.0,
        ) {
            let total: u64 = limits.iter().map(|&l| u64::from(l)).product();
            let p = 1 + ((total - 1) as f64 * frac) as u64;
            let m = mesh(&limits);
            prop_assert_eq!(Some(sides(&m, p)), brute(&limits, p));
        }
    }
}

#[cfg(test)]
mod pod_tests {
    use partalloc_topology::pod::Pod;

    use super::*;

    #[test]
    fn a_count_rounds_up_to_the_smallest_catalogue_shape() {
        let v4: Topology = "tpu-v4".parse::<Pod>().unwrap().into();
        let m = ShapeMapping::for_topology(&v4);
        let shape = |p| m.shape_for(p).unwrap().to_string();
        // 2x2x1 = 4, 2x2x2 = 8, 2x2x4 = 16, 2x4x4 = 32, 4x4x4 = 64, 4x4x8 = 128.
        assert_eq!(shape(1), "2x2x1");
        assert_eq!(shape(4), "2x2x1");
        assert_eq!(shape(5), "2x2x2");
        assert_eq!(shape(33), "4x4x4");
        assert_eq!(shape(65), "4x4x8");
        assert_eq!(shape(4096), "16x16x16");
        assert_eq!(m.machine_nodes(), 4096);
        assert!(m.shape_for(4097).is_err());
        let small: Topology = "tpu-v4:8x8x8".parse::<Pod>().unwrap().into();
        let e = ShapeMapping::for_topology(&small)
            .shape_for(512)
            .map(|s| s.to_string());
        assert_eq!(e, Ok("8x8x8".to_owned()));
    }
}
