//! The machine a strategy allocates on: a hypercube, a grid or a pod.

use core::fmt;
use core::str::FromStr;
use std::sync::Arc;

use crate::capacity::{CapacityMachine, GPU_RESOURCE};
use crate::gpushare::GpuCluster;
use crate::pod::Pod;
use crate::slurm::SlurmMachine;
use crate::{Coords, Grid, Hypercube, NodeId, TopologyError};

/// A partitionable machine: a binary hypercube, an n-dimensional mesh or
/// torus, or an accelerator pod.
///
/// Parsed from and printed as `hypercube:10`, `mesh:64x64`, `torus:8x8x8`,
/// `kary:16^3` (a 16-ary 3-cube mesh), `kary-torus:4^3` or
/// `pod:tpu-v4:8x8x8` (the pod text form is described at [`Pod`]); sides
/// are given dimension 0 first. It is `Clone` but not `Copy`: a pod carries
/// its catalogue, shared behind an [`Arc`], so a clone is cheap.
///
/// ```
/// use partalloc_topology::Topology;
/// let t: Topology = "kary:16^3".parse()?;
/// assert_eq!(t.num_nodes(), 4096);
/// assert_eq!(t.to_string(), "mesh:16x16x16");
/// let h: Topology = "hypercube:7".parse()?;
/// assert_eq!(h.diameter(), 7);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Topology {
    /// A binary hypercube.
    Hypercube(Hypercube),
    /// A mesh or torus.
    Grid(Grid),
    /// An accelerator pod: a torus of chips with a shape catalogue.
    Pod(Arc<Pod>),
    /// A machine as Slurm describes it (`topology/block` racks and blocks,
    /// or a `topology/tree` switch tree), read from a file by
    /// [`SlurmMachine::parse_conf`] or [`SlurmMachine::parse_yaml`]; printed
    /// `blocks:SOURCE` or `tree:SOURCE`.
    Slurm(Arc<SlurmMachine>),
    /// Kubernetes nodes that hold several pods, under label levels (Kueue
    /// TAS): its nodes here are the machine's allocation units (GPUs, see
    /// [`CapacityMachine::unit_resource`]), numbered leaf after leaf.
    /// `racks:[Bx]RxNxGgpu` parses (B blocks, default 1, of R racks of N
    /// nodes with G `nvidia.com/gpu` each); `kueue:TOPOLOGY,NODES` is read
    /// from files by the command-line tool
    /// ([`CapacityMachine::from_kueue_yaml`]). Not serialized: with the
    /// `serde` feature, serializing one is an error.
    #[cfg_attr(feature = "serde", serde(skip))]
    Capacity(Arc<CapacityMachine>),
    /// A GPU-sharing cluster (`crate::gpushare`): Kubernetes nodes of CPU,
    /// memory and GPUs shared in thousandths, each holding many pods; its
    /// nodes here are the cluster's nodes. `gpushare:NxGgpu` parses;
    /// `openb:NODES.csv` is read from files by the command-line tool. Not
    /// serialized.
    #[cfg_attr(feature = "serde", serde(skip))]
    GpuShare(Arc<GpuCluster>),
}

/// Declares [`TopologyKind`] with its names and the list of every variant,
/// so that a family is spelled once.
macro_rules! topology_kinds {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// The family of a [`Topology`], for listing which machines a
        /// strategy accepts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[non_exhaustive]
        pub enum TopologyKind {
            $($(#[$doc])* $variant,)*
        }

        impl TopologyKind {
            /// Every machine family, in the order of the variants.
            pub const ALL: &'static [TopologyKind] = &[$(Self::$variant,)*];
        }

        impl fmt::Display for TopologyKind {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    $(Self::$variant => $name,)*
                })
            }
        }
    };
}

