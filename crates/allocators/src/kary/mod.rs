//! Strategies for k-ary n-cubes (Kang, Yu, Youn, Lee & Kim, "Isomorphic
//! Strategy for Processor Allocation in k-Ary n-Cube Systems", IEEE TC
//! 2003) and the baselines that paper compares against.
//!
//! - [`Isomorphic`]: Kang's isomorphic partitioning (Alg. 1 and 2, noncubic
//!   jobs §4.2, cubic systems with unequal sides §4.3).
//! - Slice partitioning (Kang §2): [`ExtendedBuddy`], [`ExtendedGrayCode`],
//!   [`KaryPartner`]; they grant whole k-ary R-slices, so smaller jobs waste
//!   nodes (visible as the grant's internal fragmentation).
//! - Job-based partitioning (Kang §2): [`Sniffing`] (fixed orientation) and
//!   [`Etc`] (every orientation, recognition-complete), both exact searches
//!   made fast with row bit words.
//!
//! The baselines follow the definitions of
//! `docs/baselines.md#k-ary-n-cube-strategies`; the request → slice-dimension
//! mapping (`docs/baselines.md#slice-mapping`) is the [`SliceMapping`]
//! parameter.
//!
//! ```
//! use partalloc_allocators::kary::{Etc, Isomorphic};
//! use partalloc_allocators::{Allocator, Request};
//! let machine: partalloc_topology::Topology = "kary:8^3".parse()?;
//! let mut iso = Isomorphic::new(machine.clone())?;
//! // Kang §4.2: a 2×2×8 job is folded into a semi-isomorphic 2×4×4 box.
//! let g = iso.allocate(&Request::boxed(&[8, 2, 2])?)?;
//! assert_eq!(g.granted_nodes(), 32);
//! let mut etc = Etc::new(machine)?;
//! let h = etc.allocate(&Request::boxed(&[4, 4, 1])?.any_orientation())?;
//! assert_eq!(h.granted_nodes(), 16);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod common;
pub mod etc;
pub mod extended_buddy;
pub mod extended_gray_code;
pub mod isomorphic;
pub mod kary_partner;
mod search;
mod slice;
pub mod sniffing;

pub use crate::rowgrid::SearchMode;
pub use etc::Etc;
pub use extended_buddy::ExtendedBuddy;
pub use extended_gray_code::ExtendedGrayCode;
pub use isomorphic::Isomorphic;
pub use kary_partner::KaryPartner;
pub use sniffing::Sniffing;

use core::fmt;
use core::str::FromStr;

use partalloc_topology::{Grid, Topology, TopologyKind};

use crate::BuildError;
use crate::{AllocError, Request};

/// How a box request is mapped to the dimension R of the k-ary R-slice a
/// slice-partitioning strategy grants (`docs/baselines.md#slice-mapping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SliceMapping {
    /// R = the smallest r with k^r ≥ the job's node count (the default;
    /// Kang Fig. 1a and his "8×1 slice" remark).
    #[default]
    NodeCount,
    /// R = the number of sides greater than 1 (Gautam's m-ary R-cube
    /// semantics; every side must be at most k).
    Topological,
}

impl fmt::Display for SliceMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NodeCount => "node-count",
            Self::Topological => "topological",
        })
    }
}

impl FromStr for SliceMapping {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "node-count" => Ok(Self::NodeCount),
            "topological" => Ok(Self::Topological),
            _ => Err("expected node-count or topological".to_owned()),
        }
    }
}

/// The grid of a k-ary n-cube (equal sides) or fail with a registry error.
pub(crate) fn kary_grid(
    strategy: &'static str,
    topology: &Topology,
) -> Result<(Grid, u32), BuildError> {
    let unsuitable = |reason: &str| BuildError::UnsuitableTopology {
        strategy,
        topology: topology.to_string(),
        reason: reason.to_owned(),
    };
    let grid = *topology
        .as_grid()
        .ok_or_else(|| unsuitable("it needs a k-ary n-cube (mesh or torus)"))?;
    let k = grid
        .radix()
        .ok_or_else(|| unsuitable("every side must be equal (a k-ary n-cube)"))?;
    if k < 2 {
        return Err(unsuitable("the radix k must be at least 2"));
    }
    Ok((grid, k))
}

/// The grid of any mesh or torus.
pub(crate) fn any_grid(strategy: &'static str, topology: &Topology) -> Result<Grid, BuildError> {
    topology.as_grid().copied().ok_or_else(|| {
        crate::error::UnsupportedTopology::new(
            strategy,
            topology,
            &[TopologyKind::Mesh, TopologyKind::Torus],
        )
        .into()
    })
}

/// The sides of a box request, checked against the grid's dimensions.
pub(crate) fn box_sides<'a>(
    strategy: &'static str,
    grid: &Grid,
    request: &'a Request,
) -> Result<(&'a [u32], bool), AllocError> {
    match request {
        Request::Box { sides, rotate } => {
            if sides.len() != grid.dims() {
                return Err(AllocError::Invalid {
                    request: *request,
                    reason: format!(
                        "the box has {} sides but the machine has {} dimensions",
                        sides.len(),
                        grid.dims()
                    ),
                });
            }
            if sides.contains(&0) {
                return Err(AllocError::Invalid {
                    request: *request,
                    reason: "a side is 0".to_owned(),
                });
            }
            Ok((sides.as_slice(), *rotate))
        }
        _ => Err(AllocError::Unsupported {
            strategy,
            request: *request,
            reason: "k-ary n-cube strategies take box requests (Request::boxed)",
        }),
    }
}

/// The slice dimension R for a request on a k-ary N-cube.
pub(crate) fn slice_dim(
    strategy: &'static str,
    mapping: SliceMapping,
    grid: &Grid,
    k: u32,
    request: &Request,
) -> Result<u32, AllocError> {
    let (sides, _) = box_sides(strategy, grid, request)?;
    let n = grid.dims() as u32;
    let r = match mapping {
        SliceMapping::NodeCount => {
            let want = sides
                .iter()
                .fold(1u64, |acc, &s| acc.saturating_mul(u64::from(s)));
            let mut r = 0;
            let mut cap = 1u64;
            while cap < want && r <= n {
                cap = cap.saturating_mul(u64::from(k));
                r += 1;
            }
            r
        }
        SliceMapping::Topological => {
            if sides.iter().any(|&s| s > k) {
                return Err(AllocError::Invalid {
                    request: *request,
                    reason: format!("a side exceeds the radix {k} (mapping=topological)"),
                });
            }
            sides.iter().filter(|&&s| s > 1).count() as u32
        }
    };
    if r > n {
        return Err(AllocError::Invalid {
            request: *request,
            reason: format!(
                "it needs more nodes than the {} of the machine",
                grid.num_nodes()
            ),
        });
    }
    Ok(r)
}

/// Parses the `mapping` parameter.
pub(crate) fn mapping_param(spec: &crate::StrategySpec) -> Result<SliceMapping, BuildError> {
    Ok(spec.parse_or(MAPPING_PARAM.name, SliceMapping::default())?)
}

pub(crate) const MAPPING_PARAM: crate::entry::ParamInfo = crate::entry::ParamInfo {
    name: "mapping",
    default: "node-count",
    doc: "request → slice dimension R: node-count (smallest R with k^R ≥ nodes) or topological (R = number of sides > 1)",
};
