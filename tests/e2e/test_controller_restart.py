"""End to end in real time: the watch-driven controller (caches, triggers, workers), killed and restarted.

While the controller is down the webhook keeps admitting pods (its creatingPods
records pile up in the status) and the ReplicaSet keeps scaling; a restarted
controller must pick up from the API server alone: clear the records, cost the
new pods, and keep the scale-down order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until
from webhook_on_cluster import live_pods, subset_of

from benchmarks.kube_objects import workload, workload_spread
from py_engine.assembled_stack import DEPLOYMENTS, SPREADS, Stack
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.sim.nodepool import nodes_from_description
from py_engine.workloadspread.controller.runtime.loop import LoopOptions

pytestmark = pytest.mark.e2e


def term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "pool", "operator": "In", "values": [pool]}]}


SPREAD = workload_spread(
    "ws",
    [
        {"name": "a", "maxReplicas": 3, "requiredNodeSelectorTerm": term("a")},
        {"name": "b", "maxReplicas": 2, "requiredNodeSelectorTerm": term("b")},
        {"name": "c", "requiredNodeSelectorTerm": term("c")},
    ],
)
DEPLOYMENT = workload("Deployment", "web", replicas=0, namespace="default", container="app", image="nginx:1")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    nodes = nodes_from_description({"pools": [{"name": p, "count": 2, "labels": {"pool": p}} for p in "abc"]})
    with Stack(nodes, virtual=False, workdir=tmp_path, options=LoopOptions(resync_seconds=3600)) as running:
        yield running


def live(stack: Stack) -> list[dict[str, Any]]:
    return live_pods(stack.api)


def records(stack: Stack) -> int:
    """creatingPods + deletingPods entries over the aggregate and per-version lists."""
    status = stack.api.get(SPREADS, "default", "ws").get("status") or {}
    lists = [status.get("subsetStatuses") or [], *(status.get("versionedSubsetStatuses") or {}).values()]
    return sum(
        len(e.get("creatingPods") or {}) + len(e.get("deletingPods") or {})
        for entries in lists
        for e in entries
    )


def converged(stack: Stack, want: dict[str, int]) -> bool:
    """Pods split as `want`, every pod costed, and the status says the same with no records left."""
    pods = live(stack)
    if Counter(subset_of(p) for p in pods) != Counter(want):
        return False
    if not all(DELETION_COST_ANNOTATION in (p["metadata"].get("annotations") or {}) for p in pods):
        return False
    entries = (stack.api.get(SPREADS, "default", "ws").get("status") or {}).get("subsetStatuses") or []
    return {e["name"]: e["replicas"] for e in entries} == want and records(stack) == 0


def scale(stack: Stack, replicas: int) -> None:
    stack.api.patch(DEPLOYMENTS, "default", "web", {"spec": {"replicas": replicas}}, "merge")


def test_controller_killed_and_restarted_mid_run_loses_nothing(stack: Stack) -> None:
    stack.create(DEPLOYMENTS, DEPLOYMENT)
    stack.create(SPREADS, SPREAD)
    scale(stack, 20)
    wait_until(lambda: converged(stack, {"a": 3, "b": 2, "c": 15}), 30, "20 pods costed and counted")
    assert stack.controller is not None
    assert stack.controller.metrics.writes.value(kind="deletion_cost") >= 20

    stack.stop_controller()
    # Down: scale down (the costs already written still steer it), then up again.
    scale(stack, 8)
    wait_until(lambda: len(live(stack)) == 8, 20, "scale-down to 8 without the controller")
    assert Counter(subset_of(p) for p in live(stack)) == Counter({"a": 3, "b": 2, "c": 3})
    scale(stack, 12)
    wait_until(lambda: len(live(stack)) == 12, 20, "scale-up to 12 without the controller")
    uncosted = [
        p for p in live(stack) if DELETION_COST_ANNOTATION not in (p["metadata"].get("annotations") or {})
    ]
    assert len(uncosted) == 4
    # A deleted pod of the capped subset a: the webhook records its deletion and its
    # replacement's reservation (unlimited c needs no records).
    victim = next(p for p in live(stack) if subset_of(p) == "a")["metadata"]["name"]
    stack.api.delete("v1/pods", "default", victim)
    wait_until(
        lambda: len(live(stack)) == 12 and victim not in {p["metadata"]["name"] for p in live(stack)},
        20,
        "the replacement of the deleted a pod",
    )
    assert records(stack) >= 2
    stale = stack.api.get(SPREADS, "default", "ws")["status"]["subsetStatuses"]
    assert [e["replicas"] for e in stale] == [3, 2, 15]  # nobody recounted while the controller was down

    stack.start_controller()
    wait_until(lambda: converged(stack, {"a": 3, "b": 2, "c": 7}), 30, "the restarted controller to catch up")
    scale(stack, 6)
    wait_until(lambda: converged(stack, {"a": 3, "b": 2, "c": 1}), 30, "scale-down to 6 after the restart")
