//! Interconnection topologies of partitionable parallel machines.
//!
//! This crate describes the machines that processor allocators carve into
//! partitions — binary hypercubes, k-ary n-cubes, and meshes and tori with
//! arbitrary sides — together with the partitions themselves: subcubes with
//! ternary addresses, axis-aligned boxes, strided subtori of tori
//! ([`Subtorus`], Gupta & Srimani §2.1), and flat node sets ([`NodeSet`],
//! with [`FreeSet`] for free lists that need the least member fast); and small
//! explicit graphs with Kang et al.'s cross and dot products
//! ([`TupleGraph`]).
//!
//! # Quick start
//!
//! ```
//! use partalloc_topology::{Grid, GridBox, Hypercube, Subcube, Topology};
//!
//! // A 16-ary 3-cube (a 16×16×16 mesh) and a box inside it.
//! let mesh = Grid::kary_ncube(16, 3, false)?;
//! let job = GridBox::new(&[0, 4, 8], &[2, 4, 8])?;
//! let nodes: Vec<_> = mesh.box_nodes(&job)?.collect();
//! assert_eq!(nodes.len(), 64);
//! assert_eq!(nodes[0], mesh.id_of(&[0, 4, 8])?);
//!
//! // A hypercube and one of its subcubes, written as the papers do.
//! let q4 = Hypercube::new(4)?;
//! let s: Subcube = "0X1X".parse()?;
//! assert!(s.nodes().all(|n| q4.check_node(n).is_ok()));
//!
//! // Machines parse from short descriptions.
//! let t: Topology = "torus:8x8".parse()?;
//! assert_eq!(t.diameter(), 8);
//! # Ok::<(), partalloc_topology::TopologyError>(())
//! ```
//!
//! # Conventions
//!
//! - `coords[i]` is the position along dimension `i`; node id =
//!   Σ a_i · Π_{j<i} k_j, so dimension 0 varies fastest. The papers print
//!   tuples high dimension first, (a_{n−1}, …, a_0).
//! - A hypercube node id has bit `i` = dimension `i`; subcube addresses print
//!   most significant dimension first (`0X1X`).
//! - A mesh has no wrap-around links; a torus has them in every dimension.
//!
//! # Features
//!
//! - `serde`: `Serialize`/`Deserialize` for the public data types.

#![deny(missing_docs)]

pub mod capacity;
mod coords;
mod error;
pub mod files;
mod freeset;
pub mod gpushare;
pub mod gray;
mod grid;
mod gridbox;
mod hypercube;
mod kary_gray;
pub mod nodeset;
mod orientation;
mod partition_step;
pub mod pod;
mod products;
pub mod slurm;
mod subtorus;
mod topology;
mod wrap;

pub use coords::{Coords, MAX_DIMS};
pub use error::{
    ECHO_CHARS, PATH_CHARS, TopologyError, echo, echo_number, echo_path, escaped, is_unsafe,
};
pub use freeset::FreeSet;
pub use grid::{BoxNodes, Grid};
pub use gridbox::{GridBox, permute};
pub use hypercube::{Hypercube, MAX_HYPERCUBE_DIM, Subcube};
pub use kary_gray::KaryGray;
pub use nodeset::NodeSet;
pub use orientation::{OrientationOrder, Orientations};
pub use partition_step::{PartitionSteps, StepAddress};
pub use products::{MAX_GRAPH_DIMS, MAX_GRAPH_EDGES, MAX_GRAPH_NODES, TupleGraph};
pub use subtorus::{Link, Span, Subtorus, SubtorusEdge, SubtorusFamily};
pub use topology::{Topology, TopologyKind, parse_sides};

/// A node's id within its machine (see the crate's conventions).
pub type NodeId = u32;

/// Largest number of nodes a machine may have, so that every node id fits
/// in a [`NodeId`].
pub const MAX_NODES: u64 = 1 << 31;
