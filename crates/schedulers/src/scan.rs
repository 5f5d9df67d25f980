//! Scan: one queue per size class, served like the C-SCAN disk discipline
//! (Krueger, Lai & Radiya, summarised by Mohapatra et al. §2.3).
//!
//! "The algorithm maintains (n + 1) separate queues, one for each possible
//! cube dimension. A new job joins the end of a queue corresponding to its
//! subcube dimension. All jobs of a given dimension are allocated before
//! the scheduler move on to the jobs of next dimension" (Mohapatra §2.3).
//! The exact rules (docs/baselines.md#scan):
//!
//! - a *visit* of queue `c` serves, in FIFO order, the jobs that were in the
//!   queue when the visit began ([`Arrivals::NextPass`], the default and the
//!   C-SCAN reading) or also those that arrive during the visit
//!   ([`Arrivals::SamePass`]);
//! - the head of the visited queue never is skipped: when the allocator
//!   refuses it, nothing starts until a departure;
//! - when a visit ends the scan moves to the next non-empty queue in the
//!   [`Direction`] (Up: 0 → n then back to 0; Down: n → 0 then back to n),
//!   reaching the queue it just left last. The very first visit starts at
//!   class 0 (Up) or the largest class (Down).
//!
//! A job's class is [`crate::size_class`].
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:3".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut scan = registry::build("scan", &machine)?;
//! for (id, dim) in [(1, 2), (2, 0), (3, 2)] {
//!     let job = Job::new(id, 0.0, JobShape::Cube { dim }, 1.0);
//!     scan.submit(job, 0.0)?;
//! }
//! let mut started = Vec::new();
//! scan.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Class 0 is visited first, then class 2.
//! let order: Vec<u64> = started.iter().map(|s| s.job.id).collect();
//! assert_eq!(order, [2, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use partalloc_allocators::Allocator;
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, ParamInfo, PolicyEntry, ROTATE, StrategyInfo};
use crate::scheduler::{Attempt, ClassQueues, check_job};
use crate::{RequestMapping, ScheduleError, Scheduler, Started, class_count};

/// The order in which Scan visits the size classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Direction {
    /// Smallest class first, wrapping from the largest back to 0.
    #[default]
    Up,
    /// Largest class first, wrapping from 0 back to the largest.
    Down,
}

/// Whether jobs arriving at the queue being visited join the visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Arrivals {
    /// They wait for the next visit (C-SCAN; bounded waiting).
    #[default]
    NextPass,
    /// They are served in the current visit.
    SamePass,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Up => "up",
            Self::Down => "down",
        })
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NextPass => "next-pass",
            Self::SamePass => "same-pass",
        })
    }
}

/// The Scan policy.
#[derive(Debug, Clone)]
pub struct Scan {
    queues: ClassQueues,
    // The class being visited (None before the first visit).
    current: Option<usize>,
    // The jobs of the visit form a prefix of `queues[current]` of this length.
    eligible: usize,
    direction: Direction,
    arrivals: Arrivals,
    mapping: RequestMapping,
}

impl Scan {
    /// Scan over `classes` size classes (0 ..= ⌈log₂ N⌉ for an N-node
    /// machine: see [`class_count`]). Jobs of a larger class are queued in
    /// the largest one.
    #[must_use]
    pub fn new(
        classes: usize,
        direction: Direction,
        arrivals: Arrivals,
        mapping: RequestMapping,
    ) -> Self {
        Self {
            queues: ClassQueues::new(classes),
            current: None,
            eligible: 0,
            direction,
            arrivals,
            mapping,
        }
    }

    /// The class the next visit goes to: the first non-empty queue after
    /// the current one in the direction, the current one last.
    fn next_class(&self) -> Option<usize> {
        let n = self.queues.classes();
        let start = match (self.current, self.direction) {
            (None, Direction::Up) => 0,
            (None, Direction::Down) => n - 1,
            (Some(c), Direction::Up) => (c + 1) % n,
            (Some(c), Direction::Down) => (c + n - 1) % n,
        };
        (0..n)
            .map(|step| match self.direction {
                Direction::Up => (start + step) % n,
                Direction::Down => (start + n - step) % n,
            })
            .find(|&k| !self.queues[k].is_empty())
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "scan",
        summary: "one FIFO queue per size class, visited in C-SCAN order; the visited head never is skipped",
        source: "Krueger, Lai & Radiya (ICDCS'91) as summarised in Mohapatra et al. §2.3; docs/baselines.md#scan",
        params: &[
            ParamInfo {
                name: "direction",
                default: "up",
                doc: "visit order of the size classes: up (0 → n, wrap) or down (n → 0, wrap)",
            },
            ParamInfo {
                name: "arrivals",
                default: "next-pass",
                doc: "jobs arriving at the visited queue join the next visit (next-pass) or this one (same-pass)",
            },
            ROTATE,
        ],
        topologies: ANY_TOPOLOGY,
    },
    build: |t, spec| {
        let direction = match spec.get("direction").unwrap_or("up") {
            "up" => Direction::Up,
            "down" => Direction::Down,
            _ => return Err(spec.invalid("direction", "expected up or down").into()),
        };
        let arrivals = match spec.get("arrivals").unwrap_or("next-pass") {
            "next-pass" => Arrivals::NextPass,
            "same-pass" => Arrivals::SamePass,
            _ => {
                return Err(spec
                    .invalid("arrivals", "expected next-pass or same-pass")
                    .into());
            }
        };
        Ok(Box::new(Scan::new(
            class_count(t.num_nodes()),
            direction,
            arrivals,
            crate::entry::mapping(spec)?,
        )))
    },
};

impl Scheduler for Scan {
    fn name(&self) -> String {
        let mut params = Vec::new();
        if self.direction != Direction::Up {
            params.push(format!("direction={}", self.direction));
        }
        if self.arrivals != Arrivals::NextPass {
            params.push(format!("arrivals={}", self.arrivals));
        }
        crate::entry::with_rotate("scan", self.mapping, params.join(","))
    }

    fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        let k = self.queues.push(job);
        if self.arrivals == Arrivals::SamePass && self.current == Some(k) && self.eligible > 0 {
            self.eligible += 1;
        }
        Ok(())
    }

    fn schedule(
        &mut self,
        _now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        loop {
            if self.queues.waiting() == 0 {
                return Ok(());
            }
            if self.eligible == 0 {
                let Some(c) = self.next_class() else {
                    return Ok(());
                };
                self.current = Some(c);
                self.eligible = self.queues[c].len();
            }
            let c = self.current.unwrap_or_default();
            if self.queues[c].is_empty() {
                self.eligible = 0;
                continue;
            }
            match self.queues.start_front(c, self.mapping, alloc, started) {
                Ok(Attempt::Started) => self.eligible -= 1,
                Ok(Attempt::Blocked) => return Ok(()),
                Err(e) => {
                    self.eligible -= 1;
                    return Err(e);
                }
            }
        }
    }

    fn queue_len(&self) -> usize {
        self.queues.waiting()
    }

    fn head(&self) -> Option<&Job> {
        match self.current {
            Some(c) if self.eligible > 0 => self.queues[c].front(),
            _ => self.next_class().and_then(|k| self.queues[k].front()),
        }
    }
}
