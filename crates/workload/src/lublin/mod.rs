//! The Lublin–Feitelson workload model of rigid parallel jobs: job sizes,
//! run times correlated with size, and arrivals with a daily cycle
//! (U. Lublin and D. G. Feitelson, "The workload on parallel
//! supercomputers: modeling the characteristics of rigid jobs", *J.
//! Parallel Distrib. Comput.* 63(11):1105–1122, 2003).
//!
//! Each job of a class (batch, interactive, or the typeless "whole"
//! workload) is drawn in three parts, with the parameters of
//! [`LublinParams`]:
//!
//! - **size**: serial with probability `serial`; otherwise
//!   x = log2(size) is two-stage uniform — U(`ulow`, `umed`) with
//!   probability `uprob`, else U(`umed`, `uhi`) — rounded to a whole
//!   number for a fraction `pow2` of all jobs (power-of-two sizes), and
//!   size = round(2^x);
//! - **run time**: ln(run time) is hyper-Gamma, Gamma(`a1`, `b1`) with
//!   probability p = `pa`·size + `pb` (clamped to \[0, 1\]) and
//!   Gamma(`a2`, `b2`) otherwise; with `pa` < 0 larger jobs run longer;
//!   draws above `maxlogrun` (e^12 s) are repeated;
//! - **arrivals**: ln(gap) is Gamma(`aarr`·`arar`, `barr`), draws above
//!   `maxloggap` (e^13 s) repeated, and the gaps elapse on a clock that
//!   runs, in each half hour of the day, at that half hour's weight in the
//!   daily cycle — the probability of the half hour under
//!   Gamma(`anum`, `bnum`) over half hours 11 to 58 of a day that starts at
//!   05:00 — normalized to 1 on average. Busy half hours thus get more
//!   arrivals in proportion to their weight
//!   ([`LublinParams::day_shares`]), and the long-run arrival rate is one
//!   per [`mean_gap`](LublinParams::mean_gap).
//!
//! The model of both classes ([`LublinKind::Mixed`], the C program's
//! default) runs the batch and the interactive arrival streams side by
//! side and merges them in time order.
//!
//! # Parameters and reference
//!
//! The published parameter sets (batch, interactive, whole) are those of
//! the model's C generator `m_lublin99.c`, distributed with the Parallel
//! Workloads Archive's models page
//! (<https://www.cs.huji.ac.il/labs/parallel/workload/models.html>); the
//! copy read for this module is
//! `trunk/externalmodels/lublin99-clusterworkload/m_lublin99.c` in the
//! public repository BackupTheBerlios/cgwg-svn. Its constants are written
//! for a machine of 128 nodes; on `nodes` nodes the size bounds follow
//! log2(nodes) — `uhi` = log2(nodes) (interactive: log2(nodes) − 1.5),
//! `umed` = `uhi` − 2 (batch), − 2.5 (interactive, whole) — which on 128
//! nodes gives the C program's values exactly. Every parameter can be
//! changed (fields of [`LublinParams`], or `key=value` in the text form
//! [`LublinSpec`]). `docs/lublin.md` tabulates them.
//!
//! The sampling steps are the C program's, in its order (per job: the
//! class's next gap, then the size, then the run time), with these
//! deliberate differences:
//!
//! - times are real numbers of seconds; the C program truncates run times
//!   and arrival times to whole seconds (and its arrival clock drops the
//!   fraction at every arrival);
//! - Gamma variates come from `rand_distr::Gamma` (Marsaglia–Tsang), not
//!   the C program's sums of exponentials and beta variates: the same
//!   distribution, other numbers;
//! - on a machine whose size is not a power of two, a power-of-two job
//!   whose rounded exponent exceeds log2(nodes) gets the largest power of
//!   two within the machine (the C program assumes a power-of-two
//!   machine); `uhi` above log2(nodes) is refused.
//!
//! The model has no user runtime estimates: [`LublinJob::swf_record`]
//! leaves SWF field 9 (requested time) unknown (−1), and schedulers that
//! need estimates (EASY backfilling) then use the run time itself.
//!
//! ```
//! use partalloc_workload::lublin::{LublinClass, LublinKind, LublinModel};
//! use partalloc_workload::{ChaCha8Rng, SeedableRng};
//!
//! // Batch and interactive jobs on a 128-node machine.
//! let model = LublinModel::preset(LublinKind::Mixed, 128)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(1);
//! let jobs: Vec<_> = model.jobs(&mut rng).take(1000).collect();
//! assert!(jobs.windows(2).all(|w| w[0].job.arrival <= w[1].job.arrival));
//! assert!(jobs.iter().all(|j| (1..=128).contains(&j.job.nodes())));
//! assert!(jobs.iter().any(|j| j.class == LublinClass::Interactive));
//! // In the long run a batch job every 3,517 s and an interactive one
//! // every 619 s: 6.84 jobs an hour.
//! assert!((model.arrival_rate() * 3600.0 - 6.84).abs() < 0.01);
//! # Ok::<(), partalloc_workload::lublin::LublinError>(())
//! ```

