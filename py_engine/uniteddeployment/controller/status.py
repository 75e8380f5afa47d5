"""The UnitedDeployment status a sync writes (v1beta1 shape).

Totals sum over the existing subset workloads (`replicas` excludes reserved
pods); updated counts come from the pods' revision labels. `currentRevision`
advances to the updated revision once the updated ready pods cover the replicas.
Subset statuses hold the allocator's targets, one entry per spec subset (Kruise
never prunes entries of removed subsets). docs/uniteddeployment.md, "Status".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from py_engine.model.ud_constants import RESERVED_POD_LABEL
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics.labels import format_label_selector
from py_engine.uniteddeployment.controller.conditions import make, remove, set_condition
from py_engine.uniteddeployment.controller.discovery import SubsetWorkload
from py_engine.uniteddeployment.controller.podfacts import is_active, is_ready, revision_of

JSON = dict[str, Any]

UPDATED = "UnitedDeploymentUpdated"
PROVISIONED = "SubsetProvisioned"
SUBSET_UPDATED = "SubsetUpdated"
FAILURE = "SubsetFailure"
ALLOCATED = "ReplicasAllocated"
NO_FITTING_NODE = "NoFittingNode"


def updated_condition(current: str, expected: str, now: datetime) -> JSON:
    """UnitedDeploymentUpdated from the stored current revision (one sync behind, as Kruise)."""
    if current != expected:
        return make(
            UPDATED, False, "UnitedDeploymentRevisionUpdating", f"updating to revision {expected}", now
        )
    return make(UPDATED, True, "UnitedDeploymentRevisionUpdated", f"updated to revision {expected}", now)


def label_selector(ud: UnitedDeployment) -> str:
    text = format_label_selector(ud.selector)
    return f"{text},{RESERVED_POD_LABEL}=false" if ud.schedule.reserves else text


@dataclass(frozen=True)
class SubsetOutcome:
    """What the sync decided for one spec subset."""

    replicas: int
    partition: int
    reserved_pods: int
    condition: JSON | None


def _counts(workloads: Mapping[str, SubsetWorkload], revision: str) -> tuple[int, int]:
    updated = ready = 0
    for workload in workloads.values():
        for pod in workload.pods:
            if is_active(pod) and revision_of(pod) == revision:
                updated += 1
                ready += is_ready(pod)
    return updated, ready


def compute_status(
    ud: UnitedDeployment,
    *,
    workloads: Mapping[str, SubsetWorkload],
    outcomes: Mapping[str, SubsetOutcome],
    conditions: Sequence[Mapping[str, Any]],
    current_revision: str,
    updated_revision: str,
    collision_count: int,
    provisioned: bool,
    update_errors: Sequence[str],
    now: datetime,
) -> JSON:
    reserved = sum(o.reserved_pods for o in outcomes.values())
    replicas = sum(w.status_replicas for w in workloads.values()) - reserved
    updated, updated_ready = _counts(workloads, updated_revision)
    if updated_revision != current_revision and updated_ready >= replicas:
        current_revision = updated_revision
    placed = [dict(c) for c in conditions]
    if provisioned:
        placed = set_condition(placed, make(PROVISIONED, True, "", "", now))
    if update_errors:
        placed = set_condition(placed, make(SUBSET_UPDATED, False, "Error", "; ".join(update_errors), now))
    else:
        placed = set_condition(placed, make(SUBSET_UPDATED, True, "", "", now))
    status: JSON = {
        "observedGeneration": ud.generation,
        "replicas": replicas,
        "readyReplicas": sum(w.ready_replicas for w in workloads.values()),
        "updatedReplicas": updated,
        "updatedReadyReplicas": updated_ready,
        "collisionCount": collision_count,
        "currentRevision": current_revision,
        "updatedRevision": updated_revision,
        "subsetStatuses": [
            _subset_status(ud, name, outcome, workloads.get(name)) for name, outcome in outcomes.items()
        ],
        "conditions": remove(placed, FAILURE),
        "labelSelector": label_selector(ud),
    }
    if ud.schedule.reserves:
        status["reservedPods"] = reserved
    return status


def _subset_status(
    ud: UnitedDeployment, name: str, outcome: SubsetOutcome, workload: SubsetWorkload | None
) -> JSON:
    entry: JSON = {
        "name": name,
        "replicas": outcome.replicas,
        "readyReplicas": workload.ready_replicas if workload else 0,
        "partition": outcome.partition,
    }
    if ud.schedule.reserves:
        entry["reservedPods"] = outcome.reserved_pods
    if outcome.condition is not None:
        entry["conditions"] = [outcome.condition]
    return entry


def placement_condition(
    conditions: Sequence[Mapping[str, Any]],
    *,
    unplaced: int,
    desired: int,
    no_fit: Sequence[str],
    now: datetime,
) -> tuple[list[JSON], bool]:
    """`ReplicasAllocated`: False (reason `NoFittingNode`) while node fit leaves replicas without
    a subset, with the count and the subsets no node fits; True again once all are allocated
    (added only after it was False once). Also whether it changed (the loop then records a
    Warning Event and a log line). docs/uniteddeployment.md, "Node fit before allocating"."""
    current = next((c for c in conditions if c.get("type") == ALLOCATED), None)
    if unplaced > 0:
        message = (
            f"{unplaced} of {desired} replicas cannot be placed: no node fits a pod of subset"
            f"{'s' if len(no_fit) > 1 else ''} {', '.join(no_fit)}"
        )
        new = make(ALLOCATED, False, NO_FITTING_NODE, message, now)
    elif current is not None:
        new = make(ALLOCATED, True, "Allocated", f"all {desired} replicas are allocated", now)
    else:
        return [dict(c) for c in conditions], False
    changed = current is None or any(current.get(k) != new[k] for k in ("status", "reason", "message"))
    if not changed:
        return [dict(c) for c in conditions], False
    kept = [dict(c) for c in conditions if c.get("type") != ALLOCATED]
    if current is not None and current.get("status") == new["status"]:
        new["lastTransitionTime"] = current.get("lastTransitionTime", new["lastTransitionTime"])
    return [*kept, new], True
