//! Scheduling policies by name: `fcfs`, `scan[direction=down]`,
//! `lazy[threshold=3]`, `m-fcfs[threshold=dynamic]`, …
//!
//! Names and parameters are written as for the allocator registry
//! ([`StrategySpec`]), and the same generic [`Registry`] finds and builds
//! them; this module holds only the policies' entries and their error. Every policy takes `rotate=true|false` (default
//! `false`): whether box jobs accept any orientation (see
//! [`RequestMapping`]).
//!
//! ```
//! use partalloc_schedulers::registry;
//! use partalloc_topology::Topology;
//! let machine: Topology = "hypercube:10".parse()?;
//! let s = registry::build("scan[direction=down,arrivals=same-pass]", &machine)?;
//! assert_eq!(s.name(), "scan[direction=down,arrivals=same-pass]");
//! let err = registry::build("sjf", &machine).unwrap_err().to_string();
//! assert!(err.contains("m-fcfs") && err.contains("lazy"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use partalloc_allocators::registry::{ANY_TOPOLOGY, Entry, ParamInfo, Registry, StrategyInfo};
use partalloc_allocators::registry::{UnknownName, UnsupportedTopology};
use partalloc_allocators::{SpecError, StrategySpec};
use partalloc_topology::Topology;
use thiserror::Error;

use crate::{RequestMapping, Scheduler};

/// A registered scheduling policy.
pub type PolicyEntry = Entry<dyn Scheduler, PolicyBuildError>;

/// Why a scheduling policy could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PolicyBuildError {
    /// No policy has this name.
    #[error(transparent)]
    Unknown(#[from] UnknownName),
    /// The policy does not run on this family of machine.
    #[error(transparent)]
    UnsupportedTopology(#[from] UnsupportedTopology),
    /// The policy cannot run on this machine.
    #[error("{policy} cannot run on {topology}: {reason}")]
    UnsuitableTopology {
        /// The policy.
        policy: &'static str,
        /// The machine given.
        topology: String,
        /// Why.
        reason: String,
    },
    /// The name or a parameter is malformed or invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// The `rotate` parameter every policy takes.
pub(crate) const ROTATE: ParamInfo = ParamInfo {
    name: "rotate",
    default: "false",
    doc: "whether box jobs accept any orientation: true or false",
};

/// The request mapping given by a spec's `rotate` parameter.
pub(crate) fn mapping(spec: &StrategySpec) -> Result<RequestMapping, SpecError> {
    Ok(RequestMapping {
        rotate: spec.parse_or("rotate", false)?,
    })
}

/// `name[params]`, with `rotate=true` appended when set.
pub(crate) fn with_rotate(name: &str, mapping: RequestMapping, params: String) -> String {
    let mut items = params;
    if mapping.rotate {
        if !items.is_empty() {
            items.push(',');
        }
        items.push_str("rotate=true");
    }
    if items.is_empty() {
        name.to_owned()
    } else {
        format!("{name}[{items}]")
    }
}

/// Every scheduling policy, in listing order.
pub const POLICIES: Registry<dyn Scheduler, PolicyBuildError> = Registry::new(
    "scheduling policy",
    "policies",
    &[
        crate::fcfs::ENTRY,
        crate::scan::ENTRY,
        crate::static_partitioning::ENTRY,
        crate::lazy::ENTRY,
        crate::mfcfs::ENTRY,
        crate::easy::ENTRY,
        crate::priority::ENTRY,
        crate::conservative::ENTRY,
        crate::rlscheduler::ENTRY,
    ],
);

/// The registered policies, in listing order.
pub fn policies() -> impl Iterator<Item = &'static StrategyInfo> {
    POLICIES.info()
}

/// The entry named `name`, if any.
#[must_use]
pub fn find(name: &str) -> Option<&'static PolicyEntry> {
    POLICIES.find(name)
}

/// Builds the policy described by `spec` for `topology`.
///
/// # Errors
/// A malformed spec, an unknown name (the message lists the known ones), an
/// unknown or invalid parameter, or a machine the policy cannot serve.
pub fn build(spec: &str, topology: &Topology) -> Result<Box<dyn Scheduler>, PolicyBuildError> {
    POLICIES.build(spec, topology)
}

/// As [`build`], from a parsed spec.
///
/// # Errors
/// As [`build`].
pub fn build_spec(
    spec: &StrategySpec,
    topology: &Topology,
) -> Result<Box<dyn Scheduler>, PolicyBuildError> {
    POLICIES.build_spec(spec, topology)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_unique_documented_and_round_trip() {
        let topo: Topology = "hypercube:6".parse().unwrap();
        let mut names: Vec<_> = policies().map(|p| p.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        for p in policies() {
            assert!(!p.summary.is_empty() && !p.source.is_empty());
            for q in p.params {
                assert!(!q.doc.is_empty(), "{}.{}", p.name, q.name);
            }
            let s = build(p.name, &topo).unwrap();
            // The canonical name builds the same policy again.
            let again = build(&s.name(), &topo).unwrap();
            assert_eq!(again.name(), s.name());
            assert_eq!(s.queue_len(), 0);
        }
    }

    #[test]
    fn parameterised_names() {
        let topo: Topology = "hypercube:4".parse().unwrap();
        for (text, canonical) in [
            ("m-fcfs[threshold=dynamic]", "m-fcfs[threshold=dynamic]"),
            ("lazy[threshold=3]", "lazy[threshold=3]"),
            (
                "scan[direction=down,arrivals=same-pass]",
                "scan[direction=down,arrivals=same-pass]",
            ),
            ("fcfs[rotate=true]", "fcfs[rotate=true]"),
        ] {
            assert_eq!(build(text, &topo).unwrap().name(), canonical);
        }
        let e = build("lazy[bogus=1]", &topo).unwrap_err().to_string();
        assert!(e.contains("bogus") && e.contains("threshold"), "{e}");
        let e = build("m-fcfs[threshold=-2]", &topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("threshold"), "{e}");
        let e = build("scan[direction=sideways]", &topo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("up") && e.contains("down"), "{e}");
    }

    #[test]
    fn refusals_come_from_the_shared_mechanism_with_this_registrys_words() {
        let topo: Topology = "mesh:4x4".parse().unwrap();
        let e = build("sjf", &topo).unwrap_err();
        assert!(matches!(e, PolicyBuildError::Unknown(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "unknown scheduling policy \"sjf\"; known policies: fcfs, scan, \
             static-partitioning, lazy, m-fcfs, easy-backfilling, priority, \
             conservative-backfilling, rlscheduler"
        );
        let e = build("fcfs[", &topo).unwrap_err();
        assert!(matches!(e, PolicyBuildError::Spec(_)), "{e}");
        // Every policy runs on every family of machine.
        for p in policies() {
            assert_eq!(p.topologies, ANY_TOPOLOGY, "{}", p.name);
        }
    }
}