mod error;
mod gamma;
mod params;
mod text;

#[cfg(test)]
mod tests;

use core::fmt;

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Gamma};

use crate::swf::SwfRecord;
use crate::{Job, JobShape};

pub use error::LublinError;
pub use params::{
    DEFAULT_MAX_LOG_GAP, DEFAULT_MAX_LOG_RUN, LublinParams, MAX_LOG_CAP, MIN_ACCEPTANCE,
};
pub use text::LublinSpec;

use params::{BUCKET_SECONDS, BUCKETS, day_weights};

/// Seconds in a day.
const DAY_SECONDS: f64 = 86_400.0;

/// A class of jobs, with its own parameters and arrival stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LublinClass {
    /// Batch jobs (SWF queue 1).
    Batch,
    /// Interactive jobs (SWF queue 0).
    Interactive,
    /// The typeless model's jobs, fitted to the whole workload (SWF queue
    /// unknown, −1).
    Whole,
}

impl LublinClass {
    /// The name in the text form: `batch`, `interactive` or `whole`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Batch => "batch",
            Self::Interactive => "interactive",
            Self::Whole => "whole",
        }
    }

    /// The SWF queue number the class's jobs are written with: 1 for
    /// batch and 0 for interactive (SWF's queue 0 is interactive, as in
    /// `m_lublin99.c`), unknown for the typeless model (where the C
    /// program writes 0).
    #[must_use]
    pub const fn swf_queue(self) -> Option<u64> {
        match self {
            Self::Batch => Some(1),
            Self::Interactive => Some(0),
            Self::Whole => None,
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [Self::Batch, Self::Interactive, Self::Whole]
            .into_iter()
            .find(|c| c.name() == name)
    }
}

impl fmt::Display for LublinClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which classes a model draws: both batch and interactive (the C
/// program's default), one of them, or the typeless whole workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum LublinKind {
    /// `mixed`: batch and interactive jobs, each class with its own
    /// arrival stream, merged in time order.
    #[default]
    Mixed,
    /// `batch`: batch jobs only.
    Batch,
    /// `interactive`: interactive jobs only.
    Interactive,
    /// `whole`: one class with the parameters fitted to the whole
    /// workload, batch and interactive together.
    Whole,
}

