//! Capacity machines from Slurm topologies: the nodes of a `topology.conf`
//! or `topology.yaml` (block or tree plugin) under the file's own levels,
//! each holding the same resources (e.g. 4 GPUs), so Kueue's TAS and
//! Slurm's own placement can be compared on one cluster description.

use super::HOSTNAME_LABEL;
use super::{
    CapacityError, CapacityMachine, CapacityMachineBuilder, DEFAULT_MAX_PODS, PODS_RESOURCE,
};
use crate::NodeId;
use crate::slurm::{SlurmMachine, Tree};

/// The node label of the Slurm block level `i` (`…/block-level-0` is the
/// base block) in a capacity machine made from a block topology.
pub const SLURM_BLOCK_LABEL_PREFIX: &str = "topology.slurm/block-level-";

/// The node label of the Slurm switch level `k` (0 at a leaf switch, as
/// Slurm numbers them) in a capacity machine made from a tree topology.
pub const SLURM_SWITCH_LABEL_PREFIX: &str = "topology.slurm/switch-level-";

impl CapacityMachine {
    /// The nodes of a Slurm block or tree machine, each with `per_node`
    /// resources (and [`DEFAULT_MAX_PODS`] pods unless `per_node` sets
    /// `pods`), under one level per Slurm level, widest first, then
    /// `kubernetes.io/hostname`:
    /// - blocks: one level per block size (`BlockSizes`), from the largest
    ///   aggregate down to the base block, whose domains are the named
    ///   base blocks; a larger aggregate is named after its first base
    ///   block and its size (`b3+2`);
    /// - tree: one level per switch depth, from the roots down to the leaf
    ///   switches, whose domains are the switches themselves.
    ///
    /// ```
    /// use partalloc_topology::capacity::CapacityMachine;
    /// use partalloc_topology::slurm::SlurmMachine;
    ///
    /// let conf = "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n";
    /// let slurm = SlurmMachine::parse_conf(conf, "two.conf")?;
    /// let m = CapacityMachine::from_slurm(&slurm, &[("nvidia.com/gpu", 4)])?;
    /// // Levels: the 8-node aggregate, the base block, the host.
    /// assert_eq!(m.levels().len(), 3);
    /// assert_eq!((m.num_leaves(), m.num_units()), (8, 32));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`CapacityError::SlurmShape`] for a ring or torus machine,
    /// [`CapacityError::UnevenTree`] for a tree whose leaf switches are at
    /// different depths, [`CapacityError::NegativeRequest`] for a negative
    /// quantity, [`CapacityError::TooLarge`] past the supported sizes.
    pub fn from_slurm(
        machine: &SlurmMachine,
        per_node: &[(&str, i64)],
    ) -> Result<Self, CapacityError> {
        for &(resource, value) in per_node {
            if value < 0 {
                return Err(CapacityError::NegativeRequest {
                    resource: resource.to_owned(),
                    value,
                });
            }
        }
        let file = machine.source();
        let mut alloc: Vec<(String, i64)> =
            per_node.iter().map(|&(r, v)| (r.to_owned(), v)).collect();
        if !alloc.iter().any(|(r, _)| r == PODS_RESOURCE) {
            alloc.push((PODS_RESOURCE.to_owned(), DEFAULT_MAX_PODS));
        }
        type Path<'a> = Box<dyn Fn(NodeId) -> Vec<String> + 'a>;
        let (mut levels, paths): (Vec<String>, Path<'_>) = if let Some(b) = machine.blocks() {
            let sizes = b.levels();
            let levels = (0..sizes.len())
                .rev()
                .map(|i| format!("{SLURM_BLOCK_LABEL_PREFIX}{i}"))
                .collect();
            let path = move |node| {
                let base = b.block_of(node);
                sizes
                    .iter()
                    .rev()
                    .map(|&per| {
                        let first = base / per * per;
                        let name = &b.block_names()[first as usize];
                        if per == 1 {
                            name.clone()
                        } else {
                            format!("{name}+{per}")
                        }
                    })
                    .collect()
            };
            (levels, Box::new(path))
        } else if let Some(t) = machine.tree() {
            let depth = even_depth(t, file)?;
            let levels = (0..depth)
                .rev()
                .map(|k| format!("{SLURM_SWITCH_LABEL_PREFIX}{k}"))
                .collect();
            let path = move |node| {
                let leaf = t.leaf_of(node).unwrap_or_default();
                let mut up: Vec<String> = t
                    .ancestors(leaf)
                    .map(|s| t.switches()[s as usize].name.clone())
                    .collect();
                up.reverse();
                up
            };
            (levels, Box::new(path))
        } else {
            let shape = if machine.rings().is_some() {
                "ring"
            } else {
                "torus3d"
            };
            return Err(CapacityError::SlurmShape {
                file: file.to_owned(),
                shape,
            });
        };
        levels.push(HOSTNAME_LABEL.to_owned());
        let mut builder = CapacityMachineBuilder::new(file, &levels)?;
        for (id, name) in machine.names().iter().enumerate() {
            let mut path = paths(id as NodeId);
            path.push(name.clone());
            builder.push(0, name.clone(), path, alloc.clone())?;
        }
        builder.build()
    }
}

/// The depth (switches from a root down to a leaf switch, both counted)
/// shared by every leaf switch of `tree`.
fn even_depth(tree: &Tree, file: &str) -> Result<usize, CapacityError> {
    let mut expected = None;
    for &leaf in tree.leaves() {
        let depth = tree.ancestors(leaf).count();
        match expected {
            None => expected = Some(depth),
            Some(e) if e != depth => {
                return Err(CapacityError::UnevenTree {
                    file: file.to_owned(),
                    leaf: crate::echo(&tree.switches()[leaf as usize].name),
                    depth,
                    expected: e,
                });
            }
            Some(_) => {}
        }
    }
    Ok(expected.unwrap_or(0))
}
