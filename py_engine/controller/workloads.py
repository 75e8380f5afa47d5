"""Target workloads as the controller sees them: kind, replica count, custom whitelist.

docs/design-workloadspread.md §1.4. Built-in kinds read their replica field directly; custom kinds
come from Kruise's whitelist (ConfigMap `kruise-configuration`, key
`WorkloadSpread_Watch_Custom_Workload_WhiteList`), whose `replicasPath` says
where the count lives. `targetFilter.replicasPathList` overrides every kind with
the sum of its paths. A replica count of -1 means "unknown" (a custom kind with
neither a whitelist path nor a scale subresource), which leaves percentage caps
unresolvable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.controller.errors import ReconcileError
from py_engine.model.workloadspread import TargetRef, WorkloadSpread, api_group

WHITELIST_KEY = "WorkloadSpread_Watch_Custom_Workload_WhiteList"
UNKNOWN_REPLICAS = -1

DEPLOYMENT = ("apps", "Deployment")
REPLICASET = ("apps", "ReplicaSet")
CLONESET = ("apps.kruise.io", "CloneSet")
JOB = ("batch", "Job")
BUILTIN_KINDS: frozenset[tuple[str, str]] = frozenset(
    {DEPLOYMENT, REPLICASET, ("apps", "StatefulSet"), ("apps.kruise.io", "StatefulSet"), CLONESET, JOB}
)
# The only kinds whose scale-down reads pod-deletion-cost (docs/design-workloadspread.md §1.4).
COST_KINDS: frozenset[tuple[str, str]] = frozenset({DEPLOYMENT, REPLICASET, CLONESET})


@dataclass(frozen=True)
class CustomWorkload:
    """One whitelist entry; `replicas_path` is None when the entry has no `replicasPath` key."""

    group: str
    kind: str
    replicas_path: str | None
    sub_resources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Whitelist:
    """The parsed custom-workload whitelist (empty by default)."""

    workloads: tuple[CustomWorkload, ...] = ()

    def find(self, group: str, kind: str) -> CustomWorkload | None:
        return next((w for w in self.workloads if w.group == group and w.kind == kind), None)


EMPTY_WHITELIST = Whitelist()


def parse_whitelist(raw: Any) -> Whitelist:
    """Read the whitelist from the ConfigMap value (JSON text) or its parsed form."""
    if raw is None or raw == "":
        return EMPTY_WHITELIST
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ReconcileError(f"{WHITELIST_KEY}: not JSON: {exc}") from None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("workloads") or [], list):
        raise ReconcileError(f"{WHITELIST_KEY}: expected an object with a 'workloads' list")
    entries: list[CustomWorkload] = []
    for index, item in enumerate(raw.get("workloads") or []):
        if not isinstance(item, Mapping) or not isinstance(item.get("Kind"), str):
            raise ReconcileError(f"{WHITELIST_KEY}: workloads[{index}] needs a string Kind")
        path = item.get("replicasPath")
        if path is not None and not isinstance(path, str):
            raise ReconcileError(f"{WHITELIST_KEY}: workloads[{index}].replicasPath must be a string")
        subs = tuple(
            (str(s.get("Group") or ""), str(s.get("Kind") or ""))
            for s in item.get("subResources") or []
            if isinstance(s, Mapping)
        )
        entries.append(CustomWorkload(str(item.get("Group") or ""), item["Kind"], path, subs))
    return Whitelist(tuple(entries))


def target_key(ref: TargetRef) -> tuple[str, str]:
    return (ref.group, ref.kind)


def object_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(group, kind) of an object or an ownerReference."""
    return (api_group(str(obj.get("apiVersion") or "")), str(obj.get("kind") or ""))


def resolve_path(obj: Mapping[str, Any], path: str) -> Any:
    """Follow a dot path (`spec.replicas`, `subsets.1.replicas`); None when it leads nowhere."""
    value: Any = obj
    for segment in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(segment)
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return None
        if value is None:
            return None
    return value


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ReconcileError(f"{what} is not an integer: {value!r}")
    return int(value)


def _field(workload: Mapping[str, Any], field: str, default: int) -> int:
    spec = workload.get("spec")
    value = spec.get(field) if isinstance(spec, Mapping) else None
    return default if value is None else _integer(value, f"spec.{field}")


def workload_replicas(
    spread: WorkloadSpread,
    workload: Mapping[str, Any] | None,
    whitelist: Whitelist = EMPTY_WHITELIST,
    scale_replicas: int | None = None,
) -> int:
    """The replica count percentages resolve against (docs/design-workloadspread.md §1.4, controller).

    A missing workload counts 0. `scale_replicas` is the custom kind's
    `/scale` `spec.replicas` when the caller could read one.
    """
    if workload is None:
        return 0
    tf = spread.target_filter
    if tf is not None and tf.replicas_path_list:
        total = 0
        for path in tf.replicas_path_list:
            value = resolve_path(workload, path)
            if value is None:
                raise ReconcileError(f"spec.targetFilter.replicasPathList: {path!r} not found in the workload")
            total += _integer(value, f"workload field {path!r}")
        return total
    key = target_key(spread.target_ref)
    if key == JOB:
        return _field(workload, "parallelism", 1)
    if key in BUILTIN_KINDS:
        return _field(workload, "replicas", 1)
    custom = whitelist.find(*key)
    if custom is not None and custom.replicas_path is not None:
        if not custom.replicas_path:
            return 0
        value = resolve_path(workload, custom.replicas_path)
        return 0 if value is None else _integer(value, f"workload field {custom.replicas_path!r}")
    return scale_replicas if scale_replicas is not None else UNKNOWN_REPLICAS


def listing_replicas(spread: WorkloadSpread, workload: Mapping[str, Any], scale_replicas: int | None = None) -> int:
    """The workload's own replica count, which decides "0 replicas lists no pods".

    Unlike `workload_replicas` no path overrides it: Kruise's pod finder reads
    the scale of the workload itself. A custom kind without a `/scale` answer
    falls back to its `spec.replicas`, else -1 (unknown: pods are listed).
    """
    key = target_key(spread.target_ref)
    if key == JOB:
        return _field(workload, "parallelism", 1)
    if key in BUILTIN_KINDS:
        return _field(workload, "replicas", 1)
    if scale_replicas is not None:
        return scale_replicas
    value = resolve_path(workload, "spec.replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN_REPLICAS


def find_workload(objects: Sequence[Mapping[str, Any]], ref: TargetRef, namespace: str) -> Mapping[str, Any] | None:
    """The target among `objects`: group, kind and name match (the version is ignored)."""
    for obj in objects:
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or object_key(obj) != target_key(ref):
            continue
        if meta.get("name") == ref.name and (meta.get("namespace") or namespace) == namespace:
            return obj
    return None
