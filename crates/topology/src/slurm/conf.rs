//! The `topology.conf` reader, for the block and the tree syntax.

use std::collections::{HashMap, HashSet};

use thiserror::Error;

use super::{Blocks, HostlistError, Shape, SlurmMachine, Switch, Tree, hostlist};
use crate::NodeId;

/// Why a `topology.conf` text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{source_name}:{line}: {kind}")]
pub struct ConfError {
    /// Name of the file (or other source) being read.
    pub source_name: String,
    /// 1-based line (0 when the problem is the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub kind: ConfErrorKind,
}

/// What is wrong in a `topology.conf` line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConfErrorKind {
    /// A word that is not `Key=Value`.
    #[error("expected Key=Value, found {0:?}")]
    NotKeyValue(String),
    /// A key this reader does not know.
    #[error(
        "unknown key {0:?} (known: BlockName, BlockSizes, Nodes, SwitchName, Switches, LinkSpeed, RingName)"
    )]
    UnknownKey(String),
    /// A bad hostlist expression.
    #[error(transparent)]
    Hostlist(#[from] HostlistError),
    /// A bad number.
    #[error("{0:?} is not a positive whole number")]
    BadNumber(String),
    /// Block, switch and ring lines in one file.
    #[error("block, switch and ring lines cannot be mixed in one file")]
    Mixed,
    /// A line with neither `BlockName`, `BlockSizes`, `SwitchName` nor
    /// `RingName`.
    #[error("a line must start with BlockName=, BlockSizes=, SwitchName= or RingName=")]
    NoName,
    /// A block or switch line without what it needs.
    #[error("{0}")]
    Incomplete(String),
    /// A node named twice.
    #[error("node {0:?} is listed twice")]
    DuplicateNode(String),
    /// Two blocks or switches with one name.
    #[error("{0:?} is defined twice")]
    DuplicateName(String),
    /// A base block with more nodes than the base block size (Slurm's
    /// first `BlockSizes` value, else the first block's node count).
    #[error(
        "base block {name:?} has {got} nodes, more than the base block size {base} (the first BlockSizes value, else the first block's nodes)"
    )]
    LargeBlock {
        /// The block.
        name: String,
        /// Its node count.
        got: usize,
        /// The base block size.
        base: usize,
    },
    /// Invalid `BlockSizes`.
    #[error("BlockSizes: {0}")]
    BlockSizes(String),
    /// A switch tree that is not a tree.
    #[error("switch {0:?}: {1}")]
    BadSwitch(String, String),
    /// A `topology.yaml` text that is not the expected YAML.
    #[error("{0}")]
    Yaml(String),
    /// A file that describes no node.
    #[error("no nodes are described")]
    Empty,
    /// The `Nodes=` lists of the whole file name more nodes than a machine
    /// may have; counted before any name is expanded.
    #[error(
        "the Nodes= lists name {total} nodes up to here, more than the {max} (2^19) a Slurm machine may have"
    )]
    TooManyNodes {
        /// Nodes named by this line and the ones before it.
        total: u64,
        /// The limit, [`MAX_SLURM_NODES`](super::MAX_SLURM_NODES).
        max: usize,
    },
    /// A `Switches=` list that names more switches than the file defines,
    /// so it must name one twice or one that does not exist.
    #[error("Switches= names {named} switches, but the file defines only {defined}")]
    TooManyChildren {
        /// Names in the list.
        named: u64,
        /// Switches in the file.
        defined: usize,
    },
    /// A ring with more nodes than Slurm 26.05.3 allows
    /// ([`MAX_RING_SIZE`](super::ring::MAX_RING_SIZE)).
    #[error("ring {name:?} has {nodes} nodes; a ring may have at most 16")]
    RingTooLarge {
        /// The ring.
        name: String,
        /// Nodes its list names.
        nodes: u64,
    },
    /// A torus without a name.
    #[error("a torus needs `name: NAME`")]
    TorusNoName,
    /// A torus with both a flat node list and regions.
    #[error("torus {0:?} gives both nodes and regions; give one")]
    TorusNodesAndRegions(String),
    /// A torus with a zero or missing dimension.
    #[error("torus {0:?} needs dims x, y and z of at least 1")]
    TorusZeroDims(String),
    /// A torus with more cells than a machine may have nodes.
    #[error(
        "torus {name:?} has {cells} cells, more than the {max} (2^19) a Slurm machine may have"
    )]
    TorusTooLarge {
        /// The torus.
        name: String,
        /// Its cells.
        cells: u64,
        /// The limit, [`MAX_SLURM_NODES`](super::MAX_SLURM_NODES).
        max: usize,
    },
    /// A torus with more placements than [`torus3d::MAX_PLACEMENTS`](super::torus3d::MAX_PLACEMENTS).
    #[error(
        "torus {torus:?} lists {count} placements, more than the {max} accepted; list each placement shape once"
    )]
    TooManyPlacements {
        /// The torus (shortened).
        torus: String,
        /// Placements listed.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A flat node list that does not fill the torus exactly.
    #[error(
        "torus {name:?} is {}x{}x{} = {} cells, but its nodes list names {nodes}",
        dims[0], dims[1], dims[2],
        u64::from(dims[0]) * u64::from(dims[1]) * u64::from(dims[2])
    )]
    TorusNodeCount {
        /// The torus.
        name: String,
        /// Its dimensions.
        dims: [u16; 3],
        /// Nodes the list names.
        nodes: u64,
    },
    /// A region without nodes.
    #[error("a region of torus {0:?} has no nodes")]
    RegionNoNodes(String),
    /// A region that does not fit inside its torus (regions do not wrap).
    #[error("a region of torus {0:?} reaches past the torus's dimensions (regions do not wrap)")]
    RegionOutside(String),
    /// A region whose node list does not fill it exactly.
    #[error("a region of torus {torus:?} has {cells} cells, but its nodes list names {nodes}")]
    RegionNodeCount {
        /// The torus.
        torus: String,
        /// The region's cells.
        cells: u64,
        /// Nodes the list names.
        nodes: u64,
    },
    /// Two regions of one torus sharing a cell.
    #[error("regions of torus {torus:?} overlap at ({}, {}, {})", at[0], at[1], at[2])]
    RegionOverlap {
        /// The torus.
        torus: String,
        /// The first shared cell.
        at: [u16; 3],
    },
    /// A placement with a zero or missing dimension.
    #[error("a placement of torus {0:?} needs dims x, y and z of at least 1")]
    PlacementZeroDims(String),
    /// A placement larger than its torus along some axis.
    #[error("placement {}x{}x{} is larger than the torus {torus:?}", dims[0], dims[1], dims[2])]
    PlacementTooLarge {
        /// The torus.
        torus: String,
        /// The placement's dimensions.
        dims: [u16; 3],
    },
    /// An anchor spacing larger than the torus along some axis.
    #[error("an anchor_spacing of torus {0:?} is larger than the torus")]
    AnchorSpacing(String),
    /// An anchor seed outside the torus.
    #[error("an anchor_seed of torus {0:?} lies outside the torus")]
    AnchorSeed(String),
}

