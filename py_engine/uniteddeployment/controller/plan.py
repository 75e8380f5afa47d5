"""`plan(state, now)`: the UnitedDeployment controller's decision over a snapshot.

One sync, in Kruise's order: find the subset workloads, resolve the revision,
judge adaptive subsets, allocate replicas, compute partitions, build the
workloads to create and update, list what to delete, and compute the status.
Nothing is written: the controller runtime applies the plan, and `spreadgate
united plan` prints it. When the allocator refuses the spec no workload is
created or updated and the stored status stays; what Kruise does before
allocating still happens (duplicate workloads deleted, workloads the selector no
longer matches released, reserved pods relabelled). docs/uniteddeployment.md,
"The plan".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from py_engine.model.ud_constants import CREATED_BY_ANNOTATION, RESERVED_POD_LABEL
from py_engine.model.ud_conversion import status_to_v1alpha1
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics import objects
from py_engine.uniteddeployment.controller.allocation import AllocationError
from py_engine.uniteddeployment.controller.allocator import allocate
from py_engine.uniteddeployment.controller.conditions import find, make, set_condition
from py_engine.uniteddeployment.controller.construct import (
    ConstructionError,
    SubsetTarget,
    build_workload,
    workload_metadata,
)
from py_engine.uniteddeployment.controller.discovery import Discovery, SubsetWorkload, discover
from py_engine.uniteddeployment.controller.gojson import EncodingError
from py_engine.uniteddeployment.controller.jsonview import as_map
from py_engine.uniteddeployment.controller.observed import SubsetObservation
from py_engine.uniteddeployment.controller.ownership import reference
from py_engine.uniteddeployment.controller.partitions import next_partitions
from py_engine.uniteddeployment.controller.podfacts import is_active, is_ready, revision_of, timestamp
from py_engine.uniteddeployment.controller.revisions import RevisionPlan, plan_revisions
from py_engine.uniteddeployment.controller.schedulable import (
    SCHEDULABLE,
    SubsetVerdict,
    after_allocation,
    default_verdict,
    is_marked,
    reserving_verdict,
)
from py_engine.uniteddeployment.controller.state import UnitedState
from py_engine.uniteddeployment.controller.status import (
    FAILURE,
    UPDATED,
    SubsetOutcome,
    compute_status,
    placement_condition,
    updated_condition,
)

JSON = dict[str, Any]
Obj = Mapping[str, Any]
_ORDINAL = re.compile(r"-([0-9]+)$")


@dataclass(frozen=True)
class SubsetPlan:
    replicas: int
    partition: int


@dataclass(frozen=True)
class Plan:
    """What one sync decides. `refused`: the allocator refused the spec (see `errors`)."""

    subsets: Mapping[str, SubsetPlan]
    create: tuple[JSON, ...]
    update: tuple[JSON, ...]
    delete: tuple[JSON, ...]
    status: JSON
    errors: tuple[str, ...]
    refused: bool = False
    refusal: str = ""
    """Why: `allocation` (the allocator refused), `revision` (the template cannot be versioned) or
    `patch` (a subset patch is off the allowlist)."""
    release: tuple[JSON, ...] = ()
    """Owned workloads the selector no longer matches, without the owner reference (written as they are)."""
    requeue_after: float | None = None
    unplaced: int = 0
    """Replicas node fit left without a subset (`no_node_fit` had no node); `placement_changed`: the
    `ReplicasAllocated` condition changed this sync."""
    no_node_fit: tuple[str, ...] = ()
    placement_changed: bool = False
    status_changed: bool = field(default=False)
    served_version: str = "v1beta1"

    def served_status(self) -> JSON:
        """`status` in the version the UnitedDeployment was read in: a v1alpha1 object gets
        `subsetReplicas` and `updateStatus` (docs/uniteddeployment.md, "API versions")."""
        return status_to_v1alpha1(self.status) if self.served_version == "v1alpha1" else self.status

    def to_json(self) -> JSON:
        return {
            "subsets": {
                n: {"replicas": s.replicas, "partition": s.partition} for n, s in self.subsets.items()
            },
            "create": list(self.create),
            "update": list(self.update),
            "delete": list(self.delete),
            "release": list(self.release),
            "status": self.served_status(),
            "errors": list(self.errors),
        }


def _refusal(
    ud: UnitedDeployment,
    reason: str,
    refusal: str,
    *,
    discovery: Discovery | None = None,
    relabel: tuple[JSON, ...] = (),
) -> Plan:
    """Nothing is created or updated and the status stays; what Kruise does before allocating
    still happens: duplicates deleted, released workloads, reserved pods relabelled."""
    return Plan(
        subsets={},
        create=(),
        update=relabel,
        delete=discovery.duplicates if discovery else (),
        status=dict(ud.status),
        errors=(reason,),
        refused=True,
        served_version=ud.served_version,
        release=discovery.release if discovery else (),
        refusal=refusal,
    )


def _forbidden_patch(ud: UnitedDeployment, forbidden: tuple[str, ...], now: datetime) -> Plan:
    """A subset patch off the allowlist: no workload is written from this UnitedDeployment;
    the status says why (`SubsetFailure`, reason `ForbiddenPatch`)."""
    message = "subset patch off the allowlist, no workload is written: " + "; ".join(forbidden)
    raw = ud.status.get("conditions")
    stored = [dict(c) for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []
    status = {
        **ud.status,
        "conditions": set_condition(stored, make(FAILURE, True, "ForbiddenPatch", message, now)),
    }
    return Plan(
        subsets={},
        create=(),
        update=(),
        delete=(),
        status=status,
        errors=(message,),
        refused=True,
        refusal="patch",
        status_changed=status != ud.status,
        served_version=ud.served_version,
    )


def _stored_subset_conditions(ud: UnitedDeployment, now: datetime) -> dict[str, JSON | None]:
    """Each spec subset's stored Schedulable condition; in reservation mode a subset added
    to a UD that already has subset statuses starts marked (`created`), as in Kruise."""
    raw = ud.status.get("subsetStatuses")
    entries = {str(e.get("name")): e for e in raw if isinstance(e, Mapping)} if isinstance(raw, list) else {}
    out: dict[str, JSON | None] = {}
    for subset in ud.subsets:
        entry = entries.get(subset.name)
        conditions = entry.get("conditions") if entry is not None else None
        found = (
            find([c for c in conditions if isinstance(c, Mapping)], SCHEDULABLE)
            if isinstance(conditions, list)
            else None
        )
        out[subset.name] = dict(found) if found is not None else None
        if entry is None and entries and ud.schedule.reserves:
            out[subset.name] = make(SCHEDULABLE, False, "created", "", now)
    return out


def _verdicts(
    ud: UnitedDeployment,
    discovery: Discovery,
    stored: Mapping[str, JSON | None],
    updated_revision: str,
    conditions: list[JSON],
    now: datetime,
) -> dict[str, SubsetVerdict]:
    if not ud.schedule.is_adaptive:
        return {}
    # Old-revision pods time out from the condition's transition, whatever its status (Kruise).
    updated = find(conditions, UPDATED)
    since = timestamp(updated.get("lastTransitionTime")) if updated else None
    verdicts: dict[str, SubsetVerdict] = {}
    for subset in ud.subsets:
        workload = discovery.subsets.get(subset.name)
        if workload is None:
            continue
        if ud.schedule.reserves:
            verdicts[subset.name] = reserving_verdict(
                pods=workload.pods,
                stored=stored[subset.name],
                updated_revision=updated_revision,
                updated_since=since,
                options=ud.schedule.adaptive,
                now=now,
            )
        else:
            verdicts[subset.name] = default_verdict(
                status_replicas=workload.status_replicas,
                ready_replicas=workload.ready_replicas,
                pods=workload.pods,
                stored=stored[subset.name],
                options=ud.schedule.adaptive,
                now=now,
            )
    return verdicts


def _observations(
    discovery: Discovery, verdicts: Mapping[str, SubsetVerdict], stored: Mapping[str, JSON | None]
) -> dict[str, SubsetObservation]:
    out = {}
    for name, workload in discovery.subsets.items():
        verdict = verdicts.get(name)
        out[name] = SubsetObservation(
            spec_replicas=workload.spec_replicas,
            ready_replicas=workload.ready_replicas,
            reserved_pods=verdict.reserved_pods if verdict else 0,
            unschedulable=verdict.unschedulable if verdict else False,
            marked_unschedulable=is_marked(stored.get(name)),
            placed_replicas=sum(1 for p in workload.pods if is_active(p) and _node_of(p)),
        )
    return out


def _node_of(pod: Obj) -> str:
    node = as_map(pod.get("spec")).get("nodeName")
    return node if isinstance(node, str) else ""


def _needs_update(workload: SubsetWorkload, desired_meta: Obj, target: SubsetTarget) -> bool:
    """Kruise's triggers (revision label, replicas, partition, patch annotation) read off the
    built object's metadata, plus adoption and template metadata changes; no idempotent rewrites."""
    if workload.adopt or workload.spec_replicas != target.replicas:
        return True
    current_meta = as_map(workload.obj.get("metadata"))
    if any(
        _compared(current_meta, key) != _compared(desired_meta, key)
        for key in ("labels", "annotations", "ownerReferences")
    ):
        return True
    observed = workload.partition()
    # maxUnavailable (reservation mode) is not a trigger: it rides along an update made anyway (Kruise).
    return observed is not None and observed != target.partition


