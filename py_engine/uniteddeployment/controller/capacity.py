"""Capacity ("min/max") allocation: minimums first in list order, then each subset
filled to its maximum in list order.

Both passes are prefix-greedy, so scaling up fills the first subsets first and
scaling down empties the last ones first. `spec.replicas` unset reads as 0.
docs/uniteddeployment.md, "Capacity: minReplicas and maxReplicas".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from py_engine.model.ud_constants import MAX_INT32
from py_engine.model.uniteddeployment import ReplicaValue, UnitedDeployment
from py_engine.uniteddeployment.controller.allocation import Allocation, AllocationError


@dataclass(frozen=True)
class Bounds:
    minimum: int
    maximum: int


def _resolve(value: ReplicaValue | None, total: int, unset: int) -> int:
    if value is None:
        return unset
    resolved = value.resolve(total)
    return 0 if resolved is None else resolved


def capacity_bounds(ud: UnitedDeployment) -> dict[str, Bounds]:
    """Each subset's [min, max]; max unset is unlimited (int32 max). Refuses min > max."""
    total = ud.replicas or 0
    bounds: dict[str, Bounds] = {}
    for i, subset in enumerate(ud.subsets):
        minimum = _resolve(subset.min_replicas, total, 0)
        maximum = _resolve(subset.max_replicas, total, MAX_INT32)
        if minimum > maximum:
            raise AllocationError(
                f"subset[{i}].maxReplicas({maximum}) must be more than or equal to minReplicas({minimum})"
            )
        bounds[subset.name] = Bounds(minimum, maximum)
    return bounds


def fill_in_order(total: int, order: tuple[str, ...], bounds: Mapping[str, Bounds]) -> Allocation:
    """Pass 1 gives every subset its minimum while replicas remain; pass 2 tops each
    up to its maximum. A bound with min > max (an adaptive pin) gets no top-up."""
    given = dict.fromkeys(order, 0)
    left = total
    for name in order:
        grant = max(0, min(bounds[name].minimum, left))
        given[name] = grant
        left -= grant
    if left > 0:
        for name in order:
            grant = max(0, min(bounds[name].maximum - bounds[name].minimum, left))
            given[name] += grant
            left -= grant
    return Allocation(replicas=given, order=order)


def allocate_capacity(ud: UnitedDeployment) -> Allocation:
    order = tuple(s.name for s in ud.subsets)
    return fill_in_order(ud.replicas or 0, order, capacity_bounds(ud))
