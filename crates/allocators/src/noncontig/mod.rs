//! Non-contiguous allocation on meshes: the strategies the allocation
//! literature compares contiguous ones against since the late 1990s.
//!
//! | type | registry name | source |
//! |---|---|---|
//! | [`Mbs`] | `mbs` | Lo, Windisch, Liu & Nitzberg, IEEE TPDS 8(7) 1997 (multiple buddy strategy); layered on 3-D meshes as PReMAS and SST do |
//! | [`GranularMbs`] | `granular-mbs` | MBS over a binary block tree built by pairwise merging (PReMAS, SST) |
//! | [`OctetMbs`] | `octet-mbs` | MBS with cubes split into eight octants (PReMAS, SST) |
//! | [`Gabl`] | `gabl` | Bani-Mohammad, Ould-Khaoua, Ababneh & Mackenzie 2007 (greedy available busy list) |
//! | [`RandomNodes`] | `random` | uniformly random free nodes, seeded: the floor every study reports |
//!
//! Every strategy here takes any request kind and serves its node count
//! (a box request's shape matters to [`Gabl`] only); it grants exactly the
//! nodes asked for, as several boxes ([`Partition::Boxes`]) or nodes
//! ([`Partition::Nodes`]). They run on meshes and, treating them as the
//! mesh of the same sides (the wrap-around links are not used to place
//! blocks), tori of one to three dimensions; none of the papers defines a
//! torus variant. Faulty nodes are never granted. Node ⟨x,y,z⟩ of an
//! X×Y×Z mesh has id x + X·(y + Y·z), as in PReMAS.
//!
//! How far apart a grant's nodes end up is measured by
//! [`dispersal`](crate::dispersal).
//!
//! ```
//! use partalloc_allocators::{registry, Request};
//! use partalloc_topology::Topology;
//! let machine: Topology = "mesh:8x8".parse()?;
//! let mut mbs = registry::build("mbs", &machine)?;
//! // 7 = 1·4 + 3·1 in base 4: one 2×2 block and three single nodes, split
//! // off the free 2×2 with the lowest x, then y (⟨0,2⟩).
//! let g = mbs.allocate(&Request::nodes(7))?;
//! assert_eq!(g.granted_nodes(), 7);
//! assert_eq!(g.partition().to_string(), "⟨0,0⟩⟨1,1⟩ ∪ ⟨0,2⟩⟨0,2⟩ ∪ ⟨0,3⟩⟨0,3⟩ ∪ ⟨1,2⟩⟨1,2⟩");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Partition::Boxes`]: crate::Partition::Boxes
//! [`Partition::Nodes`]: crate::Partition::Nodes

use partalloc_topology::{GridBox, Topology, TopologyKind};

use crate::BuildError;

mod buddy;
mod gabl;
mod granular_mbs;
mod mbs;
mod octet_mbs;
mod random;

pub use buddy::MAX_BUDDY_NODES;
pub use gabl::Gabl;
pub use granular_mbs::GranularMbs;
pub use mbs::Mbs;
pub use octet_mbs::OctetMbs;
pub use random::{RandomDraw, RandomNodes};

pub(crate) use gabl::ENTRY as GABL_ENTRY;
pub(crate) use granular_mbs::ENTRY as GRANULAR_MBS_ENTRY;
pub(crate) use mbs::ENTRY as MBS_ENTRY;
pub(crate) use octet_mbs::ENTRY as OCTET_MBS_ENTRY;
pub(crate) use random::ENTRY as RANDOM_ENTRY;

/// The machine families of the mesh strategies here (1- to 3-D, checked by
/// the constructors).
pub(crate) const GRID_KINDS: &[TopologyKind] = &[TopologyKind::Mesh, TopologyKind::Torus];

/// The grid's dimension count and its sides padded to three with 1s;
/// refuses machines other than 1- to 3-D meshes and tori.
pub(crate) fn grid3(
    strategy: &'static str,
    topology: &Topology,
) -> Result<(usize, [u32; 3]), BuildError> {
    match topology {
        Topology::Grid(g) if g.dims() <= 3 => {
            let mut sides = [1u32; 3];
            sides[..g.dims()].copy_from_slice(g.sides());
            Ok((g.dims(), sides))
        }
        _ => Err(BuildError::UnsuitableTopology {
            strategy,
            topology: topology.to_string(),
            reason:
                "needs a mesh or torus of one to three dimensions, e.g. mesh:16x16 or mesh:8x8x8"
                    .to_owned(),
        }),
    }
}

/// The box with this base and these extents, in `dims` dimensions (the
/// coordinates past `dims` must be 0 and the extents 1).
pub(crate) fn box3(
    strategy: &'static str,
    topology: &Topology,
    dims: usize,
    base: [u32; 3],
    extents: [u32; 3],
) -> Result<GridBox, BuildError> {
    GridBox::new(&base[..dims], &extents[..dims]).map_err(|e| BuildError::UnsuitableTopology {
        strategy,
        topology: topology.to_string(),
        reason: e.to_string(),
    })
}

/// ⌊log₂ n⌋ as a power of two: the side of the largest power-of-two square
/// or cube that fits n (n ≥ 1).
pub(crate) fn pow2_floor(n: u32) -> u32 {
    1 << (31 - n.max(1).leading_zeros())
}

#[cfg(test)]
mod premas_replay;
#[cfg(test)]
mod tests;
