"""The API resources the UnitedDeployment controller reads and writes.

Subset workloads are addressed by (group, kind): Deployments and StatefulSets
are built in; Kruise's CloneSet and Advanced StatefulSet are used only where
their CRDs are installed, at a version the CRD serves (the plan names
`apps.kruise.io/v1beta1`; a cluster serving only `v1alpha1` CloneSets gets them
at that version, in that version's layout: `py_engine.uniteddeployment.controller.kruise_layout`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.apiclient import CRDS, DEPLOYMENTS, STATEFULSETS, KubeClient, KubeError, Resource
from py_engine.model.ud_constants import UD_API_VERSION, UD_KIND, UD_PLURAL

UNITED_DEPLOYMENTS = Resource.custom(
    UD_API_VERSION.split("/")[0], UD_API_VERSION.split("/")[1], UD_PLURAL, kind=UD_KIND
)
CONTROLLER_REVISIONS = Resource("apps", "v1", "controllerrevisions", True, "ControllerRevision")
KRUISE_GROUP = "apps.kruise.io"
_KRUISE_PLURALS = {"CloneSet": "clonesets", "StatefulSet": "statefulsets"}

WorkloadKey = tuple[str, str]


def served_versions(crd: Mapping[str, Any]) -> list[str]:
    """The versions a CRD serves, storage version first."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), Mapping) else {}
    versions = [
        v for v in (spec or {}).get("versions") or [] if isinstance(v, Mapping) and v.get("served", True)
    ]
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
    found: dict[WorkloadKey, Resource] = {
        ("apps", "Deployment"): DEPLOYMENTS,
        ("apps", "StatefulSet"): STATEFULSETS,
    }
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


def _minimal_crd(
    kind: str, versions: list[tuple[str, bool]], schemas: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    plural = _KRUISE_PLURALS[kind]
    schemaless = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{KRUISE_GROUP}"},
        "spec": {
            "group": KRUISE_GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
            "versions": [
                {
                    "name": name,
                    "served": True,
                    "storage": storage,
                    "schema": {"openAPIV3Schema": (schemas or {}).get(name, schemaless)},
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.labelSelector",
                        },
                    },
                }
                for name, storage in versions
            ],
        },
    }


def _object(properties: dict[str, Any] | None = None, *, preserve: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if properties is not None:
        schema["properties"] = properties
    if preserve:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    return schema


def _typed(kind: str) -> dict[str, Any]:
    return {"type": kind}


_INT_OR_STRING: dict[str, Any] = {
    "x-kubernetes-int-or-string": True,
    "anyOf": [{"type": "integer"}, {"type": "string"}],
}


def _cloneset_schema(version: str) -> dict[str, Any]:
    """Kruise's CloneSet schema at `version`, reduced to the structure of the fields a
    UnitedDeployment controller or a user of the embedded cluster touches (the pod
    template stays schemaless, as in Kruise's CRD). At v1beta1 the update knobs live in
    `updateStrategy.rollingUpdate`, at v1alpha1 directly in `updateStrategy`, so a field
    written in the other version's place is pruned
    (py_engine/uniteddeployment/controller/kruise_layout.py)."""
    knobs: dict[str, Any] = {
        "partition": _INT_OR_STRING,
        "maxUnavailable": _INT_OR_STRING,
        "maxSurge": _INT_OR_STRING,
        "paused": _typed("boolean"),
        "priorityStrategy": _object(preserve=True),
        "scatterStrategy": {"type": "array", "items": _object(preserve=True)},
        "inPlaceUpdateStrategy": _object(preserve=True),
    }
    if version == "v1beta1":
        strategy = _object(
            {
                "type": _typed("string"),
                "rollingUpdate": _object({**knobs, "podUpdatePolicy": _typed("string")}),
            }
        )
        pvc = {"enablePVCReuse": _typed("boolean"), "excludePreparingDelete": _typed("boolean")}
    else:
        strategy = _object({"type": _typed("string"), **knobs})
        pvc = {"disablePVCReuse": _typed("boolean")}
    selector = _object(
        {
            "matchLabels": {"type": "object", "additionalProperties": _typed("string")},
            "matchExpressions": {
                "type": "array",
                "items": _object(
                    {
                        "key": _typed("string"),
                        "operator": _typed("string"),
                        "values": {"type": "array", "items": _typed("string")},
                    }
                ),
            },
        }
    )
    spec = _object(
        {
            "replicas": _typed("integer"),
            "selector": selector,
            "template": _object(preserve=True),
            "volumeClaimTemplates": {"type": "array", "items": _object(preserve=True)},
            "scaleStrategy": _object(
                {
                    "podsToDelete": {"type": "array", "items": _typed("string")},
                    "maxUnavailable": _INT_OR_STRING,
                    **pvc,
                }
            ),
            "updateStrategy": strategy,
            "revisionHistoryLimit": _typed("integer"),
            "minReadySeconds": _typed("integer"),
            "progressDeadlineSeconds": _typed("integer"),
            "lifecycle": _object(preserve=True),
        }
    )
    counts = (
        "observedGeneration",
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "updatedReplicas",
        "updatedReadyReplicas",
        "updatedAvailableReplicas",
        "expectedUpdatedReplicas",
        "collisionCount",
    )
    status = _object(
        {
            **{name: _typed("integer") for name in counts},
            **{name: _typed("string") for name in ("updateRevision", "currentRevision", "labelSelector")},
            "conditions": {
                "type": "array",
                "items": _object(
                    {
                        name: _typed("string")
                        for name in ("type", "status", "lastTransitionTime", "reason", "message")
                    }
                ),
            },
        }
    )
    return _object(
        {
            "apiVersion": _typed("string"),
            "kind": _typed("string"),
            "metadata": _typed("object"),
            "spec": spec,
            "status": status,
        }
    )


def kruise_workload_crds() -> list[dict[str, Any]]:
    """Minimal CRDs for Kruise's CloneSet (v1beta1 storage and v1alpha1, each with its
    structural schema, so the embedded cluster prunes a field written in the wrong
    version's place as a real API server does) and Advanced StatefulSet (v1beta1
    storage, v1alpha1 too, schemaless: its layout is the same at both), so a cluster
    without Kruise can store the subset workloads of cloneSetTemplate and
    advancedStatefulSetTemplate."""
    return [
        _minimal_crd(
            "CloneSet",
            [("v1beta1", True), ("v1alpha1", False)],
            {v: _cloneset_schema(v) for v in ("v1beta1", "v1alpha1")},
        ),
        _minimal_crd("StatefulSet", [("v1beta1", True), ("v1alpha1", False)]),
    ]
