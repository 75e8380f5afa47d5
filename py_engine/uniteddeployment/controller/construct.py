"""Building a subset's workload from the UnitedDeployment (create and update alike).

For subset `n` at revision `rev` with `r` replicas and partition `p`, starting
from the existing workload (or a new object named `<ud>-<subset>-<random>`):
labels = existing + template labels + selector matchLabels + subset and revision
labels; annotations = existing + template annotations + the subset-patch
annotation and the creating UnitedDeployment's name; a controller owner reference to the
UnitedDeployment; the spec is a copy of the template's spec with the selector (+ subset
label), `replicas = r`,
the kind's partition field, the pod template labels, node affinity, tolerations
and finally the subset patch (strategic merge on the pod template). Differences
from Kruise (template keys that disappear are removed, the subset labels survive
the patch, an adopted workload keeps its selector, matchFields are used) are in
docs/uniteddeployment.md, "Subset workloads".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.model.ud_constants import (
    CREATED_BY_ANNOTATION,
    KRUISE_REVISION_LABEL,
    KRUISE_SUBSET_NAME_LABEL,
    REVISION_LABEL,
    SUBSET_NAME_LABEL,
    SUBSET_PATCH_ANNOTATION,
    TEMPLATE_KEYS_ANNOTATION,
    UD_KIND,
)
from py_engine.model.uniteddeployment import UdSubset, UnitedDeployment
from py_engine.semantics.jsoncopy import json_copy
from py_engine.semantics.objects import dict_at
from py_engine.semantics.strategic_merge import POD_TEMPLATE_SCHEMA, StrategicMergeError, strategic_merge
from py_engine.uniteddeployment.controller import kruise_layout
from py_engine.uniteddeployment.controller.jsonview import as_list, as_map
from py_engine.uniteddeployment.controller.placement import attach_node_affinity, attach_tolerations

JSON = dict[str, Any]

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class ConstructionError(ValueError):
    """A subset workload cannot be built (its patch is not a valid strategic merge patch)."""


@dataclass(frozen=True)
class SubsetTarget:
    """What the allocator and partitions decided for one subset."""

    replicas: int
    partition: int
    max_unavailable: int | None = None  # reservation mode, unschedulable subset


def name_prefix(ud_name: str, subset: str) -> str:
    """`<ud>-<subset>-` when that makes a valid generateName, else `<ud>-`."""
    prefix = f"{ud_name}-{subset}-"
    return prefix if len(prefix) < 253 and _DNS_SUBDOMAIN.match(prefix + "x") else f"{ud_name}-"


def uses_kruise_keys(existing: Mapping[str, Any] | None) -> bool:
    """A workload adopted from Kruise selects its pods by Kruise's subset label; its
    selector is immutable, so its pods keep carrying Kruise's keys too."""
    if existing is None:
        return False
    selector = as_map(as_map(existing.get("spec")).get("selector"))
    match_labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
    return isinstance(match_labels, Mapping) and KRUISE_SUBSET_NAME_LABEL in match_labels


def _subset_labels(subset: str, revision: str, kruise_too: bool) -> dict[str, str]:
    labels = {SUBSET_NAME_LABEL: subset, REVISION_LABEL: revision}
    if kruise_too:
        labels |= {KRUISE_SUBSET_NAME_LABEL: subset, KRUISE_REVISION_LABEL: revision}
    return labels


def _previous_template_keys(annotations: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    try:
        recorded = json.loads(str(annotations.get(TEMPLATE_KEYS_ANNOTATION, "")))
    except ValueError:
        return set(), set()
    if not isinstance(recorded, dict):
        return set(), set()
    labels, notes = recorded.get("labels"), recorded.get("annotations")
    return (
        {str(k) for k in labels} if isinstance(labels, list) else set(),
        {str(k) for k in notes} if isinstance(notes, list) else set(),
    )


def owner_reference(ud: UnitedDeployment) -> JSON:
    ref: JSON = {
        "apiVersion": ud.hub_api_version,
        "kind": UD_KIND,
        "name": ud.name,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    if ud.uid:
        ref["uid"] = ud.uid
    return ref


def _own(metadata: JSON, ud: UnitedDeployment) -> None:
    refs = [r for r in as_list(metadata.get("ownerReferences")) if isinstance(r, Mapping)]
    kept = [dict(r) for r in refs if not (r.get("controller") is True and r.get("kind") == UD_KIND)]
    metadata["ownerReferences"] = [*kept, owner_reference(ud)]


def _metadata(obj: JSON, ud: UnitedDeployment, subset: UdSubset, revision: str, kruise_too: bool) -> None:
    metadata = dict_at(obj, "metadata")
    metadata["namespace"] = ud.namespace
    labels = {str(k): v for k, v in as_map(metadata.get("labels")).items()}
    annotations = {str(k): v for k, v in as_map(metadata.get("annotations")).items()}
    old_labels, old_annotations = _previous_template_keys(annotations)
    template_labels, template_annotations = ud.template.labels, ud.template.annotations
    for key in old_labels - template_labels.keys():
        labels.pop(key, None)
    for key in old_annotations - template_annotations.keys():
        annotations.pop(key, None)
    labels |= template_labels
    labels |= {str(k): str(v) for k, v in (ud.selector.get("matchLabels") or {}).items()}
    labels |= _subset_labels(subset.name, revision, kruise_too)
    annotations |= template_annotations
    annotations[SUBSET_PATCH_ANNOTATION] = subset.patch_text
    annotations[CREATED_BY_ANNOTATION] = ud.name  # names it, should it ever be orphaned (ownership.names_ud)
    annotations[TEMPLATE_KEYS_ANNOTATION] = json.dumps(
        {"labels": sorted(template_labels), "annotations": sorted(template_annotations)},
        separators=(",", ":"),
    )
    metadata["labels"] = labels
    metadata["annotations"] = annotations
    _own(metadata, ud)


def _selector(ud: UnitedDeployment, subset: UdSubset, existing: Mapping[str, Any] | None) -> JSON:
    """The existing selector (immutable once created), else the UD's plus the subset label."""
    current = as_map(as_map(existing).get("spec")).get("selector") if existing is not None else None
    if isinstance(current, Mapping) and current:
        return json_copy(dict(current))
    selector = json_copy(dict(ud.selector))
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), SUBSET_NAME_LABEL: subset.name}
    return selector


