"""Finding the subset workloads of a UnitedDeployment in a snapshot.

Candidates are workloads in its namespace that its selector matches. Owned ones
of the template's kind are its subsets, named by their subset label; owned ones
of another kind are deleted (the template switched kind); of several owned
workloads with one subset name the first in snapshot order is kept and the
others deleted (before allocating, as Kruise). An orphan is adopted only when it
names this UnitedDeployment (`ownership.names_ud`), is of the template's kind
and fills a spec subset that has no workload; an orphan is never deleted. Owned
workloads the selector no longer matches are released (owner reference removed).
Each workload's pods are the ones it controls (`ownership.owns_pod`, asked only about the
candidates `podowners.PodOwners` finds). Kruise adopts every matching orphan (and deletes
those of another kind) and fails the whole listing on an owned workload without a subset
label; here the latter is reported (docs/uniteddeployment.md, "Subset workloads" and "Adoption").
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
from py_engine.uniteddeployment.controller import kruise_layout
from py_engine.uniteddeployment.controller.ownership import (
    names_ud,
    ownership,
    reference,
    released,
    selected,
)
from py_engine.uniteddeployment.controller.podfacts import revision_of, subset_of
from py_engine.uniteddeployment.controller.podowners import PodOwners

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
            value = kruise_layout.rolling_update(self.obj).get("partition")
            if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
                return math.ceil(int(value[:-1]) * self.spec_replicas / 100)
            return _int(value)
        return None


@dataclass(frozen=True)
class Discovery:
    """What discovery found. `delete` holds every workload to delete; `duplicates` the
    part of it Kruise deletes before allocating (extra workloads of one subset), which a
    refused allocation still deletes; `release` the owned workloads the selector no
    longer matches, without the UnitedDeployment's owner reference."""

    subsets: Mapping[str, SubsetWorkload]
    delete: tuple[JSON, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)
    duplicates: tuple[JSON, ...] = ()
    release: tuple[JSON, ...] = ()


def _candidates(ud: UnitedDeployment, workloads: Sequence[Obj]) -> tuple[list[Obj], list[Obj], list[JSON]]:
    """The owned and adoptable workloads the selector matches, owned first; and the owned
    ones it no longer matches, released."""
    owned: list[Obj] = []
    orphans: list[Obj] = []
    release: list[JSON] = []
    for obj in workloads:
        if kind_key(obj) not in WORKLOAD_KINDS or objects.namespace(obj, default="") != ud.namespace:
            continue
        verdict = ownership(obj, ud)
        if verdict == "foreign":
            continue
        if not selected(obj, ud):
            if verdict == "owned":
                release.append(released(obj, ud))
            continue
        if verdict == "owned":
            owned.append(obj)
        elif names_ud(obj, ud):
            orphans.append(obj)
    return owned, orphans, release


def discover(ud: UnitedDeployment, workloads: Sequence[Obj], pods: Sequence[Obj]) -> Discovery:
    active = (ud.template.api_version.split("/")[0], ud.template.kind)
    owned, orphans, release = _candidates(ud, workloads)
    pods_by_owner = PodOwners(pods)  # a duplicate's pods are its own
    found: dict[str, SubsetWorkload] = {}
    delete: list[JSON] = []
    duplicates: list[JSON] = []
    errors: list[str] = []
    for obj in owned:
        if kind_key(obj) != active:
            delete.append(reference(obj))  # the template switched kind
            continue
        subset = subset_of(obj)
        if subset is None:
            errors.append(
                f"{obj.get('kind')} {objects.name(obj)} is owned but has no subset-name label; left alone"
            )
        elif subset in found:
            duplicates.append(reference(obj))
        else:
            found[subset] = SubsetWorkload(subset=subset, obj=obj, pods=pods_by_owner.of(obj))
    for obj in orphans:  # never deleted: adopted only into a spec subset that has no workload
        subset = subset_of(obj)
        if (
            kind_key(obj) == active
            and subset is not None
            and subset not in found
            and ud.subset(subset) is not None
        ):
            found[subset] = SubsetWorkload(subset=subset, obj=obj, pods=pods_by_owner.of(obj), adopt=True)
    for name, workload in list(found.items()):
        if ud.subset(name) is None:
            delete.append(reference(workload.obj))
    return Discovery(
        subsets=found,
        delete=(*duplicates, *delete),
        errors=tuple(errors),
        duplicates=tuple(duplicates),
        release=tuple(release),
    )
