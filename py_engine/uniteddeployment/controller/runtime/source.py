"""Where a UnitedDeployment sync reads the cluster from: watch caches or fresh lists.

Both implement `UnitedSource`. `CachedUnitedSource` (the running controller)
keeps one `WatchCache` per resource: UnitedDeployments, the subset workload
kinds the cluster serves, ControllerRevisions, pods and nodes. `ListedUnitedSource`
(`--once`, the virtual-time stack) reads lists taken at `refresh()`.

`remember(obj)` puts an object the controller has just written back into the
source, so the next sync starts from it: a workload created a moment ago must
not look missing (it would be created twice) because its watch event is late.

Objects are handed out per UnitedDeployment, so a sync costs its own objects,
not the namespace's: pods carrying one of its selector's `matchLabels` pairs
(the smallest such group, from an index built once per cache version), and
workloads and ControllerRevisions it controls (by owner uid) plus the orphans
carrying such a pair (it may adopt them). Objects another owner controls are
left out; the planner ignores them anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol, Unpack

from py_engine.apiclient import NODES, PODS, KubeClient, Resource, WatchCache
from py_engine.runtime.cachegroup import CacheGroup, GroupOptions
from py_engine.runtime.listing import JSON, ListedLists, by_name
from py_engine.semantics import objects
from py_engine.semantics.objects import meta
from py_engine.uniteddeployment.controller.runtime.resources import (
    CONTROLLER_REVISIONS,
    UNITED_DEPLOYMENTS,
    WorkloadKey,
    typed,
    workload_resources,
)

__all__ = [
    "JSON",
    "CachedUnitedSource",
    "ListedUnitedSource",
    "OwnedIndex",
    "PodIndex",
    "UnitedSource",
    "by_name",
    "controller_uid",
]


class UnitedSource(Protocol):
    """What a UnitedDeployment sync reads; every object is shared and read-only."""

    resources: dict[WorkloadKey, Resource]

    def united_deployments(self) -> list[JSON]: ...

    def united_deployment(self, namespace: str, name: str) -> JSON | None: ...

    def workloads(self, namespace: str, uid: str, selector: Mapping[str, Any]) -> list[JSON]: ...

    def revisions(self, namespace: str, uid: str, selector: Mapping[str, Any]) -> list[JSON]: ...

    def pods(self, namespace: str, selector: Mapping[str, Any]) -> list[JSON]: ...

    def all_pods(self) -> list[JSON]: ...

    def nodes(self) -> list[JSON]: ...

    def remember(self, obj: JSON) -> None: ...

    def forget(self, obj: Mapping[str, Any]) -> None: ...


class PodIndex:
    """Objects grouped by label pair, for `pods(namespace, selector)` (objects in name order)."""

    def __init__(self, pods: list[JSON]) -> None:
        self.pods = by_name(pods)
        self.by_label: dict[tuple[str, str], list[JSON]] = {}
        for pod in self.pods:
            labels = meta(pod).get("labels")
            for key, value in labels.items() if isinstance(labels, Mapping) else ():
                self.by_label.setdefault((str(key), str(value)), []).append(pod)

    def select(self, selector: Mapping[str, Any]) -> list[JSON]:
        """The objects that may match `selector` (the planner still applies it exactly)."""
        match_labels = selector.get("matchLabels")
        pairs = (
            [(str(k), str(v)) for k, v in match_labels.items()] if isinstance(match_labels, Mapping) else []
        )
        if not pairs:
            return self.pods
        return min((self.by_label.get(pair, []) for pair in pairs), key=len)


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid of the object's controller owner ("" when the reference has none), None for an orphan."""
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return None


class OwnedIndex:
    """Workloads or ControllerRevisions by controller owner uid, orphans by label pair."""

    def __init__(self, objects: list[JSON]) -> None:
        self.objects = objects
        self._position = {id(obj): index for index, obj in enumerate(objects)}
        self.by_owner: dict[str, list[JSON]] = {}
        orphans: list[JSON] = []
        for obj in objects:
            uid = controller_uid(obj)
            if uid is None:
                orphans.append(obj)
            else:
                self.by_owner.setdefault(uid, []).append(obj)
        self.orphans = PodIndex(orphans)

    def select(self, uid: str, selector: Mapping[str, Any]) -> list[JSON]:
        """What a UnitedDeployment with `uid` may own or adopt, in list order."""
        if not uid:  # no uid (hand-written objects): ownership is judged by name, keep everything
            return self.objects
        chosen = {id(o) for o in self.by_owner.get(uid, [])} | {id(o) for o in self.by_owner.get("", [])}
        chosen |= {id(o) for o in self.orphans.select(selector)}
        # In list order by position: filtering the whole list per UnitedDeployment made a pass
        # over N of them cost N x the namespace's workloads (issue 28).
        return [self.objects[i] for i in sorted(self._position[c] for c in chosen)]


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return (str(meta(obj).get("namespace") or ""), str(meta(obj).get("name") or ""))


