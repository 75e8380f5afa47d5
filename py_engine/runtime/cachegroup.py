"""Watch caches: one per resource in a process (`SharedCaches`), grouped per controller (`CacheGroup`).

Both controllers' cached sources (`py_engine.workloadspread.controller.runtime.sources.CachedSource`,
`py_engine.uniteddeployment.controller.runtime.source.CachedUnitedSource`) hold one `WatchCache`
per resource they read, all with the same namespace scope and watch timeout. Where both read
the same resource (pods, nodes, Deployments, StatefulSets, CloneSets) they read the same cache
when they share one `SharedCaches` (the `runtime.manager.Manager` gives its controllers its own):
one list and one watch per resource, however many controllers read it, and an object one
controller remembers after a write is what the other reads too. A group built without one has
caches of its own.

A runtime starts the caches before the workers, waits for their first lists (a sync must not
take an unsynced cache for an empty cluster) and stops them last.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TypedDict, Unpack

from py_engine.apiclient import KubeClient, Resource, WatchCache


class CacheSet(ABC):
    """Caches started, stopped and waited for together."""

    @abstractmethod
    def caches(self) -> list[WatchCache]:
        """Every cache of the set."""

    def start(self) -> None:
        for cache in self.caches():
            cache.start()

    def stop(self) -> None:
        for cache in self.caches():
            cache.stop()

    def wait_synced(self, timeout: float) -> bool:
        return all(cache.wait_synced(timeout) for cache in self.caches())


class SharedCaches(CacheSet):
    """One `WatchCache` per resource, built on first request (its name is the first requester's)."""

    def __init__(
        self, client: KubeClient, *, namespace: str | None = None, watch_timeout_seconds: int = 300
    ) -> None:
        self._client = client
        self._namespace = namespace
        self._watch_timeout_seconds = watch_timeout_seconds
        self._caches: dict[Resource, WatchCache] = {}
        self._lock = threading.Lock()

    def watch(self, resource: Resource, name: str) -> WatchCache:
        """The cache of `resource`, scoped to the namespace when the resource is namespaced."""
        with self._lock:
            cache = self._caches.get(resource)
            if cache is None:
                namespace = self._namespace if resource.namespaced else None
                cache = self._caches[resource] = WatchCache(
                    self._client,
                    resource,
                    namespace=namespace,
                    watch_timeout_seconds=self._watch_timeout_seconds,
                    name=name,
                )
            return cache

    def caches(self) -> list[WatchCache]:
        with self._lock:
            return list(self._caches.values())


class GroupOptions(TypedDict, total=False):
    """A `CacheGroup`'s keyword options, which a subclass passes on: `namespace` (default None, every
    namespace), `watch_timeout_seconds` (default 300), `shared` (default None: the group's own caches)."""

    namespace: str | None
    watch_timeout_seconds: int
    shared: SharedCaches | None


class CacheGroup(CacheSet):
    """Subclasses build their caches with `watch` and list them in `caches`. Starting or
    stopping a cache twice is harmless, so groups sharing caches can each start and stop theirs."""

    def __init__(self, client: KubeClient, **options: Unpack[GroupOptions]) -> None:
        self._client = client
        shared = options.get("shared")
        self.shared = (
            shared
            if shared is not None
            else SharedCaches(
                client,
                namespace=options.get("namespace"),
                watch_timeout_seconds=options.get("watch_timeout_seconds", 300),
            )
        )

    def watch(self, resource: Resource, name: str) -> WatchCache:
        """The cache of `resource` (the shared one when the group shares its caches)."""
        return self.shared.watch(resource, name)

    @abstractmethod
    def caches(self) -> list[WatchCache]:
        """Every cache of the group."""
