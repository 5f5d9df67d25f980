"""partalloc: processor allocation and job scheduling on partitionable
parallel machines (hypercubes, k-ary n-cubes, meshes, tori), from Python.

The simulator is the Rust core of partalloc; this package wraps it:

- :class:`Topology` — a machine, ``Topology("torus:8x8x8")``;
- :func:`strategies` / :func:`policies` — the allocation strategies and
  scheduling policies with their parameters and sources;
- :class:`Allocator` — one strategy on one machine: ``allocate``,
  ``release``, ``occupancy``, faults;
- :func:`simulate` — one simulation point, the same numbers as
  ``partalloc simulate``, with a built-in strategy and policy or ones
  written in Python (a class with ``allocate``/``release``, or ``choose``);
- :func:`check_allocator` — the allocation contract as an executable check,
  for built-in strategies and Python ones;
- :func:`read_swf` / :func:`write_swf` — Standard Workload Format traces;
- :func:`benchmark` — RLScheduler's benchmark protocol (mean bounded
  slowdown of heuristics and policies on sequences cut from a trace);
- :func:`generate_lublin` — jobs of the Lublin–Feitelson workload model;
- :mod:`partalloc.gym` — a Gymnasium environment for learned scheduling.

Errors are Python exceptions with the command line's one-line messages:
``ValueError`` for bad input, :class:`AllocationError` and its subclasses
for refused allocator operations.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import (
    AllocationError,
    ConformanceError,
    FaultError,
    Grant,
    ReleaseError,
    Topology,
    UnsupportedRequestError,
)
from ._benchmark import benchmark

__all__ = [
    "AllocationError",
    "Allocator",
    "ConformanceError",
    "FaultError",
    "Grant",
    "ReleaseError",
    "SWF_FIELDS",
    "Topology",
    "UnsupportedRequestError",
    "benchmark",
    "check_allocator",
    "fgd_experiment",
    "generate_lublin",
    "machine_families",
    "policies",
    "read_swf",
    "read_swf_header",
    "simulate",
    "strategies",
    "write_swf",
]

__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]


def strategies() -> List[Dict[str, Any]]:
    """The allocation strategies: name, summary, source, params, topologies."""
    return _native.strategies()


def machine_families() -> List[Dict[str, Any]]:
    """Every machine family: kind, forms, example (with ``{0}``, ``{1}``
    standing for its files, relative to the repository), files, strategy,
    measured, and a ``workload`` line that every listed strategy places
    (``None``: the family runs traces only)."""
    return _native.machine_families()


def policies() -> List[Dict[str, Any]]:
    """The scheduling policies: name, summary, source, params, topologies."""
    return _native.policies()


class Allocator:
    """One allocation strategy on one machine.

    >>> alloc = Allocator("fsl", "mesh:32x32")
    >>> g = alloc.allocate(shape=(4, 8))
    >>> len(g.nodes), alloc.free_nodes
    (32, 992)
    >>> alloc.release(g)
    """

    __slots__ = ("_inner",)

    def __init__(self, strategy: str, topology: Union[str, Topology]) -> None:
        self._inner = _native.Allocator(strategy, topology)

    @property
    def name(self) -> str:
        """The strategy's name with its parameters."""
        return self._inner.name

    @property
    def topology(self) -> Topology:
        """The machine."""
        return self._inner.topology

    @property
    def free_nodes(self) -> int:
        """Nodes neither busy nor faulty."""
        return self._inner.free_nodes

    @property
    def total_nodes(self) -> int:
        """Nodes of the machine."""
        return self._inner.total_nodes

    @property
    def live_grants(self) -> int:
        """Grants not yet released."""
        return self._inner.live_grants

    def allocate(
        self,
        *,
        shape: Optional[Sequence[int]] = None,
        nodes: Optional[int] = None,
        subcube: Optional[int] = None,
        rotate: bool = False,
    ) -> Optional[Grant]:
        """Allocates a box of sides ``shape`` (any orientation with
        ``rotate``), ``nodes`` nodes, or a subcube of dimension ``subcube``.

        Returns the :class:`Grant`, or ``None`` when the machine has no room
        now. Raises ``ValueError`` for a malformed request and
        :class:`UnsupportedRequestError` for a request the strategy never
        serves on this machine (a subcube on a mesh, say).
        """
        if shape is not None:
            shape = [int(s) for s in shape]
        return self._inner.allocate(shape=shape, nodes=nodes, subcube=subcube, rotate=rotate)

    def can_allocate(
        self,
        *,
        shape: Optional[Sequence[int]] = None,
        nodes: Optional[int] = None,
        subcube: Optional[int] = None,
        rotate: bool = False,
    ) -> bool:
        """Whether :meth:`allocate` with the same arguments would grant a
        partition now, without changing the machine (the same errors for a
        request the strategy never serves). A strategy that can answer from
        its own state does; one that cannot is probed by allocating and
        releasing at once, which its release undoes."""
        if shape is not None:
            shape = [int(s) for s in shape]
        return self._inner.can_allocate(shape=shape, nodes=nodes, subcube=subcube, rotate=rotate)

    def release(self, grant: Grant) -> None:
        """Returns a grant's nodes; :class:`ReleaseError` if it is not live here."""
        self._inner.release(grant)

    def is_available(self, node: int) -> bool:
        """Whether ``node`` is neither busy nor faulty."""
        return self._inner.is_available(node)

    def mark_faulty(self, node: int) -> None:
        """Takes a free node out of service (:class:`FaultError` if it is
        busy or the strategy does not handle faults)."""
        self._inner.mark_faulty(node)

    def repair(self, node: int) -> None:
        """Returns a faulty node to service."""
        self._inner.repair(node)

    def _shaped(self, raw: bytes) -> np.ndarray:
        flat = np.frombuffer(raw, dtype=np.uint8).astype(bool)
        # Node id = Σ a_i · Π_{j<i} k_j: dimension 0 varies fastest, so the
        # array indexed [a_0, a_1, …] is the Fortran-order reshape.
        return flat.reshape(tuple(self.topology.shape), order="F")

    def occupancy(self) -> np.ndarray:
        """A bool array shaped like the machine, ``True`` where a node is
        busy: ``occ[x, y]`` on a mesh, ``occ[b0, b1, …]`` (the node's bits)
        on a hypercube, the same coordinates as :meth:`Topology.coords`."""
        return self._shaped(self._inner._busy_bytes())

    def faulty(self) -> np.ndarray:
        """A bool array shaped like the machine, ``True`` where a node is faulty."""
        return self._shaped(self._inner._faulty_bytes())

    def __repr__(self) -> str:
        return repr(self._inner)


