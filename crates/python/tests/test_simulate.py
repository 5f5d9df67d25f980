"""simulate gives exactly what `partalloc simulate` prints for the same
settings: every result of every replication, bit for bit, and the same
per-job records."""

from __future__ import annotations

import csv
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

import partalloc as pa


def run_cli(cli: str, args: List[str], tmp_path: Path) -> Dict[str, Any]:
    out = subprocess.run(
        [cli, "simulate", *args, "--format", "json", "--jobs-csv", str(tmp_path / "jobs.csv")],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def same(a: Dict[str, Any], b: Dict[str, Any]) -> None:
    # Wall-clock time is the one value that is not deterministic.
    a, b = dict(a), dict(b)
    a.pop("search_time_us_per_job")
    b.pop("search_time_us_per_job")
    assert a == b


@pytest.mark.parametrize(
    "topology,allocator,scheduler,mapping",
    [
        ("hypercube:7", "buddy", "fcfs", "shapes"),
        ("hypercube:7", "partner-ext[delta=2]", "easy-backfilling", "shapes"),
        ("mesh:16x8", "fsl", "fcfs", "shapes"),
        ("mesh:16x8", "paging", "fcfs", "nodes"),
    ],
)
def test_trace_equals_the_tool(
    cli: str, small_trace: Path, tmp_path: Path, topology: str, allocator: str, scheduler: str, mapping: str
) -> None:
    expected = run_cli(
        cli,
        ["-t", topology, "-a", allocator, "-s", scheduler, "--trace", str(small_trace), "--mapping", mapping],
        tmp_path,
    )
    summary, records = pa.simulate(topology, allocator, scheduler, trace=small_trace, mapping=mapping)
    same(summary, expected)
    with open(tmp_path / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(records) > 0
    for name in ("id", "requested", "granted"):
        assert [int(r[name]) for r in rows] == records[name].tolist()
    for name in ("arrival", "start", "end", "wait", "response", "numerical_delay", "topological_delay"):
        assert [float(r[name]) for r in rows] == records[name].tolist()
    assert [r["partition"] for r in rows] == records["partition"].tolist()


def test_warmup_time_and_job_limits_equal_the_tool(cli: str, nasa: Path, tmp_path: Path) -> None:
    args = ["-t", "hypercube:7", "-a", "gray-code", "--trace", str(nasa), "--jobs", "800", "--warmup", "100", "--time", "400000"]
    expected = run_cli(cli, args, tmp_path)
    summary, _ = pa.simulate(
        "hypercube:7", "gray-code", trace=nasa, jobs=800, warmup=100, time=400000.0, records=False
    )
    same(summary, expected)
    assert summary["replications"][0]["completed"] > 0


def test_records_as_a_structured_array(small_trace: Path) -> None:
    summary, arr = pa.simulate("hypercube:7", "buddy", trace=small_trace, as_frame=False)
    assert isinstance(arr, np.ndarray) and arr.dtype.names[0] == "id"
    assert len(arr) == summary["replications"][0]["completed"] == 500
    np.testing.assert_allclose(arr["response"], arr["end"] - arr["arrival"])
    mean = next(m["mean"] for m in summary["metrics"] if m["metric"] == "mean_response")
    assert mean == pytest.approx(arr["response"].mean())


def test_bad_settings_raise_the_tools_messages(small_trace: Path) -> None:
    with pytest.raises(ValueError, match=r'^unknown scheduling policy "nope"'):
        pa.simulate("hypercube:7", "buddy", "nope", trace=small_trace)
    with pytest.raises(ValueError, match=r"^time=-1: the stop time must be a finite number above 0"):
        pa.simulate("hypercube:7", "buddy", trace=small_trace, time=-1.0)
    # A run that stops at 0 measures nothing: refused as the tool refuses it.
    with pytest.raises(ValueError, match=r"^time=0: the stop time must be a finite number above 0"):
        pa.simulate("hypercube:7", "buddy", trace=small_trace, time=0.0)
    with pytest.raises(OSError, match="nowhere.swf"):
        pa.simulate("hypercube:7", "buddy", trace="nowhere.swf")
    with pytest.raises(ValueError, match="not both"):
        pa.simulate("hypercube:7", "buddy", trace=small_trace, workload={"load": 0.5})
    with pytest.raises(ValueError, match=r'^mapping "boxes"'):
        pa.simulate("hypercube:7", "buddy", trace=small_trace, mapping="boxes")


def test_a_long_run_releases_the_interpreter_lock(nasa: Path) -> None:
    ticks = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        start = time.perf_counter()
        pa.simulate("hypercube:7", "multiple-gray-code", trace=nasa, records=False)
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if start < x < end]
    # The other thread kept running while the simulation did.
    assert len(during) >= 3, (end - start, len(during))


@pytest.mark.parametrize(
    "topology,allocator,scheduler,workload,flags",
    [
        (
            "mesh:16x16",
            "fsl",
            "fcfs",
            {"load": 0.6, "residence": "hyper:1,0.95,4"},
            ["--load", "0.6", "--residence", "hyper:1,0.95,4"],
        ),
        (
            "hypercube:8",
            "partner",
            "scan",
            {"load": 0.4, "shapes": "cube", "cube_dims": "uniform:0-5", "dependence": "independent"},
            ["--load", "0.4", "--shapes", "cube", "--cube-dims", "uniform:0-5", "--dependence", "independent"],
        ),
        (
            "torus:8x8",
            "first-fit",
            "easy-backfilling",
            {"load": 0.5, "shapes": "sides", "sides": "exponential", "max_sides": "4x8"},
            ["--load", "0.5", "--shapes", "sides", "--sides", "exponential", "--max-sides", "4x8"],
        ),
    ],
)
def test_generated_workloads_equal_the_tool(
    cli: str, tmp_path: Path, topology: str, allocator: str, scheduler: str, workload: Dict[str, Any], flags: List[str]
) -> None:
    expected = run_cli(
        cli,
        ["-t", topology, "-a", allocator, "-s", scheduler, *flags, "--jobs", "300", "--warmup", "20", "--seeds", "3", "--seed", "7"],
        tmp_path,
    )
    summary, records = pa.simulate(
        topology, allocator, scheduler, workload=workload, jobs=300, warmup=20, seeds=3, seed=7
    )
    same(summary, expected)
    assert len(summary["replications"]) == 3
    with open(tmp_path / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["response"]) for r in rows] == records["response"].tolist()


