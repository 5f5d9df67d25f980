"""Allocators from Python give the Rust results: the same partitions in the
same order, state restored by releases, errors as Python exceptions."""

from __future__ import annotations

import numpy as np
import pytest

import partalloc as pa


def test_topology_coordinates_and_distances() -> None:
    t = pa.Topology("torus:8x8x8")
    assert (t.num_nodes, t.shape, t.kind, len(t)) == (512, [8, 8, 8], "torus", 512)
    # Dimension 0 varies fastest: node 9 = 1 + 1·8.
    assert t.coords(9) == [1, 1, 0]
    assert t.node([1, 1, 0]) == 9
    # Wrap-around: 0 to 7 is one hop on a torus, seven on a mesh.
    assert t.distance(0, 7) == 1
    assert pa.Topology("mesh:8x8x8").distance(0, 7) == 7
    assert t.diameter == 12
    h = pa.Topology("hypercube:4")
    assert h.coords(0b1010) == [0, 1, 0, 1]
    assert h.distance(0, 15) == 4
    assert sorted(h.neighbours(0)) == [1, 2, 4, 8]
    assert pa.Topology("kary:4^3") == pa.Topology("mesh:4x4x4")
    assert str(t) == "torus:8x8x8" and repr(t) == 'Topology("torus:8x8x8")'


def test_listings_name_parameters_and_sources() -> None:
    names = [s["name"] for s in pa.strategies()]
    assert {"buddy", "fsl", "paging", "partner-ext"} <= set(names)
    fsl = next(s for s in pa.strategies() if s["name"] == "fsl")
    assert fsl["source"] and "mesh" in fsl["topologies"]
    assert all({"name", "default", "doc"} <= set(p) for s in pa.strategies() for p in s["params"])
    assert {"fcfs", "easy-backfilling"} <= {p["name"] for p in pa.policies()}


def test_mesh_box_round_trip_matches_the_rust_first_fit_order() -> None:
    alloc = pa.Allocator("fsl", "mesh:32x32")
    g = alloc.allocate(shape=(4, 8))
    assert g is not None
    # The first grant is the lowest-address box: x 0..3, y 0..7.
    assert g.box == ([0, 0], [4, 8])
    assert g.kind == "box" and g.subcube is None
    expected = sorted(x + 32 * y for x in range(4) for y in range(8))
    assert g.nodes.tolist() == expected
    assert isinstance(g.nodes, np.ndarray)
    assert (g.requested, g.granted, len(g)) == (32, 32, 32)
    assert alloc.free_nodes == 1024 - 32
    occ = alloc.occupancy()
    assert occ.shape == (32, 32) and occ.dtype == bool
    assert occ[:4, :8].all() and occ.sum() == 32
    alloc.release(g)
    assert alloc.free_nodes == 1024 and not alloc.occupancy().any()
    # Fill the machine with 16x16 quarters, then one more is refused.
    quarters = [alloc.allocate(shape=(16, 16)) for _ in range(4)]
    assert all(q is not None for q in quarters)
    assert sorted(tuple(q.box[0]) for q in quarters) == [(0, 0), (0, 16), (16, 0), (16, 16)]
    assert alloc.allocate(shape=(1, 1)) is None
    assert alloc.free_nodes == 0 and alloc.live_grants == 4
    for q in quarters:
        alloc.release(q)
    assert alloc.live_grants == 0 and alloc.free_nodes == 1024


def test_buddy_subcubes_follow_the_binary_buddy_order() -> None:
    alloc = pa.Allocator("buddy", "hypercube:4")
    a = alloc.allocate(subcube=2)
    b = alloc.allocate(subcube=2)
    c = alloc.allocate(subcube=3)
    assert (a.nodes.tolist(), b.nodes.tolist(), c.nodes.tolist()) == (
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        list(range(8, 16)),
    )
    assert a.subcube == "00XX" and c.subcube == "1XXX"
    assert alloc.allocate(subcube=0) is None
    occ = alloc.occupancy()
    assert occ.shape == (2, 2, 2, 2) and occ.all()
    alloc.release(b)
    # The freed buddy is granted again, first.
    assert alloc.allocate(subcube=1).nodes.tolist() == [4, 5]