/// One definition (a `topology.conf` line, or a `topology.yaml` entry
/// translated to the same lowercase keys), with the line it came from.
pub(super) struct Line {
    pub(super) number: usize,
    pub(super) pairs: Vec<(String, String)>,
}

impl Line {
    fn first(&self) -> &str {
        self.pairs.first().map_or("", |p| p.0.as_str())
    }

    pub(super) fn name(&self) -> String {
        self.pairs.first().map_or("", |p| p.1.as_str()).to_owned()
    }

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl ConfErrorKind {
    /// The error with every name it repeats shortened and escaped as
    /// [`crate::echo`] does and every reason escaped, so one line of a
    /// file cannot make a message of megabytes or of several lines.
    fn shortened(mut self) -> Self {
        use ConfErrorKind as K;
        let short = |s: &mut String| *s = crate::echo(s);
        match &mut self {
            K::NotKeyValue(s)
            | K::UnknownKey(s)
            | K::BadNumber(s)
            | K::DuplicateNode(s)
            | K::DuplicateName(s)
            | K::TorusNodesAndRegions(s)
            | K::TorusZeroDims(s)
            | K::RegionNoNodes(s)
            | K::RegionOutside(s)
            | K::PlacementZeroDims(s)
            | K::AnchorSpacing(s)
            | K::AnchorSeed(s)
            | K::LargeBlock { name: s, .. }
            | K::RingTooLarge { name: s, .. }
            | K::TorusTooLarge { name: s, .. }
            | K::TorusNodeCount { name: s, .. }
            | K::TooManyPlacements { torus: s, .. }
            | K::RegionNodeCount { torus: s, .. }
            | K::RegionOverlap { torus: s, .. }
            | K::PlacementTooLarge { torus: s, .. } => short(s),
            K::Incomplete(s) | K::BlockSizes(s) | K::Yaml(s) => {
                *s = crate::escaped(s).into_owned();
            }
            K::BadSwitch(name, why) => {
                short(name);
                *why = crate::escaped(why).into_owned();
            }
            _ => {}
        }
        self
    }
}

fn positive(v: &str) -> Result<u64, ConfErrorKind> {
    v.parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| ConfErrorKind::BadNumber(v.to_owned()))
}

