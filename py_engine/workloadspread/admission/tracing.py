"""Tracing a pod to the WorkloadSpread that governs it (docs/design-workloadspread.md §1.4).

The pod's controller owner must be an accepted workload kind. For each spread
of the namespace, in list order, the owner chain is walked upwards until it
reaches the spread's target (group + kind + name; the version is ignored), a
kind that is not a workload, or an owner without a controller. An owner that
does not exist raises `OwnerNotFound`: the pod is denied and its controller
retries, instead of the pod slipping through without injection (Kruise PR
#1807). The first spread whose target is reached and whose `targetFilter`
selects the pod wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model import is_workloadspread
from py_engine.model.pods import controller_owner
from py_engine.model.workloads import GroupKind, group_kind_of
from py_engine.semantics import objects
from py_engine.semantics.labels import SelectorError, labels_of, matches_label_selector
from py_engine.semantics.objects import JSON_OBJECT, api_group
from py_engine.workloadspread.admission.context import AdmissionContext, OwnerNotFound

# Real chains are two or three links long (Pod -> ReplicaSet -> Deployment);
# the bound only protects against ownerReference cycles in a broken cache.
MAX_OWNER_DEPTH = 16


def target_filter_selects(spec: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """The webhook's `targetFilter` check: absent filter selects everything, a filter
    without selector selects **nothing** (Kruise's quirk), an invalid selector nothing."""
    if spec.get("targetFilter") is None:
        return True
    target_filter = spec["targetFilter"]
    if not isinstance(target_filter, JSON_OBJECT):
        return False
    try:
        return matches_label_selector(target_filter.get("selector"), labels_of(pod))
    except SelectorError:
        return False


class _OwnerWalker:
    """Walks owner chains, fetching each owner from the caches at most once per admission."""

    def __init__(self, namespace: str, ctx: AdmissionContext, accepted: frozenset[GroupKind]) -> None:
        self.namespace = namespace
        self.ctx = ctx
        self.accepted = accepted
        self._fetched: dict[tuple[str, str, str], Mapping[str, Any]] = {}

    def _owner_object(self, ref: Mapping[str, Any]) -> Mapping[str, Any]:
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        name = str(ref.get("name") or "")
        key = (api_group(api_version), kind, name)
        if key not in self._fetched:
            obj = self.ctx.lookup(api_version, kind, self.namespace, name)
            if obj is None:
                raise OwnerNotFound(api_version, kind, self.namespace, name)
            self._fetched[key] = obj
        return self._fetched[key]

    def reaches(self, owner: Mapping[str, Any] | None, target: tuple[str, str, str]) -> bool:
        """Whether the chain starting at `owner` reaches `target` (group, kind, name)."""
        ref = owner
        for _ in range(MAX_OWNER_DEPTH):
            if ref is None:
                return False
            group_kind = group_kind_of(ref)
            if group_kind == target[:2] and ref.get("name") == target[2]:
                return True
            if group_kind not in self.accepted:
                return False
            ref = controller_owner(self._owner_object(ref))
        return False


def _target_of(spread: Mapping[str, Any]) -> tuple[str, str, str] | None:
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, JSON_OBJECT) else None
    if not isinstance(ref, JSON_OBJECT):
        return None
    return (
        api_group(str(ref.get("apiVersion") or "")),
        str(ref.get("kind") or ""),
        str(ref.get("name") or ""),
    )


def find_spread(
    pod: dict[str, Any], spreads: Sequence[dict[str, Any]], ctx: AdmissionContext
) -> dict[str, Any] | None:
    """The WorkloadSpread governing `pod`, or None. Raises OwnerNotFound (deny, 404).

    `spreads` are the spreads of the pod's namespace in list order (others are
    skipped); spreads being deleted or without `targetRef` are ignored.
    """
    owner = controller_owner(pod)
    if owner is None:
        return None
    accepted = ctx.whitelist.owner_kinds
    if group_kind_of(owner) not in accepted:
        return None
    namespace = objects.namespace(pod)
    walker = _OwnerWalker(namespace, ctx, accepted)
    for spread in spreads:
        if not is_workloadspread(spread):
            continue
        metadata = objects.meta(spread)
        if metadata.get("deletionTimestamp") or objects.namespace(spread) != namespace:
            continue
        target = _target_of(spread)
        if target is None:
            continue
        if walker.reaches(owner, target) and target_filter_selects(spread.get("spec") or {}, pod):
            return spread
    return None