def _grant_nodes(grant: Grant) -> np.ndarray:
    return np.frombuffer(grant._node_bytes(), dtype="<u4").astype(np.int64)


# The nodes of a grant: a NumPy array of node ids in increasing order.
Grant.nodes = property(_grant_nodes)  # type: ignore[attr-defined]


_RECORD_DTYPE = np.dtype(
    [
        ("id", "<u8"),
        ("arrival", "<f8"),
        ("start", "<f8"),
        ("end", "<f8"),
        ("wait", "<f8"),
        ("response", "<f8"),
        ("numerical_delay", "<f8"),
        ("topological_delay", "<f8"),
        ("requested", "<u8"),
        ("granted", "<u8"),
        ("partition", object),
        ("distance_sum", "<f8"),
        ("mean_distance", "<f8"),
        ("diameter", "<f8"),
        ("span", "<f8"),
        ("pieces", "<f8"),
        ("bounded_slowdown", "<f8"),
    ]
)


def _table(columns: Dict[str, Any], dtype: np.dtype, as_frame: Optional[bool]) -> Any:
    arrays = {}
    n = 0
    for name in dtype.names:
        col = columns[name]
        if isinstance(col, bytes):
            arrays[name] = np.frombuffer(col, dtype=dtype[name])
        else:
            arrays[name] = np.asarray(col, dtype=dtype[name])
        n = len(arrays[name])
    if as_frame is None or as_frame:
        try:
            import pandas as pd
        except ImportError:
            if as_frame:
                raise
        else:
            return pd.DataFrame(arrays, columns=list(dtype.names))
    out = np.empty(n, dtype=dtype)
    for name, col in arrays.items():
        out[name] = col
    return out


