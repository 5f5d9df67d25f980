//! The core of `partalloc.gym.SchedulingVecEnv`: `num_envs` environments
//! ([`EnvCore`]) stepped by one call from Python, with the interpreter's
//! lock released while they run and the environments shared out over
//! `threads` threads: the calling thread and `threads − 1` of a pool, so
//! that no pool thread competes with the interpreter for a core between
//! two steps. Actions are read from, and observations, masks,
//! rewards and end flags written into, byte arrays made once; Python sees
//! them as NumPy arrays over the same memory, so a step makes no Python
//! object and allocates nothing.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList};
use std::sync::{Mutex, PoisonError};

use crate::env::EnvCore;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<VecEnvCore>()?;
    Ok(())
}

/// The most environments one vector environment steps: far beyond what
/// two cores use, and small enough that the buffers' sizes cannot
/// overflow.
const MAX_ENVS: usize = 1 << 20;

/// The shared buffers, each a `bytearray` Python views as a NumPy array.
#[derive(Debug)]
struct Buffers {
    /// `num_envs × obs_len` little-endian `f32`.
    obs: Py<PyByteArray>,
    /// `num_envs × n_actions` bytes, 1 for a valid action.
    mask: Py<PyByteArray>,
    /// `num_envs` little-endian `f64`.
    reward: Py<PyByteArray>,
    /// `num_envs` bytes, 1 when the episode ended at this step.
    terminated: Py<PyByteArray>,
    /// `num_envs` little-endian `i64`, written by Python before a step.
    actions: Py<PyByteArray>,
    /// `num_envs` little-endian `u64`: the seed of each environment's next
    /// reset, written by Python before `reset` and before a step that
    /// resets an environment whose episode ended.
    seeds: Py<PyByteArray>,
}

/// `num_envs` environments stepped together (see `partalloc.gym`).
#[pyclass(module = "partalloc._native", unsendable)]
#[derive(Debug)]
pub(crate) struct VecEnvCore {
    envs: Vec<EnvCore>,
    /// The threads that step the environments with the calling thread
    /// when `threads > 1` (`threads − 1` of them).
    pool: Option<rayon::ThreadPool>,
    n_actions: usize,
    obs_len: usize,
    buffers: Buffers,
    /// Per environment: the action of this step (`usize::MAX` for a
    /// negative one) and the seed of its next reset.
    actions: Vec<usize>,
    seeds: Vec<u64>,
    /// Per environment: whether its episode ended at the last step, and
    /// so whether this step resets it (Gymnasium's next-step autoreset);
    /// the two are swapped at each step.
    ended: Vec<bool>,
    resets: Vec<bool>,
    rewards: Vec<f64>,
    /// Every environment's observation bytes and mask, written by the
    /// threads, then copied into the shared buffers.
    staged_obs: Vec<u8>,
    staged_mask: Vec<u8>,
}

/// Per environment, what a step does.
#[derive(Clone, Copy)]
enum Work {
    Reset(u64),
    Step(usize),
}

/// What a chunk of environments writes: per environment its reward, end
/// flag, observation bytes and mask.
struct Out<'a> {
    rewards: &'a mut [f64],
    ended: &'a mut [bool],
    obs: &'a mut [u8],
    mask: &'a mut [u8],
}

/// Runs `work` on every environment of `envs` and writes its results into
/// `out` (the conversion to bytes runs here, on the chunk's thread); the
/// first error stops the chunk.
fn run_chunk(
    envs: &mut [EnvCore],
    work: impl Fn(usize) -> Work,
    offset: usize,
    out: Out<'_>,
) -> PyResult<()> {
    let lo = out.obs.len() / envs.len().max(1);
    let la = out.mask.len() / envs.len().max(1);
    let rows = envs
        .iter_mut()
        .zip(out.rewards.iter_mut())
        .zip(out.ended.iter_mut())
        .zip(out.obs.chunks_exact_mut(lo.max(1)))
        .zip(out.mask.chunks_exact_mut(la.max(1)));
    for (j, ((((env, r), p), obs), mask)) in rows.enumerate() {
        match work(offset + j) {
            Work::Reset(seed) => {
                env.reset_episode(Some(seed))?;
                *r = 0.0;
                *p = false;
            }
            Work::Step(action) => (*r, *p) = env.step_action(action)?,
        }
        for (dst, x) in obs.chunks_exact_mut(4).zip(env.obs()) {
            dst.copy_from_slice(&x.to_le_bytes());
        }
        mask.copy_from_slice(env.mask());
    }
    Ok(())
}

