"""The shared adaptive bookkeeping vectors (kind "adaptive", every function but alloc).

All pass without a deviation. Two of Spreadgate's fixes touch these functions but not the
vectors: pending time counts from the PodScheduled transition, falling back to the creation
time the vectors carry (they give the condition no transition time), and a deadline exactly at
`now` has expired (no vector sits on that boundary). docs/kruise-compatibility.md,
"UnitedDeployment".
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from vectors import uniteddeployment_cases

from py_engine.model.uniteddeployment import AdaptiveOptions
from py_engine.semantics.timeutil import format_time
from py_engine.uniteddeployment.controller.schedulable import (
    after_allocation,
    classify_pod,
    default_verdict,
    reserving_verdict,
)

pytestmark = pytest.mark.timeout(30)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CASES = [c for c in uniteddeployment_cases("adaptive") if c["function"] != "alloc"]


def at(seconds: float) -> str:
    return format_time(NOW + timedelta(seconds=seconds))


def condition(raw: dict[str, Any]) -> dict[str, Any]:
    out = dict(raw)
    if "lastTransitionTime" in raw:
        out["lastTransitionTime"] = at(raw["lastTransitionTime"])
    return out


def pod(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": raw.get("name", "p"),
            "labels": dict(raw.get("labels") or {}),
            "creationTimestamp": at(raw["creationTimestamp"]),
        },
        "status": {"phase": raw["phase"], "conditions": [condition(c) for c in raw.get("conditions", [])]},
    }


def options(strategy: dict[str, Any]) -> AdaptiveOptions:
    adaptive = strategy.get("adaptive") or {}
    return AdaptiveOptions(
        reschedule_critical_seconds=adaptive.get("rescheduleCriticalSeconds", 30),
        unschedulable_duration_seconds=adaptive.get("unschedulableDuration", 300),
        reserve_unschedulable_pods=adaptive.get("reserveUnschedulablePods", False),
    )


def stored_condition(data: dict[str, Any]) -> dict[str, Any] | None:
    conditions = (data.get("subsetStatus") or {}).get("conditions") or []
    return condition(conditions[0]) if conditions else None


def requeue_after(delays: tuple[float, ...]) -> float:
    positive = [d for d in delays if d > 0]
    return min(positive) if positive else 0


def test_the_vector_file_holds_the_bookkeeping_cases() -> None:
    assert {c["function"] for c in CASES} == {
        "subset_status_default",
        "subset_status_reserved",
        "post_process_reserved",
        "pod_reserved_check",
    }


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c["id"]))
def test_adaptive_vector(case: dict[str, Any]) -> None:
    data, expected, function = case["input"], case["expected"], case["function"]
    if function == "subset_status_default":
        subset = data["subset"]
        verdict = default_verdict(
            status_replicas=subset["replicas"],
            ready_replicas=subset["readyReplicas"],
            pods=[pod(p) for p in subset["pods"]],
            stored=stored_condition(data),
            options=options(data["scheduleStrategy"]),
            now=NOW,
        )
        assert verdict.timed_out_pods == expected["pendingPods"]
        assert verdict.unschedulable is expected["unschedulable"]
        low, high = expected["requeueAfterRange"]
        assert low <= requeue_after(verdict.requeue) <= high
    elif function == "subset_status_reserved":
        subset = data["subset"]
        verdict = reserving_verdict(
            pods=[pod(p) for p in subset["pods"]],
            stored=stored_condition(data),
            updated_revision=subset["updatedRevision"],
            updated_since=None,
            options=options(data["scheduleStrategy"]),
            now=NOW,
        )
        assert verdict.reserved_pods == expected["reservedPods"]
        assert verdict.unschedulable is expected["unschedulable"]
        assert verdict.condition is not None
        assert (verdict.condition["status"] == "False") is expected["unschedulable"]
        assert requeue_after(verdict.requeue) == expected["requeueAfter"]
        assert len(verdict.pod_labels) == expected["podsToPatch"]
    elif function == "post_process_reserved":
        subset = data["subset"]
        result = after_allocation(
            stored_condition(data),
            unschedulable=subset["unschedulable"],
            marked=subset["markedAsUnschedulable"],
            current_replicas=subset["specReplicas"],
            next_replicas=data["nextReplicas"],
            now=NOW,
        )
        assert result is not None
        assert (result["status"] == "False") is expected["unschedulable"]
    else:
        since = data["updatedConditionLastTransitionTime"]
        verdict = classify_pod(
            pod(data["pod"]),
            marked=False,
            updated_revision=data["subsetUpdatedRevision"],
            updated_since=None if since is None else NOW + timedelta(seconds=since),
            pending_timeout=data["pendingTimeout"],
            ready_for=data["minReadySeconds"],
            now=NOW,
        )
        assert verdict.reserved is expected["reserved"]
        next_check = -1 if verdict.next_check is None else verdict.next_check
        assert next_check == expected["nextCheckAfter"]
        assert int(verdict.update_timeout) == expected["updateTimeoutPods"]
