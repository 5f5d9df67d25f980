//! The six policies of the FGD paper (Weng et al., USENIX ATC 2023) as
//! strategies of GPU-sharing clusters ([`Topology::GpuShare`]): `fgd`,
//! `gpu-best-fit`, `dot-product`, `gpu-packing`, `gpu-clustering` and
//! `gpu-random[seed=]`.
//!
//! Each decides as `partalloc_gpushare::policy` does (its node scores, the
//! artifact's ties to the node whose name sorts first, its choice of GPUs
//! within the node), on the cluster state of
//! `partalloc_gpushare::experiment::ClusterState`; FGD and the
//! fragmentation this strategy keeps are judged against the cluster's
//! typical pods ([`GpuCluster::typical`]). A grant names the node the pod
//! was placed on ([`Partition::Nodes`] of one id); the ledger keeps the
//! exact GPUs and thousandths taken, so a release gives back exactly them.
//!
//! Requests: [`Request::Pod`] as asked; [`Request::Nodes`] of `n` (a
//! generated workload's job) is a pod of `n` whole GPUs of any model with
//! no CPU or memory; subcubes and boxes are not served.
//!
//! ```
//! use partalloc_allocators::{Allocator, Request, registry};
//! use partalloc_topology::Topology;
//! use partalloc_topology::gpushare::GpuRequest;
//!
//! let machine: Topology = "gpushare:2x4gpu".parse()?;
//! let mut fgd = registry::build("fgd", &machine)?;
//! let half = Request::Pod { request: GpuRequest::gpu(4000, 1024, 1, 500)? };
//! let g = fgd.allocate(&half)?;
//! assert_eq!(g.granted_nodes(), 1);
//! assert_eq!(fgd.free_nodes(), 1);
//! fgd.release(&g)?;
//! assert_eq!(fgd.free_nodes(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::Arc;

use partalloc_gpushare::experiment::ClusterState;
use partalloc_gpushare::gorand::GoRand;
use partalloc_gpushare::policy::Policy;
use partalloc_gpushare::{MAX_GPUS, MILLI, Placement};
use partalloc_topology::gpushare::{GpuCluster, GpuRequest};
use partalloc_topology::{NodeId, NodeSet, Topology, TopologyKind};

use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{AllocError, Allocator, BuildError, Grant, GrantLedger, Partition, ReleaseError};
use crate::{Request, StrategySpec};

const SOURCE: &str = "Weng et al., USENIX ATC 2023 (FGD) and its artifact; docs/fgd.md";
const GPUSHARE: &[TopologyKind] = &[TopologyKind::GpuShare];
const SEED: &[ParamInfo] = &[ParamInfo {
    name: "seed",
    default: "42",
    doc: "seed of Go's math/rand streams that draw the node and a share's GPU (a signed 64-bit integer); same seed, same grants",
}];

/// The strategy names, with their policies.
const NAMES: [(&str, Policy); 6] = [
    ("fgd", Policy::Fgd),
    ("gpu-best-fit", Policy::BestFit),
    ("dot-product", Policy::DotProd),
    ("gpu-packing", Policy::GpuPacking),
    ("gpu-clustering", Policy::GpuClustering),
    ("gpu-random", Policy::Random),
];

macro_rules! entry {
    ($name:literal, $summary:literal, $params:expr) => {
        Entry {
            info: StrategyInfo {
                name: $name,
                summary: $summary,
                source: SOURCE,
                params: $params,
                topologies: GPUSHARE,
            },
            build: |t, spec| Ok(Box::new(GpuShareAllocator::from_spec(t, spec)?)),
        }
    };
}

/// FGD: the node and GPUs where the cluster's expected fragmentation grows least.
pub(crate) const FGD: AllocatorEntry = entry!(
    "fgd",
    "fragmentation gradient descent: the node and GPU where expected fragmentation against the typical pods grows least",
    &[]
);
/// BestFit of the FGD evaluation.
pub(crate) const GPU_BEST_FIT: AllocatorEntry = entry!(
    "gpu-best-fit",
    "least CPU and GPU left after placing (the FGD paper's BestFit)",
    &[]
);
/// DotProd of the FGD evaluation.
pub(crate) const DOT_PRODUCT: AllocatorEntry = entry!(
    "dot-product",
    "smallest dot product of free and asked CPU and GPU (the FGD paper's DotProd)",
    &[]
);
/// GpuPacking of the FGD evaluation.
pub(crate) const GPU_PACKING: AllocatorEntry = entry!(
    "gpu-packing",
    "shared GPUs first, then free GPUs of used nodes, then empty nodes (the FGD paper's GpuPacking)",
    &[]
);
/// GpuClustering of the FGD evaluation.
pub(crate) const GPU_CLUSTERING: AllocatorEntry = entry!(
    "gpu-clustering",
    "nodes already running pods of the same GPU kind first (the FGD paper's GpuClustering)",
    &[]
);
/// Random of the FGD evaluation.
pub(crate) const GPU_RANDOM: AllocatorEntry = entry!(
    "gpu-random",
    "a uniformly drawn feasible node and GPU (the FGD paper's Random)",
    SEED
);