/// Node names read so far, and the errors' source name.
pub(super) struct Reader<'s> {
    source: &'s str,
    names: Vec<String>,
    seen: HashMap<String, NodeId>,
}

impl<'s> Reader<'s> {
    pub(super) fn new(source: &'s str) -> Self {
        Self {
            source,
            names: Vec::new(),
            seen: HashMap::new(),
        }
    }

    pub(super) fn err(&self, line: usize, kind: ConfErrorKind) -> ConfError {
        ConfError {
            source_name: crate::escaped(self.source).into_owned(),
            line,
            kind: kind.shortened(),
        }
    }

    /// Nodes read so far.
    pub(super) fn node_count(&self) -> usize {
        self.names.len()
    }

    /// Adds the nodes of `expr`; returns how many.
    pub(super) fn add_nodes(&mut self, expr: &str, line: usize) -> Result<usize, ConfError> {
        let hosts = hostlist::expand(expr).map_err(|e| self.err(line, e.into()))?;
        if hosts.is_empty() {
            // Slurm's parser gives no host for an empty text; a line must name one.
            let e = HostlistError::EmptyName {
                text: expr.to_owned(),
            };
            return Err(self.err(line, e.into()));
        }
        let n = hosts.len();
        for h in hosts {
            if self.seen.contains_key(&h) {
                return Err(self.err(line, ConfErrorKind::DuplicateNode(h)));
            }
            self.seen.insert(h.clone(), self.names.len() as NodeId);
            self.names.push(h);
        }
        Ok(n)
    }
}

const KEYS: [&str; 7] = [
    "ringname",
    "blockname",
    "blocksizes",
    "nodes",
    "switchname",
    "switches",
    "linkspeed",
];

pub(super) fn parse(text: &str, source: &str) -> Result<SlurmMachine, ConfError> {
    let r = Reader::new(source);
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let body = raw.split('#').next().unwrap_or("");
        let mut pairs = Vec::new();
        for word in body.split_whitespace() {
            let (k, v) = word
                .split_once('=')
                .ok_or_else(|| r.err(i + 1, ConfErrorKind::NotKeyValue(word.to_owned())))?;
            let key = k.to_ascii_lowercase();
            if !KEYS.contains(&key.as_str()) {
                return Err(r.err(i + 1, ConfErrorKind::UnknownKey(k.to_owned())));
            }
            pairs.push((key, v.to_owned()));
        }
        if !pairs.is_empty() {
            lines.push(Line {
                number: i + 1,
                pairs,
            });
        }
    }
    if let Some(l) = lines.iter().find(|l| {
        !matches!(
            l.first(),
            "blockname" | "blocksizes" | "switchname" | "ringname"
        )
    }) {
        return Err(r.err(l.number, ConfErrorKind::NoName));
    }
    // One family per file: the first line's.
    let family = |l: &Line| match l.first() {
        "switchname" => 1,
        "ringname" => 2,
        _ => 0,
    };
    let first = lines.first().map_or(0, family);
    if let Some(l) = lines.iter().find(|l| family(l) != first) {
        return Err(r.err(l.number, ConfErrorKind::Mixed));
    }
    build(&lines, first == 1, r)
}

/// Builds the machine from its definitions, a tree or a block machine.
pub(super) fn build(
    lines: &[Line],
    tree: bool,
    mut r: Reader<'_>,
) -> Result<SlurmMachine, ConfError> {
    // Count every list before expanding any, so that many lists at the
    // per-expression limit cannot add up to gigabytes of names.
    let mut total = 0u64;
    for l in lines {
        if let Some(expr) = l.get("nodes") {
            let n = hostlist::count(expr).map_err(|e| r.err(l.number, e.into()))?;
            total = total.saturating_add(n);
            if total > super::MAX_SLURM_NODES as u64 {
                let kind = ConfErrorKind::TooManyNodes {
                    total,
                    max: super::MAX_SLURM_NODES,
                };
                return Err(r.err(l.number, kind));
            }
        }
        if let Some(expr) = l.get("switches") {
            let named = hostlist::count(expr).map_err(|e| r.err(l.number, e.into()))?;
            if named > lines.len() as u64 {
                let kind = ConfErrorKind::TooManyChildren {
                    named,
                    defined: lines.len(),
                };
                return Err(r.err(l.number, kind));
            }
        }
    }
    let shape = if lines.first().is_some_and(|l| l.first() == "ringname") {
        super::ring::read(lines, &mut r)?
    } else if tree {
        read_tree(lines, &mut r)?
    } else {
        read_blocks(lines, &mut r)?
    };
    finish(r, shape)
}