impl LublinKind {
    /// The name in the text form.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Mixed => "mixed",
            Self::Batch => "batch",
            Self::Interactive => "interactive",
            Self::Whole => "whole",
        }
    }

    /// The classes drawn, batch first.
    #[must_use]
    pub const fn classes(self) -> &'static [LublinClass] {
        match self {
            Self::Mixed => &[LublinClass::Batch, LublinClass::Interactive],
            Self::Batch => &[LublinClass::Batch],
            Self::Interactive => &[LublinClass::Interactive],
            Self::Whole => &[LublinClass::Whole],
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [Self::Mixed, Self::Batch, Self::Interactive, Self::Whole]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

impl fmt::Display for LublinKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A generated job and its class.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LublinJob {
    /// The job: ids from 0, arrival and run time (`service`) in seconds,
    /// shape [`JobShape::Nodes`], no runtime estimate.
    pub job: Job,
    /// Its class.
    pub class: LublinClass,
}

impl LublinJob {
    /// The job as an SWF record, as `m_lublin99.c` writes it: job number
    /// id + 1, submit time, run time, processors (requested = allocated),
    /// status 1 (completed), queue by class
    /// ([`LublinClass::swf_queue`]); everything else unknown, the
    /// requested time (field 9) too, since the model has no estimates.
    #[must_use]
    pub fn swf_record(&self) -> SwfRecord {
        let mut r = SwfRecord::unknown(self.job.id + 1);
        r.submit_time = Some(self.job.arrival);
        r.run_time = Some(self.job.service);
        r.allocated_processors = Some(self.job.nodes());
        r.requested_processors = Some(self.job.nodes());
        r.status = Some(1);
        r.queue = self.class.swf_queue();
        r
    }
}

/// The daily cycle as a clock: in clock half hour b the model's
/// "operational" time runs at the half hour's weight w_b (mean 1 over the
/// day), so a day of real time is a day of operational time.
#[derive(Debug, Clone)]
struct DayClock {
    weight: [f64; BUCKETS],
    /// Operational seconds from midnight to the start of each half hour;
    /// the last entry is a whole day.
    start: [f64; BUCKETS + 1],
}

impl DayClock {
    fn new(weight: [f64; BUCKETS]) -> Self {
        let mut start = [0.0; BUCKETS + 1];
        for b in 0..BUCKETS {
            start[b + 1] = start[b] + weight[b] * BUCKET_SECONDS;
        }
        start[BUCKETS] = DAY_SECONDS;
        Self { weight, start }
    }

    /// The operational time at real time `t` ≥ 0.
    fn operational(&self, t: f64) -> f64 {
        let day = (t / DAY_SECONDS).floor();
        let s = t - day * DAY_SECONDS;
        let b = ((s / BUCKET_SECONDS) as usize).min(BUCKETS - 1);
        let into = s - BUCKET_SECONDS * b as f64;
        day * DAY_SECONDS + self.start[b] + self.weight[b] * into
    }

    /// The real time at operational time `tau` ≥ 0 (the inverse of
    /// [`operational`](Self::operational); half hours of weight 0 pass
    /// with no operational time, so no arrival falls in them).
    fn real(&self, tau: f64) -> f64 {
        let day = (tau / DAY_SECONDS).floor();
        let r = tau - day * DAY_SECONDS;
        // The last half hour starting at or before r: it has weight > 0.
        let b = self
            .start
            .partition_point(|&s| s <= r)
            .saturating_sub(1)
            .min(BUCKETS - 1);
        let w = self.weight[b];
        let into = if w > 0.0 {
            ((r - self.start[b]) / w).clamp(0.0, BUCKET_SECONDS)
        } else {
            0.0
        };
        day * DAY_SECONDS + BUCKET_SECONDS * b as f64 + into
    }
}

/// One class's checked parameters, ready to draw.
#[derive(Debug, Clone)]
struct Stream {
    class: LublinClass,
    params: LublinParams,
    nodes: u32,
    /// serial + pow2: u at most this (and above serial) rounds x.
    pow2_until: f64,
    /// log2 of the largest power of two within the machine.
    max_exp: f64,
    run1: Gamma<f64>,
    run2: Gamma<f64>,
    gap: Gamma<f64>,
    clock: DayClock,
}

impl Stream {
    fn new(class: LublinClass, params: LublinParams, nodes: u32) -> Result<Self, LublinError> {
        params.check(nodes)?;
        let gamma = |name, shape, scale| {
            Gamma::new(shape, scale).map_err(|_| LublinError::NotPositive { name, value: shape })
        };
        Ok(Self {
            class,
            params,
            nodes,
            pow2_until: params.serial + params.pow2,
            max_exp: f64::from(31 - nodes.leading_zeros()),
            run1: gamma("a1", params.a1, params.b1)?,
            run2: gamma("a2", params.a2, params.b2)?,
            gap: gamma("aarr", params.gap_shape(), params.barr)?,
            clock: DayClock::new(day_weights(params.anum, params.bnum)?),
        })
    }

    /// A job size: 1 with probability `serial`, else round(2^x) with x
    /// two-stage uniform, rounded first for power-of-two jobs.
    fn size<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let p = &self.params;
        let u: f64 = rng.random();
        if u <= p.serial {
            return 1;
        }
        let stage: f64 = rng.random();
        let v: f64 = rng.random();
        let (lo, hi) = if stage <= p.uprob {
            (p.ulow, p.umed)
        } else {
            (p.umed, p.uhi)
        };
        let mut x = v.mul_add(hi - lo, lo);
        if u <= self.pow2_until {
            x = (x + 0.5).floor().min(self.max_exp);
        }
        // x ≤ uhi ≤ log2(nodes) (or ≤ max_exp): round(2^x) ≤ nodes.
        ((x.exp2() + 0.5).floor() as u32).clamp(1, self.nodes)
    }

    /// A run time for a job of `size` nodes: e^X, X hyper-Gamma and at
    /// most the cap.
    fn run_time<R: Rng + ?Sized>(&self, size: u32, rng: &mut R) -> f64 {
        let p = self.params.first_gamma_probability(size);
        loop {
            let u: f64 = rng.random();
            let x = if u <= p {
                self.run1.sample(rng)
            } else {
                self.run2.sample(rng)
            };
            if x <= self.params.max_log_run {
                return x.exp();
            }
        }
    }

    /// The next arrival after operational time `tau`: its operational and
    /// real times (real time counted from the model's start).
    fn advance<R: Rng + ?Sized>(&self, tau: f64, start: f64, rng: &mut R) -> Pending {
        let log_gap = loop {
            let x = self.gap.sample(rng);
            if x <= self.params.max_log_gap {
                break x;
            }
        };
        let tau = tau + log_gap.exp();
        Pending {
            tau,
            at: self.clock.real(tau) - start,
        }
    }
}

