//! Strategies by name: `buddy`, `partner-ext[delta=2]`, `fsl`, …
//!
//! [`ALLOCATORS`] lists every built-in strategy; [`build`], [`find`] and
//! [`strategies`] reach it. The mechanism behind it, [`Registry`], is
//! generic over what is built and also serves the scheduling policies of
//! `partalloc-schedulers`: a registry supplies its [`Entry`] list and its
//! error type, and the name lookup, spec parsing, parameter check and
//! machine-family check are the registry's.
//!
//! A registry is a value: [`builtin`] gives a copy of the built-ins that
//! takes a user's own strategies ([`Registry::register`]), and
//! [`Registry::spec`] parses a strategy's text once into an
//! [`AllocatorSpec`] that builds a fresh instance per run. The strategy
//! modules declare their entries with the types of a leaf module
//! (re-exported here); this list imports them, never the reverse.
//!
//! ```
//! use partalloc_allocators::registry;
//! use partalloc_topology::Topology;
//! let topo: Topology = "hypercube:6".parse()?;
//! let alloc = registry::build("paging", &topo)?;
//! assert_eq!(alloc.name(), "paging");
//! let err = registry::build("pagin", &topo).unwrap_err().to_string();
//! assert!(err.contains("did you mean \"paging\"?"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod generic;

pub use generic::{RegisterError, Registry, Spec};

use partalloc_topology::Topology;

pub use crate::BuildError;
pub use crate::entry::{ANY_TOPOLOGY, AllocatorEntry, Constructor, Entry, ParamInfo, StrategyInfo};
pub use crate::error::{UnknownName, UnsupportedTopology, closest_name};
use crate::{Allocator, StrategySpec};

/// A registry of allocation strategies.
pub type AllocatorRegistry = Registry<dyn Allocator, BuildError>;

/// An allocation strategy chosen once (see [`Spec`]): parse it with
/// [`Registry::spec`], build an instance per run with [`Spec::build`].
pub type AllocatorSpec = Spec<dyn Allocator, BuildError>;

/// Every built-in allocation strategy, in listing order.
pub static ALLOCATORS: AllocatorRegistry =
    Registry::new("allocation strategy", "strategies", BUILTIN);

/// A copy of the built-in strategies, to extend with one's own.
///
/// ```
/// use partalloc_allocators::paging::Paging;
/// use partalloc_allocators::registry::{self, ANY_TOPOLOGY, AllocatorEntry, Entry, StrategyInfo};
///
/// let mut strategies = registry::builtin();
/// strategies.register(Entry {
///     info: StrategyInfo {
///         name: "my-paging",
///         summary: "paging under another name",
///         source: "my lab notebook",
///         params: &[],
///         topologies: ANY_TOPOLOGY,
///     },
///     build: |topology, _| Ok(Box::new(Paging::new(topology.clone())?)),
/// })?;
/// let spec = strategies.spec("my-paging")?;
/// assert_eq!(spec.build(&"mesh:4x4".parse()?)?.free_nodes(), 16);
/// // The built-ins are still there; the shared list is unchanged.
/// assert!(strategies.find("fsl").is_some());
/// assert!(registry::find("my-paging").is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn builtin() -> AllocatorRegistry {
    ALLOCATORS.clone()
}

/// The built-in strategies' entries, in listing order: append a new one
/// here.
const BUILTIN: &[AllocatorEntry] = &[
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
    crate::tas::ENTRY,
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
    crate::gpushare::FGD,
    crate::gpushare::GPU_BEST_FIT,
    crate::gpushare::DOT_PRODUCT,
    crate::gpushare::GPU_PACKING,
    crate::gpushare::GPU_CLUSTERING,
    crate::gpushare::GPU_RANDOM,
];

/// The built-in strategies, in listing order.
pub fn strategies() -> impl Iterator<Item = &'static StrategyInfo> {
    ALLOCATORS.info()
}

/// The built-in entry named `name`, if any.
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
            let kind = e.info.topologies[0];
            let topo: Topology = match kind {
                // (Some pod strategies take only a 3-D pod.)
                TopologyKind::Pod => "pod:tpu-v4:8x8x8".parse().unwrap(),
                _ => kind.example(),
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
        let count = ALLOCATORS.entries().len();
        assert_eq!(
            e,
            format!(
                "unknown allocation strategy \"sjf\"; {count} known strategies, listed by `partalloc strategies` (Python: strategies())"
            )
        );
        // A near miss names the strategy meant; the line stays short.
        let e = build("FSLL", &mesh).unwrap_err().to_string();
        assert!(
            e.contains("(did you mean \"fsl\"?)") && e.len() < 200,
            "{e}"
        );
        let names: Vec<&str> = ALLOCATORS.names().collect();
        assert_eq!(names.len(), ALLOCATORS.entries().len());
        assert!(names.iter().all(|n| find(n).is_some()));
        assert!(find("sjf").is_none());
    }

    #[test]
    fn a_parsed_spec_builds_and_fails_as_the_name_does() {
        let machines: Vec<Topology> = ["hypercube:4", "mesh:4x4", "kary:4^3", "torus:4x4"]
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        let texts = [
            "paging",
            "buddy",
            "partner-ext[delta=2]",
            "partner-ext[delta=x]",
            "fsl[bogus=1]",
            "buddy[bogus=1]",
            "isomorphic[split=true]",
            "sjf",
            "fsl[",
        ];
        for topo in &machines {
            for text in texts {
                let by_name = build(text, topo).map(|a| (a.name(), a.free_nodes()));
                let by_spec = ALLOCATORS
                    .spec(text)
                    .and_then(|s| s.build(topo))
                    .map(|a| (a.name(), a.free_nodes()));
                assert_eq!(by_spec, by_name, "{text} on {topo}");
            }
        }
        let spec = ALLOCATORS.spec(" partner-ext[ delta = 2 ] ").unwrap();
        assert_eq!(spec.to_string(), "partner-ext[delta=2]");
        assert_eq!(spec.entry().map(|e| e.info.name), Some("partner-ext"));
    }

    #[test]
    fn registering_refuses_duplicates_bad_names_and_no_machine_leaving_it_unchanged() {
        let paging = *find("paging").unwrap();
        let renamed = |name: &'static str| Entry {
            info: StrategyInfo {
                name,
                ..paging.info
            },
            ..paging
        };
        let mut r = builtin();
        let n = r.entries().len();
        assert_eq!(
            r.register(renamed("fsl")),
            Err(RegisterError::Duplicate {
                kind: "allocation strategy",
                name: "fsl"
            })
        );
        for bad in ["", "a b", "x[y]", "k=v", "a,b"] {
            assert!(
                matches!(
                    r.register(renamed(bad)),
                    Err(RegisterError::InvalidName { .. })
                ),
                "{bad:?}"
            );
        }
        let nowhere = Entry {
            info: StrategyInfo {
                topologies: &[],
                ..renamed("nowhere").info
            },
            ..paging
        };
        assert!(matches!(
            r.register(nowhere),
            Err(RegisterError::NoMachineFamily { .. })
        ));
        assert_eq!(r.entries().len(), n);
        r.register(renamed("my-paging")).unwrap();
        assert_eq!(r.names().last(), Some("my-paging"));
        assert_eq!(ALLOCATORS.entries().len(), n, "the built-in list is shared");
        let topo: Topology = "mesh:4x4".parse().unwrap();
        assert_eq!(r.build("my-paging", &topo).unwrap().free_nodes(), 16);
        assert!(build("my-paging", &topo).is_err());
    }
}
