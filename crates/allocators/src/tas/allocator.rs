//! Kueue TAS as an [`Allocator`]: the registry strategy `tas` on capacity
//! machines (`racks:8x18x4gpu`, `kueue:TOPOLOGY,NODES`).
//!
//! The machine's nodes, as the rest of the workspace counts them, are its
//! allocation units ([`CapacityMachine::unit_resource`]: the GPUs), so a
//! request of N nodes is a job asking for N GPUs. It becomes a pod set of
//! ⌈N / `gpus-per-pod`⌉ pods, each asking `gpus-per-pod` units (1 by
//! default) and one `pods`; with slices the pod count is rounded up to
//! whole slices. The extra units a rounded job holds are internal
//! fragmentation, as with Slurm's segments. The pod set is placed by
//! [`Tas`] with the strategy's algorithm, mode and level, and the grant is
//! the lowest free units of each leaf Kueue chose, as a node list.
//!
//! A job that does not fit now waits ([`AllocError::NoRoom`]); one that
//! would not fit even on the empty machine (5 pods under `required` on a
//! 4-GPU hostname level) is refused as invalid, as Kueue marks such a
//! workload inadmissible rather than leaving it pending for ever.
//!
//! ```
//! use partalloc_allocators::{registry, Allocator, AllocError, Request};
//! use partalloc_topology::Topology;
//!
//! let racks: Topology = "racks:8x18x4gpu".parse()?;
//! let mut a = registry::build("tas[mode=required,level=rack]", &racks)?;
//! // 8 GPUs in one rack: two whole nodes of rack 0.
//! let g = a.allocate(&Request::nodes(8))?;
//! assert_eq!(g.partition().node_list(&racks)?, (0..8).collect::<Vec<_>>());
//! let mut host = registry::build("tas[mode=required,level=hostname]", &racks)?;
//! assert!(matches!(host.allocate(&Request::nodes(5)), Err(AllocError::Invalid { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use partalloc_topology::capacity::{CapacityMachine, PODS_RESOURCE};
use partalloc_topology::{NodeId, Topology, TopologyKind};

use super::{KUEUE_RELEASE, Tas, TasAlgorithm, TasAssignment, TasError, TasMode, TasRequest};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::error::UnsupportedTopology;
use crate::strategy::{GrantRecord, Managed, Strategy, View};
use crate::{
    AllocError, BuildError, FaultError, Grant, Occupancy, Partition, ReleaseError, Request,
    StrategySpec,
};

/// The settings of one `tas[...]` strategy, in machine terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TasSettings {
    /// The algorithm.
    pub algorithm: TasAlgorithm,
    /// Required, preferred or unconstrained.
    pub mode: TasMode,
    /// The level index (ignored when unconstrained).
    pub level: usize,
    /// Pods per slice and the slice level index, if sliced.
    pub slice: Option<(u32, usize)>,
    /// Allocation units (GPUs) per pod.
    pub units_per_pod: u32,
}

/// What [`Managed`] keeps of a TAS grant: the pods per leaf (for the
/// usage) and its units.
#[derive(Debug, Clone)]
pub struct TasGrant {
    assignment: TasAssignment,
    units: Vec<NodeId>,
}

impl TasGrant {
    /// The pods per leaf.
    #[must_use]
    pub fn assignment(&self) -> &TasAssignment {
        &self.assignment
    }
}

impl GrantRecord for TasGrant {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, topology: &Topology, busy: bool) {
        self.units.mark(occupancy, topology, busy);
    }

    fn available(&self, occupancy: &Occupancy, topology: &Topology) -> bool {
        self.units.available(occupancy, topology)
    }

    #[inline]
    fn partition(&self) -> Partition {
        Partition::Nodes(self.units.clone())
    }
}

/// A Kueue TAS strategy bound to one capacity machine, the strategy
/// [`Managed`] runs.
#[derive(Debug, Clone)]
pub struct TasAllocator {
    machine: Arc<CapacityMachine>,
    settings: TasSettings,
    request: TasRequest,
    tas: Tas,
    empty: Tas,
    ever_fits: HashMap<u32, bool>,
}

