"""The vector environment: the same steps as Gymnasium's own SyncVectorEnv
over SchedulingEnv, bit for bit (observations, rewards, ends, infos,
autoresets), whatever the thread count; masks that allow only valid
actions; bad arguments refused."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.spaces import Box, Discrete, MultiDiscrete  # noqa: E402
from gymnasium.utils.env_checker import check_env, data_equivalence  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

from partalloc.gym import SchedulingEnv, SchedulingVecEnv, sample_masked  # noqa: E402


def lockstep(vec: Any, ref: Any, steps: int, seed: int) -> List[Dict[str, Any]]:
    """Steps both vector environments with the same random valid actions,
    asserting every returned value equal; returns the infos that carried
    an episode's statistics."""
    rng = np.random.default_rng(seed)
    obs_a, info_a = vec.reset(seed=seed)
    obs_b, info_b = ref.reset(seed=seed)
    assert data_equivalence(obs_a, obs_b, exact=True)
    assert data_equivalence(info_a, info_b, exact=True)
    ended = []
    for t in range(steps):
        actions = sample_masked(info_a["action_mask"], rng)
        out_a = vec.step(actions)
        out_b = ref.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), out_a, out_b):
            assert data_equivalence(a, b, exact=True), f"step {t}: {name} differs\n{a}\n{b}"
        info_a = out_a[4]
        if "episode" in info_a:
            ended.append(info_a)
    return ended


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_equals_gymnasium_sync_vector_env(small_trace: Path, threads: int) -> None:
    kwargs: Dict[str, Any] = dict(window=6, episode_jobs=25, per_step=True)
    n = 5
    vec = SchedulingVecEnv(n, small_trace, "hypercube:7", "buddy", threads=threads, **kwargs)
    ref = SyncVectorEnv(
        [lambda: SchedulingEnv(small_trace, "hypercube:7", "buddy", **kwargs) for _ in range(n)],
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    assert vec.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert vec.single_observation_space == ref.single_observation_space
    assert vec.single_action_space == ref.single_action_space
    assert vec.observation_space == ref.observation_space
    assert vec.action_space == ref.action_space
    ended = lockstep(vec, ref, 300, seed=7)
    # Episodes of 25 jobs end (and restart) many times within 300 steps.
    assert len(ended) >= n


def test_equals_sync_vector_env_with_backfilling_and_episode_rewards(busy_trace: Path) -> None:
    kwargs: Dict[str, Any] = dict(window=4, episode_jobs=40, backfill="easy", reward="wait")
    vec = SchedulingVecEnv(3, busy_trace, "mesh:16x8", "fsl", threads=2, **kwargs)
    ref = SyncVectorEnv([lambda: SchedulingEnv(busy_trace, "mesh:16x8", "fsl", **kwargs) for _ in range(3)])
    ended = lockstep(vec, ref, 200, seed=3)
    assert ended and any((info["episode"]["mean_wait"] > 0).any() for info in ended)


def test_equals_sync_vector_env_on_a_generated_workload() -> None:
    kwargs: Dict[str, Any] = dict(workload={"load": 0.9}, window=5, episode_jobs=30, reward="utilization")
    vec = SchedulingVecEnv(4, None, "hypercube:6", "buddy", **kwargs)
    ref = SyncVectorEnv([lambda: SchedulingEnv(None, "hypercube:6", "buddy", **kwargs) for _ in range(4)])
    assert lockstep(vec, ref, 150, seed=11)


def test_env_i_is_a_single_env_seeded_seed_plus_i(small_trace: Path) -> None:
    n, seed = 4, 20
    vec = SchedulingVecEnv(n, small_trace, "hypercube:7", "multiple-gray-code", window=8, episode_jobs=60, threads=2)
    singles = [SchedulingEnv(small_trace, "hypercube:7", "multiple-gray-code", window=8, episode_jobs=60) for _ in range(n)]
    obs, info = vec.reset(seed=seed)
    for i, env in enumerate(singles):
        o, inf = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
    # Different seeds start from different offsets of the trace.
    assert len({obs[i].tobytes() for i in range(n)}) > 1
    rng = np.random.default_rng(0)
    done = np.zeros(n, dtype=bool)
    while not done.all():
        actions = sample_masked(info["action_mask"], rng)
        obs, rew, term, trunc, info = vec.step(actions)
        for i, env in enumerate(singles):
            if done[i]:
                continue
            o, r, t, tr, inf = env.step(int(actions[i]))
            assert obs[i].tobytes() == o.tobytes()
            assert rew[i] == r and term[i] == t and trunc[i] == tr
            np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
            if t:
                assert info["_episode"][i]
                assert {k: v[i] for k, v in info["episode"].items() if not k.startswith("_")} == inf["episode"]
                np.testing.assert_array_equal(vec.completed_jobs(i), env.completed_jobs())
        done |= term


def test_thread_count_does_not_change_results(small_trace: Path) -> None:
    runs = []
    for threads in (1, 2, 4):
        vec = SchedulingVecEnv(7, small_trace, "hypercube:7", "buddy", window=8, episode_jobs=50, threads=threads)
        rng = np.random.default_rng(5)
        vec.reset(seed=1)
        trail = []
        for _ in range(200):
            obs, rew, term = vec.step_fast(sample_masked(vec.action_masks_view(), rng))
            trail.append((obs.tobytes(), rew.tobytes(), term.tobytes()))
        runs.append(trail)
    assert runs[0] == runs[1] == runs[2]


def test_spaces_shapes_and_next_step_autoreset(small_trace: Path) -> None:
    n, k = 3, 5
    vec = SchedulingVecEnv(n, small_trace, "hypercube:7", "buddy", window=k, episode_jobs=10)
    assert vec.single_action_space == Discrete(k + 1)
    assert vec.action_space == MultiDiscrete([k + 1] * n)
    assert isinstance(vec.observation_space, Box) and vec.observation_space.shape == (n, 5 * k + 4)
    obs, info = vec.reset(seed=0)
    assert obs.dtype == np.float32 and vec.observation_space.contains(obs)
    assert info["action_mask"].shape == (n, k + 1) and info["action_mask"].dtype == np.bool_
    rng = np.random.default_rng(1)
    autoresets = 0
    term = np.zeros(n, dtype=bool)
    for _ in range(200):
        before = term.copy()
        # Actions of environments that just ended are ignored: even an
        # out-of-range one.
        actions = np.where(before, 10**6, sample_masked(vec.action_masks(), rng))
        obs, rew, term, trunc, info = vec.step(actions)
        assert vec.observation_space.contains(obs)
        assert rew.dtype == np.float64 and term.dtype == np.bool_ and not trunc.any()
        for i in np.flatnonzero(before):
            # The reset step: reward 0, not ended, a fresh episode.
            assert rew[i] == 0 and not term[i]
            assert vec.stats(i)["decisions"] == 0 and vec.stats(i)["completed"] == 0
            autoresets += 1
    assert autoresets >= n


def test_masks_allow_only_valid_actions(busy_trace: Path) -> None:
    n, k = 4, 8
    vec = SchedulingVecEnv(n, busy_trace, "hypercube:7", "buddy", window=k, episode_jobs=200)
    _, info = vec.reset(seed=2)
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(300):
        mask, obs = info["action_mask"], vec._obs
        chosen = np.full(n, k)
        expected = {}
        for i in range(n):
            waiting = vec.waiting_jobs(i)
            slots = obs[i, : 5 * k].reshape(k, 5)
            for j in range(k):
                # A job slot is valid exactly when a job is there and the
                # allocator can place it now.
                assert mask[i, j] == (j < len(waiting) and slots[j, 4] == 1)
            valid = np.flatnonzero(mask[i, :k])
            if valid.size:
                chosen[i] = rng.choice(valid)
                expected[i] = waiting[chosen[i]]["id"]
        _, _, term, _, info = vec.step(chosen)
        for i, job in expected.items():
            if not term[i]:
                # The chosen valid job started: it waits no more.
                assert job not in {w["id"] for w in vec.waiting_jobs(i)}
                checked += 1
    assert checked > 100


def test_bad_arguments_are_value_errors(small_trace: Path) -> None:
    for kwargs, message in [
        (dict(num_envs=0), "num_envs"),
        (dict(num_envs=2, threads=0), "threads"),
        (dict(num_envs=2, window=0), "window"),
        (dict(num_envs=2, reward="speed"), "reward"),
        (dict(num_envs=2, backfill="conservative"), "backfill"),
        (dict(num_envs=2, allocator="no-such-strategy"), "no-such-strategy"),
    ]:
        args = dict(trace=small_trace, topology="hypercube:7", allocator="buddy")
        args.update(kwargs)
        with pytest.raises(ValueError, match=message):
            SchedulingVecEnv(**args)
    with pytest.raises(ValueError, match="more than 1048576"):
        SchedulingVecEnv(2**40, small_trace)
    with pytest.raises(TypeError, match="num_envs"):
        SchedulingVecEnv(2.5, small_trace)
    with pytest.raises(TypeError, match="windw"):
        SchedulingVecEnv(2, small_trace, windw=4)
    vec = SchedulingVecEnv(2, small_trace, "hypercube:7", "buddy", window=4, episode_jobs=20)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="seeds"):
        vec.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="negative"):
        vec.reset(seed=[1, -2])
    obs, _ = vec.reset(seed=0)
    stats = [vec.stats(i) for i in range(2)]
    for bad in ([0, 5], [-1, 0]):
        with pytest.raises(ValueError, match="out of range"):
            vec.step(np.array(bad))
    # Nothing was stepped.
    assert [vec.stats(i) for i in range(2)] == stats
    np.testing.assert_array_equal(vec._obs, obs)
    with pytest.raises(ValueError, match="environment 2"):
        vec.stats(2)


