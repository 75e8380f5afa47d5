"""Listing, replica counts, status bookkeeping and rescheduling details of one sync."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from mutant_support import cloneset

from py_engine.model.workloads import parse_whitelist
from py_engine.workloadspread.controller import ClusterView, ReconcileError, ReconcileOptions, reconcile

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def ws(subsets: list[dict[str, Any]], target: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "default", "generation": 4},
        "spec": {"targetRef": target, "subsets": subsets, **spec},
    }


def pod(
    name: str, owner_uid: str, *, subset: str | None = "a", labels: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "labels": labels or {"app": "x"},
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "X", "name": "o", "uid": owner_uid, "controller": True}
        ],
    }
    if subset is not None:
        meta["annotations"] = {
            "spreadgate.dev/matched-workloadspread": f'{{"name":"ws","subset":"{subset}"}}'
        }
    meta.update(extra.pop("meta", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": "n1", **extra.pop("spec", {})},
        **extra,
    }


CLONESET = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs"}


def replicas_of(result: Any) -> dict[str, int]:
    return {e["name"]: e["replicas"] for e in result.status["subsetStatuses"]}


def test_zero_replicas_lists_no_pods_but_a_job_still_lists_its_pods() -> None:
    pods = [pod("p1", "cs-uid")]
    result = reconcile(ws([{"name": "a"}], CLONESET), ClusterView(cloneset(0), pods), NOW)
    assert replicas_of(result) == {"a": 0} and result.pod_subset == {}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "uid": "j-uid"},
        "spec": {"parallelism": 0, "selector": {"matchLabels": {"app": "x"}}},
    }
    target = {"apiVersion": "batch/v1", "kind": "Job", "name": "j"}
    result = reconcile(
        ws([{"name": "a"}], target),
        ClusterView(job, [pod("p1", "j-uid"), pod("p2", "j-uid", labels={"app": "y"})]),
        NOW,
    )
    assert replicas_of(result) == {"a": 1}
    assert result.costs == {}  # Jobs ignore deletion cost


def test_target_filter_nil_selector_keeps_all_pods_and_a_selector_filters() -> None:
    pods = [
        pod("p1", "cs-uid", labels={"role": "w"}),
        pod("p2", "cs-uid", labels={"role": "ps"}),
        pod("p3", "other"),
    ]
    nil = ws([{"name": "a"}], CLONESET, targetFilter={"replicasPathList": ["spec.replicas"]})
    assert replicas_of(reconcile(nil, ClusterView(cloneset(3), pods), NOW)) == {"a": 2}
    some = ws([{"name": "a"}], CLONESET, targetFilter={"selector": {"matchLabels": {"role": "w"}}})
    assert replicas_of(reconcile(some, ClusterView(cloneset(3), pods), NOW)) == {"a": 1}


def test_replicas_path_list_sums_paths_and_rejects_missing_ones() -> None:
    workload = cloneset(3)
    workload["spec"]["extra"] = [{"replicas": 4}, {"replicas": 6}]
    spread = ws(
        [{"name": "a", "maxReplicas": "50%"}],
        CLONESET,
        targetFilter={"replicasPathList": ["spec.extra.0.replicas", "spec.extra.1.replicas"]},
    )
    result = reconcile(spread, ClusterView(workload, []), NOW)
    assert result.replicas == 10 and result.status["subsetStatuses"][0]["missingReplicas"] == 5
    spread["spec"]["targetFilter"]["replicasPathList"] = ["spec.nope"]
    with pytest.raises(ReconcileError, match=r"spec\.nope"):
        reconcile(spread, ClusterView(workload, []), NOW)


def test_deployment_pods_come_from_its_replicasets_and_versions_are_kept_apart() -> None:
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c"}]}}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "uid": "d-uid"},
        "spec": {"replicas": 4, "template": template},
    }

    def rs(name: str, hash_: str, image: str) -> dict[str, Any]:
        t = copy.deepcopy(template)
        t["metadata"]["labels"]["pod-template-hash"] = hash_
        t["spec"]["containers"][0]["image"] = image
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "uid": f"{name}-uid",
                "labels": {"pod-template-hash": hash_},
                "ownerReferences": [{"kind": "Deployment", "uid": "d-uid", "controller": True}],
            },
            "spec": {"template": t},
        }

    template["spec"]["containers"][0]["image"] = "v2"
    sets = [rs("old", "h1", "v1"), rs("new", "h2", "v2")]
    pods = [pod(f"o{i}", "old-uid", labels={"pod-template-hash": "h1"}) for i in range(2)]
    pods += [pod(f"n{i}", "new-uid", labels={"pod-template-hash": "h2"}) for i in range(2)]
    pods.append(pod("stray", "d-uid"))
    spread = ws(
        [{"name": "a", "maxReplicas": 2}, {"name": "b"}],
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
    )
    spread["metadata"]["annotations"] = {"spreadgate.dev/in-subset-spread": "false"}
    result = reconcile(spread, ClusterView(deployment, pods, replica_sets=sets), NOW)
    assert "stray" not in result.pod_subset
    assert sorted(result.status["versionedSubsetStatuses"]) == ["h1", "h2"]
    assert result.status["versionedSubsetStatuses"]["h1"][0]["replicas"] == 2
    # Caps per version: 2 old + 2 new in a subset capped at 2 are all kept; old ones reversed (a = 100).
    assert result.costs == {"o0": "100", "o1": "100", "n0": "200", "n1": "200"}


def test_missing_workload_gives_empty_subsets() -> None:
    result = reconcile(
        ws([{"name": "a", "maxReplicas": "50%"}], CLONESET), ClusterView(None, [pod("p", "cs-uid")]), NOW
    )
    assert result.status["subsetStatuses"] == [{"name": "a", "replicas": 0, "missingReplicas": 0}]


def test_custom_kind_with_unknown_replicas_leaves_percentage_statuses_empty() -> None:
    target = {"apiVersion": "mock.io/v1", "kind": "Game", "name": "g"}
    game = {"apiVersion": "mock.io/v1", "kind": "Game", "metadata": {"name": "g", "uid": "g-uid"}, "spec": {}}
    spread = ws([{"name": "a", "maxReplicas": "50%"}], target)
    result = reconcile(spread, ClusterView(game, [pod("p", "g-uid")]), NOW)
    assert result.replicas == -1 and result.status["subsetStatuses"] == []
    listed = parse_whitelist('{"workloads":[{"Group":"mock.io","Kind":"Game","replicasPath":"spec.size"}]}')
    game["spec"]["size"] = 6
    result = reconcile(spread, ClusterView(game, [pod("p", "g-uid")], whitelist=listed), NOW)
    assert result.status["subsetStatuses"][0]["missingReplicas"] == 2


def test_unchanged_status_is_not_written_and_nil_equals_empty() -> None:
    spread = ws([{"name": "a", "maxReplicas": 3}], CLONESET)
    view = ClusterView(cloneset(3), [pod("p1", "cs-uid")])
    first = reconcile(spread, view, NOW)
    assert first.status_changed
    spread["status"] = copy.deepcopy(first.status)
    spread["status"]["subsetStatuses"][0]["creatingPods"] = {}
    spread["status"]["subsetStatuses"][0]["conditions"] = None
    assert not reconcile(spread, view, NOW).status_changed
    spread["metadata"]["generation"] = 5
    assert reconcile(spread, view, NOW).status_changed


def test_expired_entries_raise_one_event_each_and_vanished_versions_keep_live_entries() -> None:
    spread = ws([{"name": "a", "maxReplicas": 3}], CLONESET)
    entry = {
        "name": "a",
        "replicas": 0,
        "missingReplicas": 3,
        "creatingPods": {"gone": "2024-06-01T11:59:00Z", "fresh": "2024-06-01T11:59:50Z"},
    }
    spread["status"] = {
        "subsetStatuses": [entry],
        "versionedSubsetStatuses": {"versionIgnored": [entry], "old": [entry]},
    }
    result = reconcile(spread, ClusterView(cloneset(3), []), NOW)
    assert [(e.reason, e.message) for e in result.events] == [
        ("CreatePodFailed", "Pod default/gone was expected to be created but it wasn't")
    ]
    assert sorted(result.status["versionedSubsetStatuses"]) == ["old", "versionIgnored"]
    assert result.status["subsetStatuses"][0]["missingReplicas"] == 2
    assert result.requeue_after == pytest.approx(20)
    later = reconcile(spread, ClusterView(cloneset(3), []), datetime(2024, 6, 1, 12, 1, tzinfo=UTC))
    assert "versionedSubsetStatuses" not in later.status


def adaptive(window: str | None) -> dict[str, Any]:
    spread = ws(
        [{"name": "a", "maxReplicas": 3}, {"name": "b"}],
        CLONESET,
        scheduleStrategy={"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 60}},
    )
    if window is not None:
        spread["metadata"]["annotations"] = {"spreadgate.dev/recovery-window-seconds": window}
    false = {
        "type": "Schedulable",
        "status": "False",
        "reason": "PodUnschedulable",
        "lastTransitionTime": "2024-06-01T11:53:20Z",
    }
    spread["status"] = {
        "subsetStatuses": [
            {"name": "a", "replicas": 0, "missingReplicas": 3, "conditions": [false]},
            {"name": "b", "replicas": 0, "missingReplicas": -1},
        ]
    }
    return spread


def test_recovery_window_defaults_to_300s_and_is_configurable_per_spread() -> None:
    # The subset went unschedulable 400 s ago.
    recovered = reconcile(adaptive(None), ClusterView(cloneset(3), []), NOW)
    assert recovered.status["subsetStatuses"][0]["conditions"][0]["status"] == "True"
    assert [e.reason for e in recovered.events] == ["RecoverSchedulable"]
    waiting = reconcile(adaptive("600"), ClusterView(cloneset(3), []), NOW)
    assert waiting.status["subsetStatuses"][0]["conditions"][0]["status"] == "False"
    assert waiting.requeue_after == pytest.approx(200)
    option = reconcile(
        adaptive(None), ClusterView(cloneset(3), []), NOW, ReconcileOptions(recovery_window_seconds=500)
    )
    assert option.status["subsetStatuses"][0]["conditions"][0]["status"] == "False"


def unschedulable_pod(created: str) -> dict[str, Any]:
    """Pod p of the CloneSet, created at `created`, Pending and marked Unschedulable."""
    return pod(
        "p",
        "cs-uid",
        meta={"creationTimestamp": created},
        spec={"nodeName": ""},
        status={
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    )


def test_pending_pod_before_its_deadline_requeues_instead_of_deleting() -> None:
    stuck = unschedulable_pod("2024-06-01T11:59:30Z")
    spread = adaptive(None)
    spread["status"] = {}
    result = reconcile(spread, ClusterView(cloneset(3), [stuck]), NOW)
    assert result.pods_to_delete == [] and result.requeue_after == pytest.approx(30)
    late = reconcile(spread, ClusterView(cloneset(3), [stuck]), datetime(2024, 6, 1, 12, 0, 31, tzinfo=UTC))
    assert late.pods_to_delete == ["p"]


def test_cost_patches_only_where_the_value_changes() -> None:
    spread = ws([{"name": "a"}], CLONESET)
    spread["metadata"]["annotations"] = {"spreadgate.dev/in-subset-spread": "false"}
    keep = pod(
        "p1",
        "cs-uid",
        meta={
            "annotations": {
                "spreadgate.dev/matched-workloadspread": '{"name":"ws","subset":"a"}',
                "controller.kubernetes.io/pod-deletion-cost": "100",
            }
        },
    )
    result = reconcile(spread, ClusterView(cloneset(2), [keep, pod("p2", "cs-uid")]), NOW)
    assert result.costs == {"p1": "100", "p2": "100"} and result.cost_patches == {"p2": "100"}


def test_malformed_spread_is_a_reconcile_error() -> None:
    with pytest.raises(ReconcileError, match="WorkloadSpread"):
        reconcile(
            {"apiVersion": "spreadgate.dev/v1alpha1", "kind": "WorkloadSpread", "spec": {}},
            ClusterView(None),
            NOW,
        )


def test_a_subset_still_failing_keeps_its_transition_time_so_the_recovery_window_can_run_out() -> None:
    """A subset that was already Schedulable=False and still has a schedule-failed pod keeps
    the moment it *became* unschedulable (§2.5.4): the recovery window counts from there, not
    from the last sync that saw a failure, else a subset re-synced often would never recover."""
    stuck = unschedulable_pod("2024-06-01T11:50:00Z")
    spread = adaptive(None)  # Schedulable=False since 11:53:20
    failing = reconcile(spread, ClusterView(cloneset(3), [stuck]), NOW)
    assert failing.pods_to_delete == ["p"]
    condition = failing.status["subsetStatuses"][0]["conditions"][0]
    assert (condition["status"], condition["lastTransitionTime"]) == ("False", "2024-06-01T11:53:20Z")
    # The pod is gone; 11:53:20 + 300 s has passed by 12:00:30, so the subset recovers now.
    spread["status"] = copy.deepcopy(failing.status)
    later = reconcile(spread, ClusterView(cloneset(3), []), datetime(2024, 6, 1, 12, 0, 30, tzinfo=UTC))
    assert later.status["subsetStatuses"][0]["conditions"][0]["status"] == "True"
    assert [e.reason for e in later.events] == ["RecoverSchedulable"]
