"""The reservation allocator at its edges: what mutation testing (run U1) found unpinned.

The algorithm, as the reference specification states it (docs/uniteddeployment.md, "Reservation
mode"): each subset has a record {allocated = 0, cap}, cap unlimited unless the subset is
unschedulable or marked, then `spec.replicas - reservedPods`. `allocate(to, rest)`: add =
min(to - allocated, rest), not clamped at 0; allocated += add; cap -= add; it consumes
max(0, add + cap) if cap < 0, else add. Pass 1 allocates each subset's min, pass 2 its max (an
unschedulable subset: its current spec.replicas), each pass stopping as soon as rest <= 0. The
expected values below are that computation done by hand.
"""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.reservation import allocate_reserving

pytestmark = pytest.mark.timeout(30)
RESERVE = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}


def model(replicas: int, subsets: list[dict[str, Any]]) -> UnitedDeployment:
    return UnitedDeployment.from_object(ud_object(replicas, subsets, schedule=RESERVE))


def test_pass_two_stops_when_nothing_is_left_even_before_an_unschedulable_subset_below_its_min() -> None:
    ud = model(2, [{"name": "s0"}, {"name": "s1", "minReplicas": 1}])
    existing = {"s1": SubsetObservation(spec_replicas=0, unschedulable=True)}
    # pass 1: s0 0, s1 1 (cap 0 -> -1, consumes 0), rest 2; pass 2: s0 takes 2, rest 0: stop.
    allocation = allocate_reserving(ud, existing)
    assert allocation.replicas == {"s0": 2, "s1": 1}
    assert allocation.describe() == " s0 -> 2; s1 -> 1;"


def test_shrinking_an_unschedulable_subset_to_its_capacity_hands_the_replica_back() -> None:
    ud = model(4, [{"name": "s1", "minReplicas": 2}, {"name": "s2"}])
    existing = {"s1": SubsetObservation(spec_replicas=1, unschedulable=True)}
    # pass 1: s1 add 2, cap 1 -> -1, consumes 1, rest 3; s2 0.
    # pass 2: s1 to 1: add -1, cap -> 0 (not below 0), consumes -1, rest 4; s2 takes 4.
    assert allocate_reserving(ud, existing).replicas == {"s1": 1, "s2": 4}
