"""A Gymnasium environment for learned job scheduling on partalloc.

:class:`SchedulingEnv` replays a Standard Workload Format trace, or draws
a generated workload, on any machine and allocation strategy; the agent is the scheduler. At each
decision it sees the first ``window`` waiting jobs and a summary of the
machine, and picks a job of the window to start now, or waits for the next
event (an arrival or a departure). The simulation underneath is partalloc's
Rust run loop, stepped once per decision: between two decisions no Python
code runs, and the observation is written into one preallocated NumPy
buffer.

Observation (``float32``, ``window × 5 + 4`` values):

- per window slot: present (1/0), requested nodes / machine nodes,
  requested time / the trace's median requested time, waiting time / the
  same scale, whether it can be placed now (1/0); zeros for empty slots;
- machine: free nodes / N, largest placeable request / N (the largest
  power-of-two request the strategy can grant now), fragmentation
  1 − largest / free, waiting jobs / window.

With ``topology_obs=True`` (off by default, which keeps the layout
above) one value per partition size follows, for the sizes of the
ladder the largest-placeable feature uses (powers of two up to N,
largest first; ``level_sizes`` lists them): the fraction of the
partitions of that size the strategy can ever grant (its
``recognizable`` partitions: aligned subcubes for the buddy system, every
box position for first fit, …) that are wholly free now. It shows how
the free nodes are spread over the machine's structure, level by level,
as no node count can: two machines with 32 free nodes differ in whether
those make one free 32-node subcube or none. It needs a strategy that
lists its partitions (a ``ValueError`` names one that cannot, such as a
non-contiguous strategy or one written in Python) and costs, per
decision, one pass over those partitions (a few hundred bit sets on a
128-node hypercube, about a thousand per size on a 32×32 mesh).

Every value is at least 0 and at most the observation space's ``high``:
1 for the fractions and flags, the waiting jobs of a whole episode over
the window for the queue length, and for the two time features the
longest time a job of the trace can wait (its last arrival less its first,
plus all its service) or request. A generated workload's times have no
bound: there the time features are clipped at the span of an episode of
mean gaps and mean service.

Action: ``0 … window−1`` chooses that window slot; ``window`` waits for
the next event, starting nothing. What a chosen job means depends on
``backfill``:

- ``"none"`` (the default): the chosen job starts now. A job that cannot
  be placed now is masked. Decisions are asked for only when at least one
  window job can start; otherwise the environment moves on by itself.
- ``"easy"``: the chosen job starts now if it can be placed; otherwise it
  becomes the reserved job, as EASY backfilling reserves a blocked head:
  every other waiting job (the whole queue, not only the window), in
  arrival order, starts now if it can be placed without delaying the
  reserved job's start, by the rule of the ``easy-backfilling`` policy (it
  ends by the reserved job's shadow time, or uses only the nodes to
  spare then), and the environment moves on to the next event. Every
  window job is a valid choice; decisions are asked for whenever some
  waiting job can start. An agent that always chooses the first job is
  EASY backfilling; with ``"none"`` (waiting when it is masked), FCFS.

Placement choice (``placements=P``, off by default): the agent chooses
not only which job starts but where. For each window job the
environment lists the first ``P`` partitions, in the strategy's own
search order, among those the strategy could ever grant its request (its
``recognizable`` partitions) that are wholly free now; action
``slot × P + c`` starts the job of that slot on its ``c``-th candidate
(through the strategy's ``allocate_at``, so the strategy's later choices
see the grant as its own), and ``window × P`` waits. The mask marks the
candidates that exist; decisions are asked for when some window job has
one. After the features above (and the levels, with ``topology_obs``),
three values per slot and candidate follow: present (1/0), contact (the
share of the links leaving the candidate that end at a busy node or at
the machine's edge, as contact-maximizing placement rules count them)
and position (its lowest node id / N). It needs a contiguous strategy
that grants chosen partitions: the 2-D mesh strategies (``fsl``,
``first-fit``, ``best-fit``, ``adaptive-scan``, ``busy-list``,
``frame-sliding``, ``buddy-2d``) and the hypercube ``buddy``; others
are a ``ValueError`` naming the reason. It runs with
``backfill="none"`` (backfilled jobs would be placed by the strategy).
An agent that always takes candidate 0 of the job it chooses places as
first fit over the strategy's partitions, which for ``first-fit`` and
``buddy`` is the strategy's own choice.

:meth:`SchedulingEnv.action_masks` says which actions are valid now
(waiting is masked when no event is left). A masked action is not an
error: it waits if waiting is valid, else starts the first job that can
start.

Reward (``reward=``): ``"slowdown"`` (negative mean bounded slowdown, with
``bound`` on the service time, default 10), ``"wait"`` (negative mean
wait) or ``"utilization"``; at the end of the episode
(``per_step=False``, the default) or per step (``per_step=True``: each
step gives the share of the episode's value that accrued in it; per-step
slowdown and wait rewards add up to the episode's, per-step utilization
rewards to 1 − 1/utilization).

The environment is registered with Gymnasium as
``partalloc/Scheduling-v0`` (:data:`ENV_ID`):
``gymnasium.make(ENV_ID, trace=..., topology=..., ...)`` takes the
class's arguments, and an environment made by the class carries the same
spec, so Gymnasium's ``check_env`` can make it again in each render mode.

:class:`SchedulingVecEnv` runs ``num_envs`` of these environments as one
Gymnasium vector environment (next-step autoreset), stepped by one call
into Rust, optionally on several threads; :func:`sample_masked` draws a
valid action per environment at once.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        "partalloc.gym needs gymnasium: pip install gymnasium"
    ) from e

from gymnasium.utils import seeding
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from . import Topology, _native

__all__ = [
    "ENV_ID",
    "SchedulingEnv",
    "SchedulingVecEnv",
    "PolicyAgent",
    "sample_masked",
    "COMPLETION_DTYPE",
]

#: The Gymnasium id of :class:`SchedulingEnv`:
#: ``gymnasium.make("partalloc/Scheduling-v0", trace=..., ...)`` takes the
#: same arguments as the class.
ENV_ID = "partalloc/Scheduling-v0"

#: The fields of :meth:`SchedulingEnv.completed_jobs`.
COMPLETION_DTYPE = np.dtype(
    [
        ("id", "<u8"),
        ("arrival", "<f8"),
        ("start", "<f8"),
        ("end", "<f8"),
        ("requested", "<u8"),
        ("granted", "<u8"),
    ]
)


def _completions(cols: Dict[str, bytes]) -> np.ndarray:
    """The completion columns of the core as a structured array."""
    out = np.zeros(len(cols["id"]) // 8, dtype=COMPLETION_DTYPE)
    for name in COMPLETION_DTYPE.names:
        out[name] = np.frombuffer(cols[name], dtype=COMPLETION_DTYPE[name])
    return out


class SchedulingEnv(gym.Env):
    """Scheduling on a partitionable machine as a Gymnasium environment.

    >>> env = SchedulingEnv(trace="NASA-iPSC-1993-3.1-cln.swf",
    ...                     topology="hypercube:7", allocator="buddy")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(env.window)

    Parameters: ``trace`` (a Standard Workload Format file) or
    ``workload`` (a generated workload: a dict of the workload options of
    :func:`partalloc.simulate`, e.g. ``{"load": 0.8}``; each episode draws
    ``episode_jobs`` jobs, default 1000, from the reset seed), ``topology``,
    ``allocator`` (a strategy spec such as ``"buddy"`` or
    ``"fsl[reservation=0.5]"``, or an allocator class written in Python as
    for :func:`partalloc.simulate`, made once per episode), ``window`` (K, default 16), ``backfill``
    (``"none"`` or ``"easy"``: what choosing a job that cannot start now
    means, see the module docs), ``reward``,
    ``per_step``, ``bound``, ``episode_jobs`` (each episode replays this
    many consecutive jobs from an offset drawn from the reset seed;
    default: the whole trace), ``mapping`` (``"shapes"``: processor counts
    become subcubes or near-square boxes; ``"nodes"``: plain counts, for
    non-contiguous strategies), ``rotate`` (boxes in any orientation),
    ``lenient`` (skip malformed trace lines), ``topology_obs`` (add the
    free-partition fraction per partition size, see the module docs),
    ``placements`` (``P`` placement choices per window job, see the module
    docs; ``None``, the default, lets the strategy place).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        trace: Optional[Union[str, "os.PathLike[str]"]] = None,
        topology: Union[str, Topology] = "hypercube:7",
        allocator: Union[str, type] = "buddy",
        *,
        workload: Optional[Dict[str, Any]] = None,
        window: int = 16,
        backfill: str = "none",
        reward: str = "slowdown",
        per_step: bool = False,
        bound: float = 10.0,
        episode_jobs: Optional[int] = None,
        mapping: str = "shapes",
        rotate: bool = False,
        lenient: bool = False,
        topology_obs: bool = False,
        placements: Optional[int] = None,
        render_mode: Optional[str] = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: use None or 'ansi'")
        # The registered spec with these arguments, so that Gymnasium can
        # make this environment again (in another render mode, say) as
        # gymnasium.make would; gymnasium.make sets the same spec itself.
        self.spec = dataclasses.replace(
            gym.spec(ENV_ID),
            kwargs={
                "trace": os.fspath(trace) if trace is not None else None,
                "topology": str(topology),
                "allocator": allocator,
                "workload": workload,
                "window": window,
                "backfill": backfill,
                "reward": reward,
                "per_step": per_step,
                "bound": bound,
                "episode_jobs": episode_jobs,
                "mapping": mapping,
                "rotate": rotate,
                "lenient": lenient,
                "topology_obs": topology_obs,
                "placements": placements,
            },
        )
        self._core = _native.EnvCore(
            topology,
            allocator,
            trace=os.fspath(trace) if trace is not None else None,
            workload=workload,
            window=window,
            backfill=backfill,
            reward=reward,
            per_step=per_step,
            episode_jobs=episode_jobs,
            mapping=mapping,
            rotate=rotate,
            bound=bound,
            lenient=lenient,
            topology_obs=topology_obs,
            placements=placements,
        )
        self.window = window
        #: Placement choices per window job (``None``: the strategy places).
        self.placements: Optional[int] = self._core.placements
        self.topology = topology if isinstance(topology, Topology) else Topology(topology)
        self.backfill = backfill
        self.render_mode = render_mode
        #: With ``topology_obs``, the partition size of each level feature.
        self.level_sizes: List[int] = list(self._core.level_sizes)
        n = self._core.obs_len
        high = np.array(self._core.obs_high, dtype=np.float32)
        self.observation_space = spaces.Box(
            low=np.zeros(n, dtype=np.float32), high=high, dtype=np.float32
        )
        a = self._core.n_actions
        #: The action that waits for the next event (the last one).
        self.wait_action = a - 1
        self.action_space = spaces.Discrete(a)
        self._obs = np.zeros(n, dtype=np.float32)
        self._mask = np.zeros(a, dtype=bool)
        self._mask_u8 = self._mask.view(np.uint8)
        self._started = False

    def _load(self, obs: bytes, mask: bytes) -> None:
        self._obs[:] = np.frombuffer(obs, dtype=np.float32)
        self._mask_u8[:] = np.frombuffer(mask, dtype=np.uint8)

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None:
            # Without a seed, the next offset comes from the environment's own generator.
            seed = int(self.np_random.integers(0, 2**63 - 1))
        obs, mask = self._core.reset(seed)
        self._load(obs, mask)
        self._started = True
        return self._obs.copy(), {"action_mask": self._mask.copy()}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        obs, mask, reward, terminated = self._core.step(int(action))
        self._load(obs, mask)
        info: Dict[str, Any] = {"action_mask": self._mask.copy()}
        if terminated:
            info["episode"] = self._core.stats()
        return self._obs.copy(), float(reward), bool(terminated), False, info

    def step_fast(self, action: int) -> Tuple[np.ndarray, float, bool]:
        """:meth:`step` without copies or info: returns the environment's own
        observation buffer (overwritten by the next step) and mask
        (:meth:`action_masks` without a copy), for fast rollouts."""
        obs, mask, reward, terminated = self._core.step(action)
        self._load(obs, mask)
        return self._obs, reward, terminated

    def action_masks(self) -> np.ndarray:
        """Which actions are valid now (``True``: the job can be placed, or
        waiting is possible)."""
        return self._mask.copy()

    def completed_jobs(self) -> np.ndarray:
        """The jobs of the episode completed so far, in completion order,
        as a structured array with fields ``id``, ``arrival``, ``start``,
        ``end``, ``requested`` and ``granted`` (nodes)."""
        return _completions(self._core.completions())

    def stats(self) -> Dict[str, Any]:
        """The episode so far: decisions, completed jobs, mean bounded
        slowdown, mean wait, utilization, simulated time, waiting and
        running jobs."""
        return self._core.stats()

    def waiting_jobs(self) -> List[Dict[str, Any]]:
        """The waiting jobs, oldest first, as dicts (``id``, ``arrival``,
        ``service``, ``estimate``, ``nodes``): what a policy's ``choose``
        is given in :func:`partalloc.simulate`. The first ``window`` of
        them are the observation's slots, in the same order."""
        return self._core.waiting_jobs()

    def render(self) -> Optional[str]:
        if self.render_mode != "ansi":
            return None
        s = self._core.stats()
        k = self.window
        rows = self._obs[: k * 5].reshape(k, 5)
        m = self._obs[k * 5 :]
        lines = [
            f"t={s['time']:.1f} waiting={s['waiting']} running={s['running']} "
            f"free={m[0]:.3f} largest={m[1]:.3f} fragmentation={m[2]:.3f}"
        ]
        for i, r in enumerate(rows):
            if r[0] > 0:
                lines.append(
                    f"  [{i:2d}] nodes={r[1]:.3f} time={r[2]:.2f} wait={r[3]:.2f} "
                    f"{'placeable' if r[4] > 0 else 'blocked'}"
                )
        return "\n".join(lines)


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="partalloc.gym:SchedulingEnv")