def test_shape_weights_equal_the_tools(cli: str, tmp_path: Path) -> None:
    # Only the smallest (1 chip) and the largest (the whole 8x8 pod) of the
    # six catalogue shapes.
    expected = run_cli(
        cli,
        ["-t", "pod:tpu-v5e:8x8", "-a", "pod-first-fit", "--shapes", "catalogue",
         "--shape-weights", "1,0,0,0,0,1", "--jobs", "200", "--seed", "3"],
        tmp_path,
    )
    workload = {"shapes": "catalogue", "shape_weights": [1, 0, 0, 0, 0, 1]}
    summary, records = pa.simulate("pod:tpu-v5e:8x8", "pod-first-fit", workload=workload, jobs=200, seed=3)
    same(summary, expected)
    assert "catalogue:1,0,0,0,0,1" in summary["workload"]
    assert sorted(set(records["requested"].tolist())) == [1, 64]
    # The flag's text form reads the same.
    as_text, _ = pa.simulate(
        "pod:tpu-v5e:8x8", "pod-first-fit", workload={**workload, "shape_weights": "1,0,0,0,0,1"}, jobs=200, seed=3
    )
    same(as_text, summary)
    with pytest.raises(ValueError, match=r"^workload: shape: 2 shape weights given for 6 catalogue shapes"):
        pa.simulate("pod:tpu-v5e:8x8", "pod-first-fit", workload={"shape_weights": [1, 0]})
    with pytest.raises(ValueError, match=r'^workload\["shape_weights"\] must be a list of numbers'):
        pa.simulate("pod:tpu-v5e:8x8", "pod-first-fit", workload={"shape_weights": ["x"]})


