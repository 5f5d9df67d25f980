//! Errors of construction, allocation, release and fault marking.

use thiserror::Error;

use partalloc_topology::{NodeId, Topology, TopologyError, TopologyKind};

use crate::{GrantId, Partition, Request, SpecError};

/// No entry of a registry has the name given. The message lists the known
/// names when they fit one short line, else it names the closest one and
/// how many there are (every front end lists them: `partalloc strategies`,
/// `partalloc.strategies()`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.message())]
pub struct UnknownName {
    /// What the registry holds (e.g. `allocation strategy`).
    pub kind: &'static str,
    /// The same in the plural (e.g. `strategies`).
    pub plural: &'static str,
    /// The name given.
    pub name: String,
    /// The registered names, comma separated.
    pub known: String,
    /// The registered name closest to the one given, if one is close.
    pub closest: Option<String>,
}

/// Longest message that spells out the known names.
const LISTED_CHARS: usize = 180;

impl UnknownName {
    fn message(&self) -> String {
        let hint = self
            .closest
            .as_ref()
            .map(|c| format!(" (did you mean {c:?}?)"))
            .unwrap_or_default();
        let listed = format!(
            "unknown {} {:?}{hint}; known {}: {}",
            self.kind, self.name, self.plural, self.known
        );
        if listed.chars().count() <= LISTED_CHARS {
            return listed;
        }
        let count = self.known.split(", ").count();
        let python = if self.plural == "policies" {
            "policies()"
        } else {
            "strategies()"
        };
        format!(
            "unknown {} {:?}{hint}; {count} known {}, listed by `partalloc strategies` (Python: {python})",
            self.kind, self.name, self.plural
        )
    }
}

/// The name of `names` closest to `given` by edit distance (case
/// ignored), if it is close: at most a third of the longer name's letters
/// apart, and at most 3.
///
/// ```
/// use partalloc_allocators::registry::closest_name;
/// let names = ["fsl", "first-fit", "paging"];
/// assert_eq!(closest_name("FSL", names.into_iter()), Some("fsl"));
/// assert_eq!(closest_name("firstfit", names.into_iter()), Some("first-fit"));
/// assert_eq!(closest_name("qqqq", names.into_iter()), None);
/// ```
#[must_use]
pub fn closest_name<'a>(given: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let g: Vec<char> = given.to_lowercase().chars().collect();
    if g.len() > 64 {
        return None;
    }
    let distance = |n: &str| {
        let n: Vec<char> = n.to_lowercase().chars().collect();
        let mut row: Vec<usize> = (0..=n.len()).collect();
        for (i, a) in g.iter().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, b) in n.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(a != b)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        (row[n.len()], n.len())
    };
    names
        .map(|n| (n, distance(n)))
        .filter(|(_, (d, len))| *d * 3 <= g.len().max(*len) && *d <= 3)
        .min_by_key(|(_, (d, _))| *d)
        .map(|(n, _)| n)
}

/// The entry does not run on this family of machine.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{strategy} does not run on {topology}; it accepts: {accepted}")]
pub struct UnsupportedTopology {
    /// The entry's name.
    pub strategy: &'static str,
    /// The machine given.
    pub topology: String,
    /// The families it accepts, comma separated.
    pub accepted: String,
}

impl UnsupportedTopology {
    /// `strategy`, which accepts `accepted`, refuses `topology`.
    #[must_use]
    pub fn new(strategy: &'static str, topology: &Topology, accepted: &[TopologyKind]) -> Self {
        Self {
            strategy,
            topology: topology.to_string(),
            accepted: join(accepted.iter().map(ToString::to_string)),
        }
    }
}

/// The items separated by `, `.
pub(crate) fn join<S: AsRef<str>>(items: impl Iterator<Item = S>) -> String {
    let mut out = String::new();
    for (i, s) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(s.as_ref());
    }
    out
}

