"""The Gymnasium environment: Gymnasium's own checker, masks that agree
with the allocator, full episodes, rewards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import partalloc as pa  # noqa: E402
from partalloc.gym import SchedulingEnv  # noqa: E402


def test_gymnasium_check_env(small_trace: Path) -> None:
    env = SchedulingEnv(small_trace, "hypercube:7", "buddy", window=8, episode_jobs=100)
    check_env(env, skip_render_check=True)
    env = SchedulingEnv(small_trace, "mesh:16x8", "fsl", window=4, reward="utilization", per_step=True)
    check_env(env, skip_render_check=True)


def run_episode(env: SchedulingEnv, policy, seed: int = 0):
    obs, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        mask = env.action_masks()
        assert mask.any()
        np.testing.assert_array_equal(mask, info["action_mask"])
        a = policy(obs, mask)
        assert mask[a]
        obs, r, done, truncated, info = env.step(a)
        assert not truncated and env.observation_space.contains(obs)
        total += r
        steps += 1
    return total, steps, info["episode"]


def fcfs(env: SchedulingEnv):
    k = env.window

    def policy(obs, mask):
        # Start the oldest job when it can start, else wait: plain FCFS.
        return 0 if mask[0] else k

    return policy


def test_a_full_fcfs_episode_equals_the_run_loops_fcfs(small_trace: Path) -> None:
    env = SchedulingEnv(small_trace, "hypercube:7", "buddy", window=16, reward="wait")
    total, steps, stats = run_episode(env, fcfs(env))
    summary, records = pa.simulate("hypercube:7", "buddy", "fcfs", trace=small_trace)
    assert stats["completed"] == stats["episode_jobs"] == 500
    assert stats["waiting"] == stats["running"] == 0
    assert stats["mean_wait"] == pytest.approx(records["wait"].mean(), rel=1e-12)
    assert total == pytest.approx(-records["wait"].mean(), rel=1e-12)
    assert stats["utilization"] == pytest.approx(summary["replications"][0]["utilization"], rel=1e-9)
    assert steps == stats["decisions"] >= 500


def test_masks_agree_with_the_allocator(small_trace: Path) -> None:
    env = SchedulingEnv(small_trace, "hypercube:7", "buddy", window=8)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    k = env.window
    for _ in range(300):
        mask = env.action_masks()
        rows = obs[: k * 5].reshape(k, 5)
        # Feature 4 is "placeable now", the mask of that slot.
        np.testing.assert_array_equal(rows[:, 4] > 0, mask[:k])
        assert (rows[:, 0] > 0).sum() >= mask[:k].sum()
        free, largest, frag = obs[k * 5 : k * 5 + 3]
        assert 0 <= largest <= free <= 1 and 0 <= frag <= 1
        # A placeable job never needs more than the largest placeable request.
        assert all(rows[i, 1] <= largest + 1e-6 for i in range(k) if mask[i])
        valid = np.flatnonzero(mask)
        obs, r, done, _, _ = env.step(int(rng.choice(valid)))
        if done:
            break


def test_rewards_per_step_add_up_to_the_episode_value(small_trace: Path) -> None:
    sjf_totals = {}
    for per_step in (False, True):
        env = SchedulingEnv(small_trace, "hypercube:7", "buddy", reward="slowdown", per_step=per_step)
        total, _, stats = run_episode(env, fcfs(env))
        sjf_totals[per_step] = total
        assert total == pytest.approx(-stats["mean_bounded_slowdown"], rel=1e-9)
    env = SchedulingEnv(small_trace, "hypercube:7", "buddy", reward="utilization", per_step=True)
    total, _, stats = run_episode(env, fcfs(env))
    assert total == pytest.approx(1 - 1 / stats["utilization"], rel=1e-9)


def test_episodes_from_the_same_seed_are_identical(small_trace: Path) -> None:
    def sample(seed):
        env = SchedulingEnv(small_trace, "hypercube:7", "buddy", episode_jobs=200)
        rng = np.random.default_rng(7)
        obs, _ = env.reset(seed=seed)
        seen = [obs]
        done = False
        while not done:
            obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            seen.append(obs)
        return np.array(seen), env.stats()

    a, sa = sample(3)
    b, sb = sample(3)
    np.testing.assert_array_equal(a, b)
    assert sa == sb and sa["completed"] == 200


def test_bad_settings_raise(small_trace: Path) -> None:
    with pytest.raises(ValueError, match='reward "fast"'):
        SchedulingEnv(small_trace, reward="fast")
    with pytest.raises(ValueError, match="unknown allocation strategy"):
        SchedulingEnv(small_trace, allocator="nope")
    with pytest.raises(ValueError, match="window must be at least 1"):
        SchedulingEnv(small_trace, window=0)
    env = SchedulingEnv(small_trace)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_generated_workload_episodes_follow_the_seed() -> None:
    workload = {"load": 0.7, "shapes": "sides", "max_sides": "8x8"}
    env = SchedulingEnv(None, "mesh:16x16", "fsl", workload=workload, episode_jobs=300, reward="wait")
    check_env(env, skip_render_check=True)
    total, _, stats = run_episode(env, fcfs(env), seed=5)
    assert stats["completed"] == 300
    again, _, _ = run_episode(env, fcfs(env), seed=5)
    other, _, _ = run_episode(env, fcfs(env), seed=6)
    assert total == again != other
    assert total == pytest.approx(-stats["mean_wait"], rel=1e-12) and total < 0
    with pytest.raises(ValueError, match="not both"):
        SchedulingEnv("x.swf", workload=workload)
