//! Capacity machines (`partalloc_topology::capacity`: Kueue topologies and
//! `racks:` machines) as GPU-sharing clusters: every Kubernetes node becomes
//! a [`NodeSpec`] with its CPU, memory, GPUs and pod slots, and a pod's
//! request the same [`Request`] in the machine's units. On such a cluster
//! only whole GPUs are asked for, and the capacity machine's per-node fit
//! (`PodRequest::fits_in`) is this model's [`NodeState::fits`]
//! restricted to them (a property test checks it).
//!
//! [`NodeState::fits`]: crate::NodeState::fits

use partalloc_topology::capacity::{CapacityMachine, GPU_RESOURCE, PODS_RESOURCE, PodRequest};
use partalloc_topology::echo;
use thiserror::Error;

use crate::model::{MAX_GPUS, Models, NodeSpec, Request};
use crate::openb::Cluster;

/// Bytes in one MiB: Kubernetes counts memory in bytes, this model in MiB.
pub const MIB: i64 = 1 << 20;

/// A capacity machine this model cannot express.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CapacityConversionError {
    /// Nodes share a leaf (the lowest level is not the hostname), so the
    /// machine no longer knows each node's own resources.
    #[error(
        "{machine}: the lowest level is not the hostname, so nodes' own resources are not known"
    )]
    NotPerNode {
        /// The machine's source.
        machine: String,
    },
    /// A node with more GPUs than a node of this model holds.
    #[error("{machine}: node {node} has {gpus} gpus; at most {max}")]
    TooManyGpus {
        /// The machine's source.
        machine: String,
        /// The node.
        node: String,
        /// Its GPUs.
        gpus: i64,
        /// The limit.
        max: usize,
    },
    /// A quantity that does not fit this model's units.
    #[error("{machine}: node {node}'s {resource} ({value}) is not {unit}")]
    Units {
        /// The machine's source.
        machine: String,
        /// The node.
        node: String,
        /// The resource.
        resource: &'static str,
        /// Its value in the machine's units.
        value: i64,
        /// What it should be.
        unit: &'static str,
    },
    /// The capacity machine refused the request.
    #[error("{0}")]
    Request(String),
}

/// The cluster of a capacity machine whose GPUs (`nvidia.com/gpu`) are all
/// of `model`: one node per Kubernetes node, in the machine's node order.
///
/// # Errors
/// [`CapacityConversionError`] when nodes share a leaf, a node has more
/// than [`MAX_GPUS`] GPUs, or its CPU, memory or pods do not fit this
/// model's units (CPU thousandths up to `u32::MAX`, memory a whole number of
/// MiB, pods up to `u32::MAX`).
pub fn cluster_from_capacity(
    m: &CapacityMachine,
    model: &str,
) -> Result<Cluster, CapacityConversionError> {
    let source = m.source().to_owned();
    if !m.lowest_level_is_hostname() {
        return Err(CapacityConversionError::NotPerNode { machine: source });
    }
    let get = |cap: &[i64], name: &str| {
        m.resource_index(name)
            .and_then(|i| cap.get(i).copied())
            .unwrap_or(0)
    };
    let mut models = Models::default();
    let model_id = models
        .intern(model)
        .map_err(|e| CapacityConversionError::Request(e.to_string()))?;
    let mut nodes = Vec::with_capacity(m.node_names().len());
    for (i, name) in m.node_names().iter().enumerate() {
        let cap = m.node_leaf(i).map(|l| m.leaf_capacity(l)).unwrap_or(&[]);
        let units = |resource: &'static str, value: i64, unit: &'static str| {
            CapacityConversionError::Units {
                machine: source.clone(),
                node: echo(name),
                resource,
                value,
                unit,
            }
        };
        let gpus = get(cap, GPU_RESOURCE);
        if !(0..=MAX_GPUS as i64).contains(&gpus) {
            return Err(CapacityConversionError::TooManyGpus {
                machine: source,
                node: echo(name),
                gpus,
                max: MAX_GPUS,
            });
        }
        let cpu = get(cap, "cpu");
        let cpu =
            u32::try_from(cpu).map_err(|_| units("cpu", cpu, "0 to 4294967295 thousandths"))?;
        let memory = get(cap, "memory");
        if memory < 0 || memory % MIB != 0 {
            return Err(units("memory", memory, "a whole number of MiB"));
        }
        let pods = get(cap, PODS_RESOURCE);
        let pods = u32::try_from(pods).map_err(|_| units("pods", pods, "0 to 4294967295"))?;
        nodes.push(NodeSpec {
            name: name.clone(),
            cpu_milli: cpu,
            memory_mib: (memory / MIB) as u64,
            gpus: gpus as u8,
            model: model_id,
            max_pods: pods,
        });
    }
    Ok(Cluster { models, nodes })
}

/// `req` (CPU, memory, whole GPUs) as the capacity machine's per-pod
/// request.
///
/// # Errors
/// [`CapacityConversionError::Request`] for a share of a GPU (capacity
/// machines count whole GPUs), a request past the machine's quantities, or
/// a resource the machine lacks.
pub fn request_on(
    m: &CapacityMachine,
    req: &Request,
) -> Result<PodRequest, CapacityConversionError> {
    if req.is_share() {
        return Err(CapacityConversionError::Request(format!(
            "{}: a share of a gpu ({} thousandths) is not a capacity machine request",
            m.source(),
            req.gpu_milli
        )));
    }
    let memory = i64::try_from(req.memory_mib)
        .ok()
        .and_then(|v| v.checked_mul(MIB))
        .ok_or_else(|| {
            CapacityConversionError::Request(format!(
                "{} MiB of memory is too large",
                req.memory_mib
            ))
        })?;
    m.pod_request_lenient(&[
        ("cpu", i64::from(req.cpu_milli)),
        ("memory", memory),
        (GPU_RESOURCE, i64::from(req.gpus)),
    ])
    .map_err(|e| CapacityConversionError::Request(e.to_string()))
}