/// Why an allocator could not be built, by its constructor or by the
/// [`registry`](crate::registry): the one construction error of the crate.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No strategy has this name (registry only).
    #[error(transparent)]
    Unknown(#[from] UnknownName),
    /// The strategy does not run on this family of machine.
    #[error(transparent)]
    UnsupportedTopology(#[from] UnsupportedTopology),
    /// The machine is of an accepted family but unsuitable (e.g. sides that
    /// are not powers of two where the strategy needs them, or too large
    /// for the strategy's tables).
    #[error("{strategy} cannot run on {topology}: {reason}")]
    UnsuitableTopology {
        /// The strategy.
        strategy: &'static str,
        /// The machine given.
        topology: String,
        /// Why.
        reason: String,
    },
    /// The Gray code given to a hypercube strategy has a width other than
    /// the machine's dimension.
    #[error("the gray code has width {code} but the machine is Q_{cube}; give {cube} parameters")]
    CodeWidth {
        /// Width of the code.
        code: u32,
        /// Dimension of the machine.
        cube: u32,
    },
    /// The name or a parameter of a spec is malformed, unknown or invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The constructor of a strategy from outside the workspace (written
    /// in another language, say) failed for a reason of its own.
    #[error("{strategy} could not be built: {reason}")]
    Constructor {
        /// The strategy.
        strategy: String,
        /// Its constructor's error.
        reason: String,
    },
}

/// Why a request was refused. A refused request leaves the allocator
/// unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AllocError {
    /// The request is valid and supported, but no partition the strategy
    /// can recognise is free now. Normal under load: the job waits.
    #[error("no free partition for {request}: {free} of {total} nodes free")]
    NoRoom {
        /// The refused request.
        request: Request,
        /// Free nodes at the time of the refusal.
        free: usize,
        /// Nodes of the machine.
        total: usize,
    },
    /// The strategy does not serve this kind of request.
    #[error("{strategy} does not support a {request} request: {reason}")]
    Unsupported {
        /// The strategy's name.
        strategy: &'static str,
        /// The refused request.
        request: Request,
        /// Why, and what it accepts instead.
        reason: &'static str,
    },
    /// The strategy cannot list the partitions it recognises
    /// ([`Allocator::recognizable`](crate::Allocator::recognizable)); it
    /// still allocates.
    #[error("{strategy} cannot list the partitions it recognises")]
    ListingUnsupported {
        /// The strategy's name.
        strategy: String,
    },
    /// The strategy cannot tell whether it would grant a request without
    /// allocating ([`Allocator::can_allocate`](crate::Allocator::can_allocate));
    /// it still allocates.
    #[error("{strategy} cannot answer whether it would grant a request without allocating")]
    ProbeUnsupported {
        /// The strategy's name.
        strategy: String,
    },
    /// The strategy cannot grant a chosen partition
    /// ([`Allocator::allocate_at`](crate::Allocator::allocate_at)); it
    /// still allocates where it chooses.
    #[error("{strategy} cannot grant a chosen partition; let it choose with allocate")]
    PlacementUnsupported {
        /// The strategy's name.
        strategy: String,
    },
    /// The strategy never grants this partition for this request: it is
    /// not among its [`recognizable`](crate::Allocator::recognizable)
    /// partitions (wrong shape, position or kind).
    #[error(
        "{strategy} never grants {partition} for {request}; pick one of its recognizable partitions"
    )]
    Unrecognized {
        /// The strategy's name (without parameters).
        strategy: &'static str,
        /// The request.
        request: Request,
        /// The partition asked for (boxed, so that the error stays small).
        partition: Box<Partition>,
    },
    /// The strategy would grant this partition for the request, but not
    /// all of it is free now (some node is allocated or faulty).
    #[error("{partition} is not wholly free now; pick a free partition or wait")]
    PartitionBusy {
        /// The request.
        request: Request,
        /// The partition asked for (boxed, so that the error stays small).
        partition: Box<Partition>,
    },
    /// The request can never be served on this machine (larger than the
    /// machine, wrong number of dimensions, zero size, …).
    #[error("invalid request {request}: {reason}")]
    Invalid {
        /// The refused request.
        request: Request,
        /// What is wrong with it.
        reason: String,
    },
}

/// Why a release was refused. A refused release leaves the allocator
/// unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ReleaseError {
    /// The grant was issued by another allocator instance.
    #[error("grant {id} was issued by another allocator")]
    Foreign {
        /// The grant's handle.
        id: GrantId,
    },
    /// The grant was already released (or never issued by this allocator).
    #[error("grant {id} is not live: it was already released")]
    NotLive {
        /// The grant's handle.
        id: GrantId,
    },
}

/// Why a node could not be marked faulty or repaired.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FaultError {
    /// The node is not part of the machine.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The node belongs to a live grant; release it first.
    #[error("node {node} is allocated; release its grant before marking it faulty")]
    Busy {
        /// The node.
        node: NodeId,
    },
    /// The strategy cannot work around faults.
    #[error("{strategy} does not support faulty nodes")]
    Unsupported {
        /// The strategy's name.
        strategy: String,
    },
}

/// Why a job cannot be placed by one of the Slurm planners ([`block`](crate::block),
/// [`tree`](crate::tree), [`ring`](crate::ring), [`torus3d`](crate::torus3d)); their
/// one error, kept here so that no planner imports another.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PlaceError {
    /// The request can never be placed on this machine.
    #[error("cannot place {nodes} nodes: {reason}")]
    Invalid {
        /// Nodes asked for.
        nodes: u32,
        /// Why.
        reason: String,
    },
    /// The segment size does not divide the job (sbatch refuses it).
    #[error("segment {segment} does not divide a job of {nodes} nodes")]
    SegmentSize {
        /// Nodes asked for.
        nodes: u32,
        /// The segment size.
        segment: u32,
    },
    /// Not even the empty machine could hold the job as asked (no block,
    /// or no switch tree of a machine whose switches have no common root):
    /// Slurm refuses it at submission ("Requested node configuration is not
    /// available").
    #[error(
        "requested node configuration is not available: {nodes} nodes fit no block or switch tree even on the empty machine"
    )]
    Unavailable {
        /// Nodes asked for.
        nodes: u32,
    },
    /// No block has room now: the job waits.
    #[error("no block has room for {nodes} nodes now")]
    NoRoom {
        /// Nodes asked for.
        nodes: u32,
    },
}
