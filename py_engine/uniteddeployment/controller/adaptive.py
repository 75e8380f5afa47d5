"""Adaptive allocation, default mode: an unschedulable subset is pinned to its ready
pods and its share flows to the later subsets; a healthy subset keeps its ready
pods (up to its max). Then the capacity passes run. `subset.replicas` is ignored.
A subset in `no_node_fit` (no node can take another pod, as the subset policy
judged it before allocating) keeps the pods it has placed and gets no more.
docs/uniteddeployment.md, "Adaptive scheduling" and "Node fit before allocating".
"""

from __future__ import annotations

from collections.abc import Mapping

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.allocation import Allocation
from py_engine.uniteddeployment.controller.capacity import Bounds, capacity_bounds, fill_in_order
from py_engine.uniteddeployment.controller.observed import SubsetObservation


def adaptive_bounds(
    bounds: Mapping[str, Bounds],
    existing: Mapping[str, SubsetObservation],
    no_node_fit: frozenset[str] = frozenset(),
) -> dict[str, Bounds]:
    adjusted = dict(bounds)
    for name, bound in bounds.items():
        observed = existing.get(name)
        if name in no_node_fit and (observed is None or not observed.unschedulable):
            kept = min(observed.placed_replicas if observed is not None else 0, bound.maximum)
            adjusted[name] = Bounds(max(kept, bound.minimum), kept)
            continue
        if observed is None:
            continue
        ready = observed.ready_replicas
        if observed.unschedulable:
            adjusted[name] = Bounds(max(ready, bound.minimum), min(ready, bound.maximum))
        elif ready > bound.minimum:
            adjusted[name] = Bounds(min(ready, bound.maximum), bound.maximum)
    return adjusted


def allocate_adaptive(
    ud: UnitedDeployment, existing: Mapping[str, SubsetObservation], no_node_fit: frozenset[str] = frozenset()
) -> Allocation:
    order = tuple(s.name for s in ud.subsets)
    return fill_in_order(ud.replicas or 0, order, adaptive_bounds(capacity_bounds(ud), existing, no_node_fit))
