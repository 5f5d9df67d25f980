//! Machines as Slurm describes them: racks and blocks (`topology/block`),
//! switch trees (`topology/tree`) and rings (`topology/ring`), read from
//! `topology.conf` or `topology.yaml`, and 3-D tori (`topology/torus3d`),
//! read from `topology.yaml`.
//!
//! Node ids follow the order in which the file names the nodes: base block
//! by base block for a block machine, leaf switch by leaf switch for a tree,
//! so that every base block or leaf switch is a run of consecutive ids;
//! ring by ring, and torus by torus (region by region), likewise.
//! Node names are kept; [`SlurmMachine::hostlist`] prints a set of ids as
//! Slurm prints node lists.
//!
//! ```
//! use partalloc_topology::slurm::SlurmMachine;
//! let text = "BlockName=r0 Nodes=n[00-17]\nBlockName=r1 Nodes=n[18-35]\nBlockSizes=18,36\n";
//! let m = SlurmMachine::parse_conf(text, "racks.conf")?;
//! assert_eq!(m.num_nodes(), 36);
//! let blocks = m.blocks().expect("a block machine");
//! assert_eq!(blocks.levels(), &[1, 2]);
//! assert_eq!(m.hostlist(&[0, 1, 2, 20]), "n[00-02,20]");
//! # Ok::<(), partalloc_topology::slurm::ConfError>(())
//! ```

mod conf;
pub mod hostlist;

/// Most nodes a Slurm machine file may describe (2^19, 524,288: several
/// times the largest clusters Slurm runs). Each node keeps its name and
/// its place in the blocks, switches or rings, so a file at this bound
/// builds in about a hundred megabytes; the count is taken from the
/// `Nodes=` lists before any name is expanded.
pub const MAX_SLURM_NODES: usize = 1 << 19;

mod measures;
pub mod ring;
pub mod torus3d;
mod yaml;

pub use conf::{ConfError, ConfErrorKind};
pub use hostlist::HostlistError;
pub use measures::JobLocality;
pub use ring::Rings;
pub use torus3d::{PlacementShape, Torus, Toruses};

use crate::NodeId;

/// A block machine: base blocks of consecutive node ids, aggregated into
/// levels of aligned runs of base blocks. As in Slurm, a base block may
/// hold fewer nodes than the base block size (the first `BlockSizes` value,
/// in which the levels are counted), never more.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Blocks {
    names: Vec<String>,
    base_size: u32,
    /// Base blocks per block at each level, increasing; `levels[0] == 1`.
    levels: Vec<u32>,
    /// First node id of each base block, then the number of nodes.
    starts: Vec<NodeId>,
}

impl Blocks {
    /// The base block size: nodes per base block as the levels count them
    /// (Slurm's first `BlockSizes` value, else the first block's nodes).
    #[must_use]
    pub fn base_size(&self) -> u32 {
        self.base_size
    }

    /// Number of base blocks.
    #[must_use]
    pub fn base_blocks(&self) -> u32 {
        self.names.len() as u32
    }

    /// The base-block names, in id order.
    #[must_use]
    pub fn block_names(&self) -> &[String] {
        &self.names
    }

    /// Base blocks per aggregated block at each level (level 0 = base).
    #[must_use]
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// The base block holding `node` (the last one for an id past the
    /// machine).
    #[must_use]
    pub fn block_of(&self, node: NodeId) -> u32 {
        self.starts
            .partition_point(|&s| s <= node)
            .saturating_sub(1)
            .min(self.names.len().saturating_sub(1)) as u32
    }

    /// The node ids of base block `block` (empty past the last block).
    #[must_use]
    pub fn nodes_of(&self, block: u32) -> core::ops::Range<NodeId> {
        let b = block as usize;
        match (self.starts.get(b), self.starts.get(b + 1)) {
            (Some(&lo), Some(&hi)) => lo..hi,
            _ => 0..0,
        }
    }

