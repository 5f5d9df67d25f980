//! Strategies by name: `buddy`, `partner-ext[delta=2]`, `fsl`, …
//!
//! [`ALLOCATORS`] lists every strategy; [`build`], [`find`] and
//! [`strategies`] reach it. The mechanism behind it, [`Registry`], is
//! generic over what is built and also serves the scheduling policies of
//! `partalloc-schedulers`: a registry supplies its [`Entry`] list and its
//! error type, and the name lookup, spec parsing, parameter check and
//! machine-family check are the registry's.
//!
//! ```
//! use partalloc_allocators::registry;
//! use partalloc_topology::Topology;
//! let topo: Topology = "hypercube:6".parse()?;
//! let alloc = registry::build("paging", &topo)?;
//! assert_eq!(alloc.name(), "paging");
//! let err = registry::build("no-such", &topo).unwrap_err().to_string();
//! assert!(err.contains("paging"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod generic;

pub use generic::{
    ANY_TOPOLOGY, Constructor, Entry, ParamInfo, Registry, StrategyInfo, UnknownName,
    UnsupportedTopology,
};

use partalloc_topology::Topology;

pub use crate::BuildError;
use crate::{Allocator, StrategySpec};

/// A registered allocation strategy.
pub type AllocatorEntry = Entry<dyn Allocator, BuildError>;

/// Every allocation strategy, in listing order.
pub const ALLOCATORS: Registry<dyn Allocator, BuildError> = Registry::new(
    "allocation strategy",
    "strategies",
    &[
        crate::hypercube::BUDDY,
        crate::hypercube::BUDDY_FREE_LIST,
        crate::hypercube::GRAY_CODE,
        crate::hypercube::MULTIPLE_GRAY_CODE,
        crate::hypercube::PARTNER,
        crate::hypercube::PARTNER_EXT,
        crate::kary::isomorphic::ENTRY,
        crate::kary::extended_buddy::ENTRY,
        crate::kary::extended_gray_code::ENTRY,
        crate::kary::kary_partner::ENTRY,
        crate::kary::etc::ENTRY,
        crate::kary::sniffing::ENTRY,
        crate::mesh::FSL_ENTRY,
        crate::mesh::ADAPTIVE_SCAN_ENTRY,
        crate::mesh::BUSY_LIST_ENTRY,
        crate::mesh::FRAME_SLIDING_ENTRY,
        crate::mesh::FIRST_FIT_ENTRY,
        crate::mesh::BEST_FIT_ENTRY,
        crate::mesh::BUDDY_2D_ENTRY,
        crate::mesh::FSL_3D_ENTRY,
        crate::slurm::BLOCK_ENTRY,
        crate::slurm::BLOCK_BUDDY_ENTRY,
        crate::slurm::TREE_ENTRY,
        crate::slurm::RING_ENTRY,
        crate::slurm::TORUS3D_ENTRY,
        crate::paging::ENTRY,
        crate::pod::FIRST_FIT_ENTRY,
        crate::pod::BEST_FIT_ENTRY,
        crate::pod::RECONFIGURABLE_ENTRY,
        crate::pod::FREE_LIST_ENTRY,
        crate::noncontig::MBS_ENTRY,
        crate::noncontig::GRANULAR_MBS_ENTRY,
        crate::noncontig::OCTET_MBS_ENTRY,
        crate::noncontig::GABL_ENTRY,
        crate::noncontig::RANDOM_ENTRY,
        crate::curve::FIRST_FIT_ENTRY,
        crate::curve::BEST_FIT_ENTRY,
        crate::curve::SORTED_FREE_LIST_ENTRY,
        crate::nearest::GEN_ALG_ENTRY,
        crate::nearest::MM_ENTRY,
        crate::nearest::MC1X1_ENTRY,
        crate::nearest::MC_ENTRY,
    ],
);

/// The registered strategies, in listing order.
pub fn strategies() -> impl Iterator<Item = &'static StrategyInfo> {
    ALLOCATORS.info()
}

