//! Priority orders for a waiting queue: which waiting job a policy
//! considers first.
//!
//! Every order gives each waiting job a *score* at the time `now` of a
//! scheduling pass; the lowest score goes first, ties by arrival time, then
//! by job id (so the order is total and deterministic). `fcfs` is the
//! queue's submission order itself (arrival order; jobs submitted at the
//! same time in the order they were submitted), as the existing FCFS
//! policies keep it.
//!
//! Notation: n = the job's node count, r = its run-time estimate as the
//! policy reads it ([`Estimates`]), s = its arrival (submit) time, w = now −
//! s its wait so far.
//!
//! | order | score (lowest first) | source |
//! |---|---|---|
//! | `fcfs` | submission order | — |
//! | `smallest` / `largest` | n / −n | PReMAS `SmallestFirstComparator`, `LargestFirstComparator` |
//! | `widest` | −n (the same order as `largest`) | PReMAS `WidestFirstComparator` as documented (see errata) |
//! | `shortest` / `longest` | r / −r | PReMAS `ShortestFirstComparator`, `LongestFirstComparator` |
//! | `sjf` | r (the same order as `shortest`) | Zhang et al. (RLScheduler, SC'20), Table 2 |
//! | `least-work` / `most-work` | n·r / −n·r | PReMAS `LeastWorkFirstComparator` (`ssd`), `MostWorkFirstComparator` (`lsd`) |
//! | `wfp3` | −(w/r)³·n | Tang et al. 2009; RLScheduler Table 2 |
//! | `unicep` | −w/(log₂(n)·r) | Tang et al. 2009; RLScheduler Table 2 |
//! | `f1` | log₁₀(r)·n + 870·log₁₀(s) | Carastan-Santos & de Camargo (SC'17); RLScheduler Table 2 |
//! | `wfp3-rlscheduler` | −(w′/r)³·n, w′ = −1 − s | RLScheduler's simulator, `HPCSimPickJobs.py` `wfp_score` |
//! | `unicep-rlscheduler` | −(w′ + 10⁻¹⁵)/(log₂(n + 10⁻¹⁵)·r), w′ = −1 − s | `HPCSimPickJobs.py` `uni_score` |
//!
//! Where a formula is undefined the rule is:
//! - w/r with r = 0 is 0 when w = 0 and ±∞ (the sign of w) otherwise, so a
//!   zero-length job that has waited goes first under `wfp3`;
//! - under `unicep`, log₂(n)·r = 0 (a one-node job, or r = 0) gives −∞ when
//!   w > 0 and 0 when w = 0 (the limit of the formula: such jobs go first);
//! - under `f1`, the logarithm of a non-positive r or s is taken as
//!   log₁₀ 0.1 = −1, as RLScheduler's simulator does (`f1_score`); s is the
//!   arrival time as given (a trace's submit times are not rebased);
//! - a product with n = 0 is 0.
//!
//! The two `-rlscheduler` orders reproduce what RLScheduler's simulator
//! computes: it reads a queued job's wait as `scheduled_time −
//! submit_time` while `scheduled_time` is still its placeholder −1, so the
//! "wait" is −1 − s whatever the time (see docs/paper-errata.md). The
//! scores never depend on `now`, and the orders favour early arrivals with
//! long estimates.
//!
//! ```
//! use partalloc_schedulers::order::Order;
//! use partalloc_workload::{Job, JobShape};
//! let job = Job::new(1, 10.0, JobShape::Nodes { count: 8 }, 100.0);
//! let wfp3: Order = "wfp3".parse()?;
//! // waited 40 s of an estimated 20 s: −(40/20)³·8
//! assert_eq!(wfp3.score(&job, 20.0, 50.0), -64.0);
//! let rl: Order = "wfp3-rlscheduler".parse()?;
//! // the simulator's "wait" is −1 − 10 = −11 at any time
//! assert_eq!(rl.score(&job, 11.0, 50.0), 8.0);
//! assert!("wfp4".parse::<Order>().unwrap_err().to_string().contains("wfp3"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::cmp::Ordering;
use core::fmt;
use core::str::FromStr;
use std::collections::VecDeque;

