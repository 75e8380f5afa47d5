"""Giving a slot back when a pod is deleted or evicted (reference §2.4).

The validating webhook sees the delete before the API server's own checks
(PodDisruptionBudgets, finalizers), so it cannot know the delete will happen;
it records the pod in `deletingPods` (the controller drops the entry after
15 s if the pod is still there) and raises `missingReplicas` by one so a
replacement can be admitted at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.admission.context import AdmissionContext
from py_engine.admission.reserve import read_spread
from py_engine.admission.statuses import (
    missing_replicas,
    recorded_subset,
    statuses_for,
    version_of,
    with_version_statuses,
)
from py_engine.admission.tracing import name_of, namespace_of
from py_engine.admission.workloads import is_statefulset_target, workload_replicas
from py_engine.k8s.timeutil import format_time
from py_engine.model import is_workloadspread
from py_engine.model.pods import controller_owner, is_pod_active, matched_spread
from py_engine.model.subset_status import pod_records


@dataclass(frozen=True)
class DeleteRelease:
    """The outcome of `release_delete`: the spread to write (None = nothing to do) and
    the subset whose slot was given back."""

    spread: dict[str, Any] | None
    subset: str | None = None


def find_annotated_spread(pod: Mapping[str, Any], spreads: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The spread a pod's matched-workloadspread annotation names (Spreadgate's key or
    Kruise's), among `spreads` of the pod's namespace; None when unannotated or gone."""
    matched = matched_spread(pod)
    if matched is None or not matched.name:
        return None
    namespace = namespace_of(pod)
    for spread in spreads:
        if is_workloadspread(spread) and name_of(spread) == matched.name and namespace_of(spread) == namespace:
            return spread
    return None


def release_delete(spread: dict[str, Any], pod: dict[str, Any], ctx: AdmissionContext) -> DeleteRelease:
    """Record a pod DELETE / `pods/eviction` in `deletingPods` and return its slot.

    No change when: the pod is not annotated for this spread, inactive, or has
    no controller owner; the target is a StatefulSet; the pod's name is already
    in any `creatingPods`/`deletingPods` of its version (a pod deleted before
    the controller saw it gives nothing back); the annotated subset is not in
    the statuses; or the subset is unlimited (`missingReplicas == -1`).
    """
    matched = matched_spread(pod)
    if matched is None or matched.name != name_of(spread):
        return DeleteRelease(None)
    if not is_pod_active(pod) or controller_owner(pod) is None:
        return DeleteRelease(None)
    view = read_spread(spread)
    if is_statefulset_target(view):
        return DeleteRelease(None)
    name = name_of(pod)
    version = version_of(pod, ctx)
    statuses, _ = statuses_for(view, version, lambda: workload_replicas(view, namespace_of(spread), ctx))
    if not name or recorded_subset(statuses, name) is not None:
        return DeleteRelease(None)
    entry = next((e for e in statuses if e.get("name") == matched.subset), None)
    if entry is None:
        return DeleteRelease(None)
    missing = missing_replicas(entry)
    if missing < 0:
        return DeleteRelease(None)
    deleting = pod_records(entry, "deletingPods")
    deleting[name] = format_time(ctx.now)
    entry["deletingPods"] = deleting
    entry["missingReplicas"] = missing + 1
    return DeleteRelease(with_version_statuses(spread, version, statuses), matched.subset)

