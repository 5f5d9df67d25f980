//! Reader and replayer for PReMAS oracle golden files: what the PReMAS
//! simulator (Knox College) granted, job by job, so that partalloc's
//! strategies can be replayed against it without Java.
//!
//! `scripts/premas-oracle` (docs/premas-oracle.md) runs PReMAS on a mesh, a
//! trace, an allocator and a scheduler and writes the file: a header, then
//! one line per allocator call in the order PReMAS made them — `b` when a
//! job starts (its number, start time, node count, the pairwise L1 distance
//! of its nodes as PReMAS logged it, and an FNV-1a fingerprint of its node
//! ids), `e` when a job ends and its nodes are returned. `#` starts a
//! comment line.
//!
//! ```text
//! premas-oracle 1
//! premas 855d5b11be361cfbb8c0474e84efc302e2bdaa98
//! machine 8x8x1
//! allocator MBS
//! scheduler pqueue[fifo]
//! trace small.swf jobs 3 sha256 0123456789abcdef
//! b 0 0 4 8 1a2b3c4d
//! e 0 10
//! ```
//!
//! [`Golden::replay`] plays the same sequence of allocations and releases
//! on a partalloc allocator and checks every grant's pairwise distance and
//! node set against PReMAS's. The schedule is PReMAS's (the order of the
//! lines); only the allocator's choices are compared.
//!
//! ```
//! use partalloc_allocators::premas_golden::{Golden, fingerprint};
//! use partalloc_allocators::registry;
//! let text = format!(
//!     "premas-oracle 1\npremas abc\nmachine 8x8x1\nallocator MBS\nscheduler pqueue[fifo]\n\
//!      trace t jobs 1 sha256 0\nb 0 0 4 8 {:08x}\ne 0 10\n",
//!     fingerprint(&[0, 1, 8, 9])
//! );
//! let g = Golden::parse(&text, "x.golden")?;
//! assert_eq!(g.topology()?.to_string(), "mesh:8x8");
//! let mut mbs = registry::build(&g.partalloc_name().unwrap_or_default(), &g.topology()?)?;
//! assert_eq!(g.replay(mbs.as_mut())?.starts, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;

use partalloc_topology::{NodeId, Topology, TopologyError};
use thiserror::Error;

use crate::dispersal::Measurer;
use crate::{Allocator, Grant, Request};

/// The PReMAS allocators partalloc reproduces by a fixed name: (PReMAS's
/// name, registry name). The linear allocators, named by their curve
/// (`linear-first[hilbert]`), are mapped by [`Golden::partalloc_name`].
pub const PREMAS_NAMES: &[(&str, &str)] = &[
    ("MBS", "mbs"),
    ("GranularMBS", "granular-mbs"),
    ("OctetMBS", "octet-mbs"),
    ("MC1x1", "mc1x1[outer=premas]"),
    ("MM", "mm"),
    ("genAlg", "gen-alg"),
];

/// PReMAS's linear allocators: (name before the curve, registry name of
/// the fit, which takes the curve as its `order`).
const PREMAS_LINEAR: &[(&str, &str)] = &[
    ("linear-first", "curve-first-fit"),
    ("linear-best", "curve-best-fit"),
    ("linear-sorted", "curve-sorted-free-list"),
];

/// One allocator call PReMAS made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A job started.
    Begin {
        /// PReMAS's job number.
        job: u64,
        /// Its start time (seconds).
        start: i64,
        /// Nodes granted.
        procs: u32,
        /// Σ of the L1 distance over pairs of its nodes.
        l1: u64,
        /// [`fingerprint`] of its node ids.
        nodes: u32,
    },
    /// A job ended and its nodes were returned.
    End {
        /// PReMAS's job number.
        job: u64,
        /// Its end time (seconds).
        end: i64,
    },
}

/// A parsed golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    /// The PReMAS source commit it was made with.
    pub premas: String,
    /// The mesh sides, x, y, z.
    pub machine: [u32; 3],
    /// PReMAS's allocator, as given to it.
    pub allocator: String,
    /// PReMAS's scheduler, as given to it.
    pub scheduler: String,
    /// The trace line (name, job count, hash).
    pub trace: String,
    /// The allocator calls, in order, with their line numbers.
    pub events: Vec<(usize, Event)>,
}