use partalloc_allocators::registry::ParamInfo;
use partalloc_allocators::{SpecError, StrategySpec};
use partalloc_workload::Job;
use thiserror::Error;

use crate::estimates::Estimates;

/// A priority order for a waiting queue (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Order {
    /// Submission (arrival) order.
    #[default]
    Fcfs,
    /// Fewest nodes first.
    Smallest,
    /// Most nodes first.
    Largest,
    /// Most nodes first (the name PReMAS's documentation uses).
    Widest,
    /// Shortest estimate first.
    Shortest,
    /// Longest estimate first.
    Longest,
    /// Shortest estimate first (the learned-scheduling literature's name).
    Sjf,
    /// Least nodes × estimate first.
    LeastWork,
    /// Most nodes × estimate first.
    MostWork,
    /// Tang et al.'s WFP3: highest (w/r)³·n first.
    Wfp3,
    /// Tang et al.'s UNICEP: highest w/(log₂(n)·r) first.
    Unicep,
    /// Carastan-Santos & de Camargo's F1: lowest log₁₀(r)·n + 870·log₁₀(s) first.
    F1,
    /// WFP3 as RLScheduler's simulator computes it (wait = −1 − s).
    Wfp3Rlscheduler,
    /// UNICEP as RLScheduler's simulator computes it (wait = −1 − s).
    UnicepRlscheduler,
}

/// Every order with its text form, in listing order.
pub const ORDERS: [(&str, Order); 14] = [
    ("fcfs", Order::Fcfs),
    ("smallest", Order::Smallest),
    ("largest", Order::Largest),
    ("widest", Order::Widest),
    ("shortest", Order::Shortest),
    ("longest", Order::Longest),
    ("sjf", Order::Sjf),
    ("least-work", Order::LeastWork),
    ("most-work", Order::MostWork),
    ("wfp3", Order::Wfp3),
    ("unicep", Order::Unicep),
    ("f1", Order::F1),
    ("wfp3-rlscheduler", Order::Wfp3Rlscheduler),
    ("unicep-rlscheduler", Order::UnicepRlscheduler),
];

/// A text that names no order.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown queue order {given:?}; known orders: {known}")]
#[non_exhaustive]
pub struct UnknownOrder {
    /// The text given (at most 40 characters, then `…`).
    pub given: String,
    /// The known orders, comma-separated.
    pub known: String,
}

impl FromStr for Order {
    type Err = UnknownOrder;

    fn from_str(s: &str) -> Result<Self, UnknownOrder> {
        let s = s.trim();
        ORDERS
            .iter()
            .find(|(name, _)| *name == s)
            .map(|&(_, o)| o)
            .ok_or_else(|| UnknownOrder {
                given: partalloc_topology::echo(s),
                known: ORDERS.map(|(name, _)| name).join(", "),
            })
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = ORDERS
            .iter()
            .find(|(_, o)| o == self)
            .map_or("fcfs", |&(name, _)| name);
        f.write_str(name)
    }
}

/// w/r, with w/0 = 0 for w = 0 and ±∞ otherwise.
fn ratio(w: f64, r: f64) -> f64 {
    if r > 0.0 {
        w / r
    } else if w == 0.0 {
        0.0
    } else {
        w.signum() * f64::INFINITY
    }
}

/// a·n with a product with n = 0 equal to 0 (never ∞·0).
fn times_nodes(a: f64, n: f64) -> f64 {
    if n == 0.0 { 0.0 } else { a * n }
}

/// log₁₀ x, with log₁₀ 0.1 for a non-positive x (RLScheduler's guard).
fn log10_guarded(x: f64) -> f64 {
    if x > 0.0 { x.log10() } else { -1.0 }
}

