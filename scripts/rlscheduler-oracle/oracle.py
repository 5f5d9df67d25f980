#!/usr/bin/env python3
"""RLScheduler's simulator as the oracle of `partalloc benchmark`.

Runs the heuristics of RLScheduler's own simulator (DIR-LAB/deep-batch-scheduler,
`HPCSimPickJobs.py`, `job.py`, `cluster.py`, unchanged) on sequences of jobs
cut from a trace and writes, per heuristic, backfilling setting and sequence,
the sequence's start and the mean bounded slowdown the simulator computes,
with every job's wait. partalloc's replay test (`cargo test -p partalloc-simkit
--test simkit rlscheduler_oracle::`) reads these golden files and needs no
Python. See docs/rl-benchmark.md.

    PARTALLOC_RLSCHEDULER_ORACLE=1 RLSCHEDULER_SRC=/tmp/rls \
        scripts/rlscheduler-oracle/oracle.py --trace /tmp/rls/data/lublin_256.swf \
        --sequences 10 --length 256 --seed 1 --cut data/rlscheduler-oracle/lublin_256.cut.swf \
        --out data/rlscheduler-oracle/lublin_256.golden.csv

RLSCHEDULER_SRC is a tree of the repository (e.g. `git archive` of a mirror);
RLSCHEDULER_COMMIT names its commit in the golden (default: read with git from
RLSCHEDULER_GIT when given). The only Python package needed is numpy: the
simulator's module imports tensorflow, scipy and gym only for training and for
the environment's base class, so stub modules stand in for those three (they
are never called by the heuristics' code path).
"""

import argparse
import hashlib
import os
import subprocess
import sys
import types

FORMAT = "rlscheduler-oracle 1"
# partalloc's order names for the simulator's score functions.
HEURISTICS = [
    ("fcfs", "fcfs_score"),
    ("sjf", "sjf_score"),
    ("wfp3-rlscheduler", "wfp_score"),
    ("unicep-rlscheduler", "uni_score"),
    ("f1", "f1_score"),
]


def die(msg):
    print(f"scripts/rlscheduler-oracle: {msg}", file=sys.stderr)
    sys.exit(1)


def install_stubs():
    """Stub modules for the imports the heuristics never use."""
    tf = types.ModuleType("tensorflow")
    scipy = types.ModuleType("scipy")
    signal = types.ModuleType("scipy.signal")
    scipy.signal = signal
    gym = types.ModuleType("gym")

    class Env:
        def __init__(self, *a, **k):
            pass

    gym.Env = Env
    spaces = types.ModuleType("gym.spaces")

    class Space:
        def __init__(self, *a, **k):
            pass

    spaces.Box = Space
    spaces.Discrete = Space
    gym.spaces = spaces
    utils = types.ModuleType("gym.utils")
    seeding = types.ModuleType("gym.utils.seeding")
    utils.seeding = seeding
    gym.utils = utils
    for name, mod in [
        ("tensorflow", tf),
        ("scipy", scipy),
        ("scipy.signal", signal),
        ("gym", gym),
        ("gym.spaces", spaces),
        ("gym.utils", utils),
        ("gym.utils.seeding", seeding),
    ]:
        sys.modules[name] = mod


class FixedStart:
    """Stands in for the environment's `np_random` in `reset_for_test`: it
    returns the chosen start, checking it lies in the simulator's range."""

    def __init__(self, start):
        self.start = start

    def randint(self, low, high):
        if not (low <= self.start < high):
            die(f"start {self.start} outside the simulator's range [{low}, {high})")
        return self.start


def engine_commit(src):
    commit = os.environ.get("RLSCHEDULER_COMMIT")
    if commit:
        return commit
    git = os.environ.get("RLSCHEDULER_GIT")
    if git:
        out = subprocess.run(["git", "--git-dir", git, "rev-parse", "HEAD"], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout.strip()
    die("set RLSCHEDULER_COMMIT (or RLSCHEDULER_GIT) to name the engine's commit")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", required=True)
    p.add_argument("--sequences", type=int, default=10)
    p.add_argument("--length", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("--cut", help="also write the trace's header and the sequences' job lines here")
    a = p.parse_args()
    if os.environ.get("PARTALLOC_RLSCHEDULER_ORACLE") != "1":
        print("scripts/rlscheduler-oracle: opt-in; set PARTALLOC_RLSCHEDULER_ORACLE=1 to run")
        return
    src = os.environ.get("RLSCHEDULER_SRC")
    if not src or not os.path.isfile(os.path.join(src, "HPCSimPickJobs.py")):
        die("set RLSCHEDULER_SRC to a tree of DIR-LAB/deep-batch-scheduler")
    commit = engine_commit(src)
    install_stubs()
    import numpy as np

    sys.path.insert(0, src)
    import HPCSimPickJobs as sim

    env = sim.HPCEnv(backfil=False, job_score_type=0)
    env.my_init(workload_file=os.path.abspath(a.trace))
    size, n = env.loads.size(), a.length
    # The simulator's own range of starts (`reset_for_test`): [n, size - n - 1).
    if size - n - 1 <= n:
        die(f"trace of {size} jobs too short for sequences of {n}")
    starts = [int(s) for s in np.random.RandomState(a.seed).randint(n, size - n - 1, a.sequences)]

    waits = {}
    original = env.job_score

    def job_score(job):
        waits[job.job_id] = job.scheduled_time - job.submit_time
        return original(job)

    env.job_score = job_score
    rows = []
    for backfill in (False, True):
        env.backfil = backfill
        for k, start in enumerate(starts):
            env.np_random = FixedStart(start)
            env.reset_for_test(n, 0)
            ids = [env.loads[i].job_id for i in range(start, start + n)]
            for name, fn in HEURISTICS:
                waits.clear()
                bsld = sum(env.schedule_curr_sequence_reset(getattr(env, fn)).values())
                if sorted(waits) != sorted(ids):
                    die(f"sequence {k}: the simulator scheduled other jobs than the sequence's")
                w = " ".join(str(waits[i]) for i in ids)
                rows.append(f"{name},{str(backfill).lower()},{k},{start},{ids[0]},{bsld!r},{w}")

    with open(a.trace, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(a.out, "w") as out:
        out.write(f"# {FORMAT}\n")
        out.write(f"# engine DIR-LAB/deep-batch-scheduler {commit} (HPCSimPickJobs.py schedule_curr_sequence_reset, job_score_type 0)\n")
        out.write(f"# trace {os.path.basename(a.trace)} sha256 {digest} jobs {size} machine {env.loads.max_nodes} nodes\n")
        out.write(f"# length {n} sequences {a.sequences} numpy RandomState({a.seed}).randint({n}, {size - n - 1}, {a.sequences})\n")
        out.write("policy,backfill,sequence,start,first_job,bounded_slowdown,waits\n")
        for r in rows:
            out.write(r + "\n")
    if a.cut:
        keep = set()
        for s in starts:
            keep.update(env.loads[i].job_id for i in range(s, s + n))
        with open(a.trace) as f, open(a.cut, "w") as out:
            for line in f:
                if line.startswith(";"):
                    out.write(line)
                elif line.strip() and int(line.split()[0]) in keep:
                    out.write(" ".join(line.split()) + "\n")
    print(f"wrote {len(rows)} rows to {a.out}")


if __name__ == "__main__":
    main()
