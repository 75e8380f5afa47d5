"""Discovery documents: `/api`, `/apis`, each group and each group/version.

The official Python client needs nothing but the resource paths; kubectl
first reads `/api`, `/apis` and each group/version's `APIResourceList` to map
kinds and short names to URLs. Aggregated discovery (apidiscovery.k8s.io/v2)
is not offered: clients fall back to the legacy documents when the server
answers plain JSON. Tables are built in `py_engine.sim.tables`, OpenAPI in
`py_engine.sim.openapi`; `/openapi/v2` answers 404, which kubectl tolerates
(it uses v3).
"""

from __future__ import annotations

from collections.abc import Iterable

from py_engine.sim.interface import JSON
from py_engine.sim.resources import ResourceDef

SERVER_VERSION: JSON = {
    "major": "1",
    "minor": "30",
    "gitVersion": "v1.30.0-spreadgate",
    "gitCommit": "0" * 40,
    "gitTreeState": "clean",
    "buildDate": "2024-06-01T00:00:00Z",
    "goVersion": "go1.22.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_SUBRESOURCE_KIND = {
    "scale": ("autoscaling", "v1", "Scale", ["get", "patch", "update"]),
    "eviction": ("policy", "v1", "Eviction", ["create"]),
    "binding": ("", "v1", "Binding", ["create"]),
}


def api_versions(server_address: str) -> JSON:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


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
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
        "preferredVersion": {"groupVersion": f"{group}/{preferred}", "version": preferred},
    }


def api_group_list(defs: Iterable[ResourceDef]) -> JSON:
    groups = _groups(defs)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group_doc(g, groups[g]) for g in sorted(groups)],
    }


def api_group(defs: Iterable[ResourceDef], group: str) -> JSON | None:
    mine = _groups(defs).get(group)
    return _group_doc(group, mine) if mine else None


def resource_list(defs: Iterable[ResourceDef], group: str, version: str) -> JSON | None:
    mine = sorted((d for d in defs if d.group == group and d.version == version), key=lambda d: d.plural)
    if not mine:
        return None
    resources: list[JSON] = []
    for d in mine:
        entry: JSON = {
            "name": d.plural,
            "singularName": d.singular or d.kind.lower(),
            "namespaced": d.namespaced,
            "kind": d.kind,
            "verbs": list(d.verbs),
        }
        if d.short_names:
            entry["shortNames"] = list(d.short_names)
        if d.categories:
            entry["categories"] = list(d.categories)
        resources.append(entry)
        for sub in sorted(d.subresources):
            if sub == "status":
                resources.append(
                    {
                        "name": f"{d.plural}/status",
                        "singularName": "",
                        "namespaced": d.namespaced,
                        "kind": d.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
            else:
                g, v, k, verbs = _SUBRESOURCE_KIND[sub]
                sub_entry: JSON = {
                    "name": f"{d.plural}/{sub}",
                    "singularName": "",
                    "namespaced": d.namespaced,
                    "kind": k,
                    "verbs": verbs,
                    "version": v,
                }
                if g:
                    sub_entry["group"] = g
                resources.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
