"""The "specified" allocator: fixed subset replicas, the remainder spread evenly.

Used when no subset sets `minReplicas`/`maxReplicas` and the strategy is not
Adaptive. Subsets with `replicas` get exactly that; the others ("elastic") share
`spec.replicas - sum(fixed)`, the extra replicas of an uneven split going to the
subsets that are already largest (then the largest name), so an existing split
stays put. An unset `spec.replicas` reads as -1 here, which makes percentages
unresolvable and demands that every subset be fixed. docs/uniteddeployment.md,
"Fixed and percentage replicas".
"""

from __future__ import annotations

from collections.abc import Mapping

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.allocation import Allocation, AllocationError
from py_engine.uniteddeployment.controller.observed import SubsetObservation


def walk_order(ud: UnitedDeployment, existing: Mapping[str, SubsetObservation]) -> tuple[str, ...]:
    """Spec subsets by (current replicas, name) ascending; new subsets count 0."""

    def key(name: str) -> tuple[int, bytes]:
        observed = existing.get(name)
        return (observed.spec_replicas if observed else 0, name.encode())

    return tuple(sorted((s.name for s in ud.subsets), key=key))


def fixed_replicas(ud: UnitedDeployment, total: int) -> dict[str, int]:
    """Subsets whose `replicas` resolves; an unresolvable percentage makes it elastic."""
    fixed: dict[str, int] = {}
    for subset in ud.subsets:
        if subset.replicas is None:
            continue
        value = subset.replicas.resolve(total)
        if value is not None:
            fixed[subset.name] = value
    return fixed


def _check(total: int, fixed: Mapping[str, int], subset_count: int) -> None:
    fixed_sum = sum(fixed.values())
    if total != -1 and fixed_sum > total:
        raise AllocationError(
            f"specified subsets' replica ({fixed_sum}) is greater than UnitedDeployment replica ({total})"
        )
    if total != -1 and fixed_sum < total and len(fixed) == subset_count:
        raise AllocationError(
            f"specified subsets' replica ({fixed_sum}) is less than UnitedDeployment replica ({total})"
        )
    if total == -1 and len(fixed) != subset_count:
        raise AllocationError("all subsets must be specified when UnitedDeployment replica is unspecified")


def allocate_specified(ud: UnitedDeployment, existing: Mapping[str, SubsetObservation]) -> Allocation:
    total = -1 if ud.replicas is None else ud.replicas
    order = walk_order(ud, existing)
    fixed = fixed_replicas(ud, total)
    _check(total, fixed, len(ud.subsets))
    replicas = dict(fixed)
    elastic = [name for name in reversed(order) if name not in fixed]
    if elastic:
        share, extra = divmod(total - sum(fixed.values()), len(elastic))
        for position, name in enumerate(elastic):
            replicas[name] = share + 1 if position < extra else share
    # The allocator keeps its entries sorted by replicas: after the allocation, the new ones.
    final = tuple(sorted(order, key=lambda name: (replicas[name], name.encode())))
    return Allocation(replicas={name: replicas[name] for name in final}, order=final)