topology_kinds! {
    /// Binary hypercube.
    Hypercube => "hypercube",
    /// Mesh (no wrap-around), including k-ary n-cube meshes.
    Mesh => "mesh",
    /// Torus (wrap-around in every dimension).
    Torus => "torus",
    /// Accelerator pod (a torus of chips with a shape catalogue).
    Pod => "pod",
    /// Slurm `topology/block`: base blocks aggregated into levels.
    Blocks => "blocks",
    /// Slurm `topology/tree`: leaf switches under a switch tree.
    Tree => "tree",
    /// Slurm `topology/ring` (26.05): rings of at most 16 nodes.
    Ring => "ring",
    /// Slurm `topology/torus3d` (26.05): 3-D tori with placement shapes.
    Torus3d => "torus3d",
    /// Nodes with allocatable resources under label levels (Kueue TAS).
    Capacity => "capacity",
    /// A GPU-sharing cluster: nodes of CPU, memory and shared GPUs.
    GpuShare => "gpushare",
}

impl TopologyKind {
    /// A small machine of this family, built from text held here (a file
    /// form's text inline), for tests that run something on every family:
    /// a new family is covered by them once it has its example.
    ///
    /// ```
    /// use partalloc_topology::TopologyKind;
    /// for &kind in TopologyKind::ALL {
    ///     assert_eq!(kind.example().kind(), kind);
    /// }
    /// ```
    ///
    /// # Panics
    /// Never: the texts are fixed, and the test above parses each.
    #[must_use]
    #[expect(
        clippy::expect_used,
        reason = "fixed texts, each parsed by the doctest of every family"
    )]
    pub fn example(self) -> Topology {
        let slurm = |text: &str| -> Topology {
            SlurmMachine::parse_conf(text, "example.conf")
                .expect("the example parses")
                .into()
        };
        match self {
            Self::Hypercube => Hypercube::new(6).expect("a 6-cube").into(),
            Self::Mesh => Grid::mesh(&[8, 8]).expect("an 8x8 mesh").into(),
            Self::Torus => Grid::torus(&[8, 8]).expect("an 8x8 torus").into(),
            Self::Pod => "pod:tpu-v5e:8x8".parse().expect("a v5e pod"),
            Self::Blocks => slurm("BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[4-7]\n"),
            Self::Tree => slurm(
                "SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[4-7]\nSwitchName=top Switches=s[0-1]\n",
            ),
            Self::Ring => slurm("RingName=r0 Nodes=n[0-3]\nRingName=r1 Nodes=n[4-7]\n"),
            Self::Torus3d => SlurmMachine::parse_yaml(
                "- topology: t\n  torus3d:\n    toruses:\n      - name: a\n        dims: {x: 2, y: 2, z: 2}\n        nodes: n[0-7]\n",
                "example.yaml",
                None,
            )
            .expect("the example parses")
            .into(),
            Self::Capacity => "racks:2x4x4gpu".parse().expect("racks"),
            Self::GpuShare => "gpushare:8x4gpu".parse().expect("a GPU-sharing cluster"),
        }
    }
}

impl Topology {
    /// The family of this machine.
    #[must_use]
    pub fn kind(&self) -> TopologyKind {
        match self {
            Self::Hypercube(_) => TopologyKind::Hypercube,
            Self::Grid(g) if g.is_torus() => TopologyKind::Torus,
            Self::Grid(_) => TopologyKind::Mesh,
            Self::Pod(_) => TopologyKind::Pod,
            Self::Slurm(m) if m.tree().is_some() => TopologyKind::Tree,
            Self::Slurm(m) if m.rings().is_some() => TopologyKind::Ring,
            Self::Slurm(m) if m.toruses().is_some() => TopologyKind::Torus3d,
            Self::Slurm(_) => TopologyKind::Blocks,
            Self::Capacity(_) => TopologyKind::Capacity,
            Self::GpuShare(_) => TopologyKind::GpuShare,
        }
    }

