"""Finding the REST resource that serves a kind, from the API server's discovery documents.

Custom workload kinds are named by group and kind only (`--custom-workload
GROUP/KIND[=REPLICAS_PATH]`, Kruise's whitelist), so a process that must list and
watch them asks discovery for the plural, the version and the scope: the group's
preferred version first, then its other versions, as `kubectl` resolves a kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.apiclient.client import KubeClient
from py_engine.apiclient.errors import NotFound
from py_engine.apiclient.resources import Resource


def _versions(group_doc: Mapping[str, Any]) -> list[str]:
    preferred = group_doc.get("preferredVersion")
    found = [str(preferred["version"])] if isinstance(preferred, Mapping) and preferred.get("version") else []
    for entry in group_doc.get("versions") or []:
        version = entry.get("version") if isinstance(entry, Mapping) else entry  # /api lists plain strings
        if isinstance(version, str) and version and version not in found:
            found.append(version)
    return found


def resource_in_listing(listing: Mapping[str, Any], group: str, version: str, kind: str) -> Resource | None:
    """The resource serving `kind` in one group version's discovery listing (its `resources`
    array; sub-resources such as `deployments/scale` are skipped), or None."""
    for entry in listing.get("resources") or []:
        if (
            isinstance(entry, Mapping)
            and entry.get("kind") == kind
            and "/" not in str(entry.get("name") or "/")
        ):
            return Resource(group, version, str(entry["name"]), bool(entry.get("namespaced", True)), kind)
    return None


def discover_resource(client: KubeClient, group: str, kind: str, *, timeout: float = 5.0) -> Resource | None:
    """The resource serving `kind` in `group`, or None when the cluster does not serve it.

    Other API errors (unreachable, forbidden) raise `KubeError`: the caller cannot tell
    "not served" from them, and must not decide on a guess.
    """
    try:
        group_doc = client.request("GET", f"/apis/{group}" if group else "/api", timeout=timeout)
    except NotFound:
        return None
    for version in _versions(group_doc):
        try:
            listing = client.request(
                "GET", f"/apis/{group}/{version}" if group else f"/api/{version}", timeout=timeout
            )
        except NotFound:
            continue
        found = resource_in_listing(listing, group, version, kind)
        if found is not None:
            return found
    return None