    /// Nodes of each base block, in id order.
    pub fn block_sizes(&self) -> impl Iterator<Item = u32> + '_ {
        self.starts.windows(2).map(|w| w[1] - w[0])
    }

    /// Nodes of the largest block of the highest level (the whole machine
    /// when that level covers it): with racks of the base size, that
    /// level's base blocks times the base size.
    #[must_use]
    pub fn largest_block_nodes(&self) -> u32 {
        self.largest_block_nodes_at(self.levels.len().saturating_sub(1))
    }

    /// Nodes of the largest block of level `level` (0 = base blocks; past
    /// the last level, the whole machine). As in Slurm a level's blocks
    /// are the aligned runs of its base blocks, the last one possibly
    /// shorter.
    #[must_use]
    pub fn largest_block_nodes_at(&self, level: usize) -> u32 {
        let count = self.names.len();
        let m = self.levels.get(level).map_or(count, |&m| m as usize);
        self.runs(m, 0, count).max().unwrap_or(0)
    }

    /// Nodes of each aligned run of `m` base blocks from base block `from`
    /// up to `to` (the last run possibly shorter).
    fn runs(&self, m: usize, from: usize, to: usize) -> impl Iterator<Item = u32> + '_ {
        let m = m.max(1);
        let to = to.min(self.names.len());
        (from..to)
            .step_by(m)
            .map(move |b| self.starts[(b + m).min(to)] - self.starts[b])
    }

    /// The largest `n` such that a job of any size up to `n` nodes fits a
    /// block of the level its size picks, on the empty machine, as Slurm
    /// places it: the block holds the job, and when the job may use only
    /// some of the block's lower-level blocks, the fullest of those hold
    /// it (`eval_nodes_block.c`). Jobs larger than the highest level's
    /// blocks are not counted. With racks of the base size this is
    /// [`largest_block_nodes`](Self::largest_block_nodes); with smaller
    /// racks a size may not fit while a larger one does, and this is where
    /// the first such size begins.
    #[must_use]
    pub fn largest_job_nodes(&self) -> u32 {
        let count = self.names.len();
        let base = u64::from(self.base_size.max(1));
        let mut ok = 0u64;
        for (l, &m) in self.levels.iter().enumerate() {
            let m = (m as usize).max(1);
            let mb = l
                .checked_sub(1)
                .map_or(1, |p| self.levels[p] as usize)
                .max(1);
            let (lo, hi, low) = (
                if l == 0 { 0 } else { mb as u64 * base },
                m as u64 * base,
                mb as u64 * base,
            );
            // Per block of the level: its nodes and the running sums of
            // its lower blocks, fullest first (computed once per level, so
            // the level costs O(base blocks) whatever its size ratio).
            let blocks: Vec<(u64, Vec<u64>)> = (0..count)
                .step_by(m)
                .map(|start| {
                    let mut low_nodes: Vec<u64> =
                        self.runs(mb, start, start + m).map(u64::from).collect();
                    low_nodes.sort_unstable_by(|a, b| b.cmp(a));
                    let sums = low_nodes
                        .iter()
                        .scan(0u64, |acc, &n| {
                            *acc += n;
                            Some(*acc)
                        })
                        .collect();
                    (u64::from(self.runs(m, start, start + m).sum::<u32>()), sums)
                })
                .collect();
            // Jobs of lo+1..=hi nodes, grouped by how many lower blocks
            // they may use.
            let mut k = lo + 1;
            while k <= hi {
                let max_low = k.div_ceil(low);
                let end = hi.min(max_low * low);
                let limited = m as u64 != mb as u64 * max_low;
                let take = usize::try_from(max_low).unwrap_or(usize::MAX);
                let best = blocks
                    .iter()
                    .map(
                        |(nodes, sums)| match sums.get(take.saturating_sub(1)).or(sums.last()) {
                            Some(&s) if limited => (*nodes).min(s),
                            _ => *nodes,
                        },
                    )
                    .max()
                    .unwrap_or(0);
                if best < end {
                    return u32::try_from(ok.max(best)).unwrap_or(u32::MAX);
                }
                ok = end;
                k = end + 1;
            }
        }
        u32::try_from(ok.min(u64::from(self.starts.last().copied().unwrap_or(0))))
            .unwrap_or(u32::MAX)
    }

    /// Whether every base block holds exactly the base block size.
    #[must_use]
    pub fn is_even(&self) -> bool {
        self.block_sizes().all(|n| n == self.base_size)
    }
}