/// A class's next arrival.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Operational time.
    tau: f64,
    /// Real time from the model's start.
    at: f64,
}

/// The Lublin–Feitelson model on a machine: one or two classes of jobs,
/// checked and ready to draw.
#[derive(Debug, Clone)]
pub struct LublinModel {
    nodes: u32,
    start_hour: f64,
    streams: Vec<Stream>,
}

impl LublinModel {
    /// Jobs of one class with parameters `params` on `nodes` nodes.
    ///
    /// # Errors
    /// As [`LublinParams::check`].
    pub fn single(
        nodes: u32,
        class: LublinClass,
        params: LublinParams,
    ) -> Result<Self, LublinError> {
        Ok(Self {
            nodes,
            start_hour: 0.0,
            streams: vec![Stream::new(class, params, nodes)?],
        })
    }

    /// Batch and interactive jobs, each with its parameters, on `nodes`
    /// nodes.
    ///
    /// # Errors
    /// [`LublinError::Class`] naming the class whose parameters
    /// [`LublinParams::check`] refuses.
    pub fn mixed(
        nodes: u32,
        batch: LublinParams,
        interactive: LublinParams,
    ) -> Result<Self, LublinError> {
        let stream = |class, params| {
            Stream::new(class, params, nodes).map_err(|e| match e {
                LublinError::NoNodes => e,
                other => LublinError::Class {
                    class,
                    source: Box::new(other),
                },
            })
        };
        Ok(Self {
            nodes,
            start_hour: 0.0,
            streams: vec![
                stream(LublinClass::Batch, batch)?,
                stream(LublinClass::Interactive, interactive)?,
            ],
        })
    }

