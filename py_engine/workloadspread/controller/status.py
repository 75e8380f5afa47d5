"""The whole new status of a spread, and whether it differs from the stored one.

docs/design-workloadspread.md §2.3 and §2.5.2: `subsetStatuses` aggregates every version (spec
order, previous entries matched by name); `versionedSubsetStatuses` has one list
per version present among the pods, and keeps a version whose pods are gone
only while it still holds creating/deleting entries. A cap that cannot be
resolved (a percentage of an unknown replica count) leaves the list empty.

`Schedulable` conditions (Adaptive rescheduling, §2.5.4) are decided
per list, as Kruise's `calculateWorkloadSpreadStatus` does: the aggregate from
all pods and the aggregate's previous conditions, each version from that
version's own pods and its own previous conditions. The webhook reads the
condition from the pod's version list, so mid-rollout a subset where only
old-version pods failed to schedule stays open to new-version pods. Only the
aggregate's schedule-failed pods are deleted (they include every version's);
the requeues and events of every list count, those of a version list that is
then dropped included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from py_engine.model.workloads import UNKNOWN_REPLICAS
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.timeutil import TimestampError, format_time, parse_time
from py_engine.workloadspread.controller.events import Event
from py_engine.workloadspread.controller.grouping import Grouping
from py_engine.workloadspread.controller.options import ReconcileOptions
from py_engine.workloadspread.controller.reschedule import reschedule
from py_engine.workloadspread.controller.subset_status import UNLIMITED, subset_status

Obj = Mapping[str, Any]


@dataclass
class StatusLists:
    """New aggregate and per-version lists, with the events, requeues and deletions computing them raised."""

    aggregate: list[dict[str, Any]] = field(default_factory=list)
    versioned: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    requeue_seconds: list[float] = field(default_factory=list)
    pods_to_delete: list[str] = field(default_factory=list)


def _entries_by_name(entries: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(entries, list):
        return {}
    return {str(e.get("name")): e for e in entries if isinstance(e, Mapping)}


def old_aggregate(spread: WorkloadSpread) -> dict[str, Mapping[str, Any]]:
    return _entries_by_name(spread.stored_status.get("subsetStatuses"))


def _caps(spread: WorkloadSpread, replicas: int) -> list[int] | None:
    """Resolved caps in spec order (-1 unlimited); None when a percentage cannot be resolved."""
    caps = []
    for subset in spread.subsets:
        if subset.max_replicas is None:
            caps.append(UNLIMITED)
        elif subset.max_replicas.percent and replicas == UNKNOWN_REPLICAS:
            return None
        else:
            caps.append(subset.max_replicas.resolve(replicas))
    return caps


def _list(
    spread: WorkloadSpread,
    caps: Sequence[int],
    pods_of: Mapping[str | None, Sequence[Obj]],
    old: Mapping[str, Mapping[str, Any]],
    now: datetime,
    options: ReconcileOptions,
    into: StatusLists,
) -> tuple[list[dict[str, Any]], list[str]]:
    """One list (aggregate or one version) with its own conditions, and its schedule-failed pods."""
    entries = []
    for subset, cap in zip(spread.subsets, caps, strict=True):
        outcome = subset_status(
            subset.name,
            cap,
            pods_of.get(subset.name, ()),
            old.get(subset.name),
            now,
            options,
            spread.namespace,
        )
        entries.append(outcome.entry)
        into.events.extend(outcome.events)
        into.requeue_seconds.extend(outcome.requeue_seconds)
    decision = reschedule(
        spread,
        {s.name: pods_of.get(s.name, ()) for s in spread.subsets},
        old,
        now,
        options.recovery_window_seconds,
    )
    for entry in entries:
        condition = decision.conditions.get(entry["name"])
        if condition is not None:
            entry["conditions"] = [dict(condition)]
    into.events.extend(decision.events)
    into.requeue_seconds.extend(decision.requeue_seconds)
    return entries, decision.pods_to_delete


def status_lists(
    spread: WorkloadSpread, grouping: Grouping, replicas: int, now: datetime, options: ReconcileOptions
) -> StatusLists:
    """Aggregate and per-version subset statuses, each with its own conditions (module docstring)."""
    result = StatusLists()
    caps = _caps(spread, replicas)
    if caps is None:
        return result
    aggregate_pods: dict[str | None, list[Obj]] = {s.name: grouping.aggregate(s.name) for s in spread.subsets}
    result.aggregate, result.pods_to_delete = _list(
        spread, caps, aggregate_pods, old_aggregate(spread), now, options, result
    )
    old_versioned = spread.stored_status.get("versionedSubsetStatuses")
    old_versioned = old_versioned if isinstance(old_versioned, Mapping) else {}
    versions = list(grouping.buckets) + sorted(v for v in old_versioned if v not in grouping.buckets)
    for version in versions:
        buckets = grouping.buckets.get(version, {})
        entries, _ = _list(
            spread, caps, buckets, _entries_by_name(old_versioned.get(version)), now, options, result
        )
        if version in grouping.buckets or any(
            e.get("creatingPods") or e.get("deletingPods") for e in entries
        ):
            result.versioned[str(version)] = entries
    return result


def _normal_time(value: Any) -> Any:
    try:
        return format_time(parse_time(value)) if isinstance(value, str) else value
    except TimestampError:
        return value


def normalise(value: Any, key: str = "") -> Any:
    """Semantic form for comparison: empty maps/lists and nulls dropped, times canonical."""
    if isinstance(value, Mapping):
        if key in ("creatingPods", "deletingPods"):
            return {k: _normal_time(v) for k, v in value.items()}
        out = {}
        for k, v in value.items():
            item = normalise(v, str(k))
            if item not in (None, {}, []):
                out[k] = item
        return out
    if isinstance(value, list):
        return [normalise(v, key) for v in value]
    if key == "lastTransitionTime":
        return _normal_time(value)
    return value


def semantically_equal(old: Any, new: Any) -> bool:
    """Kruise's `apiequality.Semantic.DeepEqual` as it matters here: nil and empty are equal."""
    return bool(normalise(old or {}) == normalise(new or {}))
