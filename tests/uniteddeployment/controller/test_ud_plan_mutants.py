"""`plan(state, now)`: outcomes of one sync that mutation testing (run U1) found unpinned, each
asserted on the plan's literal output.

Rules (docs/uniteddeployment.md, "The plan", "Subset patch allowlist", "Node fit before
allocating", "Reservation mode", "Subset workloads"): a subset patch off the allowlist writes
nothing but the status, which gets `SubsetFailure=True`, reason `ForbiddenPatch`; a subset no node
fits keeps its pods bound to a node (active ones) and the replicas that fit nowhere are reported;
a pod whose reserved label changes is written with all its other labels; a workload whose owner
references or partition differ from the built ones is updated; Kruise's StatefulSet workaround
deletes, in an `apps/v1` StatefulSet only, the pods at or above the partition that are on an old
revision and not Ready; an unschedulable subset in reservation mode is updated with
`maxUnavailable = spec.replicas - readyReplicas + update-timeout pods` (at least 0).
"""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest
from test_ud_plan import NOW, ago, pod, run, workload
from ud_testkit import OWNER, condition, statefulset_template, ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.plan import Plan, SubsetPlan, plan
from py_engine.uniteddeployment.controller.revisions import revision_name
from py_engine.uniteddeployment.controller.state import UnitedState, state_from_objects

pytestmark = pytest.mark.timeout(30)

T = "2026-06-01T12:00:00Z"
RESERVED = "spreadgate.dev/united-deployment-reserved-pod"
RESERVE = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}


def revision_of(obj: dict[str, Any]) -> str:
    return revision_name(state_from_objects([obj]).ud, 0)[0]


# --- a subset patch off the allowlist ------------------------------------------------------


def forbidden_ud(conditions: Any, api_version: str = "spreadgate.dev/v1beta1") -> UnitedDeployment:
    obj = ud_object(2, [{"name": "a"}], api_version=api_version)
    obj["status"] = {"replicas": 2, "conditions": conditions}
    return UnitedDeployment.from_object(obj)


def test_a_forbidden_patch_writes_only_the_failure_condition() -> None:
    kept = condition("SubsetUpdated", "True", "", "", "x")
    ud = forbidden_ud([kept, "junk"])
    message = "subset patch off the allowlist, no workload is written: spec.a; spec.b"
    failure = condition("SubsetFailure", "True", "ForbiddenPatch", message, T)
    result = plan(UnitedState(ud=ud, forbidden_patches=("spec.a", "spec.b")), NOW)
    assert result == Plan(
        subsets={},
        create=(),
        update=(),
        delete=(),
        status={"replicas": 2, "conditions": [kept, failure]},
        errors=(message,),
        refused=True,
        refusal="patch",
        status_changed=True,
    )
    again = plan(UnitedState(ud=forbidden_ud([kept, failure]), forbidden_patches=("spec.a", "spec.b")), NOW)
    assert again.status == {"replicas": 2, "conditions": [kept, failure]} and again.status_changed is False
    odd = plan(UnitedState(ud=forbidden_ud("junk", "apps.kruise.io/v1alpha1"), forbidden_patches=("x",)), NOW)
    assert odd.status["conditions"] == [
        {**failure, "message": "subset patch off the allowlist, no workload is written: x"}
    ]
    assert odd.served_version == "v1alpha1"


# --- refusals ------------------------------------------------------------------------------


def test_a_template_that_cannot_be_versioned_is_refused_with_nothing_written() -> None:
    obj = ud_object(2, [{"name": "a"}], api_version="apps.kruise.io/v1alpha1")
    obj["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["metadata"]["annotations"] = {
        "x": float("nan")
    }
    obj["status"] = {"replicas": 1}
    result = run([obj, workload("web-a-1", "a", 1)])
    assert result.refused and result.refusal == "revision"
    assert result.errors[0].startswith("spec.template cannot be versioned: ")
    assert (result.subsets, result.create, result.update, result.delete, result.release) == (
        {},
        (),
        (),
        (),
        (),
    )
    assert result.status == {"replicas": 1} and result.served_version == "v1alpha1"


def test_a_refused_allocation_keeps_the_served_version_and_no_subsets() -> None:
    obj = ud_object(
        5, [{"name": "a", "replicas": 4}, {"name": "b", "replicas": 3}], api_version="apps.kruise.io/v1alpha1"
    )
    result = run([obj])
    assert result.refused and result.refusal == "allocation"
    assert result.subsets == {} and result.served_version == "v1alpha1"


