"""Where a UnitedDeployment sync reads the cluster from: watch caches or fresh lists.

Both implement `UnitedSource`. `CachedUnitedSource` (the running controller)
keeps one `WatchCache` per resource: UnitedDeployments, the subset workload
kinds the cluster serves, ControllerRevisions, pods and nodes. `ListedUnitedSource`
(`--once`, the virtual-time stack) reads lists taken at `refresh()`.

`remember(obj)` puts an object the controller has just written back into the
source, so the next sync starts from it: a workload created a moment ago must
not look missing (it would be created twice) because its watch event is late.

Pods are handed out per UnitedDeployment: those of its namespace carrying one
of its selector's `matchLabels` pairs (the smallest such group, from an index
built once per cache version), so a sync costs its own pods, not the namespace's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

from py_engine.kube import NODES, PODS, KubeClient, Resource, WatchCache
from py_engine.unitedctl.resources import (
    CONTROLLER_REVISIONS,
    UNITED_DEPLOYMENTS,
    WorkloadKey,
    group_of,
    typed,
    workload_resources,
)

JSON = dict[str, Any]


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    value = obj.get("metadata")
    return value if isinstance(value, Mapping) else {}


def by_name(objects: list[JSON]) -> list[JSON]:
    return sorted(objects, key=lambda o: (str(meta(o).get("namespace") or ""), str(meta(o).get("name") or "")))


class UnitedSource(Protocol):
    """What a UnitedDeployment sync reads; every object is shared and read-only."""

    resources: dict[WorkloadKey, Resource]

    def united_deployments(self) -> list[JSON]: ...

    def united_deployment(self, namespace: str, name: str) -> JSON | None: ...

    def workloads(self, namespace: str) -> list[JSON]: ...

    def revisions(self, namespace: str) -> list[JSON]: ...

    def pods(self, namespace: str, selector: Mapping[str, Any]) -> list[JSON]: ...

    def all_pods(self) -> list[JSON]: ...

    def nodes(self) -> list[JSON]: ...

    def remember(self, obj: JSON) -> None: ...

    def forget(self, obj: Mapping[str, Any]) -> None: ...


class PodIndex:
    """A namespace's pods grouped by label pair, for `pods(namespace, selector)`."""

    def __init__(self, pods: list[JSON]) -> None:
        self.pods = by_name(pods)
        self.by_label: dict[tuple[str, str], list[JSON]] = {}
        for pod in self.pods:
            labels = meta(pod).get("labels")
            for key, value in (labels.items() if isinstance(labels, Mapping) else ()):
                self.by_label.setdefault((str(key), str(value)), []).append(pod)

    def select(self, selector: Mapping[str, Any]) -> list[JSON]:
        """The pods that may match `selector` (the planner still applies it exactly)."""
        match_labels = selector.get("matchLabels")
        pairs = [(str(k), str(v)) for k, v in match_labels.items()] if isinstance(match_labels, Mapping) else []
        if not pairs:
            return self.pods
        return min((self.by_label.get(pair, []) for pair in pairs), key=len)


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return (str(meta(obj).get("namespace") or ""), str(meta(obj).get("name") or ""))


class CachedUnitedSource:
    """Watch caches (see the module docstring)."""

    def __init__(self, client: KubeClient, *, namespace: str | None = None, watch_timeout_seconds: int = 300) -> None:
        def cache(resource: Resource, name: str) -> WatchCache:
            ns = namespace if resource.namespaced else None
            return WatchCache(client, resource, namespace=ns, watch_timeout_seconds=watch_timeout_seconds, name=name)

        self.resources = workload_resources(client)
        self.ud_cache = cache(UNITED_DEPLOYMENTS, "united-uniteddeployments")
        self.revision_cache = cache(CONTROLLER_REVISIONS, "united-controllerrevisions")
        self.pod_cache = cache(PODS, "united-pods")
        self.node_cache = cache(NODES, "united-nodes")
        self.workload_caches: dict[WorkloadKey, WatchCache] = {
            key: cache(resource, f"united-{resource.plural}.{resource.group}")
            for key, resource in self.resources.items()
        }
        self._lock = threading.Lock()
        self._pod_index: dict[str, tuple[int, PodIndex]] = {}

    def caches(self) -> list[WatchCache]:
        return [self.ud_cache, self.revision_cache, self.pod_cache, self.node_cache, *self.workload_caches.values()]

    def start(self) -> None:
        for cache in self.caches():
            cache.start()

    def stop(self) -> None:
        for cache in self.caches():
            cache.stop()

    def wait_synced(self, timeout: float) -> bool:
        return all(cache.wait_synced(timeout) for cache in self.caches())

    def united_deployments(self) -> list[JSON]:
        return by_name(self.ud_cache.list())

    def united_deployment(self, namespace: str, name: str) -> JSON | None:
        return self.ud_cache.get(namespace, name)

    def workloads(self, namespace: str) -> list[JSON]:
        out: list[JSON] = []
        for key, cache in self.workload_caches.items():
            out.extend(typed(o, self.resources[key]) for o in by_name(cache.list(namespace)))
        return out

    def revisions(self, namespace: str) -> list[JSON]:
        return [typed(o, CONTROLLER_REVISIONS) for o in by_name(self.revision_cache.list(namespace))]

    def pods(self, namespace: str, selector: Mapping[str, Any]) -> list[JSON]:
        version = self.pod_cache.version
        with self._lock:
            memo = self._pod_index.get(namespace)
        if memo is None or memo[0] != version:
            memo = (version, PodIndex(self.pod_cache.list(namespace)))
            with self._lock:
                self._pod_index[namespace] = memo
        return memo[1].select(selector)

    def all_pods(self) -> list[JSON]:
        return self.pod_cache.list()

    def nodes(self) -> list[JSON]:
        return by_name(self.node_cache.list())

    def _cache_for(self, obj: Mapping[str, Any]) -> WatchCache | None:
        kind = obj.get("kind")
        if kind == UNITED_DEPLOYMENTS.kind and group_of(str(obj.get("apiVersion") or "")) == UNITED_DEPLOYMENTS.group:
            return self.ud_cache
        if kind == CONTROLLER_REVISIONS.kind:
            return self.revision_cache
        return self.workload_caches.get((group_of(str(obj.get("apiVersion") or "")), str(kind or "")))

    def remember(self, obj: JSON) -> None:
        cache = self._cache_for(obj)
        if cache is not None:
            cache.upsert(obj)

    def forget(self, obj: Mapping[str, Any]) -> None:
        """Deleted objects vanish with their watch event; nothing to do ahead of it."""


