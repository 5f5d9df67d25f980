"""The Lublin–Feitelson workload model from Python: the command line's
records, the model's serial share, and ValueError on bad parameters."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

import partalloc as pa


def test_the_jobs_are_the_command_lines(cli: str, tmp_path: Path) -> None:
    model = "lublin:mixed:interactive.serial=0.3"
    table = pa.generate_lublin(128, 800, model=model, seed=5)
    assert list(table.columns) == list(pa.SWF_FIELDS) and len(table) == 800
    out = tmp_path / "cli.swf"
    subprocess.run(
        [cli, "generate", "-t", "mesh:16x8", "--model", model, "--jobs", "800",
         "--seed", "5", "--out", str(out)],
        check=True,
    )
    np.testing.assert_array_equal(table.to_numpy(), pa.read_swf(out).to_numpy())
    assert set(table["queue"].unique()) == {0.0, 1.0}
    assert table["requested_time"].isna().all()
    assert (np.diff(table["submit_time"]) >= 0).all()
    # Written and read back unchanged.
    again = tmp_path / "again.swf"
    pa.write_swf(again, table)
    np.testing.assert_array_equal(pa.read_swf(again).to_numpy(), table.to_numpy())
    assert any("lublin:mixed:interactive.serial=0.3" in h for h in table.attrs["header"])


def test_serial_share_is_the_models() -> None:
    # Batch jobs are serial with probability 0.2927 (m_lublin99.c).
    n = 20_000
    t = pa.generate_lublin(64, n, model="lublin:batch", seed=2, as_frame=False)
    share = float(np.mean(t["allocated_processors"] == 1))
    se = math.sqrt(0.2927 * (1 - 0.2927) / n)
    assert abs(share - 0.2927) <= 5 * se, share
    assert t["allocated_processors"].max() <= 64
    # A changed parameter changes the draw.
    t = pa.generate_lublin(64, n, model="lublin:batch:serial=0.6:pow2=0.3", seed=2, as_frame=False)
    assert abs(float(np.mean(t["allocated_processors"] == 1)) - 0.6) <= 5 * math.sqrt(0.24 / n)


@pytest.mark.parametrize(
    "nodes, jobs, model, message",
    [
        (128, 10, "lublin:batch:serial=2", "serial must be a probability between 0 and 1"),
        (128, 10, "lublin:batch:b1=0", "b1 must be a finite number greater than 0"),
        (128, 10, "lublin:slow", 'unknown kind "slow"'),
        (128, 10, "lublin:batch:serial", '"serial" is not key=value'),
        (128, 10, "lublin:mixed:pa=0", "names its class"),
        (64, 10, "lublin:batch:uhi=7", "uhi=7 is above log2 of the machine's 64 nodes"),
        (128, 10, "lublin:batch:serial=0.6", "serial \\+ pow2 = 1.2686 exceeds 1"),
        (128, 10, "lublin:batch:serial=0.1:serial=0.2", "given twice"),
        (0, 10, "lublin", "at least 1 node"),
        (-4, 10, "lublin", "at least 1 \\(got -4\\)"),
        (128, 0, "lublin", "jobs must be between 1 and 10000000"),
        (128, -1, "lublin", "jobs must be between 1 and 10000000 \\(got -1\\)"),
    ],
)
def test_bad_parameters_raise_value_error(nodes: int, jobs: int, model: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as e:
        pa.generate_lublin(nodes, jobs, model=model)
    assert "\n" not in str(e.value)


def _results(summary: dict) -> dict:
    """A summary without the wall-clock search time and the description."""
    s = {k: v for k, v in summary.items() if k not in ("search_time_us_per_job", "workload")}
    s["replications"] = [
        {k: v for k, v in r.items() if k != "search_time_us_per_job"} for r in s["replications"]
    ]
    return s


@pytest.mark.parametrize(
    "machine, allocator, model, mapping",
    [
        ("mesh:16x16", "fsl", "lublin:batch", "shapes"),
        ("mesh:16x8", "paging", "lublin:mixed:batch.serial=0.2", "nodes"),
        ("hypercube:7", "buddy", "lublin:whole", "shapes"),
    ],
)
def test_simulate_with_the_model_runs_the_jobs_generate_writes(
    cli: str, tmp_path: Path, machine: str, allocator: str, model: str, mapping: str
) -> None:
    out = tmp_path / "g.swf"
    subprocess.run(
        [cli, "generate", "-t", machine, "--model", model, "--jobs", "300",
         "--seed", "6", "--out", str(out)],
        check=True,
    )
    replayed, rec_t = pa.simulate(machine, allocator, trace=out, seed=6, mapping=mapping)
    modelled, rec_m = pa.simulate(machine, allocator, model=model, jobs=300, seed=6, mapping=mapping)
    assert _results(modelled) == _results(replayed)
    np.testing.assert_array_equal(rec_m["start"].to_numpy(), rec_t["start"].to_numpy())
    assert modelled["replications"][0]["completed"] == 300
    assert modelled["workload"].endswith(f"300 jobs, {mapping} mapping")
    # The command line's own run of the model: the same results.
    cmd = subprocess.run(
        [cli, "simulate", "-t", machine, "-a", allocator, "--model", model, "--jobs", "300",
         "--seed", "6", "--mapping", mapping, "--format", "json", "-q"],
        check=True, capture_output=True, text=True,
    )
    import json

    tool = json.loads(cmd.stdout)
    assert tool["workload"] == modelled["workload"]
    assert [m["mean"] for m in tool["metrics"]] == [m["mean"] for m in modelled["metrics"]]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model": "lublin:batch:serial=2"}, "model: .*serial must be a probability"),
        ({"model": "lublin:fast"}, 'model: .*unknown kind "fast"'),
        ({"model": "lublin:batch:uhi=9"}, "model: uhi=9 is above log2 of the machine's 256 nodes"),
        ({"model": "lublin", "jobs": 10_000_001}, "jobs=10000001: at most 10000000"),
        ({"model": "lublin", "jobs": 0}, "jobs must be at least 1"),
        ({"model": "lublin", "workload": {"load": 0.5}}, "not two"),
    ],
)
def test_a_bad_model_in_simulate_is_value_error(kwargs: dict, message: str) -> None:
    if kwargs.get("jobs", 0) > 10_000_000:
        kwargs = dict(kwargs, records=False)
    with pytest.raises(ValueError, match=message) as e:
        pa.simulate("mesh:16x16", "fsl", **kwargs)
    assert "\n" not in str(e.value)
