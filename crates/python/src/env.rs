//! The core of `partalloc.gym.SchedulingEnv`: the stepped run loop, the
//! observation and mask encoding and the rewards, all in Rust so that a
//! step costs one call from Python.

use std::sync::Arc;

use partalloc_allocators::registry::AllocatorSpec;
use partalloc_allocators::{AllocError, Request};
use partalloc_schedulers::RequestMapping;
use partalloc_simkit::{JobRecord, SlowdownBound, Stepper, replication_rng};
use partalloc_topology::{NodeSet, Topology as RustTopology};
use partalloc_workload::Job;
use partalloc_workload::ShapeMapping;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::alloc::topology_arg;
use crate::custom::{Callbacks, allocator_spec, job_dict};
use crate::errors::{guard, value_error};
use crate::placement::{PLACEMENT_FEATURES, Placements};
use crate::sim::{mapping_of, read_trace};
use crate::sim_generated::Generated;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EnvCore>()?;
    m.add("JOB_FEATURES", JOB_FEATURES)?;
    m.add("MACHINE_FEATURES", MACHINE_FEATURES)?;
    Ok(())
}

/// The largest window: far beyond what an agent reads, and small enough
/// that the observation's size is checked before it is allocated.
const MAX_WINDOW: usize = 1 << 16;

/// The most jobs of a generated episode: they are drawn and held at
/// reset.
const MAX_EPISODE_JOBS: usize = 1 << 20;

/// The largest machine whose partitions `topology_obs=True` and
/// `placements=P` list: every listed partition keeps a bit set of the
/// machine, so the machine is checked before any is listed.
pub(crate) const MAX_LISTED_NODES: usize = 1 << 16;

/// The most memory the listed partitions' bit sets may take (128 MiB).
pub(crate) const MAX_LISTING_BYTES: usize = 1 << 27;

/// Refuses `what` (`topology_obs=True`, `placements=P`) on a machine above
/// [`MAX_LISTED_NODES`].
fn check_listed_machine(what: &str, topology: &RustTopology) -> PyResult<()> {
    let n = topology.num_nodes();
    if n > MAX_LISTED_NODES {
        return Err(PyValueError::new_err(format!(
            "{what} lists the strategy's partitions as bit sets of the machine: {topology} has {n} nodes, at most {MAX_LISTED_NODES} are accepted"
        )));
    }
    Ok(())
}

/// The bytes of `count` bit sets of an `n`-node machine, added to `used`;
/// an error for `what` past [`MAX_LISTING_BYTES`].
pub(crate) fn charge_listing(what: &str, used: &mut usize, count: usize, n: usize) -> PyResult<()> {
    let bytes = count.saturating_mul(n.div_ceil(64) * 8);
    *used = used.saturating_add(bytes);
    if *used > MAX_LISTING_BYTES {
        return Err(PyValueError::new_err(format!(
            "{what}: the strategy's partitions take more than {} MiB as bit sets of the machine; use a smaller machine",
            MAX_LISTING_BYTES >> 20
        )));
    }
    Ok(())
}

/// Per window slot: present, nodes/N, requested time/scale, wait/scale,
/// placeable now.
const JOB_FEATURES: usize = 5;
/// Free nodes/N, largest placeable request/N, fragmentation
/// (1 − largest/free), waiting jobs/window.
const MACHINE_FEATURES: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Reward {
    Slowdown,
    Wait,
    Utilization,
}

/// What happens around the agent's choice (`backfill=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backfill {
    /// The chosen job starts; a job that cannot start now is masked.
    None,
    /// The chosen job starts if it can; otherwise it is reserved as EASY
    /// reserves a blocked head, the other waiting jobs are backfilled
    /// around it ([`Stepper::backfill`]) and the run moves to the next
    /// event.
    Easy,
}

type Run = Stepper<std::vec::IntoIter<Job>>;