/// What a live grant holds: the node's position in the cluster state, the
/// request as placed and the GPUs taken.
#[derive(Debug, Clone, Copy)]
struct Held {
    pos: usize,
    request: GpuRequest,
    at: Placement,
}

/// The cluster's GPUs as a strategy sees them now, in thousandths: what
/// is allocated, idle and fragmented (FGD's measure against the typical
/// pods).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuReading {
    /// GPU thousandths of the cluster.
    pub total: f64,
    /// GPU thousandths allocated.
    pub used: f64,
    /// Idle GPU thousandths (every fragmentation class).
    pub idle: f64,
    /// Fragmented idle GPU thousandths (every class but Q3).
    pub frag: f64,
}

/// One of the six policies on a GPU-sharing cluster (see the module docs).
#[derive(Debug, Clone)]
pub struct GpuShareAllocator {
    topology: Topology,
    policy: Policy,
    seed: i64,
    state: ClusterState<'static>,
    node_rng: GoRand,
    gpu_rng: GoRand,
    ledger: GrantLedger<Held>,
    /// Live grants per node id.
    pods_on: Vec<u32>,
    busy: usize,
    total_milli: u64,
}

impl GpuShareAllocator {
    /// `policy` on `topology` (a GPU-sharing cluster); `seed` serves the
    /// Random policy's streams.
    ///
    /// # Errors
    /// [`BuildError::UnsuitableTopology`] for another machine family.
    pub fn new(topology: &Topology, policy: Policy, seed: i64) -> Result<Self, BuildError> {
        let cluster: &Arc<GpuCluster> =
            topology
                .as_gpushare()
                .ok_or_else(|| BuildError::UnsuitableTopology {
                    strategy: name_of(policy),
                    topology: partalloc_topology::echo(&topology.to_string()),
                    reason: "it needs a gpu-sharing cluster (gpushare:NxGgpu or openb:NODES.csv)"
                        .into(),
                })?;
        let state = ClusterState::owned(cluster.nodes(), cluster.typical().to_vec());
        Ok(GpuShareAllocator {
            topology: topology.clone(),
            policy,
            seed,
            state,
            node_rng: GoRand::new(seed),
            gpu_rng: GoRand::new(seed.wrapping_add(1)),
            ledger: GrantLedger::new(),
            pods_on: vec![0; cluster.nodes().len()],
            busy: 0,
            total_milli: u64::from(cluster.gpus()) * u64::from(MILLI),
        })
    }

    fn from_spec(topology: &Topology, spec: &StrategySpec) -> Result<Self, BuildError> {
        let policy = NAMES
            .iter()
            .find(|(n, _)| *n == spec.name())
            .map_or(Policy::BestFit, |&(_, p)| p);
        let seed = spec.parse_or("seed", 42_i64)?;
        Self::new(topology, policy, seed)
    }

    /// The same strategy as the canonical name `name` (what
    /// [`Allocator::name`] gives) on `topology`, fresh; `None` when `name`
    /// is not one of this module's strategies. A measure of a run builds
    /// one to follow the run's grants with [`Allocator::allocate_at`].
    #[must_use]
    pub fn same_as(name: &str, topology: &Topology) -> Option<Self> {
        let spec: StrategySpec = name.parse().ok()?;
        NAMES.iter().find(|(n, _)| *n == spec.name())?;
        Self::from_spec(topology, &spec).ok()
    }

    /// The policy it decides by.
    #[must_use]
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The cluster's GPUs now: allocated, idle and fragmented thousandths.
    #[must_use]
    pub fn reading(&self) -> GpuReading {
        let amount = self.state.frag_amount();
        GpuReading {
            total: self.total_milli as f64,
            used: self.state.used() as f64,
            idle: amount.iter().sum(),
            frag: partalloc_gpushare::frag::frag_of(&amount),
        }
    }

    /// The pod `request` stands for, or why it cannot be served anywhere.
    fn pod_of(&self, request: &Request) -> Result<GpuRequest, AllocError> {
        let pod = match *request {
            Request::Pod { request: pod } => pod,
            Request::Nodes { count } => {
                let gpus = u8::try_from(count)
                    .ok()
                    .filter(|&g| usize::from(g) <= MAX_GPUS && g > 0);
                let Some(gpus) = gpus else {
                    return Err(AllocError::Invalid {
                        request: *request,
                        reason: format!(
                            "a job of n nodes is a pod of n whole gpus here, and a pod takes 1 to {MAX_GPUS}"
                        ),
                    });
                };
                GpuRequest::gpu(0, 0, gpus, MILLI).map_err(|e| AllocError::Invalid {
                    request: *request,
                    reason: e.to_string(),
                })?
            }
            _ => {
                return Err(AllocError::Unsupported {
                    strategy: name_of(self.policy),
                    request: *request,
                    reason: "a gpu-sharing cluster serves pods (and node counts as whole gpus)",
                });
            }
        };
        let valid = match pod.gpus {
            0 => pod.gpu_milli == 0,
            1 => (1..=MILLI).contains(&pod.gpu_milli),
            n => usize::from(n) <= MAX_GPUS && pod.gpu_milli == MILLI,
        };
        if !valid {
            return Err(AllocError::Invalid {
                request: *request,
                reason: "a pod takes a share (1-1000 thousandths) of one gpu or whole gpus".into(),
            });
        }
        let cluster = self.topology.as_gpushare();
        if !cluster.is_some_and(|c| c.can_ever_hold(&pod)) {
            return Err(AllocError::Invalid {
                request: *request,
                reason: "no node of the cluster could hold it even empty".into(),
            });
        }
        Ok(pod)
    }

