//! Machines whose nodes hold several pods: Kubernetes nodes with
//! allocatable resources under a tree of topology levels built from node
//! labels, as Kueue's Topology-Aware Scheduling sees a cluster.
//!
//! A [`CapacityMachine`] has an ordered list of levels (node labels, from
//! the widest, e.g. block → rack → `kubernetes.io/hostname`), a set of
//! named resources (at least `pods`; `cpu` in thousandths, every other
//! resource in whole units, as Kubernetes counts them) and, for each
//! domain of the lowest level, its allocatable capacity. Domains of each
//! level are numbered in the lexicographic order of their label values
//! from the top level down, so comparing two domains of one level by
//! number is comparing their label values, the order Kueue breaks ties
//! in. Children of a domain are contiguous on the next level.
//!
//! Machines come from a Kueue `Topology` plus a node list in the shape
//! `kubectl get nodes -o yaml` prints ([`CapacityMachine::from_kueue_yaml`]),
//! from code ([`CapacityMachineBuilder`]) or from a regular rack layout
//! ([`CapacityMachine::racks`]).
//!
//! ```
//! use partalloc_topology::capacity::CapacityMachine;
//!
//! // 2 blocks × 2 racks × 18 nodes, 4 GPUs and 72 CPUs each.
//! let m = CapacityMachine::racks(2, 2, 18, &[("nvidia.com/gpu", 4), ("cpu", 72_000)])?;
//! assert_eq!(m.levels().len(), 3);
//! assert_eq!(m.num_leaves(), 72);
//! let gpu = m.resource_index("nvidia.com/gpu").unwrap();
//! assert_eq!(m.leaf_capacity(0)[gpu], 4);
//! let req = m.pod_request(&[("nvidia.com/gpu", 1)])?;
//! assert_eq!(req.fits_in(m.leaf_capacity(0)), 4);
//! # Ok::<(), partalloc_topology::capacity::CapacityError>(())
//! ```

mod error;
mod quantity;
mod slurm;
mod yaml;

use core::ops::Range;
use std::collections::HashSet;

pub use error::CapacityError;
pub use slurm::{SLURM_BLOCK_LABEL_PREFIX, SLURM_SWITCH_LABEL_PREFIX};

use crate::echo;
use quantity::parse_quantity;

/// The node label Kubernetes sets to the node's hostname. When it is the
/// lowest level, each node is its own leaf domain and assignments name
/// hostnames only.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// The resource every pod takes one of (Kubernetes' `pods` allocatable).
pub const PODS_RESOURCE: &str = "pods";

/// Label of the block level of [`CapacityMachine::racks`] machines.
pub const BLOCK_LABEL: &str = "cloud.provider.com/topology-block";

/// Label of the rack level of [`CapacityMachine::racks`] machines.
pub const RACK_LABEL: &str = "cloud.provider.com/topology-rack";

/// The GPU resource of `racks:` machines (NVIDIA's device plugin name).
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Pods a node of [`CapacityMachine::racks`] accepts (Kubernetes' default).
pub const DEFAULT_MAX_PODS: i64 = 110;

const MAX_LEVELS: usize = 16;
const MAX_RESOURCES: usize = 64;
/// Most Kubernetes nodes a machine may have (2^16, the largest clusters
/// run today): a node costs about a kilobyte of names and labels while it
/// is built, so the bound keeps a run on the largest machine under 200 MB.
pub const MAX_NODES: u64 = 1 << 16;
const NO_PARENT: u32 = u32::MAX;
/// Most allocation units (GPUs, or pod slots) a machine may have (2^22):
/// each is one node of the machine's [`crate::Topology`] form, on which
/// the strategies keep per-node state.
pub const MAX_UNITS: u64 = 1 << 22;

/// A cluster of nodes with allocatable resources under a tree of topology
/// levels. Immutable once built; usage is kept by the allocators.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CapacityMachine {
    source: String,
    levels: Vec<String>,
    resources: Vec<String>,
    level_start: Vec<u32>,
    parent: Vec<u32>,
    child_start: Vec<u32>,
    child_end: Vec<u32>,
    value: Vec<String>,
    leaf_capacity: Vec<i64>,
    node_names: Vec<String>,
    node_leaf: Vec<u32>,
    unit: usize,
    unit_start: Vec<u32>,
}