    /// Number of nodes.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        match self {
            Self::Hypercube(h) => h.num_nodes(),
            Self::Grid(g) => g.num_nodes(),
            Self::Pod(p) => p.grid().num_nodes(),
            Self::Slurm(m) => m.num_nodes(),
            Self::Capacity(m) => m.num_units(),
            Self::GpuShare(c) => c.nodes().len(),
        }
    }

    /// Number of links.
    #[must_use]
    pub fn num_links(&self) -> u64 {
        match self {
            Self::Hypercube(h) => h.num_links(),
            Self::Grid(g) => g.num_links(),
            Self::Pod(p) => p.grid().num_links(),
            Self::Slurm(m) => m.num_links(),
            Self::Capacity(m) => m.num_links(),
            // A flat cluster: every node has one link to one switch.
            Self::GpuShare(c) => c.nodes().len() as u64,
        }
    }

    /// The diameter in hops.
    #[must_use]
    pub fn diameter(&self) -> u32 {
        match self {
            Self::Hypercube(h) => h.diameter(),
            Self::Grid(g) => g.diameter(),
            Self::Pod(p) => p.grid().diameter(),
            Self::Slurm(m) => m.diameter(),
            Self::Capacity(m) => m
                .num_units()
                .checked_sub(1)
                .and_then(|last| m.unit_distance(0, last as u32))
                .unwrap_or(0),
            Self::GpuShare(c) => {
                if c.nodes().len() > 1 {
                    2
                } else {
                    0
                }
            }
        }
    }

    /// Hop distance (Hamming, Manhattan or Lee; on a Slurm machine
    /// [`SlurmMachine::distance`]).
    ///
    /// # Errors
    /// Either node outside the machine.
    pub fn distance(&self, a: NodeId, b: NodeId) -> Result<u32, TopologyError> {
        match self {
            Self::Hypercube(h) => h.distance(a, b),
            Self::Grid(g) => g.distance(a, b),
            Self::Pod(p) => p.grid().distance(a, b),
            Self::Slurm(m) => {
                let nodes = m.num_nodes() as u64;
                for x in [a, b] {
                    if u64::from(x) >= nodes {
                        return Err(TopologyError::NodeOutOfRange {
                            node: u64::from(x),
                            nodes,
                        });
                    }
                }
                Ok(m.distance(a, b))
            }
            Self::Capacity(m) => m.unit_distance(a, b).ok_or(TopologyError::NodeOutOfRange {
                node: u64::from(a.max(b)),
                nodes: m.num_units() as u64,
            }),
            Self::GpuShare(c) => {
                let nodes = c.nodes().len() as u64;
                if u64::from(a.max(b)) >= nodes {
                    return Err(TopologyError::NodeOutOfRange {
                        node: u64::from(a.max(b)),
                        nodes,
                    });
                }
                Ok(if a == b { 0 } else { 2 })
            }
        }
    }

    /// The distinct neighbours of a node.
    ///
    /// # Errors
    /// The node is outside the machine.
    pub fn neighbours(&self, node: NodeId) -> Result<Vec<NodeId>, TopologyError> {
        match self {
            Self::Hypercube(h) => h.neighbours(node),
            Self::Grid(g) => g.neighbours(node),
            Self::Pod(p) => p.grid().neighbours(node),
            Self::Slurm(m) => m.neighbours(node).ok_or(TopologyError::NodeOutOfRange {
                node: u64::from(node),
                nodes: m.num_nodes() as u64,
            }),
            Self::Capacity(m) => {
                let leaf = m.unit_leaf(node).ok_or(TopologyError::NodeOutOfRange {
                    node: u64::from(node),
                    nodes: m.num_units() as u64,
                })?;
                Ok(m.leaf_units(leaf).filter(|&u| u != node).collect())
            }
            // Nodes reach one another through the cluster's switch only.
            Self::GpuShare(c) if (node as usize) < c.nodes().len() => Ok(Vec::new()),
            Self::GpuShare(c) => Err(TopologyError::NodeOutOfRange {
                node: u64::from(node),
                nodes: c.nodes().len() as u64,
            }),
        }
    }

    /// The hypercube, if this is one.
    #[must_use]
    pub fn as_hypercube(&self) -> Option<&Hypercube> {
        match self {
            Self::Hypercube(h) => Some(h),
            _ => None,
        }
    }

    /// The grid of nodes, if this is a mesh or torus, or a pod (its torus
    /// of chips).
    #[must_use]
    pub fn as_grid(&self) -> Option<&Grid> {
        match self {
            Self::Grid(g) => Some(g),
            Self::Pod(p) => Some(p.grid()),
            Self::Hypercube(_) | Self::Slurm(_) | Self::Capacity(_) | Self::GpuShare(_) => None,
        }
    }

    /// The Slurm machine, if this is one.
    #[must_use]
    pub fn as_slurm(&self) -> Option<&Arc<SlurmMachine>> {
        match self {
            Self::Slurm(m) => Some(m),
            _ => None,
        }
    }

    /// The capacity machine (Kubernetes nodes under label levels), if
    /// this is one.
    #[must_use]
    pub fn as_capacity(&self) -> Option<&Arc<CapacityMachine>> {
        match self {
            Self::Capacity(m) => Some(m),
            _ => None,
        }
    }

    /// The GPU-sharing cluster, if this is one.
    #[must_use]
    pub fn as_gpushare(&self) -> Option<&Arc<GpuCluster>> {
        match self {
            Self::GpuShare(c) => Some(c),
            _ => None,
        }
    }

    /// The pod, if this is one.
    #[must_use]
    pub fn as_pod(&self) -> Option<&Pod> {
        match self {
            Self::Pod(p) => Some(p),
            _ => None,
        }
    }
}