    fn no_room(&self, request: &Request) -> AllocError {
        AllocError::NoRoom {
            request: *request,
            free: self.free_nodes(),
            total: self.topology.num_nodes(),
        }
    }

    /// Places `pod` at `pos` on `at` and issues the grant.
    fn grant(
        &mut self,
        request: &Request,
        pod: GpuRequest,
        pos: usize,
        at: Placement,
    ) -> Result<Grant, AllocError> {
        let Some(node) = self.state.index_at(pos) else {
            return Err(self.no_room(request));
        };
        if self.state.place(pos, &pod, at).is_err() {
            return Err(self.no_room(request));
        }
        if self.pods_on[node] == 0 {
            self.busy += 1;
        }
        self.pods_on[node] += 1;
        let id = self.ledger.issue(Held {
            pos,
            request: pod,
            at,
        });
        Ok(Grant::new(id, Partition::Nodes(vec![node as NodeId]), 1))
    }
}

fn name_of(policy: Policy) -> &'static str {
    NAMES
        .iter()
        .find(|(_, p)| *p == policy)
        .map_or("gpu-best-fit", |(n, _)| n)
}

impl Allocator for GpuShareAllocator {
    fn name(&self) -> String {
        match self.policy {
            Policy::Random => format!("gpu-random[seed={}]", self.seed),
            p => name_of(p).to_owned(),
        }
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let pod = self.pod_of(request)?;
        let chosen = match self.policy {
            Policy::Random => self
                .state
                .random_node(&pod, &mut self.node_rng)
                .and_then(|pos| {
                    self.state
                        .gpus_on(pos, &pod, Policy::Random, &mut self.gpu_rng)
                        .map(|at| (pos, at))
                }),
            p => self.state.choose(&pod, p, &mut self.node_rng),
        };
        let Some((pos, at)) = chosen else {
            return Err(self.no_room(request));
        };
        self.grant(request, pod, pos, at)
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let held = *self.ledger.get(grant.id())?;
        if self.state.remove(held.pos, &held.request, held.at).is_err() {
            // The ledger's record was placed by this instance, so undoing
            // it cannot fail; refuse rather than corrupt the state.
            return Err(ReleaseError::NotLive { id: grant.id() });
        }
        self.ledger.take(grant.id())?;
        if let Some(node) = self.state.index_at(held.pos) {
            self.pods_on[node] -= 1;
            if self.pods_on[node] == 0 {
                self.busy -= 1;
            }
        }
        Ok(())
    }

    fn free_nodes(&self) -> usize {
        self.pods_on.len() - self.busy
    }

    fn live_grants(&self) -> usize {
        self.ledger.len()
    }

    fn busy_nodes(&self) -> NodeSet {
        let mut set = NodeSet::new(self.pods_on.len());
        for (node, &n) in self.pods_on.iter().enumerate() {
            if n > 0 {
                let _ = set.insert(node as NodeId);
            }
        }
        set
    }

    fn can_allocate(&self, request: &Request) -> Result<bool, AllocError> {
        let pod = self.pod_of(request)?;
        Ok(self.state.nodes().iter().any(|n| n.fits(&pod)))
    }

    /// Places the pod on the one node `at` names, taking the GPUs the
    /// policy takes within that node.
    fn allocate_at(&mut self, request: &Request, at: &Partition) -> Result<Grant, AllocError> {
        let pod = self.pod_of(request)?;
        let node = match at {
            Partition::Nodes(ids) if ids.len() == 1 => ids[0] as usize,
            _ => {
                return Err(AllocError::Unrecognized {
                    strategy: name_of(self.policy),
                    request: *request,
                    partition: Box::new(at.clone()),
                });
            }
        };
        let Some(pos) = self.state.position_of(node) else {
            return Err(AllocError::Unrecognized {
                strategy: name_of(self.policy),
                request: *request,
                partition: Box::new(at.clone()),
            });
        };
        let gpus = self
            .state
            .gpus_on(pos, &pod, self.policy, &mut self.gpu_rng)
            .ok_or_else(|| AllocError::PartitionBusy {
                request: *request,
                partition: Box::new(at.clone()),
            })?;
        self.grant(request, pod, pos, gpus)
    }
}
