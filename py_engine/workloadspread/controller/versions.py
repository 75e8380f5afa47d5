"""Pod versions and the workload's latest version (docs/design-workloadspread.md §2.3).

Deletion costs are reversed for pods that are not of the latest version, so a
rolling update empties the *first* subsets of old pods while new ones fill them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model.constants import VERSION_IGNORED
from py_engine.model.pods import POD_TEMPLATE_HASH_LABEL
from py_engine.model.workloads import CLONESET, DEPLOYMENT, REPLICASET, target_kind
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.labels import labels_of
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.options import ReconcileOptions
from py_engine.workloadspread.controller.podlisting import deployment_replicasets

Obj = Mapping[str, Any]


def is_versioned(spread: WorkloadSpread, options: ReconcileOptions) -> bool:
    """Per-version status for this target (default: Deployment and ReplicaSet)."""
    kind = target_kind(spread)
    if kind in (DEPLOYMENT, REPLICASET, CLONESET):
        return options.versioned(spread.target_ref.kind)
    return False


def _template_without_hash(obj: Obj) -> Any:
    template = copy.deepcopy((obj.get("spec") or {}).get("template") or {})
    labels = (template.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
        if not labels:
            template["metadata"].pop("labels")
    return template


def latest_version(
    spread: WorkloadSpread, workload: Obj | None, replica_sets: Sequence[Obj], options: ReconcileOptions
) -> str:
    """The version whose pods keep the spec order of costs; raises when not known yet."""
    if workload is None or not is_versioned(spread, options):
        return VERSION_IGNORED
    kind = target_kind(spread)
    if kind is REPLICASET:
        value = labels_of(workload).get(POD_TEMPLATE_HASH_LABEL)
        return value if isinstance(value, str) and value else VERSION_IGNORED
    if kind is DEPLOYMENT:
        wanted = _template_without_hash(workload)
        for rs in deployment_replicasets(workload, replica_sets):
            if _template_without_hash(rs) == wanted:
                value = labels_of(rs).get(POD_TEMPLATE_HASH_LABEL)
                if isinstance(value, str) and value:
                    return value
        raise ReconcileError(
            f"the latest ReplicaSet of Deployment {spread.target_ref.name!r} is not found (not created yet?)"
        )
    # CloneSet, when versioned status is enabled for it.
    meta = workload.get("metadata") or {}
    status = workload.get("status") or {}
    if int(meta.get("generation") or 0) > int(status.get("observedGeneration") or 0):
        raise ReconcileError(
            f"CloneSet {spread.target_ref.name!r} has not observed its latest generation yet"
        )
    revision = status.get("updateRevision")
    return revision.rsplit("-", 1)[-1] if isinstance(revision, str) and revision else VERSION_IGNORED
