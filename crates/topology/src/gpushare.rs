//! GPU-sharing clusters as a machine family: nodes of CPU, memory and up
//! to [`MAX_GPUS`] GPUs of one model, each GPU shared in thousandths, and
//! the requests of pods on them (CPU, memory, a share of one GPU or whole
//! GPUs of allowed models).
//!
//! This module holds the data only: [`GpuCluster`] is what
//! [`Topology::GpuShare`](crate::Topology::GpuShare) carries. The node
//! states, the FGD paper's policies and its fragmentation measure live in
//! `partalloc-gpushare`, which re-exports these types.
//!
//! `gpushare:NxGgpu` parses: N nodes of G GPUs of model `GPU`, each with
//! [`UNIFORM_CPU_MILLI`] CPU thousandths, [`UNIFORM_MEMORY_MIB`] MiB and
//! [`UNIFORM_MAX_PODS`] pod slots; OpenB node lists (`openb:NODES.csv`)
//! are read from files by `partalloc-experiment`.
//!
//! ```
//! use partalloc_topology::Topology;
//! let t: Topology = "gpushare:4x8gpu".parse()?;
//! assert_eq!(t.num_nodes(), 4);
//! assert_eq!(t.as_gpushare().map(|c| c.gpus()), Some(32));
//! assert_eq!(t.to_string(), "gpushare:4x8gpu");
//! # Ok::<(), partalloc_topology::TopologyError>(())
//! ```

use core::fmt;

use thiserror::Error;

/// Thousandths of one GPU in a whole GPU.
pub const MILLI: u32 = 1000;
/// Most GPUs one node may hold.
pub const MAX_GPUS: usize = 16;
/// Most distinct GPU models one cluster may name.
pub const MAX_MODELS: usize = 64;

/// The GPU models a cluster names, each with a small id (its index).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Models {
    names: Vec<String>,
}

impl Models {
    /// The id of `name`, adding it if new.
    ///
    /// # Errors
    /// [`ModelError::TooManyModels`] past [`MAX_MODELS`] names.
    pub fn intern(&mut self, name: &str) -> Result<u8, ModelError> {
        if let Some(id) = self.id(name) {
            return Ok(id);
        }
        if self.names.len() == MAX_MODELS {
            return Err(ModelError::TooManyModels { max: MAX_MODELS });
        }
        self.names.push(name.to_owned());
        Ok((self.names.len() - 1) as u8)
    }

    /// The id of a known model.
    #[must_use]
    pub fn id(&self, name: &str) -> Option<u8> {
        self.names.iter().position(|n| n == name).map(|i| i as u8)
    }

    /// The name of model `id`.
    #[must_use]
    pub fn name(&self, id: u8) -> Option<&str> {
        self.names.get(usize::from(id)).map(String::as_str)
    }

    /// The known names, in id order.
    #[must_use]
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// A node as it is built: capacities that never change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// The node's name.
    pub name: String,
    /// CPU in thousandths of a core.
    pub cpu_milli: u32,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// Number of GPUs (at most [`MAX_GPUS`]).
    pub gpus: u8,
    /// The GPUs' model id in the cluster's [`Models`] (ignored without GPUs).
    pub model: u8,
    /// Most pods the node runs at once.
    pub max_pods: u32,
}

/// What one pod asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GpuRequest {
    /// CPU in thousandths of a core.
    pub cpu_milli: u32,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// Number of GPUs: 0 (CPU only), 1 (a share or one whole GPU), or more
    /// whole GPUs.
    pub gpus: u8,
    /// Thousandths taken on each requested GPU (1..=1000; 1000 for
    /// several GPUs; 0 without GPUs).
    pub gpu_milli: u32,
    /// Bit `m` set: GPUs of model `m` are allowed; 0: any model.
    pub models: u64,
}

impl GpuRequest {
    /// A pod without GPUs.
    #[must_use]
    pub fn cpu(cpu_milli: u32, memory_mib: u64) -> Self {
        GpuRequest {
            cpu_milli,
            memory_mib,
            gpus: 0,
            gpu_milli: 0,
            models: 0,
        }
    }

    /// A pod taking `gpu_milli` thousandths of `gpus` GPUs of any model.
    ///
    /// # Errors
    /// [`ModelError::BadGpuRequest`] unless it is a share of one GPU
    /// (1..=1000 thousandths) or whole GPUs.
    pub fn gpu(
        cpu_milli: u32,
        memory_mib: u64,
        gpus: u8,
        gpu_milli: u32,
    ) -> Result<Self, ModelError> {
        let ok = match gpus {
            0 => gpu_milli == 0,
            1 => (1..=MILLI).contains(&gpu_milli),
            n => usize::from(n) <= MAX_GPUS && gpu_milli == MILLI,
        };
        if !ok {
            return Err(ModelError::BadGpuRequest { gpus, gpu_milli });
        }
        Ok(GpuRequest {
            cpu_milli,
            memory_mib,
            gpus,
            gpu_milli,
            models: 0,
        })
    }

