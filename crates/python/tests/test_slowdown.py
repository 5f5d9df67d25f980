"""Bounded slowdown: a hand-computed trace through ``simulate``, the bound
as ``slowdown_bound=`` and its errors, and the Gymnasium environment's
slowdown reward equal to the run loop's ``mean_bounded_slowdown``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import partalloc as pa

# Three jobs on four nodes under FCFS: J1 (4 nodes, 20 s) runs 0-20; J2 (2
# nodes, 5 s, submitted at 0) and J3 (2 nodes, 40 s, submitted at 10) wait
# for it and run 20-25 and 20-60. With tau = 10 the bounded slowdowns are
# 20/20 = 1, 25/max(5, 10) = 2.5 and 50/40 = 1.25; with tau = 1, J2's is 5.
TRACE = """\
1 0 -1 20 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1
2 0 -1 5 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
3 10 -1 40 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
"""


@pytest.fixture()
def three_jobs(tmp_path: Path) -> Path:
    out = tmp_path / "three.swf"
    out.write_text(TRACE)
    return out


def mean_of(summary, name: str) -> float:
    return next(m["mean"] for m in summary["metrics"] if m["metric"] == name)


def test_three_jobs_by_hand(three_jobs: Path) -> None:
    summary, records = pa.simulate("mesh:2x2", "paging", "fcfs", trace=three_jobs, as_frame=False)
    assert list(records["bounded_slowdown"]) == [1.0, 2.5, 1.25]
    assert summary["replications"][0]["mean_bounded_slowdown"] == (1.0 + 2.5 + 1.25) / 3
    assert mean_of(summary, "mean_bounded_slowdown") == (1.0 + 2.5 + 1.25) / 3
    tight, records = pa.simulate(
        "mesh:2x2", "paging", "fcfs", trace=three_jobs, slowdown_bound=1.0, as_frame=False
    )
    assert list(records["bounded_slowdown"]) == [1.0, 5.0, 1.25]
    assert tight["replications"][0]["mean_bounded_slowdown"] == (1.0 + 5.0 + 1.25) / 3


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_bad_bounds_are_value_errors(three_jobs: Path, bad: float) -> None:
    with pytest.raises(ValueError, match=r"^slowdown_bound: slowdown bound .*") as e:
        pa.simulate("mesh:2x2", "paging", "fcfs", trace=three_jobs, slowdown_bound=bad)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bound", [1.0, 10.0, 60.0])
def test_the_environments_reward_is_the_run_loops_mean(busy_trace: Path, bound: float) -> None:
    gym = pytest.importorskip("gymnasium")  # noqa: F841
    from partalloc.gym import SchedulingEnv

    env = SchedulingEnv(busy_trace, "hypercube:7", "buddy", reward="slowdown", bound=bound)
    env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        # The oldest job when it can start, else wait: FCFS.
        _, r, done, _, info = env.step(0 if env.action_masks()[0] else env.window)
        total += r
    summary, records = pa.simulate(
        "hypercube:7", "buddy", "fcfs", trace=busy_trace, slowdown_bound=bound, as_frame=False
    )
    mean = summary["replications"][0]["mean_bounded_slowdown"]
    # The same per-job definition over the same starts (the episode's times
    # may be shifted, so equal to rounding).
    assert info["episode"]["mean_bounded_slowdown"] == pytest.approx(mean, rel=1e-12)
    assert total == pytest.approx(-mean, rel=1e-12)
    assert mean == pytest.approx(np.mean(records["bounded_slowdown"]), rel=1e-12)
    assert mean > 1.0