/// Reads the little-endian 8-byte words of `bytes` into `out`.
fn read_words<T>(bytes: &Bound<'_, PyByteArray>, out: &mut [T], conv: impl Fn([u8; 8]) -> T) {
    // SAFETY: the GIL is held and no Python code runs while the slice
    // lives; the byte array cannot be resized meanwhile (NumPy holds a
    // view of it, and nothing else runs).
    let src = unsafe { bytes.as_bytes() };
    for (o, w) in out.iter_mut().zip(src.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        *o = conv(b);
    }
}

impl VecEnvCore {
    /// Runs `work` over all environments with the GIL released, on the
    /// thread pool if there is one.
    fn run(&mut self, py: Python<'_>, work: impl Fn(usize) -> Work + Sync) -> PyResult<()> {
        let (lo, la) = (self.obs_len * 4, self.n_actions);
        let envs = &mut self.envs;
        let (rewards, ended) = (&mut self.rewards, &mut self.ended);
        let (obs, mask) = (&mut self.staged_obs, &mut self.staged_mask);
        let work = &work;
        let Some(pool) = self.pool.as_ref() else {
            return py.allow_threads(|| {
                let out = Out {
                    rewards,
                    ended,
                    obs,
                    mask,
                };
                run_chunk(envs, work, 0, out)
            });
        };
        // A few chunks per thread, so that a thread the machine holds up
        // has its chunks taken over by the others; the calling thread
        // takes chunks too.
        let threads = pool.current_num_threads() + 1;
        let per = envs.len().div_ceil(4 * threads).max(1);
        let chunks = envs
            .chunks_mut(per)
            .zip(rewards.chunks_mut(per))
            .zip(ended.chunks_mut(per))
            .zip(obs.chunks_mut(per * lo))
            .zip(mask.chunks_mut(per * la))
            .enumerate();
        let queue = Mutex::new(chunks);
        let failed: Mutex<Option<PyErr>> = Mutex::new(None);
        // Takes chunks until none is left or one has failed.
        let drain = || {
            loop {
                let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                let Some((c, ((((e, rewards), ended), obs), mask))) = next else {
                    return;
                };
                let out = Out {
                    rewards,
                    ended,
                    obs,
                    mask,
                };
                if let Err(err) = run_chunk(e, work, c * per, out) {
                    failed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get_or_insert(err);
                    // No other chunk is handed out.
                    let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
                    for _ in q.by_ref() {}
                    return;
                }
            }
        };
        py.allow_threads(|| {
            pool.in_place_scope(|s| {
                for _ in 1..threads {
                    s.spawn(|_| drain());
                }
                drain();
            });
        });
        match failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Copies the staged observations and masks, the rewards and the end
    /// flags into the shared buffers.
    fn publish(&self, py: Python<'_>) -> PyResult<()> {
        let b = &self.buffers;
        // SAFETY: as in `read_words`: the GIL is held, no Python code runs
        // while the slices live, and the four arrays are distinct objects.
        let (obs, mask, reward, term) = unsafe {
            (
                b.obs.bind(py).as_bytes_mut(),
                b.mask.bind(py).as_bytes_mut(),
                b.reward.bind(py).as_bytes_mut(),
                b.terminated.bind(py).as_bytes_mut(),
            )
        };
        let n = self.envs.len();
        if obs.len() != self.staged_obs.len()
            || mask.len() != self.staged_mask.len()
            || reward.len() != 8 * n
            || term.len() != n
        {
            return Err(PyValueError::new_err(
                "the vector environment's buffers were resized: make a new environment",
            ));
        }
        obs.copy_from_slice(&self.staged_obs);
        mask.copy_from_slice(&self.staged_mask);
        for (dst, r) in reward.chunks_exact_mut(8).zip(&self.rewards) {
            dst.copy_from_slice(&r.to_le_bytes());
        }
        for (dst, p) in term.iter_mut().zip(&self.ended) {
            *dst = u8::from(*p);
        }
        Ok(())
    }

    fn env(&self, index: usize) -> PyResult<&EnvCore> {
        self.envs.get(index).ok_or_else(|| {
            PyValueError::new_err(format!(
                "environment {index}: there are {} (0..{})",
                self.envs.len(),
                self.envs.len()
            ))
        })
    }
}

#[pymethods]
impl VecEnvCore {
    /// `num_envs` copies of `template` (an `EnvCore`, which has parsed
    /// the arguments and read the trace), stepped on `threads` threads.
    #[new]
    fn new(
        py: Python<'_>,
        num_envs: usize,
        threads: usize,
        template: PyRef<'_, EnvCore>,
    ) -> PyResult<Self> {
        if num_envs == 0 {
            return Err(PyValueError::new_err("num_envs must be at least 1"));
        }
        if num_envs > MAX_ENVS {
            return Err(PyValueError::new_err(format!(
                "num_envs {num_envs} is more than {MAX_ENVS}: run several vector environments"
            )));
        }
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let first: &EnvCore = &template;
        let (n_actions, obs_len) = (first.n_actions(), first.obs_len());
        let envs: Vec<EnvCore> = (0..num_envs).map(|_| first.replica()).collect();
        let zeros = |len: usize| PyByteArray::new(py, &vec![0u8; len]).unbind();
        let buffers = Buffers {
            obs: zeros(num_envs * obs_len * 4),
            mask: zeros(num_envs * n_actions),
            reward: zeros(num_envs * 8),
            terminated: zeros(num_envs),
            actions: zeros(num_envs * 8),
            seeds: zeros(num_envs * 8),
        };
        let pool = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .build()
                .map_err(|e| PyValueError::new_err(format!("threads={threads}: {e}")))?;
            Some(pool)
        } else {
            None
        };
        Ok(Self {
            envs,
            pool,
            n_actions,
            obs_len,
            buffers,
            actions: vec![0; num_envs],
            seeds: vec![0; num_envs],
            ended: vec![false; num_envs],
            resets: vec![false; num_envs],
            rewards: vec![0.0; num_envs],
            staged_obs: vec![0; num_envs * obs_len * 4],
            staged_mask: vec![0; num_envs * n_actions],
        })
    }

