"""Grouping a spread's pods into subsets, per version (docs/design-workloadspread.md §2.5.1).

Pods carrying this spread's annotation go to the subset it names (or to the
"no subset" bucket when that subset left the spec). Other pods — created before
the spread, admitted unmodified, or annotated for another spread — are adopted
by the best-scoring subset for their node (see `adoption`), else they fall in the
no-subset bucket, whose pods are the first to go on scale-down. Quotas are per
version, as Kruise groups each version on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_engine.model.constants import MAX_INT32
from py_engine.model.pods import matched_spread, pod_version
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.strategic_merge import strategic_merge
from py_engine.workloadspread.controller.adoption import adoption_patch, best_subset

Obj = Mapping[str, Any]
# Bucket key of pods that belong to no subset of the spec.
NO_SUBSET: None = None


@dataclass(frozen=True)
class Adoption:
    """A pre-existing pod adopted into `subset`; `patch` is the strategic-merge patch to send."""

    pod: str
    subset: str
    patch: dict[str, Any]


@dataclass
class Grouping:
    """The outcome of grouping: buckets per version, and what must be patched."""

    pods: list[Obj] = field(default_factory=list)  # listed pods, adopted ones as patched
    subset_of: dict[str, str | None] = field(default_factory=dict)
    version_of: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, dict[str | None, list[Obj]]] = field(default_factory=dict)
    adoptions: list[Adoption] = field(default_factory=list)

    def aggregate(self, subset: str | None) -> list[Obj]:
        """Pods of one bucket over every version, in list order."""
        return [p for p in self.pods if self.subset_of[pod_name(p)] == subset]


def pod_name(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def _node_name(pod: Obj) -> str:
    spec = pod.get("spec")
    name = spec.get("nodeName") if isinstance(spec, Mapping) else None
    return name if isinstance(name, str) else ""


def group_pods(
    spread: WorkloadSpread,
    pods: Sequence[Obj],
    nodes: Mapping[str, Obj],
    replicas: int,
    *,
    versioned: bool,
) -> Grouping:
    """Bucket every pod by version and subset; adopt pre-existing pods (pure: returns patches)."""
    names = {s.name for s in spread.subsets}
    result = Grouping()
    by_version: dict[str, list[Obj]] = {}
    for pod in pods:
        by_version.setdefault(pod_version(pod, versioned=versioned), []).append(pod)
    adopted: dict[str, Obj] = {}
    for version, members in by_version.items():
        quota = {
            s.name: (MAX_INT32 if s.max_replicas is None else s.max_replicas.resolve(replicas))
            for s in spread.subsets
        }
        matches = [matched_spread(pod) for pod in members]  # parsed once: JSON per pod is the hot path
        for matched in matches:
            if matched is not None and matched.name == spread.name and matched.subset in names:
                quota[matched.subset] -= 1
        buckets: dict[str | None, list[Obj]] = {s.name: [] for s in spread.subsets}
        buckets[NO_SUBSET] = []
        for pod, matched in zip(members, matches, strict=True):
            name = pod_name(pod)
            target: str | None
            if matched is not None and matched.name == spread.name and matched.subset:
                target = matched.subset if matched.subset in names else NO_SUBSET
            else:
                subset = best_subset(
                    pod, nodes.get(_node_name(pod)) if _node_name(pod) else None, spread.subsets, quota
                )
                target = NO_SUBSET
                if subset is not None:
                    patch = adoption_patch(spread, subset)
                    result.adoptions.append(Adoption(name, subset.name, patch))
                    pod = strategic_merge(pod, patch)
                    adopted[name] = pod
                    quota[subset.name] -= 1
                    target = subset.name
            buckets[target].append(pod)
            result.subset_of[name] = target
            result.version_of[name] = version
        result.buckets[version] = buckets
    result.pods = [adopted.get(pod_name(p), p) for p in pods]
    return result