/// The environment's state machine (see `partalloc.gym`).
// One environment is stepped by one thread; `unsendable` keeps it there.
#[pyclass(module = "partalloc._native", unsendable)]
#[derive(Debug)]
pub(crate) struct EnvCore {
    topology: RustTopology,
    /// The allocation strategy, parsed once; each episode builds a fresh
    /// instance.
    strategy: AllocatorSpec,
    /// What a Python strategy raised, raised as itself.
    callbacks: Callbacks,
    rotate: bool,
    /// The trace's jobs (shared by a vector environment's copies), or a
    /// sample of the generated workload.
    jobs: Arc<[Job]>,
    /// Draws each episode's jobs instead of slicing `jobs`.
    generated: Option<Arc<Generated>>,
    episode_jobs: usize,
    window: usize,
    backfill: Backfill,
    reward: Reward,
    per_step: bool,
    bound: SlowdownBound,
    time_scale: f64,
    /// The two time features are clipped at this (a bound no trace value
    /// reaches; generated times have none).
    time_cap: f64,
    /// Power-of-two node counts as requests, largest first, to measure the
    /// largest placeable request.
    ladder: Vec<(u64, Request)>,
    /// With `topology_obs`: per ladder size, the node sets of the
    /// partitions of that size the strategy can grant on the empty machine
    /// (shared by a vector environment's copies); empty without.
    levels: Arc<[Vec<NodeSet>]>,
    /// With `placements=P`: the agent chooses where a job starts, among
    /// the first `P` free partitions of its request.
    placements: Option<Placements>,
    run: Option<Run>,
    tally: Tally,
    largest: Option<u64>,
    obs: Vec<f32>,
    mask: Vec<u8>,
}

/// An episode's bookkeeping.
#[derive(Debug, Default)]
struct Tally {
    start_time: f64,
    /// The episode's work, node-seconds.
    work: f64,
    /// Completions taken into account.
    seen: usize,
    last_time: f64,
    last_busy: f64,
    sum_bsld: f64,
    sum_wait: f64,
    decisions: u64,
}

/// SplitMix64: a start offset from a seed without a generator dependency.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The episode's run (a field of its own, so that the other fields can be
/// borrowed beside it).
fn started(run: &mut Option<Run>) -> PyResult<&mut Run> {
    run.as_mut()
        .ok_or_else(|| PyValueError::new_err("call reset() before step()"))
}

impl EnvCore {
    /// Moves on until a decision is needed: at least one window job can
    /// start (with backfilling: at least one waiting job can, as the
    /// choice of the reserved job decides which of them backfill).
    fn settle(&mut self) -> PyResult<()> {
        let k = match self.backfill {
            Backfill::None => self.window,
            Backfill::Easy => usize::MAX,
        };
        let topology = &self.topology;
        let mut placements = self.placements.as_mut();
        let run = started(&mut self.run)?;
        loop {
            if run.is_done() {
                return Ok(());
            }
            let n = run.waiting_len().min(k);
            let mut any = false;
            if let Some(places) = placements.as_deref_mut() {
                // A decision is needed when some window job has a free
                // candidate partition.
                let busy = run.allocator().busy_nodes();
                for i in 0..n {
                    let request = run.waiting_request(i);
                    if places.choose(i, request, run.allocator(), topology, &busy)? > 0 {
                        any = true;
                        break;
                    }
                }
            } else {
                for i in 0..n {
                    if run.can_start(i).map_err(value_error)? {
                        any = true;
                        break;
                    }
                }
            }
            if any {
                return Ok(());
            }
            if !run.advance().map_err(value_error)? {
                let id = run.waiting_job(0).map_or(0, |j| j.id);
                return Err(PyValueError::new_err(format!(
                    "job {id} can never be started on the empty machine"
                )));
            }
        }
    }

    fn largest_placeable(&mut self) -> PyResult<u64> {
        if let Some(l) = self.largest {
            return Ok(l);
        }
        let Some(run) = self.run.as_mut() else {
            return Ok(0);
        };
        let free = run.allocator().free_nodes() as u64;
        let mut best = 0;
        for (n, req) in &self.ladder {
            if *n <= free && run.probe(req).map_err(value_error)? {
                best = *n;
                break;
            }
        }
        self.largest = Some(best);
        Ok(best)
    }

