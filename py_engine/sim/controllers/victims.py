"""Which active pods the emulated ReplicaSet deletes on a scale-down: the upstream rules, stated here.

The emulator must not borrow the product's decisions: `spreadgate rank` and the deletion costs the
controller writes are checked against what this ReplicaSet does, so it keeps its own reading of
Kubernetes' `getPodsToDelete` / `ActivePodsWithRanks` with the `PodDeletionCost` and
`LogarithmicScaleDown` gates on (every Kubernetes since 1.22), written from
docs/design-scaledown.md §1 and nothing in `py_engine.scaledown` (an import contract forbids it;
tests/sim/test_victims_independent.py compares the two on generated pods).

The rules, in the order that decides (§1.3), "first" meaning deleted first: unscheduled pods;
then the lower phase ordinal (Pending 0, Unknown 1, Running 2, any other 0); then not-ready
pods; then the lower `controller.kubernetes.io/pod-deletion-cost`; then the higher rank (active
related pods on the same node, the pod itself included); then, for two ready pods, the younger
ready time; then more restarts; then the younger creation time. Times compare in
powers-of-two age buckets with a UID tie-break that ends the comparison (§1.4).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from py_engine.semantics.timeutil import parse_time_or_none
from py_engine.semantics.wellknown import DELETION_COST_ANNOTATION
from py_engine.sim.interface import JSON

__all__ = ["choose_victims", "deletion_cost", "deletion_order"]

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def choose_victims(
    active: Sequence[JSON], related: Sequence[JSON] | None, diff: int, now: datetime
) -> list[JSON]:
    """The `diff` pods of `active` the ReplicaSet controller deletes, in deletion order.

    `related` is None for a ReplicaSet without a controller owner (every rank is then 0), else
    the pods of every ReplicaSet sharing its owner. Removing every pod needs no order (§1.1.4).
    """
    if diff <= 0:
        return []
    if diff >= len(active):
        return list(active)
    return deletion_order(active, _ranks(active, related), now)[:diff]


def deletion_order(pods: Sequence[JSON], ranks: Sequence[int], now: datetime) -> list[JSON]:
    """`pods` sorted as `ActivePodsWithRanks` sorts them (first = deleted first), `ranks[i]` for `pods[i]`.

    Python's sort is stable: equal pods keep their input order, as Go's sort does for the short
    slices the upstream tests use (§1.7).
    """
    keyed = [_Candidate(pod, ranks[i], now) for i, pod in enumerate(pods)]
    keyed.sort(key=functools.cmp_to_key(_compare))
    return [candidate.pod for candidate in keyed]


def deletion_cost(pod: JSON) -> int:
    """The pod's deletion cost (§1.3): an int32 in base 10, else 0.

    Without a sign the text is `0` or digits not starting with 0; after a leading `-` the
    digits are read as they are (`-007` is -7). A `+`, any other character or a value outside
    int32 makes the annotation invalid, which counts as 0.
    """
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    if not isinstance(text, str):
        return 0
    negative = text.startswith("-")
    digits = text[1:] if negative else text
    if not (digits.isascii() and digits.isdigit()):
        return 0
    if not negative and len(digits) > 1 and digits.startswith("0"):
        return 0
    value = -int(digits) if negative else int(digits)
    return value if -(2**31) <= value < 2**31 else 0


class _Candidate:
    """One pod with the facts the comparison reads, computed once."""

    __slots__ = (
        "cost",
        "created",
        "node",
        "now",
        "phase",
        "pod",
        "rank",
        "ready",
        "ready_since",
        "restarts",
        "uid",
    )

    def __init__(self, pod: JSON, rank: int, now: datetime) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        self.pod = pod
        self.rank = rank
        self.now = now
        self.uid = str(meta.get("uid") or "")
        self.node = str(spec.get("nodeName") or "")
        self.phase = _PHASE_ORDINAL.get(str(status.get("phase") or ""), 0)
        ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
        self.ready = ready is not None and ready.get("status") == "True"
        self.ready_since = (
            parse_time_or_none(ready.get("lastTransitionTime")) if self.ready and ready else None
        )
        self.restarts = max(
            (int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or []), default=0
        )
        self.cost = deletion_cost(pod)
        self.created = parse_time_or_none(meta.get("creationTimestamp"))


def _compare(a: _Candidate, b: _Candidate) -> int:
    """-1 when `a` is deleted before `b`, 1 when after, 0 when no rule tells them apart."""
    if bool(a.node) != bool(b.node):
        return -1 if not a.node else 1
    if a.phase != b.phase:
        return -1 if a.phase < b.phase else 1
    if a.ready != b.ready:
        return -1 if not a.ready else 1
    if a.cost != b.cost:
        return -1 if a.cost < b.cost else 1
    if a.rank != b.rank:
        return -1 if a.rank > b.rank else 1
    if a.ready and b.ready:
        decided = _younger_first(a, b, a.ready_since, b.ready_since)
        if decided is not None:
            return decided
    if a.restarts != b.restarts:
        return -1 if a.restarts > b.restarts else 1
    decided = _younger_first(a, b, a.created, b.created)
    return 0 if decided is None else decided


def _younger_first(
    a: _Candidate, b: _Candidate, time_a: datetime | None, time_b: datetime | None
) -> int | None:
    """The time rule (§1.4): None when it does not fire, else the comparison it decides."""
    if time_a == time_b:
        return None
    if time_a is None or time_b is None:  # a missing time counts as the newest
        return -1 if time_a is None else 1
    bucket_a, bucket_b = _age_bucket(a.now, time_a), _age_bucket(a.now, time_b)
    if bucket_a != bucket_b:
        return -1 if bucket_a < bucket_b else 1
    if a.uid == b.uid:  # same bucket, same UID: equal, and the comparison stops here
        return 0
    return -1 if a.uid < b.uid else 1


def _age_bucket(now: datetime, then: datetime) -> int:
    """floor(log2(age in nanoseconds)), as Go computes it through a float64; -1 for age <= 0."""
    delta = now - then
    age_ns = (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    return int(math.log2(float(age_ns))) if age_ns > 0 else -1


def _ranks(active: Sequence[JSON], related: Sequence[JSON] | None) -> list[int]:
    """Per active pod: the active related pods on its node, itself included; all 0 without related."""
    if related is None:
        return [0] * len(active)
    seen: set[str] = set()
    per_node: Counter[str] = Counter()
    for pod in related:
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if uid in seen or not _active(pod):
            continue
        seen.add(uid)
        per_node[str((pod.get("spec") or {}).get("nodeName") or "")] += 1
    return [per_node[str((pod.get("spec") or {}).get("nodeName") or "")] for pod in active]


def _active(pod: JSON) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")