class CachedUnitedSource(CacheGroup):
    """Watch caches (see the module docstring); started, stopped and waited for as a `CacheGroup`,
    `shared` with the other controllers of a Manager."""

    def __init__(self, client: KubeClient, **options: Unpack[GroupOptions]) -> None:
        super().__init__(client, **options)
        self.resources = workload_resources(client)
        self.ud_cache = self.watch(UNITED_DEPLOYMENTS, "united-uniteddeployments")
        self.revision_cache = self.watch(CONTROLLER_REVISIONS, "united-controllerrevisions")
        self.pod_cache = self.watch(PODS, "united-pods")
        self.node_cache = self.watch(NODES, "united-nodes")
        self.workload_caches: dict[WorkloadKey, WatchCache] = {
            key: self.watch(resource, f"united-{resource.plural}.{resource.group}")
            for key, resource in self.resources.items()
        }
        self._lock = threading.Lock()
        self._pod_index: dict[str, tuple[int, PodIndex]] = {}
        self._owned: dict[tuple[str, str], tuple[tuple[int, ...], OwnedIndex]] = {}

    def caches(self) -> list[WatchCache]:
        return [
            self.ud_cache,
            self.revision_cache,
            self.pod_cache,
            self.node_cache,
            *self.workload_caches.values(),
        ]

    def united_deployments(self) -> list[JSON]:
        return by_name(self.ud_cache.list())

    def united_deployment(self, namespace: str, name: str) -> JSON | None:
        return self.ud_cache.get(namespace, name)

    def _owned_index(
        self, what: str, namespace: str, caches: list[tuple[Resource, WatchCache]]
    ) -> OwnedIndex:
        versions = tuple(cache.version for _, cache in caches)
        with self._lock:
            memo = self._owned.get((what, namespace))
        if memo is None or memo[0] != versions:
            objects = [
                typed(o, resource) for resource, cache in caches for o in by_name(cache.list(namespace))
            ]
            memo = (versions, OwnedIndex(objects))
            with self._lock:
                self._owned[(what, namespace)] = memo
        return memo[1]

    def workloads(self, namespace: str, uid: str, selector: Mapping[str, Any]) -> list[JSON]:
        caches = [(self.resources[key], cache) for key, cache in self.workload_caches.items()]
        return self._owned_index("workloads", namespace, caches).select(uid, selector)

    def revisions(self, namespace: str, uid: str, selector: Mapping[str, Any]) -> list[JSON]:
        index = self._owned_index("revisions", namespace, [(CONTROLLER_REVISIONS, self.revision_cache)])
        return index.select(uid, selector)

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
        if kind == UNITED_DEPLOYMENTS.kind and objects.group_of(obj) == UNITED_DEPLOYMENTS.group:
            return self.ud_cache
        if kind == CONTROLLER_REVISIONS.kind:
            return self.revision_cache
        return self.workload_caches.get((objects.group_of(obj), str(kind or "")))

    def remember(self, obj: JSON) -> None:
        cache = self._cache_for(obj)
        if cache is not None:
            cache.upsert(obj)

    def forget(self, obj: Mapping[str, Any]) -> None:
        """Deleted objects vanish with their watch event; nothing to do ahead of it."""


class ListedUnitedSource(ListedLists):
    """Reads from lists taken at the last `refresh()` (see the module docstring); listed items
    get their `apiVersion` and `kind` (`typed`)."""

    def __init__(self, client: KubeClient, *, namespace: str | None = None) -> None:
        super().__init__(client, namespace=namespace)
        self.resources = workload_resources(client)
        self._pod_index: dict[str, PodIndex] = {}
        self._owned: dict[tuple[str, str], OwnedIndex] = {}

    def rediscover(self) -> None:
        """Look again for the Kruise workload CRDs (installed after this source was built)."""
        self.resources = workload_resources(self.client)

    def refresh(self) -> None:
        """List every resource a sync reads (raises `KubeError` when the API fails)."""
        uds = self._list(UNITED_DEPLOYMENTS)
        # nothing else to read while there is no UnitedDeployment
        others = {CONTROLLER_REVISIONS, PODS, NODES, *self.resources.values()} if uds else set()
        self._replace({UNITED_DEPLOYMENTS: uds, **self._listing(others)})

    def _typed(self, obj: JSON, resource: Resource) -> JSON:
        return typed(obj, resource)

    def _lists_replaced(self) -> None:
        self._pod_index = {}
        self._owned = {}

    def united_deployments(self) -> list[JSON]:
        return self._items(UNITED_DEPLOYMENTS)

    def united_deployment(self, namespace: str, name: str) -> JSON | None:
        return self._item(UNITED_DEPLOYMENTS, namespace, name)

    def _owned_index(self, what: str, namespace: str, resources: list[Resource]) -> OwnedIndex:
        return self._derived(
            self._owned,
            (what, namespace),
            lambda: OwnedIndex([o for resource in resources for o in self._items(resource, namespace)]),
        )

    def workloads(self, namespace: str, uid: str, selector: Mapping[str, Any]) -> list[JSON]:
        return self._owned_index("workloads", namespace, list(self.resources.values())).select(uid, selector)

    def revisions(self, namespace: str, uid: str, selector: Mapping[str, Any]) -> list[JSON]:
        return self._owned_index("revisions", namespace, [CONTROLLER_REVISIONS]).select(uid, selector)

    def pods(self, namespace: str, selector: Mapping[str, Any]) -> list[JSON]:
        index = self._derived(self._pod_index, namespace, lambda: PodIndex(self._items(PODS, namespace)))
        return index.select(selector)

    def all_pods(self) -> list[JSON]:
        return self._items(PODS)

    def nodes(self) -> list[JSON]:
        return self._items(NODES)

    def _resource_for(self, obj: Mapping[str, Any]) -> Resource | None:
        kind = obj.get("kind")
        group = objects.group_of(obj)
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
            self._owned = {}

    def forget(self, obj: Mapping[str, Any]) -> None:
        resource = self._resource_for(obj)
        if resource is None:
            return
        key = _key(obj)
        with self._lock:
            self._lists[resource] = [o for o in self._lists.get(resource, []) if _key(o) != key]
            self._owned = {}
