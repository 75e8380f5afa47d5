"""OpenAPI v3 documents: `/openapi/v3` and one document per group/version.

What clients use them for, and what is served:

* kubectl's field-validation probe looks for a `fieldValidation` query
  parameter on each resource's PATCH and PUT; every served resource has both,
  so kubectl leaves validation to the server (`fieldValidation=Strict`).
* `kubectl explain` finds the schema whose `x-kubernetes-group-version-kind`
  names the kind. Custom resources get the version's `openAPIV3Schema`, with
  `metadata` pointing at `ObjectMeta` and `apiVersion`/`kind` described, as
  kube-apiserver publishes them. Built-in kinds have no schema here (the
  emulator does not carry Kubernetes' API definitions), so `kubectl explain
  pods` reports that it cannot find the resource instead of explaining it.
* PATCH operations declare no request body, so `kubectl apply` computes
  strategic merge patches from its compiled-in types (built-in kinds) and JSON
  merge patches for custom resources, as it does against kube-apiserver for
  resources without strategic-merge metadata.

Each group/version's URL in the root carries a hash of its document, so a CRD
added or changed later is seen by clients that cache by URL.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from py_engine.sim.interface import JSON
from py_engine.sim.resources import ResourceDef

__all__ = ["openapi_v3_group_version", "openapi_v3_root"]

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

_API_VERSION_DESC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values."
)
_KIND_DESC = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer "
    "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase."
)
_METADATA_DESC = "Standard object's metadata."

_STRING_MAP: JSON = {"type": "object", "additionalProperties": {"type": "string", "default": ""}}

_OBJECT_META_SCHEMA: JSON = {
    "type": "object",
    "description": "ObjectMeta is metadata that all persisted resources must have, "
    "which includes all objects users must create.",
    "properties": {
        "name": {"type": "string", "description": "Name must be unique within a namespace."},
        "generateName": {
            "type": "string",
            "description": "An optional prefix used by the server to generate a "
            "unique name, used when name is not provided.",
        },
        "namespace": {
            "type": "string",
            "description": "Namespace defines the space within which each name must be unique.",
        },
        "uid": {
            "type": "string",
            "description": "UID is the unique in time and space value for this object.",
        },
        "resourceVersion": {
            "type": "string",
            "description": "An opaque value that represents the internal version of this object.",
        },
        "generation": {
            "type": "integer",
            "format": "int64",
            "description": "A sequence number representing a specific generation of the desired state.",
        },
        "creationTimestamp": {
            "type": "string",
            "format": "date-time",
            "description": "The server time when this object was created.",
        },
        "deletionTimestamp": {
            "type": "string",
            "format": "date-time",
            "description": "The time after which this resource will be deleted.",
        },
        "deletionGracePeriodSeconds": {
            "type": "integer",
            "format": "int64",
            "description": "Seconds allowed for this object to gracefully terminate.",
        },
        "labels": {
            **_STRING_MAP,
            "description": "Map of string keys and values that can be used to organize "
            "and categorize (scope and select) objects.",
        },
        "annotations": {
            **_STRING_MAP,
            "description": "Unstructured key value map stored with a resource that "
            "may be set by external tools.",
        },
        "finalizers": {
            "type": "array",
            "items": {"type": "string", "default": ""},
            "description": "Must be empty before the object is deleted from the registry.",
        },
        "ownerReferences": {
            "type": "array",
            "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "description": "List of objects depended by this object.",
        },
    },
}


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _schema_name(rd: ResourceDef) -> str:
    """kube-apiserver's name for a CRD's schema: the group reversed, then version and kind."""
    reversed_group = ".".join(reversed(rd.group.split(".")))
    return f"{reversed_group}.{rd.version}.{rd.kind}"


def _crd_schema(rd: ResourceDef) -> JSON:
    schema: JSON = copy.deepcopy(rd.schema) if rd.schema else {"type": "object"}
    props: JSON = dict(schema.get("properties") or {})
    props["apiVersion"] = {
        **(props.get("apiVersion") or {"type": "string"}),
        "description": _API_VERSION_DESC,
    }
    props["kind"] = {**(props.get("kind") or {"type": "string"}), "description": _KIND_DESC}
    props["metadata"] = {
        "allOf": [{"$ref": f"#/components/schemas/{OBJECT_META}"}],
        "description": _METADATA_DESC,
    }
    schema["properties"] = props
    schema["x-kubernetes-group-version-kind"] = [{"group": rd.group, "version": rd.version, "kind": rd.kind}]
    return schema


def openapi_v3_group_version(defs: Iterable[ResourceDef], group: str, version: str) -> JSON | None:
    """The document of one group/version; None when nothing is served there."""
    mine = sorted((d for d in defs if d.group == group and d.version == version), key=lambda d: d.plural)
    if not mine:
        return None
    prefix = "/" + _gv_path(group, version)
    param = {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    paths: JSON = {}
    schemas: JSON = {}
    for d in mine:
        item = (
            f"{prefix}/namespaces/{{namespace}}/{d.plural}/{{name}}"
            if d.namespaced
            else f"{prefix}/{d.plural}/{{name}}"
        )
        gvk = {"group": group, "version": version, "kind": d.kind}
        paths[item] = {
            "patch": {
                "operationId": f"patch{d.kind}",
                "parameters": [param],
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
            },
            "put": {
                "operationId": f"replace{d.kind}",
                "parameters": [param],
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "put",
                "x-kubernetes-group-version-kind": gvk,
            },
        }
        if d.crd:
            schemas[_schema_name(d)] = _crd_schema(d)
            schemas[OBJECT_META] = _OBJECT_META_SCHEMA
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (spreadgate emulator)", "version": "v1.30.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _digest(doc: Any) -> str:
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:128].upper()


def openapi_v3_root(defs: Iterable[ResourceDef]) -> JSON:
    """`/openapi/v3`: one entry per group/version, its URL carrying a hash of its document."""
    all_defs = list(defs)
    out: JSON = {}
    for g, v in sorted({(d.group, d.version) for d in all_defs}):
        doc = openapi_v3_group_version(all_defs, g, v)
        path = _gv_path(g, v)
        out[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={_digest(doc)}"}
    return {"paths": out}
