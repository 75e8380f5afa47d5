"""A controller's watch caches, built, started, stopped and waited for together.

Both controllers' cached sources (`sources.CachedSource`,
`py_engine.uniteddeployment.controller.runtime.source.CachedUnitedSource`) hold one `WatchCache` per
resource they read, all with the same namespace scope and watch timeout; a
runtime starts them before the workers, waits for their first lists (a sync
must not take an unsynced cache for an empty cluster) and stops them last.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from py_engine.apiclient import KubeClient, Resource, WatchCache


class CacheGroup(ABC):
    """Subclasses build their caches with `watch` and list them in `caches`."""

    def __init__(self, client: KubeClient, *, namespace: str | None = None, watch_timeout_seconds: int = 300) -> None:
        self._client = client
        self._namespace = namespace
        self._watch_timeout_seconds = watch_timeout_seconds

    def watch(self, resource: Resource, name: str) -> WatchCache:
        """A cache of `resource`, scoped to the namespace when the resource is namespaced."""
        namespace = self._namespace if resource.namespaced else None
        return WatchCache(self._client, resource, namespace=namespace,
                          watch_timeout_seconds=self._watch_timeout_seconds, name=name)

    @abstractmethod
    def caches(self) -> list[WatchCache]:
        """Every cache of the group."""

    def start(self) -> None:
        for cache in self.caches():
            cache.start()

    def stop(self) -> None:
        for cache in self.caches():
            cache.stop()

    def wait_synced(self, timeout: float) -> bool:
        return all(cache.wait_synced(timeout) for cache in self.caches())
