"""Versioned subset statuses the webhook counts against (docs/design-workloadspread.md §2.3, §2.1.1 step 2).

The webhook never reads the aggregate `status.subsetStatuses`: it reads and
writes `status.versionedSubsetStatuses[version]`, where version is the pod's
`pod-template-hash` for Deployment/ReplicaSet pods (so a rolling update counts
new pods against the full caps) and `versionIgnored` otherwise. An empty
version is initialised from the spec alone; existing pods are not counted (the
controller corrects the count on its next sync).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from py_engine.model import WorkloadSpread
from py_engine.model.constants import SCHEDULABLE_CONDITION
from py_engine.model.pods import controller_owner, pod_version
from py_engine.model.subset_status import subset_conditions
from py_engine.semantics.objects import JSON_OBJECT
from py_engine.workloadspread.admission.context import AdmissionContext

SubsetStatus = dict[str, Any]


def versioned_kinds(kinds: frozenset[str]) -> frozenset[str]:
    """Lower-cased kinds with versioned status; `deployment` implies `replicaset`
    (a Deployment's pods are owned by ReplicaSets)."""
    lowered = {k.lower() for k in kinds}
    if "deployment" in lowered:
        lowered.add("replicaset")
    return frozenset(lowered)


def version_of(pod: Mapping[str, Any], ctx: AdmissionContext) -> str:
    """The status bucket of `pod`: versioned only when its controller owner's kind is enabled."""
    owner = controller_owner(pod)
    kind = str(owner.get("kind") or "").lower() if owner is not None else ""
    kinds = ctx.versioned_kinds
    # `kind` is lower-case, so finding it as given settles it without lower-casing the whole set.
    return pod_version(pod, versioned=kind in kinds or kind in versioned_kinds(kinds))


def stored_statuses(spread: Mapping[str, Any], version: str) -> list[SubsetStatus]:
    """`status.versionedSubsetStatuses[version]` as stored (possibly empty); not copied."""
    status = spread.get("status")
    versioned = status.get("versionedSubsetStatuses") if isinstance(status, JSON_OBJECT) else None
    entries = versioned.get(version) if isinstance(versioned, JSON_OBJECT) else None
    if not isinstance(entries, list):
        return []
    # An entry without a string name cannot be matched to a subset: ignore it.
    return [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("name"), str)]


def initial_statuses(view: WorkloadSpread, replicas: int) -> list[SubsetStatus]:
    """Statuses of a version seen for the first time: caps from the spec, nothing counted."""
    statuses: list[SubsetStatus] = []
    for subset in view.subsets:
        cap = subset.cap(replicas)
        statuses.append({"name": subset.name, "replicas": 0, "missingReplicas": -1 if cap is None else cap})
    return statuses


def statuses_for(
    view: WorkloadSpread, version: str, replicas_of: Callable[[], int]
) -> tuple[list[SubsetStatus], bool]:
    """Copies of the statuses counted against, and whether they were initialised from
    the spec. `replicas_of()` is only called when initialisation is needed.

    Each entry is copied one level deep: callers replace an entry's fields
    (`missingReplicas`, a new `creatingPods` map) and never mutate the maps and
    lists inside it, so sharing those with the stored object is safe — and a deep
    copy would make every reservation cost O(pods recorded in the status).
    """
    stored = stored_statuses(view.raw, version)
    if stored:
        return [dict(entry) for entry in stored], False
    return initial_statuses(view, replicas_of()), True


def occupied_slots(entry: Mapping[str, Any]) -> int:
    """Slots a status entry holds: active pods the controller counted, plus pods admitted
    since (creatingPods), minus pods whose deletion was admitted (deletingPods).

    This is what `missingReplicas` is the complement of, whichever side (controller or
    webhook) last wrote the entry.
    """
    replicas = entry.get("replicas")
    counted = replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 0
    creating, deleting = entry.get("creatingPods"), entry.get("deletingPods")
    return (
        counted
        + (len(creating) if isinstance(creating, JSON_OBJECT) else 0)
        - (len(deleting) if isinstance(deleting, JSON_OBJECT) else 0)
    )


def follow_current_replicas(view: WorkloadSpread, statuses: list[SubsetStatus], replicas: int) -> None:
    """Re-resolve percentage caps against the workload's replica count *now* (in place).

    A Spreadgate refinement: the controller resolves `N%` against the replica count
    it saw at its last sync, so right after a scale-up every percentage subset still
    reads full and Kruise admits the first new pods without a subset (the scheduler
    then puts them anywhere). Recomputing `missingReplicas` from the current count
    and the slots the entry holds keeps the split exact through scaling. Entries
    reading -1 (unlimited until the controller rewrites them) are left alone.
    """
    by_name = {subset.name: subset for subset in view.subsets}
    for entry in statuses:
        subset = by_name.get(str(entry.get("name")))
        if subset is None or subset.max_replicas is None or not subset.max_replicas.percent:
            continue
        if missing_replicas(entry) < 0:
            continue
        entry["missingReplicas"] = max(0, subset.max_replicas.resolve(replicas) - occupied_slots(entry))


