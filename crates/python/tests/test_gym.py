"""The Gymnasium environment: Gymnasium's own checker, masks that agree
with the allocator, full episodes, rewards, backfilling."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import partalloc as pa  # noqa: E402
from partalloc.gym import SchedulingEnv  # noqa: E402


def check_quietly(env: SchedulingEnv) -> None:
    """Gymnasium's checker, as is (render modes included), with any warning
    it gives (an infinite or unreasonable bound, a bad dtype, no spec to
    test the other render modes with, …) raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)


def test_gymnasium_check_env(small_trace: Path) -> None:
    for backfill in ("none", "easy"):
        env = SchedulingEnv(small_trace, "hypercube:7", "buddy", window=8, episode_jobs=100, backfill=backfill)
        check_quietly(env)
    env = SchedulingEnv(small_trace, "mesh:16x8", "fsl", window=4, reward="utilization", per_step=True)
    check_quietly(env)


def test_registered_id_makes_the_environment_and_check_env_gives_no_warning(small_trace: Path) -> None:
    from partalloc.gym import ENV_ID

    assert ENV_ID == "partalloc/Scheduling-v0" and ENV_ID in gym.registry
    kwargs = dict(trace=str(small_trace), topology="hypercube:7", allocator="buddy", window=8, episode_jobs=100)
    made = gym.make(ENV_ID, **kwargs)
    assert isinstance(made.unwrapped, SchedulingEnv)
    assert made.unwrapped.spec.id == ENV_ID
    direct = SchedulingEnv(**kwargs)
    assert direct.spec.id == ENV_ID and direct.spec.kwargs["window"] == 8
    # Both as made and as constructed, the same episode.
    a, _ = made.reset(seed=3)
    b, _ = direct.reset(seed=3)
    assert np.array_equal(a, b)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(made.unwrapped)
        check_env(direct)
        check_env(SchedulingEnv(**kwargs, render_mode="ansi"))
    assert [str(w.message) for w in caught] == []
    # The spec makes the environment again in the other render mode.
    again = direct.spec.make(render_mode="ansi")
    again.reset(seed=0)
    assert again.render().startswith("t=")


def test_observation_bounds_are_finite_and_hold(small_trace: Path) -> None:
    k = 8
    env = SchedulingEnv(small_trace, "hypercube:7", "buddy", window=k, backfill="easy")
    space = env.observation_space
    assert np.isfinite(space.high).all() and (space.low == 0).all()
    high = space.high
    # Fractions and flags are bounded by 1, the queue by the episode over the window.
    np.testing.assert_array_equal(high[: k * 5].reshape(k, 5)[:, [0, 1, 4]], 1)
    np.testing.assert_array_equal(high[k * 5 :], [1, 1, 1, 500 / k])
    # One time bound for both time features of every slot.
    rows = high[: k * 5].reshape(k, 5)
    cap = rows[0, 2]
    assert (rows[:, 2:4] == cap).all() and cap > 1
    # Random choices let jobs wait long; every observation stays in bounds.
    rng = np.random.default_rng(3)
    obs, _ = env.reset(seed=0)
    done, longest = False, 0.0
    while not done:
        assert space.contains(obs)
        longest = max(longest, obs[: k * 5].reshape(k, 5)[:, 3].max())
        obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert 0 < longest < cap


def fcfs_agent_start_times(env: SchedulingEnv) -> np.ndarray:
    """Runs an episode choosing the first waiting job whenever that is
    valid (else waiting); returns the start times by job id."""
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(0 if env.action_masks()[0] else env.window)
    jobs = np.sort(env.completed_jobs(), order="id")
    return jobs["start"]


@pytest.mark.parametrize(
    "topology, allocator, mapping",
    [("hypercube:7", "buddy", "shapes"), ("mesh:16x8", "fsl", "shapes"), ("hypercube:7", "paging", "nodes")],
)
@pytest.mark.parametrize("busy", [False, True])
def test_a_first_job_agent_is_fcfs_without_backfilling_and_easy_with_it(
    small_trace: Path, busy_trace: Path, busy: bool, topology: str, allocator: str, mapping: str
) -> None:
    trace = busy_trace if busy else small_trace
    by_policy = {}
    for policy in ("fcfs", "easy-backfilling"):
        _, records = pa.simulate(topology, allocator, policy, trace=trace, mapping=mapping)
        order = np.argsort(records["id"])
        by_policy[policy] = np.asarray(records["start"])[order]
    if busy:
        # The policies differ on the busy trace, so the comparison shows
        # that the environment backfills, and backfills as EASY does.
        assert (by_policy["fcfs"] != by_policy["easy-backfilling"]).sum() > 100
    for backfill, policy in (("none", "fcfs"), ("easy", "easy-backfilling")):
        env = SchedulingEnv(trace, topology, allocator, window=8, backfill=backfill, mapping=mapping)
        starts = fcfs_agent_start_times(env)
        assert len(starts) == 500
        # Bit for bit: the same floating-point start time for every job.
        np.testing.assert_array_equal(starts, by_policy[policy])