/// One switch of a tree machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Switch {
    /// The switch's name.
    pub name: String,
    /// Parent switch index, `None` at a root.
    pub parent: Option<u32>,
    /// Child switch indices (empty at a leaf switch).
    pub children: Vec<u32>,
    /// Node ids `first..end` under a leaf switch (empty above the leaves).
    pub nodes: core::ops::Range<NodeId>,
    /// Link speed as written (`LinkSpeed=`), if given.
    pub link_speed: Option<u64>,
}

/// A tree machine: leaf switches holding runs of node ids, joined by upper
/// switches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tree {
    switches: Vec<Switch>,
    /// Leaf switch index of each node.
    leaf_of: Vec<u32>,
    /// The leaf switches, in node-id order.
    leaves: Vec<u32>,
    /// Each switch's level, as Slurm numbers them: 0 at a leaf switch, one
    /// more than its highest child otherwise.
    levels: Vec<u32>,
}

impl Tree {
    /// Every switch.
    #[must_use]
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// The leaf switches, in node-id order.
    #[must_use]
    pub fn leaves(&self) -> &[u32] {
        &self.leaves
    }

    /// The leaf switch of `node`, if `node` exists.
    #[must_use]
    pub fn leaf_of(&self, node: NodeId) -> Option<u32> {
        self.leaf_of.get(node as usize).copied()
    }

    /// The level of switch `s` as Slurm numbers switch levels: 0 at a leaf
    /// switch, one more than its highest child otherwise (the longest way
    /// down to a leaf).
    #[must_use]
    pub fn level(&self, s: u32) -> Option<u32> {
        self.levels.get(s as usize).copied()
    }

    /// Each switch's level: 0 for a switch without child switches, else one
    /// more than its highest child. Linear in the switches: children are
    /// visited before their parents (the reverse of a walk down from the
    /// roots), so a chain of 100,000 switches costs no more than a flat one.
    /// The tree must be acyclic ([`first_in_cycle`](Self::first_in_cycle)).
    fn compute_levels(&self) -> Vec<u32> {
        let n = self.switches.len();
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&s| self.switches[s as usize].parent.is_none())
            .collect();
        let mut next = 0;
        while let Some(&s) = order.get(next) {
            order.extend_from_slice(&self.switches[s as usize].children);
            next += 1;
        }
        let mut levels = vec![0u32; n];
        for &s in order.iter().rev() {
            if let Some(p) = self.switches[s as usize].parent {
                let l = levels[s as usize] + 1;
                levels[p as usize] = levels[p as usize].max(l);
            }
        }
        levels
    }

    /// The lowest switch whose walk up through its parents never reaches a
    /// root (it is on a cycle, or below one), if any. Linear: each switch is walked up at most once, since a
    /// walk stops at the first switch an earlier walk finished.
    pub(crate) fn first_in_cycle(&self) -> Option<u32> {
        // 0: not seen, 1: on the walk under way, 2: reaches a root.
        let mut state = vec![0u8; self.switches.len()];
        let mut path = Vec::new();
        for start in 0..self.switches.len() as u32 {
            let mut s = Some(start);
            while let Some(x) = s {
                match state[x as usize] {
                    2 => break,
                    1 => return Some(start),
                    _ => {
                        state[x as usize] = 1;
                        path.push(x);
                        s = self.switches[x as usize].parent;
                    }
                }
            }
            for &x in &path {
                state[x as usize] = 2;
            }
            path.clear();
        }
        None
    }

    /// The ancestors of switch `s`, itself first.
    pub fn ancestors(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        core::iter::successors(Some(s), |&x| {
            self.switches.get(x as usize).and_then(|w| w.parent)
        })
    }
}