def test_node_requests_and_faults_on_paging() -> None:
    alloc = pa.Allocator("paging", pa.Topology("mesh:4x4"))
    alloc.mark_faulty(0)
    assert alloc.faulty()[0, 0] and not alloc.is_available(0)
    g = alloc.allocate(nodes=3)
    assert g.nodes.tolist() == [1, 2, 3] and g.kind == "nodes"
    with pytest.raises(pa.FaultError):
        alloc.mark_faulty(2)  # busy
    alloc.repair(0)
    assert alloc.is_available(0) and alloc.free_nodes == 13


def test_errors_are_python_exceptions_with_the_tools_messages() -> None:
    with pytest.raises(ValueError, match=r'^topology: side 0 has length 0'):
        pa.Topology("mesh:0x3")
    with pytest.raises(ValueError, match=r'^unknown allocation strategy "nope"; \d+ known strategies, listed by'):
        pa.Allocator("nope", "mesh:4x4")
    alloc = pa.Allocator("fsl", "mesh:8x8")
    with pytest.raises(pa.UnsupportedRequestError, match="fsl does not support a Q_3 request"):
        alloc.allocate(subcube=3)
    assert issubclass(pa.UnsupportedRequestError, pa.AllocationError)
    with pytest.raises(pa.AllocationError, match="does not fit the 8x8 mesh"):
        alloc.allocate(shape=(16, 1))
    with pytest.raises(ValueError, match="exactly one of"):
        alloc.allocate(shape=(2, 2), nodes=4)
    g = alloc.allocate(shape=(2, 2))
    alloc.release(g)
    with pytest.raises(pa.ReleaseError, match="already released"):
        alloc.release(g)
    other = pa.Allocator("fsl", "mesh:8x8")
    g = alloc.allocate(shape=(2, 2))
    with pytest.raises(pa.ReleaseError, match="another allocator"):
        other.release(g)
    # A refused call changed nothing.
    assert alloc.free_nodes == 60 and other.free_nodes == 64
    with pytest.raises(ValueError, match="outside the machine"):
        alloc.is_available(64)


def test_a_rust_panic_becomes_a_runtime_error():
    from partalloc import _native

    with pytest.raises(RuntimeError, match="internal error in partalloc: deliberate panic"):
        _native._panic_for_tests()


@pytest.mark.parametrize(
    "strategy, machine, request_of",
    [
        ("fsl", "mesh:16x16", lambda i: {"shape": (1 + i * 7 % 9, 1 + i * 5 % 6)}),
        ("buddy", "hypercube:8", lambda i: {"subcube": i * 3 % 6}),
        ("paging", "hypercube:6", lambda i: {"nodes": 1 + i * 5 % 17}),
    ],
)
def test_can_allocate_answers_as_allocate_and_changes_nothing(strategy, machine, request_of) -> None:
    # Two allocators see the same requests; one is also probed before each.
    probed, plain = pa.Allocator(strategy, machine), pa.Allocator(strategy, machine)
    live_p, live_q = [], []
    answers = set()
    for i in range(300):
        req = request_of(i)
        before = probed.occupancy().copy()
        answer = probed.can_allocate(**req)
        answers.add(answer)
        np.testing.assert_array_equal(probed.occupancy(), before)
        g, h = probed.allocate(**req), plain.allocate(**req)
        assert answer == (g is not None)
        # A probe never changes a later grant.
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_array_equal(g.nodes, h.nodes)
            live_p.append(g)
            live_q.append(h)
        if i % 3 == 2 and live_p:
            k = (i * 7) % len(live_p)
            probed.release(live_p.pop(k))
            plain.release(live_q.pop(k))
    assert answers == {True, False}
    with pytest.raises(pa.UnsupportedRequestError):
        pa.Allocator("buddy", "hypercube:4").can_allocate(shape=(2, 2))
    with pytest.raises(ValueError, match="exactly one"):
        probed.can_allocate()