    /// The published parameters of `kind` on `nodes` nodes
    /// ([`LublinParams::preset`]).
    ///
    /// # Errors
    /// [`LublinError::NoNodes`] if `nodes` is 0.
    pub fn preset(kind: LublinKind, nodes: u32) -> Result<Self, LublinError> {
        match kind {
            LublinKind::Mixed => Self::mixed(
                nodes,
                LublinParams::preset(LublinClass::Batch, nodes),
                LublinParams::preset(LublinClass::Interactive, nodes),
            ),
            LublinKind::Batch => Self::single_preset(LublinClass::Batch, nodes),
            LublinKind::Interactive => Self::single_preset(LublinClass::Interactive, nodes),
            LublinKind::Whole => Self::single_preset(LublinClass::Whole, nodes),
        }
    }

    fn single_preset(class: LublinClass, nodes: u32) -> Result<Self, LublinError> {
        Self::single(nodes, class, LublinParams::preset(class, nodes))
    }

    /// The model with time 0 at `hour` o'clock (default 0, midnight, as
    /// the C program's `START`); the daily cycle is read from there.
    ///
    /// # Errors
    /// [`LublinError::StartHour`] unless 0 ≤ `hour` < 24.
    pub fn with_start_hour(mut self, hour: f64) -> Result<Self, LublinError> {
        if !(0.0..24.0).contains(&hour) {
            return Err(LublinError::StartHour { value: hour });
        }
        self.start_hour = hour;
        Ok(self)
    }

    /// The machine's nodes: the largest job.
    #[must_use]
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// The hour of the day at time 0.
    #[must_use]
    pub fn start_hour(&self) -> f64 {
        self.start_hour
    }

    /// The classes drawn and their parameters, batch first.
    pub fn classes(&self) -> impl Iterator<Item = (LublinClass, &LublinParams)> {
        self.streams.iter().map(|s| (s.class, &s.params))
    }

    /// The long-run arrival rate in jobs per second: Σ 1/mean gap over the
    /// classes.
    #[must_use]
    pub fn arrival_rate(&self) -> f64 {
        self.streams.iter().map(|s| 1.0 / s.params.mean_gap()).sum()
    }

    /// The endless stream of jobs drawn from `rng`, in arrival order (bound
    /// it with `take(n)`). Creating it draws each class's first gap, batch
    /// first; then each job draws its class's next gap, its size and its
    /// run time, in that order (part of the value-stability contract).
    /// When the classes' next arrivals tie, the interactive job comes
    /// first, as in the C program.
    pub fn jobs<'a, R: Rng + ?Sized>(&'a self, rng: &'a mut R) -> LublinJobs<'a, R> {
        let start = self.start_hour * 3600.0;
        let mut pending = [Pending { tau: 0.0, at: 0.0 }; 2];
        for (p, s) in pending.iter_mut().zip(&self.streams) {
            *p = s.advance(s.clock.operational(start), start, rng);
        }
        LublinJobs {
            model: self,
            rng,
            start,
            pending,
            next_id: 0,
        }
    }
}

/// The jobs of a [`LublinModel`], in arrival order; see
/// [`LublinModel::jobs`].
#[derive(Debug)]
pub struct LublinJobs<'a, R: ?Sized> {
    model: &'a LublinModel,
    rng: &'a mut R,
    /// Real seconds from midnight to time 0.
    start: f64,
    pending: [Pending; 2],
    next_id: u64,
}

impl<R: Rng + ?Sized> Iterator for LublinJobs<'_, R> {
    type Item = LublinJob;

    fn next(&mut self) -> Option<LublinJob> {
        let streams = &self.model.streams;
        // Batch (stream 0) only when strictly earlier.
        let i = usize::from(streams.len() == 2 && self.pending[0].at >= self.pending[1].at);
        let stream = streams.get(i)?;
        let at = self.pending[i].at;
        self.pending[i] = stream.advance(self.pending[i].tau, self.start, self.rng);
        let size = stream.size(self.rng);
        let run = stream.run_time(size, self.rng);
        let job = Job::new(self.next_id, at, JobShape::Nodes { count: size }, run);
        self.next_id += 1;
        Some(LublinJob {
            job,
            class: stream.class,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}