def test_generated_workload_errors_name_the_option() -> None:
    with pytest.raises(ValueError, match=r'^workload\["residence"\] "exp:x": '):
        pa.simulate("mesh:8x8", "fsl", workload={"residence": "exp:x"})
    with pytest.raises(ValueError, match=r"^offered load 1.2 is at least 1: .*allow_saturation=True"):
        pa.simulate("mesh:8x8", "fsl", workload={"load": 1.2})
    with pytest.raises(ValueError, match=r'^unknown workload option "rho"; known options: load, '):
        pa.simulate("mesh:8x8", "fsl", workload={"rho": 0.5})
    with pytest.raises(ValueError, match=r"^workload: shape law cube:uniform: "):
        pa.simulate("mesh:8x8", "fsl", workload={"shapes": "cube"})
    with pytest.raises(ValueError, match=r"^jobs must be at least 1"):
        pa.simulate("mesh:8x8", "fsl", workload={}, jobs=0)
    with pytest.raises(ValueError, match=r"^give trace="):
        pa.simulate("mesh:8x8", "fsl")
    # Saturation studies are allowed when asked for.
    summary, _ = pa.simulate("mesh:8x8", "fsl", workload={"load": 1.2, "allow_saturation": True}, jobs=50)
    assert summary["replications"][0]["completed"] == 50


@pytest.mark.parametrize(
    "args,call",
    [
        (["-t", "mesh:0x3", "-a", "fsl"], lambda t: pa.simulate("mesh:0x3", "fsl", trace=t)),
        (["-t", "mesh:8x8", "-a", "fsl[x=1]"], lambda t: pa.simulate("mesh:8x8", "fsl[x=1]", trace=t)),
        (["-t", "mesh:8x8", "-a", "fsl", "-s", "lifo"], lambda t: pa.simulate("mesh:8x8", "fsl", "lifo", trace=t)),
    ],
)
def test_error_messages_are_the_tools_lines(cli: str, small_trace: Path, args: List[str], call) -> None:
    out = subprocess.run([cli, "simulate", *args, "--trace", str(small_trace)], capture_output=True, text=True)
    assert out.returncode != 0
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ")
    with pytest.raises(ValueError) as e:
        call(small_trace)
    # The same line, with the flag named as Python's argument: the tool's
    # `--topology "mesh:0x3": …` is `topology: …`.
    tool = line[len("error: ") :]
    if tool.startswith("--topology "):
        tool = "topology: " + tool.split(": ", 1)[1]
    python = str(e.value)
    assert python == tool
    assert len(python) <= 200


def test_a_generated_workload_without_warm_up_is_described_as_the_tool_does(cli: str, tmp_path: Path) -> None:
    expected = run_cli(cli, ["-t", "mesh:8x8", "-a", "fsl", "--jobs", "50", "--max-sides", "4x4"], tmp_path)
    summary, _ = pa.simulate("mesh:8x8", "fsl", "fcfs", workload={"max_sides": "4x4"}, jobs=50)
    assert summary["workload"] == expected["workload"] == "load 0.5, sides uniform up to 4x4, residence exp:1 (dependent), 50 jobs"
    same(summary, expected)