/// A golden file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{source_name}:{line}: {reason}")]
pub struct GoldenError {
    /// The file's name, for the message.
    pub source_name: String,
    /// The line (1-based; 0 for the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// A replay that disagrees with PReMAS, or cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The grant differs from PReMAS's.
    #[error("line {line}, job {job}: {what}: PReMAS {premas}, partalloc {ours}")]
    Differs {
        /// The golden's line.
        line: usize,
        /// The job.
        job: u64,
        /// What differs (`pairwise L1`, `node set`).
        what: &'static str,
        /// PReMAS's value.
        premas: String,
        /// partalloc's value.
        ours: String,
    },
    /// The allocator refused a job PReMAS started.
    #[error("line {line}, job {job}: partalloc refused what PReMAS granted: {reason}")]
    Refused {
        /// The golden's line.
        line: usize,
        /// The job.
        job: u64,
        /// The allocator's error.
        reason: String,
    },
    /// The file ends a job that is not running, or the machine is not a
    /// grid.
    #[error("line {line}: {reason}")]
    Inconsistent {
        /// The golden's line.
        line: usize,
        /// What.
        reason: String,
    },
}

/// What a replay did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplaySummary {
    /// Jobs started, each checked.
    pub starts: usize,
    /// Jobs ended.
    pub ends: usize,
}