    /// Fills `obs` and `mask` for the current state.
    fn encode(&mut self) -> PyResult<()> {
        let k = self.window;
        let nodes = self.topology.num_nodes() as f32;
        let (scale, cap) = (self.time_scale, self.time_cap);
        let backfill = self.backfill;
        let largest = self.largest_placeable()? as f32;
        let levels = Arc::clone(&self.levels);
        let mut obs = std::mem::take(&mut self.obs);
        let mut mask = std::mem::take(&mut self.mask);
        let topology = &self.topology;
        let mut placements = self.placements.as_mut();
        let run = started(&mut self.run)?;
        let now = run.now();
        let n = run.waiting_len().min(k);
        let waiting = run.waiting_len();
        let has_events = run.has_events();
        let free = run.allocator().free_nodes() as f32;
        obs.fill(0.0);
        mask.fill(0);
        let busy =
            (placements.is_some() || !levels.is_empty()).then(|| run.allocator().busy_nodes());
        // Where the candidates' features start: after the machine's and
        // the levels'.
        let placed_at = k * JOB_FEATURES + MACHINE_FEATURES + levels.len();
        for i in 0..n {
            let placeable = run.can_start(i).map_err(value_error)?;
            let Some(job) = run.waiting_job(i) else { break };
            let f = &mut obs[i * JOB_FEATURES..(i + 1) * JOB_FEATURES];
            f[0] = 1.0;
            f[1] = job.nodes() as f32 / nodes;
            f[2] = (job.estimate.unwrap_or(job.service) / scale).min(cap) as f32;
            f[3] = ((now - job.arrival) / scale).min(cap) as f32;
            f[4] = f32::from(u8::from(placeable));
            if let (Some(places), Some(busy)) = (placements.as_deref_mut(), busy.as_ref()) {
                let p = places.per_slot();
                let request = run.waiting_request(i);
                places.choose(i, request, run.allocator(), topology, busy)?;
                let at = placed_at + i * p * PLACEMENT_FEATURES;
                places.encode(
                    i,
                    busy,
                    &mut obs[at..at + p * PLACEMENT_FEATURES],
                    &mut mask[i * p..(i + 1) * p],
                );
            } else {
                // With backfilling a job that cannot start is a valid
                // choice: it is reserved and the others backfill around it.
                mask[i] = u8::from(placeable || backfill == Backfill::Easy);
            }
        }
        let wait = mask.len() - 1;
        mask[wait] = u8::from(has_events);
        let m = &mut obs[k * JOB_FEATURES..];
        m[0] = free / nodes;
        m[1] = largest / nodes;
        m[2] = if free > 0.0 {
            1.0 - largest / free
        } else {
            0.0
        };
        m[3] = waiting as f32 / k as f32;
        if let (false, Some(busy)) = (levels.is_empty(), busy.as_ref()) {
            for (v, parts) in m[MACHINE_FEATURES..].iter_mut().zip(levels.iter()) {
                let free = parts.iter().filter(|p| p.is_disjoint(busy)).count();
                *v = if parts.is_empty() {
                    0.0
                } else {
                    free as f32 / parts.len() as f32
                };
            }
        }
        self.obs = obs;
        self.mask = mask;
        Ok(())
    }

    /// Takes in the jobs completed since the last call; returns the per-step
    /// reward for them.
    fn account(&mut self) -> f64 {
        let Some(run) = self.run.as_ref() else {
            return 0.0;
        };
        let new = &run.completions()[self.tally.seen..];
        let (mut bsld, mut wait) = (0.0, 0.0);
        for c in new {
            bsld += c.bounded_slowdown_under(self.bound);
            wait += c.start - c.arrival;
        }
        self.tally.seen = run.completions().len();
        self.tally.sum_bsld += bsld;
        self.tally.sum_wait += wait;
        let n = self.episode_len() as f64;
        let nodes = self.topology.num_nodes() as f64;
        let (dt, dbusy) = (
            run.now() - self.tally.last_time,
            run.busy_area() - self.tally.last_busy,
        );
        self.tally.last_time = run.now();
        self.tally.last_busy = run.busy_area();
        match self.reward {
            Reward::Slowdown => -bsld / n,
            Reward::Wait => -wait / n,
            Reward::Utilization if self.tally.work > 0.0 => -(nodes * dt - dbusy) / self.tally.work,
            Reward::Utilization => 0.0,
        }
    }

