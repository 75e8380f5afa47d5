"""The mutated pod as Kruise's webhook builds it, and its JSON patch (docs/design-workloadspread.md §2.2).

Order matters and is the reference's: tolerations appended; `affinity` and
`nodeAffinity` created even when empty; preferred terms appended; the
required term ANDed into every existing required term (terms are ORed, so
the subset's constraint must hold in each branch) or set alone; then the
subset `patch` as a strategic merge by the Pod schema, which can replace
list fields injected just before; `spec.priority` cleared when the patch
changed `priorityClassName` (else the Priority admission plugin rejects the
pod); finally the matched-workloadspread annotation, Spreadgate's key.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from py_engine.model.constants import MATCHED_ANNOTATION
from py_engine.model.pods import MatchedSpread
from py_engine.semantics import jsondiff, objects
from py_engine.semantics.jsoncopy import json_copy
from py_engine.semantics.objects import JSON_OBJECT, dict_at
from py_engine.semantics.strategic_merge import POD_SCHEMA, StrategicMergeError, strategic_merge
from py_engine.workloadspread.admission.context import AdmissionError

JSON = dict[str, Any]


def _subset_of(spread: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    spec = spread.get("spec")
    for subset in (spec.get("subsets") if isinstance(spec, JSON_OBJECT) else None) or []:
        if isinstance(subset, JSON_OBJECT) and subset.get("name") == name:
            return subset
    raise AdmissionError(f"subset {name!r} is not in the WorkloadSpread's spec")


def _inject_node_affinity(spec: JSON, subset: Mapping[str, Any]) -> None:
    node_affinity = dict_at(dict_at(spec, "affinity"), "nodeAffinity")
    preferred = subset.get("preferredNodeSelectorTerms") or []
    if preferred:
        existing = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            *existing,
            *copy.deepcopy(preferred),
        ]
    term = subset.get("requiredNodeSelectorTerm")
    if not isinstance(term, JSON_OBJECT):
        return
    key = "requiredDuringSchedulingIgnoredDuringExecution"
    selector = node_affinity.get(key)
    terms = selector.get("nodeSelectorTerms") if isinstance(selector, dict) else None
    if not terms:
        node_affinity[key] = {"nodeSelectorTerms": [copy.deepcopy(dict(term))]}
        return
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    for existing_term in terms:
        if not isinstance(existing_term, dict):
            continue  # not a term: the API server rejects the pod after admission
        if expressions:
            existing_term["matchExpressions"] = [
                *(existing_term.get("matchExpressions") or []),
                *copy.deepcopy(expressions),
            ]
        if fields:
            existing_term["matchFields"] = [*(existing_term.get("matchFields") or []), *copy.deepcopy(fields)]


def apply_subset_patch(pod: Mapping[str, Any], patch: Mapping[str, Any]) -> JSON:
    """Strategic-merge a subset `patch` into a pod (Pod schema); clears `spec.priority` when
    `priorityClassName` changed. Raises AdmissionError when the patch does not apply."""
    before = (
        (pod.get("spec") or {}).get("priorityClassName") if isinstance(pod.get("spec"), Mapping) else None
    )
    try:
        patched = strategic_merge(pod, patch, POD_SCHEMA)
    except StrategicMergeError as exc:
        raise AdmissionError(f"the subset patch does not apply to the pod: {exc}") from None
    spec = patched.get("spec")
    if isinstance(spec, dict) and spec.get("priorityClassName") != before:
        spec.pop("priority", None)
    return patched


def _writable_copy(pod: Mapping[str, Any]) -> JSON:
    """A copy of `pod` owning what `inject` writes in place: `metadata`, its `annotations`, `spec`
    and all of `spec.affinity` (existing node selector terms are extended); every other member
    is shared with `pod` and never written (tolerations are replaced by a new list, a subset
    patch merges into a deep copy).

    A whole copy cost twice: copying, then `make_patch` comparing each unchanged member as
    encoded JSON because it was no longer the same object (docs/performance.md, "Costs found,
    and what changed"); a shared member is skipped by identity.
    """
    mutated = dict(pod)
    _own(pod, mutated, "metadata", "annotations", dict)
    _own(pod, mutated, "spec", "affinity", json_copy)
    return mutated


def _own(
    pod: Mapping[str, Any], mutated: JSON, key: str, child: str, copy_child: Callable[[JSON], JSON]
) -> None:
    """Give `mutated` its own shallow copy of `pod[key]`, and in it `copy_child(pod[key][child])`
    (each only where it is an object)."""
    member = pod.get(key)
    if isinstance(member, dict):
        owned = mutated[key] = dict(member)
        inner = member.get(child)
        if isinstance(inner, dict):
            owned[child] = copy_child(inner)


def inject(
    pod: dict[str, Any], spread: dict[str, Any], subset: str, uid: str | None, *, apply_patch: bool = True
) -> dict[str, Any]:
    """The pod as admitted into `subset` of `spread` (a new dict that shares the members it does
    not change with `pod`, so neither may be mutated later; inputs are untouched).

    `uid` is recorded in the annotation only when the pod has no name yet
    (generateName): it is the `creatingPods` key the controller clears when it
    sees the pod. Raises AdmissionError when the subset is unknown or its patch
    does not apply (the pod is denied, as in Kruise). `apply_patch` False leaves
    the subset `patch` out (the patch allowlist refused it, `patch_guard`).
    """
    subset_spec = _subset_of(spread, subset)
    mutated = _writable_copy(pod)
    spec = dict_at(mutated, "spec")
    tolerations = subset_spec.get("tolerations") or []
    if tolerations:
        spec["tolerations"] = [*(spec.get("tolerations") or []), *copy.deepcopy(tolerations)]
    _inject_node_affinity(spec, subset_spec)
    patch = subset_spec.get("patch")
    if apply_patch and isinstance(patch, JSON_OBJECT):
        mutated = apply_subset_patch(mutated, patch)
    metadata = dict_at(mutated, "metadata")
    annotations = dict_at(metadata, "annotations")
    has_name = bool(metadata.get("name"))
    annotations[MATCHED_ANNOTATION] = MatchedSpread(
        name=objects.name(spread), subset=subset, uid="" if has_name else (uid or "")
    ).to_annotation()
    return mutated


def make_patch(original: dict[str, Any], mutated: dict[str, Any]) -> list[dict[str, Any]]:
    """JSONPatch operations turning `original` into `mutated` (paths escape `/` as `~1`).

    `py_engine.semantics.jsondiff`: descends only where the pods differ (jsonpatch's
    generic diff walked every member and was the largest cost of an admission).
    """
    return jsondiff.diff(original, mutated)