/// The machine of `shape` with the nodes `r` read.
pub(super) fn finish(r: Reader<'_>, shape: Shape) -> Result<SlurmMachine, ConfError> {
    if r.names.is_empty() {
        return Err(r.err(0, ConfErrorKind::Empty));
    }
    Ok(SlurmMachine {
        source: r.source.to_owned(),
        names: r.names,
        shape,
    })
}

fn read_blocks(lines: &[Line], r: &mut Reader<'_>) -> Result<Shape, ConfError> {
    let mut block_names: Vec<String> = Vec::new();
    let mut seen_names: HashSet<String> = HashSet::new();
    // Per base block: its line, name and node count.
    let mut counts: Vec<(usize, String, usize)> = Vec::new();
    let mut sizes: Option<(usize, Vec<u64>)> = None;
    for l in lines {
        if l.first() == "blocksizes" {
            let v: Result<Vec<u64>, _> = l.name().split(',').map(positive).collect();
            sizes = Some((l.number, v.map_err(|k| r.err(l.number, k))?));
            continue;
        }
        let name = l.name();
        if !seen_names.insert(name.clone()) {
            return Err(r.err(l.number, ConfErrorKind::DuplicateName(name)));
        }
        let Some(nodes) = l.get("nodes") else {
            let why = format!("block {name:?} has no Nodes=");
            return Err(r.err(l.number, ConfErrorKind::Incomplete(why)));
        };
        let n = r.add_nodes(nodes, l.number)?;
        counts.push((l.number, name.clone(), n));
        block_names.push(name);
    }
    if block_names.is_empty() {
        return Err(r.err(0, ConfErrorKind::Empty));
    }
    // Slurm (block_record.c): the base block size is the first BlockSizes
    // value, else the first block's node count; blocks may be smaller.
    let base = match &sizes {
        Some((_, v)) => v.first().copied().unwrap_or(1) as usize,
        None => counts.first().map_or(1, |c| c.2),
    };
    if let Some((line, name, n)) = counts.iter().find(|c| c.2 > base) {
        let kind = ConfErrorKind::LargeBlock {
            name: name.clone(),
            got: *n,
            base,
        };
        return Err(r.err(*line, kind));
    }
    let mut starts = Vec::with_capacity(counts.len() + 1);
    let mut next = 0 as NodeId;
    for c in &counts {
        starts.push(next);
        next += c.2 as NodeId;
    }
    starts.push(next);
    let count = block_names.len() as u64;
    let levels = match sizes {
        None => {
            // Slurm's default (block_record.c sets levels 0 to 4): 1, 2, 4,
            // 8 and 16 base blocks, up to the first that covers the machine.
            let mut v = Vec::new();
            for k in 0..=4 {
                v.push(1u32 << k);
                if 1u64 << k >= count {
                    break;
                }
            }
            v
        }
        Some((line, sizes)) => block_levels(&sizes, base as u64, count)
            .map_err(|why| r.err(line, ConfErrorKind::BlockSizes(why)))?,
    };
    Ok(Shape::Blocks(Blocks {
        names: block_names,
        base_size: base as u32,
        levels,
        starts,
    }))
}

/// Checks `BlockSizes` (in nodes) and turns them into base blocks per level.
fn block_levels(sizes: &[u64], base: u64, count: u64) -> Result<Vec<u32>, String> {
    if sizes.first() != Some(&base) {
        return Err(format!(
            "the first size must be the base block size, {base}"
        ));
    }
    let mut levels: Vec<u32> = Vec::with_capacity(sizes.len());
    for &s in sizes {
        if !s.is_multiple_of(base) {
            return Err(format!(
                "{s} is not a multiple of the base block size {base}"
            ));
        }
        let m = s / base;
        // Slurm keeps 16 levels (2^0 to 2^15 base blocks).
        if m >= 1 << 16 {
            return Err(format!(
                "{s} nodes is 2^16 or more base blocks of {base}; Slurm keeps block levels up to 2^15"
            ));
        }
        // topology.conf(5): successive sizes are a power of two larger.
        if let Some(&prev) = levels.last()
            && (m <= u64::from(prev)
                || !m.is_multiple_of(u64::from(prev))
                || !(m / u64::from(prev)).is_power_of_two())
        {
            return Err(format!(
                "{s} is not the previous size times a power of two (2, 4, 8, …)"
            ));
        }
        // Slurm uses the sizes up to the first that covers the machine and
        // ignores larger ones (block_record.c, block_record_validate).
        if levels.last().is_some_and(|&prev| u64::from(prev) >= count) {
            break;
        }
        levels.push(m as u32);
    }
    Ok(levels)
}

