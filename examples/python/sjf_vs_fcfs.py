"""A heuristic agent against FCFS on the NASA iPSC/860 trace.

Both run in partalloc.gym.SchedulingEnv on the 128-node hypercube with the
buddy strategy: FCFS starts the oldest waiting job when it fits and waits
otherwise; shortest job first (SJF) starts, among the window jobs that the
action mask says can be placed now, the one with the shortest requested
time. The same FCFS agent with backfill="easy" (a chosen job that cannot
start is reserved and the others backfill around it) is EASY backfilling.
Run from the repository root after `pip install ./crates/python`:

    python examples/python/sjf_vs_fcfs.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import partalloc
from partalloc.gym import SchedulingEnv

TRACE = Path(__file__).resolve().parents[2] / "data" / "traces" / "NASA-iPSC-1993-3.1-cln.swf"
WINDOW = 16
FEATURES = 5  # per window slot: present, nodes, requested time, wait, placeable


def fcfs(obs: np.ndarray, mask: np.ndarray) -> int:
    return 0 if mask[0] else WINDOW


def sjf(obs: np.ndarray, mask: np.ndarray) -> int:
    placeable = np.flatnonzero(mask[:WINDOW])
    if len(placeable) == 0:
        return WINDOW
    requested = obs[: WINDOW * FEATURES].reshape(WINDOW, FEATURES)[:, 2]
    return int(placeable[np.argmin(requested[placeable])])


def episode(policy, backfill: str = "none") -> dict:
    env = SchedulingEnv(TRACE, "hypercube:7", "buddy", window=WINDOW, reward="slowdown", backfill=backfill)
    obs, info = env.reset(seed=0)
    done = False
    start = time.perf_counter()
    while not done:
        obs, reward, done, _, info = env.step(policy(obs, info["action_mask"]))
    stats = info["episode"]
    stats["reward"] = reward
    stats["seconds"] = time.perf_counter() - start
    return stats


def main() -> int:
    rows = {
        "FCFS": episode(fcfs),
        "SJF (masked)": episode(sjf),
        "FCFS + EASY": episode(fcfs, backfill="easy"),
    }
    print(f"NASA iPSC/860 trace, {rows['FCFS']['completed']} jobs, hypercube:7, buddy")
    print(f"{'agent':<14} {'bounded slowdown':>16} {'mean wait (s)':>14} {'utilization':>11} {'decisions':>9}")
    for name, s in rows.items():
        print(
            f"{name:<14} {s['mean_bounded_slowdown']:>16.2f} {s['mean_wait']:>14.1f} "
            f"{s['utilization']:>11.4f} {s['decisions']:>9}"
        )
    # FCFS in the environment is the simulator's own FCFS, and with
    # backfilling its own EASY backfilling.
    for policy in ("fcfs", "easy-backfilling"):
        summary, jobs = partalloc.simulate("hypercube:7", "buddy", policy, trace=TRACE)
        print(f"simulate(..., {policy!r}) mean wait: {jobs['wait'].mean():.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