impl TasAllocator {
    /// The strategy on a capacity machine.
    ///
    /// # Errors
    /// [`BuildError::UnsupportedTopology`] for another machine;
    /// [`BuildError::UnsuitableTopology`] for a level past the machine's,
    /// a slice level above the request's level, an algorithm Kueue does
    /// not run in the mode, zero units per pod, or units per pod other
    /// than 1 on a machine without GPUs (its unit is a pod).
    pub fn new(topology: &Topology, settings: TasSettings) -> Result<Managed<Self>, BuildError> {
        let Some(machine) = topology.as_capacity() else {
            return Err(
                UnsupportedTopology::new("tas", topology, &[TopologyKind::Capacity]).into(),
            );
        };
        let unsuitable = |reason: String| BuildError::UnsuitableTopology {
            strategy: "tas",
            topology: topology.to_string(),
            reason,
        };
        let levels = machine.levels().len();
        let slice_level = settings.slice.map(|(_, l)| l);
        if let Some(l) = [Some(settings.level), slice_level]
            .into_iter()
            .flatten()
            .find(|&l| l >= levels)
        {
            return Err(unsuitable(format!(
                "level {l} is past the machine's {levels} levels"
            )));
        }
        if let Some(l) = slice_level
            && settings.mode != TasMode::Unconstrained
            && l < settings.level
        {
            return Err(unsuitable(format!(
                "the slice level {} is above the level {}; slices must stay within the request's level",
                machine.levels()[l],
                machine.levels()[settings.level]
            )));
        }
        match (settings.algorithm, settings.mode) {
            (TasAlgorithm::LeastFreeCapacity, m) if m != TasMode::Unconstrained => {
                return Err(unsuitable(format!(
                    "kueue {KUEUE_RELEASE} runs least-free-capacity only for unconstrained requests"
                )));
            }
            (TasAlgorithm::Balanced, m) if m != TasMode::Preferred => {
                return Err(unsuitable(format!(
                    "kueue {KUEUE_RELEASE} runs balanced only for preferred requests"
                )));
            }
            _ => {}
        }
        let unit = machine.unit_resource();
        let pod = match (unit == PODS_RESOURCE, settings.units_per_pod) {
            (_, 0) => return Err(unsuitable("a pod takes at least one unit".to_owned())),
            (true, 1) => machine.pod_request(&[]),
            (true, n) => {
                return Err(unsuitable(format!(
                    "the machine has no GPUs (its unit is a pod), so gpus-per-pod must be 1, not {n}"
                )));
            }
            (false, n) => machine.pod_request(&[(unit, i64::from(n))]),
        }
        .map_err(|e| unsuitable(e.to_string()))?;
        if machine.num_units() == 0 {
            return Err(unsuitable("the machine has no allocation units".to_owned()));
        }
        let mut request =
            TasRequest::new(1, pod, settings.mode, settings.level, settings.algorithm);
        request.slice = settings.slice;
        let tas = Tas::new(Arc::clone(machine));
        let strategy = Self {
            machine: Arc::clone(machine),
            settings,
            request,
            empty: tas.clone(),
            tas,
            ever_fits: HashMap::new(),
        };
        Ok(Managed::new(topology.clone(), strategy))
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> TasSettings {
        self.settings
    }

    /// The machine.
    #[must_use]
    pub fn machine(&self) -> &Arc<CapacityMachine> {
        &self.machine
    }

    /// Pods a job of `units` units asks for: whole pods, then whole slices.
    fn pods_for(&self, units: u32) -> u32 {
        let pods = units.div_ceil(self.settings.units_per_pod);
        match self.settings.slice {
            Some((size, _)) if size > 0 => pods.div_ceil(size).saturating_mul(size),
            _ => pods,
        }
    }

    /// Whether the current request fits on the empty machine (cached by
    /// pod count).
    fn fits_empty(&mut self) -> bool {
        let count = self.request.count;
        if let Some(&fits) = self.ever_fits.get(&count) {
            return fits;
        }
        let fits = self.empty.place(&self.request).is_ok();
        self.ever_fits.insert(count, fits);
        fits
    }
}

impl Strategy for TasAllocator {
    type Record = TasGrant;

    fn name(&self) -> String {
        let s = &self.settings;
        let levels = self.machine.levels();
        let mut name = format!(
            "tas[algorithm={},mode={}",
            s.algorithm.name(),
            s.mode.name()
        );
        if s.mode != TasMode::Unconstrained {
            name.push_str(",level=");
            name.push_str(&levels[s.level]);
        }
        if let Some((size, level)) = s.slice {
            name.push_str(&format!(",slice-size={size},slice-level={}", levels[level]));
        }
        if s.units_per_pod != 1 {
            name.push_str(&format!(",gpus-per-pod={}", s.units_per_pod));
        }
        name.push(']');
        name
    }

