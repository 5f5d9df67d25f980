"""Bad input from Python: each call below once killed or hung the
interpreter, or answered in the command line's words. Each must now raise
a Python exception at once, with one line of at most 200 characters that
names Python's arguments (no command-line flag, no Rust API), within
200 MB (Linux, where /proc/self/status gives the peak). Every case runs in a fresh interpreter, which reports its
exception, its time and its peak memory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")

CASES = {
    # A racks machine of 16 million nodes was built before its bound was
    # checked (33 s and 1.7 GB, then an abort).
    "racks": (
        "pa.simulate('racks:4096x4096x4gpu', 'tas', 'fcfs', workload={'load': 0.5})",
        "ValueError",
        "the node count is 16777216, more than the supported 65536",
    ),
    # An infinite gap shape drew gaps for ever.
    "lublin_gap": (
        "pa.generate_lublin(256, 10, model='lublin:whole:arar=1e308')",
        "ValueError",
        "must be a finite number (got inf)",
    ),
    # A run of 2^63 recorded jobs grew until the system killed it.
    "jobs": (
        "pa.simulate('hypercube:7', 'buddy', 'fcfs', workload={'load': 0.5}, jobs=2**63)",
        "ValueError",
        "jobs=9223372036854775808: at most 10000000 jobs are recorded",
    ),
    # A million replications: the command line caps them at 100,000.
    "seeds": (
        "pa.simulate('hypercube:7', 'buddy', 'fcfs', workload={'load': 0.5}, seeds=10**6)",
        "ValueError",
        "seeds=1000000: 1000000 replications are too many: at most 100000 are accepted",
    ),
    # The candidate partitions of a 22-cube, each a bit set of 4 million nodes.
    "placements": (
        "SchedulingEnv(topology='hypercube:22', placements=1024, window=1024, workload={'load': 0.5}).reset()",
        "ValueError",
        "placements lists the strategy's partitions as bit sets of the machine: hypercube:22 has 4194304 nodes",
    ),
    # Every partition of every size of a 2048×2048 mesh.
    "topology_obs": (
        "SchedulingEnv(topology_obs=True, topology='mesh:2048x2048', allocator='fsl', workload={'load': 0.5}).reset()",
        "ValueError",
        "topology_obs=True lists the strategy's partitions as bit sets of the machine: mesh:2048x2048",
    ),
    # Within the machine cap, but 65,536 one-node partitions alone would take 512 MiB.
    "topology_obs_budget": (
        "SchedulingEnv(topology_obs=True, topology='mesh:256x256', allocator='first-fit', workload={'load': 0.5})",
        "ValueError",
        "topology_obs=True: the strategy's partitions take more than 128 MiB",
    ),
    # Every job of a generated episode is drawn at reset.
    "episode_jobs": (
        "SchedulingEnv(workload={'load': 0.5}, episode_jobs=2**40).reset()",
        "ValueError",
        "episode_jobs=1099511627776: a generated episode holds at most 1048576 jobs",
    ),
    "load": (
        "pa.simulate('hypercube:7', 'buddy', 'fcfs', workload={'load': 'high'})",
        "ValueError",
        'workload["load"] must be a number',
    ),
    "workload_text": (
        "pa.simulate('mesh:8x8', 'fsl', 'fcfs', workload={'load': 0.5, 'sides': 'bogus'})",
        "ValueError",
        'workload["sides"] "bogus": side law "bogus": unknown law',
    ),
    "topology": (
        "pa.Topology('mesh:0x3')",
        "ValueError",
        "topology: side 0 has length 0",
    ),
    "request": (
        "pa.Allocator('fsl', 'mesh:8x8').allocate(subcube=2)",
        "UnsupportedRequestError",
        "shape=(a, b)",
    ),
    "time": (
        "pa.simulate('hypercube:7', 'buddy', 'fcfs', workload={'load': 0.5}, time=-1.0)",
        "ValueError",
        "time=-1: the stop time must be a finite number above 0",
    ),
    "no_source": (
        "SchedulingEnv()",
        "ValueError",
        "give trace= (a Standard Workload Format file to replay) or workload=",
    ),
}

RUNNER = textwrap.dedent(
    """
    import json, sys, time
    import partalloc as pa
    from partalloc.gym import SchedulingEnv
    start = time.perf_counter()
    try:
        exec(sys.argv[1])
        out = {"raised": None}
    except Exception as e:
        out = {"raised": type(e).__name__, "message": str(e)}
    out["seconds"] = time.perf_counter() - start
    # This process's peak resident memory (VmHWM: of this program alone;
    # ru_maxrss would count the forked parent's before exec).
    with open("/proc/self/status") as f:
        hwm = [line for line in f if line.startswith("VmHWM:")]
    out["peak_mb"] = int(hwm[0].split()[1]) / 1024 if hwm else 0.0
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_raises_one_python_line_quickly_in_little_memory(name: str) -> None:
    call, exception, expected = CASES[name]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, call],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parent,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["raised"] == exception, out
    message = out["message"]
    assert expected in message, message
    assert "\n" not in message and len(message) <= 200, message
    assert " --" not in message and not message.startswith("--") and "Request::" not in message, message
    assert "not both" not in message or "trace=" in call, message
    assert out["seconds"] < 10, out
    assert out["peak_mb"] <= 200, out
