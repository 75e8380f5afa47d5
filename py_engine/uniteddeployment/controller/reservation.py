"""Adaptive allocation, reservation mode: unschedulable pods are kept (reserved) and
temporary substitutes are allocated to later subsets.

Each subset has a capacity of pods expected to be healthy: unlimited when it has
no workload yet or is neither unschedulable nor marked so, else its desired size
minus its reserved pods. Replicas granted beyond that capacity are not counted as
consumed, so later subsets receive them again as substitutes; the sum may then
exceed `spec.replicas` on purpose. docs/uniteddeployment.md, "Reservation mode".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from py_engine.model.ud_constants import MAX_INT32
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.allocation import Allocation
from py_engine.uniteddeployment.controller.capacity import capacity_bounds
from py_engine.uniteddeployment.controller.observed import SubsetObservation


@dataclass
class _Record:
    allocated: int
    capacity: int

    def grant(self, target: int, rest: int) -> int:
        """Raise the allocation towards `target` (it may also lower it) and return how
        much of `rest` that really consumed: nothing beyond the healthy capacity."""
        add = min(target - self.allocated, rest)
        self.allocated += add
        self.capacity -= add
        return max(0, add + self.capacity) if self.capacity < 0 else add


def _capacity(observed: SubsetObservation | None) -> int:
    if observed is None or not (observed.unschedulable or observed.marked_unschedulable):
        return MAX_INT32
    return observed.spec_replicas - observed.reserved_pods


def allocate_reserving(ud: UnitedDeployment, existing: Mapping[str, SubsetObservation]) -> Allocation:
    order = tuple(s.name for s in ud.subsets)
    bounds = capacity_bounds(ud)
    records = {name: _Record(0, _capacity(existing.get(name))) for name in order}
    rest = ud.replicas or 0
    for name in order:
        if rest <= 0:
            break
        rest -= records[name].grant(bounds[name].minimum, rest)
    for name in order:
        if rest <= 0:
            break
        observed = existing.get(name)
        if observed is not None and observed.unschedulable:
            target = observed.spec_replicas  # never grow an unschedulable subset
        else:
            target = bounds[name].maximum
        rest -= records[name].grant(target, rest)
    return Allocation(replicas={name: records[name].allocated for name in order}, order=order)