    fn choose(
        &mut self,
        view: &View<'_, TasGrant>,
        request: &Request,
    ) -> Result<Option<TasGrant>, AllocError> {
        let total = self.machine.num_units();
        let want = request.node_count();
        let units = u32::try_from(want)
            .ok()
            .filter(|&u| u > 0 && u as usize <= total);
        let Some(units) = units else {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!("needs {want} GPUs; the machine has {total}"),
            });
        };
        self.request.count = self.pods_for(units);
        match self.tas.place(&self.request) {
            Ok(assignment) => {
                let per_pod = self.settings.units_per_pod;
                let mut taken = Vec::with_capacity(self.request.count as usize * per_pod as usize);
                for &(leaf, pods) in assignment.entries() {
                    let mut need = pods as usize * per_pod as usize;
                    for u in self.machine.leaf_units(leaf as usize) {
                        if need == 0 {
                            break;
                        }
                        if view.is_available(u) {
                            taken.push(u);
                            need -= 1;
                        }
                    }
                    if need > 0 {
                        return Err(AllocError::Invalid {
                            request: *request,
                            reason: format!("leaf {leaf} lacks {need} free units (internal error)"),
                        });
                    }
                }
                Ok(Some(TasGrant {
                    assignment,
                    units: taken,
                }))
            }
            Err(TasError::NoFit { .. }) if self.fits_empty() => Ok(None),
            Err(TasError::NoFit {
                fit,
                total: of,
                unit,
            }) => Err(AllocError::Invalid {
                request: *request,
                reason: format!(
                    "it never fits, even on the empty machine: the topology allows to fit only {fit} out of {of} {unit}(s)"
                ),
            }),
            Err(e) => Err(AllocError::Invalid {
                request: *request,
                reason: e.to_string(),
            }),
        }
    }

    /// Refused ([`AllocError::ProbeUnsupported`]): a probe on a copy would
    /// copy the usage of every leaf; a caller tries and gives back.
    fn fits(&self, _: &View<'_, TasGrant>, _: &Request) -> Result<Option<bool>, AllocError> {
        Err(AllocError::ProbeUnsupported {
            strategy: self.name(),
        })
    }

    fn committed(&mut self, _: &View<'_, TasGrant>, grant: &TasGrant) {
        self.tas.commit(&grant.assignment, &self.request.pod);
    }

    fn released(&mut self, _: &View<'_, TasGrant>, grant: &TasGrant) {
        self.tas.release(&grant.assignment, &self.request.pod);
    }

    /// Refused: Kueue's counts have no faulty nodes.
    fn takes_faults(&self) -> Result<(), FaultError> {
        Err(FaultError::Unsupported {
            strategy: self.name(),
        })
    }
}

impl Managed<TasAllocator> {
    /// The pods per leaf of a live grant of this allocator.
    ///
    /// # Errors
    /// [`ReleaseError`] for a grant that is not live here.
    pub fn assignment(&self, grant: &Grant) -> Result<&TasAssignment, ReleaseError> {
        self.record(grant).map(TasGrant::assignment)
    }

    /// How many domains of each level (widest first) a live grant
    /// touches: the job's locality measure (1 at a level means the job
    /// stayed within one domain there).
    ///
    /// # Errors
    /// [`ReleaseError`] for a grant that is not live here.
    pub fn domains_per_level(&self, grant: &Grant) -> Result<Vec<u32>, ReleaseError> {
        let held = self.record(grant)?;
        let m = self.machine();
        let last = m.levels().len() - 1;
        let mut per_level = vec![0u32; m.levels().len()];
        let mut seen = Vec::with_capacity(held.assignment.entries().len() * 2);
        for &(leaf, _) in held.assignment.entries() {
            let (mut d, mut level) = (m.leaf_domain(leaf as usize), last);
            loop {
                if !seen.contains(&d) {
                    seen.push(d);
                    per_level[level] += 1;
                }
                match m.parent(d) {
                    Some(p) => (d, level) = (p, level - 1),
                    None => break,
                }
            }
        }
        Ok(per_level)
    }
}

