"""The status a sync writes and the `ReplicasAllocated` condition, asserted whole and literally:
what mutation testing (run U1) found unpinned.

Rules (docs/uniteddeployment.md, "Status" and "Replicas that fit nowhere"): totals sum over the
existing subset workloads, `replicas` without reserved pods; `updatedReplicas` and
`updatedReadyReplicas` count the active pods on the updated revision; `currentRevision` becomes
the updated revision once the updated ready pods cover `replicas`; `SubsetProvisioned` is True
(empty reason and message) after provisioning; `SubsetUpdated` is True (empty reason) without
errors, else False, reason `Error`, the errors joined by "; "; `SubsetFailure` is removed;
`labelSelector` adds `,spreadgate.dev/united-deployment-reserved-pod=false` in reservation mode,
which also reports `reservedPods`. `ReplicasAllocated` is False, reason `NoFittingNode`, message
`N of R replicas cannot be placed: no node fits a pod of subset(s) a, b` while replicas fit
nowhere; True, reason `Allocated`, `all R replicas are allocated` once they fit again (only after
it was False); a condition whose status, reason and message are unchanged is not rewritten, one
whose status is unchanged keeps its time, and a rewritten one moves to the end.
"""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import NOW, REVISION, condition, ud_object
from ud_testkit import NOW_TEXT as T

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.discovery import SubsetWorkload
from py_engine.uniteddeployment.controller.status import (
    SubsetOutcome,
    compute_status,
    placement_condition,
    updated_condition,
)

pytestmark = pytest.mark.timeout(30)

OLD = "2025-06-01T00:00:00Z"


def pod(name: str, revision: str, *, ready: bool, phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {REVISION: revision}},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def workload(subset: str, replicas: int, ready: int, pods: list[dict[str, Any]]) -> SubsetWorkload:
    obj = {
        "kind": "Deployment",
        "metadata": {"name": f"web-{subset}"},
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "readyReplicas": ready},
    }
    return SubsetWorkload(subset, obj, tuple(pods))


def model(reserve: bool = False) -> UnitedDeployment:
    schedule = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}} if reserve else None
    return UnitedDeployment.from_object(
        ud_object(6, [{"name": "a"}, {"name": "b"}, {"name": "c"}], schedule=schedule)
    )


WORKLOADS = {
    "a": workload(
        "a",
        3,
        2,
        [
            pod("a1", "r2", ready=True),
            pod("a2", "r2", ready=False),
            pod("a3", "r1", ready=True),
            pod("a4", "r2", ready=True, phase="Failed"),
        ],
    ),
    "b": workload("b", 1, 1, [pod("b1", "r2", ready=True)]),
}
SCHEDULABLE = condition("Schedulable", "True", "r", "m", OLD)
OUTCOMES = {
    "a": SubsetOutcome(replicas=3, partition=1, reserved_pods=1, condition=SCHEDULABLE),
    "b": SubsetOutcome(replicas=2, partition=0, reserved_pods=0, condition=None),
    "c": SubsetOutcome(replicas=1, partition=0, reserved_pods=0, condition=None),
}
STORED = [
    condition("SubsetFailure", "True", "ForbiddenPatch", "x", OLD),
    condition("UnitedDeploymentUpdated", "True", "R", "m", OLD),
]


def status(ud: UnitedDeployment, **overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "workloads": WORKLOADS,
        "outcomes": OUTCOMES,
        "conditions": STORED,
        "current_revision": "r1",
        "updated_revision": "r2",
        "collision_count": 3,
        "provisioned": True,
        "update_errors": ["a: boom", "b: bust"],
        "now": NOW,
    }
    arguments.update(overrides)
    return compute_status(ud, **arguments)


def test_the_whole_status_of_a_rollout_in_progress() -> None:
    assert status(model()) == {
        "observedGeneration": 2,
        "replicas": 3,  # 3 + 1 workload replicas, 1 reserved
        "readyReplicas": 3,
        "updatedReplicas": 3,  # a1, a2, b1 (a4 has failed, a3 is on r1)
        "updatedReadyReplicas": 2,
        "collisionCount": 3,
        "currentRevision": "r1",
        "updatedRevision": "r2",
        "subsetStatuses": [
            {"name": "a", "replicas": 3, "readyReplicas": 2, "partition": 1, "conditions": [SCHEDULABLE]},
            {"name": "b", "replicas": 2, "readyReplicas": 1, "partition": 0},
            {"name": "c", "replicas": 1, "readyReplicas": 0, "partition": 0},
        ],
        "conditions": [
            STORED[1],
            condition("SubsetProvisioned", "True", "", "", T),
            condition("SubsetUpdated", "False", "Error", "a: boom; b: bust", T),
        ],
        "labelSelector": "app=web",
    }