impl Order {
    /// The score of `job` with run-time estimate `estimate` at time `now`:
    /// the lowest goes first (see the [module docs](self)). `Fcfs` scores
    /// by arrival time.
    #[must_use]
    pub fn score(&self, job: &Job, estimate: f64, now: f64) -> f64 {
        let n = job.shape.node_count() as f64;
        let r = estimate;
        let s = job.arrival;
        match self {
            Self::Fcfs => s,
            Self::Smallest => n,
            Self::Largest | Self::Widest => -n,
            Self::Shortest | Self::Sjf => r,
            Self::Longest => -r,
            Self::LeastWork => times_nodes(r, n),
            Self::MostWork => -times_nodes(r, n),
            Self::Wfp3 => -times_nodes(ratio(now - s, r).powf(3.0), n),
            Self::Wfp3Rlscheduler => -times_nodes(ratio(-1.0 - s, r).powf(3.0), n),
            Self::Unicep => {
                let w = now - s;
                let d = if n > 1.0 { n.log2() * r } else { 0.0 };
                if d > 0.0 {
                    -w / d
                } else if w > 0.0 {
                    f64::NEG_INFINITY
                } else {
                    0.0
                }
            }
            Self::UnicepRlscheduler => {
                // IEEE division as numpy does it: ±∞ for r = 0 (the
                // numerator is at most −1 + 10⁻¹⁵, never 0).
                let w = -1.0 - s;
                -(w + 1e-15) / ((n + 1e-15).log2() * r)
            }
            Self::F1 => times_nodes(log10_guarded(r), n) + 870.0 * log10_guarded(s),
        }
    }

    /// Whether the order is the queue's own submission order (no sorting).
    #[must_use]
    pub fn is_fcfs(&self) -> bool {
        *self == Self::Fcfs
    }

    /// Whether a job's score changes with the time of the pass.
    #[must_use]
    pub fn depends_on_time(&self) -> bool {
        matches!(self, Self::Wfp3 | Self::Unicep)
    }

    /// Reads the `order` parameter (default `fcfs`).
    pub(crate) fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        spec.parse_or("order", Self::Fcfs)
    }
}

/// The `order` parameter.
pub(crate) const ORDER: ParamInfo = ParamInfo {
    name: "order",
    default: "fcfs",
    doc: "queue order: fcfs, smallest, largest, widest, shortest, longest, sjf, least-work, most-work, \
          wfp3, unicep, f1, wfp3-rlscheduler or unicep-rlscheduler (docs/baselines.md#queue-orders)",
};

/// One ranked job: score, arrival, id, position in the ranked sequence.
#[derive(Debug, Clone, Copy)]
struct Key {
    score: f64,
    arrival: f64,
    id: u64,
    index: usize,
}

fn by_key(a: &Key, b: &Key) -> Ordering {
    a.score
        .total_cmp(&b.score)
        .then(a.arrival.total_cmp(&b.arrival))
        .then(a.id.cmp(&b.id))
}

/// Reused buffers for putting a queue in an order without allocating per
/// scheduling pass.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ranking {
    keys: Vec<Key>,
    jobs: Vec<Job>,
}

impl Ranking {
    /// Fills the ranking with `jobs` (position i = the i-th item) and sorts
    /// it by `order` at `now`; `fcfs` keeps the given sequence.
    pub(crate) fn rank<'j>(
        &mut self,
        order: Order,
        now: f64,
        estimates: &Estimates,
        jobs: impl Iterator<Item = &'j Job>,
    ) {
        self.keys.clear();
        self.keys.extend(jobs.enumerate().map(|(index, j)| Key {
            score: order.score(j, estimates.of(j), now),
            arrival: j.arrival,
            id: j.id,
            index,
        }));
        if !order.is_fcfs() {
            self.keys.sort_unstable_by(by_key);
        }
    }

    /// The positions of the last [`rank`](Self::rank)ed items, in order.
    pub(crate) fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.keys.iter().map(|k| k.index)
    }

    /// Puts `queue` in `order` at `now` (nothing to do for `fcfs`).
    pub(crate) fn sort(
        &mut self,
        queue: &mut VecDeque<Job>,
        order: Order,
        now: f64,
        estimates: &Estimates,
    ) {
        if order.is_fcfs() || queue.len() < 2 {
            return;
        }
        self.rank(order, now, estimates, queue.iter());
        self.jobs.clear();
        self.jobs.extend(self.keys.iter().map(|k| queue[k.index]));
        queue.clear();
        queue.extend(self.jobs.drain(..));
    }
}