# --- the plan's JSON -----------------------------------------------------------------------


def test_the_json_of_a_plan_names_replicas_and_partitions_and_keeps_the_v1beta1_status() -> None:
    result = run([ud_object(3, [{"name": "a", "replicas": 1}, {"name": "b"}])])
    assert result.subsets == {"a": SubsetPlan(1, 0), "b": SubsetPlan(2, 0)}
    data = result.to_json()
    assert data["subsets"] == {"a": {"replicas": 1, "partition": 0}, "b": {"replicas": 2, "partition": 0}}
    assert data["status"] == result.status and result.served_status() is result.status


# --- node fit ------------------------------------------------------------------------------


def test_a_subset_no_node_fits_keeps_its_pods_bound_to_a_node() -> None:
    obj = ud_object(6, [{"name": "a"}, {"name": "b"}], schedule={"type": "Adaptive"})
    revision = revision_of(obj)
    odd_node = pod("web-a-1-odd", "a", revision=revision)
    odd_node["spec"] = {"nodeName": 5}
    no_spec = pod("web-a-1-nospec", "a", revision=revision)
    del no_spec["spec"]
    finished = pod("web-a-1-done", "a", revision=revision)
    finished["status"]["phase"] = "Succeeded"
    pods = [
        pod("web-a-1-0", "a", revision=revision),
        pod("web-a-1-1", "a", revision=revision),
        pod("web-a-1-p", "a", revision=revision, pending_for=5),
        odd_node,
        no_spec,
        finished,
    ]
    objects = [obj, workload("web-a-1", "a", 6, ready=2, revision=revision), *pods]
    state = state_from_objects(objects)
    state = UnitedState(
        ud=state.ud, workloads=state.workloads, pods=state.pods, no_node_fit=frozenset({"b", "a"})
    )
    result = plan(state, NOW)
    assert result.subsets == {"a": SubsetPlan(2, 0), "b": SubsetPlan(0, 0)}
    assert (result.unplaced, result.no_node_fit, result.placement_changed) == (4, ("a", "b"), True)
    allocated = [c for c in result.status["conditions"] if c["type"] == "ReplicasAllocated"]
    assert allocated == [
        condition(
            "ReplicasAllocated",
            "False",
            "NoFittingNode",
            "4 of 6 replicas cannot be placed: no node fits a pod of subsets a, b",
            T,
        )
    ]


# --- reservation labels --------------------------------------------------------------------


def test_a_relabelled_pod_keeps_its_other_labels() -> None:
    obj = ud_object(2, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE)
    revision = revision_of(obj)
    waiting = pod("web-s0-1-a", "s0", revision=revision, pending_for=60, labels={"team": "blue"})
    result = run([obj, workload("web-s0-1", "s0", 1, ready=0, revision=revision), waiting])
    pods = [o for o in result.update if o["kind"] == "Pod"]
    assert [p["metadata"]["labels"] for p in pods] == [
        {
            "app": "web",
            "spreadgate.dev/subset-name": "s0",
            "spreadgate.dev/controller-revision-hash": revision,
            "team": "blue",
            RESERVED: "true",
        }
    ]
    assert waiting["metadata"]["labels"].get(RESERVED) is None


# --- update triggers and the StatefulSet workaround ----------------------------------------