def test_reservation_mode_reports_reserved_pods_and_narrows_the_selector() -> None:
    result = status(model(reserve=True), provisioned=False, update_errors=[], conditions=[])
    assert result["labelSelector"] == "app=web,spreadgate.dev/united-deployment-reserved-pod=false"
    assert result["reservedPods"] == 1
    assert [s.get("reservedPods") for s in result["subsetStatuses"]] == [1, 0, 0]
    assert result["conditions"] == [condition("SubsetUpdated", "True", "", "", T)]


def test_the_current_revision_advances_when_updated_ready_pods_cover_the_replicas_exactly() -> None:
    def reserving(count: int) -> dict[str, SubsetOutcome]:
        return {**OUTCOMES, "a": SubsetOutcome(3, 1, count, SCHEDULABLE)}

    # 4 workload replicas - 2 reserved = 2 = the updated ready pods (a1, b1)
    assert status(model(), outcomes=reserving(2))["currentRevision"] == "r2"
    assert status(model(), outcomes=reserving(1))["currentRevision"] == "r1"  # 3 replicas, 2 updated ready
    assert status(model(), current_revision="r2")["currentRevision"] == "r2"


# --- ReplicasAllocated ---------------------------------------------------------------------

OTHER = condition("SubsetProvisioned", "True", "", "", OLD)


def allocated(status_value: str, reason: str, message: str, when: str = T) -> dict[str, Any]:
    return condition("ReplicasAllocated", status_value, reason, message, when)


def place(
    conditions: list[dict[str, Any]], unplaced: int, no_fit: list[str]
) -> tuple[list[dict[str, Any]], bool]:
    return placement_condition(conditions, unplaced=unplaced, desired=10, no_fit=no_fit, now=NOW)


def test_unplaced_replicas_set_the_condition_false_with_the_count_and_the_subsets() -> None:
    many = "3 of 10 replicas cannot be placed: no node fits a pod of subsets a, b"
    assert place([OTHER], 3, ["a", "b"]) == ([OTHER, allocated("False", "NoFittingNode", many)], True)
    one = "1 of 10 replicas cannot be placed: no node fits a pod of subset a"
    assert place([], 1, ["a"]) == ([allocated("False", "NoFittingNode", one)], True)


def test_an_unchanged_condition_is_not_rewritten() -> None:
    message = "3 of 10 replicas cannot be placed: no node fits a pod of subsets a, b"
    stored = [allocated("False", "NoFittingNode", message, OLD), OTHER]
    result, changed = place(stored, 3, ["a", "b"])
    assert (result, changed) == (stored, False)
    assert result[0] is not stored[0]
    fine = [allocated("True", "Allocated", "all 10 replicas are allocated", OLD), OTHER]
    assert place(fine, 0, []) == (fine, False)


def test_a_new_message_with_the_same_status_keeps_the_time_and_moves_last() -> None:
    stored = [allocated("False", "NoFittingNode", "old words", OLD), OTHER]
    message = "2 of 10 replicas cannot be placed: no node fits a pod of subset b"
    assert place(stored, 2, ["b"]) == ([OTHER, allocated("False", "NoFittingNode", message, OLD)], True)
    undated = [{k: v for k, v in stored[0].items() if k != "lastTransitionTime"}, OTHER]
    assert place(undated, 2, ["b"]) == ([OTHER, allocated("False", "NoFittingNode", message, T)], True)
    other_reason = [allocated("False", "Other", message, OLD)]
    assert place(other_reason, 2, ["b"]) == ([allocated("False", "NoFittingNode", message, OLD)], True)


def test_the_condition_turns_true_once_every_replica_is_placed() -> None:
    stored = [allocated("False", "NoFittingNode", "3 of 10 ...", OLD), OTHER]
    assert place(stored, 0, []) == (
        [OTHER, allocated("True", "Allocated", "all 10 replicas are allocated")],
        True,
    )


def test_without_a_stored_condition_nothing_is_added_while_all_are_placed() -> None:
    result, changed = place([OTHER], 0, [])
    assert (result, changed) == ([OTHER], False)
    assert result[0] is not OTHER


def test_the_updated_condition_says_whether_the_stored_revision_is_the_expected_one() -> None:
    assert updated_condition("web-1", "web-2", NOW) == condition(
        "UnitedDeploymentUpdated",
        "False",
        "UnitedDeploymentRevisionUpdating",
        "updating to revision web-2",
        T,
    )
    assert updated_condition("web-2", "web-2", NOW) == condition(
        "UnitedDeploymentUpdated", "True", "UnitedDeploymentRevisionUpdated", "updated to revision web-2", T
    )
