"""The per-version ledger the webhook counts slots in (docs/design-workloadspread.md §2.3, §2.1.1).

The webhook never counts against the aggregate `status.subsetStatuses`: it reads and
writes `status.versionedSubsetStatuses[version]`, where version is the pod's
`pod-template-hash` for Deployment/ReplicaSet pods (so a rolling update counts new pods
against the full caps) and `versionIgnored` otherwise (`version_of`). `SubsetLedger` is
that list of entries for one version of one stored spread, opened once per reservation
from the parsed view, with every operation a reservation or a release performs on it:
who already holds a slot (`recorded`), the first eligible subset with room
(`first_with_room`), caps the controller has not resolved yet (`follow_caps`), taking and
giving back a slot (`reserve`, `release`) and the spread to write (`written`).

An entry reads `replicas` (active pods the controller counted at its last sync),
`creatingPods` (pods admitted since), `deletingPods` (deletions admitted since) and
`missingReplicas` (room left: the cap minus the slots held; -1 = unlimited). A version
seen for the first time is opened from the spec alone: existing pods are not counted (the
controller corrects the count on its next sync). Malformed fields read as empty
(`py_engine.model.subset_status`): the status is Spreadgate's to rewrite.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import datetime
from typing import Any

from py_engine.model import WorkloadSpread
from py_engine.model.maxreplicas import MaxReplicas
from py_engine.model.pods import controller_owner, pod_version
from py_engine.model.subset_status import pod_records
from py_engine.semantics.objects import JSON_OBJECT
from py_engine.semantics.timeutil import format_time
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
    """The ledger `pod` counts in: versioned only when its controller owner's kind is enabled."""
    owner = controller_owner(pod)
    kind = str(owner.get("kind") or "").lower() if owner is not None else ""
    kinds = ctx.versioned_kinds
    # `kind` is lower-case, so finding it as given settles it without lower-casing the whole set.
    return pod_version(pod, versioned=kind in kinds or kind in versioned_kinds(kinds))