/// The shape of a Slurm machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Shape {
    /// `topology/block`.
    Blocks(Blocks),
    /// `topology/tree`.
    Tree(Tree),
    /// `topology/ring` (Slurm 26.05).
    Rings(Rings),
    /// `topology/torus3d` (Slurm 26.05).
    Toruses(Toruses),
}

/// A machine read from a Slurm topology description, node names kept.
///
/// With the `serde` feature it serializes as its source name and its
/// [`to_conf`](Self::to_conf) text, and deserializes through
/// [`parse_conf`](Self::parse_conf), so every check applies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "SlurmRepr", try_from = "SlurmRepr")
)]
pub struct SlurmMachine {
    source: String,
    names: Vec<String>,
    shape: Shape,
}

/// The serialized form of a [`SlurmMachine`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SlurmRepr {
    source: String,
    conf: String,
}

#[cfg(feature = "serde")]
impl From<SlurmMachine> for SlurmRepr {
    fn from(m: SlurmMachine) -> Self {
        Self {
            conf: m.to_conf(),
            source: m.source,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<SlurmRepr> for SlurmMachine {
    type Error = ConfError;
    fn try_from(r: SlurmRepr) -> Result<Self, ConfError> {
        // A torus machine is written as topology.yaml (see `to_conf`).
        if r.conf.starts_with("- topology:") {
            Self::parse_yaml(&r.conf, &r.source, None)
        } else {
            Self::parse_conf(&r.conf, &r.source)
        }
    }
}

impl SlurmMachine {
    /// Reads `topology.conf` text (block or tree syntax); `source` names it
    /// in errors and in the machine's description.
    ///
    /// # Errors
    /// [`ConfError`] with the 1-based line of the problem.
    pub fn parse_conf(text: &str, source: &str) -> Result<Self, ConfError> {
        conf::parse(text, source)
    }

    /// Reads `topology.yaml` text (topology.yaml(5), Slurm 23.11 and
    /// later): the topology named `topology`, or without a name the first
    /// with `cluster_default: true`, else the first. The machine equals the
    /// one [`parse_conf`](Self::parse_conf) reads from the same definitions
    /// (the YAML form has no link speeds).
    ///
    /// ```
    /// use partalloc_topology::slurm::SlurmMachine;
    /// let yaml = r"
    /// - topology: racks
    ///   block:
    ///     block_sizes: [2, 4]
    ///     blocks:
    ///     - block: r0
    ///       nodes: n[0-1]
    ///     - block: r1
    ///       nodes: n[2-3]
    /// ";
    /// let conf = "BlockName=r0 Nodes=n[0-1]\nBlockName=r1 Nodes=n[2-3]\nBlockSizes=2,4\n";
    /// assert_eq!(
    ///     SlurmMachine::parse_yaml(yaml, "m", None)?,
    ///     SlurmMachine::parse_conf(conf, "m")?
    /// );
    /// # Ok::<(), partalloc_topology::slurm::ConfError>(())
    /// ```
    ///
    /// # Errors
    /// [`ConfError`] with the 1-based line of the problem: YAML this
    /// reader does not understand, an unknown key, a missing or flat
    /// topology, and every error of the `topology.conf` reader.
    pub fn parse_yaml(text: &str, source: &str, topology: Option<&str>) -> Result<Self, ConfError> {
        yaml::parse(text, source, topology)
    }

    /// The machine as `topology.conf` text, which
    /// [`parse_conf`](Self::parse_conf) reads back to an equal machine:
    /// one `BlockName=` line per base block and `BlockSizes=`, or one
    /// `SwitchName=` line per switch, or one `RingName=` line per ring,
    /// node lists as hostlists. A torus machine, which `topology.conf` cannot
    /// describe, is written as `topology.yaml` text instead, which
    /// [`parse_yaml`](Self::parse_yaml) reads back to an equal machine.
    ///
    /// ```
    /// use partalloc_topology::slurm::SlurmMachine;
    /// let m = SlurmMachine::parse_conf("BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[2-3]\n", "x")?;
    /// assert_eq!(m.to_conf(), "BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[2-3]\nBlockSizes=2,4\n");
    /// # Ok::<(), partalloc_topology::slurm::ConfError>(())
    /// ```
    #[must_use]
    pub fn to_conf(&self) -> String {
        use core::fmt::Write as _;
        let mut out = String::new();
        let ids = |r: core::ops::Range<NodeId>| -> Vec<NodeId> { r.collect() };
        match &self.shape {
            Shape::Blocks(b) => {
                for (i, name) in b.names.iter().enumerate() {
                    let nodes = self.hostlist(&ids(b.nodes_of(i as u32)));
                    let _ = writeln!(out, "BlockName={name} Nodes={nodes}");
                }
                let sizes: Vec<String> = b
                    .levels
                    .iter()
                    .map(|m| (m * b.base_size).to_string())
                    .collect();
                let _ = writeln!(out, "BlockSizes={}", sizes.join(","));
            }
            Shape::Tree(t) => {
                for s in &t.switches {
                    let _ = write!(out, "SwitchName={}", s.name);
                    if s.children.is_empty() {
                        let _ = write!(out, " Nodes={}", self.hostlist(&ids(s.nodes.clone())));
                    } else {
                        let names: Vec<&str> = s
                            .children
                            .iter()
                            .map(|&c| t.switches[c as usize].name.as_str())
                            .collect();
                        let _ = write!(out, " Switches={}", hostlist::compress(&names));
                    }
                    if let Some(speed) = s.link_speed {
                        let _ = write!(out, " LinkSpeed={speed}");
                    }
                    out.push('\n');
                }
            }
            Shape::Rings(r) => {
                for (i, name) in r.ring_names().iter().enumerate() {
                    let nodes = self.hostlist(&ids(r.nodes(i)));
                    let _ = writeln!(out, "RingName={name} Nodes={nodes}");
                }
            }
            Shape::Toruses(t) => {
                return torus3d::to_yaml(t, |range| self.hostlist(&ids(range)));
            }
        }
        out
    }

    /// Where the description came from.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Number of nodes.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.names.len()
    }

    /// Node names, indexed by id.
    #[must_use]
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The id of the node named `name`.
    #[must_use]
    pub fn id_of(&self, name: &str) -> Option<NodeId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| i as NodeId)
    }