    fn episode_len(&self) -> usize {
        if self.generated.is_some() {
            return self.episode_jobs;
        }
        self.episode_jobs.min(self.jobs.len()).max(1)
    }

    /// The jobs of the episode for `seed`.
    fn episode(&self, seed: Option<u64>) -> Vec<Job> {
        let len = self.episode_len();
        if let Some(g) = &self.generated {
            let mut rng = replication_rng(seed.unwrap_or(0), 0);
            return g.workload().jobs(&mut rng).take(len).collect();
        }
        let room = self.jobs.len() - len;
        let offset = match seed {
            Some(s) if room > 0 => (mix(s) % (room as u64 + 1)) as usize,
            _ => 0,
        };
        self.jobs[offset..offset + len].to_vec()
    }

    fn utilization(&self) -> f64 {
        let Some(run) = self.run.as_ref() else {
            return 0.0;
        };
        let span = run.now() - self.tally.start_time;
        if span > 0.0 {
            run.busy_area() / (self.topology.num_nodes() as f64 * span)
        } else {
            0.0
        }
    }

    fn episode_reward(&self) -> f64 {
        let n = self.tally.seen.max(1) as f64;
        match self.reward {
            Reward::Slowdown => -self.tally.sum_bsld / n,
            Reward::Wait => -self.tally.sum_wait / n,
            Reward::Utilization => self.utilization(),
        }
    }

    /// Starts an episode (see `reset`); the observation and mask are in
    /// [`obs`](Self::obs) and [`mask`](Self::mask).
    pub(crate) fn reset_episode(&mut self, seed: Option<u64>) -> PyResult<()> {
        guard(|| {
            let slice = self.episode(seed);
            self.tally.start_time = slice.first().map_or(0.0, |j| j.arrival);
            self.tally.work = slice.iter().map(|j| j.service * j.nodes() as f64).sum();
            let alloc = self.strategy.build(&self.topology).map_err(value_error)?;
            let mut run = Stepper::new(alloc, slice)
                .map_err(value_error)?
                .with_mapping(RequestMapping {
                    rotate: self.rotate,
                });
            run.advance().map_err(value_error)?;
            self.tally.last_time = run.now();
            self.tally.last_busy = 0.0;
            self.run = Some(run);
            self.tally.seen = 0;
            self.tally.sum_bsld = 0.0;
            self.tally.sum_wait = 0.0;
            self.tally.decisions = 0;
            self.largest = None;
            self.settle()?;
            self.largest = None;
            self.account();
            self.encode()
        })
        .map_err(|e| self.callbacks.or(e))
    }

    /// Applies `action` (see `step`); returns the reward and whether the
    /// episode ended.
    pub(crate) fn step_action(&mut self, action: usize) -> PyResult<(f64, bool)> {
        let (reward, done) = guard(|| {
            let k = self.window;
            let backfill = self.backfill;
            let wait = self.mask.len() - 1;
            let valid = self.mask.get(action).copied() == Some(1);
            let wait_ok = self.mask.get(wait).copied() == Some(1);
            let mask = &self.mask;
            let places = self.placements.as_ref();
            let run = started(&mut self.run)?;
            if run.is_done() {
                return Err(PyValueError::new_err(
                    "the episode is over; call reset() to start another",
                ));
            }
            if let Some(places) = places {
                // Action slot × P + c: the job in that slot, on its c-th
                // free candidate (as the mask says, from the last encoding).
                let p = places.per_slot();
                let pick = if valid && action < wait {
                    Some(action)
                } else if valid || wait_ok {
                    None
                } else {
                    // Waiting is masked too: the first valid choice.
                    mask[..wait].iter().position(|&m| m == 1)
                };
                let at = pick.and_then(|a| places.partition(a / p, a % p).map(|at| (a / p, at)));
                let started = match at {
                    Some((slot, at)) => run.start_at(slot, at).map_err(value_error)?,
                    None => false,
                };
                if !started {
                    run.advance().map_err(value_error)?;
                }
            } else if valid && action < k {
                if !run.start(action).map_err(value_error)? && backfill == Backfill::Easy {
                    // Only with backfilling is a job that cannot start
                    // valid: reserve it, backfill, move on.
                    run.backfill(action).map_err(value_error)?;
                    run.advance().map_err(value_error)?;
                }
            } else if valid || wait_ok {
                run.advance().map_err(value_error)?;
            } else {
                let n = run.waiting_len().min(k);
                for i in 0..n {
                    if run.can_start(i).map_err(value_error)? {
                        run.start(i).map_err(value_error)?;
                        break;
                    }
                }
            }
            self.tally.decisions += 1;
            self.largest = None;
            self.settle()?;
            let done = self.run.as_ref().is_some_and(Stepper::is_done);
            let step_reward = self.account();
            let reward = if self.per_step {
                step_reward
            } else if done {
                self.episode_reward()
            } else {
                0.0
            };
            self.encode()?;
            Ok((reward, done))
        })
        .map_err(|e| self.callbacks.or(e))?;
        Ok((reward, done))
    }

