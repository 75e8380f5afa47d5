"""End to end in virtual time: embedded cluster + real webhook (HTTPS) + controller loop.

The stack (`py_engine.assembled_stack.Stack`) steps the cluster's loops and the
controller on a VirtualClock, so expiries (rescheduleCriticalSeconds, the
recovery window) are crossed exactly, without sleeping.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kube_objects import workload
from py_engine.assembled_stack import DEPLOYMENTS, SPREADS, Stack
from py_engine.model import MATCHED_ANNOTATION
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.sim.nodepool import nodes_from_description

pytestmark = pytest.mark.e2e
ZONE = "topology.kubernetes.io/zone"


def term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "pool", "operator": "In", "values": [pool]}]}


def spread(subsets: list[dict[str, Any]], target: str = "web", **extra: Any) -> dict[str, Any]:
    annotations = extra.pop("annotations", {})
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": f"{target}-spread", "namespace": "default", "annotations": annotations},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "subsets": subsets,
            **extra,
        },
    }


def deployment(name: str, replicas: int = 0, **pod_spec: Any) -> dict[str, Any]:
    dep = workload(
        "Deployment", name, replicas=replicas, namespace="default", container="app", image="nginx:1"
    )
    dep["spec"]["template"]["spec"].update(pod_spec)
    return dep


ABC = [
    {"name": "a", "maxReplicas": 3, "requiredNodeSelectorTerm": term("a")},
    {"name": "b", "maxReplicas": 2, "requiredNodeSelectorTerm": term("b")},
    {"name": "c", "requiredNodeSelectorTerm": term("c")},
]


def live(stack: Stack, app: str = "web") -> list[dict[str, Any]]:
    return [
        p
        for p in stack.api.list("v1/pods", "default", label_selector=f"app={app}")["items"]
        if not p["metadata"].get("deletionTimestamp")
    ]


def subset_of(pod: dict[str, Any]) -> str:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED_ANNOTATION)
    return str(json.loads(raw)["subset"]) if raw else "-"


def by_subset(stack: Stack, app: str = "web") -> Counter[str]:
    return Counter(subset_of(p) for p in live(stack, app))


def scale(stack: Stack, name: str, replicas: int) -> None:
    stack.api.patch(DEPLOYMENTS, "default", name, {"spec": {"replicas": replicas}}, "merge")


def status(stack: Stack, name: str = "web-spread") -> dict[str, Any]:
    return dict(stack.api.get(SPREADS, "default", name).get("status") or {})


@pytest.fixture
def make_stack(tmp_path: Path) -> Iterator[Any]:
    made: list[Stack] = []

    def factory(pools: list[dict[str, Any]]) -> Stack:
        stack = Stack(nodes_from_description({"pools": pools}), workdir=tmp_path / f"stack{len(made)}")
        (tmp_path / f"stack{len(made)}").mkdir()
        made.append(stack)
        return stack.start()

    yield factory
    for stack in made:
        stack.close()


def test_scale_0_20_8_keeps_a_and_b_full_and_removes_c_first(make_stack: Any) -> None:
    stack = make_stack([{"name": p, "count": 2, "labels": {"pool": p}} for p in "abc"])
    stack.create(DEPLOYMENTS, deployment("web"))
    stack.create(SPREADS, spread(ABC))
    stack.settle()
    scale(stack, "web", 20)
    stack.settle()
    assert by_subset(stack) == Counter({"a": 3, "b": 2, "c": 15})
    costs = {
        p["metadata"]["name"]: int(p["metadata"]["annotations"][DELETION_COST_ANNOTATION])
        for p in live(stack)
    }
    subsets = {p["metadata"]["name"]: subset_of(p) for p in live(stack)}
    # Every c pod is cheaper to delete than every b pod, every b pod cheaper than every a pod.
    assert max(c for n, c in costs.items() if subsets[n] == "c") < min(
        c for n, c in costs.items() if subsets[n] == "b"
    )
    assert max(c for n, c in costs.items() if subsets[n] == "b") < min(
        c for n, c in costs.items() if subsets[n] == "a"
    )
    assert [(s["name"], s["replicas"], s["missingReplicas"]) for s in status(stack)["subsetStatuses"]] == [
        ("a", 3, 0),
        ("b", 2, 0),
        ("c", 15, -1),
    ]
    assert all(not s.get("creatingPods") for s in status(stack)["subsetStatuses"])

    before = set(subsets)
    scale(stack, "web", 8)
    stack.settle()
    assert by_subset(stack) == Counter({"a": 3, "b": 2, "c": 3})
    removed = before - {p["metadata"]["name"] for p in live(stack)}
    assert len(removed) == 12 and {subsets[n] for n in removed} == {"c"}
    assert [(s["name"], s["replicas"]) for s in status(stack)["subsetStatuses"]] == [
        ("a", 3),
        ("b", 2),
        ("c", 3),
    ]
    # A quiet cluster makes the controller write nothing more.
    assert stack.controller_step() == 0


def zones_of(stack: Stack, app: str) -> Counter[str]:
    zones = {
        n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in stack.api.list("v1/nodes")["items"]
    }
    return Counter(
        zones[p["spec"]["nodeName"]]
        for p in live(stack, app)
        if zones.get(p["spec"].get("nodeName", "")) in ("c-east", "c-west")
    )


def test_scale_down_keeps_subset_c_balanced_across_its_zones_unlike_a_plain_deployment(
    make_stack: Any,
) -> None:
    # c has two zones of unequal size: 1 node in c-east, 3 in c-west. The scheduler
    # fills nodes evenly, so c-west holds three times as many pods as c-east.
    stack = make_stack(
        [
            {"name": "a", "count": 1, "labels": {"pool": "a", ZONE: "zone-a"}},
            {"name": "b", "count": 1, "labels": {"pool": "b", ZONE: "zone-b"}},
            {"name": "c-east", "count": 1, "labels": {"pool": "c", ZONE: "c-east"}},
            {"name": "c-west", "count": 3, "labels": {"pool": "c", ZONE: "c-west"}},
        ]
    )

    def spread_constraint(app: str) -> list[dict[str, Any]]:
        return [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]

    stack.create(DEPLOYMENTS, deployment("web", topologySpreadConstraints=spread_constraint("web")))
    stack.create(
        DEPLOYMENTS,
        deployment("plain", nodeSelector={"pool": "c"}, topologySpreadConstraints=spread_constraint("plain")),
    )
    stack.create(SPREADS, spread(ABC))
    stack.settle()
    scale(stack, "web", 21)
    scale(stack, "plain", 16)
    stack.settle()
    assert zones_of(stack, "web") == Counter({"c-west": 12, "c-east": 4})
    assert zones_of(stack, "plain") == Counter({"c-west": 12, "c-east": 4})

    scale(stack, "web", 9)
    scale(stack, "plain", 4)
    stack.settle()
    assert by_subset(stack) == Counter({"a": 3, "b": 2, "c": 4})
    assert zones_of(stack, "web") == Counter({"c-east": 2, "c-west": 2})
    # Without the spread's in-subset costs, the ReplicaSet balances nodes, not zones.
    assert zones_of(stack, "plain") == Counter({"c-east": 1, "c-west": 3})


def schedulable(stack: Stack, subset: str) -> dict[str, Any]:
    entry = next(s for s in status(stack)["subsetStatuses"] if s["name"] == subset)
    return dict(next(c for c in entry["conditions"] if c["type"] == "Schedulable"))


def test_adaptive_moves_stuck_pods_within_the_critical_time_and_recovers_after_the_window(
    make_stack: Any,
) -> None:
    critical, window = 10, 30
    stack = make_stack(
        [
            {"name": "a", "count": 1, "labels": {"pool": "a"}, "capacity": {"pods": "2"}},
            {"name": "b", "count": 2, "labels": {"pool": "b"}},
        ]
    )
    stack.create(DEPLOYMENTS, deployment("web"))
    stack.create(
        SPREADS,
        spread(
            [
                {"name": "a", "maxReplicas": 5, "requiredNodeSelectorTerm": term("a")},
                {"name": "b", "requiredNodeSelectorTerm": term("b")},
            ],
            annotations={"spreadgate.dev/recovery-window-seconds": str(window)},
            scheduleStrategy={"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": critical}},
        ),
    )
    stack.settle()
    start = stack.clock.monotonic()
    scale(stack, "web", 6)
    stack.settle(max_advance=0)
    # The burst was admitted before any pod was bound: a got 5, its node fits 2.
    pending = [p for p in live(stack) if not p["spec"].get("nodeName")]
    assert len(pending) == 3 and {subset_of(p) for p in pending} == {"a"}

    stack.advance(critical - 0.5)
    assert len([p for p in live(stack) if not p["spec"].get("nodeName")]) == 3
    assert schedulable(stack, "a")["status"] == "True"

    stack.advance(1.0)  # critical + 0.5 s: the requeue at the expiry has run.
    assert stack.clock.monotonic() - start <= critical + 1
    assert by_subset(stack) == Counter({"a": 2, "b": 4})
    assert all(p["spec"].get("nodeName") for p in live(stack))
    assert schedulable(stack, "a")["status"] == "False"
    assert schedulable(stack, "a")["reason"] == "PodUnschedulable"

    stack.advance(window - 2)
    assert schedulable(stack, "a")["status"] == "False"
    stack.advance(2.5)
    assert schedulable(stack, "a")["status"] == "True"
    reasons = [e["reason"] for e in stack.api.list("v1/events", "default")["items"]]
    assert "RecoverSchedulable" in reasons
    # Recovery changes only the condition: no pod moved meanwhile.
    assert by_subset(stack) == Counter({"a": 2, "b": 4})