def test_topology_obs_is_off_by_default_and_appends_one_value_per_size(busy_trace: Path) -> None:
    k = 6
    plain = SchedulingVecEnv(3, busy_trace, "hypercube:7", "buddy", window=k, episode_jobs=100)
    topo = SchedulingVecEnv(3, busy_trace, "hypercube:7", "buddy", window=k, episode_jobs=100, topology_obs=True)
    assert plain.level_sizes == [] and plain.single_observation_space.shape == (5 * k + 4,)
    assert topo.level_sizes == [128, 64, 32, 16, 8, 4, 2, 1]
    assert topo.single_observation_space.shape == (5 * k + 4 + 8,)
    assert (topo.single_observation_space.high[5 * k + 4 :] == 1).all()
    rng = np.random.default_rng(8)
    o1, i1 = plain.reset(seed=4)
    o2, i2 = topo.reset(seed=4)
    seen = set()
    for _ in range(300):
        # The usual features are the same, bit for bit.
        np.testing.assert_array_equal(o1, o2[:, : 5 * k + 4])
        np.testing.assert_array_equal(i1["action_mask"], i2["action_mask"])
        levels = o2[:, 5 * k + 4 :]
        for i in range(3):
            free = topo.stats(i)["free_nodes"]
            lv = levels[i]
            # One-node partitions: the free fraction; the whole machine: free or not.
            assert lv[-1] == np.float32(free / 128)
            assert lv[0] == (1.0 if free == 128 else 0.0)
            # Buddy blocks nest: a free block of 2^j nodes is two free halves.
            assert (np.diff(lv) >= 0).all()
            # The largest placeable request is the largest size with a free block.
            largest = o2[i, 5 * k + 1] * 128
            assert largest == max([s for s, v in zip(topo.level_sizes, lv) if v > 0], default=0)
            seen.add(tuple(lv))
        actions = sample_masked(i1["action_mask"], rng)
        o1, *_, i1 = plain.step(actions)
        o2, *_, i2 = topo.step(actions)
    # The machine went through many different fragmentations.
    assert len(seen) > 20


