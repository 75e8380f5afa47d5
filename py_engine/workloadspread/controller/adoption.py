"""Adopting pods created before their spread: which subset fits the node they run on.

docs/design-workloadspread.md §2.5.1. A subset matches when every taint of the node (any effect,
PreferNoSchedule included) is tolerated by the pod's tolerations plus the
subset's, and the node satisfies the pod's own required node affinity with the
subset's required term ANDed into each term. Among matches the highest
`100 * preferred weight + 10 * patch already applied + 1 * quota left` wins,
the earliest subset on ties. The scheduler's predicates in `py_engine.semantics`
decide "matches", so placement and adoption never disagree.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.model.constants import IGNORE_PATCH_EXISTING_PODS_ANNOTATION, MATCHED_ANNOTATION
from py_engine.model.pods import MatchedSpread
from py_engine.model.workloadspread import Subset, WorkloadSpread
from py_engine.semantics.scheduling import (
    node_selector_term_matches,
    pod_matches_node_selector_and_affinity,
    tolerates_taint,
)
from py_engine.semantics.strategic_merge import StrategicMergeError, strategic_merge

Obj = Mapping[str, Any]
NO_MATCH = -1


def _spec(obj: Obj) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _with_subset_affinity(pod: Obj, subset: Subset) -> dict[str, Any]:
    """A copy of the pod whose required terms carry the subset's term (ANDed into each)."""
    term = subset.required_node_selector_term or {}
    candidate = copy.deepcopy(dict(pod))
    # Snapshots handed to `spreadgate reconcile` may hold pods of any shape; a field of
    # the wrong type counts as absent (the API server would never have stored it).
    spec = _dict_field(candidate, "spec")
    node_affinity = _dict_field(_dict_field(spec, "affinity"), "nodeAffinity")
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    terms = [t for t in terms if isinstance(t, dict)] if isinstance(terms, list) else []
    if not terms:
        merged = [copy.deepcopy(term)]
    else:
        merged = [
            {
                **t,
                "matchExpressions": [
                    *_list_field(t, "matchExpressions"),
                    *(term.get("matchExpressions") or []),
                ],
                "matchFields": [*_list_field(t, "matchFields"), *(term.get("matchFields") or [])],
            }
            for t in terms
        ]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": merged}
    return candidate


def _dict_field(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """`obj[key]` as a dict, replacing a missing or ill-typed value with an empty one."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _list_field(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _without_annotations(obj: Obj) -> dict[str, Any]:
    result = copy.deepcopy(dict(obj))
    meta = result.get("metadata")
    if isinstance(meta, dict):
        meta.pop("annotations", None)
    return result


def patch_already_applied(pod: Obj, patch: Mapping[str, Any] | None) -> bool:
    """The pod already looks like the subset: its patch changes nothing but annotations."""
    if not patch:
        return False
    try:
        patched = strategic_merge(pod, patch)
    except StrategicMergeError:
        return False
    return _without_annotations(patched) == _without_annotations(pod)


def subset_score(pod: Obj, node: Obj, subset: Subset, remaining_quota: int) -> int:
    """The subset's score for a pod running on `node`; NO_MATCH (-1) when it cannot hold it."""
    tolerations = [*(_spec(pod).get("tolerations") or []), *subset.tolerations]
    for taint in _spec(node).get("taints") or []:
        if not any(tolerates_taint(t, taint) for t in tolerations):
            return NO_MATCH
    if subset.required_node_selector_term is not None and not pod_matches_node_selector_and_affinity(
        _with_subset_affinity(pod, subset), node
    ):
        return NO_MATCH
    preferred = sum(
        int(term.get("weight") or 0)
        for term in subset.preferred_node_selector_terms
        if node_selector_term_matches(term.get("preference") or {}, node)
    )
    patch_score = 1 if patch_already_applied(pod, subset.patch) else 0
    quota_score = 1 if remaining_quota > 0 else 0
    return 100 * preferred + 10 * patch_score + quota_score


def best_subset(
    pod: Obj, node: Obj | None, subsets: Sequence[Subset], quota: Mapping[str, int]
) -> Subset | None:
    """Highest-scoring matching subset, earliest on ties; None for unscheduled pods or unknown nodes."""
    if node is None:
        return None
    best: Subset | None = None
    best_score = NO_MATCH
    for subset in subsets:
        score = subset_score(pod, node, subset, quota.get(subset.name, 0))
        if score > best_score:
            best, best_score = subset, score
    return best


def adoption_patch(spread: WorkloadSpread, subset: Subset) -> dict[str, Any]:
    """The strategic-merge patch that adopts a pod: the matched annotation plus the
    metadata of the subset's patch (unless the spread asks to ignore it)."""
    metadata: dict[str, Any] = {}
    ignore = spread.annotations.get(IGNORE_PATCH_EXISTING_PODS_ANNOTATION, "").lower() == "true"
    if subset.patch and not ignore and isinstance(subset.patch.get("metadata"), Mapping):
        metadata = copy.deepcopy(dict(subset.patch["metadata"]))
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = metadata["annotations"] = {}
    annotations[MATCHED_ANNOTATION] = MatchedSpread(spread.name, subset.name).to_annotation()
    return {"metadata": metadata}
