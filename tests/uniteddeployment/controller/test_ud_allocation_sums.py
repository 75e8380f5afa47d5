"""Where Kruise guarantees that the allocated replicas add up to `spec.replicas`, they do.

* Specified allocator: whenever it allocates (does not refuse) and `spec.replicas`
  is set, the sum is `spec.replicas`; with `spec.replicas` unset it allocates only
  when every subset is fixed, and the sum is the fixed values' sum.
* Capacity allocator: when at least one subset has no `maxReplicas`, the sum is
  `spec.replicas` (0 when unset); without one it is `min(spec.replicas, sum of max)`
  at most, so never above.
* Adaptive (default mode): never above `spec.replicas`; equal when some subset
  without `maxReplicas` is schedulable or has no workload yet.
* Reservation mode may allocate more on purpose (substitutes); with no subset
  unschedulable or marked it allocates exactly as the capacity allocator.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.adaptive import allocate_adaptive
from py_engine.uniteddeployment.controller.allocation import AllocationError
from py_engine.uniteddeployment.controller.capacity import allocate_capacity
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.reservation import allocate_reserving
from py_engine.uniteddeployment.controller.specified import allocate_specified

pytestmark = pytest.mark.timeout(120)

TOTALS = st.none() | st.integers(0, 60)
COUNT = st.integers(0, 20) | st.integers(0, 100).map(lambda p: f"{p}%")
OPTIONAL = st.none() | COUNT


def named(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"name": f"s{i}", **{k: v for k, v in item.items() if v is not None}} for i, item in enumerate(values)
    ]


def ud(
    total: int | None, subsets: list[dict[str, Any]], schedule: dict[str, Any] | None = None
) -> UnitedDeployment:
    return UnitedDeployment.from_object(ud_object(total, subsets, schedule=schedule))


OBSERVED = st.builds(
    SubsetObservation,
    spec_replicas=st.integers(0, 20),
    ready_replicas=st.integers(0, 20),
    reserved_pods=st.integers(0, 5),
    unschedulable=st.booleans(),
    marked_unschedulable=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(
    total=TOTALS,
    fixed=st.lists(OPTIONAL, min_size=1, max_size=5),
    current=st.lists(st.integers(0, 20), max_size=5),
)
def test_specified_sum(total: int | None, fixed: list[Any], current: list[int]) -> None:
    model = ud(total, named([{"replicas": v} for v in fixed]))
    existing = {f"s{i}": SubsetObservation(spec_replicas=c) for i, c in enumerate(current)}
    try:
        result = allocate_specified(model, existing)
    except AllocationError:
        return
    assert set(result.replicas) == {s.name for s in model.subsets}
    assert min(result.replicas.values()) >= 0
    if total is not None:
        assert result.total == total
    else:
        assert all(isinstance(v, int) for v in fixed) and result.total == sum(fixed)


BOUNDS = st.tuples(OPTIONAL, OPTIONAL)


@settings(max_examples=150, deadline=None)
@given(total=TOTALS, bounds=st.lists(BOUNDS, min_size=1, max_size=5), unbounded_last=st.booleans())
def test_capacity_sum(total: int | None, bounds: list[tuple[Any, Any]], unbounded_last: bool) -> None:
    if unbounded_last:
        bounds[-1] = (bounds[-1][0], None)
    model = ud(total, named([{"minReplicas": lo, "maxReplicas": hi} for lo, hi in bounds]))
    try:
        result = allocate_capacity(model)
    except AllocationError:
        return
    assert result.total <= (total or 0)
    if any(hi is None for _, hi in bounds):
        assert result.total == (total or 0)


@settings(max_examples=150, deadline=None)
@given(
    total=TOTALS,
    bounds=st.lists(BOUNDS, min_size=1, max_size=5),
    observed=st.lists(st.none() | OBSERVED, min_size=5, max_size=5),
)
def test_adaptive_sum(
    total: int | None, bounds: list[tuple[Any, Any]], observed: list[SubsetObservation | None]
) -> None:
    model = ud(
        total, named([{"minReplicas": lo, "maxReplicas": hi} for lo, hi in bounds]), {"type": "Adaptive"}
    )
    existing = {f"s{i}": o for i, o in enumerate(observed[: len(bounds)]) if o is not None}
    try:
        result = allocate_adaptive(model, existing)
    except AllocationError:
        return
    assert result.total <= (total or 0)
    healthy_unbounded = any(
        hi is None and (f"s{i}" not in existing or not existing[f"s{i}"].unschedulable)
        for i, (_, hi) in enumerate(bounds)
    )
    if healthy_unbounded:
        assert result.total == (total or 0)


@settings(max_examples=100, deadline=None)
@given(
    total=TOTALS,
    bounds=st.lists(BOUNDS, min_size=1, max_size=5),
    current=st.lists(st.integers(0, 9), max_size=5),
)
def test_reservation_without_trouble_is_capacity(
    total: int | None, bounds: list[tuple[Any, Any]], current: list[int]
) -> None:
    bounds[-1] = (bounds[-1][0], None)
    schedule = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}
    model = ud(total, named([{"minReplicas": lo, "maxReplicas": hi} for lo, hi in bounds]), schedule)
    existing = {f"s{i}": SubsetObservation(spec_replicas=c, ready_replicas=c) for i, c in enumerate(current)}
    try:
        expected = allocate_capacity(model)
    except AllocationError:
        return
    assert dict(allocate_reserving(model, existing).replicas) == dict(expected.replicas)
