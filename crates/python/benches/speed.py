"""Speed of the Python package on the NASA iPSC/860 trace (docs/performance.md).

1. simulate() against `partalloc simulate` (the release build of the tool,
   target/release/partalloc) for the same settings: median of 7 runs each,
   both reading the trace and simulating, with and without per-job records.
2. SchedulingEnv decisions per second with a random masked policy over the
   whole trace, through step() (Gymnasium's API, copies and info dict) and
   step_fast(), without backfilling and with EASY backfilling.

Run from the repository root: python crates/python/benches/speed.py
(``--env`` measures the environment only).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import partalloc as pa
from partalloc.gym import SchedulingEnv

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
        f"{decisions} decisions in {dt:.2f} s = {decisions / dt:,.0f} decisions/s"
    )


def main() -> int:
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