def simulate(
    topology: Union[str, Topology],
    allocator: Union[str, type],
    scheduler: Union[str, type] = "fcfs",
    *,
    trace: Optional[PathLike] = None,
    workload: Optional[Dict[str, Any]] = None,
    jobs: Optional[int] = None,
    warmup: int = 0,
    time: Optional[float] = None,
    seeds: int = 1,
    seed: int = 1,
    mapping: str = "shapes",
    lenient: bool = False,
    records: bool = True,
    as_frame: Optional[bool] = None,
    runtime_model: Optional[str] = None,
    slowdown_bound: float = 10.0,
    measures: str = "auto",
    trace_format: str = "swf",
    model: Optional[str] = None,
) -> Tuple[Dict[str, Any], Any]:
    """Runs one simulation point, exactly as ``partalloc simulate``.

    Either replay a Standard Workload Format ``trace`` (``jobs``: its first
    jobs only; ``mapping``: ``"shapes"`` or ``"nodes"``), or generate jobs
    from ``workload``, a dict of the command line's workload options
    (``load``, ``shapes``, ``sides``, ``max_sides``, ``cube_dims``,
    ``shape_weights``, ``residence``, ``dependence``, ``allow_saturation``,
    in the same texts and with the same defaults: ``{"load": 0.6,
    "residence": "hyper:5,0.95,4"}``; ``shape_weights`` also as a list of
    numbers) over ``seeds`` replications of ``jobs`` measured
    jobs each (default 1000), replication r drawing from ChaCha8 stream r
    of master seed ``seed``.

    Returns ``(summary, records)``. The summary dict has the fields of the
    command line's JSON report: ``metrics`` (mean and 95% half-width over
    the seeds) and ``replications`` (every result of each seed). The
    records are one row per measured job of the first replication: a
    pandas DataFrame when pandas is installed (or ``as_frame=True``), else
    a NumPy structured array. The simulation runs without the interpreter
    lock, so other Python threads go on meanwhile (a strategy written in
    Python takes it for each of its calls).

    ``allocator`` and ``scheduler`` are registry specs (``"fsl"``,
    ``"m-fcfs[threshold=dynamic]"``) or classes written in Python, made
    once per replication with the :class:`Topology` as their one argument
    (see ``docs/python.md``, "Strategies written in Python"):

    - an allocator class has ``allocate(request)``, given a dict (``nodes``,
      ``kind``: ``"nodes"``, ``"box"`` or ``"subcube"``, ``sides``, ``dim``,
      ``rotate``) and returning the node ids to grant (at least ``nodes`` of
      them, each free) or ``None`` when there is no room now, and
      ``release(nodes)``, told the node ids of a grant that ends;
    - a policy class has ``choose(waiting, free_nodes, now)``, given the
      waiting jobs (dicts: ``id``, ``arrival``, ``service``, ``estimate``,
      ``nodes``) in arrival order and returning the index of the job to
      start, or ``None`` to start nothing more until the next event.

    Their ``name`` attribute (else the class name) names them in the
    summary. A class without those methods is a ``TypeError``; an answer of
    the wrong type a ``TypeError``, a wrong value (a busy node, too few
    nodes, an index past the queue) a ``ValueError``; an exception raised
    inside one of them stops the run and is raised as itself.

    Each record carries its grant's dispersal (``distance_sum``,
    ``mean_distance``, ``diameter``, ``span``, ``pieces``; NaN on a Slurm
    machine) and the results their means. ``runtime_model``
    (``"sst:A[B,C]"`` or ``"linear:K"``, as ``--runtime-model``) makes run
    times grow with dispersal; off by default.

    ``slowdown_bound`` is the threshold τ of the bounded slowdown,
    max(1, response / max(service, τ)), as ``--slowdown-bound``: each record
    has its ``bounded_slowdown`` and the results ``mean_bounded_slowdown``.
    A τ that is not a finite number above 0 is a ``ValueError``.

    ``measures`` names the measures taken beyond the basic ones, as
    ``--measure``: ``"auto"`` (the machine's own: ``dispersal`` on meshes,
    tori, hypercubes and pods, ``capacity``, ``slurm`` or ``pod`` on those
    machines), ``"none"``, or a list such as ``"dispersal,pod"``. A quantity
    not measured is left out of ``metrics`` and is ``None`` in each
    replication's results, whose ``measured`` field names the measures
    taken; a measure the machine does not have is a ``ValueError``.

    ``trace_format`` says what ``trace`` is, as ``--trace-format``:
    ``"swf"``, ``"sacct"`` (a Slurm accounting dump, ``sacct
    --parsable2``: jobs that never ran or do not fit are left out) or
    ``"openb"`` (an OpenB pod list on a GPU-sharing cluster: creation times
    are arrivals, deletion times departures).
    ``model`` draws the jobs from the Lublin–Feitelson model instead, as
    ``--model``: its text form (``"lublin:batch"``,
    ``"lublin:whole:serial=0.3"``; ``docs/lublin.md``), ``jobs`` jobs per
    replication (default 1000), each run to completion; replication 0 runs
    exactly the jobs ``generate_lublin`` (and ``partalloc generate
    --model``) draws for ``seed``, their node counts mapped by ``mapping``.
    ``topology`` takes every machine the command line takes, the file forms
    too (``"blocks:topology.conf"``, ``"kueue:topology.yaml,nodes.yaml"``,
    ``"openb:nodes.csv,pods.csv"``, a pod's ``.toml``).
    """
    summary, columns = _native.simulate(
        topology,
        allocator,
        scheduler,
        trace=os.fspath(trace) if trace is not None else None,
        workload=workload,
        jobs=jobs,
        warmup=warmup,
        time=time,
        seeds=seeds,
        seed=seed,
        mapping=mapping,
        lenient=lenient,
        records=records,
        runtime_model=runtime_model,
        slowdown_bound=slowdown_bound,
        measures=measures,
        trace_format=trace_format,
        model=model,
    )
    return summary, _table(columns, _RECORD_DTYPE, as_frame)