    /// The machine's shape.
    #[must_use]
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The block structure, if this is a block machine.
    #[must_use]
    pub fn blocks(&self) -> Option<&Blocks> {
        match &self.shape {
            Shape::Blocks(b) => Some(b),
            _ => None,
        }
    }

    /// The rings, if this is a ring machine.
    #[must_use]
    pub fn rings(&self) -> Option<&Rings> {
        match &self.shape {
            Shape::Rings(r) => Some(r),
            _ => None,
        }
    }

    /// The tori, if this is a torus machine.
    #[must_use]
    pub fn toruses(&self) -> Option<&Toruses> {
        match &self.shape {
            Shape::Toruses(t) => Some(t),
            _ => None,
        }
    }

    /// The switch tree, if this is a tree machine.
    #[must_use]
    pub fn tree(&self) -> Option<&Tree> {
        match &self.shape {
            Shape::Tree(t) => Some(t),
            _ => None,
        }
    }

    /// The hostlist expression of the given node ids, in the given order
    /// (ids outside the machine are skipped).
    #[must_use]
    pub fn hostlist(&self, ids: &[NodeId]) -> String {
        let names: Vec<&str> = ids
            .iter()
            .filter_map(|&i| self.names.get(i as usize).map(String::as_str))
            .collect();
        hostlist::compress(&names)
    }

