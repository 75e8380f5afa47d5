"""Which pods OpenKruise's CloneSet deletes on a scale-in: its rules, stated here for the emulator.

Written from docs/design-scaledown.md §2 (the Kruise comparator §2.1, the SameNodeRanker §2.2 and
the choice of `n` pods from a group in §2.5 step 6), not from the product's scale-down model: the
emulated CloneSet must be able to disagree with `spreadgate rank` when the model is wrong
(tests/sim/test_cloneset_victims_independent.py compares the two).

Differences from the CloneSet controller, each said where it matters: the spread-constraints
ranker (§2.3) is not used, every group is ranked by SameNodeRanker.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime

from py_engine.semantics.timeutil import parse_time_or_none
from py_engine.sim.controllers.victims import deletion_cost
from py_engine.sim.interface import JSON

__all__ = ["choose", "kruise_available", "kruise_order", "same_node_ranks"]

LIFECYCLE_LABEL = "lifecycle.apps.kruise.io/state"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}

Available = Callable[[JSON], bool]


def kruise_available(min_ready_seconds: int, now: datetime) -> Available:
    """`IsPodAvailable` as the CloneSet's scale-in passes it (§2.1)."""

    def available(pod: JSON) -> bool:
        state = ((pod.get("metadata") or {}).get("labels") or {}).get(LIFECYCLE_LABEL)
        if state not in (None, "", "Normal") or (pod.get("status") or {}).get("phase") != "Running":
            return False
        if not _ready(pod):
            return False
        if min_ready_seconds > 0:
            since = _ready_since(pod)
            if since is None or not (since.timestamp() + min_ready_seconds < now.timestamp()):
                return False
        in_place = _condition(pod, "InPlaceUpdateReady")
        return in_place is None or in_place.get("status") == "True"

    return available


def same_node_ranks(pods: Sequence[JSON]) -> dict[str, float]:
    """SameNodeRanker (§2.2): per node with two or more pods, the most valuable keeps 0 and the
    others get count-1 down to 1 in deletion order; keyed by UID."""
    per_node: dict[str, list[JSON]] = {}
    for pod in pods:
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if node:
            per_node.setdefault(node, []).append(pod)
    ranks: dict[str, float] = {}
    for on_node in per_node.values():
        if len(on_node) < 2:
            continue
        ordered = kruise_order(on_node, {}, None)
        for index, pod in enumerate(ordered[:-1]):
            ranks[_uid(pod)] = float(len(on_node) - 1 - index)
    return ranks


def kruise_order(pods: Sequence[JSON], ranks: dict[str, float], available: Available | None) -> list[JSON]:
    """`pods` in the Kruise comparator's order (§2.1), first = deleted first; stable for ties."""
    facts = [_Facts(pod, ranks.get(_uid(pod), 0.0), available) for pod in pods]
    facts.sort(key=functools.cmp_to_key(_compare))
    return [fact.pod for fact in facts]


def choose(group: Sequence[JSON], count: int, available: Available) -> list[JSON]:
    """`count` pods of one revision group to delete (§2.5 step 6): all of them unsorted when the
    group is not larger, else the first `count` in order with the group's own ranks."""
    if count <= 0:
        return []
    if count >= len(group):
        return list(group)
    return kruise_order(group, same_node_ranks(group), available)[:count]


class _Facts:
    __slots__ = (
        "available",
        "cost",
        "created",
        "node",
        "phase",
        "pod",
        "rank",
        "ready",
        "ready_since",
        "restarts",
    )

    def __init__(self, pod: JSON, rank: float, available: Available | None) -> None:
        status = pod.get("status") or {}
        self.pod = pod
        self.rank = rank
        self.node = bool((pod.get("spec") or {}).get("nodeName"))
        self.phase = _PHASE_ORDINAL.get(str(status.get("phase") or ""), 0)
        self.available = None if available is None else available(pod)
        self.ready = _ready(pod)
        self.ready_since = _ready_since(pod) if self.ready else None
        self.cost = deletion_cost(pod)
        self.restarts = max(
            (int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or []), default=0
        )
        self.created = parse_time_or_none((pod.get("metadata") or {}).get("creationTimestamp"))


def _compare(a: _Facts, b: _Facts) -> int:
    """-1 when `a` goes first (deleted before `b`), 1 when `b` does, 0 when no rule decides."""
    if a.node != b.node:
        return -1 if not a.node else 1
    if a.phase != b.phase:
        return -1 if a.phase < b.phase else 1
    if a.available is not None and b.available is not None and a.available != b.available:
        return -1 if not a.available else 1
    if a.ready != b.ready:
        return -1 if not a.ready else 1
    if a.cost != b.cost:
        return -1 if a.cost < b.cost else 1
    if a.rank != b.rank:
        return -1 if a.rank > b.rank else 1
    if a.ready and b.ready and a.ready_since != b.ready_since:
        return _newer_or_zero_first(a.ready_since, b.ready_since)
    if a.restarts != b.restarts:
        return -1 if a.restarts > b.restarts else 1
    if a.created != b.created:
        return _newer_or_zero_first(a.created, b.created)
    return 0


def _newer_or_zero_first(time_a: datetime | None, time_b: datetime | None) -> int:
    """`afterOrZero` without buckets: a missing time counts as the newest, else the later goes first."""
    if time_a is None or time_b is None:
        return -1 if time_a is None else 1
    return -1 if time_a > time_b else 1


def _condition(pod: JSON, kind: str) -> JSON | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def _ready(pod: JSON) -> bool:
    ready = _condition(pod, "Ready")
    return ready is not None and ready.get("status") == "True"


def _ready_since(pod: JSON) -> datetime | None:
    ready = _condition(pod, "Ready")
    return None if ready is None else parse_time_or_none(ready.get("lastTransitionTime"))


def _uid(pod: JSON) -> str:
    meta = pod.get("metadata") or {}
    return str(meta.get("uid") or meta.get("name") or "")
