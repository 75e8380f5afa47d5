"""The target workload as the controller reads it: its replica counts and where it is in a snapshot.

The kinds, the custom-workload whitelist and the replica readers are the workload
registry's (`py_engine/model/workloads.py`, docs/design-workloadspread.md §1.4); this
module turns the registry's path errors into the sync's `ReconcileError` and finds
the target among a flat list of objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model import workloads as registry
from py_engine.model.workloads import EMPTY_WHITELIST, PathError, Whitelist, group_kind_of
from py_engine.model.workloadspread import TargetRef, WorkloadSpread
from py_engine.workloadspread.controller.errors import ReconcileError


def _where(spread: WorkloadSpread) -> str:
    tf = spread.target_filter
    if tf is not None and tf.replicas_path_list:
        return "spec.targetFilter.replicasPathList"
    return f"{spread.target_ref.kind} {spread.target_ref.name!r}"


def workload_replicas(
    spread: WorkloadSpread,
    workload: Mapping[str, Any] | None,
    whitelist: Whitelist = EMPTY_WHITELIST,
    scale_replicas: int | None = None,
) -> int:
    """`registry.controller_replicas`, raising ReconcileError."""
    try:
        return registry.controller_replicas(spread, workload, whitelist, scale_replicas)
    except PathError as exc:
        raise ReconcileError(f"{_where(spread)}: {exc}") from None


def listing_replicas(
    spread: WorkloadSpread, workload: Mapping[str, Any], scale_replicas: int | None = None
) -> int:
    """`registry.listing_replicas`, raising ReconcileError."""
    try:
        return registry.listing_replicas(spread, workload, scale_replicas)
    except PathError as exc:
        raise ReconcileError(f"{spread.target_ref.kind} {spread.target_ref.name!r}: {exc}") from None


def find_workload(
    objects: Sequence[Mapping[str, Any]], ref: TargetRef, namespace: str
) -> Mapping[str, Any] | None:
    """The target among `objects`: group, kind and name match (the version is ignored)."""
    for obj in objects:
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or group_kind_of(obj) != (ref.group, ref.kind):
            continue
        if meta.get("name") == ref.name and (meta.get("namespace") or namespace) == namespace:
            return obj
    return None
