"""The owner-indexed `PodList` (and the controller-indexed `ReplicaSetList`) list exactly what the
per-spread scan lists, in the same order; one spread's sync does the same work whatever else the
namespace holds (issue 28)."""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.model.constants import MATCHED_ANNOTATION
from py_engine.workloadspread.controller.podlisting import (
    PodList,
    ReplicaSetList,
    _owned_by,
    deployment_replicasets,
    owner_uids,
)
from py_engine.workloadspread.controller.reconcile import ClusterView, reconcile

OWNERS = ["u1", "u2", "u3", "u4"]


def pod(index: int, owners: list[str]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"p{index}",
            "ownerReferences": [{"uid": u, "kind": "ReplicaSet"} for u in owners],
        }
    }


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(OWNERS), max_size=3), max_size=40),
    st.sets(st.sampled_from([*OWNERS, "absent"]), max_size=3),
)
def test_index_equals_the_scan_in_list_order(owner_lists: list[list[str]], uids: set[str]) -> None:
    pods = [pod(i, owners) for i, owners in enumerate(owner_lists)]
    scanned = [p for p in pods if owner_uids(p) & uids]
    indexed = PodList(pods)
    assert _owned_by(indexed, uids) == scanned
    assert _owned_by(indexed, uids) == scanned  # the second lookup reuses the index
    assert _owned_by(pods, uids) == scanned  # a plain list still scans


def test_a_pod_with_two_references_to_the_same_owner_is_listed_once() -> None:
    pods = PodList([pod(0, ["u1", "u1"]), pod(1, ["u2"]), pod(2, ["u1", "u2"])])
    assert [p["metadata"]["name"] for p in pods.owned_by({"u1", "u2"})] == ["p0", "p1", "p2"]
    assert [p["metadata"]["name"] for p in pods.owned_by({"u1"})] == ["p0", "p2"]


def test_malformed_references_are_ignored_like_the_scan() -> None:
    rng = random.Random(3)
    odd: list[Any] = [None, "x", {"uid": ""}, {"name": "n"}, {"uid": "u1"}]
    pods = [{"metadata": {"name": f"p{i}", "ownerReferences": [rng.choice(odd)]}} for i in range(30)]
    pods.append({"metadata": {"name": "q", "ownerReferences": "not-a-list"}})
    assert PodList(pods).owned_by({"u1"}) == [p for p in pods if owner_uids(p) & {"u1"}]


# ------------------------------------------------ ReplicaSets indexed by controller (issue 28)

DEPLOYMENT_UIDS = ["d1", "d2", "d3", ""]


def replica_set(index: int, refs: list[tuple[str, bool]], deleting: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": f"rs{index}",
        "uid": f"rs-uid-{index}",
        "ownerReferences": [{"uid": u, "kind": "Deployment", "controller": c} for u, c in refs],
    }
    if deleting:
        meta["deletionTimestamp"] = "2024-06-01T12:00:00Z"
    return {"metadata": meta}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.tuples(st.sampled_from(DEPLOYMENT_UIDS), st.booleans()), max_size=2), st.booleans()
        ),
        max_size=30,
    ),
    st.sampled_from([*DEPLOYMENT_UIDS, "absent"]),
)
def test_replica_set_index_equals_the_scan_in_list_order(
    specs: list[tuple[list[tuple[str, bool]], bool]], uid: str
) -> None:
    sets = [replica_set(i, refs, deleting) for i, (refs, deleting) in enumerate(specs)]
    deployment = {"metadata": {"uid": uid}} if uid else {"metadata": {}}
    scanned = deployment_replicasets(deployment, sets)
    indexed = ReplicaSetList(sets)
    assert deployment_replicasets(deployment, indexed) == scanned
    assert deployment_replicasets(deployment, indexed) == scanned  # the second lookup reuses the index


def test_one_spreads_sync_reads_the_same_whatever_the_namespace_holds_besides() -> None:
    """Counted, not timed: the Python calls of one spread's sync with 2 and with 60 other
    workloads (their ReplicaSets and pods) in the namespace, as the sources hand them out."""

    def calls(others: int) -> int:
        spread, deployment, replica_sets, pods = reconcile_namespace(others)
        view = ClusterView(
            workload=deployment, pods=PodList(pods), nodes={}, replica_sets=ReplicaSetList(replica_sets)
        )
        reconcile(spread, view, NOW)  # the indexes are built once per namespace list
        counter = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "call":
                counter[0] += 1

        sys.setprofile(profile)
        try:
            result = reconcile(spread, view, NOW)
        finally:
            sys.setprofile(None)
        assert result.status_changed and result.costs
        return counter[0]

    small, large = calls(2), calls(60)
    assert large <= small * 1.02 + 10, (small, large)


NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def reconcile_namespace(
    others: int,
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The spread of `web` (10 pods over subsets capped 6 / 3 / none) and its Deployment, with
    `others` more workloads of 5 pods each: the namespace's ReplicaSets and pods."""
    replica_sets: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    first: tuple[dict[str, Any], dict[str, Any]] | None = None
    for k in range(others + 1):
        app = "web" if k == 0 else f"other{k:03d}"
        count = 10 if k == 0 else 5
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": app, "namespace": "default", "uid": f"uid-dep-{app}"},
            "spec": {
                "replicas": count,
                "selector": {"matchLabels": {"app": app}},
                "template": {"metadata": {"labels": {"app": app}}},
            },
        }
        replica_sets.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{app}-h",
                    "namespace": "default",
                    "uid": f"uid-rs-{app}",
                    "labels": {"app": app, "pod-template-hash": "h"},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": app,
                            "uid": f"uid-dep-{app}",
                            "controller": True,
                        }
                    ],
                },
                "spec": {"replicas": count, "template": {"metadata": {"labels": {"app": app}}}},
            }
        )
        spread = {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": f"ws-{app}", "namespace": "default", "generation": 1},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": app},
                "subsets": [
                    {"name": "s0", "maxReplicas": 6},
                    {"name": "s1", "maxReplicas": 3},
                    {"name": "s2"},
                ],
            },
        }
        for i in range(count):
            subset = "s0" if i < 6 else "s1" if i < 9 else "s2"
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{app}-h-{i:03d}",
                        "namespace": "default",
                        "uid": f"uid-{app}-{i}",
                        "creationTimestamp": f"2024-06-01T10:{i:02d}:00Z",
                        "labels": {"app": app, "pod-template-hash": "h"},
                        "annotations": {MATCHED_ANNOTATION: f'{{"name":"ws-{app}","subset":"{subset}"}}'},
                        "ownerReferences": [
                            {
                                "apiVersion": "apps/v1",
                                "kind": "ReplicaSet",
                                "name": f"{app}-h",
                                "uid": f"uid-rs-{app}",
                                "controller": True,
                            }
                        ],
                    },
                    "spec": {"nodeName": f"node-{i % 3}"},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                }
            )
        if k == 0:
            first = (spread, deployment)
    assert first is not None
    return first[0], first[1], replica_sets, pods
