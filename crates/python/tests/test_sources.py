"""Every machine the command line reads, Python reads: the text forms and
the Slurm, Kueue and pod files, through the library's one reader; and a
sacct dump replays as `partalloc simulate --trace-format sacct` does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import partalloc as pa

ROOT = Path(__file__).resolve().parents[3]
EX = ROOT / "examples"


@pytest.mark.parametrize(
    "machine,nodes",
    [
        (f"blocks:{EX / 'blocks-8x18.conf'}", 144),
        (f"blocks:{EX / 'blocks-8x18.yaml'}#racks", 144),
        (f"tree:{EX / 'tree-2level.conf'}", 64),
        (f"ring:{EX / 'ring-4x8.yaml'}", 32),
        (f"torus3d:{EX / 'torus3d-4x4x4.yaml'}", 64),
        (f"blocks:{EX / 'blocks-8x18.conf'},4gpu", 576),
        (f"kueue:{EX / 'kueue' / 'topology.yaml'},{EX / 'kueue' / 'nodes.yaml'}", None),
        (str(EX / "pods" / "lab-2d.toml"), 128),
    ],
)
def test_every_file_form_loads(machine: str, nodes: int | None) -> None:
    t = pa.Topology(machine)
    if nodes is not None:
        assert t.num_nodes == nodes
    assert t.num_nodes > 0


def test_file_errors_are_one_line_and_speak_python() -> None:
    with pytest.raises(OSError, match="no-such.conf"):
        pa.Topology("blocks:no-such.conf")
    with pytest.raises(ValueError, match=r"^topology: kueue:TOPOLOGY,NODES needs a Kueue Topology file"):
        pa.Topology("kueue:only-one.yaml")
    with pytest.raises(ValueError, match=r"^topology: .*describes a ring machine; name it ring:"):
        pa.Topology(f"tree:{EX / 'ring-4x8.conf'}")
    with pytest.raises(ValueError, match=r"too many for partalloc"):
        pa.Topology("mesh:4096x2048")
    with pytest.raises(ValueError, match=r"^trace_format: unknown trace format `csv`"):
        pa.simulate("mesh:8x8", "fsl", trace=EX / "mesh8x8-load0.6.swf", trace_format="csv")


def test_a_sacct_dump_replays_as_the_tool_replays_it(cli: str) -> None:
    machine = f"blocks:{EX / 'blocks-8x18.conf'}"
    dump = EX / "blocks-8x18.sacct"
    out = subprocess.run(
        [cli, "simulate", "-t", machine, "-a", "block", "--trace", str(dump), "--trace-format", "sacct",
         "--format", "json"],
        check=True, capture_output=True, text=True,
    )
    expected = json.loads(out.stdout)
    summary, records = pa.simulate(machine, "block", trace=dump, trace_format="sacct")
    for key in ("metrics", "replications", "workload", "topology"):
        assert summary[key] == expected[key], key
    assert summary["replications"][0]["measured"] == "slurm"
    assert summary["replications"][0]["mean_pairwise_distance"] is None
    assert len(records) == 400


def test_an_openb_pod_list_replays_as_the_tool_replays_it(cli: str) -> None:
    openb = EX / "openb"
    machine = f"openb:{openb / 'nodes.csv'},{openb / 'pods.csv'}"
    pods = openb / "pods.csv"
    out = subprocess.run(
        [cli, "simulate", "-t", machine, "-a", "fgd", "--trace", str(pods), "--trace-format", "openb",
         "--format", "json"],
        check=True, capture_output=True, text=True,
    )
    expected = json.loads(out.stdout)
    summary, records = pa.simulate(machine, "fgd", trace=pods, trace_format="openb")
    for key in ("metrics", "replications", "workload", "topology"):
        assert summary[key] == expected[key], key
    first = summary["replications"][0]
    assert first["measured"] == "frag"
    assert 0.0 < first["mean_gpu_allocation"] < 1.0
    assert first["mean_frag_gpus"] > 0.0
    assert len(records) == 120
    with pytest.raises(ValueError, match=r"gpu-sharing cluster"):
        pa.simulate("mesh:4x4", "paging", trace=pods, trace_format="openb")