/// Per-pod resource requests, in the units and order of one machine's
/// resources, always including one `pods`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PodRequest {
    /// (resource index, positive quantity).
    parts: Vec<(u32, i64)>,
    /// Asks for a resource no node has, so fits nowhere.
    impossible: bool,
}

impl PodRequest {
    /// How many such pods fit in `capacity` (a leaf's remaining
    /// resources, indexed like the machine's resources); a negative
    /// remainder holds none.
    #[must_use]
    pub fn fits_in(&self, capacity: &[i64]) -> i64 {
        if self.impossible {
            return 0;
        }
        let mut count = i64::from(i32::MAX);
        for &(r, q) in &self.parts {
            let have = capacity.get(r as usize).copied().unwrap_or(0);
            count = count.min((have / q).max(0));
        }
        count
    }

    /// Whether the request names a resource no node has (then no pod
    /// fits anywhere).
    #[must_use]
    pub fn is_impossible(&self) -> bool {
        self.impossible
    }

    /// The (resource index, quantity) pairs with a positive quantity.
    #[must_use]
    pub fn parts(&self) -> &[(u32, i64)] {
        &self.parts
    }
}

impl CapacityMachine {
    /// Reads a Kueue `Topology` (its `spec.levels[].nodeLabel`) and a node
    /// list (`items[]` with `metadata.name`, `metadata.labels` and
    /// `status.allocatable`, as `kubectl get nodes -o yaml` prints them).
    /// The source names label error messages (`file:line`).
    ///
    /// # Errors
    /// [`CapacityError`] naming the file and line: malformed YAML, a
    /// missing field, no levels, a node without a level's label, a
    /// negative or malformed quantity, a repeated node, no nodes.
    pub fn from_kueue_yaml(
        topology: &str,
        topology_source: &str,
        nodes: &str,
        nodes_source: &str,
    ) -> Result<Self, CapacityError> {
        // Sources name files in messages: a line break in a path must not
        // split one.
        let (topology_source, nodes_source) = (
            &*crate::escaped(topology_source),
            &*crate::escaped(nodes_source),
        );
        let levels = yaml::read_levels(topology, topology_source)?;
        let mut builder = CapacityMachineBuilder::new(nodes_source, &levels)?;
        yaml::read_nodes(nodes, nodes_source, &mut builder)?;
        builder.build()
    }

