"""Giving a slot back when a pod is deleted or evicted (docs/design-workloadspread.md §2.4).

The validating webhook sees the delete before the API server's own checks
(PodDisruptionBudgets, finalizers), so it cannot know the delete will happen;
it records the pod in `deletingPods` (the controller drops the entry after
15 s if the pod is still there) and raises `missingReplicas` by one so a
replacement can be admitted at once.

Which pods give a slot back (Spreadgate's rule, docs/kruise-compatibility.md,
"WorkloadSpread"): a pod *counts* toward its subset only within the cap. The
records of the pod's version say how many slots the subset holds: `replicas`
(active pods the controller counted at its last sync) + `creatingPods` (pods
admitted since) - `deletingPods` (deletions admitted since). A delete frees a
slot only while the subset, this pod's deletion recorded, holds fewer than its
cap; otherwise the pod is beyond the cap: its deletion is recorded in
`deletingPods` (so the count goes down) and `missingReplicas` is unchanged. That covers a
subset left over capacity by a lowered cap, and a pod that arrived with a
matched annotation the subset never admitted and that the controller then
counted (admission strips such annotations, `py_engine.workloadspread.admission.matched`).
A pod recorded in `creatingPods`/`deletingPods` gives nothing back either, as in
Kruise (its entry holds the slot until the controller sees it or it expires).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.model import is_workloadspread
from py_engine.model.pods import matched_spread
from py_engine.model.subset_status import pod_records
from py_engine.semantics import objects
from py_engine.semantics.timeutil import format_time
from py_engine.workloadspread.admission.context import AdmissionContext
from py_engine.workloadspread.admission.reserve import read_spread
from py_engine.workloadspread.admission.statuses import (
    missing_replicas,
    occupied_slots,
    recorded_subset,
    spec_ahead_of_status,
    statuses_for,
    version_of,
    with_version_statuses,
)
from py_engine.workloadspread.admission.workloads import (
    current_replicas,
    is_statefulset_target,
    workload_replicas,
)


@dataclass(frozen=True)
class DeleteRelease:
    """The outcome of `release_delete`: the spread to write (None = nothing to do), the
    pod's subset (also set, with nothing to write, for the only subset of a spread
    whose single subset is unlimited), and whether a slot was given back (`freed`;
    False with a spread to write: the deletion is recorded, the pod was beyond the cap)."""

    spread: dict[str, Any] | None
    subset: str | None = None
    freed: bool = False


def find_annotated_spread(pod: Mapping[str, Any], spreads: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The spread a pod's matched-workloadspread annotation names (Spreadgate's key or
    Kruise's), among `spreads` of the pod's namespace; None when unannotated or gone."""
    matched = matched_spread(pod)
    if matched is None or not matched.name:
        return None
    namespace = objects.namespace(pod)
    for spread in spreads:
        if is_workloadspread(spread) and objects.name(spread) == matched.name and objects.namespace(spread) == namespace:
            return spread
    return None


def release_delete(spread: dict[str, Any], pod: dict[str, Any], ctx: AdmissionContext, *,
                   status_owned: bool = False) -> DeleteRelease:
    """Record a pod DELETE / `pods/eviction` in `deletingPods` and return its slot.

    The pod has passed the service's guards (annotated, active, with a controller
    owner). No change when: the pod is not annotated for this spread; the target is a StatefulSet; the spread has exactly one
    subset and it has no `maxReplicas` (Kruise's shortcut, which its DELETE and
    eviction paths take too: `DeleteRelease(None, subset)`); the pod's name is
    already in any `creatingPods`/`deletingPods` of its version (a pod deleted
    before the controller saw it gives nothing back); the annotated subset is not
    in the statuses; or the subset is unlimited (`missingReplicas == -1`, or no
    cap in a spec the controller has not synced yet).

    Otherwise `deletingPods[name] = now` and `missingReplicas` + 1 (no upper
    clamp, as in Kruise) — unless the pod is beyond the subset's cap (module
    docstring): then `missingReplicas` stays and `freed` is False. While the
    spec is ahead of the status (`spec_ahead_of_status`) the room is counted
    from the spec's cap instead: `max(0, cap - (replicas + creatingPods -
    deletingPods))`.

    `status_owned`: as for `reserve_create` (py_engine/workloadspread/admission/reserve.py), the entry's
    `deletingPods` map is extended in place.
    """
    matched = matched_spread(pod)
    if matched is None or matched.name != objects.name(spread):
        return DeleteRelease(None)
    view = read_spread(spread, ctx.caches)
    if is_statefulset_target(view):
        return DeleteRelease(None)
    if len(view.subsets) == 1 and view.subsets[0].max_replicas is None:
        return DeleteRelease(None, view.subsets[0].name)
    name = objects.name(pod)
    version = version_of(pod, ctx)
    statuses, initialised = statuses_for(view, version, lambda: workload_replicas(view, objects.namespace(spread), ctx))
    if not name or recorded_subset(statuses, name) is not None:
        return DeleteRelease(None)
    entry = next((e for e in statuses if e.get("name") == matched.subset), None)
    if entry is None:
        return DeleteRelease(None)
    spec_subset = view.subset(matched.subset)
    from_spec = not initialised and spec_ahead_of_status(view)
    if from_spec and (spec_subset is None or spec_subset.max_replicas is None):
        return DeleteRelease(None)  # unlimited (or gone) in the spec the controller has not synced yet
    cap: int | None = None
    if spec_subset is not None and spec_subset.max_replicas is not None:
        replicas = current_replicas(view, objects.namespace(spread), ctx) if spec_subset.max_replicas.percent else 0
        cap = None if replicas is None else spec_subset.max_replicas.resolve(replicas)
    missing = missing_replicas(entry)
    if missing < 0 and not (from_spec and cap is not None):
        return DeleteRelease(None)
    deleting = pod_records(entry, "deletingPods", in_place=status_owned)
    deleting[name] = format_time(ctx.now)
    entry["deletingPods"] = deleting
    held = occupied_slots(entry)
    freed = cap is None or held < cap
    if from_spec and cap is not None:
        entry["missingReplicas"] = max(0, cap - held)
    elif freed:
        entry["missingReplicas"] = missing + 1
    # Not freed: the pod was beyond the cap. Its deletion is still recorded, so the
    # subset's count goes down and a later delete below the cap frees a slot.
    return DeleteRelease(with_version_statuses(spread, version, statuses), matched.subset, freed)