def _count(value: Any) -> int:
    """An entry's integer field; anything but a whole number (a bool included) reads 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def missing_replicas(entry: Mapping[str, Any]) -> int:
    """Room left in an entry (-1: unlimited)."""
    return _count(entry.get("missingReplicas"))


def occupied_slots(entry: Mapping[str, Any]) -> int:
    """Slots an entry holds: active pods the controller counted, plus pods admitted since
    (creatingPods), minus pods whose deletion was admitted (deletingPods).

    This is what `missingReplicas` is the complement of, whichever side (controller or
    webhook) last wrote the entry.
    """
    creating, deleting = entry.get("creatingPods"), entry.get("deletingPods")
    return (
        _count(entry.get("replicas"))
        + (len(creating) if isinstance(creating, JSON_OBJECT) else 0)
        - (len(deleting) if isinstance(deleting, JSON_OBJECT) else 0)
    )


def _stored_entries(status: Mapping[str, Any], version: str) -> list[SubsetStatus]:
    """`versionedSubsetStatuses[version]` as stored, each entry copied one level deep.

    An entry without a string name cannot be matched to a subset: left out. The copies let the
    ledger replace an entry's fields (`missingReplicas`, a new `creatingPods` map) while the
    maps and lists inside stay shared with the stored object, which nothing here mutates
    unless the caller owns them (`in_place`): a deep copy would make every reservation cost
    O(pods recorded in the status).
    """
    versioned = status.get("versionedSubsetStatuses")
    entries = versioned.get(version) if isinstance(versioned, JSON_OBJECT) else None
    if not isinstance(entries, list):
        return []
    return [
        dict(entry) for entry in entries if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    ]


class SubsetLedger:
    """The entries of one status version of one spread, and what a pod admission does to them.

    `entries` are the ledger's rows in status order (spec
    order once the controller has synced); `initialised` says they were made from the spec
    because the version had none; `from_spec` says the spec is ahead of the status
    (`metadata.generation > status.observedGeneration`, a missing one reading 0), so the
    stored `missingReplicas` were computed against the *previous* caps: a lowered
    `maxReplicas` would not be enforced (and deletes would keep handing slots back) for as
    long as the controller is behind or down. Nothing is written to the view; `written`
    returns a new object.
    """

    __slots__ = ("entries", "from_spec", "initialised", "subsets", "version", "view")

    def __init__(self, view: WorkloadSpread, version: str, replicas_of: Callable[[], int | None]) -> None:
        """The ledger of `version` in `view`'s stored status, or, when the version has no entry
        yet, one made from the spec: caps resolved against `replicas_of()` (None, the workload
        not found, counts 0, as in the reference), nothing counted. `replicas_of` is only
        called then."""
        self.view = view
        self.version = version
        self.subsets = {subset.name: subset for subset in view.subsets}
        """The spec's subsets by name (names are unique, `WorkloadSpread.from_object`)."""
        status = view.stored_status
        self.entries = _stored_entries(status, version)
        self.initialised = not self.entries
        if self.initialised:
            replicas = replicas_of() or 0
            for subset in view.subsets:
                cap = subset.cap(replicas)
                self.entries.append(
                    {"name": subset.name, "replicas": 0, "missingReplicas": -1 if cap is None else cap}
                )
            self.from_spec = False
        else:
            observed = status.get("observedGeneration")
            observed = observed if isinstance(observed, int) and not isinstance(observed, bool) else 0
            self.from_spec = view.generation > observed

    # ------------------------------------------------------------------ reading

    def recorded(self, key: str) -> str | None:
        """The subset whose `creatingPods` or `deletingPods` already holds `key` (a pod admitted
        or deleted since the controller's last sync keeps that subset, and writes nothing)."""
        if not key:
            return None
        for entry in self.entries:
            for field in ("creatingPods", "deletingPods"):
                pods = entry.get(field)
                if isinstance(pods, JSON_OBJECT) and key in pods:
                    name = entry.get("name")
                    return name if isinstance(name, str) else None
        return None

    def entry(self, subset: str) -> SubsetStatus | None:
        """The (first) entry of `subset`, None when the status has none."""
        return next((entry for entry in self.entries if entry.get("name") == subset), None)

    def first_with_room(self, eligible: Collection[str]) -> SubsetStatus | None:
        """The first entry, in status order, of an `eligible` subset with room: missingReplicas
        > 0 or -1 (unlimited) (docs/design-workloadspread.md §2.1.1 step 4)."""
        for entry in self.entries:
            if entry.get("name") not in eligible:
                continue
            missing = missing_replicas(entry)
            if missing > 0 or missing == -1:
                return entry
        return None

    def spec_cap(self, subset: str) -> MaxReplicas | None:
        """The spec's cap of `subset`; None when unlimited or no longer in the spec."""
        spec = self.subsets.get(subset)
        return spec.max_replicas if spec is not None else None

    # ----------------------------------------------------------------- following

    def follow_caps(self, replicas: int | None) -> None:
        """Recompute `missingReplicas` from the caps *now* and the slots each entry holds,
        for caps the controller has not resolved yet (Spreadgate refinements).

        While the spec is ahead of the status (`from_spec`), every entry's room is counted
        from the spec's cap, integer and percentage caps alike (percentages resolved against
        `replicas`; when the workload is not found, None, they keep the stored value); a subset
        whose spec no longer has a cap becomes unlimited (-1). Otherwise only percentage caps
        follow `replicas` (nothing when None): the controller resolves `N%` against the count
        it saw at its last sync, so right after a scale-up every percentage subset still reads
        full and Kruise admits the first new pods without a subset. Entries reading -1
        (unlimited until the controller rewrites them) are left alone, and so are entries whose
        subset left the spec (they are never chosen).
        """
        if not self.from_spec and (replicas is None or not self.view.uses_percentages):
            return
        for entry in self.entries:
            subset = self.subsets.get(str(entry.get("name")))
            if subset is None:
                continue
            cap = subset.max_replicas
            if self.from_spec:
                if cap is None:
                    entry["missingReplicas"] = -1
                elif not cap.percent or replicas is not None:
                    entry["missingReplicas"] = max(0, cap.resolve(replicas or 0) - occupied_slots(entry))
            elif cap is not None and cap.percent and missing_replicas(entry) >= 0:
                entry["missingReplicas"] = max(0, cap.resolve(replicas or 0) - occupied_slots(entry))

    # ------------------------------------------------------------------ writing

    def reserve(self, entry: SubsetStatus, key: str, now: datetime, *, in_place: bool = False) -> bool:
        """Take a slot of `entry` for the pod keyed `key`: `creatingPods[key] = now` and
        `missingReplicas` one lower. False (nothing recorded, nothing to write) when the
        subset is unlimited. `in_place`: the caller owns the status's maps (the committer's
        private copy), so `creatingPods` is extended instead of copied."""
        missing = missing_replicas(entry)
        if missing == -1:
            return False
        if not key:
            # Only `reserve_create` takes slots; its caller forgot the uid of a nameless pod.
            raise ValueError("reserve_create: generated_uid is required for a pod without a name")
        creating = pod_records(entry, "creatingPods", in_place=in_place)
        creating[key] = format_time(now)
        entry["creatingPods"] = creating
        if missing > 0:
            entry["missingReplicas"] = missing - 1
        return True

    def release(
        self, entry: SubsetStatus, key: str, now: datetime, cap: int | None, *, in_place: bool = False
    ) -> bool | None:
        """Record the deletion of the pod keyed `key` in `entry` (`deletingPods[key] = now`) and
        give its slot back when it held one; returns whether it did (`freed`), None when
        nothing is recorded (the subset is unlimited).

        `cap` is the subset's cap now (None: unknown or unlimited). The pod gave a slot back
        when the subset, this deletion recorded, holds fewer than `cap`: `missingReplicas` + 1
        (no upper clamp, as in Kruise). Otherwise the pod was beyond the cap: the deletion is
        still recorded, so the subset's count goes down, and `missingReplicas` stays. While
        the spec is ahead of the status the room is counted from `cap` instead:
        `max(0, cap - slots held)`.
        """
        missing = missing_replicas(entry)
        if missing < 0 and not (self.from_spec and cap is not None):
            return None
        deleting = pod_records(entry, "deletingPods", in_place=in_place)
        deleting[key] = format_time(now)
        entry["deletingPods"] = deleting
        held = occupied_slots(entry)
        freed = cap is None or held < cap
        if self.from_spec and cap is not None:
            entry["missingReplicas"] = max(0, cap - held)
        elif freed:
            entry["missingReplicas"] = missing + 1
        return freed

    def written(self) -> dict[str, Any]:
        """A copy of the spread whose `versionedSubsetStatuses[version]` is this ledger's entries.

        `metadata`, `status` and the versioned map are copied one level deep (the committer sets
        `resourceVersion` on the result); `spec` and the maps inside `metadata` (labels,
        annotations, managedFields) are shared with the stored object and must not be
        mutated. Sharing the spec keeps it the very object the parsed-view cache saw
        (py_engine/workloadspread/admission/caches.py).
        """
        raw = self.view.raw
        updated = dict(raw)
        metadata = raw.get("metadata")
        if isinstance(metadata, JSON_OBJECT):
            updated["metadata"] = dict(metadata)
        status = raw.get("status")
        new_status: dict[str, Any] = dict(status) if isinstance(status, JSON_OBJECT) else {}
        versioned = new_status.get("versionedSubsetStatuses")
        new_versioned: dict[str, Any] = dict(versioned) if isinstance(versioned, JSON_OBJECT) else {}
        new_versioned[self.version] = self.entries
        new_status["versionedSubsetStatuses"] = new_versioned
        updated["status"] = new_status
        return updated
