//! Scheduling policies by name: `fcfs`, `scan[direction=down]`,
//! `lazy[threshold=3]`, `m-fcfs[threshold=dynamic]`, …
//!
//! Names and parameters are written as for the allocator registry
//! ([`StrategySpec`]), and the same generic [`Registry`] finds and builds
//! them; this module holds only the list of built-in policies (the entry
//! type and the build error are in a leaf module the policy modules
//! import, re-exported here). Every policy takes `rotate=true|false`
//! (default `false`): whether box jobs accept any orientation (see
//! [`RequestMapping`](crate::RequestMapping)).
//!
//! A registry is a value: [`builtin`] gives a copy of the built-ins that
//! takes a user's own policies ([`Registry::register`]), and
//! [`Registry::spec`] parses a policy's text once into a [`PolicySpec`]
//! that builds a fresh instance per run.
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

use partalloc_allocators::StrategySpec;
pub use partalloc_allocators::registry::{RegisterError, Registry, Spec};
use partalloc_topology::Topology;

use crate::Scheduler;
pub use crate::entry::{
    ANY_TOPOLOGY, Entry, ParamInfo, PolicyBuildError, PolicyEntry, ROTATE, StrategyInfo, mapping,
    with_rotate,
};

/// A registry of scheduling policies.
pub type PolicyRegistry = Registry<dyn Scheduler, PolicyBuildError>;

/// A scheduling policy chosen once (see [`Spec`]): parse it with
/// [`Registry::spec`], build an instance per run with [`Spec::build`].
pub type PolicySpec = Spec<dyn Scheduler, PolicyBuildError>;

/// A copy of the built-in policies, to extend with one's own (see
/// [`Registry::register`] and the crate documentation's "Writing a
/// policy").
#[must_use]
pub fn builtin() -> PolicyRegistry {
    POLICIES.clone()
}

/// Every built-in scheduling policy, in listing order.
pub static POLICIES: PolicyRegistry = Registry::new("scheduling policy", "policies", BUILTIN);

/// The built-in policies' entries, in listing order: append a new one
/// here.
const BUILTIN: &[PolicyEntry] = &[
    crate::fcfs::ENTRY,
    crate::scan::ENTRY,
    crate::static_partitioning::ENTRY,
    crate::lazy::ENTRY,
    crate::mfcfs::ENTRY,
    crate::easy::ENTRY,
    crate::priority::ENTRY,
    crate::conservative::ENTRY,
    crate::rlscheduler::ENTRY,
    crate::slurm::ENTRY,
];

/// The built-in policies, in listing order.
pub fn policies() -> impl Iterator<Item = &'static StrategyInfo> {
    POLICIES.info()
}

/// The built-in entry named `name`, if any.
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
             conservative-backfilling, rlscheduler, slurm"
        );
        let e = build("fcfs[", &topo).unwrap_err();
        assert!(matches!(e, PolicyBuildError::Spec(_)), "{e}");
        // Every policy runs on every family of machine.
        for p in policies() {
            assert_eq!(p.topologies, ANY_TOPOLOGY, "{}", p.name);
        }
    }
}