impl From<Hypercube> for Topology {
    fn from(h: Hypercube) -> Self {
        Self::Hypercube(h)
    }
}

impl From<Grid> for Topology {
    fn from(g: Grid) -> Self {
        Self::Grid(g)
    }
}

impl From<SlurmMachine> for Topology {
    fn from(m: SlurmMachine) -> Self {
        Self::Slurm(Arc::new(m))
    }
}

impl From<CapacityMachine> for Topology {
    fn from(m: CapacityMachine) -> Self {
        Self::Capacity(Arc::new(m))
    }
}

impl From<GpuCluster> for Topology {
    fn from(c: GpuCluster) -> Self {
        Self::GpuShare(Arc::new(c))
    }
}

impl From<Pod> for Topology {
    fn from(p: Pod) -> Self {
        Self::Pod(Arc::new(p))
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hypercube(h) => write!(f, "hypercube:{}", h.dim()),
            Self::Grid(g) => {
                f.write_str(if g.is_torus() { "torus:" } else { "mesh:" })?;
                for (i, s) in g.sides().iter().enumerate() {
                    if i > 0 {
                        f.write_str("x")?;
                    }
                    write!(f, "{s}")?;
                }
                Ok(())
            }
            Self::Pod(p) => write!(f, "pod:{p}"),
            Self::Slurm(m) if m.tree().is_some() => write!(f, "tree:{}", m.source()),
            Self::Slurm(m) if m.rings().is_some() => write!(f, "ring:{}", m.source()),
            Self::Slurm(m) if m.toruses().is_some() => write!(f, "torus3d:{}", m.source()),
            Self::Slurm(m) => write!(f, "blocks:{}", m.source()),
            Self::Capacity(m) => f.write_str(m.source()),
            Self::GpuShare(c) => f.write_str(c.source()),
        }
    }
}

/// The sides of `AxB[xC…]` (`x`, `X` or `×` between them), dimension 0
/// first, or why the text is not that.
fn side_list(text: &str) -> Result<Vec<u32>, String> {
    text.split(['x', 'X', '×']).map(whole_number).collect()
}

