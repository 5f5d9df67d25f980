//! Strategies by name: `buddy`, `partner-ext[delta=2]`, `fsl`, …
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

use thiserror::Error;

use partalloc_topology::{Topology, TopologyKind};

use crate::{Allocator, SpecError, StrategySpec};

/// A parameter of a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key, as written inside the brackets.
    pub name: &'static str,
    /// The default, as text.
    pub default: &'static str,
    /// What it means and which values it takes.
    pub doc: &'static str,
}

/// What the registry knows about a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyInfo {
    /// The name it is built by.
    pub name: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where it comes from (paper and section).
    pub source: &'static str,
    /// Its parameters.
    pub params: &'static [ParamInfo],
    /// The machine families it accepts.
    pub topologies: &'static [TopologyKind],
}

/// Builds a strategy for a machine from a parsed spec.
pub type Constructor = fn(&Topology, &StrategySpec) -> Result<Box<dyn Allocator>, RegistryError>;

/// A registered strategy.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Its description.
    pub info: StrategyInfo,
    /// Its constructor.
    pub build: Constructor,
}

/// Why a strategy could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// No strategy has this name.
    #[error("unknown allocation strategy {name:?}; known strategies: {known}")]
    Unknown {
        /// The name given.
        name: String,
        /// The registered names.
        known: String,
    },
    /// The strategy does not run on this kind of machine.
    #[error("{strategy} does not run on {topology}; it accepts: {accepted}")]
    UnsupportedTopology {
        /// The strategy.
        strategy: &'static str,
        /// The machine given.
        topology: String,
        /// What it accepts.
        accepted: String,
    },
    /// The machine is of an accepted family but unsuitable (e.g. sides that
    /// are not powers of two where the strategy needs them).
    #[error("{strategy} cannot run on {topology}: {reason}")]
    UnsuitableTopology {
        /// The strategy.
        strategy: &'static str,
        /// The machine given.
        topology: String,
        /// Why.
        reason: String,
    },
    /// The name or a parameter is malformed or invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// Every registered strategy, in listing order.
pub const ENTRIES: &[Entry] = &[
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
    crate::paging::ENTRY,
];

/// The registered strategies.
pub fn strategies() -> impl Iterator<Item = &'static StrategyInfo> {
    ENTRIES.iter().map(|e| &e.info)
}

/// The entry named `name`, if any.
#[must_use]
pub fn find(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.info.name == name)
}

/// Builds the strategy described by `spec` (e.g. `partner-ext[delta=2]`)
/// for `topology`.
///
/// # Errors
/// A malformed spec, an unknown name (the message lists the known ones), an
/// unknown or invalid parameter, or a machine the strategy does not accept.
pub fn build(spec: &str, topology: &Topology) -> Result<Box<dyn Allocator>, RegistryError> {
    build_spec(&spec.parse()?, topology)
}

/// As [`build`], from a parsed spec.
///
/// # Errors
/// As [`build`].
pub fn build_spec(
    spec: &StrategySpec,
    topology: &Topology,
) -> Result<Box<dyn Allocator>, RegistryError> {
    let entry = find(spec.name()).ok_or_else(|| RegistryError::Unknown {
        name: spec.name().to_owned(),
        known: ENTRIES
            .iter()
            .map(|e| e.info.name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    if !entry.info.topologies.contains(&topology.kind()) {
        return Err(RegistryError::UnsupportedTopology {
            strategy: entry.info.name,
            topology: topology.to_string(),
            accepted: entry
                .info
                .topologies
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let known: Vec<&str> = entry.info.params.iter().map(|p| p.name).collect();
    spec.check_known(&known)?;
    (entry.build)(topology, spec)
}

#[cfg(test)]
mod tests {
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
        for e in ENTRIES {
            let topo: Topology = match e.info.topologies[0] {
                TopologyKind::Hypercube => "hypercube:6",
                TopologyKind::Mesh => "mesh:8x8",
                _ => "torus:8x8",
            }
            .parse()
            .unwrap();
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
}
