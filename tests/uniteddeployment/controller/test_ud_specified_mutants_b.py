"""The specified allocator's refusals and walk order, and the allocator switch, asserted
literally at the edges mutation testing (run U1) found unpinned.

Rules (docs/uniteddeployment.md, "Fixed and percentage replicas" and "Allocation"): an unset
`spec.replicas` reads as -1, so every subset must then be fixed and no sum check applies;
with `spec.replicas` set, fixed replicas above it, or below it when every subset is fixed, are
refused with Kruise's messages. Subsets are walked by (current replicas, name), a new subset
counting 0; the extra replicas of an uneven split go to the end of that walk first.
"""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.allocation import AllocationError
from py_engine.uniteddeployment.controller.allocator import allocate
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.specified import allocate_specified, walk_order

pytestmark = pytest.mark.timeout(30)


def _ud(replicas: int | None, subsets: list[dict[str, Any]], **kwargs: Any) -> UnitedDeployment:
    return UnitedDeployment.from_object(ud_object(replicas, subsets, **kwargs))


def _refusal(ud: UnitedDeployment) -> str:
    with pytest.raises(AllocationError) as refused:
        allocate_specified(ud, {})
    return str(refused.value)


def test_unset_replicas_takes_every_fixed_subset_as_it_is() -> None:
    allocation = allocate_specified(
        _ud(None, [{"name": "a", "replicas": 2}, {"name": "b", "replicas": 3}]), {}
    )
    assert allocation.replicas == {"a": 2, "b": 3}
    assert allocation.order == ("a", "b")


def test_refusals_with_kruises_messages() -> None:
    assert _refusal(_ud(1, [{"name": "a", "replicas": 2}, {"name": "b"}])) == (
        "specified subsets' replica (2) is greater than UnitedDeployment replica (1)"
    )
    assert _refusal(_ud(1, [{"name": "a", "replicas": 0}])) == (
        "specified subsets' replica (0) is less than UnitedDeployment replica (1)"
    )
    assert _refusal(_ud(None, [{"name": "a", "replicas": 2}, {"name": "b"}])) == (
        "all subsets must be specified when UnitedDeployment replica is unspecified"
    )


def test_a_new_subset_counts_zero_in_the_walk() -> None:
    ud = _ud(1, [{"name": "z-old"}, {"name": "a-new"}])
    existing = {"z-old": SubsetObservation(spec_replicas=0)}
    assert walk_order(ud, existing) == ("a-new", "z-old")
    # walked from the end: z-old (largest name among equals) takes the one extra replica
    allocation = allocate_specified(ud, existing)
    assert allocation.replicas == {"a-new": 0, "z-old": 1}
    assert allocation.order == ("a-new", "z-old")


def test_the_switch_hands_node_fit_to_the_adaptive_allocator() -> None:
    ud = _ud(6, [{"name": "a"}, {"name": "b"}], schedule={"type": "Adaptive"})
    existing = {"a": SubsetObservation(spec_replicas=6, ready_replicas=1, placed_replicas=2)}
    assert allocate(ud, existing, frozenset({"a"})).replicas == {"a": 2, "b": 4}
    assert allocate(ud, existing).replicas == {"a": 6, "b": 0}