/// A whole number of a machine's text form, or why `t` is not one: too
/// large for the sides and dimensions accepted (at most `u32::MAX`), or
/// not a non-negative integer at all.
fn whole_number(t: &str) -> Result<u32, String> {
    use core::num::IntErrorKind;
    t.trim().parse::<u32>().map_err(|e| match e.kind() {
        IntErrorKind::PosOverflow => format!(
            "{:?} is larger than the largest side or dimension accepted, {}",
            crate::echo(t),
            u32::MAX
        ),
        _ => format!("{:?} is not a non-negative integer", crate::echo(t)),
    })
}

/// Parses sides written as in a machine description, `AxB[xC…]` (`x`, `X`
/// or `×` between them), dimension 0 first: the one parser of side lists,
/// shared by [`Topology`]'s text form and by workload descriptions.
///
/// ```
/// let sides = partalloc_topology::parse_sides("16x8")?;
/// assert_eq!(sides.as_slice(), &[16, 8]);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
///
/// # Errors
/// [`TopologyError::InvalidSides`] for text that is not a list of whole
/// numbers; as [`Coords::new`] for no or too many dimensions.
pub fn parse_sides(text: &str) -> Result<Coords, TopologyError> {
    let sides = side_list(text).map_err(|reason| TopologyError::InvalidSides {
        text: crate::echo(text),
        reason,
    })?;
    Coords::new(&sides)
}

/// `[Bx]RxNxGgpu`: B blocks (default 1) of R racks of N nodes with G
/// `nvidia.com/gpu` each, printed back in that normal form. `whole` is
/// the full description, named by errors.
fn racks(text: &str, whole: &str) -> Result<Topology, TopologyError> {
    let err = |reason: String| TopologyError::InvalidTopology {
        text: crate::echo(whole),
        reason,
    };
    let shape = "expected [BLOCKSx]RACKSxNODESxGgpu, e.g. racks:8x18x4gpu";
    let t = text.trim();
    let (counts, gpus) = t
        .strip_suffix("gpu")
        .and_then(|c| c.rsplit_once(['x', 'X', '×']))
        .ok_or_else(|| err(format!("{:?}: {shape}", crate::echo(t))))?;
    let gpus = whole_number(gpus).map_err(err)?;
    let counts = side_list(counts).map_err(err)?;
    let (blocks, racks, nodes) = match *counts.as_slice() {
        [r, n] => (1, r, n),
        [b, r, n] => (b, r, n),
        _ => return Err(err(format!("{:?}: {shape}", crate::echo(t)))),
    };
    let machine = CapacityMachine::racks(blocks, racks, nodes, &[(GPU_RESOURCE, i64::from(gpus))])
        .map_err(|e| match e {
            // A size over a bound: the fix is a smaller machine, not
            // another of the forms the parse error lists.
            e @ crate::capacity::CapacityError::TooLarge { .. } => TopologyError::MachineTooLarge {
                text: crate::echo(whole),
                reason: e.to_string(),
            },
            e => err(e.to_string()),
        })?;
    if machine.unit_resource() != GPU_RESOURCE {
        return Err(err(
            "a racks machine needs at least 1 GPU per node".to_owned()
        ));
    }
    let name = if blocks == 1 {
        format!("racks:{racks}x{nodes}x{gpus}gpu")
    } else {
        format!("racks:{blocks}x{racks}x{nodes}x{gpus}gpu")
    };
    Ok(machine.with_source(name).into())
}