    /// The same request restricted to the models of the mask (0: any).
    #[must_use]
    pub fn with_models(mut self, models: u64) -> Self {
        self.models = models;
        self
    }

    /// Thousandths of GPU in all (`gpus × gpu_milli`).
    #[must_use]
    pub fn total_gpu_milli(&self) -> u32 {
        u32::from(self.gpus) * self.gpu_milli
    }

    /// A share of one GPU (less than a whole one).
    #[must_use]
    pub fn is_share(&self) -> bool {
        self.gpus == 1 && self.gpu_milli < MILLI
    }

    /// Whether a node of GPU model `model` is allowed.
    #[must_use]
    pub fn allows(&self, model: u8) -> bool {
        self.models == 0 || self.models & model_bit(model) != 0
    }
}

/// The bit of GPU model `model` in a model mask (none past 63).
#[must_use]
pub fn model_bit(model: u8) -> u64 {
    1_u64.checked_shl(u32::from(model)).unwrap_or(0)
}

/// A request or placement the GPU-sharing model refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// More GPU models than a cluster may name.
    #[error("more than {max} gpu models in one cluster")]
    TooManyModels {
        /// The limit.
        max: usize,
    },
    /// A GPU request that is neither a share of one GPU nor whole GPUs.
    #[error(
        "a pod takes a share (1-1000 thousandths) of one gpu or whole gpus, not {gpus} x {gpu_milli}"
    )]
    BadGpuRequest {
        /// GPUs asked for.
        gpus: u8,
        /// Thousandths per GPU asked for.
        gpu_milli: u32,
    },
    /// The placement does not fit the node now.
    #[error("the request does not fit the chosen gpus of this node")]
    DoesNotFit,
    /// Giving back what was not placed.
    #[error("the request was not placed on this node")]
    NotPlaced,
}

/// One typical pod of a workload and its weight, against which FGD's
/// fragmentation measure judges a node (see `partalloc_gpushare::frag`).
#[derive(Debug, Clone, PartialEq)]
pub struct TypicalPod {
    /// CPU thousandths.
    pub cpu_milli: u32,
    /// GPUs.
    pub gpus: u8,
    /// Thousandths per GPU.
    pub gpu_milli: u32,
    /// Allowed models (0: any).
    pub models: u64,
    /// The models as written.
    pub spec: String,
    /// How many pods of the workload look like this one.
    pub count: u64,
    /// Its weight: its share of the pods the typical ones cover.
    pub freq: f64,
}

impl TypicalPod {
    /// The typical pods of a cluster given none: one whole GPU of any
    /// model, no CPU (what a generated workload asks for).
    #[must_use]
    pub fn whole_gpu() -> Self {
        TypicalPod {
            cpu_milli: 0,
            gpus: 1,
            gpu_milli: MILLI,
            models: 0,
            spec: String::new(),
            count: 1,
            freq: 1.0,
        }
    }
}

/// CPU thousandths of a node of the `gpushare:NxGgpu` form (64 cores, the
/// most common OpenB node).
pub const UNIFORM_CPU_MILLI: u32 = 64_000;
/// Memory of a node of the `gpushare:NxGgpu` form, in MiB (256 GiB).
pub const UNIFORM_MEMORY_MIB: u64 = 262_144;
/// Pod slots of every node read here (the FGD artifact's 1,001).
pub const UNIFORM_MAX_PODS: u32 = 1001;

/// A GPU-sharing cluster: its GPU models, its nodes (node id = position)
/// and the typical pods its fragmentation is measured against.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuCluster {
    source: String,
    models: Models,
    nodes: Vec<NodeSpec>,
    typical: Vec<TypicalPod>,
}

/// Two clusters are equal when their descriptions are (their typical pods'
/// weights are floating-point numbers, which are not `Eq`).
impl Eq for GpuCluster {}

impl core::hash::Hash for GpuCluster {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.source.hash(state);
        self.nodes.len().hash(state);
    }
}

impl GpuCluster {
    /// A cluster of `nodes` (node id = position) whose GPUs name `models`,
    /// printed as `source`, judged against one typical pod until
    /// [`GpuCluster::with_typical`] says otherwise: one whole GPU of any
    /// model ([`TypicalPod::whole_gpu`]).
    ///
    /// # Errors
    /// [`crate::TopologyError::InvalidTopology`] for no node, a node with
    /// more than [`MAX_GPUS`] GPUs or a model id `models` does not name;
    /// [`crate::TopologyError::TooManyNodes`] past [`crate::MAX_NODES`].
    pub fn new(
        source: impl Into<String>,
        models: Models,
        nodes: Vec<NodeSpec>,
    ) -> Result<Self, crate::TopologyError> {
        let source = source.into();
        let bad = |reason: String| crate::TopologyError::InvalidTopology {
            text: crate::echo(&source),
            reason,
        };
        if nodes.is_empty() {
            return Err(bad("a gpu-sharing cluster needs at least one node".into()));
        }
        if nodes.len() as u64 > crate::MAX_NODES {
            return Err(crate::TopologyError::TooManyNodes {
                nodes: nodes.len() as u128,
                max: crate::MAX_NODES,
            });
        }
        for n in &nodes {
            if usize::from(n.gpus) > MAX_GPUS {
                return Err(bad(format!(
                    "node {} has {} gpus; at most {MAX_GPUS}",
                    crate::echo(&n.name),
                    n.gpus
                )));
            }
            if n.gpus > 0 && models.name(n.model).is_none() {
                return Err(bad(format!(
                    "node {} names gpu model {}, which the cluster does not list",
                    crate::echo(&n.name),
                    n.model
                )));
            }
        }
        Ok(GpuCluster {
            source,
            models,
            nodes,
            typical: vec![TypicalPod::whole_gpu()],
        })
    }