/// The entry named `name`, if any.
#[must_use]
pub fn find(name: &str) -> Option<&'static AllocatorEntry> {
    ALLOCATORS.find(name)
}

/// Builds the strategy described by `spec` (e.g. `partner-ext[delta=2]`)
/// for `topology`.
///
/// # Errors
/// A malformed spec, an unknown name (the message lists the known ones), an
/// unknown or invalid parameter, or a machine the strategy does not accept.
pub fn build(spec: &str, topology: &Topology) -> Result<Box<dyn Allocator>, BuildError> {
    ALLOCATORS.build(spec, topology)
}

/// As [`build`], from a parsed spec.
///
/// # Errors
/// As [`build`].
pub fn build_spec(
    spec: &StrategySpec,
    topology: &Topology,
) -> Result<Box<dyn Allocator>, BuildError> {
    ALLOCATORS.build_spec(spec, topology)
}

#[cfg(test)]
mod tests {
    use partalloc_topology::TopologyKind;

    use super::*;

    #[test]
    fn names_are_unique_and_params_documented() {
        let mut names: Vec<_> = strategies().map(|s| s.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate strategy names");
        for s in strategies() {
            assert!(!s.summary.is_empty() && !s.source.is_empty(), "{}", s.name);
            assert!(!s.topologies.is_empty(), "{}", s.name);
            for p in s.params {
                assert!(!p.doc.is_empty(), "{}.{}", s.name, p.name);
            }
        }
    }

    #[test]
    fn every_strategy_builds_on_an_accepted_machine_with_defaults() {
        for e in ALLOCATORS.entries() {
            let slurm = |conf: &str| {
                partalloc_topology::slurm::SlurmMachine::parse_conf(conf, "t.conf")
                    .unwrap()
                    .into()
            };
            let topo: Topology = match e.info.topologies[0] {
                TopologyKind::Hypercube => "hypercube:6".parse().unwrap(),
                TopologyKind::Mesh => "mesh:8x8".parse().unwrap(),
                TopologyKind::Blocks => {
                    slurm("BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[4-7]\n")
                }
                TopologyKind::Tree => slurm("SwitchName=a Nodes=n[0-3]\n"),
                TopologyKind::Ring => slurm("RingName=a Nodes=n[0-3]\n"),
                TopologyKind::Torus3d => partalloc_topology::slurm::SlurmMachine::parse_yaml(
                    "- topology: t\n  torus3d:\n    toruses:\n      - name: a\n        dims: {x: 2, y: 2, z: 1}\n        nodes: n[0-3]\n",
                    "t.yaml",
                    None,
                )
                .unwrap()
                .into(),
                TopologyKind::Pod => "pod:tpu-v4:8x8x8".parse().unwrap(),
                _ => "torus:8x8".parse().unwrap(),
            };
            let a = build(e.info.name, &topo).unwrap();
            assert_eq!(a.free_nodes(), topo.num_nodes(), "{}", e.info.name);
        }
    }

    #[test]
    fn unknown_parameter_lists_known_ones() {
        let topo: Topology = "hypercube:3".parse().unwrap();
        let e = build("paging[bogus=1]", &topo).unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
    }

    #[test]
    fn refusals_name_the_registry_and_what_it_accepts() {
        let mesh: Topology = "mesh:4x4".parse().unwrap();
        let e = build("buddy", &mesh).unwrap_err();
        assert_eq!(
            e,
            BuildError::UnsupportedTopology(UnsupportedTopology {
                strategy: "buddy",
                topology: "mesh:4x4".to_owned(),
                accepted: "hypercube".to_owned(),
            })
        );
        let e = build("sjf", &mesh).unwrap_err().to_string();
        assert!(
            e.starts_with("unknown allocation strategy \"sjf\"; known strategies: buddy, "),
            "{e}"
        );
        let names: Vec<&str> = ALLOCATORS.names().collect();
        assert_eq!(names.len(), ALLOCATORS.entries().len());
        assert!(names.iter().all(|n| find(n).is_some()));
        assert!(find("sjf").is_none());
    }
}
