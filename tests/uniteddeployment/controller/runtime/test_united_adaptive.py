"""Adaptive UnitedDeployments on the embedded cluster (virtual time): a pool no pod can enter.

Kruise's timing (`spreadgate.dev/node-fit: "false"`): the first subset gets its share, its pods
sit Pending for `rescheduleCriticalSeconds`, then the subset is marked unschedulable and the
share moves on. Spreadgate's (default): the subset policy finds no node that fits before
allocating, so the pods never go there; once a node fits again, new capacity goes there first.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from united_kit import UDS, pending_per_subset, pods_per_subset, pools, scale, term, ud, united

from py_engine.assembled_stack import START, Stack
from py_engine.uniteddeployment.controller.runtime.nodefit import NODE_FIT_ANNOTATION

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

CRITICAL, DURATION = 30, 120
ADAPTIVE = {
    "type": "Adaptive",
    "adaptive": {"rescheduleCriticalSeconds": CRITICAL, "unschedulableDuration": DURATION},
}
SUBSETS: list[dict[str, Any]] = [
    {"name": "on-prem", "maxReplicas": 3, "nodeSelectorTerm": term("on-prem")},
    {"name": "elastic", "nodeSelectorTerm": term("elastic")},
]


def untaint(stack: Stack, pool: str) -> None:
    for node in stack.api.list("v1/nodes", None)["items"]:
        if node["metadata"]["labels"].get("node.spreadgate.dev/pool") == pool:
            stack.api.patch("v1/nodes", None, node["metadata"]["name"], {"spec": {"taints": []}}, "merge")


def schedulable(stack: Stack, subset: str) -> str | None:
    for entry in ud(stack, "web")["status"].get("subsetStatuses") or []:
        if entry["name"] == subset:
            return next(
                (c["status"] for c in entry.get("conditions") or [] if c["type"] == "Schedulable"), None
            )
    return None


def test_kruise_timing_pods_wait_pending_then_move() -> None:
    with Stack(pools("on-prem", "elastic", taint="on-prem")) as stack:
        stack.create(
            UDS, united("web", 5, SUBSETS, schedule=ADAPTIVE, annotations={NODE_FIT_ANNOTATION: "false"})
        )
        stack.advance(CRITICAL - 5)
        assert pending_per_subset(stack, "web") == {"on-prem": 3}
        assert pods_per_subset(stack, "web", placed_only=True) == {"elastic": 2}
        stack.advance(10)  # past rescheduleCriticalSeconds: the subset is marked, its share moves
        stack.settle(max_advance=5)
        assert pods_per_subset(stack, "web") == {"elastic": 5}
        assert schedulable(stack, "on-prem") == "False"
        # Recovery: the pool is fixed; after unschedulableDuration the subset is schedulable again,
        # and new capacity goes there first (healthy pods are never moved back).
        untaint(stack, "on-prem")
        stack.advance(DURATION)
        stack.settle(max_advance=5)
        assert schedulable(stack, "on-prem") == "True"
        scale(stack, "web", 8)
        stack.settle(max_advance=5)
        assert pods_per_subset(stack, "web", placed_only=True) == {"on-prem": 3, "elastic": 5}


def test_spreadgate_node_fit_never_places_pods_where_no_node_fits() -> None:
    with Stack(pools("on-prem", "elastic", taint="on-prem")) as stack:
        stack.create(UDS, united("web", 5, SUBSETS, schedule=ADAPTIVE))
        stack.settle(max_advance=1)
        assert pods_per_subset(stack, "web") == {"elastic": 5}
        assert pending_per_subset(stack, "web") == {}
        stack.advance(CRITICAL * 2)
        assert pods_per_subset(stack, "web") == {"elastic": 5}
        assert schedulable(stack, "on-prem") is None  # nothing timed out: never marked
        assert stack.united_controller is not None
        assert stack.united_controller.last["default/web"].no_node_fit == frozenset({"on-prem"})
        # Recovery as soon as a node fits: new capacity goes to the first subset at once.
        untaint(stack, "on-prem")
        scale(stack, "web", 8)
        stack.settle(max_advance=1)
        assert pods_per_subset(stack, "web", placed_only=True) == {"on-prem": 3, "elastic": 5}


def test_node_fit_counts_free_resources() -> None:
    """A pool with room for 2 pods keeps 2 of its 3 (the third found no node at the next sync and
    moved at once, not after rescheduleCriticalSeconds)."""
    with Stack(pools("on-prem", count=1, pods=2) + pools("elastic")) as stack:
        stack.create(UDS, united("web", 5, SUBSETS, schedule=ADAPTIVE))
        stack.settle(max_advance=1)
        assert pods_per_subset(stack, "web", placed_only=True) == {"on-prem": 2, "elastic": 3}
        assert pending_per_subset(stack, "web") == {}
        assert stack.clock.now() < START + timedelta(seconds=CRITICAL)