    /// Another environment with the same settings, before its first
    /// reset: the vector environment's copies, made without reading the
    /// trace again.
    pub(crate) fn replica(&self) -> Self {
        Self {
            topology: self.topology.clone(),
            strategy: self.strategy.clone(),
            callbacks: self.callbacks.clone(),
            rotate: self.rotate,
            jobs: Arc::clone(&self.jobs),
            generated: self.generated.clone(),
            episode_jobs: self.episode_jobs,
            window: self.window,
            backfill: self.backfill,
            reward: self.reward,
            per_step: self.per_step,
            bound: self.bound,
            time_scale: self.time_scale,
            time_cap: self.time_cap,
            ladder: self.ladder.clone(),
            levels: Arc::clone(&self.levels),
            placements: self.placements.clone(),
            run: None,
            tally: Tally::default(),
            largest: None,
            obs: vec![0.0; self.obs.len()],
            mask: vec![0; self.mask.len()],
        }
    }

    /// The observation of the current state.
    pub(crate) fn obs(&self) -> &[f32] {
        &self.obs
    }

    /// The action mask of the current state (1: valid).
    pub(crate) fn mask(&self) -> &[u8] {
        &self.mask
    }
}

#[pymethods]
impl EnvCore {
    #[new]
    #[pyo3(signature = (topology, allocator, *, trace=None, workload=None, window=16, backfill="none", reward="slowdown", per_step=false, episode_jobs=None, mapping="shapes", rotate=false, bound=10.0, lenient=false, topology_obs=false, placements=None))]
    #[expect(
        clippy::too_many_arguments,
        reason = "mirrors the keyword arguments of the Python API"
    )]
    pub(crate) fn new(
        topology: &Bound<'_, PyAny>,
        allocator: &Bound<'_, PyAny>,
        trace: Option<std::path::PathBuf>,
        workload: Option<&Bound<'_, PyDict>>,
        window: usize,
        backfill: &str,
        reward: &str,
        per_step: bool,
        episode_jobs: Option<usize>,
        mapping: &str,
        rotate: bool,
        bound: f64,
        lenient: bool,
        topology_obs: bool,
        placements: Option<usize>,
    ) -> PyResult<Self> {
        let topology = topology_arg(topology)?;
        // Parsed once; a registry name is built once so that a bad
        // strategy fails here.
        let callbacks = Callbacks::default();
        let strategy = allocator_spec(allocator, &topology, &callbacks)?;
        if window == 0 {
            return Err(PyValueError::new_err("window must be at least 1"));
        }
        if window > MAX_WINDOW {
            return Err(PyValueError::new_err(format!(
                "window {window} is more than {MAX_WINDOW} jobs: an agent sees no further"
            )));
        }
        // The run loop's own bound and check (`simulate(slowdown_bound=…)`).
        let bound =
            SlowdownBound::new(bound).map_err(|e| PyValueError::new_err(format!("bound: {e}")))?;
        let backfill = match backfill {
            "none" => Backfill::None,
            "easy" => Backfill::Easy,
            other => {
                return Err(PyValueError::new_err(format!(
                    "backfill {other:?}: use \"none\" (the chosen job starts) or \"easy\" (a chosen job that cannot start is reserved and others backfill around it)"
                )));
            }
        };
        let reward = match reward {
            "slowdown" => Reward::Slowdown,
            "wait" => Reward::Wait,
            "utilization" => Reward::Utilization,
            other => {
                return Err(PyValueError::new_err(format!(
                    "reward {other:?}: use \"slowdown\" (negative mean bounded slowdown), \"wait\" (negative mean wait) or \"utilization\""
                )));
            }
        };
        let map = mapping_of(mapping, &topology)?;
        // The time features' bound: for a trace, the longest any job can
        // wait (every episode's time stays below its last arrival plus all
        // its service; a slice of the trace, below the whole trace's) and
        // the longest requested time; for a generated workload, whose times
        // are unbounded, the same span for an episode of mean gaps and mean
        // service, past which values are clipped.
        let (jobs, generated, episode_jobs, span) = match (trace, workload) {
            (Some(trace), None) => {
                let (jobs, _) = read_trace(&trace, map, lenient)?;
                if jobs.is_empty() {
                    return Err(PyValueError::new_err(format!(
                        "{}: the trace has no usable job",
                        trace.display()
                    )));
                }
                let n = match episode_jobs {
                    Some(0) => {
                        return Err(PyValueError::new_err("episode_jobs must be at least 1"));
                    }
                    Some(n) => n.min(jobs.len()),
                    None => jobs.len(),
                };
                let first = jobs.first().map_or(0.0, |j| j.arrival);
                let last = jobs.last().map_or(0.0, |j| j.arrival);
                let work: f64 = jobs.iter().map(|j| j.service).sum();
                let span = last - first + work;
                (jobs, None, n, span)
            }
            (None, Some(w)) => {
                let n = episode_jobs.unwrap_or(1000);
                if n == 0 {
                    return Err(PyValueError::new_err("episode_jobs must be at least 1"));
                }
                if n > MAX_EPISODE_JOBS {
                    return Err(PyValueError::new_err(format!(
                        "episode_jobs={n}: a generated episode holds at most {MAX_EPISODE_JOBS} jobs, drawn at reset; use fewer"
                    )));
                }
                let g = Generated::parse(Some(w), &topology, Some(n as u64), 0)?;
                // A sample fixes the time scale of the observation.
                let mut rng = replication_rng(0, 0);
                let sample: Vec<Job> = g.workload().jobs(&mut rng).take(1000).collect();
                let mean_service =
                    sample.iter().map(|j| j.service).sum::<f64>() / sample.len().max(1) as f64;
                let span = n as f64 * (g.workload().arrivals().mean_gap() + mean_service);
                (sample, Some(Arc::new(g)), n, span)
            }
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "give either trace= (replay a file) or workload= (generate jobs), not both",
                ));
            }
            (None, None) => {
                return Err(PyValueError::new_err(
                    "give trace= (a Standard Workload Format file to replay) or workload= (a dict of workload options such as {\"load\": 0.5})",
                ));
            }
        };
        let mut services: Vec<f64> = jobs
            .iter()
            .map(|j| j.estimate.unwrap_or(j.service))
            .collect();
        services.sort_by(f64::total_cmp);
        let time_scale = services
            .get(services.len() / 2)
            .copied()
            .filter(|&x| x > 0.0)
            .unwrap_or(1.0);
        let requested = services.last().copied().unwrap_or(0.0);
        // A relative margin covers the rounding of times summed along a run.
        let time_cap = (span.max(requested) / time_scale * (1.0 + 1e-6)).max(1.0);
        if !time_cap.is_finite() {
            return Err(PyValueError::new_err(
                "the workload's times are too large to observe: scale them down",
            ));
        }
        let shapes = ShapeMapping::for_topology(&topology);
        let req_map = RequestMapping { rotate };
        let mut ladder = Vec::new();
        let total = topology.num_nodes() as u64;
        let mut n = total.next_power_of_two();
        while n >= 1 {
            if n <= total
                && let Ok(shape) = if mapping == "nodes" {
                    map.shape_for(n)
                } else {
                    shapes.shape_for(n)
                }
            {
                ladder.push((n, req_map.request(&shape)));
            }
            n /= 2;
        }
        if topology_obs {
            check_listed_machine("topology_obs=True", &topology)?;
        }
        if placements.is_some() {
            check_listed_machine("placements", &topology)?;
        }
        let levels = if topology_obs {
            partition_levels(&strategy, &topology, &ladder)?
        } else {
            Vec::new()
        };
        let placements = match placements {
            None => None,
            Some(_) if backfill == Backfill::Easy => {
                return Err(PyValueError::new_err(
                    "placements choose where the chosen job starts, and backfilled jobs would be placed by the strategy: use backfill=\"none\" with placements",
                ));
            }
            Some(p) => {
                let Some((_, smallest)) = ladder.last() else {
                    return Err(PyValueError::new_err(
                        "placements: the machine serves no one-node request",
                    ));
                };
                let mut alloc = strategy.build(&topology).map_err(value_error)?;
                Some(Placements::new(
                    p,
                    window,
                    &topology,
                    alloc.as_mut(),
                    smallest,
                )?)
            }
        };
        let choices = placements.as_ref().map_or(1, Placements::per_slot);
        let placement_features = placements
            .as_ref()
            .map_or(0, |p| window * p.per_slot() * PLACEMENT_FEATURES);
        let obs_len = window * JOB_FEATURES + MACHINE_FEATURES + levels.len() + placement_features;
        Ok(Self {
            topology,
            strategy,
            callbacks,
            rotate,
            jobs: jobs.into(),
            generated,
            episode_jobs,
            window,
            backfill,
            reward,
            per_step,
            bound,
            time_scale,
            time_cap,
            ladder,
            levels: levels.into(),
            placements,
            run: None,
            tally: Tally::default(),
            largest: None,
            obs: vec![0.0; obs_len],
            mask: vec![0; window * choices + 1],
        })
    }

    /// The number of actions: one per window slot (with `placements=P`,
    /// `P` per slot: slot × P + choice), then "wait".
    #[getter]
    pub(crate) fn n_actions(&self) -> usize {
        self.mask.len()
    }

    /// The window (K).
    #[getter]
    pub(crate) fn window(&self) -> usize {
        self.window
    }

    /// With `placements=P`, P; `None` without.
    #[getter]
    pub(crate) fn placements(&self) -> Option<usize> {
        self.placements.as_ref().map(Placements::per_slot)
    }

    /// The length of the observation vector.
    #[getter]
    pub(crate) fn obs_len(&self) -> usize {
        self.obs.len()
    }

    /// The observation's upper bounds (its lower bounds are 0): 1 for the
    /// fractions and flags, the time cap for the two time features, and
    /// the longest queue (every job of an episode) over the window for the
    /// queue length.
    #[getter]
    pub(crate) fn obs_high(&self) -> Vec<f32> {
        let k = self.window;
        let mut high = vec![1.0f32; self.obs.len()];
        let cap = self.time_cap as f32;
        for slot in high.chunks_mut(JOB_FEATURES).take(k) {
            slot[2] = cap;
            slot[3] = cap;
        }
        high[k * JOB_FEATURES + 3] = (self.episode_len() as f32 / k as f32).max(1.0);
        high
    }

    /// With `topology_obs`, the partition size (nodes) of each level
    /// feature, largest first; empty without.
    #[getter]
    pub(crate) fn level_sizes(&self) -> Vec<u64> {
        if self.levels.is_empty() {
            return Vec::new();
        }
        self.ladder.iter().map(|(n, _)| *n).collect()
    }

    /// The backfilling choice, `"none"` or `"easy"`.
    #[getter]
    fn backfill(&self) -> &'static str {
        match self.backfill {
            Backfill::None => "none",
            Backfill::Easy => "easy",
        }
    }

    /// Jobs in the trace.
    #[getter]
    fn trace_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Starts an episode: the whole trace, or `episode_jobs` consecutive
    /// jobs from an offset drawn from `seed`. Returns `(obs, mask)` bytes.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        self.reset_episode(seed)?;
        Ok((
            PyBytes::new(py, bytemuck_f32(&self.obs).as_slice()),
            PyBytes::new(py, &self.mask),
        ))
    }

    /// Applies `action` (a window slot to start, or `window` to wait; a
    /// masked action waits if waiting is possible, else starts the first
    /// job that can start). Returns `(obs, mask, reward, terminated)`.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        action: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, f64, bool)> {
        let (reward, done) = self.step_action(action)?;
        Ok((
            PyBytes::new(py, bytemuck_f32(&self.obs).as_slice()),
            PyBytes::new(py, &self.mask),
            reward,
            done,
        ))
    }

    /// The jobs completed so far, in completion order, as columns of
    /// little-endian bytes: `id`, `requested`, `granted` (u64) and
    /// `arrival`, `start`, `end` (f64).
    pub(crate) fn completions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        type Column = (&'static str, fn(&JobRecord) -> [u8; 8]);
        const COLUMNS: [Column; 6] = [
            ("id", |c| c.id.to_le_bytes()),
            ("arrival", |c| c.arrival.to_le_bytes()),
            ("start", |c| c.start.to_le_bytes()),
            ("end", |c| c.end.to_le_bytes()),
            ("requested", |c| c.requested.to_le_bytes()),
            ("granted", |c| c.granted.to_le_bytes()),
        ];
        let done = self.run.as_ref().map_or(&[][..], |r| r.completions());
        let d = PyDict::new(py);
        for (name, bytes) in COLUMNS {
            let column: Vec<u8> = done.iter().flat_map(bytes).collect();
            d.set_item(name, PyBytes::new(py, &column))?;
        }
        Ok(d)
    }

    /// The episode so far: decisions, completed jobs, mean bounded
    /// slowdown, mean wait, utilization, simulated time.
    pub(crate) fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let n = self.tally.seen.max(1) as f64;
        d.set_item("decisions", self.tally.decisions)?;
        d.set_item("completed", self.tally.seen)?;
        d.set_item("episode_jobs", self.episode_len())?;
        d.set_item("mean_bounded_slowdown", self.tally.sum_bsld / n)?;
        d.set_item("mean_wait", self.tally.sum_wait / n)?;
        d.set_item("utilization", self.utilization())?;
        let (now, waiting, running) = self
            .run
            .as_ref()
            .map_or((0.0, 0, 0), |r| (r.now(), r.waiting_len(), r.running_len()));
        d.set_item("time", now)?;
        d.set_item("waiting", waiting)?;
        d.set_item("running", running)?;
        let free = self
            .run
            .as_ref()
            .map_or(self.topology.num_nodes(), |r| r.allocator().free_nodes());
        d.set_item("free_nodes", free)?;
        Ok(d)
    }

    /// The waiting jobs, oldest first, as the dicts a Python policy's
    /// `choose` is given (`id`, `arrival`, `service`, `estimate`, `nodes`).
    pub(crate) fn waiting_jobs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        if let Some(run) = self.run.as_ref() {
            for job in run.waiting() {
                list.append(job_dict(py, job)?)?;
            }
        }
        Ok(list)
    }
}