def test_with_backfilling_a_blocked_choice_is_reserved_and_others_backfill(busy_trace: Path) -> None:
    env = SchedulingEnv(busy_trace, "hypercube:7", "buddy", window=8, backfill="easy")
    obs, _ = env.reset(seed=0)
    k = env.window
    seen_blocked = False
    done = False
    while not done:
        rows = obs[: k * 5].reshape(k, 5)
        mask = env.action_masks()
        # Every present window job is a valid choice, placeable or not.
        np.testing.assert_array_equal(mask[:k], rows[:, 0] > 0)
        blocked = np.flatnonzero((rows[:, 0] > 0) & (rows[:, 4] == 0))
        if len(blocked) and not seen_blocked:
            seen_blocked = True
            before = env.stats()
            obs, _, done, _, _ = env.step(int(blocked[0]))
            after = env.stats()
            # The reserved job still waits, and time has moved on.
            assert after["time"] > before["time"]
            continue
        obs, _, done, _, _ = env.step(0)
    assert seen_blocked and env.stats()["completed"] == 500
    with pytest.raises(ValueError, match='backfill "conservative"'):
        SchedulingEnv(busy_trace, backfill="conservative")


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
    check_quietly(env)
    assert np.isfinite(env.observation_space.high).all()
    total, _, stats = run_episode(env, fcfs(env), seed=5)
    assert stats["completed"] == 300
    again, _, _ = run_episode(env, fcfs(env), seed=5)
    other, _, _ = run_episode(env, fcfs(env), seed=6)
    assert total == again != other
    assert total == pytest.approx(-stats["mean_wait"], rel=1e-12) and total < 0
    with pytest.raises(ValueError, match="not both"):
        SchedulingEnv("x.swf", workload=workload)


class SmallestFirst:
    """The waiting job needing the fewest nodes first (oldest on ties)."""

    def __init__(self, topology: pa.Topology) -> None:
        self.nodes = topology.num_nodes

    def choose(self, waiting, free_nodes, now):
        assert 0 <= free_nodes <= self.nodes and now >= 0
        return min(range(len(waiting)), key=lambda i: (waiting[i]["nodes"], i))


class OldestThatFits:
    """The oldest waiting job that fits the free nodes; else nothing."""

    def __init__(self, topology: pa.Topology) -> None:
        pass

    def choose(self, waiting, free_nodes, now):
        return next((i for i, j in enumerate(waiting) if j["nodes"] <= free_nodes), None)


@pytest.mark.parametrize("policy", [SmallestFirst, OldestThatFits])
def test_a_python_policy_as_the_agent_starts_jobs_as_simulate_does(busy_trace: Path, policy: type) -> None:
    from partalloc.gym import PolicyAgent

    _, records = pa.simulate("hypercube:7", "buddy", policy, trace=busy_trace)
    want = np.asarray(records["start"])[np.argsort(records["id"])]
    _, fcfs = pa.simulate("hypercube:7", "buddy", "fcfs", trace=busy_trace)
    # The policy schedules differently from FCFS on this trace.
    assert (np.asarray(fcfs["start"])[np.argsort(fcfs["id"])] != want).sum() > 50
    # A window the busy trace's queue never outgrows.
    env = SchedulingEnv(busy_trace, "hypercube:7", "buddy", window=500)
    agent = PolicyAgent(policy, env)
    obs, _ = env.reset(seed=0)
    done, longest = False, 0
    while not done:
        waiting = env.waiting_jobs()
        longest = max(longest, len(waiting))
        # The waiting jobs are the observation's slots, in order.
        rows = obs[: env.window * 5].reshape(env.window, 5)
        assert int(rows[:, 0].sum()) == len(waiting)
        np.testing.assert_allclose(rows[: len(waiting), 1] * 128, [j["nodes"] for j in waiting], rtol=1e-6)
        obs, _, done, _, _ = env.step(agent.act(env))
    got = np.sort(env.completed_jobs(), order="id")["start"]
    np.testing.assert_array_equal(got, want)
    assert longest > 8


def test_a_policy_agent_refuses_what_it_cannot_run(busy_trace: Path) -> None:
    from partalloc.gym import PolicyAgent

    env = SchedulingEnv(busy_trace, "hypercube:7", "buddy", window=2)
    with pytest.raises(TypeError, match="policy class"):
        PolicyAgent(SmallestFirst(pa.Topology("hypercube:7")), env)
    with pytest.raises(ValueError, match='backfill="none"'):
        PolicyAgent(SmallestFirst, SchedulingEnv(busy_trace, backfill="easy"))

    class Last:
        def __init__(self, topology):
            pass

        def choose(self, waiting, free_nodes, now):
            return len(waiting) - 1

    agent = PolicyAgent(Last, env)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="past the window of 2 jobs"):
        for _ in range(10_000):
            env.step(agent.act(env))
