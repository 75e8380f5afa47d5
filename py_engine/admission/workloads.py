"""Workload kinds the admission understands, and the replica count percentages resolve against.

Built-in kinds are Kruise's list (Deployment, ReplicaSet, StatefulSet of both
groups, CloneSet, Job); custom kinds come from a whitelist whose entries also
name the sub-resources that may sit between the workload and its pods
(GameServerSet -> GameServer -> Pod). The replica count is read the way
Kruise's webhook reads it when it initialises a version's statuses (docs/design-workloadspread.md §1.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.admission.context import AdmissionContext, AdmissionError, Lookup
from py_engine.model import WorkloadSpread
from py_engine.model.workloadspread import api_group

GroupKind = tuple[str, str]

BUILTIN_WORKLOAD_KINDS: frozenset[GroupKind] = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("apps.kruise.io", "StatefulSet"),
        ("apps.kruise.io", "CloneSet"),
        ("batch", "Job"),
    }
)
STATEFULSET_KINDS: frozenset[GroupKind] = frozenset({("apps", "StatefulSet"), ("apps.kruise.io", "StatefulSet")})

# Kinds whose replica count is `spec.replicas` (defaulted to 1 by the API server).
_REPLICAS_KINDS = BUILTIN_WORKLOAD_KINDS - {("batch", "Job")}


@dataclass(frozen=True)
class CustomWorkload:
    """One whitelist entry: a custom workload kind, where its replicas are, and its sub-resources."""

    group: str
    kind: str
    replicas_path: str
    sub_resources: tuple[GroupKind, ...]


def _folded(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Keys lower-cased: Kruise's ConfigMap uses `Group`/`Kind`, ours `group`/`kind`
    (Go's JSON decoder reads both)."""
    return {str(k).lower(): v for k, v in entry.items()}


def parse_custom_workloads(entries: Sequence[Mapping[str, Any]]) -> tuple[CustomWorkload, ...]:
    """Read whitelist entries, ignoring malformed ones (no kind)."""
    parsed: list[CustomWorkload] = []
    for raw in entries:
        if not isinstance(raw, Mapping):
            continue
        entry = _folded(raw)
        kind = entry.get("kind")
        if not isinstance(kind, str) or not kind:
            continue
        subs: list[GroupKind] = []
        for sub in entry.get("subresources") or []:
            if isinstance(sub, Mapping):
                folded = _folded(sub)
                if isinstance(folded.get("kind"), str) and folded["kind"]:
                    subs.append((str(folded.get("group") or ""), folded["kind"]))
        parsed.append(
            CustomWorkload(
                group=str(entry.get("group") or ""),
                kind=kind,
                replicas_path=str(entry.get("replicaspath") or ""),
                sub_resources=tuple(subs),
            )
        )
    return tuple(parsed)


def accepted_owner_kinds(custom: Sequence[CustomWorkload]) -> frozenset[GroupKind]:
    """Group/kinds that may be a pod's (or a pod owner's) controller."""
    kinds = set(BUILTIN_WORKLOAD_KINDS)
    for workload in custom:
        kinds.add((workload.group, workload.kind))
        kinds.update(workload.sub_resources)
    return frozenset(kinds)


def is_statefulset_target(view: WorkloadSpread) -> bool:
    """StatefulSet targets (both groups) are placed by pod ordinal, without status bookkeeping."""
    return (view.target_ref.group, view.target_ref.kind) in STATEFULSET_KINDS


class PathError(ValueError):
    """A replicas path that does not lead to an integer."""


def resolve_path(obj: Any, path: str) -> Any:
    """Follow a dot path (`spec.tfReplicaSpecs.Worker.replicas`; numeric segments index lists)."""
    value = obj
    for segment in path.split("."):
        if isinstance(value, Mapping) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            raise PathError(f"path {path!r} not found (at {segment!r})")
    return value


def _as_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise PathError(f"path {path!r} holds {value!r}, not an integer")
    return int(value)


def sum_replicas_paths(workload: Mapping[str, Any], paths: Sequence[str]) -> int:
    """`targetFilter.replicasPathList`: the sum of the integers at these paths."""
    return sum(_as_int(resolve_path(workload, path), path) for path in paths)


def _spec_int(workload: Mapping[str, Any], key: str, default: int) -> int:
    spec = workload.get("spec")
    value = spec.get(key) if isinstance(spec, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def workload_replicas(view: WorkloadSpread, namespace: str, ctx: AdmissionContext) -> int:
    """See `current_replicas`; a missing workload counts 0, as in the reference."""
    replicas = current_replicas(view, namespace, ctx)
    return 0 if replicas is None else replicas


def current_replicas(
    view: WorkloadSpread, namespace: str, ctx: AdmissionContext, *, lookup: Lookup | None = None
) -> int | None:
    """The replica count percentages of `view` resolve against, as the webhook reads it.

    The workload is only fetched when a subset uses a percentage (otherwise 0);
    None when the workload is not found. Raises AdmissionError when the spread's
    `targetFilter.replicasPathList` does not resolve to integers (Kruise denies).
    """
    if not view.uses_percentages:
        return 0
    ref = view.target_ref
    workload = (lookup or ctx.lookup)(ref.api_version, ref.kind, namespace, ref.name)
    if workload is None:
        return None
    if view.target_filter is not None and view.target_filter.replicas_path_list:
        try:
            return sum_replicas_paths(workload, view.target_filter.replicas_path_list)
        except PathError as exc:
            raise AdmissionError(f"WorkloadSpread {namespace}/{view.name}: targetFilter.replicasPathList: {exc}") from None
    group_kind = (ref.group, ref.kind)
    if group_kind in _REPLICAS_KINDS:
        return _spec_int(workload, "replicas", 1)
    if group_kind == ("batch", "Job"):
        return _spec_int(workload, "parallelism", 1)
    for custom in parse_custom_workloads(ctx.custom_workloads):
        if (custom.group, custom.kind) == group_kind:
            if not custom.replicas_path:
                return 0
            try:
                return _as_int(resolve_path(workload, custom.replicas_path), custom.replicas_path)
            except PathError:
                return 0
    return 0


def owner_group_kind(ref: Mapping[str, Any]) -> GroupKind:
    """(group, kind) of an ownerReference or targetRef-like mapping."""
    return (api_group(str(ref.get("apiVersion") or "")), str(ref.get("kind") or ""))
