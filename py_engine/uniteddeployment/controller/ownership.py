"""Which objects of a snapshot belong to a UnitedDeployment.

An object is the UnitedDeployment's when its controller owner reference names it
(by uid; by kind and name when either uid is missing, as in hand-written
snapshots). An object without a controller owner is an orphan; one controlled by
anything else is never touched. An orphan workload is adopted only when it names
this UnitedDeployment (`names_ud`): the annotation recorded when a Spreadgate
UnitedDeployment created it, or the revision label Spreadgate and Kruise write
(`<ud-name>-<hash>`), so a workload of another team that merely matches the
selector is never taken over (docs/uniteddeployment.md, "Adoption").

Pods are attributed to the workload that controls them (`owns_pod`): directly,
or for a Deployment through a ReplicaSet named `<deployment>-<pod-template-hash>`;
a pod without a controller belongs to the workload whose selector matches it, as
the workload's own controller would adopt it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from py_engine.model.ud_constants import CREATED_BY_ANNOTATION, KRUISE_REVISION_LABEL, REVISION_LABEL, UD_KIND
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics import objects
from py_engine.semantics.labels import (
    Selector,
    SelectorError,
    labels_of,
    matches_label_selector,
    selector_from_label_selector,
)

Obj = Mapping[str, Any]
Ownership = Literal["owned", "orphan", "foreign"]
# The alphabet of Kubernetes' history hashes (the part of a revision name after `<ud-name>-`).
_REVISION_HASH = re.compile(r"^[bcdfghjklmnpqrstvwxz2456789]+$")
_POD_TEMPLATE_HASH = "pod-template-hash"


def controller_ref(obj: Obj) -> Mapping[str, Any] | None:
    refs = objects.meta(obj).get("ownerReferences")
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def _names(ref: Mapping[str, Any], owner: Obj, kind: str) -> bool:
    """Does the reference `ref` name `owner` (of `kind`)? By uid when both have one, else by name."""
    if ref.get("kind") != kind:
        return False
    uid, owner_uid = ref.get("uid"), objects.uid(owner)
    if isinstance(uid, str) and uid and owner_uid:
        return uid == owner_uid
    return ref.get("name") == objects.meta(owner).get("name")


def is_ours(ref: Mapping[str, Any], ud: UnitedDeployment) -> bool:
    uid = ref.get("uid")
    if ud.uid and isinstance(uid, str) and uid:
        return uid == ud.uid
    return ref.get("kind") == UD_KIND and ref.get("name") == ud.name


def ownership(obj: Obj, ud: UnitedDeployment) -> Ownership:
    ref = controller_ref(obj)
    if ref is None:
        return "orphan"
    return "owned" if is_ours(ref, ud) else "foreign"


def names_ud(obj: Obj, ud: UnitedDeployment) -> bool:
    """An orphan that names `ud`: Spreadgate's creation annotation, or a revision label
    (Spreadgate's or Kruise's) of the form `<ud-name>-<hash>`."""
    annotations = objects.meta(obj).get("annotations")
    if isinstance(annotations, Mapping) and annotations.get(CREATED_BY_ANNOTATION) == ud.name:
        return True
    labels = objects.labels(obj)
    prefix = f"{ud.name}-"
    for key in (REVISION_LABEL, KRUISE_REVISION_LABEL):
        value = labels.get(key)
        if isinstance(value, str) and value.startswith(prefix) and _REVISION_HASH.match(value[len(prefix) :]):
            return True
    return False


def selected(obj: Obj, ud: UnitedDeployment) -> bool:
    """In the UnitedDeployment's namespace and matched by its selector."""
    if objects.namespace(obj, default="") != ud.namespace:
        return False
    try:
        return matches_label_selector(ud.selector, labels_of(obj))
    except SelectorError:
        return False


def _workload_selector(workload: Obj) -> Selector | None:
    """The workload's parsed `spec.selector`; None when absent, empty or invalid (selects nothing)."""
    spec = workload.get("spec")
    selector = spec.get("selector") if isinstance(spec, Mapping) else None
    if not isinstance(selector, Mapping) or not selector:
        return None
    try:
        return selector_from_label_selector(selector)
    except SelectorError:
        return None


def owns_pod(workload: Obj, pod: Obj) -> bool:
    """Is `pod` the workload's (see the module docstring)? Same namespace required."""
    return pod_owner_test(workload)(pod)


def pod_owner_test(workload: Obj) -> Callable[[Obj], bool]:
    """`owns_pod(workload, ·)` with the workload's selector parsed once, for a scan of many pods
    (parsing it per pod was a third of a steady UnitedDeployment pass, issue 28)."""
    namespace = objects.namespace(workload, default="")
    kind = str(workload.get("kind") or "")
    group = objects.group_of(workload)
    parsed: list[Selector | None] = []  # parsed on the first ownerless pod

    def owns(pod: Obj) -> bool:
        if objects.namespace(pod, default="") != namespace:
            return False
        ref = controller_ref(pod)
        if ref is None:
            if not parsed:
                parsed.append(_workload_selector(workload))
            selector = parsed[0]
            return selector is not None and selector.matches(labels_of(pod))
        if kind == "Deployment" and ref.get("kind") == "ReplicaSet":
            return _through_replicaset(ref, workload, pod)
        if objects.api_group(ref.get("apiVersion")) != group:
            return False
        return _names(ref, workload, kind)

    return owns


def deployment_behind(ref: Mapping[str, Any], pod: Obj) -> str | None:
    """The name of the only Deployment that can control `pod` through the ReplicaSet `ref`
    names: `<deployment>-<pod-template-hash>` with the pod's hash, else the name up to its
    last dash; None when `ref` is not an apps ReplicaSet or the name does not end in the hash."""
    if ref.get("kind") != "ReplicaSet" or objects.api_group(ref.get("apiVersion")) != "apps":
        return None
    name = str(ref.get("name") or "")
    labels = objects.meta(pod).get("labels")
    pod_hash = labels.get(_POD_TEMPLATE_HASH) if isinstance(labels, Mapping) else None
    if isinstance(pod_hash, str) and pod_hash:
        suffix = f"-{pod_hash}"
        return name[: -len(suffix)] if name.endswith(suffix) else None
    return name.rpartition("-")[0]


def _through_replicaset(ref: Mapping[str, Any], deployment: Obj, pod: Obj) -> bool:
    return deployment_behind(ref, pod) == str(objects.meta(deployment).get("name") or "")


def released(obj: Obj, ud: UnitedDeployment) -> dict[str, Any]:
    """`obj` without the UnitedDeployment's controller reference (the release Kruise's ref manager writes)."""
    out = copy.deepcopy(dict(obj))
    metadata = out.setdefault("metadata", {})
    refs = metadata.get("ownerReferences")
    metadata["ownerReferences"] = (
        [r for r in refs if not (isinstance(r, Mapping) and r.get("controller") is True and is_ours(r, ud))]
        if isinstance(refs, list)
        else []
    )
    return out


def reference(obj: Obj) -> dict[str, Any]:
    """The identity of an object to delete: apiVersion, kind, namespace and name."""
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {"namespace": objects.namespace(obj, default=""), "name": objects.meta(obj).get("name")},
    }