/// Per size of the ladder, the node sets of the partitions of that size
/// the strategy can ever grant (`topology_obs`); a size the strategy
/// cannot serve has none.
fn partition_levels(
    strategy: &AllocatorSpec,
    topology: &RustTopology,
    ladder: &[(u64, Request)],
) -> PyResult<Vec<Vec<NodeSet>>> {
    let alloc = strategy.build(topology).map_err(value_error)?;
    let n = topology.num_nodes();
    // Every level's partitions first, then their bit sets once their size
    // is known to fit.
    let mut listed = Vec::with_capacity(ladder.len());
    let mut used = 0;
    for (_, req) in ladder {
        let parts = match alloc.recognizable(req) {
            Ok(parts) => parts,
            Err(e @ AllocError::ListingUnsupported { .. }) => {
                return Err(PyValueError::new_err(format!(
                    "topology_obs=True needs a strategy that lists its partitions: {e}"
                )));
            }
            Err(_) => Vec::new(),
        };
        charge_listing("topology_obs=True", &mut used, parts.len(), n)?;
        listed.push(parts);
    }
    let mut levels = Vec::with_capacity(listed.len());
    for parts in listed {
        let mut sets = Vec::with_capacity(parts.len());
        for p in parts {
            let mut set = NodeSet::new(n);
            for id in p.node_list(topology).map_err(value_error)? {
                set.insert(id).map_err(value_error)?;
            }
            sets.push(set);
        }
        levels.push(sets);
    }
    Ok(levels)
}

/// The observation as little-endian bytes.
fn bytemuck_f32(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}
