"""The API resources the UnitedDeployment controller reads and writes.

Subset workloads are addressed by (group, kind): Deployments and StatefulSets
are built in; Kruise's CloneSet and Advanced StatefulSet are used only where
their CRDs are installed, at a version the CRD serves (the plan names
`apps.kruise.io/v1beta1`; a cluster serving only `v1alpha1` CloneSets gets them
at that version, the fields being the same).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.apiclient import CRDS, DEPLOYMENTS, STATEFULSETS, KubeClient, KubeError, Resource
from py_engine.model.ud_constants import UD_API_VERSION, UD_KIND, UD_PLURAL

UNITED_DEPLOYMENTS = Resource.custom(UD_API_VERSION.split("/")[0], UD_API_VERSION.split("/")[1], UD_PLURAL,
                                     kind=UD_KIND)
CONTROLLER_REVISIONS = Resource("apps", "v1", "controllerrevisions", True, "ControllerRevision")
KRUISE_GROUP = "apps.kruise.io"
_KRUISE_PLURALS = {"CloneSet": "clonesets", "StatefulSet": "statefulsets"}

WorkloadKey = tuple[str, str]


def served_versions(crd: Mapping[str, Any]) -> list[str]:
    """The versions a CRD serves, storage version first."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), Mapping) else {}
    versions = [v for v in (spec or {}).get("versions") or [] if isinstance(v, Mapping) and v.get("served", True)]
    ordered = sorted(versions, key=lambda v: not v.get("storage", False))
    return [str(v.get("name")) for v in ordered]


def kruise_resource(kind: str, versions: list[str]) -> Resource | None:
    """The resource for a Kruise workload kind: v1beta1 when served, else the storage version."""
    if not versions:
        return None
    version = "v1beta1" if "v1beta1" in versions else versions[0]
    return Resource(KRUISE_GROUP, version, _KRUISE_PLURALS[kind], True, kind)


def workload_resources(client: KubeClient) -> dict[WorkloadKey, Resource]:
    """(group, kind) -> resource for the four subset kinds this cluster serves."""
    found: dict[WorkloadKey, Resource] = {("apps", "Deployment"): DEPLOYMENTS, ("apps", "StatefulSet"): STATEFULSETS}
    for kind, plural in _KRUISE_PLURALS.items():
        try:
            crd = client.get(CRDS, None, f"{plural}.{KRUISE_GROUP}", timeout=5.0)
        except KubeError:
            continue
        resource = kruise_resource(kind, served_versions(crd))
        if resource is not None:
            found[(KRUISE_GROUP, kind)] = resource
    return found


def typed(obj: Mapping[str, Any], resource: Resource) -> dict[str, Any]:
    """`obj` with `apiVersion` and `kind` (list items may lack them; the planner reads both)."""
    if obj.get("apiVersion") and obj.get("kind"):
        return dict(obj)
    return {**obj, "apiVersion": resource.api_version, "kind": resource.kind}


def _minimal_crd(kind: str, versions: list[tuple[str, bool]]) -> dict[str, Any]:
    plural = _KRUISE_PLURALS[kind]
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{KRUISE_GROUP}"},
        "spec": {
            "group": KRUISE_GROUP, "scope": "Namespaced",
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
            "versions": [{
                "name": name, "served": True, "storage": storage,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                         "statusReplicasPath": ".status.replicas",
                                                         "labelSelectorPath": ".status.labelSelector"}},
            } for name, storage in versions],
        },
    }


def kruise_workload_crds() -> list[dict[str, Any]]:
    """Minimal CRDs (schemaless) for Kruise's CloneSet (served at v1alpha1, as Kruise serves it)
    and Advanced StatefulSet (v1beta1 storage, v1alpha1 too), so a cluster without Kruise can
    store the subset workloads of cloneSetTemplate and advancedStatefulSetTemplate."""
    return [_minimal_crd("CloneSet", [("v1alpha1", True)]),
            _minimal_crd("StatefulSet", [("v1beta1", True), ("v1alpha1", False)])]
