"""fgd_experiment gives the FGD artifact's own expected curves, point for
point, for a deterministic policy; and refuses bad names in one line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import partalloc as pa

OPENB = Path(__file__).resolve().parents[3] / "data" / "openb"


def expected(name: str, policy_dir: str, seed: int) -> list:
    with open(OPENB / name) as f:
        for row in csv.DictReader(f):
            if row["workload"] == "openb_pod_list_default" and row["sc_policy"] == policy_dir and row["seed"] == str(seed):
                return [float(row[str(x)]) if row[str(x)] != "" else None for x in range(131)]
    raise AssertionError(f"no expected row for {policy_dir} seed {seed}")


def test_fgd_curves_equal_the_artifacts_expected_results() -> None:
    got = pa.fgd_experiment(OPENB, policy="FGD", seed=42)
    with open(OPENB / "analysis_allo_discrete.csv") as f:
        dirs = {row["sc_policy"] for row in csv.DictReader(f)}
    fgd_dir = next(d for d in dirs if d.lower().endswith("fgd"))
    assert got["alloc"] == expected("analysis_allo_discrete.csv", fgd_dir, 42)
    assert got["frag"] == expected("analysis_frag_discrete.csv", fgd_dir, 42)
    assert len(got["frag_ratio"]) == 131


def test_bad_names_are_one_line() -> None:
    with pytest.raises(ValueError, match=r"^policy: "):
        pa.fgd_experiment(OPENB, policy="nope")
    with pytest.raises(OSError):
        pa.fgd_experiment(OPENB, workload="no_such_list")