def _compared(metadata: Mapping[str, Any], key: str) -> Any:
    """A metadata field as the update triggers compare it: the creation annotation is written
    along with an update, never the reason for one (workloads created before it existed name
    their UnitedDeployment by their revision label)."""
    value = metadata.get(key) or None
    if key == "annotations" and isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k != CREATED_BY_ANNOTATION} or None
    return value


def _stuck_pods(workload: SubsetWorkload, revision: str, partition: int) -> list[JSON]:
    """Kruise's StatefulSet rollout workaround (docs/uniteddeployment.md, "Subset workloads"):
    pods at or above the partition, on an old revision and not Ready are deleted so the
    rollout is not blocked."""
    if workload.obj.get("apiVersion") != "apps/v1" or workload.obj.get("kind") != "StatefulSet":
        return []
    if workload.partition() is None:
        return []
    stuck = []
    for pod in workload.pods:
        match = _ORDINAL.search(objects.name(pod))
        if match and int(match.group(1)) >= partition and revision_of(pod) != revision and not is_ready(pod):
            stuck.append(reference(pod))
    return stuck


def _labelled(pod: Obj, value: str) -> JSON:
    """The pod with Spreadgate's reserved label set (the runtime patches only that label)."""
    metadata = dict(as_map(pod.get("metadata")))
    metadata["labels"] = {**as_map(metadata.get("labels")), RESERVED_POD_LABEL: value}
    return {**pod, "metadata": metadata}