    /// Links of the machine seen as a switch hierarchy: one per node to its
    /// base block or leaf switch, and one per block or switch to its parent
    /// (for a block machine, each block of one level to the block of the
    /// next level holding it).
    #[must_use]
    pub fn num_links(&self) -> u64 {
        let nodes = self.names.len() as u64;
        match &self.shape {
            Shape::Blocks(b) => {
                let count = u64::from(b.base_blocks());
                let parents: u64 = b
                    .levels
                    .iter()
                    .take(b.levels.len().saturating_sub(1))
                    .map(|&m| count.div_ceil(u64::from(m)))
                    .sum();
                nodes + parents
            }
            Shape::Tree(t) => {
                nodes
                    + t.switches
                        .iter()
                        .map(|s| s.children.len() as u64)
                        .sum::<u64>()
            }
            Shape::Rings(r) => (0..r.len())
                .map(|i| match r.nodes(i).len() as u64 {
                    n @ 0..=2 => n.saturating_sub(1),
                    n => n,
                })
                .sum(),
            Shape::Toruses(t) => t.toruses().iter().map(torus_links).sum(),
        }
    }

    /// The largest [`distance`](Self::distance) between two nodes
    /// (`u32::MAX` when some nodes share no block or switch).
    #[must_use]
    pub fn diameter(&self) -> u32 {
        let n = self.names.len() as NodeId;
        if n < 2 {
            return 0;
        }
        match &self.shape {
            // The first and the last node are the farthest apart.
            Shape::Blocks(_) => self.distance(0, n - 1),
            Shape::Tree(t) => {
                if t.switches.iter().filter(|s| s.parent.is_none()).count() > 1 {
                    return u32::MAX;
                }
                // Two nodes meet at a switch with two children; the farther
                // one climbs that switch's height above the leaves.
                let height = |s: u32| {
                    t.leaves
                        .iter()
                        .filter_map(|&l| t.ancestors(l).position(|a| a == s))
                        .max()
                        .unwrap_or(0) as u32
                };
                (0..t.switches.len() as u32)
                    .filter(|&s| t.switches[s as usize].children.len() > 1)
                    .map(|s| height(s) + 1)
                    .max()
                    .unwrap_or(1)
            }
            Shape::Rings(r) if r.len() > 1 => u32::MAX,
            Shape::Rings(r) => r.nodes(0).len() as u32 / 2,
            Shape::Toruses(t) if t.toruses().len() > 1 => u32::MAX,
            Shape::Toruses(t) => t
                .toruses()
                .first()
                .map_or(0, |x| x.dims().iter().map(|&d| u32::from(d) / 2).sum()),
        }
    }

    /// The other nodes of `node`'s base block or leaf switch, its two ring
    /// neighbours, or the filled cells next to it on its torus (distance 1),
    /// or `None` if `node` does not exist.
    #[must_use]
    pub fn neighbours(&self, node: NodeId) -> Option<Vec<NodeId>> {
        if (node as usize) >= self.names.len() {
            return None;
        }
        let range = match &self.shape {
            Shape::Rings(r) => {
                let ring = r.nodes(r.ring_of(node)?);
                let n = ring.len() as u32;
                let pos = node - ring.start;
                let mut v = vec![ring.start + (pos + n - 1) % n, ring.start + (pos + 1) % n];
                v.dedup();
                v.retain(|&x| x != node);
                return Some(v);
            }
            Shape::Toruses(t) => {
                let torus = &t.toruses()[t.torus_of(node)?];
                let c = torus.coord_of(node)?;
                let mut v = Vec::new();
                for a in 0..3 {
                    let d = torus.dims()[a];
                    for step in [d - 1, 1] {
                        let mut at = c;
                        at[a] = ((u32::from(c[a]) + u32::from(step)) % u32::from(d)) as u16;
                        if let Some(x) = torus.cell(at[0], at[1], at[2])
                            && x != node
                            && !v.contains(&x)
                        {
                            v.push(x);
                        }
                    }
                }
                return Some(v);
            }
            Shape::Blocks(b) => b.nodes_of(b.block_of(node)),
            Shape::Tree(t) => t.switches[t.leaf_of(node)? as usize].nodes.clone(),
        };
        ((node as usize) < self.names.len()).then(|| range.filter(|&x| x != node).collect())
    }

