"""Whether a spread's target can be reconciled, as a status condition and an Event.

A WorkloadSpread whose `targetRef` names a workload that does not exist, or a
custom kind the controller does not read (not a built-in kind and not in Kruise's
custom-workload whitelist, docs/design-workloadspread.md §1.4), still syncs (every
subset counts 0 replicas) but would otherwise say nothing. This module adds the
Spreadgate condition `TargetNotFound` (status "True", reason `WorkloadNotFound` or
`KindNotAllowed`) to `status.conditions`, the spread-level conditions that
`manifests/base/crd.yaml` declares beside Kruise's fields (the spec is untouched),
and asks for one Warning Event when the condition appears and one Normal Event
when it goes. Pure: the time of the transition is the sync's `now`, kept while the
condition holds so a steady state writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from py_engine.model.workloads import Whitelist, target_key
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.timeutil import format_time
from py_engine.workloadspread.controller.events import NORMAL, WARNING, Event

CONDITION = "TargetNotFound"
WORKLOAD_NOT_FOUND = "WorkloadNotFound"
KIND_NOT_ALLOWED = "KindNotAllowed"
TARGET_FOUND = "TargetFound"


@dataclass(frozen=True)
class TargetProblem:
    """Why the target cannot be read: `reason` (WorkloadNotFound, KindNotAllowed) and a sentence."""

    reason: str
    message: str


@dataclass(frozen=True)
class TargetCheck:
    """The conditions to store, the problem (None when the target is there) and the Events to record."""

    conditions: list[dict[str, Any]]
    problem: TargetProblem | None
    appeared: bool
    events: list[Event]


def target_problem(
    spread: WorkloadSpread, workload: Mapping[str, Any] | None, whitelist: Whitelist
) -> TargetProblem | None:
    """None when the target was read; otherwise why not."""
    ref = spread.target_ref
    group, kind = target_key(spread)
    described = f"{kind} {spread.namespace or 'default'}/{ref.name} ({ref.api_version})"
    if not whitelist.allows(group, kind):
        return TargetProblem(
            KIND_NOT_ALLOWED,
            f"target {described}: kind {kind!r} of group {group!r} is not a built-in workload kind "
            "and not in the custom-workload whitelist, so the controller does not read it",
        )
    if workload is None:
        return TargetProblem(WORKLOAD_NOT_FOUND, f"target {described} does not exist")
    return None


def _stored(status: Any) -> list[Mapping[str, Any]]:
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return [c for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []


def check_target(
    spread: WorkloadSpread, workload: Mapping[str, Any] | None, whitelist: Whitelist, now: datetime
) -> TargetCheck:
    """The spread-level conditions after this sync (others' kept as stored) and the transition Events."""
    stored = _stored(spread.stored_status)
    others = [dict(c) for c in stored if c.get("type") != CONDITION]
    previous = next((c for c in stored if c.get("type") == CONDITION and c.get("status") == "True"), None)
    problem = target_problem(spread, workload, whitelist)
    subject = f"WorkloadSpread {spread.namespace or 'default'}/{spread.name}"
    if problem is None:
        events = [] if previous is None else [Event(NORMAL, TARGET_FOUND, f"{subject}: target found")]
        return TargetCheck(others, None, False, events)
    unchanged = previous is not None and previous.get("reason") == problem.reason
    since = previous.get("lastTransitionTime") if unchanged and previous is not None else None
    condition = {
        "type": CONDITION,
        "status": "True",
        "reason": problem.reason,
        "message": problem.message,
        "lastTransitionTime": since if isinstance(since, str) else format_time(now),
    }
    events = [] if unchanged else [Event(WARNING, CONDITION, f"{subject}: {problem.message}")]
    return TargetCheck([*others, condition], problem, not unchanged, events)
