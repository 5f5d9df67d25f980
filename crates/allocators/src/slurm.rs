//! Slurm's placement rules as [`Allocator`](crate::Allocator)s on `blocks:FILE`,
//! `tree:FILE`, `ring:FILE` and `torus3d:FILE` machines: `block`
//! ([`BlockPlacer`], with `segment` and `exclusive`), `block-buddy`
//! ([`BlockBuddy`]), `tree` ([`TreePlacer`], with `switches`), and Slurm
//! 26.05.3's `ring` ([`RingPlacer`]) and `torus3d` ([`TorusPlacer`]), both
//! with `segment`; those two refuse a segment that does not divide the
//! node count, as sbatch does. Grants are node lists in increasing
//! id order; [`SlurmAllocator::machine`] names them as Slurm does. `block`
//! decides as Slurm 26.05.3 does (see [`crate::block`] for each rule and the
//! Slurm source it comes from). With a segment size S a `block` job of n
//! nodes is given ⌈n / S⌉ whole segments (sbatch wants S to divide the
//! count; the extra nodes count as internal fragmentation), and a job that
//! no block or switch could ever hold is refused as invalid rather than
//! left waiting, as Slurm refuses it at submission.
//!
//! ```
//! use std::sync::Arc;
//! use partalloc_allocators::{Allocator, Request, registry};
//! use partalloc_topology::Topology;
//! use partalloc_topology::slurm::SlurmMachine;
//! let mut conf = String::new();
//! for r in 0..8 {
//!     conf += &format!("BlockName=r{r} Nodes=n[{:03}-{:03}]\n", r * 18, r * 18 + 17);
//! }
//! conf += "BlockSizes=18,36,72,144\n";
//! let machine = Arc::new(SlurmMachine::parse_conf(&conf, "racks.conf")?);
//! let topology = Topology::Slurm(machine.clone());
//! let mut a = registry::build("block[segment=12]", &topology)?;
//! let g = a.allocate(&Request::nodes(36))?;
//! let nodes = g.partition().node_list(&topology)?;
//! // One segment after the other, each in the best-fit rack (the last of equals).
//! assert_eq!(machine.hostlist(&nodes), "n[090-101,108-119,126-137]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::Arc;

use partalloc_topology::slurm::{JobLocality, SlurmMachine};
use partalloc_topology::{NodeId, Topology, TopologyKind};

use crate::block::{BlockBuddy, BlockPlacer, PlaceError, Placement};
use crate::entry::{AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::error::UnsupportedTopology;
use crate::ring::RingPlacer;
use crate::torus3d::TorusPlacer;
use crate::tree::TreePlacer;
use crate::{
    AllocError, BuildError, FaultError, Grant, Managed, Partition, Request, Strategy, View,
};

/// Which Slurm rule a [`SlurmAllocator`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlurmRule {
    /// `topology/block` as Slurm 26.05.3 decides: the level from the job's
    /// size, best fit, segments, consolidation, exclusive.
    Block(Placement),
    /// Whole blocks of the smallest level that holds the job, first fit.
    BlockBuddy,
    /// `topology/tree` as Slurm 26.05.3 decides; a placement over more than
    /// `max_leaves` leaf switches waits (`--switches`).
    Tree {
        /// The leaf-switch limit, if any.
        max_leaves: Option<u32>,
    },
    /// `topology/ring` (Slurm 26.05.3): contiguous ring windows, best-fit
    /// ring, one window per ring per segment.
    Ring {
        /// Nodes per segment (`--segment`), if any.
        segment: Option<u32>,
    },
    /// `topology/torus3d` (Slurm 26.05.3): one placement sub-cube per
    /// segment, least fragmentation, best-fit torus.
    Torus3d {
        /// Nodes per segment (`--segment`), if any.
        segment: Option<u32>,
    },
}

#[derive(Debug, Clone)]
enum Placer {
    Block(BlockPlacer, Placement),
    Buddy(BlockBuddy),
    Tree(TreePlacer, Option<u32>),
    Ring(RingPlacer, Option<u32>),
    Torus(TorusPlacer, Option<u32>),
}

