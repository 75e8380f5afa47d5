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
from py_engine.semantics import objects
from py_engine.workloadspread.admission.context import AdmissionContext
from py_engine.workloadspread.admission.ledger import SubsetLedger, version_of
from py_engine.workloadspread.admission.reserve import read_spread
from py_engine.workloadspread.admission.workloads import TargetWorkload


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
        if (
            is_workloadspread(spread)
            and objects.name(spread) == matched.name
            and objects.namespace(spread) == namespace
        ):
            return spread
    return None


def release_delete(
    spread: dict[str, Any], pod: dict[str, Any], ctx: AdmissionContext, *, status_owned: bool = False
) -> DeleteRelease:
    """Record a pod DELETE / `pods/eviction` in `deletingPods` and return its slot.

    The pod has passed the service's guards (annotated, active, with a controller
    owner). No change when: the pod is not annotated for this spread; the target is a
    StatefulSet; the spread has exactly one subset and it has no `maxReplicas` (Kruise's
    shortcut, which its DELETE and
    eviction paths take too: `DeleteRelease(None, subset)`); the pod's name is
    already in any `creatingPods`/`deletingPods` of its version (a pod deleted
    before the controller saw it gives nothing back); the annotated subset is not
    in the statuses; or the subset is unlimited (`missingReplicas == -1`, or no
    cap in a spec the controller has not synced yet).

    Otherwise `deletingPods[name] = now` and `missingReplicas` + 1 (no upper
    clamp, as in Kruise) — unless the pod is beyond the subset's cap (module
    docstring): then `missingReplicas` stays and `freed` is False. While the
    spec is ahead of the status (`SubsetLedger.from_spec`) the room is counted
    from the spec's cap instead: `max(0, cap - (replicas + creatingPods -
    deletingPods))`.

    `status_owned`: as for `reserve_create` (py_engine/workloadspread/admission/reserve.py), the entry's
    `deletingPods` map is extended in place.
    """
    matched = matched_spread(pod)
    if matched is None or matched.name != objects.name(spread):
        return DeleteRelease(None)
    view = read_spread(spread, ctx.caches)
    target = TargetWorkload(view, ctx)
    if target.ordinal_placement:
        return DeleteRelease(None)
    if len(view.subsets) == 1 and view.subsets[0].max_replicas is None:
        return DeleteRelease(None, view.subsets[0].name)
    name = objects.name(pod)
    ledger = SubsetLedger(view, version_of(pod, ctx), target.replicas)
    if not name or ledger.recorded(name) is not None:
        return DeleteRelease(None)
    entry = ledger.entry(matched.subset)
    if entry is None:
        return DeleteRelease(None)
    limit = ledger.spec_cap(matched.subset)
    if ledger.from_spec and limit is None:
        return DeleteRelease(None)  # unlimited (or gone) in the spec the controller has not synced yet
    cap: int | None = None
    if limit is not None:
        replicas = target.replicas() if limit.percent else 0
        cap = None if replicas is None else limit.resolve(replicas)
    freed = ledger.release(entry, name, ctx.now, cap, in_place=status_owned)
    if freed is None:
        return DeleteRelease(None)  # unlimited: nothing to give back
    # Not freed: the pod was beyond the cap. Its deletion is still recorded, so the
    # subset's count goes down and a later delete below the cap frees a slot.
    return DeleteRelease(ledger.written(), matched.subset, freed)
