"""`plan(state, now)`: one UnitedDeployment sync over a snapshot."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pod_kit import pod_object
from ud_testkit import OWNER, statefulset_template, ud_object

from py_engine.semantics.timeutil import format_time
from py_engine.uniteddeployment.controller.construct import workload_metadata
from py_engine.uniteddeployment.controller.plan import Plan, plan
from py_engine.uniteddeployment.controller.revisions import revision_name
from py_engine.uniteddeployment.controller.state import StateError, UnitedState, state_from_objects

pytestmark = pytest.mark.timeout(30)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def ago(seconds: float) -> str:
    return format_time(NOW - timedelta(seconds=seconds))


def run(objects: list[dict[str, Any]], now: datetime = NOW) -> Plan:
    return plan(state_from_objects(objects), now)


def workload(
    name: str,
    subset: str,
    replicas: int,
    *,
    ready: int | None = None,
    revision: str = "",
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    owned: bool = True,
) -> dict[str, Any]:
    labels = {"app": "web", "spreadgate.dev/subset-name": subset}
    if revision:
        labels["spreadgate.dev/controller-revision-hash"] = revision
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels}
    if owned:
        meta["ownerReferences"] = [dict(OWNER)]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web", "spreadgate.dev/subset-name": subset}},
        },
        "status": {"replicas": replicas, "readyReplicas": replicas if ready is None else ready},
    }


def pod(
    name: str,
    subset: str,
    *,
    revision: str = "",
    pending_for: float | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any]
    if pending_for is None:
        status = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ago(600)}],
        }
        spec = {"nodeName": "n1"}
    else:
        status = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "lastTransitionTime": ago(pending_for),
                }
            ],
        }
        spec = {}
    labels = {
        "app": "web",
        "spreadgate.dev/subset-name": subset,
        "spreadgate.dev/controller-revision-hash": revision,
        **(labels or {}),
    }
    return pod_object(name, spec, status, creationTimestamp=ago(3600), labels=labels)


def kinds(objects: tuple[dict[str, Any], ...]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"].get("name") or o["metadata"].get("generateName")) for o in objects]


def test_fresh_ud_creates_revision_and_workloads_in_name_order() -> None:
    result = run([ud_object(10, [{"name": "zb", "replicas": 4}, {"name": "za"}])])
    assert result.errors == () and not result.refused
    assert {n: (s.replicas, s.partition) for n, s in result.subsets.items()} == {"zb": (4, 0), "za": (6, 0)}
    revision = result.status["updatedRevision"]
    assert kinds(result.create) == [
        ("ControllerRevision", revision),
        ("Deployment", "web-za-"),
        ("Deployment", "web-zb-"),
    ]
    assert result.update == () and result.delete == ()
    status = result.status
    assert status["currentRevision"] == revision and status["labelSelector"] == "app=web"
    assert [e["name"] for e in status["subsetStatuses"]] == ["zb", "za"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "UnitedDeploymentUpdated": "True",
        "SubsetProvisioned": "True",
        "SubsetUpdated": "True",
    }
    assert set(result.to_json()) == {"subsets", "create", "update", "delete", "release", "status", "errors"}


def test_refused_allocation_touches_nothing() -> None:
    obj = ud_object(5, [{"name": "a", "replicas": 4}, {"name": "b", "replicas": 3}])
    obj["status"] = {"replicas": 5}
    result = run([obj])
    assert result.refused and "is greater than UnitedDeployment replica" in result.errors[0]
    assert (result.create, result.update, result.delete, result.status) == ((), (), (), {"replicas": 5})


def steady_objects() -> list[dict[str, Any]]:
    """A UD whose two subsets exist exactly as the plan builds them."""
    obj = ud_object(4, [{"name": "a", "maxReplicas": 1}, {"name": "b"}])
    first = run([obj])
    objects: list[dict[str, Any]] = [obj]
    for i, created in enumerate(first.create):
        created = copy.deepcopy(created)
        if created["kind"] == "Deployment":
            created["metadata"]["name"] = created["metadata"].pop("generateName") + f"x{i}"
            created["status"] = {
                "replicas": created["spec"]["replicas"],
                "readyReplicas": created["spec"]["replicas"],
            }
        objects.append(created)
    objects[0] = {**obj, "status": first.status}
    return objects


def test_a_second_sync_over_its_own_result_writes_nothing() -> None:
    result = run(steady_objects())
    assert (result.create, result.update, result.delete, result.errors) == ((), (), (), ())
    assert {n: s.replicas for n, s in result.subsets.items()} == {"a": 1, "b": 3}


def test_template_change_updates_every_subset_with_the_new_revision() -> None:
    objects = steady_objects()
    objects[0] = copy.deepcopy(objects[0])
    objects[0]["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0][
        "image"
    ] = "v2"
    result = run(objects)
    new_revision = result.status["updatedRevision"]
    assert kinds(result.create) == [("ControllerRevision", new_revision)]
    assert [o["metadata"]["labels"]["spreadgate.dev/controller-revision-hash"] for o in result.update] == [
        new_revision,
        new_revision,
    ]
    updated = {c["type"]: c for c in result.status["conditions"]}["UnitedDeploymentUpdated"]
    assert updated["status"] == "False" and updated["reason"] == "UnitedDeploymentRevisionUpdating"


def test_deletes_removed_duplicate_and_other_kind_workloads_and_leaves_others() -> None:
    obj = ud_object(4, [{"name": "a"}])
    objects = [
        obj,
        workload("web-a-1", "a", 4),
        workload("web-a-2", "a", 1),
        workload("web-gone-1", "gone", 2),
        workload("web-sts-1", "a", 2, kind="StatefulSet"),
        workload("orphan-sts", "a", 2, kind="StatefulSet", owned=False),
        {
            **workload("foreign", "a", 2),
            "metadata": {
                **workload("foreign", "a", 2)["metadata"],
                "ownerReferences": [{**OWNER, "uid": "other"}],
            },
        },
    ]
    result = run(objects)
    assert sorted(o["metadata"]["name"] for o in result.delete) == ["web-a-2", "web-gone-1", "web-sts-1"]
    assert "gone" not in result.subsets


def test_orphan_of_the_template_kind_naming_the_ud_is_adopted() -> None:
    orphan = workload("web-a-1", "a", 2, owned=False, revision="web-5d6f7c8b9")  # a revision of `web`
    result = run([ud_object(2, [{"name": "a"}]), orphan])
    assert [o["metadata"]["name"] for o in result.update] == ["web-a-1"]
    assert result.update[0]["metadata"]["ownerReferences"][-1]["uid"] == "ud-uid-1"


def test_status_keeps_only_spec_subsets() -> None:
    obj = ud_object(2, [{"name": "a"}])
    obj["status"] = {"subsetStatuses": [{"name": "a", "replicas": 1}, {"name": "old", "replicas": 3}]}
    assert [e["name"] for e in run([obj]).status["subsetStatuses"]] == ["a"]


def test_manual_partitions_are_capped_and_written_on_statefulsets() -> None:
    template = statefulset_template()
    obj = ud_object(
        4,
        [{"name": "a", "replicas": 1}, {"name": "b"}],
        template=template,
        update={"type": "Manual", "manualUpdate": {"partitions": {"a": 5, "b": 2}}},
    )
    result = run([obj])
    assert {n: s.partition for n, s in result.subsets.items()} == {"a": 1, "b": 2}
    by_subset = {
        o["metadata"]["labels"]["spreadgate.dev/subset-name"]: o
        for o in result.create
        if o["kind"] == "StatefulSet"
    }
    assert by_subset["b"]["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 2},
    }


def adaptive_state(pending_for: float) -> list[dict[str, Any]]:
    obj = ud_object(4, [{"name": "ecs"}, {"name": "acs"}], schedule={"type": "Adaptive"})
    revision = revision_name(state_from_objects([obj]).ud, 0)[0]
    return [
        obj,
        workload("web-ecs-1", "ecs", 4, ready=2, revision=revision),
        *[pod(f"web-ecs-1-{i}", "ecs", revision=revision) for i in range(2)],
        *[pod(f"web-ecs-1-p{i}", "ecs", revision=revision, pending_for=pending_for) for i in range(2)],
    ]


def test_adaptive_before_the_critical_time_waits_and_requeues() -> None:
    result = run(adaptive_state(20))
    assert {n: s.replicas for n, s in result.subsets.items()} == {"ecs": 4, "acs": 0}
    assert result.requeue_after == pytest.approx(10)


def test_adaptive_timed_out_pods_move_their_share_to_the_next_subset() -> None:
    result = run(adaptive_state(31))
    assert {n: s.replicas for n, s in result.subsets.items()} == {"ecs": 2, "acs": 2}
    ecs = result.status["subsetStatuses"][0]
    assert ecs["conditions"][0]["status"] == "False" and ecs["conditions"][0]["reason"] == "reschedule"
    assert result.requeue_after == pytest.approx(30)  # the new acs subset's critical time


def test_adaptive_pending_time_counts_from_the_unschedulable_condition_not_creation() -> None:
    # Created an hour ago, unschedulable for 5 s only: Kruise would time it out at once.
    result = run(adaptive_state(5))
    assert {n: s.replicas for n, s in result.subsets.items()} == {"ecs": 4, "acs": 0}


def test_reservation_mode_labels_pods_and_excludes_reserved_from_the_selector() -> None:
    schedule = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}
    obj = ud_object(2, [{"name": "s0"}, {"name": "s1"}], schedule=schedule)
    revision = revision_name(state_from_objects([obj]).ud, 0)[0]
    objects = [
        obj,
        workload("web-s0-1", "s0", 2, ready=0, revision=revision),
        pod("web-s0-1-a", "s0", revision=revision, pending_for=60),
        pod("web-s0-1-b", "s0", revision=revision, pending_for=60),
    ]
    result = run(objects)
    assert {n: s.replicas for n, s in result.subsets.items()} == {"s0": 2, "s1": 2}
    pods = [o for o in result.update if o["kind"] == "Pod"]
    assert [p["metadata"]["labels"]["spreadgate.dev/united-deployment-reserved-pod"] for p in pods] == [
        "true",
        "true",
    ]
    assert result.status["reservedPods"] == 2 and result.status["replicas"] == 0
    assert result.status["labelSelector"] == "app=web,spreadgate.dev/united-deployment-reserved-pod=false"


def test_stuck_statefulset_pods_above_the_partition_are_deleted() -> None:
    template = statefulset_template()
    obj = ud_object(3, [{"name": "a"}], template=template)
    sts = workload("web-a-x", "a", 3, ready=2, revision="web-old", kind="StatefulSet")
    stuck = pod("web-a-x-2", "a", revision="web-old", pending_for=1)
    result = run([obj, sts, pod("web-a-x-0", "a", revision="web-old"), stuck])
    assert [o["metadata"]["name"] for o in result.delete if o["kind"] == "Pod"] == ["web-a-x-2"]


def test_kruise_workloads_and_pods_are_recognised() -> None:
    obj = ud_object(2, [{"name": "a"}], api_version="apps.kruise.io/v1beta1")
    kruise = workload("web-a-k", "a", 2)
    kruise["metadata"]["labels"] = {"app": "web", "apps.kruise.io/subset-name": "a"}
    kruise["metadata"]["ownerReferences"] = [{**OWNER, "apiVersion": "apps.kruise.io/v1beta1"}]
    kruise["spec"]["selector"] = {"matchLabels": {"app": "web", "apps.kruise.io/subset-name": "a"}}
    result = run([obj, kruise])
    assert result.create[0]["kind"] == "ControllerRevision" and len(result.create) == 1
    assert result.update[0]["spec"]["selector"] == kruise["spec"]["selector"]


def test_state_errors() -> None:
    with pytest.raises(StateError, match="no UnitedDeployment"):
        state_from_objects([{"kind": "Pod"}])
    with pytest.raises(StateError, match="several"):
        state_from_objects([ud_object(1, [], name="a"), ud_object(1, [], name="b")])
    assert isinstance(
        state_from_objects([ud_object(1, [], name="a"), ud_object(1, [], name="b")], "b"), UnitedState
    )


def test_no_subsets_with_replicas_is_refused_like_kruise() -> None:
    assert run([ud_object(10, [])]).refused


def test_status_settles_after_the_workloads_report() -> None:
    objects = steady_objects()
    second = run(objects)
    objects[0] = {**objects[0], "status": second.status}
    third = run(objects)
    assert second.status_changed and not third.status_changed
    assert third.status["observedGeneration"] == 2 and third.status["replicas"] == 4


def test_a_v1alpha1_ud_gets_its_status_in_the_alpha_shape() -> None:
    obj = ud_object(
        3,
        [{"name": "a", "replicas": 1}, {"name": "b"}],
        api_version="apps.kruise.io/v1alpha1",
        update={"type": "Manual", "manualUpdate": {"partitions": {"b": 1}}},
    )
    result = run([obj])
    alpha = result.to_json()["status"]
    assert alpha["subsetReplicas"] == {"a": 1, "b": 2}
    assert alpha["updateStatus"] == {
        "updatedRevision": result.status["updatedRevision"],
        "currentPartitions": {"a": 0, "b": 1},
    }
    assert "updatedRevision" not in alpha and result.status["subsetStatuses"][1]["partition"] == 1


def test_a_ud_being_deleted_is_left_to_garbage_collection() -> None:
    obj = ud_object(2, [{"name": "a"}])
    obj["metadata"]["deletionTimestamp"] = ago(1)
    result = run([obj, workload("web-a-1", "a", 1)])
    assert (result.subsets, result.create, result.update, result.delete, result.errors) == (
        {},
        (),
        (),
        (),
        (),
    )


def test_an_owned_workload_without_a_subset_label_is_reported_and_left_alone() -> None:
    unlabelled = workload("web-x", "a", 1)
    del unlabelled["metadata"]["labels"]["spreadgate.dev/subset-name"]
    result = run([ud_object(2, [{"name": "a"}]), unlabelled])
    assert len(result.errors) == 1 and "web-x" in result.errors[0]
    assert all(o["metadata"].get("name") != "web-x" for o in (*result.update, *result.delete))
    assert not result.refused and result.subsets["a"].replicas == 2


def test_reservation_mode_subset_added_later_starts_marked() -> None:
    schedule = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}
    obj = ud_object(2, [{"name": "s0"}, {"name": "s1"}], schedule=schedule)
    obj["status"] = {"subsetStatuses": [{"name": "s0", "replicas": 2}]}
    entries = {e["name"]: e for e in run([obj]).status["subsetStatuses"]}
    condition = entries["s1"]["conditions"][0]
    assert (condition["status"], condition["reason"], condition["lastTransitionTime"]) == (
        "False",
        "created",
        format_time(NOW),
    )
    assert "conditions" not in entries["s0"]


def test_a_steady_pass_builds_only_the_subsets_with_a_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The update triggers read the metadata only, so a subset without a patch (whose building
    cannot fail) is not built in full when nothing changed (issue 28); one with a patch still is,
    so a patch that no longer applies is still reported on every pass."""
    from py_engine.uniteddeployment.controller import plan as plan_module

    built: list[str] = []
    build = plan_module.build_workload

    def counting(ud: Any, subset: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(subset.name)
        return build(ud, subset, *args, **kwargs)

    objects = steady_objects()
    monkeypatch.setattr(plan_module, "build_workload", counting)
    assert run(objects).update == () and built == []
    objects[0] = copy.deepcopy(objects[0])
    objects[0]["spec"]["topology"]["subsets"][1]["patch"] = {"metadata": {"labels": {"tier": "x"}}}
    result = run(objects)
    assert built == ["b"] and [o["metadata"]["name"] for o in result.update] == ["web-b-x2"]
    # A workload already carrying the metadata of a patch that cannot apply (restored from a
    # backup, say): nothing to update, but the error is still reported.
    objects[0]["spec"]["topology"]["subsets"][1]["patch"] = {"metadata": None}
    ud = state_from_objects(objects).ud
    index = next(i for i, o in enumerate(objects) if o["metadata"].get("name") == "web-b-x2")
    revision = revision_name(ud, 0)[0]
    objects[index] = {
        **objects[index],
        "metadata": workload_metadata(ud, ud.subset("b"), revision, objects[index]),
    }
    built.clear()
    result = run(objects)
    assert built == ["b"] and result.update == ()
    assert result.errors == ("subset b: the patch removed the pod template's metadata",)