fn read_tree(lines: &[Line], r: &mut Reader<'_>) -> Result<Shape, ConfError> {
    let mut switches: Vec<Switch> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut leaves = Vec::new();
    let mut leaf_of = Vec::new();
    for l in lines {
        let name = l.name();
        if index.insert(name.clone(), switches.len() as u32).is_some() {
            return Err(r.err(l.number, ConfErrorKind::DuplicateName(name)));
        }
        let link_speed = l
            .get("linkspeed")
            .map(positive)
            .transpose()
            .map_err(|k| r.err(l.number, k))?;
        let start = r.names.len() as NodeId;
        if l.get("nodes").is_some() == l.get("switches").is_some() {
            let why = "needs exactly one of Nodes= and Switches=".to_owned();
            return Err(r.err(l.number, ConfErrorKind::BadSwitch(name, why)));
        }
        if let Some(expr) = l.get("nodes") {
            r.add_nodes(expr, l.number)?;
            leaves.push(switches.len() as u32);
            leaf_of.resize(r.names.len(), switches.len() as u32);
        }
        switches.push(Switch {
            name,
            parent: None,
            children: Vec::new(),
            nodes: start..r.names.len() as NodeId,
            link_speed,
        });
    }
    for (i, l) in lines.iter().enumerate() {
        let Some(expr) = l.get("switches") else {
            continue;
        };
        let name = l.name();
        for child in hostlist::expand(expr).map_err(|e| r.err(l.number, e.into()))? {
            let Some(&c) = index.get(&child) else {
                let why = format!("child {child:?} is not defined");
                return Err(r.err(l.number, ConfErrorKind::BadSwitch(name, why)));
            };
            let cs = &mut switches[c as usize];
            if cs.parent.is_some() || c as usize == i {
                let why = format!("{child:?} would have two parents or be its own");
                return Err(r.err(l.number, ConfErrorKind::BadSwitch(name, why)));
            }
            cs.parent = Some(i as u32);
            switches[i].children.push(c);
        }
    }
    let mut tree = Tree {
        switches,
        leaf_of,
        leaves,
        levels: Vec::new(),
    };
    if let Some(i) = tree.first_in_cycle() {
        let l = &lines[i as usize];
        let why = "switches form a cycle".to_owned();
        return Err(r.err(l.number, ConfErrorKind::BadSwitch(l.name(), why)));
    }
    tree.levels = tree.compute_levels();
    Ok(Shape::Tree(tree))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ConfError {
        parse(text, "t.conf").unwrap_err()
    }

    #[test]
    fn block_file_reads_with_default_and_given_sizes() {
        let text = "# racks\nBlockName=r[0] Nodes=n[00-17]\nblockname=r1 nodes=n[18-35]\n\
                    BlockName=r2 Nodes=n[36-53]\nBlockName=r3 Nodes=n[54-71]\n";
        let m = parse(text, "a.conf").unwrap();
        let b = m.blocks().unwrap();
        assert_eq!((b.base_size(), b.base_blocks()), (18, 4));
        assert_eq!(b.levels(), &[1, 2, 4]);
        // 72 node links, 4 racks to 2 pairs, 2 pairs to the whole.
        assert_eq!((m.num_links(), m.diameter()), (72 + 4 + 2, 3));
        assert_eq!(m.neighbours(19).map(|v| v.len()), Some(17));
        assert_eq!((b.largest_block_nodes(), b.largest_job_nodes()), (72, 72));
        let m = parse(&format!("{text}BlockSizes=18,36\n"), "a.conf").unwrap();
        let b = m.blocks().unwrap();
        assert_eq!((b.largest_block_nodes(), b.largest_job_nodes()), (36, 36));
        let m = parse(&format!("{text}BlockSizes=18,72\n"), "a.conf").unwrap();
        assert_eq!((m.num_links(), m.diameter()), (72 + 4, 2));
        assert_eq!(m.blocks().unwrap().levels(), &[1, 4]);
        assert_eq!(m.names()[19], "n19");
    }

    #[test]
    fn racks_smaller_than_the_base_block_size_are_read_as_slurm_reads_them() {
        // The first rack is smaller than the base block size, which
        // BlockSizes names (18), as Slurm allows.
        let text = "BlockName=r0 Nodes=n[000-011]\nBlockName=r1 Nodes=n[012-029]\n\
                    BlockName=r2 Nodes=n[030-035]\nBlockName=r3 Nodes=n[036-053]\n\
                    BlockSizes=18,36,72\n";
        let m = parse(text, "u.conf").unwrap();
        let b = m.blocks().unwrap();
        assert_eq!((b.base_size(), b.base_blocks(), m.num_nodes()), (18, 4, 54));
        assert_eq!(b.block_sizes().collect::<Vec<_>>(), [12, 18, 6, 18]);
        assert!(!b.is_even());
        assert_eq!(b.largest_block_nodes(), 54);
        // Racks 12 and 18 make the fullest pair (30): the level of 36 holds
        // no job of 31, and jobs of 1 to 30 nodes all fit.
        assert_eq!(
            [0, 1, 2, 3].map(|l| b.largest_block_nodes_at(l)),
            [18, 30, 54, 54]
        );
        assert_eq!(b.largest_job_nodes(), 30);
        // The block-uneven racks (18, 18, 12, 6, 18, 12, 18, 6): every job
        // up to 54 nodes fits, none of 55 (two blocks of 72 hold 54 each).
        let text8 = "BlockName=r0 Nodes=n[000-017]\nBlockName=r1 Nodes=n[018-035]\n\
                    BlockName=r2 Nodes=n[036-047]\nBlockName=r3 Nodes=n[048-053]\n\
                    BlockName=r4 Nodes=n[054-071]\nBlockName=r5 Nodes=n[072-083]\n\
                    BlockName=r6 Nodes=n[084-101]\nBlockName=r7 Nodes=n[102-107]\n\
                    BlockSizes=18,36,72,144\n";
        let m8 = parse(text8, "u.conf").unwrap();
        let b8 = m8.blocks().unwrap();
        assert_eq!(
            (b8.largest_job_nodes(), b8.largest_block_nodes()),
            (54, 108)
        );
        assert_eq!(b.levels(), &[1, 2, 4]);
        assert_eq!(
            (
                b.block_of(11),
                b.block_of(12),
                b.block_of(35),
                b.block_of(36)
            ),
            (0, 1, 2, 3)
        );
        assert_eq!((b.nodes_of(2), b.nodes_of(9)), (30..36, 0..0));
        // Neighbours are the rest of the rack; distance counts levels.
        assert_eq!(m.neighbours(31).map(|v| v.len()), Some(5));
        assert_eq!(
            (m.distance(0, 11), m.distance(0, 12), m.distance(0, 53)),
            (1, 2, 3)
        );
        // Written back and read again: the same machine.
        assert_eq!(parse(&m.to_conf(), "u.conf").unwrap(), m);
        assert!(m.to_conf().starts_with("BlockName=r0 Nodes=n[000-011]\n"));
        // Without BlockSizes the first rack sets the base size: a later
        // rack may be smaller, not larger.
        let m = parse(
            "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[4-5]\n",
            "v.conf",
        )
        .unwrap();
        assert_eq!(
            m.blocks().unwrap().block_sizes().collect::<Vec<_>>(),
            [4, 2]
        );
        assert!(
            parse(
                "BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[2-5]\n",
                "w.conf"
            )
            .is_err()
        );
    }

    #[test]
    fn block_levels_stop_where_slurm_stops() {
        let racks = |n: u32, sizes: &str| {
            let mut t: String = (0..n)
                .map(|r| format!("BlockName=r{r} Nodes=n[{}-{}]\n", r * 2, r * 2 + 1))
                .collect();
            t.push_str(sizes);
            parse(&t, "l.conf")
                .unwrap()
                .blocks()
                .unwrap()
                .levels()
                .to_vec()
        };
        // Without BlockSizes: 1, 2, 4, 8, 16 base blocks, up to the first
        // that covers the machine (not every doubling up to it).
        assert_eq!(racks(6, ""), [1, 2, 4, 8]);
        assert_eq!(racks(40, ""), [1, 2, 4, 8, 16]);
        assert_eq!(racks(1, ""), [1]);
        // Sizes past the one that covers the machine are ignored, not refused.
        assert_eq!(racks(3, "BlockSizes=2,4,8,16,32\n"), [1, 2, 4]);
        assert_eq!(racks(4, "BlockSizes=2,4,8,16,32\n"), [1, 2, 4]);
        assert!(
            err("BlockName=a Nodes=n[0-1]\nBlockSizes=2,131072\n")
                .to_string()
                .contains("2^15")
        );
    }

    #[test]
    fn tree_file_reads_with_leaves_in_order() {
        let text = "SwitchName=s0 Nodes=tux[0-3] LinkSpeed=100\nSwitchName=s1 Nodes=tux[4-7]\n\
                    SwitchName=top Switches=s[0-1]\n";
        let m = parse(text, "t.conf").unwrap();
        let t = m.tree().unwrap();
        assert_eq!(t.leaves(), &[0, 1]);
        assert_eq!(t.switches()[2].children, vec![0, 1]);
        assert_eq!(t.switches()[0].link_speed, Some(100));
        assert_eq!(t.leaf_of(5), Some(1));
        assert_eq!(m.distance(0, 1), 1);
        assert_eq!(m.distance(0, 5), 2);
        assert_eq!((m.num_links(), m.diameter()), (8 + 2, 2));
        assert_eq!(m.neighbours(5), Some(vec![4, 6, 7]));
        assert_eq!(m.neighbours(8), None);
    }

    #[test]
    fn errors_name_the_line() {
        let cases: [(&str, usize, &str); 11] = [
            (
                "BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[2-4]\n",
                2,
                "has 3 nodes",
            ),
            (
                "BlockName=a Nodes=n[0-1]\n\nBlockName=b Nodes=n[1-2]\n",
                3,
                "listed twice",
            ),
            ("BlockName=a Nodes=n[0-1\n", 1, "unbalanced bracket"),
            (
                "# c\nBlockName=a Nodes=n[0-1]\nBlockSizes=2,3\n",
                3,
                "not a multiple",
            ),
            (
                "BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[2-5]\nBlockSizes=2,4\n",
                2,
                "has 4 nodes, more than the base block size 2",
            ),
            (
                "BlockName=a Nodes=n[0-1]\nBlockName=b Nodes=n[2-3]\nBlockName=c Nodes=n[4-5]\nBlockSizes=2,6\n",
                4,
                "times a power of two",
            ),
            ("BlockName=a Nodes=n1\nSwitchName=s Nodes=n2\n", 2, "mixed"),
            ("SwitchName=s Switches=t\n", 1, "not defined"),
            (
                "SwitchName=s Nodes=n1\nSwitchName=t Speed=3 Nodes=n2\n",
                2,
                "unknown key",
            ),
            (
                "SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
                1,
                "cycle",
            ),
            ("Nodes=n1\n", 1, "must start with"),
        ];
        for (text, line, says) in cases {
            let e = err(text);
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.to_string().contains(says), "{text}: {e}");
            assert!(
                e.to_string().starts_with(&format!("t.conf:{line}: ")),
                "{e}"
            );
        }
        assert_eq!(err("# nothing\n").kind, ConfErrorKind::Empty);
    }

    #[test]
    fn the_node_limit_counts_the_whole_file_before_expanding() {
        // Sixteen lists of 4 ranges of 65,536 (Slurm's most per range):
        // 2^22 names, refused at the third line (2^19 + 2^18 names) from
        // the counts alone.
        let ranges: Vec<String> = (0..4u32)
            .map(|k| format!("{}-{}", k << 16, ((k + 1) << 16) - 1))
            .collect();
        let ranges = ranges.join(",");
        let blocks: String = (0..16)
            .map(|i| format!("BlockName=b{i} Nodes=p{i}_[{ranges}]\n"))
            .collect();
        let e = err(&blocks);
        assert_eq!(e.line, 3, "{e}");
        assert_eq!(
            e.kind,
            ConfErrorKind::TooManyNodes {
                total: 3 << 18,
                max: super::super::MAX_SLURM_NODES
            }
        );
        let switches = blocks.replace("BlockName", "SwitchName");
        assert_eq!(err(&switches).line, 3);
        let e = err("SwitchName=s Nodes=n1\nSwitchName=t Switches=s[0-65535]\n");
        assert_eq!(
            (e.line, e.kind),
            (
                2,
                ConfErrorKind::TooManyChildren {
                    named: 1 << 16,
                    defined: 2
                }
            )
        );
    }

    #[test]
    fn long_switch_chains_get_levels_and_cycles_in_linear_time() {
        // A chain c0 <- c1 <- ... with one leaf at the bottom: levels are the
        // distances from the leaf. Quadratic walks made 100,000 take 47 s.
        let n = 100_000u32;
        let mut text = String::from("SwitchName=c0 Nodes=n[0-1]\n");
        for i in 1..n {
            text.push_str(&format!("SwitchName=c{i} Switches=c{}\n", i - 1));
        }
        let m = parse(&text, "t.conf").unwrap();
        let tree = m.tree().unwrap();
        assert_eq!(tree.level(0), Some(0));
        assert_eq!(tree.level(n - 1), Some(n - 1));
        assert_eq!(tree.level(n / 2), Some(n / 2));
        // Close the chain into a loop under a leaf: the first switch whose
        // walk up never ends is the leaf, line 1.
        text.push_str(&format!("SwitchName=top Switches=c{}\n", n - 1));
        text = text.replacen(
            "SwitchName=c1 Switches=c0",
            "SwitchName=c1 Switches=c0,top",
            1,
        );
        let e = err(&text);
        assert_eq!(e.line, 1, "{e}");
        assert!(e.to_string().contains("cycle"), "{e}");
    }
}