    /// `count` equal nodes of `gpus` GPUs of model `GPU` (the
    /// `gpushare:NxGgpu` form).
    ///
    /// # Errors
    /// As [`GpuCluster::new`].
    pub fn uniform(count: u32, gpus: u8) -> Result<Self, crate::TopologyError> {
        let mut models = Models::default();
        let model = models.intern("GPU").unwrap_or(0);
        let nodes = (0..count)
            .map(|i| NodeSpec {
                name: format!("node-{i:05}"),
                cpu_milli: UNIFORM_CPU_MILLI,
                memory_mib: UNIFORM_MEMORY_MIB,
                gpus,
                model,
                max_pods: UNIFORM_MAX_PODS,
            })
            .collect();
        GpuCluster::new(format!("gpushare:{count}x{gpus}gpu"), models, nodes)
    }

    /// The same cluster, judged against these typical pods.
    #[must_use]
    pub fn with_typical(mut self, typical: Vec<TypicalPod>) -> Self {
        self.typical = typical;
        self
    }

    /// The same cluster, printed as `source`.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }

    /// Its text form (`gpushare:4x8gpu`, `openb:FILE`).
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The GPU models.
    #[must_use]
    pub fn models(&self) -> &Models {
        &self.models
    }

    /// The nodes, by id.
    #[must_use]
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// The typical pods its fragmentation is measured against.
    #[must_use]
    pub fn typical(&self) -> &[TypicalPod] {
        &self.typical
    }

    /// GPUs in all.
    #[must_use]
    pub fn gpus(&self) -> u32 {
        self.nodes.iter().map(|n| u32::from(n.gpus)).sum()
    }

    /// Whether some node, empty, could hold `req`.
    #[must_use]
    pub fn can_ever_hold(&self, req: &GpuRequest) -> bool {
        self.nodes.iter().any(|n| n.could_hold(req))
    }
}

impl NodeSpec {
    /// Whether this node, empty, could hold `req`.
    #[must_use]
    pub fn could_hold(&self, req: &GpuRequest) -> bool {
        req.cpu_milli <= self.cpu_milli
            && req.memory_mib <= self.memory_mib
            && self.max_pods > 0
            && (req.gpus == 0 || req.gpus <= self.gpus && req.allows(self.model))
    }
}

impl fmt::Display for GpuRequest {
    /// `pod 8000m cpu 16384MiB 1x460m gpu` (the GPU part only for GPU pods,
    /// `of models 0b101` when models are restricted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pod {}m cpu {}MiB", self.cpu_milli, self.memory_mib)?;
        if self.gpus > 0 {
            write!(f, " {}x{}m gpu", self.gpus, self.gpu_milli)?;
            if self.models != 0 {
                write!(f, " of models {:#b}", self.models)?;
            }
        }
        Ok(())
    }
}

/// `NxGgpu` after `gpushare:`; `whole` is the full description.
pub(crate) fn parse_uniform(rest: &str, whole: &str) -> Result<GpuCluster, crate::TopologyError> {
    let err = |reason: String| crate::TopologyError::InvalidTopology {
        text: crate::echo(whole),
        reason,
    };
    let shape = "expected NODESxGPUSgpu, e.g. gpushare:16x8gpu";
    let (n, g) = rest
        .trim()
        .strip_suffix("gpu")
        .and_then(|c| c.split_once(['x', 'X', '×']))
        .ok_or_else(|| err(shape.to_owned()))?;
    let n: u32 = n
        .trim()
        .parse()
        .map_err(|_| err(format!("{:?} is not a node count; {shape}", crate::echo(n))))?;
    let g: u8 = g
        .trim()
        .parse()
        .ok()
        .filter(|&g| usize::from(g) <= MAX_GPUS)
        .ok_or_else(|| {
            err(format!(
                "{:?} is not a gpu count of 0-{MAX_GPUS}",
                crate::echo(g)
            ))
        })?;
    if n == 0 {
        return Err(err(
            "a gpu-sharing cluster needs at least one node".to_owned()
        ));
    }
    if u64::from(n) > 1 << 22 {
        return Err(crate::TopologyError::MachineTooLarge {
            text: crate::echo(whole),
            reason: format!("{n} nodes, more than {}", 1 << 22),
        });
    }
    GpuCluster::uniform(n, g)
}
