"""Adaptive allocation bounds with node fit: what mutation testing (run U1) found unpinned (the
node-fit tests live in `runtime/`, which the package's mutation runs leave out).

Rules (docs/uniteddeployment.md, "Adaptive scheduling" and "Node fit before allocating"): a
subset no node fits, unless it is unschedulable, keeps the pods it has placed (up to its max, and
at least its min) and gets no more; an unschedulable subset is pinned to its ready pods (min =
max(ready, min), max = min(ready, max)); a schedulable subset with more ready pods than its min
keeps them (min = min(ready, max)); any other subset keeps its capacity bounds.
"""

from __future__ import annotations

import pytest
from ud_testkit import ud_object

from py_engine.model.ud_constants import MAX_INT32
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.adaptive import adaptive_bounds, allocate_adaptive
from py_engine.uniteddeployment.controller.capacity import Bounds
from py_engine.uniteddeployment.controller.observed import SubsetObservation

pytestmark = pytest.mark.timeout(30)


def test_every_kind_of_subset_gets_its_bounds() -> None:
    bounds = {
        "full": Bounds(1, 5),  # no node fits, 7 placed: kept 5 (its max)
        "fresh": Bounds(0, 10),  # no node fits, no workload: nothing
        "unobserved": Bounds(1, 4),  # no workload: unchanged
        "short": Bounds(2, 3),  # no node fits, 1 placed: its min stays
        "healthy": Bounds(0, MAX_INT32),  # 4 ready: kept
        "pinned": Bounds(1, 9),  # no node fits but unschedulable: pinned to its 3 ready pods
        "at-min": Bounds(2, 9),  # ready = min: unchanged
        "capped": Bounds(0, 2),  # 5 ready, max 2
    }
    existing = {
        "full": SubsetObservation(placed_replicas=7, ready_replicas=7),
        "short": SubsetObservation(placed_replicas=1),
        "healthy": SubsetObservation(ready_replicas=4, placed_replicas=9),
        "pinned": SubsetObservation(ready_replicas=3, unschedulable=True, placed_replicas=8),
        "at-min": SubsetObservation(ready_replicas=2),
        "capped": SubsetObservation(ready_replicas=5),
    }
    no_fit = frozenset({"full", "fresh", "short", "pinned"})
    assert adaptive_bounds(bounds, existing, no_fit) == {
        "full": Bounds(5, 5),
        "fresh": Bounds(0, 0),
        "unobserved": Bounds(1, 4),
        "short": Bounds(2, 1),
        "healthy": Bounds(4, MAX_INT32),
        "pinned": Bounds(3, 3),
        "at-min": Bounds(2, 9),
        "capped": Bounds(2, 2),
    }


def test_a_subset_no_node_fits_keeps_what_it_placed_and_the_rest_goes_on() -> None:
    ud = UnitedDeployment.from_object(
        ud_object(6, [{"name": "a"}, {"name": "b"}], schedule={"type": "Adaptive"})
    )
    existing = {"a": SubsetObservation(spec_replicas=6, ready_replicas=1, placed_replicas=2)}
    assert allocate_adaptive(ud, existing, frozenset({"a"})).replicas == {"a": 2, "b": 4}
    assert allocate_adaptive(ud, existing).replicas == {"a": 6, "b": 0}
