"""Placement choice in the Gymnasium environment (``placements=P``): the
candidates and their features on a hand-worked mesh, an agent taking the
first candidate placing as the strategy would, honest masks, the vector
environment equal to Gymnasium's, bad settings refused."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env, data_equivalence  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

from partalloc.gym import SchedulingEnv, SchedulingVecEnv, sample_masked  # noqa: E402

JOB, MACHINE, PLACE = 5, 4, 3


def one_job_trace(tmp_path: Path, nodes: int) -> Path:
    """A one-job SWF trace asking for ``nodes`` processors."""
    p = tmp_path / "one.swf"
    p.write_text(f"1 0 0 10 {nodes} -1 -1 {nodes} 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    return p


def test_candidates_and_their_features_on_a_hand_worked_mesh(tmp_path: Path) -> None:
    # One 2x2 job on an empty 4x4 mesh, first fit, three choices.
    env = SchedulingEnv(one_job_trace(tmp_path, 4), "mesh:4x4", "first-fit", window=2, placements=3)
    assert (env.placements, env.wait_action, env.action_space.n) == (3, 6, 7)
    assert env.observation_space.shape == (2 * JOB + MACHINE + 2 * 3 * PLACE,)
    obs, info = env.reset(seed=0)
    mask = info["action_mask"]
    # Slot 0 has three free candidates, slot 1 no job; no event is left
    # to wait for.
    np.testing.assert_array_equal(mask, [1, 1, 1, 0, 0, 0, 0])
    place = obs[2 * JOB + MACHINE :].reshape(2, 3, PLACE)
    # First fit's order: the boxes at <0,0>, <1,0>, <2,0>.
    # <0,0>: 4 links leave it, 4 are missing at the corner: contact 4/8.
    # <1,0>: 6 links leave it, 2 are missing at the bottom edge: 2/8.
    # <2,0>: the other bottom corner, 4/8. Positions: lowest ids 0, 1, 2
    # of 16.
    np.testing.assert_allclose(place[0], [[1, 0.5, 0], [1, 0.25, 1 / 16], [1, 0.5, 2 / 16]])
    np.testing.assert_array_equal(place[1], 0)
    # The third candidate, not first fit's own choice: the only job
    # starts at once, and the episode runs to its end.
    _, _, done, _, _ = env.step(2)
    jobs = env.completed_jobs()
    assert done and list(jobs["id"]) == [1] and list(jobs["start"]) == [0.0]


def test_contact_counts_busy_neighbours(tmp_path: Path) -> None:
    # Two 1-node jobs on a 1x4 line: once the first sits at node 1, the
    # second's candidates are nodes 0, 2, 3. Node 0 has one link (to the
    # busy node 1) and one missing at the edge: contact 1. Node 2: one of
    # two links busy: 1/2. Node 3: one missing, one to free node 2: 1/2.
    p = tmp_path / "two.swf"
    p.write_text(
        "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n2 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    env = SchedulingEnv(p, "mesh:4x1", "first-fit", window=2, placements=3)
    obs, _ = env.reset(seed=0)
    place = obs[2 * JOB + MACHINE :].reshape(2, 3, PLACE)
    np.testing.assert_allclose(place[0][:, 1], [0.5, 0, 0])
    obs, _, _, _, info = env.step(1)  # job 1 on node 1
    place = obs[2 * JOB + MACHINE :].reshape(2, 3, PLACE)
    np.testing.assert_allclose(place[0], [[1, 1, 0], [1, 0.5, 0.5], [1, 0.5, 0.75]])
    np.testing.assert_array_equal(info["action_mask"], [1, 1, 1, 0, 0, 0, 1])


def first_candidate_starts(env: SchedulingEnv) -> np.ndarray:
    """An episode that starts the oldest job on its first candidate when
    it has one, else waits; the start times by job id."""
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(0 if env.action_masks()[0] else env.wait_action)
    return np.sort(env.completed_jobs(), order="id")["start"]


@pytest.mark.parametrize(
    "topology, allocator",
    [("hypercube:7", "buddy"), ("mesh:16x8", "first-fit")],
)
def test_the_first_candidate_is_the_strategys_own_choice(busy_trace: Path, topology: str, allocator: str) -> None:
    # For these strategies the first free partition in their search order
    # is what they grant: taking candidate 0 of the oldest job is FCFS,
    # start for start, as the environment without placements.
    plain = SchedulingEnv(busy_trace, topology, allocator, window=8)
    placed = SchedulingEnv(busy_trace, topology, allocator, window=8, placements=4)
    a, b = first_candidate_starts(plain), first_candidate_starts(placed)
    assert len(a) == 500
    np.testing.assert_array_equal(a, b)


def started(env: SchedulingEnv) -> int:
    s = env.stats()
    return s["running"] + s["completed"]


@pytest.mark.parametrize(
    "topology, allocator",
    [("mesh:16x8", "fsl"), ("mesh:16x8", "frame-sliding"), ("mesh:16x16", "buddy-2d"), ("hypercube:7", "buddy")],
)
def test_every_valid_choice_starts_its_job_and_the_episode_ends(
    busy_trace: Path, topology: str, allocator: str
) -> None:
    env = SchedulingEnv(busy_trace, topology, allocator, window=6, placements=3, episode_jobs=200)
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=1)
    done, steps, choices = False, 0, set()
    while not done:
        mask = info["action_mask"]
        assert env.observation_space.contains(obs)
        place = obs[6 * JOB + MACHINE :].reshape(6, 3, PLACE)
        # The mask marks exactly the candidates present in the observation.
        np.testing.assert_array_equal(mask[:-1], place[:, :, 0].reshape(-1) == 1)
        valid = np.flatnonzero(mask[:-1])
        assert len(valid) > 0 or mask[-1]
        if len(valid) > 0:
            a = int(rng.choice(valid))
            choices.add(a % 3)
            before = started(env)
            obs, _, done, _, info = env.step(a)
            assert started(env) == before + 1
        else:
            obs, _, done, _, info = env.step(env.wait_action)
        steps += 1
    assert env.stats()["completed"] == 200
    assert choices == {0, 1, 2}


def test_gymnasium_check_env_passes(small_trace: Path) -> None:
    env = SchedulingEnv(small_trace, "mesh:16x8", "fsl", window=4, episode_jobs=50, placements=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)


def test_the_vector_env_equals_sync_vector_env_with_placements(small_trace: Path) -> None:
    kwargs: Dict[str, Any] = dict(window=5, episode_jobs=30, per_step=True, placements=3, topology_obs=True)
    n = 4
    vec = SchedulingVecEnv(n, small_trace, "mesh:16x8", "fsl", threads=2, **kwargs)
    ref = SyncVectorEnv(
        [lambda: SchedulingEnv(small_trace, "mesh:16x8", "fsl", **kwargs) for _ in range(n)],
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    assert vec.single_action_space == ref.single_action_space
    assert vec.single_observation_space == ref.single_observation_space
    assert (vec.window, vec.placements, vec.wait_action) == (5, 3, 15)
    rng = np.random.default_rng(2)
    obs_a, info_a = vec.reset(seed=3)
    obs_b, _ = ref.reset(seed=3)
    assert data_equivalence(obs_a, obs_b, exact=True)
    for t in range(300):
        actions = sample_masked(info_a["action_mask"], rng)
        out_a, out_b = vec.step(actions), ref.step(actions)
        for name, x, y in zip(("obs", "reward", "terminated", "truncated", "info"), out_a, out_b):
            assert data_equivalence(x, y, exact=True), f"step {t}: {name} differs"
        info_a = out_a[4]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(allocator="buddy", placements=0), "at least 1"),
        (dict(allocator="buddy", placements=10**8), "more than 1048576 choices"),
        (dict(allocator="buddy", window=10**9), "more than 65536 jobs"),
        (dict(allocator="buddy", placements=2, backfill="easy"), 'backfill="none"'),
        (dict(allocator="paging", placements=2, mapping="nodes"), "lists of nodes"),
        (dict(allocator="buddy-free-list", placements=2), "grants a chosen partition"),
    ],
)
def test_bad_settings_are_value_errors(small_trace: Path, kwargs: Dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SchedulingEnv(small_trace, "hypercube:7", **kwargs)