#[cfg(test)]
mod written_back {
    use proptest::prelude::*;

    use super::parse;

    proptest! {
        /// Random trees and block machines written as topology.conf read
        /// back equal.
        #[test]
        fn to_conf_reads_back_equal(leaves in 1usize..7, width in 1u32..5, fanout in 1usize..4, speed in proptest::option::of(1u64..500)) {
            let mut tree = String::new();
            for l in 0..leaves {
                let lo = l as u32 * width;
                tree.push_str(&format!("SwitchName=leaf{l} Nodes=x[{lo}-{}]", lo + width - 1));
                if let Some(s) = speed {
                    tree.push_str(&format!(" LinkSpeed={s}"));
                }
                tree.push('\n');
            }
            let spines = leaves.div_ceil(fanout);
            for s in 0..spines {
                let hi = ((s + 1) * fanout).min(leaves) - 1;
                tree.push_str(&format!("SwitchName=spine{s} Switches=leaf[{}-{hi}]\n", s * fanout));
            }
            tree.push_str(&format!("SwitchName=top Switches=spine[0-{}]\n", spines - 1));
            let m = parse(&tree, "t").unwrap();
            prop_assert_eq!(parse(&m.to_conf(), "t").unwrap(), m);
            let mut blocks = String::new();
            for b in 0..leaves {
                let lo = b as u32 * (width + 1);
                blocks.push_str(&format!("BlockName=b{b} Nodes=n{lo:03},n[{:03}-{:03}]\n", lo + 1, lo + width));
            }
            let m = parse(&blocks, "b").unwrap();
            prop_assert_eq!(parse(&m.to_conf(), "b").unwrap(), m);
        }
    }
}

