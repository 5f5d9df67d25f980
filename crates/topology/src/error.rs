//! The error type shared by every constructor and parser of this crate.

use thiserror::Error;

/// Why a topology, address or sub-partition could not be built or used.
///
/// Every fallible function of this crate returns this type; none of them
/// panics on input a caller can supply.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A shape with no dimensions was given.
    #[error("a shape needs at least one dimension")]
    NoDimensions,
    /// More dimensions than [`MAX_DIMS`](crate::MAX_DIMS) were given.
    #[error("{got} dimensions given, but at most {max} are supported")]
    TooManyDimensions {
        /// Number of dimensions given.
        got: usize,
        /// The supported maximum.
        max: usize,
    },
    /// A side of length zero was given.
    #[error("side {dim} has length 0; every side needs at least one node")]
    ZeroSide {
        /// The offending dimension.
        dim: usize,
    },
    /// The machine would have more nodes than node ids can address.
    #[error("the machine would have {nodes} nodes, more than the supported {max}")]
    TooManyNodes {
        /// Number of nodes the shape describes.
        nodes: u128,
        /// The supported maximum.
        max: u64,
    },
    /// A hypercube dimension above the supported maximum.
    #[error("hypercube dimension {dim} is above the supported maximum {max}")]
    HypercubeTooLarge {
        /// The requested dimension.
        dim: u32,
        /// The supported maximum.
        max: u32,
    },
    /// Two objects that must have the same number of dimensions do not.
    #[error("dimension mismatch: expected {expected} coordinates, got {got}")]
    DimensionMismatch {
        /// Dimensions expected.
        expected: usize,
        /// Dimensions given.
        got: usize,
    },
    /// A coordinate lies outside its side.
    #[error("coordinate {value} along dimension {dim} is outside 0..{side}")]
    CoordinateOutOfRange {
        /// The dimension.
        dim: usize,
        /// The coordinate given.
        value: u32,
        /// The side length along that dimension.
        side: u32,
    },
    /// A node id that the machine does not have.
    #[error("node {node} does not exist; the machine has {nodes} nodes")]
    NodeOutOfRange {
        /// The node id given.
        node: u64,
        /// Number of nodes of the machine.
        nodes: u64,
    },
    /// A box that does not lie inside the machine.
    #[error("box {boxed} does not fit inside a machine of sides {sides:?}")]
    BoxOutOfBounds {
        /// The box, printed.
        boxed: String,
        /// The machine's sides, dimension 0 first.
        sides: Vec<u32>,
    },
    /// An address that could not be parsed or does not fit: a ternary
    /// subcube address such as `0X1X`, or a partition-step address such as
    /// `((1,0),(1,1))` or `(11*,01*)`.
    #[error("invalid subcube or partition-step address {text:?}: {reason}")]
    InvalidAddress {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A stride that is zero or does not divide its side (Gupta & Srimani
    /// §2.1 need K_i to divide N_i).
    #[error("stride {stride} along dimension {dim} must be a positive divisor of the side {side}")]
    InvalidStride {
        /// The dimension.
        dim: usize,
        /// The side length N along that dimension.
        side: u32,
        /// The stride K given.
        stride: u32,
    },
    /// An operation that needs a torus was given a mesh.
    #[error("a torus is needed, but the grid of sides {sides:?} has no wrap-around links")]
    NotATorus {
        /// The mesh's sides, dimension 0 first.
        sides: Vec<u32>,
    },
    /// A subtorus edge that does not exist.
    #[error(
        "node {from} has no subtorus edge along dimension {dim}: it is not a subtorus node, or the subtorus has a single node along that dimension"
    )]
    NoSuchEdge {
        /// The node the edge would start at.
        from: u64,
        /// The dimension.
        dim: usize,
    },
    /// Two partitions of different machines were compared.
    #[error("the partitions belong to different machines (sides {left:?} and {right:?})")]
    MachineMismatch {
        /// Sides of the first machine, dimension 0 first.
        left: Vec<u32>,
        /// Sides of the second machine, dimension 0 first.
        right: Vec<u32>,
    },
    /// A graph listed the same node tuple twice.
    #[error("node {tuple:?} is listed twice; node tuples must be distinct")]
    DuplicateNode {
        /// The repeated tuple, dimension 0 first.
        tuple: Vec<u32>,
    },
    /// A graph edge joins a node to itself.
    #[error("edge from node {node} to itself; loops are not allowed")]
    SelfLoop {
        /// Index of the node in the list given.
        node: u64,
    },
    /// A graph that would exceed the sizes explicit graphs support.
    #[error("the graph would have {value} {what}, more than the supported {max}")]
    GraphTooLarge {
        /// What overflows: `"nodes"`, `"edges"` or `"labels"`.
        what: &'static str,
        /// How many there would be.
        value: u128,
        /// The supported maximum.
        max: u128,
    },
    /// A topology description such as `mesh:64x64` that could not be parsed.
    #[error(
        "invalid topology {text:?}: {reason} (expected hypercube:N, mesh:AxB[xC…], torus:AxB[xC…], kary:K^N, kary-torus:K^N, pod:PRESET[:AxB…] or racks:[Bx]RxNxGgpu)"
    )]
    InvalidTopology {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A machine description over a size bound.
    #[error("topology {text:?} is too large: {reason}; describe a smaller machine")]
    MachineTooLarge {
        /// The text given (shortened).
        text: String,
        /// Which count is over which bound.
        reason: String,
    },
    /// A list of sides is malformed.
    #[error("invalid sides {text:?}: {reason} (expected AxB[xC…], e.g. 16x16)")]
    InvalidSides {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// How many characters of an input an error message repeats.
pub const ECHO_CHARS: usize = 40;

/// `text` as messages, pictures and terminal output repeat it: its first
/// [`ECHO_CHARS`] characters (then `…` if there were more), with every
/// control character escaped (`\n`, `\u{1b}`), so a huge field or
/// argument cannot flood standard error, a line break cannot split a
/// one-line message, an escape sequence cannot drive the terminal, and
/// the text is valid in XML once `&`, `<` and `>` are escaped.
///
/// ```
/// use partalloc_topology::echo;
/// assert_eq!(echo("mesh:4x4"), "mesh:4x4");
/// let long = "7".repeat(10_000_000);
/// assert_eq!(echo(&long).chars().count(), 41);
/// assert!(echo(&long).ends_with('…'));
/// assert_eq!(echo("r0\u{1b}[2J\n"), "r0\\u{1b}[2J\\n");
/// ```
#[must_use]
pub fn echo(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * ECHO_CHARS + 3));
    for (i, c) in text.chars().enumerate() {
        if i == ECHO_CHARS {
            out.push('…');
            break;
        }
        if is_unsafe(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `x` as messages repeat a number: as Rust prints it when that is short
/// (`0.5`, `1`), else in scientific notation (`1e308`, not 309 digits).
///
/// ```
/// use partalloc_topology::echo_number;
/// assert_eq!(echo_number(0.5), "0.5");
/// assert_eq!(echo_number(1e308), "1e308");
/// assert_eq!(echo_number(1e-300), "1e-300");
/// ```
#[must_use]
pub fn echo_number(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() <= 16 {
        plain
    } else {
        format!("{x:e}")
    }
}

/// Most characters of a path a message repeats ([`echo_path`]).
pub const PATH_CHARS: usize = 80;

/// `path` as messages show it: control characters escaped as [`echo`]
/// escapes them, and, past [`PATH_CHARS`] characters, `…` and its last
/// `PATH_CHARS - 1` characters (the end of a path names the file): real
/// paths stay whole, a megabyte of path does not flood standard error.
///
/// ```
/// use partalloc_topology::echo_path;
/// assert_eq!(echo_path(std::path::Path::new("examples/a.conf")), "examples/a.conf");
/// let long = format!("{}/x.conf", "d".repeat(500));
/// let shown = echo_path(std::path::Path::new(&long));
/// assert!(shown.starts_with('…') && shown.ends_with("/x.conf"));
/// assert_eq!(shown.chars().count(), 80);
/// ```
#[must_use]
pub fn echo_path(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let chars = text.chars().count();
    let (skip, lead) = if chars > PATH_CHARS {
        (chars - (PATH_CHARS - 1), "…")
    } else {
        (0, "")
    };
    let mut out = String::from(lead);
    for c in text.chars().skip(skip) {
        if is_unsafe(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with every character [`is_unsafe`] says is unsafe escaped
/// (`\n`, `\u{1b}`), at its whole length: for output that must show all
/// of a text (a partition's host list) yet never drive the terminal or
/// break a line or an XML document. [`echo`] also caps the length.
#[must_use]
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A character [`echo`] escapes: a control character, or one that
/// reorders or hides text on a terminal (bidirectional overrides and
/// isolates, zero-width marks).
#[must_use]
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}