impl FromStr for Topology {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Self, TopologyError> {
        let err = |reason: &str| TopologyError::InvalidTopology {
            text: crate::echo(s),
            reason: reason.to_owned(),
        };
        let (family, rest) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| err("missing ':' between family and size"))?;
        let number =
            |t: &str| -> Result<u32, TopologyError> { whole_number(t).map_err(|r| err(&r)) };
        let sides =
            |t: &str| -> Result<Vec<u32>, TopologyError> { side_list(t).map_err(|r| err(&r)) };
        let kary = |t: &str| -> Result<Vec<u32>, TopologyError> {
            let (k, n) = t
                .split_once('^')
                .ok_or_else(|| err("expected K^N, e.g. 16^3"))?;
            let (k, n) = (number(k)?, number(n)?);
            if n as usize > crate::MAX_DIMS {
                let too_many = TopologyError::TooManyDimensions {
                    got: n as usize,
                    max: crate::MAX_DIMS,
                };
                return Err(err(&too_many.to_string()));
            }
            Ok(vec![k; n as usize])
        };
        // A size the machine types refuse is reported with the text given,
        // so every parse error names its input.
        let built = |r: Result<Self, TopologyError>| r.map_err(|e| err(&e.to_string()));
        match family.trim().to_ascii_lowercase().as_str() {
            "hypercube" | "cube" => built(Hypercube::new(number(rest)?).map(Into::into)),
            "mesh" => built(Grid::mesh(&sides(rest)?).map(Into::into)),
            "torus" => built(Grid::torus(&sides(rest)?).map(Into::into)),
            "kary" | "kary-mesh" => built(Grid::mesh(&kary(rest)?).map(Into::into)),
            "kary-torus" => built(Grid::torus(&kary(rest)?).map(Into::into)),
            "pod" => rest
                .parse::<Pod>()
                .map(Into::into)
                .map_err(|e| err(&e.to_string())),
            "racks" => racks(rest, s),
            "gpushare" => crate::gpushare::parse_uniform(rest, s).map(Into::into),
            "openb" => Err(err(
                "an openb machine is read from an OpenB node list file, not parsed from text; load it with partalloc_experiment::MachineSource (the command-line tool reads openb:NODES.csv)",
            )),
            "kueue" => Err(err(
                "a kueue machine is read from a Kueue Topology file and a node list, not parsed from text; load it with CapacityMachine::from_kueue_yaml (the command-line tool reads kueue:TOPOLOGY.yaml,NODES.yaml)",
            )),
            "blocks" | "tree" | "ring" | "torus3d" => Err(err(&format!(
                "a {family} machine is read from a topology.conf or topology.yaml file, not parsed from text; load it with SlurmMachine::parse_conf or parse_yaml (the command-line tool reads {family}:FILE)"
            ))),
            other => Err(err(&format!("unknown family {:?}", crate::echo(other)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_machines_are_topologies_read_from_files() {
        let conf = "BlockName=r0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\n";
        let b = Topology::from(SlurmMachine::parse_conf(conf, "racks.conf").unwrap());
        assert_eq!(
            (b.kind(), b.to_string()),
            (TopologyKind::Blocks, "blocks:racks.conf".to_owned())
        );
        assert_eq!((b.num_nodes(), b.num_links(), b.diameter()), (8, 8 + 2, 2));
        assert_eq!(b.distance(0, 5), Ok(2));
        assert!(matches!(
            b.distance(0, 8),
            Err(TopologyError::NodeOutOfRange { node: 8, nodes: 8 })
        ));
        assert_eq!(b.neighbours(5).unwrap(), vec![4, 6, 7]);
        assert!(b.neighbours(9).is_err());
        assert!(b.as_slurm().is_some() && b.as_grid().is_none());
        let t = Topology::from(
            SlurmMachine::parse_conf("SwitchName=s Nodes=x[0-1]\n", "fabric.yaml").unwrap(),
        );
        assert_eq!(
            (t.kind(), t.to_string()),
            (TopologyKind::Tree, "tree:fabric.yaml".to_owned())
        );
        let e = "blocks:racks.conf"
            .parse::<Topology>()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("read from a topology.conf or topology.yaml file"),
            "{e}"
        );
        assert_eq!(b.clone(), b);
    }

    #[test]
    fn racks_are_capacity_machines_whose_nodes_are_gpus() {
        let t: Topology = "racks:8x18x4gpu".parse().unwrap();
        assert_eq!(
            (t.kind(), t.to_string(), t.num_nodes()),
            (TopologyKind::Capacity, "racks:8x18x4gpu".to_owned(), 576)
        );
        let m = t.as_capacity().unwrap();
        assert_eq!((m.num_leaves(), m.unit_resource()), (144, GPU_RESOURCE));
        // GPUs 0..4 share node 0, 0..72 rack 0, all block 0.
        assert_eq!(t.distance(0, 3), Ok(1));
        assert_eq!(t.distance(0, 4), Ok(2));
        assert_eq!(t.distance(0, 72), Ok(3));
        assert_eq!(t.diameter(), 3);
        assert_eq!(t.neighbours(5).unwrap(), vec![4, 6, 7]);
        assert!(t.neighbours(576).is_err() && t.distance(0, 576).is_err());
        // 576 units + 1 block + 8 racks + 144 nodes.
        assert_eq!(t.num_links(), 576 + 153);
        let two: Topology = "racks:2x1x3x2gpu".parse().unwrap();
        assert_eq!(
            (two.to_string(), two.num_nodes()),
            ("racks:2x1x3x2gpu".to_owned(), 12)
        );
        assert_eq!(two.diameter(), 4, "no common block");
        assert_eq!("racks:1x8x18x4gpu".parse::<Topology>().unwrap(), t);
        for (bad, says) in [
            ("racks:8x18", "expected [BLOCKSx]RACKSxNODESxGgpu"),
            ("racks:8x18x0gpu", "at least 1 GPU per node"),
            ("racks:0x18x4gpu", "must be at least 1"),
            ("racks:1x2x3x4x5gpu", "expected [BLOCKSx]"),
            ("racks:8xqx4gpu", "\"q\" is not a non-negative integer"),
            ("racks:65536x65536x2x1gpu", "more than the supported"),
            ("kueue:t.yaml,n.yaml", "read from a Kueue Topology file"),
        ] {
            let e = bad.parse::<Topology>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn parse_and_print_round_trip() {
        for text in ["hypercube:10", "mesh:64x64", "torus:8x8x8", "mesh:4x4x16"] {
            let t: Topology = text.parse().unwrap();
            assert_eq!(t.to_string(), text);
        }
        let t: Topology = "kary-torus:4^3".parse().unwrap();
        assert_eq!(t.kind(), TopologyKind::Torus);
        assert_eq!(t.num_links(), 3 * 64);
    }

    #[test]
    fn malformed_descriptions_explain_themselves() {
        for (bad, says) in [
            (
                "mesh",
                "invalid topology \"mesh\": missing ':' between family and size",
            ),
            (
                "mesh:4xq",
                "invalid topology \"mesh:4xq\": \"q\" is not a non-negative integer",
            ),
            (
                "mesh:4294967296x1",
                "invalid topology \"mesh:4294967296x1\": \"4294967296\" is larger than the largest side or dimension accepted, 4294967295",
            ),
            (
                "hypercube:99999999999",
                "\"99999999999\" is larger than the largest side or dimension accepted",
            ),
            ("blob:4", "unknown family \"blob\""),
            ("kary:16", "expected K^N, e.g. 16^3"),
            (
                "mesh:0x4",
                "side 0 has length 0; every side needs at least one node",
            ),
            (
                "hypercube:40",
                "hypercube dimension 40 is above the supported maximum 30",
            ),
            (
                "kary:2^4000000000",
                "4000000000 dimensions given, but at most 8 are supported",
            ),
        ] {
            let e = bad.parse::<Topology>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let e = "blob:4".parse::<Topology>().unwrap_err().to_string();
        assert!(
            e.contains("unknown family") && e.contains("mesh:AxB"),
            "{e}"
        );
    }
}