def spec_ahead_of_status(view: WorkloadSpread) -> bool:
    """True when the spec changed after the controller last wrote the status
    (`metadata.generation` > `status.observedGeneration`, a missing one reading 0).

    Until the controller syncs, the stored `missingReplicas` were computed against
    the *previous* caps: a lowered `maxReplicas` would not be enforced (and deletes
    would keep handing slots back) for as long as the controller is behind or down.
    """
    observed = view.stored_status.get("observedGeneration")
    if isinstance(observed, bool) or not isinstance(observed, int):
        observed = 0
    return view.generation > observed


def follow_spec_caps(view: WorkloadSpread, statuses: list[SubsetStatus], replicas: int | None) -> None:
    """Every entry's room from the spec's cap *now* and the slots the entry holds (in place).

    A Spreadgate refinement, used while `spec_ahead_of_status`: `missingReplicas =
    max(0, cap - (replicas + creatingPods - deletingPods))`, integer and percentage
    caps alike (percentages resolved against `replicas`; when the workload is not
    found, None, they keep the stored value); a subset whose spec no longer has a
    cap becomes unlimited (-1). Entries whose subset left the spec are left alone
    (they are never chosen).
    """
    by_name = {subset.name: subset for subset in view.subsets}
    for entry in statuses:
        subset = by_name.get(str(entry.get("name")))
        if subset is None:
            continue
        if subset.max_replicas is None:
            entry["missingReplicas"] = -1
        elif not subset.max_replicas.percent or replicas is not None:
            entry["missingReplicas"] = max(0, subset.max_replicas.resolve(replicas or 0) - occupied_slots(entry))


def follow_caps(view: WorkloadSpread, statuses: list[SubsetStatus], replicas: int | None, *, from_spec: bool) -> None:
    """`follow_spec_caps` when the spec is ahead of the status, else `follow_current_replicas`
    (percentage caps only; nothing when the workload is not found)."""
    if from_spec:
        follow_spec_caps(view, statuses, replicas)
    elif replicas is not None:
        follow_current_replicas(view, statuses, replicas)


def recorded_subset(statuses: Sequence[Mapping[str, Any]], key: str) -> str | None:
    """The subset whose `creatingPods` or `deletingPods` already holds `key`."""
    if not key:
        return None
    for entry in statuses:
        for field in ("creatingPods", "deletingPods"):
            pods = entry.get(field)
            if isinstance(pods, JSON_OBJECT) and key in pods:
                name = entry.get("name")
                return name if isinstance(name, str) else None
    return None


def schedulable(entry: Mapping[str, Any]) -> bool:
    """False when the entry carries a `Schedulable=False` condition (Adaptive mode)."""
    for condition in subset_conditions(entry):
        if condition.get("type") == SCHEDULABLE_CONDITION and condition.get("status") == "False":
            return False
    return True


def missing_replicas(entry: Mapping[str, Any]) -> int:
    value = entry.get("missingReplicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def with_version_statuses(spread: Mapping[str, Any], version: str, statuses: list[SubsetStatus]) -> dict[str, Any]:
    """A copy of `spread` whose `versionedSubsetStatuses[version]` is `statuses`.

    `metadata` and `status` are copied one level deep (a caller may set
    `resourceVersion` on the result); the maps and lists inside `metadata`
    (labels, annotations, managedFields) and `spec` are shared with the input
    and must not be mutated. A deep copy of `metadata` per reservation was pure
    cost: nothing writes inside it.
    """
    updated = dict(spread)
    metadata = spread.get("metadata")
    if isinstance(metadata, JSON_OBJECT):
        updated["metadata"] = dict(metadata)
    status = spread.get("status")
    # One level deep, like `statuses_for`: only the versioned map of this version is replaced.
    new_status: dict[str, Any] = dict(status) if isinstance(status, JSON_OBJECT) else {}
    versioned = new_status.get("versionedSubsetStatuses")
    new_versioned: dict[str, Any] = dict(versioned) if isinstance(versioned, JSON_OBJECT) else {}
    new_versioned[version] = statuses
    new_status["versionedSubsetStatuses"] = new_versioned
    updated["status"] = new_status
    return updated
