"""RLScheduler's benchmark protocol: :func:`partalloc.benchmark`."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def benchmark(
    trace: PathLike,
    *,
    policies: Optional[Sequence[str]] = None,
    backfill: str = "both",
    schedulers: Optional[Sequence[str]] = None,
    sequences: int = 10,
    length: int = 256,
    seed: int = 0,
    starts: Optional[Sequence[int]] = None,
    slowdown_bound: float = 10.0,
) -> Dict[str, Any]:
    """Scores heuristics (and any policy) by RLScheduler's protocol, exactly
    as ``partalloc benchmark``: the mean bounded slowdown of ``sequences``
    sequences of ``length`` jobs cut from the SWF ``trace`` (starts drawn
    with ``seed`` on [length, jobs − length − 1), or the given ``starts``),
    each replayed alone on the trace's machine (MaxNodes) one event per
    step, as RLScheduler's simulator does (docs/rl-benchmark.md).

    ``policies`` are queue orders run as RLScheduler's heuristics
    (default ``["fcfs", "wfp3", "unicep", "sjf", "f1"]``; the simulator's
    own WFP3 and UNICEP are ``"wfp3-rlscheduler"`` and
    ``"unicep-rlscheduler"``), each with ``backfill`` ``"off"``, ``"on"``
    or ``"both"``; ``schedulers`` adds any policy spec.

    Returns a dict of columns, one entry per policy: ``policy``,
    ``backfill`` (``True``/``False``, ``None`` for a ``schedulers`` entry),
    ``mean``, ``per_sequence`` (a list per policy), plus ``starts``,
    ``trace_jobs`` and ``nodes``. ``pandas.DataFrame({k: r[k] for k in
    ("policy", "backfill", "mean")})`` makes the table.

    Raises ``ValueError`` (one line) for an unknown heuristic or policy,
    sequences longer than the trace allows, ``slowdown_bound`` ≤ 0, a bad
    ``backfill`` or an unreadable trace.
    """
    return _native.benchmark(
        os.fspath(trace),
        policies=None if policies is None else list(policies),
        backfill=backfill,
        schedulers=None if schedulers is None else list(schedulers),
        sequences=sequences,
        length=length,
        seed=seed,
        starts=None if starts is None else list(starts),
        slowdown_bound=slowdown_bound,
    )
