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