    /// A regular machine: `blocks` × `racks_per_block` × `nodes_per_rack`
    /// nodes under the levels [`BLOCK_LABEL`], [`RACK_LABEL`] and
    /// [`HOSTNAME_LABEL`], each with `per_node` resources (in machine
    /// units) and [`DEFAULT_MAX_PODS`] pods unless `per_node` sets `pods`.
    /// Names are zero-padded (`b01`, `b01-r03`, `b01-r03-n17`) so their
    /// lexicographic order is their numeric order.
    ///
    /// # Errors
    /// [`CapacityError::Zero`] for a zero count, [`CapacityError::TooLarge`]
    /// past [`MAX_NODES`] nodes, [`MAX_UNITS`] units of a resource or 64
    /// resources, [`CapacityError::NegativeRequest`] for a negative
    /// quantity; the sizes are checked before any node is made.
    pub fn racks(
        blocks: u32,
        racks_per_block: u32,
        nodes_per_rack: u32,
        per_node: &[(&str, i64)],
    ) -> Result<Self, CapacityError> {
        for (what, v) in [
            ("blocks", blocks),
            ("racks per block", racks_per_block),
            ("nodes per rack", nodes_per_rack),
        ] {
            if v == 0 {
                return Err(CapacityError::Zero { what });
            }
        }
        let total = u64::from(blocks) * u64::from(racks_per_block) * u64::from(nodes_per_rack);
        if total > MAX_NODES {
            return Err(CapacityError::TooLarge {
                what: "the node count",
                got: total,
                max: MAX_NODES,
            });
        }
        for &(resource, value) in per_node {
            if value < 0 {
                return Err(CapacityError::NegativeRequest {
                    resource: resource.to_owned(),
                    value,
                });
            }
            // Any resource may become the allocation unit: bound each.
            let units = u128::from(total) * value.unsigned_abs() as u128;
            if resource.contains('/') && units > u128::from(MAX_UNITS) {
                return Err(CapacityError::TooLarge {
                    what: "the GPU or pod count",
                    got: u64::try_from(units).unwrap_or(u64::MAX),
                    max: MAX_UNITS,
                });
            }
        }
        let width = |n: u32| (n.max(1) - 1).to_string().len().max(2);
        let (wb, wr, wn) = (width(blocks), width(racks_per_block), width(nodes_per_rack));
        let source = format!("racks:{blocks}x{racks_per_block}x{nodes_per_rack}");
        let mut builder =
            CapacityMachineBuilder::new(&source, &[BLOCK_LABEL, RACK_LABEL, HOSTNAME_LABEL])?;
        let mut alloc: Vec<(String, i64)> =
            per_node.iter().map(|&(r, v)| (r.to_owned(), v)).collect();
        if !alloc.iter().any(|(r, _)| r == PODS_RESOURCE) {
            alloc.push((PODS_RESOURCE.to_owned(), DEFAULT_MAX_PODS));
        }
        for b in 0..blocks {
            let block = format!("b{b:0wb$}");
            for r in 0..racks_per_block {
                let rack = format!("{block}-r{r:0wr$}");
                for n in 0..nodes_per_rack {
                    let host = format!("{rack}-n{n:0wn$}");
                    builder.push(
                        0,
                        host.clone(),
                        vec![block.clone(), rack.clone(), host],
                        alloc.clone(),
                    )?;
                }
            }
        }
        builder.build()
    }

    /// Where the machine came from (a file name or the generator's form).
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The level labels, widest first.
    #[must_use]
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// Index of a level by its label.
    ///
    /// # Errors
    /// [`CapacityError::UnknownLevel`] listing the machine's levels.
    pub fn level_index(&self, label: &str) -> Result<usize, CapacityError> {
        self.levels
            .iter()
            .position(|l| l == label)
            .ok_or_else(|| CapacityError::UnknownLevel {
                level: echo(label),
                known: self.levels.join(", "),
            })
    }

    /// Whether the lowest level is [`HOSTNAME_LABEL`] (one leaf per node).
    #[must_use]
    pub fn lowest_level_is_hostname(&self) -> bool {
        self.levels.last().is_some_and(|l| l == HOSTNAME_LABEL)
    }

    /// The resource names, sorted.
    #[must_use]
    pub fn resources(&self) -> &[String] {
        &self.resources
    }

    /// Index of a resource by name, if a node has it.
    #[must_use]
    pub fn resource_index(&self, name: &str) -> Option<usize> {
        self.resources
            .binary_search_by(|r| r.as_str().cmp(name))
            .ok()
    }

    /// Number of domains over all levels.
    #[must_use]
    pub fn num_domains(&self) -> usize {
        self.parent.len()
    }

