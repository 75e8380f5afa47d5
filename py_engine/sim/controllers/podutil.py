"""Pod and object predicates every workload controller shares (`podutil` upstream).

Kept in one place so "active", "ready" and "available" mean the same thing to
the ReplicaSet, Deployment, StatefulSet and Job controllers, exactly as in
`k8s.io/kubernetes/pkg/controller` and `pkg/api/v1/pod`.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta
from typing import Any

from py_engine.semantics.timeutil import TimestampError, format_time, parse_time
from py_engine.sim.interface import JSON

__all__ = [
    "available_at",
    "fnv32a",
    "get_condition",
    "is_active",
    "is_available",
    "is_ready",
    "is_terminal",
    "safe_encode",
    "set_condition",
    "template_hash",
]


def is_terminal(pod: JSON) -> bool:
    """Succeeded or Failed: the pod will never run again."""
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: JSON) -> bool:
    """`FilterActivePods`: not terminal and not being deleted."""
    return not is_terminal(pod) and not pod.get("metadata", {}).get("deletionTimestamp")


def get_condition(obj: JSON, kind: str) -> JSON | None:
    for condition in obj.get("status", {}).get("conditions") or []:
        if condition.get("type") == kind:
            return dict(condition)
    return None


def is_ready(pod: JSON) -> bool:
    condition = get_condition(pod, "Ready")
    return condition is not None and condition.get("status") == "True"


def available_at(pod: JSON, min_ready_seconds: int) -> datetime | None:
    """When a Ready pod becomes available (Ready for `min_ready_seconds`); None if not Ready."""
    condition = get_condition(pod, "Ready")
    if condition is None or condition.get("status") != "True":
        return None
    try:
        since = parse_time(str(condition.get("lastTransitionTime", "")))
    except TimestampError:
        return None
    return since + timedelta(seconds=max(min_ready_seconds, 0))


def is_available(pod: JSON, min_ready_seconds: int, now: datetime) -> bool:
    """`IsPodAvailable`: Ready, and Ready for at least `min_ready_seconds`."""
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    at = available_at(pod, min_ready_seconds)
    return at is not None and at <= now


def set_condition(
    conditions: list[JSON],
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    *,
    update_time: bool = False,
) -> list[JSON]:
    """Return `conditions` with `kind` set; lastTransitionTime moves only when the
    status changes (the Kubernetes convention). With `update_time` (a Deployment's
    conditions) `lastUpdateTime` moves on any change and an unchanged condition is left be."""
    stamp = format_time(now)
    out = [dict(c) for c in conditions]
    for condition in out:
        if condition.get("type") != kind:
            continue
        if update_time and (condition.get("status"), condition.get("reason"), condition.get("message")) == (
            status,
            reason,
            message,
        ):
            return out
        if condition.get("status") != status:
            condition["lastTransitionTime"] = stamp
        condition.update(status=status, reason=reason, message=message)
        if update_time:
            condition["lastUpdateTime"] = stamp
        return out
    added: JSON = {"type": kind, "status": status, "reason": reason, "message": message}
    if update_time:
        added["lastUpdateTime"] = stamp
    added["lastTransitionTime"] = stamp
    out.append(added)
    return out


def fnv32a(data: bytes) -> int:
    """32-bit FNV-1a, the hash Kubernetes uses for pod-template-hash."""
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(text: str) -> str:
    """`rand.SafeEncodeString`: map each character onto consonants and digits so a
    hash never spells words and is a valid label value."""
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in text)


def template_hash(template: Any, collision_count: int | None = None) -> str:
    """Stable short hash of a pod template: FNV-32a of canonical JSON (sorted keys,
    no whitespace), the collision count appended like `controller.ComputeHash`,
    then safe-encoded. Upstream hashes a Go dump of the struct, so values differ
    from a real cluster, but they are stable and change exactly when the template does."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def strip_label(template: JSON, key: str) -> JSON:
    """A copy of a pod template without one label (to compare ignoring the hash)."""
    out = copy.deepcopy(template)
    labels = out.get("metadata", {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(key, None)
        if not labels:
            out["metadata"].pop("labels")
    if "metadata" in out and not out["metadata"]:
        out.pop("metadata")
    return out
