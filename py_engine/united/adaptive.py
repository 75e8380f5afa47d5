"""Adaptive allocation, default mode: an unschedulable subset is pinned to its ready
pods and its share flows to the later subsets; a healthy subset keeps its ready
pods (up to its max). Then the capacity passes run. `subset.replicas` is ignored.
docs/uniteddeployment.md, "Adaptive scheduling".
"""

from __future__ import annotations

from collections.abc import Mapping

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.united.allocation import Allocation
from py_engine.united.capacity import Bounds, capacity_bounds, fill_in_order
from py_engine.united.observed import SubsetObservation


def adaptive_bounds(bounds: Mapping[str, Bounds], existing: Mapping[str, SubsetObservation]) -> dict[str, Bounds]:
    adjusted = dict(bounds)
    for name, bound in bounds.items():
        observed = existing.get(name)
        if observed is None:
            continue
        ready = observed.ready_replicas
        if observed.unschedulable:
            adjusted[name] = Bounds(max(ready, bound.minimum), min(ready, bound.maximum))
        elif ready > bound.minimum:
            adjusted[name] = Bounds(min(ready, bound.maximum), bound.maximum)
    return adjusted


def allocate_adaptive(ud: UnitedDeployment, existing: Mapping[str, SubsetObservation]) -> Allocation:
    order = tuple(s.name for s in ud.subsets)
    return fill_in_order(ud.replicas or 0, order, adaptive_bounds(capacity_bounds(ud), existing))
