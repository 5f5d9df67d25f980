"""`partalloc replay --batsim-jobs` writes Batsim's _jobs.csv as evalys reads
it: evalys (the Batsim project's analysis library, from PyPI) loads the file
unchanged, and its jobs, Gantt chart and utilisation are partalloc's own —
compared with the same run's data in the `--report` page, which partalloc
writes from its job records independently of the CSV."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

evalys_jobset = pytest.importorskip("evalys.jobset")


def report_data(page: Path) -> dict:
    html = page.read_text()
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert m, "the page carries its data"
    return json.loads(m.group(1))


def runs_of(enc: list) -> list:
    """A job's runs of node ids as the page encodes them: `first, len`, or
    `first, len, -stride, count` for the rows of a box."""
    out, k = [], 0
    while k < len(enc):
        first, count = enc[k], enc[k + 1]
        if k + 2 < len(enc) and enc[k + 2] < 0:
            out += [(first - c * enc[k + 2], count) for c in range(enc[k + 3])]
            k += 4
        else:
            out.append((first, count))
            k += 2
    return out


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, cli: str, small_trace: Path):
    out = tmp_path_factory.mktemp("batsim")
    jobs, page = out / "buddy_jobs.csv", out / "buddy.html"
    subprocess.run(
        [cli, "replay", str(small_trace), "--topology", "hypercube:7", "--allocators", "buddy",
         "--batsim-jobs", str(jobs), "--report", str(page), "-q"],
        check=True, capture_output=True,
    )
    return evalys_jobset.JobSet.from_csv(str(jobs), resource_bounds=(0, 127)), report_data(page)["runs"][0]


def test_evalys_loads_every_job_with_partallocs_times_and_nodes(replayed):
    js, run = replayed
    assert run["label"].startswith("buddy")
    df = js.df.set_index("jobID")
    assert len(df) == run["total"] == 500
    for i, job in enumerate(run["jobs"]["id"]):
        row = df.loc[str(int(job))]
        # evalys rounds times to 6 digits.
        assert row.starting_time == pytest.approx(run["jobs"]["start"][i], abs=1e-6)
        assert row.finish_time == pytest.approx(run["jobs"]["end"][i], abs=1e-6)
        assert row.submission_time == pytest.approx(run["jobs"]["submit"][i], abs=1e-6)
        nodes = {n for first, count in runs_of(run["jobs"]["runs"][i]) for n in range(first, first + count)}
        assert set(row.allocated_resources) == nodes, f"job {job}"


def test_evalys_utilisation_and_gantt_agree(replayed):
    js, run = replayed
    # evalys's utilisation: resources in use from each event time on
    # ("load"), and the resource-time until the next event ("area").
    u = js.utilisation
    assert u["load"].max() <= 128
    want = sum(g * (e - s) for g, s, e in zip(run["jobs"]["got"], run["jobs"]["start"], run["jobs"]["end"]))
    assert u["area"].sum() == pytest.approx(want, rel=1e-9)
    # Busy nodes over time, as the page has them, are evalys's load.
    load = u["load"]
    for t, v in zip(run["over"]["t"], run["over"]["busy"]):
        assert load.asof(round(t, 6)) == pytest.approx(v), f"at {t}"
    import matplotlib

    matplotlib.use("Agg")
    js.gantt()
