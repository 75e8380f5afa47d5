"""Adaptive rescheduling on its own (py_engine.workloadspread.controller.reschedule,
docs/design-workloadspread.md §2.5.4): which pods count as stuck, and the Schedulable
condition of each subset, the last one
included. Written for what mutation testing found unpinned (docs/testing.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from py_engine.model.workloadspread import WorkloadSpread
from py_engine.workloadspread.controller.reschedule import reschedule, unschedulable_since

pytestmark = pytest.mark.timeout(30)

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
CRITICAL = timedelta(seconds=60)
STUCK = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}


def stuck_pod(
    name: str = "p",
    *,
    created: str | None = "2024-06-01T11:50:00Z",
    phase: str = "Pending",
    conditions: list[Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if created is not None:
        meta["creationTimestamp"] = created
    meta.update(extra.pop("meta", {}))
    return {
        "metadata": meta,
        "status": {"phase": phase, "conditions": [STUCK] if conditions is None else conditions},
        **extra,
    }


DEADLINE = datetime(2024, 6, 1, 11, 51, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (stuck_pod(), DEADLINE),
        (stuck_pod(spec={}), DEADLINE),
        (stuck_pod(spec={"nodeName": ""}), DEADLINE),
        (stuck_pod(spec={"nodeName": "n1"}), None),  # bound: the scheduler found a node
        (stuck_pod(meta={"deletionTimestamp": "2024-06-01T11:55:00Z"}), None),
        (stuck_pod(phase="Running"), None),
        (stuck_pod(phase="Running", spec={"nodeName": "n1"}), None),
        (
            stuck_pod(conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulerError"}]),
            None,
        ),
        (stuck_pod(conditions=[{"type": "PodScheduled", "status": "True", "reason": "Unschedulable"}]), None),
        (stuck_pod(conditions=[{"type": "Ready", "status": "False", "reason": "Unschedulable"}]), None),
        (stuck_pod(conditions=["junk", STUCK]), DEADLINE),
        (stuck_pod(conditions=[]), None),
        (stuck_pod(created=None), None),
        (stuck_pod(created="not a time"), None),
    ],
    ids=[
        "stuck",
        "empty-spec",
        "empty-node",
        "bound",
        "deleting",
        "running",
        "running-bound",
        "other-reason",
        "scheduled",
        "not-podscheduled",
        "junk-condition",
        "no-condition",
        "no-creation",
        "bad-creation",
    ],
)
def test_which_pods_are_stuck(pod: dict[str, Any], expected: datetime | None) -> None:
    assert unschedulable_since(pod, CRITICAL) == expected


def spread() -> WorkloadSpread:
    return WorkloadSpread.from_object(
        {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "subsets": [{"name": "a", "maxReplicas": 3}, {"name": "b"}],
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 60}},
            },
        }
    )


def entry(status: str, since: Any) -> dict[str, Any]:
    return {
        "conditions": [
            {
                "type": "Schedulable",
                "status": status,
                "lastTransitionTime": since,
                "reason": "PodUnschedulable" if status == "False" else "Sufficient",
            }
        ]
    }


def test_the_last_subset_is_never_unschedulable_and_keeps_its_transition_time() -> None:
    outcome = reschedule(
        spread(), {"b": [stuck_pod("in-b")]}, {"b": entry("True", "2024-06-01T10:00:00Z")}, NOW, 300
    )
    assert outcome.pods_to_delete == []
    assert outcome.conditions["b"] == {
        "type": "Schedulable",
        "status": "True",
        "lastTransitionTime": "2024-06-01T10:00:00Z",
        "reason": "Sufficient",
    }
    assert outcome.conditions["a"] == {
        "type": "Schedulable",
        "status": "True",
        "lastTransitionTime": "2024-06-01T12:00:00Z",
        "reason": "Sufficient",
    }
    was_false = reschedule(spread(), {}, {"b": entry("False", "2024-06-01T10:00:00Z")}, NOW, 300)
    assert was_false.conditions["b"]["lastTransitionTime"] == "2024-06-01T12:00:00Z"  # a transition: now


def test_a_subset_turning_unschedulable_gets_the_exact_condition() -> None:
    outcome = reschedule(
        spread(), {"a": [stuck_pod("in-a")]}, {"a": entry("True", "2024-06-01T10:00:00Z")}, NOW, 300
    )
    assert outcome.pods_to_delete == ["in-a"]
    assert outcome.conditions["a"] == {
        "type": "Schedulable",
        "status": "False",
        "lastTransitionTime": "2024-06-01T12:00:00Z",
        "reason": "PodUnschedulable",
    }


def test_an_unreadable_transition_time_recovers_instead_of_failing() -> None:
    outcome = reschedule(spread(), {}, {"a": entry("False", 5)}, NOW, 300)
    assert outcome.conditions["a"] is not None and outcome.conditions["a"]["status"] == "True"
    assert [e.reason for e in outcome.events] == ["RecoverSchedulable"]


def test_a_healthy_subset_keeps_its_transition_time_and_raises_no_event() -> None:
    outcome = reschedule(spread(), {}, {"a": entry("True", "2024-06-01T10:00:00Z")}, NOW, 300)
    assert outcome.conditions["a"] == {
        "type": "Schedulable",
        "status": "True",
        "lastTransitionTime": "2024-06-01T10:00:00Z",
        "reason": "Sufficient",
    }
    assert outcome.events == [] and outcome.requeue_seconds == []
    unknown = reschedule(spread(), {}, {"a": entry("Unknown", "2024-06-01T10:00:00Z")}, NOW, 300)
    assert unknown.conditions["a"]["lastTransitionTime"] == "2024-06-01T12:00:00Z"  # a transition: now


def test_the_recovery_event_says_which_subset_recovered() -> None:
    outcome = reschedule(spread(), {}, {"a": entry("False", "2024-06-01T11:00:00Z")}, NOW, 300)
    assert [(e.type, e.reason, e.message) for e in outcome.events] == [
        (
            "Normal",
            "RecoverSchedulable",
            "Subset a of WorkloadSpread default/ws is recovered from unschedulable to schedulable",
        )
    ]


def test_every_pod_and_every_subset_is_looked_at() -> None:
    healthy = stuck_pod("healthy", phase="Running", spec={"nodeName": "n1"})
    outcome = reschedule(spread(), {"a": [healthy, stuck_pod("stuck")]}, {}, NOW, 300)
    assert outcome.pods_to_delete == ["stuck"]
    waiting = reschedule(spread(), {}, {"a": entry("False", "2024-06-01T11:58:00Z")}, NOW, 300)
    assert waiting.conditions["a"] == entry("False", "2024-06-01T11:58:00Z")["conditions"][0]
    assert waiting.requeue_seconds == [180.0]
    assert waiting.conditions["b"] is not None and waiting.conditions["b"]["status"] == "True"
