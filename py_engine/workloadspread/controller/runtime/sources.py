"""Where a sync reads the cluster from: watch caches (the running loop) or fresh lists.

Both implement `Source`, so `sync` is the same code for the long-running
controller (`CachedSource`: one `WatchCache` per resource, 410 handled by the
cache) and for `--once` and the stepped simulator (`ListedSource`: every read
comes from lists taken at `refresh()`, so a sync sees exactly the API server's
state at that moment, with no watch lag to wait for).

`remember(obj)` puts an object the controller has just written back into the
source, so the next sync starts from it rather than from an older copy.
"""

from __future__ import annotations

import logging
from typing import Protocol

from py_engine.apiclient import (
    CRDS,
    NODES,
    PODS,
    REPLICASETS,
    KubeClient,
    KubeError,
    Resource,
    WatchCache,
)
from py_engine.apiclient.discovery import discover_resource
from py_engine.apiclient.resources import BUILTIN_WORKLOADS, OPTIONAL_WORKLOADS
from py_engine.model import KIND
from py_engine.model.resource import SPREADS
from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist
from py_engine.runtime.cachegroup import CacheGroup, SharedCaches
from py_engine.runtime.listing import JSON, ListedLists, by_name
from py_engine.semantics.objects import api_group, meta
from py_engine.workloadspread.controller.podlisting import PodList, ReplicaSetList

log = logging.getLogger(__name__)

__all__ = ["JSON", "CachedSource", "ListedSource", "Source", "by_name", "crd_exists", "workload_resources"]


