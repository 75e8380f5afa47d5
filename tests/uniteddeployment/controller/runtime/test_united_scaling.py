"""Scaling a UnitedDeployment through `/scale` (what `kubectl scale sgud/NAME` and an HPA do),
min/max fill order, and a subset leaving the spec (embedded cluster, virtual time)."""

from __future__ import annotations

from typing import Any

import pytest
from united_kit import UDS, pods_per_subset, pools, replicas_of, scale, term, ud, ud_events, united, workloads

from py_engine.assembled_stack import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

ABC: list[dict[str, Any]] = [
    {"name": "a", "minReplicas": 1, "maxReplicas": 2, "nodeSelectorTerm": term("a")},
    {"name": "b", "maxReplicas": 3, "nodeSelectorTerm": term("b")},
    {"name": "c", "nodeSelectorTerm": term("c")},
]


def test_scale_subresource_fills_in_order_and_empties_in_reverse() -> None:
    with Stack(pools("a", "b", "c")) as stack:
        stack.create(UDS, united("web", 1, ABC))
        stack.settle()
        assert pods_per_subset(stack, "web") == {"a": 1}
        seen = []
        for replicas in (2, 4, 5, 8, 6, 3, 1):
            scale(stack, "web", replicas)
            stack.settle()
            counts = pods_per_subset(stack, "web", placed_only=True)
            seen.append((replicas, counts.get("a", 0), counts.get("b", 0), counts.get("c", 0)))
        assert seen == [
            (2, 2, 0, 0),
            (4, 2, 2, 0),
            (5, 2, 3, 0),
            (8, 2, 3, 3),
            (6, 2, 3, 1),
            (3, 2, 1, 0),
            (1, 1, 0, 0),
        ]
        # The scale subresource reads what the controller writes: status.replicas and the selector.
        scale_obj = stack.api.get(UDS, "default", "web", subresource="scale")
        assert scale_obj["spec"]["replicas"] == 1 and scale_obj["status"]["replicas"] == 1
        assert scale_obj["status"]["selector"] == "app=web"


def test_removed_subset_is_deleted_and_its_share_moves() -> None:
    with Stack(pools("a", "b", "c")) as stack:
        stack.create(UDS, united("web", 6, ABC))
        stack.settle()
        assert replicas_of(stack) == {"a": 2, "b": 3, "c": 1}
        current = ud(stack, "web")
        current["spec"]["topology"]["subsets"] = [
            s for s in current["spec"]["topology"]["subsets"] if s["name"] != "b"
        ]
        stack.api.update(UDS, "default", "web", current)
        stack.settle()
        assert replicas_of(stack) == {"a": 2, "c": 4}
        assert set(workloads(stack)) == {"a", "c"}
        assert pods_per_subset(stack, "web") == {"a": 2, "c": 4}
        status = ud(stack, "web")["status"]
        assert [s["name"] for s in status["subsetStatuses"]] == ["a", "c"]
        messages = [e["message"] for e in ud_events(stack)]
        assert "Delete 1 Subset (Deployment)" in messages


def test_deleting_the_unitedeployment_removes_its_workloads_and_pods() -> None:
    with Stack(pools("a", "b", "c")) as stack:
        stack.create(UDS, united("web", 4, ABC))
        stack.settle()
        assert pods_per_subset(stack, "web") == {"a": 2, "b": 2}
        stack.api.delete(UDS, "default", "web")
        stack.settle()
        assert workloads(stack) == {} and pods_per_subset(stack, "web") == {}
        assert not stack.api.list("apps/v1/controllerrevisions", "default")["items"]
