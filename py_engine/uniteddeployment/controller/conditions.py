"""Status conditions with Kubernetes' usual semantics, as Kruise sets them.

Setting a condition whose status and reason are unchanged changes nothing (the
message is not refreshed); when only the reason changes the transition time is
kept; a replaced condition moves to the end of the list. A subset's condition
(`set_subset_condition`) follows Kruise's subset-status setter instead: any
change of status or reason is a transition (new time), and it stays in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from py_engine.semantics.timeutil import format_time

JSON = dict[str, Any]


def find(conditions: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def make(kind: str, status: bool, reason: str, message: str, now: datetime) -> JSON:
    return {
        "type": kind,
        "status": "True" if status else "False",
        "lastTransitionTime": format_time(now),
        "reason": reason,
        "message": message,
    }


def _same_status_and_reason(current: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether `new` changes nothing that counts: both setters then keep the list as it is."""
    return (
        current is not None
        and current.get("status") == new["status"]
        and current.get("reason") == new["reason"]
    )


def set_condition(conditions: Sequence[Mapping[str, Any]], new: Mapping[str, Any]) -> list[JSON]:
    current = find(conditions, str(new["type"]))
    if _same_status_and_reason(current, new):
        return [dict(c) for c in conditions]
    placed = dict(new)
    if current is not None and current.get("status") == new["status"] and current.get("lastTransitionTime"):
        placed["lastTransitionTime"] = current["lastTransitionTime"]
    return [dict(c) for c in conditions if c.get("type") != new["type"]] + [placed]


def set_subset_condition(conditions: Sequence[Mapping[str, Any]], new: Mapping[str, Any]) -> list[JSON]:
    """Kruise's `UnitedDeploymentSubsetStatus.SetCondition`: nothing changes while status
    and reason stay; otherwise the condition is replaced where it is, with `new`'s time."""
    current = find(conditions, str(new["type"]))
    if _same_status_and_reason(current, new):
        return [dict(c) for c in conditions]
    if current is None:
        return [*(dict(c) for c in conditions), dict(new)]
    return [dict(new) if c.get("type") == new["type"] else dict(c) for c in conditions]


def remove(conditions: Sequence[Mapping[str, Any]], kind: str) -> list[JSON]:
    return [dict(c) for c in conditions if c.get("type") != kind]