def check_allocator(
    allocator: Union[str, type],
    topology: Union[str, Topology],
    *,
    steps: int = 200,
    seed: int = 0,
) -> Dict[str, int]:
    """Checks an allocation strategy against the allocation contract, as the
    Rust test suites check every built-in one: a random script of ``steps``
    steps from ``seed`` (requests shaped for the machine, releases, double
    releases, faults and repairs) runs on a fresh instance and, in
    lockstep, on a second one (same answers: the choice is deterministic);
    every grant is then released and the script runs again against a fresh
    instance (releasing everything restores the fresh state). After every
    step: no node in two grants, grants hold only free nodes, the free
    count is exact, refusals change nothing, a double release is refused.

    ``allocator`` is a registry spec or a Python allocator class (see
    :func:`simulate`). Returns the counts of the first pass (``granted``,
    ``no_room``, ``rejected``, ``released``); raises
    :class:`ConformanceError` (an ``AssertionError``) naming the first
    broken rule and its step, or the exception a Python strategy raised.

    >>> check_allocator("fsl", "mesh:8x8", steps=50)["granted"] > 0
    True
    """
    return _native.check_allocator(allocator, topology, steps=steps, seed=seed)


SWF_FIELDS: Tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)

_SWF_DTYPE = np.dtype([(f, "<f8") for f in SWF_FIELDS])


def read_swf(path: PathLike, *, lenient: bool = False, as_frame: Optional[bool] = None) -> Any:
    """Reads a Standard Workload Format trace: one row per record with its
    18 fields (:data:`SWF_FIELDS`, NaN where the file says -1), as a pandas
    DataFrame when pandas is installed (header lines in
    ``.attrs["header"]``), else a NumPy structured array
    (:func:`read_swf_header` gives the header)."""
    header, columns = _native.read_swf(os.fspath(path), lenient=lenient)
    table = _table(dict(columns), _SWF_DTYPE, as_frame)
    if hasattr(table, "attrs"):
        table.attrs["header"] = list(header)
    return table