def settled(obj: dict[str, Any], ready: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """`obj` with its subset workloads as a first sync builds them (named `<prefix>x`, `ready`
    pods ready, all by default) and the status that sync computed."""
    first = run([obj])
    objects: list[dict[str, Any]] = [{**obj, "status": first.status}]
    for created in first.create:
        created = copy.deepcopy(created)
        if created["kind"] != "ControllerRevision":
            created["metadata"]["name"] = created["metadata"].pop("generateName") + "x"
            subset = created["metadata"]["labels"]["spreadgate.dev/subset-name"]
            replicas = created["spec"]["replicas"]
            created["status"] = {"replicas": replicas, "readyReplicas": (ready or {}).get(subset, replicas)}
        objects.append(created)
    return objects


def named(objects: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    return next(o for o in objects if o["metadata"].get("name", "").startswith(prefix))


def test_changed_owner_references_are_a_reason_to_update() -> None:
    objects = settled(ud_object(2, [{"name": "a"}]))
    assert run(objects).update == ()
    named(objects, "web-a-")["metadata"]["ownerReferences"] = [{**OWNER, "blockOwnerDeletion": False}]
    result = run(objects)
    assert [o["metadata"]["name"] for o in result.update] == ["web-a-x"]
    assert result.update[0]["metadata"]["ownerReferences"] == [OWNER]


def manual_statefulsets(partitions: dict[str, int]) -> dict[str, Any]:
    return ud_object(
        6,
        [{"name": "a", "replicas": 3}, {"name": "b"}],
        template=statefulset_template(),
        update={"type": "Manual", "manualUpdate": {"partitions": partitions}},
    )


def test_a_partition_that_differs_from_the_target_is_a_reason_to_update() -> None:
    objects = settled(manual_statefulsets({"a": 2}))
    assert run(objects).update == ()
    named(objects, "web-a-")["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0
    result = run(objects)
    assert [(o["metadata"]["name"], o["spec"]["updateStrategy"]) for o in result.update] == [
        ("web-a-x", {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    ]


def sts_pod(name: str, revision: str, *, ready: bool) -> dict[str, Any]:
    out = pod(name, "a", revision=revision, pending_for=None if ready else 1)
    return out


def test_stuck_pods_are_those_at_or_above_the_partition_on_an_old_revision_and_not_ready() -> None:
    objects = settled(manual_statefulsets({"a": 1}))
    revision = objects[0]["status"]["updatedRevision"]
    pods = [
        sts_pod("web-a-x-0", "web-old", ready=False),  # below the partition
        sts_pod("web-a-x-1", "web-old", ready=False),  # at the partition: stuck
        sts_pod("web-a-x-2", revision, ready=False),  # updated already
        sts_pod("web-a-x-3", "web-old", ready=True),  # ready
        sts_pod("web-a-x-4", "web-old", ready=False),  # stuck
    ]
    steady = run([*objects, *pods])
    assert steady.update == ()
    assert [o["metadata"]["name"] for o in steady.delete] == ["web-a-x-1", "web-a-x-4"]
    named(objects, "web-a-")["spec"]["replicas"] = 2  # now it is updated too
    updated = run([*objects, *pods])
    assert [o["metadata"]["name"] for o in updated.update] == ["web-a-x"]
    assert [o["metadata"]["name"] for o in updated.delete] == ["web-a-x-1", "web-a-x-4"]


def test_an_advanced_statefulset_gets_no_stuck_pod_deleted() -> None:
    template = {"advancedStatefulSetTemplate": statefulset_template()["statefulSetTemplate"]}
    obj = ud_object(
        2,
        [{"name": "a"}],
        template=template,
        update={"type": "Manual", "manualUpdate": {"partitions": {"a": 0}}},
    )
    objects = settled(obj)
    assert named(objects, "web-a-")["apiVersion"] == "apps.kruise.io/v1beta1"
    result = run([*objects, sts_pod("web-a-x-1", "web-old", ready=False)])
    assert (result.update, result.delete) == ((), ())


# --- adaptive subsets in the plan ----------------------------------------------------------


def schedulable(status: str, reason: str, message: str, when: str) -> dict[str, Any]:
    return condition("Schedulable", status, reason, message, when)


def test_a_settled_adaptive_ud_is_not_requeued() -> None:
    objects = settled(
        ud_object(4, [{"name": "a"}, {"name": "b", "replicas": 1}], schedule={"type": "Adaptive"})
    )
    result = run(objects)
    assert (result.update, result.requeue_after) == ((), None)


def test_default_mode_a_recovered_subset_that_grows_stays_recovered() -> None:
    obj = ud_object(4, [{"name": "a"}, {"name": "b"}], schedule={"type": "Adaptive"})
    revision = revision_of(obj)
    marked = schedulable("False", "reschedule", "timeout pending pods found", ago(400))
    obj["status"] = {
        "currentRevision": revision,
        "subsetStatuses": [{"name": "a", "replicas": 2, "conditions": [marked]}],
    }
    pods = [pod(f"web-a-x-{i}", "a", revision=revision) for i in range(2)]
    result = run([obj, workload("web-a-x", "a", 2, revision=revision), *pods])
    assert result.subsets == {"a": SubsetPlan(4, 0), "b": SubsetPlan(0, 0)}
    assert result.status["subsetStatuses"][0]["conditions"] == [
        schedulable("True", "recover", "unschedulable subset recovered after 300 seconds", T)
    ]


def test_reservation_mode_a_recovered_subset_that_grows_is_marked_again() -> None:
    obj = ud_object(4, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE)
    revision = revision_of(obj)
    obj["status"] = {
        "currentRevision": revision,
        "subsetStatuses": [
            {
                "name": "s0",
                "replicas": 2,
                "conditions": [schedulable("False", "reschedule", "reserved pods found", ago(400))],
            },
            {"name": "s1", "replicas": 0},
        ],
    }
    pods = [pod(f"web-s0-x-{i}", "s0", revision=revision, labels={RESERVED: "false"}) for i in range(2)]
    result = run([obj, workload("web-s0-x", "s0", 2, revision=revision), *pods])
    # s0 may run only its 2 working pods (its cap): the other 2 of R = 4 go to s1 as well.
    assert result.subsets == {"s0": SubsetPlan(4, 0), "s1": SubsetPlan(2, 0)}
    assert result.status["subsetStatuses"] == [
        {
            "name": "s0",
            "replicas": 4,
            "readyReplicas": 2,
            "partition": 0,
            "reservedPods": 0,
            "conditions": [schedulable("False", "reschedule", "subset just recovered scaled up", T)],
        },
        {"name": "s1", "replicas": 2, "readyReplicas": 0, "partition": 0, "reservedPods": 0},
    ]
    assert [(o["kind"], o["metadata"]["name"], o["spec"].get("strategy")) for o in result.update] == [
        ("Deployment", "web-s0-x", None)  # schedulable: no maxUnavailable forced
    ]


def reserving_update(pods: list[dict[str, Any]], replicas: int, ready: int) -> Plan:
    """Reservation mode during an update to a new template that began 100 s ago."""
    obj = ud_object(4, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE)
    obj["status"] = {
        "currentRevision": "web-old",
        "conditions": [
            condition("UnitedDeploymentUpdated", "False", "UnitedDeploymentRevisionUpdating", "m", ago(100))
        ],
        "subsetStatuses": [{"name": "s0", "replicas": replicas}, {"name": "s1", "replicas": 0}],
    }
    return run([obj, workload("web-s0-x", "s0", replicas, ready=ready, revision="web-old"), *pods])


def test_an_unschedulable_subset_is_updated_with_the_unavailable_pods_it_may_lose() -> None:
    revision = revision_of(ud_object(4, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE))
    pods = [
        pod("web-s0-x-0", "s0", revision=revision, labels={RESERVED: "false"}),
        pod("web-s0-x-1", "s0", revision=revision, pending_for=60, labels={RESERVED: "false"}),  # reserved
        pod("web-s0-x-2", "s0", revision="web-old", labels={RESERVED: "false"}),  # update timed out
    ]
    result = reserving_update(pods, replicas=4, ready=1)
    deployment = [o for o in result.update if o["kind"] == "Deployment"]
    assert [(o["spec"]["replicas"], o["spec"]["strategy"]) for o in deployment] == [
        (4, {"rollingUpdate": {"maxUnavailable": 4}})  # 4 - 1 ready + 1 update-timeout pod
    ]
    assert result.status["subsetStatuses"][0]["reservedPods"] == 2


def test_an_unschedulable_subset_with_every_pod_ready_may_lose_none() -> None:
    revision = revision_of(ud_object(4, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE))
    pods = [pod(f"web-s0-x-{i}", "s0", revision=revision, labels={RESERVED: "true"}) for i in range(2)]
    for item in pods:
        item["status"]["conditions"][0]["lastTransitionTime"] = ago(100)  # Ready for 100 s only: reserved
    result = reserving_update(pods, replicas=2, ready=2)
    deployment = [o for o in result.update if o["kind"] == "Deployment"]
    assert [(o["spec"]["replicas"], o["spec"]["strategy"]) for o in deployment] == [
        (2, {"rollingUpdate": {"maxUnavailable": 0}})
    ]
    assert result.subsets == {"s0": SubsetPlan(2, 0), "s1": SubsetPlan(4, 0)}


# --- second round: what the first round's tests left ---------------------------------------


def test_a_forbidden_patch_on_a_ud_without_conditions_adds_the_failure() -> None:
    ud = UnitedDeployment.from_object({**ud_object(2, [{"name": "a"}]), "status": {"replicas": 2}})
    result = plan(UnitedState(ud=ud, forbidden_patches=("x",)), NOW)
    assert [c["type"] for c in result.status["conditions"]] == ["SubsetFailure"]


def test_a_subset_added_to_a_reserving_ud_starts_with_a_whole_created_condition() -> None:
    obj = ud_object(2, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE)
    obj["status"] = {"subsetStatuses": [{"name": "s0", "replicas": 2}]}
    entries = {e["name"]: e for e in run([obj]).status["subsetStatuses"]}
    assert entries["s1"]["conditions"] == [schedulable("False", "created", "", T)]


def test_a_subset_without_a_workload_does_not_stop_the_verdicts_of_the_next() -> None:
    obj = ud_object(4, [{"name": "a", "maxReplicas": 0}, {"name": "b"}], schedule={"type": "Adaptive"})
    revision = revision_of(obj)
    pods = [pod("web-b-x-p", "b", revision=revision, pending_for=60)]
    result = run([obj, workload("web-b-x", "b", 4, ready=3, revision=revision), *pods])
    entries = {e["name"]: e for e in result.status["subsetStatuses"]}
    assert entries["b"]["conditions"] == [schedulable("False", "reschedule", "timeout pending pods found", T)]


def test_a_reserving_subset_still_reserving_keeps_its_mark_and_time() -> None:
    obj = ud_object(2, [{"name": "s0"}, {"name": "s1"}], schedule=RESERVE)
    revision = revision_of(obj)
    marked = schedulable("False", "reschedule", "reserved pods found", ago(50))
    obj["status"] = {
        "currentRevision": revision,
        "subsetStatuses": [
            {"name": "s0", "replicas": 2, "conditions": [marked]},
            {"name": "s1", "replicas": 0},
        ],
    }
    fresh = pod("web-s0-x-new", "s0", revision=revision)  # no label in a marked subset: reserved
    result = run([obj, workload("web-s0-x", "s0", 1, ready=1, revision=revision), fresh])
    entries = {e["name"]: e for e in result.status["subsetStatuses"]}
    assert entries["s0"]["conditions"] == [marked] and entries["s0"]["reservedPods"] == 1


def with_no_fit(objects: list[dict[str, Any]], no_fit: set[str]) -> Plan:
    state = state_from_objects(objects)
    return plan(
        UnitedState(ud=state.ud, workloads=state.workloads, pods=state.pods, no_node_fit=frozenset(no_fit)),
        NOW,
    )


@pytest.mark.parametrize(
    ("schedule", "replicas"),
    [(None, (2, 2)), (RESERVE, (4, 0))],  # Fixed spreads the rest evenly; reservation fills in order
    ids=["fixed", "reserving"],
)
def test_node_fit_counts_only_for_adaptive_uds_that_do_not_reserve(
    schedule: dict[str, Any] | None, replicas: tuple[int, int]
) -> None:
    result = with_no_fit([ud_object(4, [{"name": "a"}, {"name": "b"}], schedule=schedule)], {"a", "b"})
    assert result.subsets == {"a": SubsetPlan(replicas[0], 0), "b": SubsetPlan(replicas[1], 0)}
    assert (result.unplaced, result.no_node_fit, result.placement_changed) == (0, (), False)
    assert "ReplicasAllocated" not in [c["type"] for c in result.status["conditions"]]


def test_replicas_capped_by_max_are_not_reported_as_unplaced_without_node_fit() -> None:
    result = run([ud_object(5, [{"name": "a", "maxReplicas": 1}, {"name": "b", "maxReplicas": 1}])])
    assert result.subsets == {"a": SubsetPlan(1, 0), "b": SubsetPlan(1, 0)}
    assert result.unplaced == 0 and "ReplicasAllocated" not in [
        c["type"] for c in result.status["conditions"]
    ]


def test_with_node_fit_and_room_elsewhere_nothing_is_unplaced() -> None:
    result = with_no_fit([ud_object(4, [{"name": "a"}, {"name": "b"}], schedule={"type": "Adaptive"})], {"b"})
    assert result.subsets == {"a": SubsetPlan(4, 0), "b": SubsetPlan(0, 0)}
    assert (result.unplaced, result.placement_changed) == (0, False)


def test_scaled_to_zero_every_replica_is_allocated() -> None:
    obj = ud_object(0, [{"name": "a"}], schedule={"type": "Adaptive"})
    obj["status"] = {
        "conditions": [
            {**schedulable("False", "NoFittingNode", "1 of 1 ...", ago(50)), "type": "ReplicasAllocated"}
        ]
    }
    result = with_no_fit([obj], {"a"})
    assert result.unplaced == 0 and result.placement_changed is True
    allocated = [c for c in result.status["conditions"] if c["type"] == "ReplicasAllocated"]
    assert allocated == [
        condition("ReplicasAllocated", "True", "Allocated", "all 0 replicas are allocated", T)
    ]


def test_a_ud_being_deleted_keeps_its_status_and_version() -> None:
    obj = ud_object(2, [{"name": "a"}], api_version="apps.kruise.io/v1alpha1")
    obj["metadata"]["deletionTimestamp"] = ago(1)
    obj["status"] = {"replicas": 2, "observedGeneration": 1}
    result = run([obj])
    assert result.status == {"replicas": 2, "observedGeneration": 1} and result.served_version == "v1alpha1"


def test_during_a_rollout_the_status_keeps_the_current_revision_and_collision_count() -> None:
    objects = settled(ud_object(2, [{"name": "a"}]))
    old = objects[0]["status"]["currentRevision"]
    assert objects[0]["status"]["collisionCount"] == 0
    objects[0] = copy.deepcopy(objects[0])
    objects[0]["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0][
        "image"
    ] = "v2"
    result = run(objects)
    assert result.status["currentRevision"] == old != result.status["updatedRevision"]
    assert result.status["collisionCount"] == 0


def test_a_patch_that_cannot_build_the_workload_is_reported_in_subset_updated() -> None:
    result = run([ud_object(2, [{"name": "a", "patch": {"metadata": None}}, {"name": "b"}])])
    message = "subset a: the patch removed the pod template's metadata"
    assert result.errors == (message,)
    updated = [c for c in result.status["conditions"] if c["type"] == "SubsetUpdated"]
    assert updated == [condition("SubsetUpdated", "False", "Error", message, T)]


def test_a_delay_under_a_second_is_requeued() -> None:
    obj = ud_object(2, [{"name": "a"}], schedule={"type": "Adaptive"})
    revision = revision_of(obj)
    objects = [
        obj,
        workload("web-a-x", "a", 2, ready=1, revision=revision),
        pod("web-a-x-p", "a", revision=revision, pending_for=29),
    ]
    assert plan(state_from_objects(objects), NOW + timedelta(seconds=0.5)).requeue_after == 0.5


def test_a_zero_critical_time_is_not_a_requeue() -> None:
    obj = ud_object(
        2, [{"name": "a"}], schedule={"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 0}}
    )
    result = run([obj])  # creates subset a: the critical-time requeue would be 0 s
    assert result.create and result.requeue_after is None


def test_the_updated_condition_reads_the_stored_current_revision_even_when_it_is_gone() -> None:
    objects = settled(ud_object(2, [{"name": "a"}]))
    updated = objects[0]["status"]["updatedRevision"]
    objects[0] = {**objects[0], "status": {**objects[0]["status"], "currentRevision": "web-gone"}}
    condition = {c["type"]: c for c in run(objects).status["conditions"]}["UnitedDeploymentUpdated"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "UnitedDeploymentRevisionUpdating",
        f"updating to revision {updated}",
    )
    objects[0] = {**objects[0], "status": {**objects[0]["status"], "currentRevision": 5}}
    condition = {c["type"]: c for c in run(objects).status["conditions"]}["UnitedDeploymentUpdated"]
    assert (condition["status"], condition["message"]) == ("True", f"updated to revision {updated}")


def test_a_patch_nested_too_deeply_is_reported_and_the_next_subset_still_built() -> None:
    obj = ud_object(2, [{"name": "a"}, {"name": "b"}])
    deep: dict[str, Any] = {}
    level = deep
    for _ in range(3000):  # past Python's recursion limit: the merge cannot walk it
        level["x"] = {}
        level = level["x"]
    obj["spec"]["topology"]["subsets"][0]["patch"] = {"metadata": {"annotations": deep}}
    result = run([obj])
    assert result.errors == ("subset a: patch nested too deeply",)
    assert [o["metadata"].get("generateName") for o in result.create if o["kind"] == "Deployment"] == [
        "web-b-"
    ]