/// A level named in a spec: the label itself, the part after its last
/// `/`, or the part after that part's last `-` (`rack` for
/// `cloud.provider.com/topology-rack`, `hostname` for
/// `kubernetes.io/hostname`).
fn level_by_name(machine: &CapacityMachine, name: &str) -> Option<usize> {
    let levels = machine.levels();
    let short = |l: &str| -> bool {
        let tail = l.rsplit('/').next().unwrap_or(l);
        tail == name || tail.rsplit('-').next() == Some(name)
    };
    levels.iter().position(|l| l == name).or_else(|| {
        let mut found = levels.iter().enumerate().filter(|(_, l)| short(l));
        match (found.next(), found.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    })
}

fn settings_of(topology: &Topology, spec: &StrategySpec) -> Result<TasSettings, BuildError> {
    let Some(machine) = topology.as_capacity() else {
        return Err(UnsupportedTopology::new("tas", topology, &[TopologyKind::Capacity]).into());
    };
    let mode = spec.choice(
        "mode",
        &[
            ("preferred", TasMode::Preferred),
            ("required", TasMode::Required),
            ("unconstrained", TasMode::Unconstrained),
        ],
    )?;
    let algorithm = match spec.get("algorithm").map(str::trim) {
        None | Some("default") => TasAlgorithm::kueue_default(mode),
        Some(_) => spec.choice(
            "algorithm",
            &[
                ("best-fit", TasAlgorithm::BestFit),
                ("least-free-capacity", TasAlgorithm::LeastFreeCapacity),
                ("balanced", TasAlgorithm::Balanced),
            ],
        )?,
    };
    let levels = machine.levels().len();
    let level_of = |key: &str, default: usize| -> Result<usize, BuildError> {
        match spec.get(key).map(str::trim) {
            None => Ok(default),
            Some(v) => level_by_name(machine, v).ok_or_else(|| {
                spec.invalid(
                    key,
                    format!(
                        "expected one of the machine's levels: {}",
                        machine.levels().join(", ")
                    ),
                )
                .into()
            }),
        }
    };
    // Default: the level just above the nodes (the rack of racks:).
    let level = level_of("level", levels.saturating_sub(2))?;
    // A positive count, or `none` (the documented default).
    let positive = |key: &str| -> Result<Option<u32>, BuildError> { Ok(spec.count_or_none(key)?) };
    let slice = match (positive("slice-size")?, spec.get("slice-level")) {
        (None, None) => None,
        (Some(size), _) => Some((size, level_of("slice-level", levels - 1)?)),
        (None, Some(_)) => {
            return Err(spec
                .invalid("slice-level", "a slice level needs slice-size as well")
                .into());
        }
    };
    let units_per_pod = positive("gpus-per-pod")?.unwrap_or(1);
    Ok(TasSettings {
        algorithm,
        mode,
        level,
        slice,
        units_per_pod,
    })
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "tas",
        summary: "Kueue v0.19.2 Topology-Aware Scheduling: a job of N GPUs is a pod set placed by BestFit, LeastFreeCapacity or BalancedPlacement under a required, preferred or unconstrained level",
        source: "Kueue v0.19.2: KEP 2724, pkg/cache/scheduler/tas_flavor_snapshot.go, tas_balanced_placement.go; docs/kueue.md",
        params: &[
            ParamInfo {
                name: "mode",
                default: "preferred",
                doc: "required (all pods in one domain of the level, or wait), preferred (that level if possible, else wider) or unconstrained (any nodes)",
            },
            ParamInfo {
                name: "algorithm",
                default: "default",
                doc: "best-fit, least-free-capacity (unconstrained only) or balanced (preferred only); default is Kueue's: least-free-capacity for unconstrained, best-fit otherwise",
            },
            ParamInfo {
                name: "level",
                default: "the level above the nodes",
                doc: "a node label of the machine's levels, or its last word (block, rack, hostname)",
            },
            ParamInfo {
                name: "slice-size",
                default: "none",
                doc: "pods per slice, each slice within one domain of slice-level; the pod count is rounded up to whole slices",
            },
            ParamInfo {
                name: "slice-level",
                default: "the lowest level",
                doc: "the level each slice stays within (needs slice-size)",
            },
            ParamInfo {
                name: "gpus-per-pod",
                default: "1",
                doc: "allocation units (GPUs) each pod asks for; a job of N GPUs is ceil(N / gpus-per-pod) pods",
            },
        ],
        topologies: &[TopologyKind::Capacity],
    },
    build: |t, spec| Ok(Box::new(TasAllocator::new(t, settings_of(t, spec)?)?)),
};