impl Placer {
    fn place_into(&mut self, nodes: u32, out: &mut Vec<NodeId>) -> Result<(), PlaceError> {
        match self {
            Self::Block(p, how) => p.place_into(nodes, *how, out),
            Self::Buddy(p) => p.place_into(nodes, out),
            // A job that would wait for ever for its leaf limit is refused
            // in a simulation (Slurm starts it after max_switch_wait).
            Self::Tree(p, max) => match p.place_into(nodes, *max, out) {
                Err(PlaceError::NoRoom { .. }) if max.is_some() && !p.fits_empty(nodes, *max) => {
                    Err(PlaceError::Invalid {
                        nodes,
                        reason: format!(
                            "it never starts within {} leaf switches, even on the empty machine",
                            max.unwrap_or(0)
                        ),
                    })
                }
                r => r,
            },
            Self::Ring(p, seg) => p.place_into(nodes, *seg, out),
            Self::Torus(p, seg) => p.place_into(nodes, *seg, out),
        }
    }

    fn release(&mut self, nodes: &[NodeId]) {
        match self {
            Self::Block(p, how) => p.release(nodes, *how),
            Self::Buddy(p) => p.release(nodes),
            Self::Tree(p, _) => p.release(nodes),
            Self::Ring(p, _) => p.release(nodes),
            Self::Torus(p, _) => p.release(nodes),
        }
    }
}

/// A Slurm placement rule bound to one machine: the placer decides and
/// keeps its own per-switch state; [`Managed`] keeps each grant's nodes
/// (so a release trusts only its own record) and the per-node state.
#[derive(Debug, Clone)]
pub struct SlurmAllocator {
    machine: Arc<SlurmMachine>,
    rule: SlurmRule,
    placer: Placer,
    scratch: Vec<NodeId>,
}

impl SlurmAllocator {
    /// The rule on a `blocks:`/`tree:`/`ring:`/`torus3d:` machine.
    ///
    /// # Errors
    /// [`BuildError::UnsupportedTopology`] for another machine or a block
    /// rule on a tree (and the reverse); [`BuildError::UnsuitableTopology`]
    /// for a segment of 0 nodes or a leaf limit of 0.
    pub fn new(topology: &Topology, rule: SlurmRule) -> Result<Managed<Self>, BuildError> {
        let name = match rule {
            SlurmRule::Block(_) => "block",
            SlurmRule::BlockBuddy => "block-buddy",
            SlurmRule::Tree { .. } => "tree",
            SlurmRule::Ring { .. } => "ring",
            SlurmRule::Torus3d { .. } => "torus3d",
        };
        let unsupported =
            |kind| BuildError::from(UnsupportedTopology::new(name, topology, &[kind]));
        let Some(machine) = topology.as_slurm() else {
            let kind = match rule {
                SlurmRule::Tree { .. } => TopologyKind::Tree,
                SlurmRule::Ring { .. } => TopologyKind::Ring,
                SlurmRule::Torus3d { .. } => TopologyKind::Torus3d,
                _ => TopologyKind::Blocks,
            };
            return Err(unsupported(kind));
        };
        let unsuitable = |reason: String| BuildError::UnsuitableTopology {
            strategy: name,
            topology: topology.to_string(),
            reason,
        };
        let placer = match (rule, machine.blocks(), machine.tree()) {
            (SlurmRule::Block(how), Some(b), _) => {
                if how.segment == Some(0) {
                    return Err(unsuitable("a segment has at least one node".to_owned()));
                }
                Placer::Block(BlockPlacer::new(b), how)
            }
            (SlurmRule::BlockBuddy, Some(b), _) => Placer::Buddy(BlockBuddy::new(b)),
            (SlurmRule::Tree { max_leaves }, _, Some(t)) => {
                if max_leaves == Some(0) {
                    return Err(unsuitable("switches must be at least 1".to_owned()));
                }
                Placer::Tree(TreePlacer::new(t), max_leaves)
            }
            (SlurmRule::Tree { .. }, ..) => return Err(unsupported(TopologyKind::Tree)),
            (SlurmRule::Ring { segment }, ..) => match machine.rings() {
                Some(r) => Placer::Ring(RingPlacer::new(r), segment),
                None => return Err(unsupported(TopologyKind::Ring)),
            },
            (SlurmRule::Torus3d { segment }, ..) => match machine.toruses() {
                Some(t) => Placer::Torus(TorusPlacer::new(t), segment),
                None => return Err(unsupported(TopologyKind::Torus3d)),
            },
            _ => return Err(unsupported(TopologyKind::Blocks)),
        };
        let strategy = Self {
            machine: Arc::clone(machine),
            rule,
            placer,
            scratch: Vec::with_capacity(topology.num_nodes().min(4096)),
        };
        Ok(Managed::new(topology.clone(), strategy))
    }

