"""The Python in the documentation runs as shown.

Every fenced code block of README.md and docs/*.md in one of these
languages is checked, in the order of the document, with one namespace
per document (so a block may use the names an earlier one defined):

- ``python``: run; it must not raise.
- ``pycon``: a doctest (``>>>`` lines and the output they print, compared
  with ``...`` standing for any text and runs of blank space alike).
- ``console``: each ``$ `` line is run in a shell; the lines after it, up
  to the next ``$ `` line, are its standard output, compared exactly.

Blocks run in a scratch directory that holds the repository's ``data``
and ``examples`` directories (as links), so a block's paths are those
of the repository root and what it writes stays out of the repository.

An HTML comment on the line before a block changes what is done with it:

- ``<!-- docs-test: skip: REASON -->``: not run (REASON says what runs it
  instead, e.g. CI's own install step);
- ``<!-- docs-test: needs MODULE -->``: skipped when MODULE cannot be
  imported;
- ``<!-- docs-test: excerpt PATH -->``: the block must appear, line for
  line, in the file PATH of the repository (a quoted part of an example);
- ``<!-- docs-test: output not compared: REASON -->`` (console): run, its
  exit status must be 0, its output is not compared (REASON: wall-clock
  times in it, say).

Blocks in other languages (``sh``, ``toml``, ``text``, …) are not run
here.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python", "pycon", "console"}
FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    lang: str
    line: int  # of the opening fence, 1-based
    text: str
    directive: Optional[str]


def blocks(path: Path) -> List[Block]:
    out: List[Block] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        d = DIRECTIVE.match(lines[k]) if k >= 0 else None
        out.append(Block(m.group(1), i + 1, "\n".join(lines[i + 1 : j]) + "\n", d.group(1) if d else None))
        i = j + 1
    return out


def test_the_convention_finds_the_blocks() -> None:
    found = blocks(ROOT / "docs" / "python.md")
    langs = {b.lang for b in found}
    assert {"python", "pycon", "console"} <= langs
    # Every block of a language that is not run says why, or is a kind of
    # block that shows no Python (install commands say what runs them).
    for b in found:
        if b.lang == "sh":
            assert b.directive and b.directive.startswith("skip:"), f"line {b.line}: an sh block says what runs it"


def run_console(block: Block, cwd: Path, path: Path) -> None:
    commands: List[List[str]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append([line[2:]])
        elif commands:
            commands[-1].append(line)
    assert commands, f"{path.name}:{block.line}: a console block without a $ line"
    compare = not (block.directive or "").startswith("output not compared")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for command, *expected in commands:
        done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True,
                              timeout=900, env=env)
        assert done.returncode == 0, f"{path.name}:{block.line}: `{command}` failed:\n{done.stderr}"
        if compare:
            want = "\n".join(expected).rstrip("\n")
            got = done.stdout.rstrip("\n")
            assert got == want, f"{path.name}:{block.line}: `{command}` printed\n{got}\nnot\n{want}"


def run_doc(path: Path, cwd: Path) -> int:
    """Runs the document's blocks; returns how many ran."""
    namespace: Dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for b in blocks(path):
        if b.lang not in RUN:
            continue
        where = f"{path.relative_to(ROOT)}:{b.line}"
        d = b.directive or ""
        if d.startswith("skip:"):
            continue
        if d.startswith("needs "):
            if importlib.util.find_spec(d.split()[1]) is None:
                continue
        if d.startswith("excerpt "):
            source = (ROOT / d.split(maxsplit=1)[1]).read_text()
            assert b.text.strip("\n") in source, f"{where}: the excerpt is not in {d.split(maxsplit=1)[1]} as shown"
            ran += 1
            continue
        if b.lang == "python":
            try:
                exec(compile(b.text, where, "exec"), namespace)
            except Exception as e:  # pragma: no cover - the message is the point
                raise AssertionError(f"{where}: the block raised {type(e).__name__}: {e}") from e
        elif b.lang == "pycon":
            test = doctest.DocTestParser().get_doctest(b.text, namespace, where, str(path), b.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            report: List[str] = []
            runner.run(test, out=report.append, clear_globs=False)
            assert runner.failures == 0, f"{where}:\n" + "".join(report)
            # A doctest runs in a copy of the namespace: keep what it defined.
            namespace.update(test.globs)
        else:
            run_console(b, cwd, path)
        ran += 1
    return ran


@pytest.fixture()
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("data", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_python_block_of_the_docs_runs_as_shown(doc: Path, scratch: Path) -> None:
    pytest.importorskip("gymnasium")
    pytest.importorskip("pandas")
    ran = run_doc(doc, scratch)
    if doc.name == "python.md":
        assert ran >= 10
