"""Facts about pods that UnitedDeployment's adaptive bookkeeping and status read.

Labels are read under Spreadgate's key first, then Kruise's, so pods a Kruise
controller created count the same (docs/uniteddeployment.md, "Adoption from Kruise").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from py_engine.model.ud_constants import (
    KRUISE_RESERVED_POD_LABEL,
    KRUISE_REVISION_LABEL,
    KRUISE_SUBSET_NAME_LABEL,
    RESERVED_POD_LABEL,
    REVISION_LABEL,
    SUBSET_NAME_LABEL,
)
from py_engine.semantics import objects
from py_engine.semantics.timeutil import TimestampError, parse_time

Obj = Mapping[str, Any]


def _section(obj: Obj, key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def label(obj: Obj, key: str, fallback: str) -> str | None:
    """The value under `key`, else under `fallback` (Kruise's), else None. Reads the labels in
    place: `objects.labels` copies them, once per pod per pass (issue 28)."""
    found = objects.meta(obj).get("labels")
    if not isinstance(found, objects.JSON_OBJECT):
        return None
    for name in (key, fallback):
        value = found.get(name)
        if isinstance(value, str):
            return value
    return None


def subset_of(obj: Obj) -> str | None:
    return label(obj, SUBSET_NAME_LABEL, KRUISE_SUBSET_NAME_LABEL)


def revision_of(obj: Obj) -> str:
    return label(obj, REVISION_LABEL, KRUISE_REVISION_LABEL) or ""


def reserved_label(obj: Obj) -> str | None:
    """The reservation label's value: Spreadgate's key, else Kruise's."""
    return label(obj, RESERVED_POD_LABEL, KRUISE_RESERVED_POD_LABEL)


def timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except TimestampError:
        return None


def created_at(obj: Obj) -> datetime | None:
    return timestamp(objects.meta(obj).get("creationTimestamp"))


def phase(pod: Obj) -> str:
    value = _section(pod, "status").get("phase")
    return value if isinstance(value, str) else ""


def condition(pod: Obj, kind: str) -> Mapping[str, Any] | None:
    conditions = _section(pod, "status").get("conditions")
    for item in conditions if isinstance(conditions, list) else []:
        if isinstance(item, Mapping) and item.get("type") == kind:
            return item
    return None


def is_active(pod: Obj) -> bool:
    """Not being deleted and not finished."""
    if objects.meta(pod).get("deletionTimestamp"):
        return False
    return phase(pod) not in ("Succeeded", "Failed")


def is_ready(pod: Obj) -> bool:
    ready = condition(pod, "Ready")
    return ready is not None and ready.get("status") == "True"


def unschedulable_since(pod: Obj) -> datetime | None:
    """When a pod that cannot be scheduled started waiting, or None if it is not such a pod.

    Such a pod is active, Pending, has no node, and its PodScheduled condition is False
    with reason Unschedulable. The wait starts at the condition's lastTransitionTime
    (Kruise counts from pod creation, which times out pods that only just became
    unschedulable); without one, at the pod's creation.
    """
    if not is_active(pod) or phase(pod) != "Pending" or _section(pod, "spec").get("nodeName"):
        return None
    scheduled = condition(pod, "PodScheduled")
    if scheduled is None or scheduled.get("status") != "False" or scheduled.get("reason") != "Unschedulable":
        return None
    return timestamp(scheduled.get("lastTransitionTime")) or created_at(pod)
