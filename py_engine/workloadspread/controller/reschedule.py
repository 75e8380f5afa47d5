"""Adaptive rescheduling: unschedulable pods leave their subset (docs/design-workloadspread.md §2.5.4).

With `type: Adaptive` and `rescheduleCriticalSeconds > 0`, a pod of any subset
but the last that is Pending, unbound and `PodScheduled=False/Unschedulable`
for longer than that (counted from its creation) is deleted, and its subset
becomes `Schedulable=False` so the webhook skips it. The subset recovers once
the recovery window has passed since the transition without new failures:
300 s as in Kruise, or the spread's `spreadgate.dev/recovery-window-seconds`
(Kruise's fixed window is too short for node auto-provisioning, issue #1622).
Without rescheduling every `Schedulable` condition is removed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from py_engine.model.constants import SCHEDULABLE_CONDITION
from py_engine.model.subset_status import subset_conditions
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.timeutil import format_time, parse_time_or_none
from py_engine.workloadspread.controller.events import NORMAL, RECOVER_SCHEDULABLE, Event

Obj = Mapping[str, Any]
REASON_UNSCHEDULABLE = "PodUnschedulable"
REASON_SUFFICIENT = "Sufficient"


@dataclass
class RescheduleOutcome:
    """Per subset the Schedulable condition (None = none), pods to delete, events, requeues."""

    conditions: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    pods_to_delete: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    requeue_seconds: list[float] = field(default_factory=list)


def old_condition(entry: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The Schedulable condition of a previous status entry."""
    for condition in subset_conditions(entry):
        if condition.get("type") == SCHEDULABLE_CONDITION:
            return condition
    return None


def _condition(status: str, reason: str, since: str, message: str = "") -> dict[str, Any]:
    condition: dict[str, Any] = {
        "type": SCHEDULABLE_CONDITION,
        "status": status,
        "lastTransitionTime": since,
        "reason": reason,
    }
    if message:
        condition["message"] = message
    return condition


def unschedulable_since(pod: Obj, critical: timedelta) -> datetime | None:
    """When a stuck pod becomes schedule-failed (creation + critical), None if it is not stuck."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Pending" or spec.get("nodeName"):
        return None
    stuck = any(
        isinstance(c, Mapping)
        and c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in status.get("conditions") or []
    )
    created = parse_time_or_none(meta.get("creationTimestamp"))
    return created + critical if stuck and created is not None else None


def reschedule(
    spread: WorkloadSpread,
    pods_by_subset: Mapping[str, Sequence[Obj]],
    old_entries: Mapping[str, Mapping[str, Any]],
    now: datetime,
    default_window: int,
) -> RescheduleOutcome:
    """Conditions and deletions for every spec subset of one status list.

    `pods_by_subset` and `old_entries` belong to the same list: the aggregate
    (all versions) or one version; `status.status_lists` calls this once per list.
    """
    outcome = RescheduleOutcome()
    if not spread.strategy.reschedules:
        outcome.conditions = {s.name: None for s in spread.subsets}
        return outcome
    critical = timedelta(seconds=spread.strategy.reschedule_critical_seconds or 0)
    window = timedelta(seconds=spread.recovery_window_seconds(default_window))
    stamp = format_time(now)
    last = len(spread.subsets) - 1
    for index, subset in enumerate(spread.subsets):
        previous = old_condition(old_entries.get(subset.name))
        was = previous.get("status") if previous else None
        kept_since = str(previous.get("lastTransitionTime") or stamp) if previous else stamp
        if index == last:
            since = kept_since if was == "True" else stamp
            outcome.conditions[subset.name] = _condition("True", REASON_SUFFICIENT, since)
            continue
        failed: list[str] = []
        for pod in pods_by_subset.get(subset.name, ()):
            deadline = unschedulable_since(pod, critical)
            if deadline is None:
                continue
            if deadline < now:
                failed.append(str((pod.get("metadata") or {}).get("name")))
            else:
                outcome.requeue_seconds.append((deadline - now).total_seconds())
        if failed:
            since = kept_since if was == "False" else stamp
            outcome.conditions[subset.name] = _condition("False", REASON_UNSCHEDULABLE, since)
            outcome.pods_to_delete.extend(failed)
            continue
        if was == "False" and previous is not None:
            moment = parse_time_or_none(previous.get("lastTransitionTime"))
            if moment is not None and not moment + window < now:
                outcome.conditions[subset.name] = dict(previous)
                outcome.requeue_seconds.append((moment + window - now).total_seconds())
                continue
            outcome.events.append(
                Event(
                    NORMAL,
                    RECOVER_SCHEDULABLE,
                    f"Subset {subset.name} of WorkloadSpread {spread.namespace}/{spread.name} "
                    "is recovered from unschedulable to schedulable",
                )
            )
            outcome.conditions[subset.name] = _condition("True", REASON_SUFFICIENT, stamp)
            continue
        since = kept_since if was == "True" else stamp
        outcome.conditions[subset.name] = _condition("True", REASON_SUFFICIENT, since)
    return outcome
