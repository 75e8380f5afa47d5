"""Edges of the UnitedDeployment bounds: a subset pinned by `minReplicas == maxReplicas`
(docs/uniteddeployment.md, "Capacity: minReplicas and maxReplicas": only min > max is refused)
and negative manual partitions (docs/uniteddeployment.md, "Partitions": clamped to
[0, the subset's next replicas])."""

from __future__ import annotations

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.allocation import AllocationError
from py_engine.uniteddeployment.controller.capacity import allocate_capacity, capacity_bounds
from py_engine.uniteddeployment.controller.partitions import next_partitions

pytestmark = pytest.mark.timeout(30)


def _ud(
    replicas: int, subsets: list[dict[str, object]], partitions: dict[str, int] | None = None
) -> UnitedDeployment:
    update = None if partitions is None else {"type": "Manual", "manualUpdate": {"partitions": partitions}}
    return UnitedDeployment.from_object(ud_object(replicas, subsets, update=update))


def test_min_equal_to_max_pins_the_subset() -> None:
    ud = _ud(10, [{"name": "a", "minReplicas": 3, "maxReplicas": 3}, {"name": "b"}])
    bounds = capacity_bounds(ud)["a"]
    assert (bounds.minimum, bounds.maximum) == (3, 3)
    assert dict(allocate_capacity(ud).replicas) == {"a": 3, "b": 7}
    percent = _ud(10, [{"name": "a", "minReplicas": "30%", "maxReplicas": 3}, {"name": "b"}])
    assert dict(allocate_capacity(percent).replicas) == {"a": 3, "b": 7}
    # One above is still refused.
    with pytest.raises(AllocationError, match=r"maxReplicas\(3\).*minReplicas\(4\)"):
        allocate_capacity(_ud(10, [{"name": "a", "minReplicas": 4, "maxReplicas": 3}, {"name": "b"}]))


def test_negative_partitions_read_as_zero() -> None:
    ud = _ud(6, [{"name": "a"}, {"name": "b"}, {"name": "c"}], partitions={"a": -3, "b": 2, "c": 9})
    assert next_partitions(ud, {"a": 2, "b": 2, "c": 2}) == {"a": 0, "b": 2, "c": 2}
    assert next_partitions(ud, {"a": 0, "b": 0, "c": 0}) == {"a": 0, "b": 0, "c": 0}


def test_capacity_walks_the_subsets_in_spec_order_for_describe() -> None:
    allocation = allocate_capacity(_ud(5, [{"name": "zb", "maxReplicas": 2}, {"name": "za"}]))
    assert allocation.describe() == " zb -> 2; za -> 3;"


def test_percent_bounds_of_an_unset_replicas_resolve_against_zero() -> None:
    """`spec.replicas` unset reads as 0 (docs/uniteddeployment.md): "100%" of 0 is 0, so a
    maxReplicas of 0 is not below it."""
    raw = {"name": "a", "minReplicas": "100%", "maxReplicas": 0}
    ud = UnitedDeployment.from_object(ud_object(None, [raw, {"name": "b"}]))
    assert dict(allocate_capacity(ud).replicas) == {"a": 0, "b": 0}
    bounds = capacity_bounds(ud)["a"]
    assert (bounds.minimum, bounds.maximum) == (0, 0)


def test_the_last_replica_left_after_the_minimums_is_still_placed() -> None:
    ud = _ud(4, [{"name": "a", "minReplicas": 3}, {"name": "b", "minReplicas": 0}])
    assert dict(allocate_capacity(ud).replicas) == {"a": 4, "b": 0}