def test_topology_obs_single_env_matches_and_needs_a_listing_strategy(small_trace: Path) -> None:
    env = SchedulingEnv(small_trace, "mesh:16x8", "first-fit", window=4, episode_jobs=50, topology_obs=True)
    vec = SchedulingVecEnv(2, small_trace, "mesh:16x8", "first-fit", window=4, episode_jobs=50, topology_obs=True)
    assert env.level_sizes == vec.level_sizes == [128, 64, 32, 16, 8, 4, 2, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)
    o, _ = env.reset(seed=9)
    ov, _ = vec.reset(seed=8)
    np.testing.assert_array_equal(ov[1], o)
    for bad in ("random",):
        with pytest.raises(ValueError, match="topology_obs=True needs a strategy that lists its partitions"):
            SchedulingVecEnv(2, small_trace, "hypercube:7", bad, mapping="nodes", topology_obs=True)


def test_a_python_allocator_runs_on_the_threads_and_its_errors_surface(small_trace: Path) -> None:
    from test_custom import Boom, LowestFree

    kwargs: Dict[str, Any] = dict(window=6, episode_jobs=30, mapping="nodes")
    vec = SchedulingVecEnv(4, small_trace, "hypercube:7", LowestFree, threads=2, **kwargs)
    ref = SyncVectorEnv([lambda: SchedulingEnv(small_trace, "hypercube:7", "paging", **kwargs) for _ in range(4)])
    # The Python strategy, called from the pool's threads, gives the
    # built-in paging's run.
    assert lockstep(vec, ref, 120, seed=5)

    class FailsLate(LowestFree):
        def release(self, nodes: List[int]) -> None:
            raise Boom("late")

    vec = SchedulingVecEnv(3, small_trace, "hypercube:7", FailsLate, threads=2, **kwargs)
    with pytest.raises(Boom, match="late"):
        vec.reset(seed=0)
        for _ in range(1000):
            vec.step(sample_masked(vec.action_masks(), np.random.default_rng(0)))


