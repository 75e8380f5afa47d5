"""One subset's status: replicas, missingReplicas and the webhook's ageing bookkeeping.

docs/design-workloadspread.md §2.5.2. `creatingPods` entries are dropped once the pod is seen and
expire after 30 s; `deletingPods` entries are kept only for active pods and
expire after 15 s (both configurable; expiry is strict: `time + timeout` before
now). missingReplicas uses the order-independent form stated there:
`max(0, cap - activeWithoutKeptDeleting)`, minus kept creating entries, floored
at 0; Kruise's in-loop floor can differ by one when the subset is over capacity
and a deleting pod is listed after it filled (documented there as a quirk).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from py_engine.model.pods import is_pod_active, matched_spread
from py_engine.model.subset_status import pod_records
from py_engine.semantics.timeutil import parse_time_or_none
from py_engine.workloadspread.controller.events import CREATE_POD_FAILED, DELETE_POD_FAILED, WARNING, Event
from py_engine.workloadspread.controller.options import ReconcileOptions

Obj = Mapping[str, Any]
UNLIMITED = -1


@dataclass
class SubsetOutcome:
    """The new status entry and what the computation asks of the sync."""

    entry: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    requeue_seconds: list[float] = field(default_factory=list)


def subset_status(
    name: str,
    cap: int,
    pods: Sequence[Obj],
    old: Mapping[str, Any] | None,
    now: datetime,
    options: ReconcileOptions,
    namespace: str = "",
) -> SubsetOutcome:
    """Status of subset `name` holding `pods`; `cap` is the resolved maxReplicas or -1 (unlimited)."""
    outcome = SubsetOutcome(entry={})
    creating = pod_records(old, "creatingPods")
    old_deleting = pod_records(old, "deletingPods")
    deleting: dict[str, Any] = {}
    delete_timeout = timedelta(seconds=options.deleting_timeout_seconds)
    create_timeout = timedelta(seconds=options.creating_timeout_seconds)
    active = 0
    for pod in pods:
        pod_name = str((pod.get("metadata") or {}).get("name") or "")
        if (
            creating
        ):  # the annotation is read only while creations are recorded (rarely: steady passes skip it)
            matched = matched_spread(pod)
            creating.pop(matched.uid if matched is not None and matched.uid else pod_name, None)
        if not is_pod_active(pod):
            continue
        active += 1
        if pod_name in old_deleting:
            since = parse_time_or_none(old_deleting[pod_name])
            if since is None or since + delete_timeout < now:
                outcome.events.append(
                    Event(
                        WARNING,
                        DELETE_POD_FAILED,
                        f"Pod {namespace}/{pod_name} was expected to be deleted but it wasn't",
                    )
                )
            else:
                deleting[pod_name] = old_deleting[pod_name]
                outcome.requeue_seconds.append((since + delete_timeout - now).total_seconds())
    kept_creating: dict[str, Any] = {}
    for key, value in creating.items():
        since = parse_time_or_none(value)
        if since is None or since + create_timeout < now:
            outcome.events.append(
                Event(
                    WARNING,
                    CREATE_POD_FAILED,
                    f"Pod {namespace}/{key} was expected to be created but it wasn't",
                )
            )
        else:
            kept_creating[key] = value
            outcome.requeue_seconds.append((since + create_timeout - now).total_seconds())
    if cap == UNLIMITED:
        missing = UNLIMITED
    else:
        missing = max(0, cap - (active - len(deleting)))
        missing = max(0, missing - len(kept_creating))
    outcome.entry = {"name": name, "replicas": active, "missingReplicas": missing}
    if kept_creating:
        outcome.entry["creatingPods"] = kept_creating
    if deleting:
        outcome.entry["deletingPods"] = deleting
    return outcome
