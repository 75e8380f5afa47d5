"""Reservation allocation and Manual partitions at the edges mutation testing (run U1) found
unpinned.

Reservation rule (docs/uniteddeployment.md, "Reservation mode"; the upstream allocator is
restated in the repository's design notes): each subset has a record {allocated = 0, capacity};
`grant(target, rest)` adds `min(target - allocated, rest)` (not clamped at 0, so it may lower the
allocation), takes it off the capacity, and consumes `max(0, add + capacity)` when the capacity
went below 0, else the whole `add`. Pass 1 grants the minimums, pass 2 the maximums (an
unschedulable subset: its current size); each pass stops as soon as nothing is left (`rest <= 0`).
Partitions: `partitions[name]` (0 when absent, or when the type is not Manual), clamped to
[0, next replicas], a subset missing from the next replicas reading as 0.
"""

from __future__ import annotations

import dataclasses

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UdUpdateStrategy, UnitedDeployment
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.partitions import next_partitions
from py_engine.uniteddeployment.controller.reservation import allocate_reserving

pytestmark = pytest.mark.timeout(30)

RESERVE = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}


def _ud(replicas: int, subsets: list[dict[str, object]]) -> UnitedDeployment:
    return UnitedDeployment.from_object(ud_object(replicas, subsets, schedule=RESERVE))


def test_pass_two_stops_when_nothing_is_left_and_keeps_a_later_minimum() -> None:
    # Pass 1: x takes its min 2 (rest 1); a (unschedulable, capacity 0 - 0 = 0) gets its min 1,
    # beyond its capacity, so nothing is consumed (rest 1). Pass 2: x (unbounded) takes the 1
    # left; rest is 0, so a is not visited again and keeps 1 (a visit would grant
    # min(0 - 1, 0) = -1 and bring it down to its current size 0).
    ud = _ud(3, [{"name": "x", "minReplicas": 2}, {"name": "a", "minReplicas": 1}])
    existing = {"a": SubsetObservation(spec_replicas=0, unschedulable=True)}
    allocation = allocate_reserving(ud, existing)
    assert allocation.replicas == {"x": 3, "a": 1}
    assert allocation.order == ("x", "a")
    assert allocation.describe() == " x -> 3; a -> 1;"


def test_lowering_an_unschedulable_subset_to_zero_capacity_hands_the_difference_on() -> None:
    # a: unschedulable, current size 1, no reserved pods: capacity 1. Pass 1: grant(3, 3) adds 3,
    # capacity -2, consumes max(0, 3 - 2) = 1 (rest 2); b min 0 adds nothing. Pass 2: a is
    # brought back to its size: add = min(1 - 3, 2) = -2, capacity 0 (not below 0), so the whole
    # -2 is "consumed": rest 4, all of it to b (unbounded).
    ud = _ud(3, [{"name": "a", "minReplicas": 3}, {"name": "b"}])
    existing = {"a": SubsetObservation(spec_replicas=1, unschedulable=True)}
    assert allocate_reserving(ud, existing).replicas == {"a": 1, "b": 4}


def test_partitions_of_a_subset_missing_from_the_next_replicas_are_zero() -> None:
    ud = UnitedDeployment.from_object(
        ud_object(
            4,
            [{"name": "a"}, {"name": "b"}],
            update={"type": "Manual", "manualUpdate": {"partitions": {"a": 5, "b": 2}}},
        )
    )
    assert next_partitions(ud, {"b": 3}) == {"a": 0, "b": 2}
    assert next_partitions(ud, {}) == {"a": 0, "b": 0}


def test_partitions_are_ignored_unless_the_type_is_manual() -> None:
    # The model only accepts Manual ("" reads as Manual); a strategy built directly with
    # another type keeps every subset fully updated, as upstream ignores the partitions.
    ud = UnitedDeployment.from_object(ud_object(4, [{"name": "a"}, {"name": "b"}]))
    other = dataclasses.replace(ud, update_strategy=UdUpdateStrategy(type="Rolling", partitions={"a": 2}))
    assert next_partitions(other, {"a": 3, "b": 1}) == {"a": 0, "b": 0}
    manual = dataclasses.replace(ud, update_strategy=UdUpdateStrategy(type="Manual", partitions={"a": 2}))
    assert next_partitions(manual, {"a": 3, "b": 1}) == {"a": 2, "b": 0}