#[cfg(test)]
mod example_files {
    use super::parse;

    #[test]
    fn the_shipped_examples_read() {
        let b = parse(
            include_str!("testdata/blocks-8x18.conf"),
            "blocks-8x18.conf",
        )
        .unwrap();
        let blocks = b.blocks().unwrap();
        assert_eq!((b.num_nodes(), blocks.base_size()), (144, 18));
        assert_eq!(blocks.levels(), &[1, 2, 4, 8]);
        let t = parse(
            include_str!("testdata/tree-2level.conf"),
            "tree-2level.conf",
        )
        .unwrap();
        assert_eq!(t.num_nodes(), 64);
        assert_eq!(t.tree().unwrap().leaves().len(), 4);
        assert_eq!(t.distance(0, 63), 3);
        assert_eq!(t.diameter(), 3);
        let two_roots = parse("SwitchName=a Nodes=x1\nSwitchName=b Nodes=x2\n", "t").unwrap();
        assert_eq!(two_roots.diameter(), u32::MAX);
        assert_eq!(
            t.to_conf().lines().next(),
            Some("SwitchName=leaf0 Nodes=tux[00-15] LinkSpeed=200")
        );
        assert_eq!(parse(&t.to_conf(), "tree-2level.conf").unwrap(), t);
        assert_eq!(parse(&b.to_conf(), "blocks-8x18.conf").unwrap(), b);
    }
}