try:  # Gymnasium ≥ 1.0 names its autoreset modes.
    from gymnasium.vector import AutoresetMode

    _NEXT_STEP: Any = AutoresetMode.NEXT_STEP
except ImportError:  # pragma: no cover - Gymnasium 0.29
    _NEXT_STEP = "NextStep"


class SchedulingVecEnv(VectorEnv):
    """``num_envs`` :class:`SchedulingEnv` environments stepped together by
    one call into Rust: Gymnasium's vector API, for fast rollouts.

    >>> envs = SchedulingVecEnv(8, trace="NASA-iPSC-1993-3.1-cln.swf",
    ...                         topology="hypercube:7", allocator="buddy",
    ...                         episode_jobs=1000)            # doctest: +SKIP
    >>> obs, info = envs.reset(seed=0)                        # doctest: +SKIP
    >>> actions = envs.sample_valid_actions()                 # doctest: +SKIP
    >>> obs, rewards, terminations, truncations, info = envs.step(actions)

    Every keyword argument of :class:`SchedulingEnv` is taken, and means
    the same for each environment; ``threads`` (default 1) shares the
    environments out over that many threads during a step, the calling
    thread among them (the interpreter's lock is released while they
    run). Results do not depend on ``threads``.

    Environment ``i`` is the :class:`SchedulingEnv` that
    ``gymnasium.vector.SyncVectorEnv`` would run: ``reset(seed=s)``
    starts it from seed ``s + i`` (or ``seed[i]`` for a list), and given
    the same actions its observations, masks, rewards and ends are
    bit for bit those of ``SchedulingEnv(...).reset(seed=s + i)``.

    Autoreset: next step (``metadata["autoreset_mode"]``, Gymnasium's
    default). When an episode ends (``terminations[i]``; a
    ``SchedulingEnv`` never truncates), the next ``step`` ignores action
    ``i``, resets the environment from a seed drawn from its own generator
    (as ``SchedulingEnv.reset()`` without a seed does) and returns its
    first observation with reward 0.

    Masks: :meth:`action_masks` (``num_envs × n_actions`` booleans, where
    ``n_actions`` is ``window + 1``, or ``window × placements + 1`` with
    placements; as sb3-contrib's ``MaskablePPO`` asks for) and
    ``info["action_mask"]``.
    At the end of an episode ``info["episode"]`` holds its
    :meth:`SchedulingEnv.stats` (with ``info["_episode"]`` saying which
    environments ended), as ``SyncVectorEnv`` batches them.

    :meth:`step` and :meth:`reset` return copies (``copy=True``, as
    ``SyncVectorEnv``); with ``copy=False`` they return the environment's
    own buffers, overwritten by the next call. :meth:`step_fast` skips
    the copies and the info dict.
    """

    metadata = {"autoreset_mode": _NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        trace: Optional[Union[str, "os.PathLike[str]"]] = None,
        topology: Union[str, Topology] = "hypercube:7",
        allocator: Union[str, type] = "buddy",
        *,
        threads: int = 1,
        copy: bool = True,
        **kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an int, not {type(num_envs).__name__}")
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
            raise TypeError(f"threads must be an int, not {type(threads).__name__}")
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        # One environment parses the keyword arguments (those of
        # SchedulingEnv) and reads the trace; the others are its copies.
        template = _native.EnvCore(
            topology, allocator, trace=os.fspath(trace) if trace is not None else None, **kwargs
        )
        self._core = _native.VecEnvCore(int(num_envs), int(threads), template)
        self.num_envs = int(num_envs)
        self.threads = int(threads)
        self.window = template.window
        self.placements: Optional[int] = template.placements
        self.wait_action = template.n_actions - 1
        self.backfill = template.backfill
        self.copy = copy
        self.level_sizes: List[int] = list(template.level_sizes)
        self.topology = topology if isinstance(topology, Topology) else Topology(topology)
        n, a = template.obs_len, template.n_actions
        high = np.array(template.obs_high, dtype=np.float32)
        self.single_observation_space = spaces.Box(
            low=np.zeros(n, dtype=np.float32), high=high, dtype=np.float32
        )
        self.single_action_space = spaces.Discrete(a)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # NumPy views of the core's buffers: Rust writes them in place.
        b = self._core.buffers()
        self._buffers = b  # keeps the byte arrays alive with the views
        self._obs = np.frombuffer(b["obs"], dtype="<f4").reshape(self.num_envs, n)
        self._mask = np.frombuffer(b["mask"], dtype=np.bool_).reshape(self.num_envs, a)
        self._rewards = np.frombuffer(b["reward"], dtype="<f8")
        self._terminations = np.frombuffer(b["terminated"], dtype=np.bool_)
        self._truncations = np.zeros(self.num_envs, dtype=np.bool_)
        self._actions = np.frombuffer(b["actions"], dtype="<i8")
        self._seeds = np.frombuffer(b["seeds"], dtype="<u8")
        self._rngs: List[Optional[np.random.Generator]] = [None] * self.num_envs
        self._started = False

    def _draw_seed(self, i: int) -> int:
        """The seed of environment ``i``'s next episode, from its own
        generator, as :meth:`SchedulingEnv.reset` draws it."""
        rng = self._rngs[i]
        if rng is None:
            rng, _ = seeding.np_random()
            self._rngs[i] = rng
        return int(rng.integers(0, 2**63 - 1))

    def _info(self) -> Dict[str, Any]:
        return {
            "action_mask": self._mask.copy(),
            "_action_mask": np.ones(self.num_envs, dtype=np.bool_),
        }

    def _out(self, a: np.ndarray) -> np.ndarray:
        return a.copy() if self.copy else a

    def reset(
        self,
        *,
        seed: Optional[Union[int, List[Optional[int]]]] = None,
        options: Optional[Dict[str, Any]] = None,
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        if seed is None:
            seeds: List[Optional[int]] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments: give one per environment")
        # Checked before anything changes.
        for i, s in enumerate(seeds):
            if s is not None and int(s) < 0:
                raise ValueError(f"seed {s} of environment {i} is negative: use a seed ≥ 0")
        super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
        for i, s in enumerate(seeds):
            if s is None:
                self._seeds[i] = self._draw_seed(i)
            else:
                self._rngs[i], _ = seeding.np_random(int(s))
                self._seeds[i] = int(s)
        self._core.reset()
        self._started = True
        return self._out(self._obs), self._info()

    def step(
        self, actions: Any
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        self._step(actions)
        info = self._info()
        ended = np.flatnonzero(self._terminations)
        if ended.size:
            # Episode statistics now, and the seeds of next step's resets.
            for i in ended:
                info = self._add_info(info, {"episode": self._core.stats(int(i))}, int(i))
                self._seeds[i] = self._draw_seed(int(i))
        return (
            self._out(self._obs),
            self._out(self._rewards),
            self._out(self._terminations),
            self._out(self._truncations),
            info,
        )

    def _step(self, actions: Any) -> None:
        self._actions[:] = actions
        self._core.step()

    def step_fast(self, actions: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` without info or copies: returns the observation,
        reward and termination buffers (overwritten by the next step); the
        masks are in :meth:`action_masks_view`. For fast rollouts."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        self._step(actions)
        ended = np.flatnonzero(self._terminations)
        for i in ended:
            self._seeds[i] = self._draw_seed(int(i))
        return self._obs, self._rewards, self._terminations

    def action_masks(self) -> np.ndarray:
        """Which actions are valid now, per environment
        (``num_envs × n_actions`` booleans)."""
        return self._mask.copy()

    def action_masks_view(self) -> np.ndarray:
        """:meth:`action_masks` without a copy: the mask buffer itself,
        overwritten by the next step."""
        return self._mask

    def sample_valid_actions(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """One valid action per environment, uniformly among its valid
        ones, drawn without a Python loop (a random masked policy)."""
        rng = self.np_random if rng is None else rng
        return sample_masked(self._mask, rng)

    def stats(self, index: int) -> Dict[str, Any]:
        """Environment ``index``'s episode so far (:meth:`SchedulingEnv.stats`)."""
        return self._core.stats(index)

    def completed_jobs(self, index: int) -> np.ndarray:
        """Environment ``index``'s completed jobs
        (:meth:`SchedulingEnv.completed_jobs`)."""
        return _completions(self._core.completions(index))

    def waiting_jobs(self, index: int) -> List[Dict[str, Any]]:
        """Environment ``index``'s waiting jobs (:meth:`SchedulingEnv.waiting_jobs`)."""
        return self._core.waiting_jobs(index)


def sample_masked(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row of ``mask`` (booleans, at least one ``True`` per row), the
    index of a ``True`` entry drawn uniformly: the valid action of a random
    masked policy, for all environments at once."""
    # A uniform key per entry, lifted by 1 where valid: the largest key is
    # a valid entry, each one equally likely.
    keys = rng.random(mask.shape)
    keys += mask
    return keys.argmax(axis=1)


class PolicyAgent:
    """A scheduling policy written in Python, acting in a
    :class:`SchedulingEnv`: the class with ``choose(waiting, free_nodes,
    now)`` that :func:`partalloc.simulate` takes, made once with the
    environment's :class:`~partalloc.Topology` (make a new agent for each
    episode, as ``simulate`` makes one policy per replication).

    In the environment the agent is the scheduler, so a policy is not an
    option of the environment: it is an agent. With ``backfill="none"``
    it makes the decisions ``simulate`` lets it make, and the start times
    are the same, provided the waiting queue never outgrows the window
    (the environment can start only window jobs):

    >>> agent = PolicyAgent(SmallestFirst, env)          # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)                    # doctest: +SKIP
    >>> while not done:                                  # doctest: +SKIP
    ...     obs, r, done, _, info = env.step(agent.act(env))

    :meth:`act` asks ``choose`` and maps its answer to an action: the index
    of a job that can start now is that action; ``None``, or a job that
    cannot start now, is waiting for the next event (as in ``simulate``, a
    chosen job that does not fit ends the decision). An index past the
    window is a ``ValueError`` naming the window; an answer of the wrong
    type a ``TypeError``.
    """

    def __init__(self, policy: type, env: SchedulingEnv) -> None:
        if not isinstance(policy, type):
            raise TypeError(f"PolicyAgent takes a policy class, not {type(policy).__name__}")
        if not callable(getattr(policy, "choose", None)):
            raise TypeError(f"{policy.__name__} has no choose(waiting, free_nodes, now) method")
        if env.backfill != "none":
            raise ValueError(f'PolicyAgent runs with backfill="none", not {env.backfill!r}')
        self.policy = policy(env.topology)
        self.name = getattr(self.policy, "name", policy.__name__)

    def act(self, env: SchedulingEnv) -> int:
        """The action for the environment's current state."""
        waiting = env.waiting_jobs()
        stats = env.stats()
        choice = self.policy.choose(waiting, stats["free_nodes"], stats["time"])
        wait = env.wait_action
        if choice is None:
            return wait
        if isinstance(choice, bool) or not isinstance(choice, (int, np.integer)):
            raise TypeError(
                f"{self.name}.choose returned {type(choice).__name__}; return the index of a waiting job, or None"
            )
        i = int(choice)
        if not 0 <= i < len(waiting):
            raise ValueError(
                f"{self.name}.choose returned {i}, but {len(waiting)} jobs are waiting (indices 0..{len(waiting)})"
            )
        if i >= env.window:
            raise ValueError(
                f"{self.name}.choose returned {i}, past the window of {env.window} jobs: make the window larger"
            )
        # With placements, the job goes on its first candidate.
        a = i * (env.placements or 1)
        return a if env.action_masks()[a] else wait
