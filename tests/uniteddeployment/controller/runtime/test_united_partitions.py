"""A template change under Manual partitions (StatefulSet subsets, embedded cluster, virtual time):
each subset keeps `partition` pods on the old revision until the partition is lowered."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from united_kit import UDS, live_pods, pools, term, ud, united

from py_engine.assembled_stack import Stack
from py_engine.model.ud_constants import SUBSET_NAME_LABEL

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

AB: list[dict[str, Any]] = [
    {"name": "a", "replicas": 3, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def images(stack: Stack) -> Counter[tuple[str, str]]:
    return Counter(
        (p["metadata"]["labels"][SUBSET_NAME_LABEL], p["spec"]["containers"][0]["image"])
        for p in live_pods(stack, "db")
    )


def set_partitions(stack: Stack, partitions: dict[str, int]) -> None:
    stack.api.patch(
        UDS,
        "default",
        "db",
        {"spec": {"updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": partitions}}}},
        "merge",
    )


def test_template_update_respects_partitions_then_completes() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("db", 5, AB, kind="statefulSetTemplate", partitions={"a": 3, "b": 0}))
        stack.settle()
        old = ud(stack, "db")["status"]["currentRevision"]
        assert images(stack) == {("a", "nginx:1.27"): 3, ("b", "nginx:1.27"): 2}
        template = ud(stack, "db")["spec"]["template"]["statefulSetTemplate"]
        template["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
        stack.api.patch(
            UDS, "default", "db", {"spec": {"template": {"statefulSetTemplate": template}}}, "merge"
        )
        stack.settle(max_advance=300)
        assert images(stack) == {("a", "nginx:1.27"): 3, ("b", "nginx:1.28"): 2}
        status = ud(stack, "db")["status"]
        assert status["updatedRevision"] != old and status["currentRevision"] == old
        assert status["updatedReplicas"] == 2
        assert [(s["name"], s["partition"]) for s in status["subsetStatuses"]] == [("a", 3), ("b", 0)]
        set_partitions(stack, {"a": 1})
        stack.settle(max_advance=300)
        assert images(stack) == {("a", "nginx:1.27"): 1, ("a", "nginx:1.28"): 2, ("b", "nginx:1.28"): 2}
        kept = [
            p["metadata"]["name"]
            for p in live_pods(stack, "db")
            if p["spec"]["containers"][0]["image"] == "nginx:1.27"
        ]
        assert len(kept) == 1 and kept[0].endswith("-0")  # ordinals below the partition stay
        set_partitions(stack, {"a": 0})
        stack.settle(max_advance=300)
        assert images(stack) == {("a", "nginx:1.28"): 3, ("b", "nginx:1.28"): 2}
        stack.settle(max_advance=5)
        status = ud(stack, "db")["status"]
        assert status["currentRevision"] == status["updatedRevision"]
        assert len(stack.api.list("apps/v1/controllerrevisions", "default")["items"]) == 2


def test_rollback_renumbers_the_old_revision_instead_of_creating_one() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("db", 3, AB, kind="statefulSetTemplate"))
        stack.settle()
        first = ud(stack, "db")["status"]["updatedRevision"]
        original = ud(stack, "db")["spec"]["template"]["statefulSetTemplate"]
        changed = json.loads(json.dumps(original))
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
        for template in (changed, original):
            stack.api.patch(
                UDS, "default", "db", {"spec": {"template": {"statefulSetTemplate": template}}}, "merge"
            )
            stack.settle(max_advance=300)
        revisions = {
            r["metadata"]["name"]: r["revision"]
            for r in stack.api.list("apps/v1/controllerrevisions", "default")["items"]
        }
        assert len(revisions) == 2 and revisions[first] == 3
        status = ud(stack, "db")["status"]
        assert status["updatedRevision"] == first == status["currentRevision"]
        assert images(stack) == {("a", "nginx:1.27"): 3}