@dataclass
class _SubsetWrites:
    create: list[JSON] = field(default_factory=list)
    update: list[JSON] = field(default_factory=list)
    delete: list[JSON] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    outcomes: dict[str, SubsetOutcome] = field(default_factory=dict)
    scaled_up: bool = False


def _subset_writes(
    ud: UnitedDeployment,
    discovery: Discovery,
    verdicts: Mapping[str, SubsetVerdict],
    stored: Mapping[str, JSON | None],
    replicas: Mapping[str, int],
    partitions: Mapping[str, int],
    revision: str,
    now: datetime,
) -> _SubsetWrites:
    """Per spec subset in name order (Kruise's): its outcome, and the workload to create or
    update, stuck pods to delete, and pods to relabel (reservation mode)."""
    writes = _SubsetWrites()
    for subset in sorted(ud.subsets, key=lambda s: s.name):
        name = subset.name
        workload = discovery.subsets.get(name)
        verdict = verdicts.get(name)
        condition = verdict.condition if verdict else stored[name]
        max_unavailable = None
        if workload is not None and ud.schedule.reserves and verdict is not None:
            condition = after_allocation(
                condition,
                unschedulable=verdict.unschedulable,
                marked=is_marked(stored[name]),
                current_replicas=workload.spec_replicas,
                next_replicas=replicas[name],
                now=now,
            )
            if verdict.unschedulable:
                max_unavailable = max(
                    0, workload.spec_replicas - workload.ready_replicas + verdict.update_timeout_pods
                )
        target = SubsetTarget(replicas[name], partitions[name], max_unavailable)
        writes.outcomes[name] = SubsetOutcome(
            target.replicas, target.partition, verdict.reserved_pods if verdict else 0, condition
        )
        writes.scaled_up |= workload is None or target.replicas > workload.spec_replicas
        if (
            workload is not None
            and subset.patch is None  # then building cannot fail: no error goes unreported
            and not _needs_update(workload, workload_metadata(ud, subset, revision, workload.obj), target)
        ):
            writes.delete.extend(_stuck_pods(workload, revision, target.partition))
            continue
        try:
            desired = build_workload(ud, subset, revision, target, workload.obj if workload else None)
        except ConstructionError as exc:
            writes.errors.append(str(exc))
            continue
        except RecursionError:
            writes.errors.append(f"subset {name}: patch nested too deeply")
            continue
        if workload is None:
            writes.create.append(desired)
            continue
        if _needs_update(workload, as_map(desired.get("metadata")), target):
            writes.update.append(desired)
        writes.delete.extend(_stuck_pods(workload, revision, target.partition))
    writes.update.extend(_relabels(discovery, verdicts))
    return writes