    /// The machine, with its node names.
    #[must_use]
    pub fn machine(&self) -> &SlurmMachine {
        &self.machine
    }

    /// The rule.
    #[must_use]
    pub fn rule(&self) -> SlurmRule {
        self.rule
    }

    /// The rule's segment size, if it has one.
    fn segment(&self) -> Option<u32> {
        match self.rule {
            SlurmRule::Block(how) => how.segment,
            SlurmRule::Ring { segment } | SlurmRule::Torus3d { segment } => segment,
            SlurmRule::BlockBuddy | SlurmRule::Tree { .. } => None,
        }
    }

    /// The locality of a grant's nodes (segments counted with the rule's
    /// segment size).
    #[must_use]
    pub fn locality(&self, grant: &Grant) -> JobLocality {
        match grant.partition() {
            Partition::Nodes(ids) => self.machine.job_locality(ids, self.segment()),
            _ => JobLocality::default(),
        }
    }

    /// Free nodes that a job wanting whole base blocks or leaf switches
    /// cannot use now.
    #[must_use]
    pub fn stranded_nodes(&self) -> u32 {
        match &self.placer {
            Placer::Block(p, _) => p.stranded_nodes(),
            // The buddy grants whole base blocks: nothing is ever partly used.
            Placer::Buddy(_) => 0,
            Placer::Tree(p, _) => p.stranded_nodes(),
            // Any free node can start some window or sub-cube.
            Placer::Ring(..) | Placer::Torus(..) => 0,
        }
    }
}

/// A positive count, or `none` (the documented default, as if not given).
fn spec_u32(spec: &crate::StrategySpec, key: &str) -> Result<Option<u32>, BuildError> {
    Ok(spec.count_or_none(key)?)
}

pub(crate) const BLOCK_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "block",
        summary: "Slurm 26.05.3 topology/block: block level from the job's size (waits rather than climbs), best-fit block and base blocks, last among equals",
        source: "Slurm 26.05.3 source: src/plugins/topology/block/eval_nodes_block.c, topology/common/common_topo.c, select/cons_tres/job_test.c; docs/blocks.md",
        params: &[
            ParamInfo {
                name: "segment",
                default: "none",
                doc: "nodes per segment: each segment placed on its own as a job of that size; ignored if larger than the job (sbatch --segment)",
            },
            ParamInfo {
                name: "consolidate",
                default: "false",
                doc: "true: all segments inside one block of the job's whole size (sbatch --consolidate-segments)",
            },
            ParamInfo {
                name: "exclusive",
                default: "false",
                doc: "true: no base block shared with another job (sbatch --exclusive=topo)",
            },
        ],
        topologies: &[TopologyKind::Blocks],
    },
    build: |t, spec| {
        let segment = spec_u32(spec, "segment")?;
        let exclusive = spec.parse_or("exclusive", false)?;
        let consolidate = spec.parse_or("consolidate", false)?;
        Ok(Box::new(SlurmAllocator::new(
            t,
            SlurmRule::Block(Placement {
                segment,
                exclusive,
                consolidate,
            }),
        )?))
    },
};

pub(crate) const BLOCK_BUDDY_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "block-buddy",
        summary: "buddy-style baseline: one whole free block of the smallest level that holds the job, first fit",
        source: "docs/blocks.md (the buddy systems of the hypercube papers on aggregated blocks)",
        params: &[],
        topologies: &[TopologyKind::Blocks],
    },
    build: |t, _| Ok(Box::new(SlurmAllocator::new(t, SlurmRule::BlockBuddy)?)),
};

pub(crate) const TREE_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "tree",
        summary: "Slurm 26.05.3 topology/tree: highest switch with room, leaf by leaf by best fit and switch distance",
        source: "Slurm 26.05.3 source: src/plugins/topology/tree/eval_nodes_tree.c, switch_record.c; docs/blocks.md",
        params: &[ParamInfo {
            name: "switches",
            default: "none",
            doc: "most leaf switches a job may span; a placement over more waits (sbatch --switches)",
        }],
        topologies: &[TopologyKind::Tree],
    },
    build: |t, spec| {
        let max_leaves = spec_u32(spec, "switches")?;
        Ok(Box::new(SlurmAllocator::new(
            t,
            SlurmRule::Tree { max_leaves },
        )?))
    },
};

const SEGMENT_PARAM: ParamInfo = ParamInfo {
    name: "segment",
    default: "none",
    doc: "nodes per segment (sbatch --segment): must divide the node count; ignored when larger",
};