/// FNV-1a (32 bit) over the sorted node ids as little-endian `u32`s: the
/// node-set fingerprint of the golden files.
#[must_use]
pub fn fingerprint(nodes: &[NodeId]) -> u32 {
    let mut sorted = nodes.to_vec();
    sorted.sort_unstable();
    let mut h: u32 = 0x811C_9DC5;
    for n in sorted {
        for b in n.to_le_bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    h
}

impl Golden {
    /// Parses a golden file's text; `source_name` names it in errors.
    ///
    /// # Errors
    /// The first malformed line, or a missing header line.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, GoldenError> {
        let err = |line: usize, reason: String| GoldenError {
            source_name: source_name.to_owned(),
            line,
            reason,
        };
        let mut head: HashMap<&str, (usize, &str)> = HashMap::new();
        let mut events = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let (key, rest) = l.split_once(' ').unwrap_or((l, ""));
            let num = |s: Option<&str>, what: &str| -> Result<i64, GoldenError> {
                s.and_then(|v| v.parse().ok())
                    .ok_or_else(|| err(line, format!("{what} is not a number in {l:?}")))
            };
            match key {
                "b" => {
                    let f: Vec<&str> = rest.split(' ').collect();
                    if f.len() != 5 {
                        return Err(err(
                            line,
                            format!("expected `b JOB START PROCS L1 HASH`, got {l:?}"),
                        ));
                    }
                    let nonneg = |v: i64, what: &str| {
                        u64::try_from(v)
                            .map_err(|_| err(line, format!("{what} is negative in {l:?}")))
                    };
                    let job = nonneg(num(f.first().copied(), "the job")?, "the job")?;
                    let start = num(f.get(1).copied(), "the start")?;
                    let procs =
                        u32::try_from(num(f.get(2).copied(), "the node count")?).map_err(|_| {
                            err(line, format!("the node count is out of range in {l:?}"))
                        })?;
                    let l1 = nonneg(num(f.get(3).copied(), "the distance")?, "the distance")?;
                    let nodes = u32::from_str_radix(f[4], 16).map_err(|_| {
                        err(
                            line,
                            format!("the fingerprint is not 8 hex digits in {l:?}"),
                        )
                    })?;
                    events.push((
                        line,
                        Event::Begin {
                            job,
                            start,
                            procs,
                            l1,
                            nodes,
                        },
                    ));
                }
                "e" => {
                    let f: Vec<&str> = rest.split(' ').collect();
                    if f.len() != 2 {
                        return Err(err(line, format!("expected `e JOB END`, got {l:?}")));
                    }
                    let job = u64::try_from(num(f.first().copied(), "the job")?)
                        .map_err(|_| err(line, format!("the job is negative in {l:?}")))?;
                    let end = num(f.get(1).copied(), "the end")?;
                    events.push((line, Event::End { job, end }));
                }
                "premas-oracle" | "premas" | "machine" | "allocator" | "scheduler" | "trace" => {
                    if head.insert(key, (line, rest)).is_some() {
                        return Err(err(line, format!("a second `{key}` line")));
                    }
                }
                _ => return Err(err(line, format!("unknown record {key:?}"))),
            }
        }
        let get = |k: &str| {
            head.get(k)
                .map(|&(_, v)| v.to_owned())
                .ok_or_else(|| err(0, format!("no `{k}` line")))
        };
        if get("premas-oracle")? != "1" {
            let line = head.get("premas-oracle").map_or(0, |h| h.0);
            return Err(err(
                line,
                "this reader knows format 1 (`premas-oracle 1`)".to_owned(),
            ));
        }
        let m = get("machine")?;
        let line = head.get("machine").map_or(0, |h| h.0);
        let sides: Vec<u32> = m
            .split('x')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| err(line, format!("the machine {m:?} is not XxYxZ")))?;
        let machine: [u32; 3] = sides
            .try_into()
            .map_err(|_| err(line, format!("the machine {m:?} is not XxYxZ")))?;
        Ok(Self {
            premas: get("premas")?,
            machine,
            allocator: get("allocator")?,
            scheduler: get("scheduler")?,
            trace: get("trace")?,
            events,
        })
    }

    /// The machine as partalloc names it: `mesh:XxY` when z is 1,
    /// `mesh:XxYxZ` otherwise (node ids agree: x fastest, then y, then z).
    ///
    /// # Errors
    /// A side of 0 or a machine too large.
    pub fn topology(&self) -> Result<Topology, TopologyError> {
        let [x, y, z] = self.machine;
        let text = if z == 1 {
            format!("mesh:{x}x{y}")
        } else {
            format!("mesh:{x}x{y}x{z}")
        };
        text.parse()
    }

    /// The registry name of the golden's allocator, if partalloc has it
    /// ([`PREMAS_NAMES`]).
    #[must_use]
    pub fn partalloc_name(&self) -> Option<String> {
        if let Some(&(_, n)) = PREMAS_NAMES.iter().find(|(p, _)| *p == self.allocator) {
            return Some(n.to_owned());
        }
        let (name, curve) = self.allocator.split_once('[')?;
        let curve = curve.strip_suffix(']')?;
        let &(_, fit) = PREMAS_LINEAR.iter().find(|(p, _)| *p == name)?;
        Some(format!("{fit}[order={curve}]"))
    }

    /// Plays the golden's allocations and releases on `alloc` (fresh, on
    /// [`Golden::topology`]) and checks that every job gets a node set with
    /// PReMAS's pairwise L1 distance and fingerprint.
    ///
    /// # Errors
    /// The first job whose grant differs, a refusal, or an inconsistent
    /// file.
    pub fn replay(&self, alloc: &mut dyn Allocator) -> Result<ReplaySummary, ReplayError> {
        let topo = alloc.topology().clone();
        let mut measure = Measurer::new(&topo).map_err(|e| ReplayError::Inconsistent {
            line: 0,
            reason: e.to_string(),
        })?;
        let mut live: HashMap<u64, Grant> = HashMap::new();
        let mut sum = ReplaySummary::default();
        for &(line, ev) in &self.events {
            match ev {
                Event::Begin {
                    job,
                    procs,
                    l1,
                    nodes,
                    ..
                } => {
                    let g = alloc.allocate(&Request::nodes(procs)).map_err(|e| {
                        ReplayError::Refused {
                            line,
                            job,
                            reason: e.to_string(),
                        }
                    })?;
                    let ids =
                        g.partition()
                            .node_list(&topo)
                            .map_err(|e| ReplayError::Inconsistent {
                                line,
                                reason: e.to_string(),
                            })?;
                    let d = measure
                        .measure(&ids)
                        .map_err(|e| ReplayError::Inconsistent {
                            line,
                            reason: e.to_string(),
                        })?;
                    if d.distance_sum != u128::from(l1) {
                        return Err(ReplayError::Differs {
                            line,
                            job,
                            what: "pairwise L1",
                            premas: l1.to_string(),
                            ours: d.distance_sum.to_string(),
                        });
                    }
                    let fp = fingerprint(&ids);
                    if fp != nodes {
                        return Err(ReplayError::Differs {
                            line,
                            job,
                            what: "node set",
                            premas: format!("{nodes:08x}"),
                            ours: format!("{fp:08x} ({})", g.partition()),
                        });
                    }
                    live.insert(job, g);
                    sum.starts += 1;
                }
                Event::End { job, .. } => {
                    let g = live.remove(&job).ok_or_else(|| ReplayError::Inconsistent {
                        line,
                        reason: format!("job {job} ends but is not running"),
                    })?;
                    alloc.release(&g).map_err(|e| ReplayError::Inconsistent {
                        line,
                        reason: e.to_string(),
                    })?;
                    sum.ends += 1;
                }
            }
        }
        Ok(sum)
    }
}