def test_gymnasium_vector_wrappers_read_the_autoreset_mode_and_rewards(small_trace: Path) -> None:
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    n = 3
    vec = SchedulingVecEnv(n, small_trace, "hypercube:7", "buddy", window=6, episode_jobs=40, per_step=True)
    with warnings.catch_warnings():
        # No warning about a missing or unknown autoreset mode.
        warnings.simplefilter("error")
        env = RecordEpisodeStatistics(vec, stats_key="returns")
        _, info = env.reset(seed=0)
        rng = np.random.default_rng(2)
        episodes = 0
        for _ in range(400):
            _, _, term, _, info = env.step(sample_masked(info["action_mask"], rng))
            for i in np.flatnonzero(term):
                # Per-step slowdown rewards add up to minus the episode's
                # mean bounded slowdown; the length is its decisions.
                ours = info["episode"]
                assert info["returns"]["l"][i] == ours["decisions"][i]
                assert np.isclose(info["returns"]["r"][i], -ours["mean_bounded_slowdown"][i], rtol=1e-9)
                episodes += 1
    assert episodes >= n


def test_copy_true_returns_fresh_arrays_and_copy_false_the_buffers(small_trace: Path) -> None:
    results = {}
    for copy in (True, False):
        vec = SchedulingVecEnv(2, small_trace, "hypercube:7", "buddy", window=4, episode_jobs=30, copy=copy)
        obs0, info = vec.reset(seed=0)
        kept = obs0.copy()
        obs1, rew1, *_ = vec.step(sample_masked(info["action_mask"], np.random.default_rng(0)))
        obs2, rew2, *_ = vec.step(sample_masked(vec.action_masks(), np.random.default_rng(1)))
        results[copy] = (obs0, obs1, obs2, rew1, rew2, kept)
    obs0, obs1, obs2, rew1, rew2, kept = results[True]
    # Copies: what a step returned stays as it was.
    assert not np.shares_memory(obs1, obs2) and not np.shares_memory(rew1, rew2)
    np.testing.assert_array_equal(obs0, kept)
    obs0, obs1, obs2, rew1, rew2, kept = results[False]
    # Buffers: every call returns the same memory, overwritten in place.
    assert np.shares_memory(obs0, obs1) and np.shares_memory(obs1, obs2) and np.shares_memory(rew1, rew2)
    assert not np.array_equal(obs0, kept)
