"""Strategies written in Python: an allocator class and a policy class run
in simulate and the Gymnasium environment beside the built-in ones, pass
(or fail) the conformance checks, and raise typed errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

import partalloc as pa


class LowestFree:
    """Any free nodes, lowest ids first: the built-in paging, in Python."""

    name = "lowest-free"

    def __init__(self, topology: pa.Topology) -> None:
        self.free = [True] * topology.num_nodes

    def allocate(self, request: Dict[str, Any]) -> Optional[List[int]]:
        ids = [n for n, f in enumerate(self.free) if f][: request["nodes"]]
        if len(ids) < request["nodes"]:
            return None
        for n in ids:
            self.free[n] = False
        return ids

    def release(self, nodes: List[int]) -> None:
        for n in nodes:
            self.free[n] = True


class Fcfs:
    """First come, first served, in Python: the oldest waiting job or nothing."""

    def __init__(self, topology: pa.Topology) -> None:
        pass

    def choose(self, waiting: List[Dict[str, Any]], free_nodes: int, now: float) -> Optional[int]:
        return 0


class SmallestFirst:
    """The waiting job needing the fewest nodes first (then the oldest)."""

    name = "smallest-first"

    def __init__(self, topology: pa.Topology) -> None:
        pass

    def choose(self, waiting: List[Dict[str, Any]], free_nodes: int, now: float) -> Optional[int]:
        return min(range(len(waiting)), key=lambda i: (waiting[i]["nodes"], i))


def results(summary: Dict[str, Any]) -> List[Dict[str, Any]]:
    return summary["replications"]


WORKLOAD = {"load": 0.8, "residence": "exp:1"}


@pytest.mark.parametrize("scheduler", ["fcfs", "easy-backfilling", SmallestFirst])
def test_a_python_paging_gives_the_built_in_paging_results(scheduler: Any) -> None:
    built_in, _ = pa.simulate("mesh:8x8", "paging", scheduler, workload=WORKLOAD, jobs=300, seeds=3)
    ours, records = pa.simulate("mesh:8x8", LowestFree, scheduler, workload=WORKLOAD, jobs=300, seeds=3)
    assert ours["allocator"] == "lowest-free"
    assert results(ours) == results(built_in)
    assert len(records) == 300


def test_a_python_fcfs_gives_the_built_in_fcfs_results(small_trace: Path) -> None:
    built_in, a = pa.simulate("hypercube:7", "buddy", "fcfs", trace=small_trace)
    ours, b = pa.simulate("hypercube:7", "buddy", Fcfs, trace=small_trace)
    assert ours["scheduler"] == "Fcfs"
    assert results(ours) == results(built_in)
    np.testing.assert_array_equal(np.asarray(a["start"]), np.asarray(b["start"]))


def test_smallest_first_on_a_batch_has_its_closed_form_response(tmp_path: Path) -> None:
    # 4 nodes; jobs of 3, 2 and 1 nodes (1 s each) all arrive at 0. FCFS:
    # responses 1, 2, 2; smallest first starts the 1 and the 2: 1, 1, 2.
    trace = tmp_path / "batch.swf"
    trace.write_text(
        "".join(f"{i} 0 -1 1 {n} -1 -1 {n} -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n" for i, n in [(1, 3), (2, 2), (3, 1)])
    )
    expect = {"fcfs": 5 / 3, SmallestFirst: 4 / 3, Fcfs: 5 / 3}
    for policy, mean in expect.items():
        summary, _ = pa.simulate("hypercube:2", LowestFree, policy, trace=trace, mapping="nodes")
        assert results(summary)[0]["mean_response"] == pytest.approx(mean, abs=1e-12), policy


def test_the_conformance_check_passes_good_allocators_and_catches_a_sticky_one() -> None:
    for allocator in ["fsl", "paging", LowestFree]:
        summary = pa.check_allocator(allocator, "mesh:8x8", steps=300, seed=4)
        assert summary["granted"] > 0 and summary["released"] > 0, allocator
    assert pa.check_allocator("buddy", "hypercube:6", steps=300)["granted"] > 0

    class Sticky(LowestFree):
        """Takes the highest free node first once it has seen a release:
        deterministic, but not fresh again once everything is released."""

        def __init__(self, topology: pa.Topology) -> None:
            super().__init__(topology)
            self.released = False

        def allocate(self, request: Dict[str, Any]) -> Optional[List[int]]:
            if not self.released:
                return super().allocate(request)
            ids = [n for n, f in enumerate(self.free) if f][::-1][: request["nodes"]]
            if len(ids) < request["nodes"]:
                return None
            for n in ids:
                self.free[n] = False
            return ids

        def release(self, nodes: List[int]) -> None:
            super().release(nodes)
            self.released = True

    with pytest.raises(pa.ConformanceError, match="fresh instance"):
        pa.check_allocator(Sticky, "mesh:8x8", steps=300, seed=4)


def test_missing_methods_and_instances_are_type_errors() -> None:
    class NoRelease:
        def __init__(self, topology: pa.Topology) -> None:
            pass

        def allocate(self, request: Dict[str, Any]) -> None:
            return None

    with pytest.raises(TypeError, match=r"NoRelease has no method release\(\)"):
        pa.simulate("mesh:4x4", NoRelease, "fcfs", workload=WORKLOAD, jobs=10)
    with pytest.raises(TypeError, match=r"has no method choose\(\)"):
        pa.simulate("mesh:4x4", "paging", NoRelease, workload=WORKLOAD, jobs=10)
    with pytest.raises(TypeError, match="not an instance"):
        pa.simulate("mesh:4x4", LowestFree(pa.Topology("mesh:4x4")), "fcfs", workload=WORKLOAD, jobs=10)
    with pytest.raises(TypeError, match="not an instance"):
        pa.check_allocator(42, "mesh:4x4")
    with pytest.raises(ValueError, match="unknown allocation strategy"):
        pa.check_allocator("no-such", "mesh:4x4")


def answering(answer: Any) -> type:
    class Bad(LowestFree):
        def allocate(self, request: Dict[str, Any]) -> Any:
            return answer(self, request)

    return Bad


@pytest.mark.parametrize(
    "answer, error, message",
    [
        (lambda self, r: "0,1", TypeError, "returned str"),
        (lambda self, r: [0.5], TypeError, "returned list"),
        (lambda self, r: [99] * r["nodes"], ValueError, "outside the machine"),
        (lambda self, r: [-1] * r["nodes"], ValueError, "outside the machine"),
        (lambda self, r: [0] * max(2, r["nodes"]), ValueError, "twice"),
        (lambda self, r: [], ValueError, "returned 0 nodes for a request of"),
        (lambda self, r: list(range(r["nodes"])), ValueError, "which is busy"),
    ],
)
def test_bad_answers_of_an_allocator_are_typed_errors(answer: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        pa.simulate("mesh:4x4", answering(answer), "fcfs", workload=WORKLOAD, jobs=50)


def test_bad_answers_of_a_policy_are_typed_errors() -> None:
    class PastTheEnd(Fcfs):
        def choose(self, waiting: List[Dict[str, Any]], free_nodes: int, now: float) -> int:
            return len(waiting)

    class Text(Fcfs):
        def choose(self, waiting: List[Dict[str, Any]], free_nodes: int, now: float) -> str:
            return "first"

    with pytest.raises(ValueError, match="choose returned 1, but 1 jobs are waiting"):
        pa.simulate("mesh:4x4", "paging", PastTheEnd, workload=WORKLOAD, jobs=50)
    with pytest.raises(TypeError, match="choose returned str"):
        pa.simulate("mesh:4x4", "paging", Text, workload=WORKLOAD, jobs=50)


class Boom(Exception):
    pass


def test_an_exception_inside_a_callback_is_raised_as_itself(small_trace: Path) -> None:
    class Fails(LowestFree):
        def __init__(self, topology: pa.Topology) -> None:
            super().__init__(topology)
            self.calls = 0

        def allocate(self, request: Dict[str, Any]) -> Optional[List[int]]:
            self.calls += 1
            if self.calls == 7:
                raise Boom("the seventh allocation")
            return super().allocate(request)

    class FailsOnRelease(LowestFree):
        def release(self, nodes: List[int]) -> None:
            raise Boom("no release")

    class FailsToChoose(Fcfs):
        def choose(self, waiting: List[Dict[str, Any]], free_nodes: int, now: float) -> int:
            raise Boom("no choice")

    class FailsToStart(LowestFree):
        def __init__(self, topology: pa.Topology) -> None:
            raise Boom("no start")

    for allocator, scheduler, text in [
        (Fails, "fcfs", "seventh"),
        (FailsOnRelease, "fcfs", "no release"),
        ("paging", FailsToChoose, "no choice"),
        (FailsToStart, "fcfs", "no start"),
    ]:
        with pytest.raises(Boom, match=text):
            pa.simulate("hypercube:7", allocator, scheduler, workload=WORKLOAD, jobs=100, seeds=2)
        with pytest.raises(Boom, match=text):
            pa.simulate("hypercube:7", allocator, scheduler, trace=small_trace, mapping="nodes")
    with pytest.raises(Boom, match="seventh"):
        pa.check_allocator(Fails, "mesh:8x8")


def test_a_python_allocator_runs_in_the_gym_environment(small_trace: Path) -> None:
    gym = pytest.importorskip("gymnasium")  # noqa: F841
    from partalloc.gym import SchedulingEnv

    def fcfs_episode(allocator: Any) -> np.ndarray:
        env = SchedulingEnv(small_trace, "hypercube:7", allocator, window=8, mapping="nodes")
        env.reset(seed=0)
        done = False
        while not done:
            _, _, done, _, _ = env.step(0 if env.action_masks()[0] else env.window)
        return np.sort(env.completed_jobs(), order="id")

    ours, theirs = fcfs_episode(LowestFree), fcfs_episode("paging")
    assert len(ours) == 500
    np.testing.assert_array_equal(ours, theirs)

    class FailsLate(LowestFree):
        def release(self, nodes: List[int]) -> None:
            raise Boom("late")

    env = SchedulingEnv(small_trace, "hypercube:7", FailsLate, window=8, mapping="nodes")
    with pytest.raises(Boom, match="late"):
        # The environment probes the largest placeable request by
        # allocating and releasing, so the first release comes early.
        env.reset(seed=0)
        for _ in range(10_000):
            env.step(0 if env.action_masks()[0] else env.window)