def _relabels(discovery: Discovery, verdicts: Mapping[str, SubsetVerdict]) -> list[JSON]:
    """Pods whose reserved label changes, with the new label."""
    out: list[JSON] = []
    for name, verdict in verdicts.items():
        pods = {objects.name(p): p for p in discovery.subsets[name].pods}
        out.extend(_labelled(pods[pod], value) for pod, value in sorted(verdict.pod_labels.items()))
    return out


def plan(state: UnitedState, now: datetime) -> Plan:
    """The controller's decision for `state` at `now` (see the module docstring)."""
    ud = state.ud
    if as_map(ud.raw.get("metadata")).get("deletionTimestamp"):
        # Being deleted: garbage collection removes the workloads through their owner references.
        return Plan(
            subsets={},
            create=(),
            update=(),
            delete=(),
            status=dict(ud.status),
            errors=(),
            served_version=ud.served_version,
        )
    if state.forbidden_patches:
        return _forbidden_patch(ud, state.forbidden_patches, now)
    discovery = discover(ud, state.workloads, state.pods)
    try:
        revisions: RevisionPlan = plan_revisions(ud, state.revisions)
    except (EncodingError, RecursionError) as exc:
        return _refusal(ud, f"spec.template cannot be versioned: {exc}", "revision")
    raw_conditions = ud.status.get("conditions")
    stored_conditions = (
        [dict(c) for c in raw_conditions if isinstance(c, Mapping)]
        if isinstance(raw_conditions, list)
        else []
    )
    # Judged from the stored current revision, as Kruise; a new UD (none stored) is not updating.
    stored_current = ud.status.get("currentRevision")
    previous = stored_current if isinstance(stored_current, str) and stored_current else revisions.current
    conditions = set_condition(stored_conditions, updated_condition(previous, revisions.updated, now))
    stored = _stored_subset_conditions(ud, now)
    verdicts = _verdicts(ud, discovery, stored, revisions.updated, conditions, now)
    try:
        no_fit = state.no_node_fit if ud.schedule.is_adaptive and not ud.schedule.reserves else frozenset()
        allocation = allocate(ud, _observations(discovery, verdicts, stored), no_fit)
    except AllocationError as exc:
        return _refusal(
            ud,
            f"Specified subset replicas is ineffective: {exc}",
            "allocation",
            discovery=discovery,
            relabel=tuple(_relabels(discovery, verdicts)),
        )
    unplaced = max(0, (ud.replicas or 0) - allocation.total) if no_fit else 0
    conditions, placement_changed = placement_condition(
        conditions, unplaced=unplaced, desired=ud.replicas or 0, no_fit=sorted(no_fit), now=now
    )
    partitions = next_partitions(ud, allocation.replicas)
    writes = _subset_writes(
        ud, discovery, verdicts, stored, allocation.replicas, partitions, revisions.updated, now
    )
    requeue = [d for v in verdicts.values() for d in v.requeue]
    if ud.schedule.is_adaptive and writes.scaled_up:
        requeue.append(float(ud.schedule.adaptive.reschedule_critical_seconds))
    status = compute_status(
        ud,
        workloads=discovery.subsets,
        outcomes={s.name: writes.outcomes[s.name] for s in ud.subsets},
        conditions=conditions,
        current_revision=revisions.current,
        updated_revision=revisions.updated,
        collision_count=revisions.collision_count,
        provisioned=bool(writes.create or discovery.delete),
        update_errors=writes.errors,
        now=now,
    )
    positive = [d for d in requeue if d > 0]
    return Plan(
        subsets={s.name: SubsetPlan(allocation.replicas[s.name], partitions[s.name]) for s in ud.subsets},
        create=(*revisions.create, *writes.create),
        update=(*revisions.update, *writes.update),
        delete=(*discovery.delete, *revisions.delete, *writes.delete),
        status=status,
        errors=(*discovery.errors, *writes.errors),
        requeue_after=min(positive) if positive else None,
        release=discovery.release,
        unplaced=unplaced,
        no_node_fit=tuple(sorted(no_fit)),
        placement_changed=placement_changed,
        status_changed=status != ud.status,
        served_version=ud.served_version,
    )
