"""Adaptive bookkeeping: is a subset schedulable, and which pods are reserved?

Default mode: a subset whose pods cannot be scheduled for longer than
`rescheduleCriticalSeconds` is marked unschedulable (condition `Schedulable=False`)
for `unschedulableDuration`. Reservation mode: such pods are kept and labelled
reserved until they have been Running and Ready for `unschedulableDuration`; a
subset with reserved pods is unschedulable. Every function returns the delays
after which the answer may change (pods are not watched, so the controller must
requeue). docs/uniteddeployment.md, "Adaptive scheduling" and "Reservation mode".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from py_engine.model.ud_constants import RESERVED_POD_LABEL
from py_engine.model.uniteddeployment import AdaptiveOptions
from py_engine.semantics import objects
from py_engine.uniteddeployment.controller.conditions import make, set_subset_condition
from py_engine.uniteddeployment.controller.podfacts import (
    condition,
    phase,
    reserved_label,
    revision_of,
    timestamp,
    unschedulable_since,
)

JSON = dict[str, Any]
Obj = Mapping[str, Any]
SCHEDULABLE = "Schedulable"


@dataclass(frozen=True)
class SubsetVerdict:
    """This sync's view of one existing subset.

    `condition` is the `Schedulable` condition to store (None: none stored);
    `pod_labels` maps pod names to the reserved label value to write.
    """

    unschedulable: bool
    condition: JSON | None
    timed_out_pods: int = 0
    reserved_pods: int = 0
    update_timeout_pods: int = 0
    requeue: tuple[float, ...] = ()
    pod_labels: Mapping[str, str] = field(default_factory=dict)


def is_marked(stored: Mapping[str, Any] | None) -> bool:
    """The stored `Schedulable` condition is False."""
    return stored is not None and stored.get("status") == "False"


def _seconds(later: datetime, earlier: datetime) -> float:
    return (later - earlier).total_seconds()


def default_verdict(
    *,
    status_replicas: int,
    ready_replicas: int,
    pods: Sequence[Obj],
    stored: Mapping[str, Any] | None,
    options: AdaptiveOptions,
    now: datetime,
) -> SubsetVerdict:
    """Default mode: recover after `unschedulableDuration`; mark on timed-out pending pods.

    A pod whose deadline is exactly `now` counts as timed out (Kruise waits for the
    next event, as a zero delay is never requeued).
    """
    unschedulable = False
    requeue: list[float] = []
    current: JSON | None = dict(stored) if stored is not None else None
    if is_marked(stored):
        assert stored is not None
        since = timestamp(stored.get("lastTransitionTime"))
        left = options.unschedulable_duration_seconds - _seconds(now, since) if since else 0.0
        if left > 0:
            unschedulable = True
            requeue.append(left)
        else:
            message = f"unschedulable subset recovered after {options.unschedulable_duration_seconds} seconds"
            current = make(SCHEDULABLE, True, "recover", message, now)
    timed_out = 0
    if ready_replicas < status_replicas:
        for pod in pods:
            start = unschedulable_since(pod)
            if start is None:
                continue
            left = options.reschedule_critical_seconds - _seconds(now, start)
            if left <= 0:
                timed_out += 1
            else:
                requeue.append(left)
        if timed_out:
            unschedulable = True
            new = make(SCHEDULABLE, False, "reschedule", "timeout pending pods found", now)
            current = set_subset_condition([current] if current else [], new)[-1]
            requeue.append(float(options.unschedulable_duration_seconds))
    return SubsetVerdict(
        unschedulable=unschedulable, condition=current, timed_out_pods=timed_out, requeue=tuple(requeue)
    )


@dataclass(frozen=True)
class PodReservation:
    """Whether a pod is reserved, when to look again (None: no need), and whether it
    was reserved because an update did not reach it in time."""

    reserved: bool
    next_check: float | None
    update_timeout: bool = False


def classify_pod(
    pod: Obj,
    *,
    marked: bool,
    updated_revision: str,
    updated_since: datetime | None,
    pending_timeout: float,
    ready_for: float,
    now: datetime,
) -> PodReservation:
    """Reservation mode's verdict on one pod (docs/uniteddeployment.md, "Reservation mode").

    A new pod of a marked subset starts reserved and is looked at again after
    `ready_for` (Kruise requeues nothing for it). Deadlines falling exactly on `now`
    have passed.
    """
    current = reserved_label(pod)
    if marked and current is None:
        return PodReservation(True, ready_for)
    if current == "true":
        ready = condition(pod, "Ready")
        if (
            phase(pod) == "Running"
            and revision_of(pod) == updated_revision
            and ready is not None
            and ready.get("status") == "True"
        ):
            since = timestamp(ready.get("lastTransitionTime")) or now
            elapsed = _seconds(now, since)
            if elapsed > ready_for:
                return PodReservation(False, None)
            return PodReservation(True, ready_for - elapsed)
        return PodReservation(True, ready_for)
    if revision_of(pod) == updated_revision:
        start = unschedulable_since(pod)
        if start is None:
            return PodReservation(False, None)
        left = pending_timeout - _seconds(now, start)
        return PodReservation(True, ready_for) if left <= 0 else PodReservation(False, left)
    if updated_since is None or objects.meta(pod).get("deletionTimestamp"):
        return PodReservation(False, None)
    left = pending_timeout - _seconds(now, updated_since)
    return PodReservation(True, ready_for, update_timeout=True) if left <= 0 else PodReservation(False, left)


def reserving_verdict(
    *,
    pods: Sequence[Obj],
    stored: Mapping[str, Any] | None,
    updated_revision: str,
    updated_since: datetime | None,
    options: AdaptiveOptions,
    now: datetime,
) -> SubsetVerdict:
    """Reservation mode: classify every pod of the subset (finished and terminating ones
    too: a reserved-labelled pod stays reserved until it is gone, as in Kruise);
    unschedulable while any is reserved.

    A pod is relabelled when Spreadgate's label differs from its verdict, including
    pods that carry only Kruise's label, so the status label selector (which names
    Spreadgate's key) counts them.
    """
    marked = is_marked(stored)
    reserved = update_timeouts = 0
    requeue: list[float] = []
    pod_labels: dict[str, str] = {}
    for pod in pods:  # every pod, finished and terminating ones too, as Kruise
        verdict = classify_pod(
            pod,
            marked=marked,
            updated_revision=updated_revision,
            updated_since=updated_since,
            pending_timeout=options.reschedule_critical_seconds,
            ready_for=options.unschedulable_duration_seconds,
            now=now,
        )
        reserved += verdict.reserved
        update_timeouts += verdict.update_timeout
        if verdict.next_check is not None and verdict.next_check > 0:
            requeue.append(verdict.next_check)
        wanted = "true" if verdict.reserved else "false"
        if _own_label(pod) != wanted:
            pod_labels[objects.name(pod)] = wanted
    if reserved:
        new = make(SCHEDULABLE, False, "reschedule", "reserved pods found", now)
    else:
        new = make(SCHEDULABLE, True, "reschedule", "no reserved pods", now)
    placed = set_subset_condition([stored] if stored is not None else [], new)[-1]
    return SubsetVerdict(
        unschedulable=reserved > 0,
        condition=placed,
        reserved_pods=reserved,
        update_timeout_pods=update_timeouts,
        requeue=tuple(requeue),
        pod_labels=pod_labels,
    )


def _own_label(pod: Obj) -> str | None:
    return objects.labels(pod).get(RESERVED_POD_LABEL)


def after_allocation(
    current: JSON | None,
    *,
    unschedulable: bool,
    marked: bool,
    current_replicas: int,
    next_replicas: int,
    now: datetime,
) -> JSON | None:
    """A subset that has just recovered and is scaled up is marked again, so its new pods
    start reserved and the substitutes go only once they prove healthy."""
    if unschedulable or not marked or next_replicas <= current_replicas:
        return current
    new = make(SCHEDULABLE, False, "reschedule", "subset just recovered scaled up", now)
    return set_subset_condition([current] if current else [], new)[-1]
