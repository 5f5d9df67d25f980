#!/usr/bin/env python3
"""A month of a 1,000-node cluster as a sacct dump, for `partalloc whatif`
(docs/slurm-scheduling.md, "Speed"): about a million jobs, 24 users in 6
accounts, two QOS, Poisson arrivals, mostly small jobs, time limits above
the run times. Deterministic (a fixed-seed linear congruential generator).

    python3 examples/slurm-sched-month.py JOBS [RUN] > month.txt

RUN (default 700) scales the run times: a job of n nodes runs for an
exponential time of mean RUN / sqrt(n) seconds; 700 offers a load of about
0.75, 900 about 0.95.
"""
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUN = float(sys.argv[2]) if len(sys.argv) > 2 else 700.0
MONTH = 30 * 86_400
x = 20260601


def rnd():
    global x
    x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return (x >> 11) / float(1 << 53)


def exp(mean):
    import math
    return -mean * math.log(1.0 - rnd())


accounts = ["phys", "chem", "bio", "astro", "eng", "math"]
users = [(accounts[i % 6], f"u{i:02d}") for i in range(24)]
sizes = [1, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32, 64]
out = sys.stdout
out.write("JobID|Account|User|QOS|Partition|Submit|Start|End|NNodes|Timelimit|State\n")
t = 0.0
gap = MONTH / N


def stamp(s):
    s = int(s)
    d, s = divmod(s, 86_400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"2026-07-{d + 1:02d}T{h:02d}:{m:02d}:{s:02d}"


for i in range(N):
    t += exp(gap)
    acct, user = users[int(rnd() * len(users))]
    qos = "high" if rnd() < 0.1 else "normal"
    nodes = sizes[int(rnd() * len(sizes))]
    run = max(10, int(exp(RUN / nodes ** 0.5)))
    limit = max(1, -(-int(run * (1.0 + 2.0 * rnd())) // 60))
    out.write(
        f"{i + 1}|{acct}|{user}|{qos}|batch|{stamp(t)}|{stamp(t)}|{stamp(t + run)}|{nodes}|{limit}|COMPLETED\n"
    )