pub(crate) const RING_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "ring",
        summary: "follows Slurm 26.05.3 topology/ring: first free contiguous (wrapping) window of each ring, best-fit ring, one ring per segment",
        source: "Slurm 26.05.3 src/plugins/topology/ring/eval_nodes_ring.c; docs/slurm-topologies.md",
        params: &[SEGMENT_PARAM],
        topologies: &[TopologyKind::Ring],
    },
    build: |t, spec| {
        let segment = spec_u32(spec, "segment")?;
        Ok(Box::new(SlurmAllocator::new(
            t,
            SlurmRule::Ring { segment },
        )?))
    },
};

pub(crate) const TORUS3D_ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "torus3d",
        summary: "follows Slurm 26.05.3 topology/torus3d: one placement sub-cube per segment, least fragmentation of the next larger placement, best-fit torus",
        source: "Slurm 26.05.3 src/plugins/topology/torus3d/eval_nodes_torus3d.c and torus3d_record.c; docs/slurm-topologies.md",
        params: &[SEGMENT_PARAM],
        topologies: &[TopologyKind::Torus3d],
    },
    build: |t, spec| {
        let segment = spec_u32(spec, "segment")?;
        Ok(Box::new(SlurmAllocator::new(
            t,
            SlurmRule::Torus3d { segment },
        )?))
    },
};

impl Strategy for SlurmAllocator {
    type Record = Vec<NodeId>;

    fn name(&self) -> String {
        match self.rule {
            SlurmRule::Block(how) => {
                let mut params = Vec::new();
                if let Some(s) = how.segment {
                    params.push(format!("segment={s}"));
                }
                if how.exclusive {
                    params.push("exclusive=true".to_owned());
                }
                if how.consolidate {
                    params.push("consolidate=true".to_owned());
                }
                if params.is_empty() {
                    "block".to_owned()
                } else {
                    format!("block[{}]", params.join(","))
                }
            }
            SlurmRule::BlockBuddy => "block-buddy".to_owned(),
            SlurmRule::Tree { max_leaves: None } => "tree".to_owned(),
            SlurmRule::Tree {
                max_leaves: Some(m),
            } => format!("tree[switches={m}]"),
            SlurmRule::Ring { segment: None } => "ring".to_owned(),
            SlurmRule::Ring { segment: Some(s) } => format!("ring[segment={s}]"),
            SlurmRule::Torus3d { segment: None } => "torus3d".to_owned(),
            SlurmRule::Torus3d { segment: Some(s) } => format!("torus3d[segment={s}]"),
        }
    }

    fn placement_rules(&self) -> Option<crate::PlacementRules> {
        Some(crate::PlacementRules::Slurm {
            segment: self.segment(),
        })
    }

    /// The placer's own state changes as it places: [`Managed`] commits
    /// every placement `choose` returns (a probe places on a copy).
    fn choose(
        &mut self,
        view: &View<'_, Vec<NodeId>>,
        request: &Request,
    ) -> Result<Option<Vec<NodeId>>, AllocError> {
        let total = view.total_nodes();
        let want = request.node_count();
        let count = u32::try_from(want)
            .ok()
            .filter(|&c| c > 0 && c as usize <= total);
        let Some(count) = count else {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!("needs {want} nodes; the machine has {total}"),
            });
        };
        // With segments a job asks for whole segments (sbatch --segment
        // must divide the count; a user rounds up), the rest is internal
        // fragmentation. A job smaller than its segment is given one whole
        // segment too (Slurm 26.05.3 would ignore the segment; rounding up
        // keeps every job of the run in whole segments).
        let count = match self.rule {
            SlurmRule::Block(Placement {
                segment: Some(seg), ..
            }) if seg > 0 => count.div_ceil(seg).saturating_mul(seg),
            _ => count,
        };
        let mut out = core::mem::take(&mut self.scratch);
        let placed = self.placer.place_into(count, &mut out);
        let result = match placed {
            Ok(()) => Ok(Some(out.clone())),
            Err(PlaceError::NoRoom { .. }) => Ok(None),
            Err(e) => Err(AllocError::Invalid {
                request: *request,
                reason: e.to_string(),
            }),
        };
        self.scratch = out;
        result
    }

    fn released(&mut self, _: &View<'_, Vec<NodeId>>, nodes: &Vec<NodeId>) {
        self.placer.release(nodes);
    }

    fn takes_faults(&self) -> Result<(), FaultError> {
        Err(FaultError::Unsupported {
            strategy: self.name(),
        })
    }
}