class ListedUnitedSource:
    """Reads from lists taken at the last `refresh()` (see the module docstring)."""

    def __init__(self, client: KubeClient, *, namespace: str | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.resources = workload_resources(client)
        self._lock = threading.Lock()
        self._lists: dict[Resource, list[JSON]] = {}
        self._pod_index: dict[str, PodIndex] = {}

    def rediscover(self) -> None:
        """Look again for the Kruise workload CRDs (installed after this source was built)."""
        self.resources = workload_resources(self.client)

    def refresh(self) -> None:
        """List every resource a sync reads (raises `KubeError` when the API fails)."""
        lists: dict[Resource, list[JSON]] = {}
        uds = self.client.list(UNITED_DEPLOYMENTS, self.namespace).get("items") or []
        lists[UNITED_DEPLOYMENTS] = by_name([typed(i, UNITED_DEPLOYMENTS) for i in uds])
        others = {CONTROLLER_REVISIONS, PODS, NODES, *self.resources.values()} if uds else set()
        for resource in others:  # nothing else to read while there is no UnitedDeployment
            ns = self.namespace if resource.namespaced else None
            items = self.client.list(resource, ns).get("items") or []
            lists[resource] = by_name([typed(i, resource) for i in items])
        with self._lock:
            self._lists = lists
            self._pod_index = {}

    def _items(self, resource: Resource, namespace: str | None = None) -> list[JSON]:
        with self._lock:
            items = self._lists.get(resource, [])
        if namespace is None:
            return list(items)
        return [o for o in items if meta(o).get("namespace") == namespace]

    def united_deployments(self) -> list[JSON]:
        return self._items(UNITED_DEPLOYMENTS)

    def united_deployment(self, namespace: str, name: str) -> JSON | None:
        return next((o for o in self._items(UNITED_DEPLOYMENTS, namespace) if meta(o).get("name") == name), None)

    def workloads(self, namespace: str) -> list[JSON]:
        return [o for resource in self.resources.values() for o in self._items(resource, namespace)]

    def revisions(self, namespace: str) -> list[JSON]:
        return self._items(CONTROLLER_REVISIONS, namespace)

    def pods(self, namespace: str, selector: Mapping[str, Any]) -> list[JSON]:
        with self._lock:
            index = self._pod_index.get(namespace)
        if index is None:
            index = PodIndex(self._items(PODS, namespace))
            with self._lock:
                index = self._pod_index.setdefault(namespace, index)
        return index.select(selector)

    def all_pods(self) -> list[JSON]:
        return self._items(PODS)

    def nodes(self) -> list[JSON]:
        return self._items(NODES)

    def _resource_for(self, obj: Mapping[str, Any]) -> Resource | None:
        kind = obj.get("kind")
        group = group_of(str(obj.get("apiVersion") or ""))
        if kind == UNITED_DEPLOYMENTS.kind and group == UNITED_DEPLOYMENTS.group:
            return UNITED_DEPLOYMENTS
        if kind == CONTROLLER_REVISIONS.kind:
            return CONTROLLER_REVISIONS
        return self.resources.get((group, str(kind or "")))

    def remember(self, obj: JSON) -> None:
        resource = self._resource_for(obj)
        if resource is None:
            return
        key = _key(obj)
        with self._lock:
            items = [o for o in self._lists.get(resource, []) if _key(o) != key]
            self._lists[resource] = by_name([*items, typed(obj, resource)])

    def forget(self, obj: Mapping[str, Any]) -> None:
        resource = self._resource_for(obj)
        if resource is None:
            return
        key = _key(obj)
        with self._lock:
            self._lists[resource] = [o for o in self._lists.get(resource, []) if _key(o) != key]