def generate_lublin(
    nodes: int,
    jobs: int,
    *,
    model: str = "lublin",
    seed: int = 1,
    as_frame: Optional[bool] = None,
) -> Any:
    """Draws ``jobs`` jobs of the Lublin–Feitelson workload model (Lublin &
    Feitelson, JPDC 63(11), 2003) for a machine of ``nodes`` nodes, as the
    table :func:`read_swf` returns (the 18 :data:`SWF_FIELDS`, header lines
    in ``.attrs["header"]``), so :func:`write_swf` writes it as a trace.

    ``model`` is the text form of ``partalloc generate --model``:
    ``"lublin"`` (batch and interactive jobs), ``"lublin:batch"``,
    ``"lublin:interactive"`` or ``"lublin:whole"`` (the typeless fit),
    with any parameter changed as ``:key=value``, e.g.
    ``"lublin:whole:serial=0.3:pa=-0.01"`` (``docs/lublin.md`` lists
    them). Jobs come from replication 0 of master seed ``seed``: the same
    records as ``partalloc generate --model MODEL --seed SEED`` on a
    machine of ``nodes`` nodes. Times are in seconds; ``queue`` is 1 for
    batch and 0 for interactive jobs; ``requested_time`` is NaN (the model
    has no runtime estimates). A malformed ``model``, parameters out of
    range or sizes beyond ``nodes`` raise ``ValueError``.

    >>> t = generate_lublin(128, 1000, model="lublin:batch", seed=7, as_frame=False)
    >>> len(t), int(t["allocated_processors"].max()) <= 128
    (1000, True)
    """
    header, columns = _native.generate_lublin(nodes, jobs, model=model, seed=seed)
    table = _table(dict(columns), _SWF_DTYPE, as_frame)
    if hasattr(table, "attrs"):
        table.attrs["header"] = list(header)
    return table


def read_swf_header(path: PathLike) -> List[str]:
    """The header comment lines of a trace."""
    header, _ = _native.read_swf(os.fspath(path))
    return list(header)


def write_swf(path: PathLike, table: Any, header: Optional[Sequence[str]] = None) -> None:
    """Writes a trace from a table with the 18 field columns (a DataFrame, a
    structured array or a dict of sequences; NaN or negative means unknown)
    and header lines (default: a DataFrame's ``.attrs["header"]``). The file
    appears complete or not at all."""
    columns = [np.asarray(table[f], dtype=np.float64).tolist() for f in SWF_FIELDS]
    if header is None and hasattr(table, "attrs"):
        header = table.attrs.get("header")
    _native.write_swf(os.fspath(path), columns, list(header or []))


def fgd_experiment(
    openb: PathLike,
    *,
    workload: str = "openb_pod_list_default",
    policy: str = "FGD",
    seed: int = 42,
) -> Dict[str, List[Optional[float]]]:
    """One experiment of the FGD artifact (Weng et al., "Beware of
    Fragmentation", USENIX ATC 2023) on the OpenB GPU-sharing trace, as
    ``cargo xtask reproduce fgd`` runs it (docs/fgd.md).

    ``openb`` is a directory holding ``openb_node_list_gpu_node.csv`` and
    the pod list ``workload`` (its file name without ``.csv``; the
    repository ships the 17 the paper uses in ``data/openb``). ``policy``
    is one of Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD;
    ``seed`` the tune seed (the paper's are 42–51). Returns the three
    curves of the artifact's analysis, 131 values each for 0–130 % of the
    cluster's GPUs arrived: ``alloc`` (% of GPUs allocated), ``frag`` (%
    fragmented) and ``frag_ratio`` (fragmented share of idle GPUs, %);
    ``None`` where the analysis leaves a gap. An unknown policy or a
    malformed file is a ``ValueError``, a missing file an ``OSError``.
    """
    return _native.fgd_experiment(os.fspath(openb), workload=workload, policy=policy, seed=seed)