    /// Hop distance in the usual Slurm sense: 0 for the same node, 1 within
    /// a base block or leaf switch, then one more per aggregation level or
    /// switch level to the lowest common block or switch; on a ring the
    /// shorter way round, on a torus the wrapped (Lee) distance between the
    /// cells; `u32::MAX` between two rings or two tori.
    #[must_use]
    pub fn distance(&self, a: NodeId, b: NodeId) -> u32 {
        if a == b {
            return 0;
        }
        match &self.shape {
            Shape::Blocks(bl) => {
                let (x, y) = (bl.block_of(a), bl.block_of(b));
                let lvl = bl.levels.iter().position(|&m| x / m == y / m);
                lvl.map_or(bl.levels.len() as u32 + 1, |l| l as u32 + 1)
            }
            Shape::Tree(t) => {
                let (Some(x), Some(y)) = (t.leaf_of(a), t.leaf_of(b)) else {
                    return u32::MAX;
                };
                let up: Vec<u32> = t.ancestors(x).collect();
                t.ancestors(y)
                    .enumerate()
                    .find_map(|(i, s)| up.iter().position(|&u| u == s).map(|j| i.max(j) as u32 + 1))
                    .unwrap_or(u32::MAX)
            }
            Shape::Rings(r) => match (r.ring_of(a), r.ring_of(b)) {
                (Some(x), Some(y)) if x == y => {
                    let n = r.nodes(x).len() as u32;
                    let d = a.abs_diff(b);
                    d.min(n - d)
                }
                _ => u32::MAX,
            },
            Shape::Toruses(t) => match (t.torus_of(a), t.torus_of(b)) {
                (Some(x), Some(y)) if x == y => {
                    let torus = &t.toruses()[x];
                    match (torus.coord_of(a), torus.coord_of(b)) {
                        (Some(p), Some(q)) => (0..3)
                            .map(|k| {
                                let d = u32::from(p[k].abs_diff(q[k]));
                                d.min(u32::from(torus.dims()[k]) - d)
                            })
                            .sum(),
                        _ => u32::MAX,
                    }
                }
                _ => u32::MAX,
            },
        }
    }
}

/// Links between filled neighbouring cells of one torus (an axis of two
/// cells has one link per pair, not two).
fn torus_links(t: &Torus) -> u64 {
    let [dx, dy, dz] = t.dims();
    let mut links = 0;
    for z in 0..dz {
        for y in 0..dy {
            for x in 0..dx {
                if t.cell(x, y, z).is_none() {
                    continue;
                }
                let c = [x, y, z];
                for a in 0..3 {
                    let d = t.dims()[a];
                    if d < 2 || (d == 2 && c[a] == 1) {
                        continue;
                    }
                    let mut at = c;
                    at[a] = (c[a] + 1) % d;
                    links += u64::from(t.cell(at[0], at[1], at[2]).is_some());
                }
            }
        }
    }
    links
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::SlurmMachine;

    #[test]
    fn a_machine_round_trips_through_json_and_bad_text_is_refused() {
        let m = SlurmMachine::parse_conf(
            "SwitchName=a Nodes=n[0-3] LinkSpeed=5\nSwitchName=b Nodes=n[4-7]\nSwitchName=c Switches=a,b\n",
            "t.conf",
        )
        .unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<SlurmMachine>(&json).unwrap(), m);
        let bad = r#"{"source":"x.conf","conf":"BlockName=a Nodes=n[0-1\n"}"#;
        let e = serde_json::from_str::<SlurmMachine>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.conf:1: unbalanced bracket"), "{e}");
    }
}