class Source(Protocol):
    """What a sync reads; every object is shared and read-only. `whitelist`: the custom
    workload kinds it reads besides the built-in ones (`--custom-workload`)."""

    whitelist: Whitelist

    def spreads(self) -> list[JSON]: ...

    def spread(self, namespace: str, name: str) -> JSON | None: ...

    def pods(self, namespace: str) -> list[JSON]: ...

    def replica_sets(self, namespace: str) -> list[JSON]: ...

    def nodes(self) -> dict[str, JSON]: ...

    def workload(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None: ...

    def remember(self, obj: JSON) -> None: ...


def crd_exists(client: KubeClient, resource: Resource) -> bool:
    try:
        client.get(CRDS, None, f"{resource.plural}.{resource.group}", timeout=5.0)
    except KubeError:
        return False
    return True


def workload_resources(
    client: KubeClient, whitelist: Whitelist = EMPTY_WHITELIST
) -> dict[tuple[str, str], Resource]:
    """Built-in workload kinds, plus Kruise's when their CRDs are installed, plus the custom kinds
    of `whitelist` the cluster serves (found by discovery; one it does not serve is logged and
    not read, so its spreads report WorkloadNotFound). Raises `KubeError` when discovery fails."""
    found = dict(BUILTIN_WORKLOADS)
    for key, resource in OPTIONAL_WORKLOADS.items():
        if crd_exists(client, resource):
            found[key] = resource
    for custom in whitelist.workloads:
        if custom.key not in found:
            served = discover_resource(client, custom.group, custom.kind)
            if served is None:
                log.warning("custom workload kind %s/%s is not served by the cluster: not read", *custom.key)
            else:
                found[custom.key] = served
    return found


class CachedSource(CacheGroup):
    """Watch caches of spreads, pods, nodes and workloads (see the module docstring); started,
    stopped and waited for as a `CacheGroup`, `shared` with the other controllers of a Manager."""

    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str | None = None,
        watch_timeout_seconds: int = 300,
        whitelist: Whitelist = EMPTY_WHITELIST,
        shared: SharedCaches | None = None,
    ) -> None:
        super().__init__(
            client, namespace=namespace, watch_timeout_seconds=watch_timeout_seconds, shared=shared
        )
        self.whitelist = whitelist
        self.spread_cache = self.watch(SPREADS, "controller-workloadspreads")
        self.pod_cache = self.watch(PODS, "controller-pods")
        self.node_cache = self.watch(NODES, "controller-nodes")
        self.workload_caches: dict[tuple[str, str], WatchCache] = {
            key: self.watch(resource, f"controller-{resource.plural}.{resource.group or 'core'}")
            for key, resource in workload_resources(client, whitelist).items()
        }
        self._pod_lists: dict[str, tuple[int, PodList]] = {}
        self._replica_set_lists: dict[str, tuple[int, ReplicaSetList]] = {}
        self._nodes: tuple[int, dict[str, JSON]] | None = None

    def caches(self) -> list[WatchCache]:
        return [self.spread_cache, self.pod_cache, self.node_cache, *self.workload_caches.values()]

    def spreads(self) -> list[JSON]:
        return by_name(self.spread_cache.list())

    def spread(self, namespace: str, name: str) -> JSON | None:
        return self.spread_cache.get(namespace, name)

    def pods(self, namespace: str) -> list[JSON]:
        """The namespace's pods, sorted and owner-indexed once per cache version (shared, read-only)."""
        version = (
            self.pod_cache.version
        )  # read before listing: a newer list under an older version only rebuilds
        memo = self._pod_lists.get(namespace)
        if memo is not None and memo[0] == version:
            return memo[1]
        pods = PodList(by_name(self.pod_cache.list(namespace)))
        self._pod_lists[namespace] = (version, pods)
        return pods

    def replica_sets(self, namespace: str) -> list[JSON]:
        """The namespace's ReplicaSets, sorted and controller-indexed once per cache version
        (shared, read-only): a sort and a scan per sync grew with the spreads (issue 28)."""
        cache = self.workload_caches.get(("apps", "ReplicaSet"))
        if cache is None:
            return []
        version = cache.version
        memo = self._replica_set_lists.get(namespace)
        if memo is not None and memo[0] == version:
            return memo[1]
        replica_sets = ReplicaSetList(by_name(cache.list(namespace)))
        self._replica_set_lists[namespace] = (version, replica_sets)
        return replica_sets

    def nodes(self) -> dict[str, JSON]:
        """Nodes by name, once per cache version (shared, read-only)."""
        version = self.node_cache.version
        memo = self._nodes
        if memo is not None and memo[0] == version:
            return memo[1]
        nodes = {str(meta(n).get("name")): n for n in self.node_cache.list()}
        self._nodes = (version, nodes)
        return nodes

    def workload(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        cache = self.workload_caches.get((api_group(api_version), kind))
        return cache.get(namespace, name) if cache is not None else None

    def remember(self, obj: JSON) -> None:
        if obj.get("kind") == KIND:
            self.spread_cache.upsert(obj)


class ListedSource(ListedLists):
    """Reads from lists taken at the last `refresh()` (see the module docstring)."""

    def __init__(
        self, client: KubeClient, *, namespace: str | None = None, whitelist: Whitelist = EMPTY_WHITELIST
    ) -> None:
        super().__init__(client, namespace=namespace)
        self.whitelist = whitelist
        self._resources = workload_resources(client, whitelist)
        self._pod_lists: dict[str, PodList] = {}
        self._replica_set_lists: dict[str, ReplicaSetList] = {}

    def refresh(self) -> None:
        """List every resource a sync reads (raises `KubeError` when the API fails)."""
        self._replace(self._listing({SPREADS, PODS, NODES, *self._resources.values()}))

    def _lists_replaced(self) -> None:
        self._pod_lists = {}
        self._replica_set_lists = {}

    def spreads(self) -> list[JSON]:
        return self._items(SPREADS)

    def spread(self, namespace: str, name: str) -> JSON | None:
        return self._item(SPREADS, namespace, name)

    def pods(self, namespace: str) -> list[JSON]:
        """One owner-indexed list per namespace and refresh (shared, read-only)."""
        return self._derived(self._pod_lists, namespace, lambda: PodList(self._items(PODS, namespace)))

    def replica_sets(self, namespace: str) -> list[JSON]:
        """One controller-indexed list per namespace and refresh (shared, read-only)."""
        return self._derived(
            self._replica_set_lists, namespace, lambda: ReplicaSetList(self._items(REPLICASETS, namespace))
        )

    def nodes(self) -> dict[str, JSON]:
        return {str(meta(n).get("name")): n for n in self._items(NODES)}

    def workload(self, api_version: str, kind: str, namespace: str, name: str) -> JSON | None:
        resource = self._resources.get((api_group(api_version), kind))
        if resource is None:
            return None
        return self._item(resource, namespace, name)

    def remember(self, obj: JSON) -> None:
        if obj.get("kind") != KIND:
            return
        key = (meta(obj).get("namespace"), meta(obj).get("name"))
        with self._lock:
            items = self._lists.get(SPREADS, [])
            self._lists[SPREADS] = [
                obj if (meta(o).get("namespace"), meta(o).get("name")) == key else o for o in items
            ]
