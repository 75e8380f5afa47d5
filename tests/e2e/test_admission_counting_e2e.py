"""End to end in real time (embedded cluster, the real webhook over HTTPS, the real
controller until it is stopped): the admission counting fixes of
docs/kruise-compatibility.md, "WorkloadSpread".

* A lowered integer cap holds at admission while the controller is down: the
  webhook counts the subset from the spec's cap and the recorded pods whenever
  the spread's generation is ahead of the status's observedGeneration, and a
  delete of a pod beyond the cap gives no slot back.
* A pod that arrives with a matched-workloadspread annotation and is admitted
  without a subset loses the annotation, so its delete gives nothing back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until
from webhook_on_cluster import live_pods, subset_of

from benchmarks.kube_objects import workload, workload_spread
from py_engine.assembled_stack import DEPLOYMENTS, SPREADS, Stack
from py_engine.model import KRUISE_MATCHED_ANNOTATION, MATCHED_ANNOTATION
from py_engine.sim.nodepool import nodes_from_description
from py_engine.workloadspread.controller.runtime.loop import LoopOptions

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def term(pool: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "pool", "operator": "In", "values": [pool]}]}


def spread(subsets: list[dict[str, Any]]) -> dict[str, Any]:
    return workload_spread("ws", subsets)


def deployment(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    dep = workload("Deployment", "web", replicas=0, namespace="default", container="app", image="nginx:1")
    if annotations:
        dep["spec"]["template"]["metadata"]["annotations"] = annotations
    return dep


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    pools = [
        {
            "name": p,
            "count": 2,
            "labels": {"pool": p},
            "capacity": {"cpu": "64", "memory": "256Gi", "pods": 110},
        }
        for p in "ab"
    ]
    nodes = nodes_from_description({"pools": pools})
    with Stack(nodes, virtual=False, workdir=tmp_path, options=LoopOptions(resync_seconds=3600)) as running:
        yield running


def live(stack: Stack) -> list[dict[str, Any]]:
    return live_pods(stack.api)


def split(stack: Stack) -> Counter[str]:
    return Counter(subset_of(p) for p in live(stack))


def scale(stack: Stack, replicas: int) -> None:
    stack.api.patch(DEPLOYMENTS, "default", "web", {"spec": {"replicas": replicas}}, "merge")


def delete_pods(stack: Stack, names: list[str]) -> None:
    for name in names:
        stack.api.delete("v1/pods", "default", name, grace_period_seconds=0)


def replaced(stack: Stack, total: int, gone: list[str]) -> bool:
    pods = live(stack)
    return len(pods) == total and not {p["metadata"]["name"] for p in pods} & set(gone)


def synced(stack: Stack) -> bool:
    ws = stack.api.get(SPREADS, "default", "ws")
    return bool((ws.get("status") or {}).get("observedGeneration") == ws["metadata"]["generation"])


def version_entry(stack: Stack, subset: str) -> dict[str, Any]:
    versioned = stack.api.get(SPREADS, "default", "ws")["status"]["versionedSubsetStatuses"]
    [entries] = versioned.values()
    entry: dict[str, Any] = next(e for e in entries if e["name"] == subset)
    return entry


def test_a_cap_lowered_mid_burst_holds_with_the_controller_stopped(stack: Stack) -> None:
    capped = {"name": "a", "maxReplicas": 13, "requiredNodeSelectorTerm": term("a")}
    rest = {"name": "b", "requiredNodeSelectorTerm": term("b")}
    stack.create(DEPLOYMENTS, deployment())
    stack.create(SPREADS, spread([capped, rest]))
    scale(stack, 13)
    wait_until(lambda: split(stack) == Counter({"a": 13}), 30, "13 pods in a")
    wait_until(
        lambda: (
            synced(stack)
            and version_entry(stack, "a").get("replicas") == 13
            and not version_entry(stack, "a").get("creatingPods")
        ),
        30,
        "the controller to count a's 13 pods",
    )
    original_a = [p["metadata"]["name"] for p in live(stack) if subset_of(p) == "a"]
    stack.stop_controller()

    # Mid-burst: 27 pods are being created while the cap goes 13 -> 9 and 3 pods of a are
    # deleted. Trusting the stored missingReplicas (0, plus 1 per delete) would admit their
    # replacements into a, back to 13 pods.
    scale(stack, 40)
    stack.api.patch(
        SPREADS, "default", "ws", {"spec": {"subsets": [dict(capped, maxReplicas=9), rest]}}, "merge"
    )
    delete_pods(stack, original_a[:3])
    wait_until(lambda: replaced(stack, 40, original_a[:3]), 60, "40 pods, the 3 deleted ones replaced")
    assert split(stack) == Counter({"a": 10, "b": 30})  # nothing admitted into a over the new cap
    entry = version_entry(stack, "a")
    assert entry["missingReplicas"] == 0 and len(entry["deletingPods"]) == 3

    # Two more deletes: a holds 8 < 9 after the second, which gives exactly one slot back.
    delete_pods(stack, original_a[3:5])
    wait_until(lambda: replaced(stack, 40, original_a[:5]), 60, "the 2 further deletes replaced")
    assert split(stack) == Counter({"a": 9, "b": 31})
    assert version_entry(stack, "a")["missingReplicas"] == 0
    assert not synced(stack)  # all of it decided without the controller


def test_a_forged_matched_annotation_is_removed_and_its_delete_gives_nothing_back(stack: Stack) -> None:
    stack.stop_controller()  # admission alone: no controller recounts or adopts pods
    forged = json.dumps({"name": "ws", "subset": "a"}, separators=(",", ":"))
    # The pod template carries both keys (a manifest copied from a placed pod, say).
    stack.create(DEPLOYMENTS, deployment({MATCHED_ANNOTATION: forged, KRUISE_MATCHED_ANNOTATION: forged}))
    stack.create(SPREADS, spread([{"name": "a", "maxReplicas": 2, "requiredNodeSelectorTerm": term("a")}]))
    scale(stack, 2)
    wait_until(lambda: split(stack) == Counter({"a": 2}), 30, "2 pods in a")

    # A third pod finds no room: admitted without a subset, and without the annotations.
    scale(stack, 3)
    wait_until(lambda: len(live(stack)) == 3, 30, "the third pod")
    [extra] = [p for p in live(stack) if subset_of(p) == "-"]
    annotations = extra["metadata"].get("annotations") or {}
    assert MATCHED_ANNOTATION not in annotations and KRUISE_MATCHED_ANNOTATION not in annotations
    before = version_entry(stack, "a")
    assert before["missingReplicas"] == 0

    # Deleting it gives no slot back: its replacement gets no subset either; the cap holds.
    name = extra["metadata"]["name"]
    delete_pods(stack, [name])
    wait_until(lambda: replaced(stack, 3, [name]), 30, "the replacement of the unplaced pod")
    assert split(stack) == Counter({"a": 2, "-": 1})
    after = version_entry(stack, "a")
    assert after["missingReplicas"] == 0 and not after.get("deletingPods")
    assert after == before
