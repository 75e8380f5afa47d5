"""Which allocator runs, in Kruise's order: reservation, adaptive, capacity, specified.

Every allocator returns an entry for every spec subset. docs/uniteddeployment.md,
"Allocation".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.adaptive import allocate_adaptive
from py_engine.uniteddeployment.controller.allocation import Allocation
from py_engine.uniteddeployment.controller.capacity import allocate_capacity
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.reservation import allocate_reserving
from py_engine.uniteddeployment.controller.specified import allocate_specified

AllocatorName = Literal["reservation", "adaptive", "capacity", "specified"]


def allocator_for(ud: UnitedDeployment) -> AllocatorName:
    if ud.schedule.reserves:
        return "reservation"
    if ud.schedule.is_adaptive:
        return "adaptive"
    if any(s.min_replicas is not None or s.max_replicas is not None for s in ud.subsets):
        return "capacity"
    return "specified"


def allocate(
    ud: UnitedDeployment, existing: Mapping[str, SubsetObservation], no_node_fit: frozenset[str] = frozenset()
) -> Allocation:
    """Next replicas per spec subset; raises AllocationError when the spec is refused.
    `no_node_fit` (Adaptive default mode only): subsets no node can take a new pod in."""
    name = allocator_for(ud)
    if name == "reservation":
        return allocate_reserving(ud, existing)
    if name == "adaptive":
        return allocate_adaptive(ud, existing, no_node_fit)
    if name == "capacity":
        return allocate_capacity(ud)
    return allocate_specified(ud, existing)