def _apply_partition(kind: str, api_version: str, spec: JSON, target: SubsetTarget) -> None:
    strategy = dict_at(spec, "updateStrategy") if kind != "Deployment" else dict_at(spec, "strategy")
    if kind == "StatefulSet":
        kind_of = strategy.get("type") or ""
        if kind_of in ("", "RollingUpdate"):
            if api_version == "apps/v1":
                strategy["type"] = "RollingUpdate"
            dict_at(strategy, "rollingUpdate")["partition"] = target.partition
    elif kind == "CloneSet":  # v1beta1 layout (kruise_layout converts it for a v1alpha1 object)
        rolling = dict_at(strategy, "rollingUpdate")
        rolling["partition"] = target.partition
        if target.max_unavailable is not None:
            rolling["maxUnavailable"] = target.max_unavailable
    elif target.max_unavailable is not None and (strategy.get("type") or "RollingUpdate") == "RollingUpdate":
        dict_at(strategy, "rollingUpdate")["maxUnavailable"] = target.max_unavailable
    if not strategy:
        spec.pop("updateStrategy" if kind != "Deployment" else "strategy", None)


def _pod_template(spec: JSON, subset: UdSubset, labels: Mapping[str, str]) -> None:
    template = dict_at(spec, "template")
    metadata = dict_at(template, "metadata")
    metadata["labels"] = {**as_map(metadata.get("labels")), **labels}
    pod_spec = dict_at(template, "spec")
    attach_node_affinity(pod_spec, subset.node_selector_term)
    attach_tolerations(pod_spec, subset)
    if subset.patch is not None:
        try:
            patched = strategic_merge(template, subset.patch, POD_TEMPLATE_SCHEMA)
        except StrategicMergeError as exc:
            raise ConstructionError(f"subset {subset.name}: invalid patch: {exc}") from None
        patched_meta = patched.get("metadata")
        if not isinstance(patched_meta, dict):
            raise ConstructionError(f"subset {subset.name}: the patch removed the pod template's metadata")
        patched_meta["labels"] = {**as_map(patched_meta.get("labels")), **labels}
        spec["template"] = patched


def workload_metadata(
    ud: UnitedDeployment, subset: UdSubset, revision: str, existing: Mapping[str, Any]
) -> JSON:
    """The metadata `build_workload` gives an existing workload, without building the rest: the
    update triggers read only the metadata (`plan._needs_update`), and a steady pass over 1,000
    UnitedDeployments spent a quarter of its time building specs it then dropped (issue 28)."""
    obj: JSON = {
        "metadata": dict(as_map(existing.get("metadata")))
    }  # _metadata replaces, never edits, its values
    _metadata(obj, ud, subset, revision, uses_kruise_keys(existing))
    return dict(obj["metadata"])


def build_workload(
    ud: UnitedDeployment,
    subset: UdSubset,
    revision: str,
    target: SubsetTarget,
    existing: Mapping[str, Any] | None = None,
) -> JSON:
    """The subset workload as it should be; `existing` is never modified."""
    template = ud.template
    if existing is not None:
        # Decoded JSON: json_copy, a fraction of deepcopy's cost; the spec is built anew below, so
        # the existing one (the pod template: most of the object) is not copied.
        obj: JSON = json_copy({key: value for key, value in existing.items() if key != "spec"})
    else:
        obj = {
            "apiVersion": template.api_version,
            "kind": template.kind,
            "metadata": {"generateName": name_prefix(ud.name, subset.name)},
        }
    kruise_too = uses_kruise_keys(existing)
    _metadata(obj, ud, subset, revision, kruise_too)
    spec = json_copy(dict(template.spec))
    if template.kind == "CloneSet":
        spec = kruise_layout.convert_spec(spec, kruise_layout.BETA)
    spec["selector"] = _selector(ud, subset, existing)
    spec["replicas"] = target.replicas
    _apply_partition(template.kind, template.api_version, spec, target)
    _pod_template(spec, subset, _subset_labels(subset.name, revision, kruise_too))
    obj["spec"] = spec
    return (
        kruise_layout.to_version(obj, str(obj.get("apiVersion"))) if kruise_layout.is_cloneset(obj) else obj
    )