    /// The domain numbers of one level (empty past the last level).
    #[must_use]
    pub fn level_domains(&self, level: usize) -> Range<usize> {
        match (self.level_start.get(level), self.level_start.get(level + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// The parent of a domain, `None` on the top level.
    #[must_use]
    pub fn parent(&self, domain: usize) -> Option<usize> {
        self.parent
            .get(domain)
            .filter(|&&p| p != NO_PARENT)
            .map(|&p| p as usize)
    }

    /// The children of a domain (empty for a leaf).
    #[must_use]
    pub fn children(&self, domain: usize) -> Range<usize> {
        match (self.child_start.get(domain), self.child_end.get(domain)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// The domain's own label value.
    #[must_use]
    pub fn value(&self, domain: usize) -> &str {
        self.value.get(domain).map_or("", String::as_str)
    }

    /// The label values from the top level down to the domain.
    #[must_use]
    pub fn path(&self, domain: usize) -> Vec<&str> {
        let mut path = vec![self.value(domain)];
        let mut d = domain;
        while let Some(p) = self.parent(d) {
            path.push(self.value(p));
            d = p;
        }
        path.reverse();
        path
    }

    /// Number of leaf domains (domains of the lowest level).
    #[must_use]
    pub fn num_leaves(&self) -> usize {
        self.level_domains(self.levels.len() - 1).len()
    }

    /// The domain number of leaf `leaf`.
    #[must_use]
    pub fn leaf_domain(&self, leaf: usize) -> usize {
        self.level_domains(self.levels.len() - 1).start + leaf
    }

    /// A leaf's allocatable resources, indexed like [`resources`](Self::resources).
    #[must_use]
    pub fn leaf_capacity(&self, leaf: usize) -> &[i64] {
        let k = self.resources.len();
        self.leaf_capacity
            .get(leaf * k..(leaf + 1) * k)
            .unwrap_or(&[])
    }

    /// All leaves' capacities, leaf after leaf.
    #[must_use]
    pub fn leaf_capacities(&self) -> &[i64] {
        &self.leaf_capacity
    }

    /// The node names, in the order they were given.
    #[must_use]
    pub fn node_names(&self) -> &[String] {
        &self.node_names
    }

    /// The leaf a node belongs to, by its position in [`node_names`](Self::node_names).
    #[must_use]
    pub fn node_leaf(&self, node: usize) -> Option<usize> {
        self.node_leaf.get(node).map(|&l| l as usize)
    }

    /// The leaf of the node with this name.
    #[must_use]
    pub fn leaf_of_node(&self, name: &str) -> Option<usize> {
        let i = self.node_names.iter().position(|n| n == name)?;
        self.node_leaf(i)
    }

    /// Replaces the name the machine prints as (its [`crate::Topology`]
    /// text form, e.g. `racks:8x18x4gpu` or `kueue:TOPOLOGY,NODES`).
    #[must_use]
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }

    /// The resource counted as the machine's allocation unit: the first
    /// extended resource (a name with a domain, such as `nvidia.com/gpu`)
    /// that some node has, else [`PODS_RESOURCE`]. Each unit is one node
    /// of the machine as a [`crate::Topology`], numbered leaf after leaf.
    #[must_use]
    pub fn unit_resource(&self) -> &str {
        self.resources.get(self.unit).map_or("", String::as_str)
    }

    /// Index of [`unit_resource`](Self::unit_resource) among the resources.
    #[must_use]
    pub fn unit_index(&self) -> usize {
        self.unit
    }

    /// Total allocation units (the machine's node count as a topology).
    #[must_use]
    pub fn num_units(&self) -> usize {
        self.unit_start.last().map_or(0, |&u| u as usize)
    }

    /// The units of one leaf, a contiguous range (empty past the leaves).
    #[must_use]
    pub fn leaf_units(&self, leaf: usize) -> Range<u32> {
        match (self.unit_start.get(leaf), self.unit_start.get(leaf + 1)) {
            (Some(&a), Some(&b)) => a..b,
            _ => 0..0,
        }
    }

    /// The leaf holding a unit, `None` past the last unit.
    #[must_use]
    pub fn unit_leaf(&self, unit: u32) -> Option<usize> {
        if unit as usize >= self.num_units() {
            return None;
        }
        Some(self.unit_start.partition_point(|&s| s <= unit) - 1)
    }

    /// Hops between two units as a tree: 0 for the same unit, 1 on the
    /// same leaf, `k + 1` when they first share a domain `k` levels above
    /// the leaves, and one more than the number of levels when they share
    /// none; `None` for a unit past the last.
    #[must_use]
    pub fn unit_distance(&self, a: u32, b: u32) -> Option<u32> {
        let (la, lb) = (self.unit_leaf(a)?, self.unit_leaf(b)?);
        if a == b {
            return Some(0);
        }
        let (mut x, mut y) = (self.leaf_domain(la), self.leaf_domain(lb));
        let mut hops = 1;
        while x != y {
            match (self.parent(x), self.parent(y)) {
                (Some(px), Some(py)) => (x, y) = (px, py),
                _ => return Some(self.levels.len() as u32 + 1),
            }
            hops += 1;
        }
        Some(hops)
    }

    /// Links of the machine as a tree: one from each unit to its leaf and
    /// one from each domain to its parent (or, on the top level, to a
    /// root).
    #[must_use]
    pub fn num_links(&self) -> u64 {
        self.num_units() as u64 + self.num_domains() as u64
    }

    /// A per-pod request in machine units (`cpu` in thousandths); one
    /// `pods` is always added, as Kubernetes counts a pod against the
    /// node's `pods` allocatable.
    ///
    /// # Errors
    /// [`CapacityError::UnknownResource`] for a resource no node has,
    /// [`CapacityError::NegativeRequest`] for a negative quantity.
    pub fn pod_request(&self, per_pod: &[(&str, i64)]) -> Result<PodRequest, CapacityError> {
        self.make_request(per_pod, true)
    }

    /// Like [`pod_request`](Self::pod_request) but, as Kueue does, a
    /// positive request of a resource no node has is not an error: the
    /// request then fits nowhere ([`PodRequest::is_impossible`]).
    ///
    /// # Errors
    /// [`CapacityError::NegativeRequest`] for a negative quantity.
    pub fn pod_request_lenient(
        &self,
        per_pod: &[(&str, i64)],
    ) -> Result<PodRequest, CapacityError> {
        self.make_request(per_pod, false)
    }

    fn make_request(
        &self,
        per_pod: &[(&str, i64)],
        strict: bool,
    ) -> Result<PodRequest, CapacityError> {
        let mut impossible = false;
        let mut amounts = vec![0i64; self.resources.len()];
        for &(name, value) in per_pod {
            if value < 0 {
                return Err(CapacityError::NegativeRequest {
                    resource: echo(name),
                    value,
                });
            }
            if value == 0 {
                // Kueue ignores a zero request, even of a resource no node has.
                continue;
            }
            let Some(i) = self.resource_index(name) else {
                if strict {
                    return Err(CapacityError::UnknownResource {
                        resource: echo(name),
                        known: self.resources.join(", "),
                    });
                }
                impossible = true;
                continue;
            };
            amounts[i] = amounts[i].saturating_add(value);
        }
        if let Some(p) = self.resource_index(PODS_RESOURCE) {
            amounts[p] = amounts[p].saturating_add(1);
        }
        let parts = amounts
            .iter()
            .enumerate()
            .filter(|(_, q)| **q > 0)
            .map(|(i, &q)| (i as u32, q))
            .collect();
        Ok(PodRequest { parts, impossible })
    }
}

/// A node waiting to be built into a machine.
#[derive(Debug, Clone)]
struct PendingNode {
    name: String,
    path: Vec<String>,
    allocatable: Vec<(String, i64)>,
}

/// Builds a [`CapacityMachine`] node by node; nothing is built until
/// [`build`](Self::build) succeeds.
#[derive(Debug, Clone)]
pub struct CapacityMachineBuilder {
    source: String,
    levels: Vec<String>,
    nodes: Vec<PendingNode>,
    names: HashSet<String>,
    leaves: HashSet<Vec<String>>,
}

impl CapacityMachineBuilder {
    /// A builder for a machine with these levels, widest first.
    ///
    /// # Errors
    /// [`CapacityError::NoLevels`], [`CapacityError::DuplicateLevel`],
    /// [`CapacityError::TooLarge`] past 16 levels.
    pub fn new<S: AsRef<str>>(source: &str, levels: &[S]) -> Result<Self, CapacityError> {
        if levels.is_empty() {
            return Err(CapacityError::NoLevels {
                file: source.to_owned(),
            });
        }
        if levels.len() > MAX_LEVELS {
            return Err(CapacityError::TooLarge {
                what: "the level count",
                got: levels.len() as u64,
                max: MAX_LEVELS as u64,
            });
        }
        let mut seen = HashSet::new();
        for l in levels {
            if !seen.insert(l.as_ref()) {
                return Err(CapacityError::DuplicateLevel {
                    file: source.to_owned(),
                    label: echo(l.as_ref()),
                });
            }
        }
        Ok(Self {
            source: source.to_owned(),
            levels: levels.iter().map(|l| l.as_ref().to_owned()).collect(),
            nodes: Vec::new(),
            names: HashSet::new(),
            leaves: HashSet::new(),
        })
    }

    /// The level labels.
    #[must_use]
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// Adds a node from its labels and allocatable quantities in
    /// Kubernetes text form (`"4"`, `"500m"`, `"16Gi"`). `line` is where
    /// it was read (0 when it was not read from a file).
    ///
    /// # Errors
    /// [`CapacityError::MissingLabel`], [`CapacityError::Quantity`],
    /// [`CapacityError::DuplicateNode`], [`CapacityError::TooLarge`]; the
    /// builder is unchanged on error.
    pub fn add_node(
        &mut self,
        line: usize,
        name: &str,
        labels: &[(&str, &str)],
        allocatable: &[(&str, &str)],
    ) -> Result<(), CapacityError> {
        let mut path = Vec::with_capacity(self.levels.len());
        for level in &self.levels {
            match labels.iter().find(|(k, _)| k == level) {
                Some((_, v)) => path.push((*v).to_owned()),
                None => {
                    return Err(CapacityError::MissingLabel {
                        file: self.source.clone(),
                        line,
                        node: echo(name),
                        label: level.clone(),
                    });
                }
            }
        }
        let mut alloc = Vec::with_capacity(allocatable.len());
        for &(resource, text) in allocatable {
            let value = parse_quantity(resource, text).ok_or_else(|| CapacityError::Quantity {
                file: self.source.clone(),
                line,
                node: echo(name),
                resource: echo(resource),
                value: echo(text),
            })?;
            alloc.push((resource.to_owned(), value));
        }
        self.push(line, name.to_owned(), path, alloc)
    }

    fn push(
        &mut self,
        line: usize,
        name: String,
        path: Vec<String>,
        allocatable: Vec<(String, i64)>,
    ) -> Result<(), CapacityError> {
        if self.nodes.len() as u64 >= MAX_NODES {
            return Err(CapacityError::TooLarge {
                what: "the node count",
                got: self.nodes.len() as u64 + 1,
                max: MAX_NODES,
            });
        }
        let hostname_leaf = self.levels.last().is_some_and(|l| l == HOSTNAME_LABEL);
        let duplicate =
            self.names.contains(&name) || (hostname_leaf && self.leaves.contains(&path));
        if duplicate {
            return Err(CapacityError::DuplicateNode {
                file: self.source.clone(),
                line,
                node: echo(&name),
            });
        }
        self.names.insert(name.clone());
        self.leaves.insert(path.clone());
        self.nodes.push(PendingNode {
            name,
            path,
            allocatable,
        });
        Ok(())
    }

    /// Builds the machine.
    ///
    /// # Errors
    /// [`CapacityError::NoNodes`], [`CapacityError::TooLarge`] past 64
    /// resources.
    pub fn build(self) -> Result<CapacityMachine, CapacityError> {
        if self.nodes.is_empty() {
            return Err(CapacityError::NoNodes { file: self.source });
        }
        let mut resources: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|n| n.allocatable.iter().map(|(r, _)| r.clone()))
            .chain([PODS_RESOURCE.to_owned()])
            .collect();
        resources.sort_unstable();
        resources.dedup();
        if resources.len() > MAX_RESOURCES {
            return Err(CapacityError::TooLarge {
                what: "the resource count",
                got: resources.len() as u64,
                max: MAX_RESOURCES as u64,
            });
        }
        let levels = self.levels.len();
        // Per level, the sorted distinct prefixes.
        let mut per_level: Vec<Vec<&[String]>> = Vec::with_capacity(levels);
        for l in 0..levels {
            let mut prefixes: Vec<&[String]> = self.nodes.iter().map(|n| &n.path[..=l]).collect();
            prefixes.sort_unstable();
            prefixes.dedup();
            per_level.push(prefixes);
        }
        let mut level_start = vec![0u32];
        let mut parent = Vec::new();
        let mut value = Vec::new();
        for (l, prefixes) in per_level.iter().enumerate() {
            let base = if l == 0 {
                0
            } else {
                level_start[l - 1] as usize
            };
            for p in prefixes {
                let pid = if l == 0 {
                    NO_PARENT
                } else {
                    let above = &per_level[l - 1];
                    let i = above.binary_search(&&p[..l]).unwrap_or(0);
                    (base + i) as u32
                };
                parent.push(pid);
                value.push(p[l].clone());
            }
            level_start.push(parent.len() as u32);
        }
        let n = parent.len();
        let mut child_start = vec![0u32; n];
        let mut child_end = vec![0u32; n];
        for (d, &p) in parent.iter().enumerate().rev() {
            if p != NO_PARENT {
                child_start[p as usize] = d as u32;
                if child_end[p as usize] == 0 {
                    child_end[p as usize] = d as u32 + 1;
                }
            }
        }
        let leaf_prefixes = &per_level[levels - 1];
        let leaf_base = level_start[levels - 1] as usize;
        let k = resources.len();
        let mut leaf_capacity = vec![0i64; leaf_prefixes.len() * k];
        let mut node_names = Vec::with_capacity(self.nodes.len());
        let mut node_leaf = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let leaf = leaf_prefixes
                .binary_search(&node.path.as_slice())
                .unwrap_or(0);
            for (r, v) in &node.allocatable {
                if let Ok(i) = resources.binary_search(r) {
                    let slot = &mut leaf_capacity[leaf * k + i];
                    *slot = slot.saturating_add(*v);
                }
            }
            node_names.push(node.name.clone());
            node_leaf.push(leaf as u32);
        }
        debug_assert_eq!(leaf_base + leaf_prefixes.len(), n);
        let pods = resources
            .binary_search_by(|r| r.as_str().cmp(PODS_RESOURCE))
            .unwrap_or(0);
        let total = |r: usize| -> i64 {
            leaf_capacity
                .iter()
                .skip(r)
                .step_by(k)
                .fold(0i64, |a, &v| a.saturating_add(v.max(0)))
        };
        let unit = (0..k)
            .find(|&r| resources[r].contains('/') && total(r) > 0)
            .unwrap_or(pods);
        if total(unit) as u64 > MAX_UNITS {
            return Err(CapacityError::TooLarge {
                what: "the GPU or pod count",
                got: total(unit) as u64,
                max: MAX_UNITS,
            });
        }
        let mut unit_start = Vec::with_capacity(leaf_prefixes.len() + 1);
        let mut at = 0u32;
        unit_start.push(0);
        for leaf in 0..leaf_prefixes.len() {
            at += leaf_capacity[leaf * k + unit].max(0) as u32;
            unit_start.push(at);
        }
        Ok(CapacityMachine {
            source: self.source,
            levels: self.levels,
            resources,
            level_start,
            parent,
            child_start,
            child_end,
            value,
            leaf_capacity,
            node_names,
            node_leaf,
            unit,
            unit_start,
        })
    }
}

#[cfg(test)]
mod tests;
