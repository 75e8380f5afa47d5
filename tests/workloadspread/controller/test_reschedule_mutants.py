"""Adaptive rescheduling (docs/design-workloadspread.md §2.5.4): every stuck pod of a subset counts,
wherever it is listed among the subset's pods."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mutant_support import spread_view

from py_engine.workloadspread.controller.reschedule import reschedule

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)

SPREAD = spread_view(
    [{"name": "a"}, {"name": "b"}],
    scheduleStrategy={"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
)


def running(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": "2024-06-01T11:00:00Z"},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running"},
    }


def stuck(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": "2024-06-01T11:00:00Z"},
        "spec": {},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }


def test_a_stuck_pod_listed_after_a_running_one_is_rescheduled() -> None:
    outcome = reschedule(
        SPREAD, {"a": [running("r1"), stuck("s1"), running("r2"), stuck("s2")]}, {}, NOW, 300
    )
    assert outcome.pods_to_delete == ["s1", "s2"]
    condition = outcome.conditions["a"]
    assert condition is not None and condition["status"] == "False"
    assert "message" not in condition