    /// The shared buffers by name: `obs`, `mask`, `reward`, `terminated`
    /// (written by `reset` and `step`), `actions` and `seeds` (read).
    fn buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = &self.buffers;
        let d = PyDict::new(py);
        d.set_item("obs", b.obs.bind(py))?;
        d.set_item("mask", b.mask.bind(py))?;
        d.set_item("reward", b.reward.bind(py))?;
        d.set_item("terminated", b.terminated.bind(py))?;
        d.set_item("actions", b.actions.bind(py))?;
        d.set_item("seeds", b.seeds.bind(py))?;
        Ok(d)
    }

    /// Starts an episode in every environment, each from its seed in the
    /// `seeds` buffer.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        read_words(
            self.buffers.seeds.bind(py),
            &mut self.seeds,
            u64::from_le_bytes,
        );
        let seeds = std::mem::take(&mut self.seeds);
        let r = self.run(py, |i| Work::Reset(seeds[i]));
        self.seeds = seeds;
        r?;
        self.publish(py)
    }

    /// One step of every environment: the action in the `actions` buffer,
    /// or, for an environment whose episode ended at the last step, a
    /// reset from its seed in the `seeds` buffer (reward 0, not ended).
    /// An action outside `0..n_actions` is a `ValueError`, and nothing
    /// is stepped.
    fn step(&mut self, py: Python<'_>) -> PyResult<()> {
        let n = self.n_actions;
        read_words(self.buffers.actions.bind(py), &mut self.actions, |b| {
            usize::try_from(i64::from_le_bytes(b)).unwrap_or(usize::MAX)
        });
        if let Some((i, _)) = self
            .actions
            .iter()
            .enumerate()
            .find(|&(i, &a)| a >= n && !self.ended[i])
        {
            return Err(PyValueError::new_err(format!(
                "action of environment {i} is out of range: use 0..{} (a window job, or with placements slot × placements + choice) or {} (wait)",
                n - 1,
                n - 1
            )));
        }
        if self.ended.iter().any(|&p| p) {
            read_words(
                self.buffers.seeds.bind(py),
                &mut self.seeds,
                u64::from_le_bytes,
            );
        }
        std::mem::swap(&mut self.ended, &mut self.resets);
        let (actions, seeds, resets) = (
            std::mem::take(&mut self.actions),
            std::mem::take(&mut self.seeds),
            std::mem::take(&mut self.resets),
        );
        let r = self.run(py, |i| {
            if resets[i] {
                Work::Reset(seeds[i])
            } else {
                Work::Step(actions[i])
            }
        });
        self.resets = resets;
        self.actions = actions;
        self.seeds = seeds;
        r?;
        self.publish(py)
    }

    /// Environment `index`'s episode so far (as `SchedulingEnv.stats`).
    fn stats<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        self.env(index)?.stats(py)
    }

    /// Environment `index`'s completed jobs (as `EnvCore.completions`).
    fn completions<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        self.env(index)?.completions(py)
    }

    /// Environment `index`'s waiting jobs (as `EnvCore.waiting_jobs`).
    fn waiting_jobs<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyList>> {
        self.env(index)?.waiting_jobs(py)
    }
}
