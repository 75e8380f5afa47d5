"""Discovery documents and kubectl's server-side Table output.

The official Python client needs nothing but the resource paths; kubectl
first reads `/api`, `/apis` and each group/version's `APIResourceList` to map
kinds and short names to URLs, then asks for `meta.k8s.io/v1` Tables to print
`kubectl get`. Aggregated discovery (apidiscovery.k8s.io/v2) is not offered:
clients fall back to the legacy documents when the server answers plain JSON.
`/openapi/v2` and `/openapi/v3` answer 404, which kubectl tolerates.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from py_engine.k8s.timeutil import TimestampError, parse_time
from py_engine.sim.interface import JSON
from py_engine.sim.resources import ResourceDef

SERVER_VERSION: JSON = {
    "major": "1", "minor": "30", "gitVersion": "v1.30.0-spreadgate", "gitCommit": "0" * 40,
    "gitTreeState": "clean", "buildDate": "2024-06-01T00:00:00Z", "goVersion": "go1.22.0",
    "compiler": "gc", "platform": "linux/amd64",
}

_SUBRESOURCE_KIND = {
    "scale": ("autoscaling", "v1", "Scale", ["get", "patch", "update"]),
    "eviction": ("policy", "v1", "Eviction", ["create"]),
    "binding": ("", "v1", "Binding", ["create"]),
}


def api_versions(server_address: str) -> JSON:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _groups(defs: Iterable[ResourceDef]) -> dict[str, list[ResourceDef]]:
    out: dict[str, list[ResourceDef]] = {}
    for d in defs:
        if d.group:
            out.setdefault(d.group, []).append(d)
    return out


def _group_doc(group: str, defs: list[ResourceDef]) -> JSON:
    versions: list[str] = []
    preferred = ""
    for d in defs:
        if d.version not in versions:
            versions.append(d.version)
        if d.crd and d.storage_version:
            preferred = d.storage_version
    preferred = preferred or versions[0]
    return {
        "kind": "APIGroup", "apiVersion": "v1", "name": group,
        "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
        "preferredVersion": {"groupVersion": f"{group}/{preferred}", "version": preferred},
    }


def api_group_list(defs: Iterable[ResourceDef]) -> JSON:
    groups = _groups(defs)
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_doc(g, groups[g]) for g in sorted(groups)]}


def api_group(defs: Iterable[ResourceDef], group: str) -> JSON | None:
    mine = _groups(defs).get(group)
    return _group_doc(group, mine) if mine else None


def resource_list(defs: Iterable[ResourceDef], group: str, version: str) -> JSON | None:
    mine = sorted((d for d in defs if d.group == group and d.version == version), key=lambda d: d.plural)
    if not mine:
        return None
    resources: list[JSON] = []
    for d in mine:
        entry: JSON = {"name": d.plural, "singularName": d.singular or d.kind.lower(),
                       "namespaced": d.namespaced, "kind": d.kind, "verbs": list(d.verbs)}
        if d.short_names:
            entry["shortNames"] = list(d.short_names)
        if d.categories:
            entry["categories"] = list(d.categories)
        resources.append(entry)
        for sub in sorted(d.subresources):
            if sub == "status":
                resources.append({"name": f"{d.plural}/status", "singularName": "", "namespaced": d.namespaced,
                                  "kind": d.kind, "verbs": ["get", "patch", "update"]})
            else:
                g, v, k, verbs = _SUBRESOURCE_KIND[sub]
                sub_entry: JSON = {"name": f"{d.plural}/{sub}", "singularName": "", "namespaced": d.namespaced,
                                   "kind": k, "verbs": verbs, "version": v}
                if g:
                    sub_entry["group"] = g
                resources.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


# ------------------------------------------------------------------ Tables

def _age(meta: JSON, now: datetime) -> str:
    ts = meta.get("creationTimestamp")
    if not isinstance(ts, str):
        return "<unknown>"
    try:
        secs = int((now - parse_time(ts)).total_seconds())
    except TimestampError:
        return "<unknown>"
    secs = max(secs, 0)
    if secs < 120:
        return f"{secs}s"
    if secs < 7200:
        return f"{secs // 60}m"
    if secs < 172800:
        return f"{secs // 3600}h"
    return f"{secs // 86400}d"


def _cells(rd: ResourceDef, obj: JSON, now: datetime) -> tuple[list[str], list[Any]]:
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    spec = obj.get("spec") or {}
    age = _age(meta, now)
    name = meta.get("name", "")
    if rd.kind == "Pod" and not rd.crd:
        cs = status.get("containerStatuses") or []
        ready = sum(1 for c in cs if c.get("ready"))
        total = len(spec.get("containers") or [])
        restarts = sum(int(c.get("restartCount", 0)) for c in cs)
        phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "")
        return (["Name", "Ready", "Status", "Restarts", "Age", "Node"],
                [name, f"{ready}/{total}", phase, restarts, age, spec.get("nodeName") or "<none>"])
    if rd.kind in ("Namespace", "Node") and not rd.crd:
        if rd.kind == "Node":
            cond = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
            st = "Ready" if cond and cond.get("status") == "True" else "NotReady"
        else:
            st = status.get("phase", "")
        return ["Name", "Status", "Age"], [name, st, age]
    if rd.kind in ("Deployment", "ReplicaSet", "StatefulSet") and not rd.crd:
        return (["Name", "Ready", "Age"],
                [name, f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}", age])
    return ["Name", "Age"], [name, age]


def to_table(rd: ResourceDef, objects: list[JSON], now: datetime, rv: str, include_object: str) -> JSON:
    """A `meta.k8s.io/v1` Table; rows carry PartialObjectMetadata unless asked for the object."""
    sample = objects[0] if objects else {"metadata": {}}
    columns, _ = _cells(rd, sample, now)
    rows = []
    for obj in objects:
        _, cells = _cells(rd, obj, now)
        if include_object == "Object":
            row_obj: JSON | None = obj
        elif include_object == "None":
            row_obj = None
        else:
            row_obj = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                       "metadata": obj.get("metadata") or {}}
        rows.append({"cells": cells, "object": row_obj})
    return {
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
        "columnDefinitions": [
            {"name": c, "type": "integer" if c == "Restarts" else "string",
             "format": "name" if c == "Name" else "", "description": c, "priority": 1 if c == "Node" else 0}
            for c in columns],
        "rows": rows,
    }


# ---------------------------------------------------------------- OpenAPI v3

def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def openapi_v3_root(defs: Iterable[ResourceDef]) -> JSON:
    """`/openapi/v3`: one entry per group/version, as the real server lists them.

    Only enough OpenAPI is served for kubectl's field-validation probe
    (`fieldValidation` on each resource's PATCH); there are no schemas, so
    kubectl relies on the server (which does not enforce unknown fields).
    """
    gvs = sorted({(d.group, d.version) for d in defs})
    return {"paths": {_gv_path(g, v): {"serverRelativeURL": f"/openapi/v3/{_gv_path(g, v)}?hash={abs(hash((g, v)))}"}
                      for g, v in gvs}}


def openapi_v3_group_version(defs: Iterable[ResourceDef], group: str, version: str) -> JSON | None:
    mine = [d for d in defs if d.group == group and d.version == version]
    if not mine:
        return None
    prefix = "/" + _gv_path(group, version)
    param = {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    paths: JSON = {}
    for d in mine:
        item = f"{prefix}/namespaces/{{namespace}}/{d.plural}/{{name}}" if d.namespaced else f"{prefix}/{d.plural}/{{name}}"
        gvk = {"group": group, "version": version, "kind": d.kind}
        paths[item] = {
            "patch": {"operationId": f"patch{d.kind}", "parameters": [param],
                      "responses": {"200": {"description": "OK"}},
                      "x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk},
            "put": {"operationId": f"replace{d.kind}", "parameters": [param],
                    "responses": {"200": {"description": "OK"}},
                    "x-kubernetes-action": "put", "x-kubernetes-group-version-kind": gvk},
        }
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (spreadgate emulator)", "version": "v1.30.0"},
            "paths": paths, "components": {"schemas": {}}}
