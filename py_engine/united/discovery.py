"""Finding the subset workloads of a UnitedDeployment in a snapshot.

Candidates are workloads in its namespace that its selector matches. Owned ones
of the template's kind are its subsets, named by their subset label; owned ones
of another kind are deleted (the template switched kind); orphans of the
template's kind that carry a subset label are adopted. Kruise also adopts, then
deletes, orphans of other kinds and fails the whole listing on an owned workload
without a subset label; here the first are left alone and the second is reported
(docs/uniteddeployment.md, "Subset workloads"). When several workloads carry one
subset name, the first in snapshot order is kept and the others are deleted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_engine.model.ud_constants import (
    KRUISE_SUBSET_PATCH_ANNOTATION,
    SUBSET_PATCH_ANNOTATION,
    TEMPLATE_KINDS,
)
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics import objects
from py_engine.united.ownership import ownership, reference, selected
from py_engine.united.podfacts import revision_of, subset_of

JSON = dict[str, Any]
Obj = Mapping[str, Any]
WORKLOAD_KINDS = frozenset((objects.api_group(api_version), kind) for _, api_version, kind in TEMPLATE_KINDS)


def kind_key(obj: Obj) -> tuple[str, str]:
    return (objects.group_of(obj), str(obj.get("kind") or ""))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _section(obj: Obj, key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class SubsetWorkload:
    """One existing subset workload and its pods."""

    subset: str
    obj: Obj
    pods: tuple[Obj, ...] = ()
    adopt: bool = False

    @property
    def name(self) -> str:
        return objects.name(self.obj)

    @property
    def spec_replicas(self) -> int:
        return _int(_section(self.obj, "spec").get("replicas", 1))

    @property
    def status_replicas(self) -> int:
        return _int(_section(self.obj, "status").get("replicas"))

    @property
    def ready_replicas(self) -> int:
        return _int(_section(self.obj, "status").get("readyReplicas"))

    @property
    def revision(self) -> str:
        return revision_of(self.obj)

    @property
    def patch_text(self) -> str | None:
        annotations = _section(_section(self.obj, "metadata"), "annotations")
        for key in (SUBSET_PATCH_ANNOTATION, KRUISE_SUBSET_PATCH_ANNOTATION):
            if isinstance(annotations.get(key), str):
                return str(annotations[key])
        return None

    def partition(self) -> int | None:
        """The partition the workload has, None when its kind or strategy has none."""
        kind = str(self.obj.get("kind") or "")
        strategy = _section(_section(self.obj, "spec"), "updateStrategy")
        if kind == "StatefulSet":
            if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
                return None
            return _int(_section(strategy, "rollingUpdate").get("partition"))
        if kind == "CloneSet":
            value = strategy.get("partition")
            if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
                return math.ceil(int(value[:-1]) * self.spec_replicas / 100)
            return _int(value)
        return None


@dataclass(frozen=True)
class Discovery:
    subsets: Mapping[str, SubsetWorkload]
    delete: tuple[JSON, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)


def pods_of(ud: UnitedDeployment, pods: Sequence[Obj], subset: str) -> tuple[Obj, ...]:
    return tuple(p for p in pods if selected(p, ud) and subset_of(p) == subset)


def discover(ud: UnitedDeployment, workloads: Sequence[Obj], pods: Sequence[Obj]) -> Discovery:
    active = (ud.template.api_version.split("/")[0], ud.template.kind)
    found: dict[str, SubsetWorkload] = {}
    delete: list[JSON] = []
    errors: list[str] = []
    for obj in workloads:
        if kind_key(obj) not in WORKLOAD_KINDS or not selected(obj, ud):
            continue
        verdict = ownership(obj, ud)
        if verdict == "foreign":
            continue
        if kind_key(obj) != active:
            if verdict == "owned":
                delete.append(reference(obj))
            continue
        subset = subset_of(obj)
        if subset is None:
            if verdict == "owned":
                errors.append(f"{obj.get('kind')} {objects.name(obj)} is owned but has no subset-name label; left alone")
            continue
        if subset in found:
            delete.append(reference(obj))
            continue
        found[subset] = SubsetWorkload(subset=subset, obj=obj, pods=pods_of(ud, pods, subset),
                                       adopt=verdict == "orphan")
    for name, workload in list(found.items()):
        if ud.subset(name) is None:
            delete.append(reference(workload.obj))
    return Discovery(subsets=found, delete=tuple(delete), errors=tuple(errors))
