"""Pod facts the adaptive bookkeeping reads: what mutation testing (run U1) found unpinned.

Expected values are the Kubernetes rules stated literally: a pod in phase `Succeeded` or
`Failed` is finished; a pod is waiting to be scheduled only while it is active, `Pending`,
bound to no node, and its `PodScheduled` condition is `False` with reason `Unschedulable`;
labels are read under Spreadgate's key, else Kruise's (`apps.kruise.io/...`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from py_engine.uniteddeployment.controller.podfacts import (
    is_active,
    phase,
    reserved_label,
    revision_of,
    unschedulable_since,
)

pytestmark = pytest.mark.timeout(30)

WAIT_START = "2026-01-02T03:04:05Z"
CREATED = "2026-01-01T00:00:00Z"


def pod(
    phase_value: Any = "Pending",
    *,
    node: str | None = None,
    status: str = "False",
    reason: str = "Unschedulable",
    spec: Any = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": "p", "creationTimestamp": CREATED},
        "spec": spec if spec is not None else ({"nodeName": node} if node else {}),
        "status": {
            "phase": phase_value,
            "conditions": [
                {"type": "PodScheduled", "status": status, "reason": reason, "lastTransitionTime": WAIT_START}
            ],
        },
    }
    return obj


@pytest.mark.parametrize(
    ("phase_value", "active"),
    [("Succeeded", False), ("Failed", False), ("Pending", True), ("Running", True), ("Unknown", True)],
)
def test_finished_pods_are_not_active(phase_value: str, active: bool) -> None:
    assert is_active({"status": {"phase": phase_value}}) is active


def test_a_phase_that_is_not_a_string_reads_as_the_empty_phase() -> None:
    assert phase({"status": {"phase": 3}}) == ""
    assert phase({"status": {}}) == ""
    assert phase({}) == ""
    assert phase({"status": {"phase": "Running"}}) == "Running"
    assert is_active({"status": {"phase": ["Failed"]}}) is True


def test_kruise_reservation_and_revision_labels_are_read_when_spreadgates_are_missing() -> None:
    kruise = {
        "metadata": {
            "labels": {
                "apps.kruise.io/united-deployment-reserved-pod": "true",
                "apps.kruise.io/controller-revision-hash": "web-abc",
            }
        }
    }
    assert reserved_label(kruise) == "true"
    assert revision_of(kruise) == "web-abc"
    both = {
        "metadata": {
            "labels": {
                "spreadgate.dev/united-deployment-reserved-pod": "false",
                "apps.kruise.io/united-deployment-reserved-pod": "true",
                "spreadgate.dev/controller-revision-hash": "web-new",
                "apps.kruise.io/controller-revision-hash": "web-old",
            }
        }
    }
    assert (reserved_label(both), revision_of(both)) == ("false", "web-new")
    assert (reserved_label({}), revision_of({})) == (None, "")


def test_an_unschedulable_pending_pod_waits_from_its_conditions_time() -> None:
    assert unschedulable_since(pod()) == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    "obj",
    [
        pod(node="n1"),  # bound to a node: being started, not waiting for a node
        pod("Running", node="n1"),
        pod("Running"),  # not Pending
        pod("Failed"),  # finished
        pod("Succeeded"),
        pod(status="True"),  # scheduled
        pod(reason="SchedulerError"),  # another reason
        pod(status="True", reason="SchedulerError"),
    ],
    ids=[
        "pending-on-a-node",
        "running-on-a-node",
        "running",
        "failed",
        "succeeded",
        "scheduled",
        "other-reason",
        "scheduled-other-reason",
    ],
)
def test_only_an_active_pending_unbound_unschedulable_pod_is_waiting(obj: dict[str, Any]) -> None:
    assert unschedulable_since(obj) is None


def test_a_pod_being_deleted_is_not_waiting_even_when_pending_and_unschedulable() -> None:
    obj = pod()
    obj["metadata"]["deletionTimestamp"] = "2026-01-03T00:00:00Z"
    assert unschedulable_since(obj) is None


def test_a_failed_pod_on_a_node_is_not_waiting() -> None:
    assert unschedulable_since(pod("Failed", node="n1")) is None
    assert unschedulable_since(pod("Failed", spec={"nodeName": "n1"})) is None


def test_a_pod_without_a_spec_or_with_an_empty_node_name_may_wait() -> None:
    no_spec = pod()
    del no_spec["spec"]
    assert unschedulable_since(no_spec) == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert unschedulable_since(pod(spec={"nodeName": ""})) == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
