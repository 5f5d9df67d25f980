"""partalloc.benchmark: RLScheduler's protocol, the tool's numbers, the
simulator's goldens, and one-line ValueErrors."""

import os
import subprocess
from pathlib import Path

import pytest

import partalloc

ROOT = Path(__file__).resolve().parents[3]
NASA = ROOT / "data" / "traces" / "NASA-iPSC-1993-3.1-cln.swf"
ORACLE = ROOT / "data" / "rlscheduler-oracle"
CUT = ORACLE / "lublin_256.cut.swf"


def golden_rows():
    """(policy, backfill, start in the cut, bounded slowdown) of the
    lublin_256 golden; the cut holds only the sequences' jobs."""
    ids = [l.split()[0] for l in CUT.read_text().splitlines() if not l.startswith(";")]
    for line in (ORACLE / "lublin_256.golden.csv").read_text().splitlines():
        if line.startswith("#") or line.startswith("policy,"):
            continue
        f = line.split(",")
        yield f[0], f[1] == "true", ids.index(f[4]), float(f[5])


def test_scores_equal_the_simulators_goldens():
    rows = list(golden_rows())
    starts = sorted({s for _, _, s, _ in rows})[:3]
    policies = ["fcfs", "sjf", "wfp3-rlscheduler", "unicep-rlscheduler", "f1"]
    r = partalloc.benchmark(CUT, policies=policies, starts=starts)
    assert r["starts"] == starts and r["nodes"] == 256
    got = {}
    for p, b, seq in zip(r["policy"], r["backfill"], r["per_sequence"]):
        for s, v in zip(starts, seq):
            got[(p, b, s)] = v
    checked = 0
    for p, b, s, bsld in rows:
        if s in starts:
            assert got[(p, b, s)] == bsld, (p, b, s)
            checked += 1
    assert checked >= 30


def test_same_numbers_as_the_tool():
    cli = os.environ.get("PARTALLOC_CLI")
    if not cli:
        pytest.skip("PARTALLOC_CLI not set")
    out = subprocess.run(
        [cli, "benchmark", "--trace", str(NASA), "--sequences", "3", "--length", "64",
         "--seed", "5", "--policies", "sjf,f1", "--csv"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[1:]
    r = partalloc.benchmark(NASA, policies=["sjf", "f1"], sequences=3, length=64, seed=5)
    flat = [v for seq in r["per_sequence"] for v in seq]
    assert [float(l.split(",")[4]) for l in out] == flat


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"length": 10000}, "sequences of 10000 jobs need a trace of at least 20002 jobs"),
        ({"policies": ["lifo"]}, 'unknown heuristic "lifo"'),
        ({"slowdown_bound": 0.0}, "slowdown_bound: slowdown bound 0 must be above 0 seconds"),
        ({"slowdown_bound": -2.0}, "must be above 0 seconds"),
        ({"backfill": "maybe"}, 'backfill "maybe"'),
        ({"sequences": 0}, "sequences must be at least 1"),
    ],
)
def test_bad_input_is_a_one_line_value_error(kwargs, message):
    with pytest.raises(ValueError) as e:
        partalloc.benchmark(NASA, **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)
