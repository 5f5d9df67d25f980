"""Shared fixtures: the repository's NASA trace and the partalloc tool."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NASA = ROOT / "data" / "traces" / "NASA-iPSC-1993-3.1-cln.swf"


@pytest.fixture(scope="session")
def nasa() -> Path:
    assert NASA.is_file(), f"{NASA} is missing"
    return NASA


@pytest.fixture(scope="session")
def small_trace(tmp_path_factory: pytest.TempPathFactory, nasa: Path) -> Path:
    """The first 500 jobs of the NASA trace, with its header."""
    out = tmp_path_factory.mktemp("trace") / "nasa-500.swf"
    lines, jobs = [], 0
    with open(nasa) as f:
        for line in f:
            if not line.startswith(";"):
                jobs += 1
                if jobs > 500:
                    break
            lines.append(line)
    out.write_text("".join(lines))
    return out


@pytest.fixture(scope="session")
def cli() -> str:
    """The partalloc tool: $PARTALLOC_CLI, else the workspace's build (in
    $CARGO_TARGET_DIR when set, as cargo puts it there)."""
    exe = os.environ.get("PARTALLOC_CLI")
    if exe:
        if not Path(exe).is_file():
            pytest.fail(f"PARTALLOC_CLI={exe} is not a file (cargo build -p partalloc-cli)")
        return exe
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    if not target.is_absolute():
        target = ROOT / target
    for profile in ("release", "debug"):
        p = target / profile / "partalloc"
        if p.is_file():
            return str(p)
    found = shutil.which("partalloc")
    if found:
        return found
    pytest.skip("the partalloc tool is not built (cargo build -p partalloc-cli, or set PARTALLOC_CLI)")


@pytest.fixture(scope="session")
def busy_trace(tmp_path_factory: pytest.TempPathFactory, small_trace: Path) -> Path:
    """The same 500 jobs arriving 8 times as fast, so that they queue and
    the scheduling policy matters."""
    out = tmp_path_factory.mktemp("trace") / "nasa-500-busy.swf"
    lines = []
    for line in small_trace.read_text().splitlines(keepends=True):
        if not line.startswith(";"):
            fields = line.split()
            fields[1] = str(int(fields[1]) // 8)
            line = " ".join(fields) + "\n"
        lines.append(line)
    out.write_text("".join(lines))
    return out
