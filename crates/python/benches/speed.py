"""Speed of the Python package on the NASA iPSC/860 trace (docs/performance.md).

1. simulate() against `partalloc simulate` (the release build of the tool,
   target/release/partalloc) for the same settings: median of 7 runs each,
   both reading the trace and simulating, with and without per-job records.
2. SchedulingEnv decisions per second with a random masked policy over the
   whole trace, through step() (Gymnasium's API, copies and info dict) and
   step_fast(), without backfilling and with EASY backfilling.

3. SchedulingVecEnv aggregate decisions per second with a vectorized
   random masked policy (one NumPy draw for all environments), for 64 and
   256 environments on 1 and 2 threads, through step_fast(); the load
   average is printed beside, as the machine may be shared.

Run from the repository root: python crates/python/benches/speed.py
(``--env`` measures the single environment only, ``--vec`` the vector
environment only).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import partalloc as pa
from partalloc.gym import SchedulingEnv, SchedulingVecEnv, sample_masked

ROOT = Path(__file__).resolve().parents[3]
TRACE = str(ROOT / "data" / "traces" / "NASA-iPSC-1993-3.1-cln.swf")
CLI = str(ROOT / "target" / "release" / "partalloc")


def median_ms(f, n: int = 7) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def simulate_vs_tool() -> None:
    for topo, alloc, sched in [
        ("hypercube:7", "buddy", "fcfs"),
        ("hypercube:7", "multiple-gray-code", "easy-backfilling"),
    ]:
        args = [CLI, "simulate", "-t", topo, "-a", alloc, "-s", sched, "--trace", TRACE]
        tool = median_ms(lambda: subprocess.run(args, check=True, capture_output=True))
        tool_jobs = median_ms(
            lambda: subprocess.run([*args, "--jobs-csv", "/tmp/partalloc-speed-jobs.csv"], check=True, capture_output=True)
        )
        py = median_ms(lambda: pa.simulate(topo, alloc, sched, trace=TRACE, records=False))
        py_jobs = median_ms(lambda: pa.simulate(topo, alloc, sched, trace=TRACE))
        print(
            f"{topo} {alloc} {sched}: tool {tool:.1f} ms, simulate {py:.1f} ms ({py / tool:.2f}x); "
            f"with records: tool --jobs-csv {tool_jobs:.1f} ms, simulate → DataFrame {py_jobs:.1f} ms ({py_jobs / tool_jobs:.2f}x)"
        )


def env_rate(fast: bool, backfill: str) -> None:
    env = SchedulingEnv(TRACE, "hypercube:7", "buddy", window=16, backfill=backfill)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    decisions, done = 0, False
    t0 = time.perf_counter()
    if fast:
        mask = env._mask
        while not done:
            valid = np.flatnonzero(mask)
            _, _, done = env.step_fast(int(valid[rng.integers(len(valid))]))
            decisions += 1
    else:
        mask = env.action_masks()
        while not done:
            valid = np.flatnonzero(mask)
            _, _, done, _, info = env.step(int(valid[rng.integers(len(valid))]))
            mask = info["action_mask"]
            decisions += 1
    dt = time.perf_counter() - t0
    name = "step_fast()" if fast else "step()"
    print(
        f"SchedulingEnv backfill={backfill!r} {name}, random masked policy: "
        f"{decisions} decisions in {dt:.2f} s = {decisions / dt:,.0f} decisions/s "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


def vec_rate(num_envs: int, threads: int, seconds: float = 3.0) -> None:
    """Aggregate decisions/s of the vector environment: steps that reset an
    environment whose episode ended are not decisions and are not counted."""
    env = SchedulingVecEnv(num_envs, TRACE, "hypercube:7", "buddy", window=16, episode_jobs=2000, threads=threads)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    mask = env.action_masks_view()
    decisions, steps = 0, 0
    ended = np.zeros(num_envs, dtype=bool)
    cpu0, t0 = time.process_time(), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(20):
            decisions += num_envs - int(ended.sum())
            _, _, ended = env.step_fast(sample_masked(mask, rng))
            steps += 1
    dt, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    print(
        f"SchedulingVecEnv num_envs={num_envs} threads={threads} step_fast(), random masked policy: "
        f"{decisions} decisions in {dt:.2f} s = {decisions / dt:,.0f} decisions/s "
        f"({decisions / cpu:,.0f} per CPU second; load average {os.getloadavg()[0]:.1f})"
    )


def main() -> int:
    if "--vec" in sys.argv[1:]:
        # The single environment beside, at the same load.
        env_rate(True, "none")
        for threads in (1, 2):
            for num_envs in (64, 256):
                vec_rate(num_envs, threads)
        return 0
    if "--env" not in sys.argv[1:]:
        if Path(CLI).is_file():
            simulate_vs_tool()
        else:
            print(f"{CLI} is missing: cargo build --release -p partalloc-cli", file=sys.stderr)
    for backfill in ("none", "easy"):
        for fast in (False, True):
            for _ in range(2):
                env_rate(fast, backfill)
    return 0


if __name__ == "__main__":
    sys.exit(main())