@pytest.mark.parametrize("model", [None, "linear:0.5", "sst:.001865[.1569,.0129]"])
def test_dispersal_columns_and_runtime_models_equal_the_tool(
    cli: str, small_trace: Path, tmp_path: Path, model: Any
) -> None:
    flags = [] if model is None else ["--runtime-model", model]
    expected = run_cli(
        cli, ["-t", "mesh:16x8", "-a", "paging", "--trace", str(small_trace), "--mapping", "nodes", *flags], tmp_path
    )
    summary, records = pa.simulate(
        "mesh:16x8", "paging", trace=small_trace, mapping="nodes", runtime_model=model
    )
    same(summary, expected)
    with open(tmp_path / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    for name in ("distance_sum", "mean_distance", "diameter", "span", "pieces", "end"):
        assert [float(r[name]) for r in rows] == records[name].tolist()
    # The run mean is the mean of the per-job values.
    assert summary["replications"][0]["mean_pairwise_distance"] == pytest.approx(records["mean_distance"].mean())
    with pytest.raises(ValueError, match=r"^runtime_model: run-time model parameter A = -1"):
        pa.simulate("mesh:16x8", "paging", trace=small_trace, runtime_model="sst:-1[0,0]")


MESH_WORKLOAD = {"load": 0.6, "max_sides": "4x4"}
MESH_FLAGS = ["--load", "0.6", "--max-sides", "4x4", "--jobs", "60"]


def test_every_mesh_strategy_and_policy_equals_the_tool(cli: str, tmp_path: Path) -> None:
    # Every allocator that runs on meshes (with FCFS) and every policy (with
    # paging) gives the tool's numbers from Python.
    allocators = [s["name"] for s in pa.strategies() if "mesh" in s["topologies"]]
    policies = [p["name"] for p in pa.policies() if "mesh" in p["topologies"]]
    assert {"mbs", "curve-first-fit", "mc1x1", "gabl", "fsl"} <= set(allocators)
    assert {"conservative-backfilling", "priority", "rlscheduler"} <= set(policies)
    runs = [(a, "fcfs") for a in allocators] + [("paging", p) for p in policies]
    for allocator, scheduler in runs:
        expected = run_cli(cli, ["-t", "mesh:8x8", "-a", allocator, "-s", scheduler, *MESH_FLAGS], tmp_path)
        summary, _ = pa.simulate("mesh:8x8", allocator, scheduler, workload=MESH_WORKLOAD, jobs=60)
        same(summary, expected)
        assert summary["replications"][0]["completed"] == 60, (allocator, scheduler)


ROOT = Path(__file__).resolve().parents[3]


def family_machine(family: dict) -> str:
    machine = family["example"]
    for i, f in enumerate(family["files"]):
        machine = machine.replace("{%d}" % i, str(ROOT / f))
    return machine


# Every family's example where generated workloads place (the others run
# traces only), from the one table the tool's tests read too.
FAMILIES = [
    (family_machine(f), f["strategy"]) for f in pa.machine_families() if f["workload"] is not None
]


def test_the_family_table_names_every_family_the_strategies_accept() -> None:
    kinds = [f["kind"] for f in pa.machine_families()]
    accepted = {k for s in pa.strategies() for k in s["topologies"]}
    assert accepted <= set(kinds)
    assert len(FAMILIES) >= 9

@pytest.mark.parametrize("topology,allocator", FAMILIES)
def test_every_family_equals_the_tool_generated_and_traced(
    cli: str, tmp_path: Path, topology: str, allocator: str
) -> None:
    """One experiment on every machine family, from Python and from the
    tool: a generated workload and a trace give the same summary, the
    family's measures (and which were taken) among it."""
    args = ["-t", topology, "-a", allocator, "--load", "0.5", "--jobs", "150", "--seeds", "2"]
    expected = run_cli(cli, args, tmp_path)
    summary, _ = pa.simulate(topology, allocator, workload={"load": 0.5}, jobs=150, seeds=2)
    same(summary, expected)
    assert summary["replications"][0]["measured"] != ""
    trace = tmp_path / "t.swf"
    subprocess.run(
        [cli, "generate", "-t", topology, "--load", "0.7", "--jobs", "120", "--seed", "5", "--out", str(trace)],
        check=True,
        capture_output=True,
    )
    expected = run_cli(cli, ["-t", topology, "-a", allocator, "--trace", str(trace)], tmp_path)
    summary, _ = pa.simulate(topology, allocator, trace=trace)
    same(summary, expected)
    assert summary["replications"][0]["completed"] == 120
