"""In-memory `StatusStore`s for committer tests: spreads by (namespace, name) with a
resourceVersion and 409 on a stale write; `MemoryStore` has no watch cache, `FollowedMemoryStore`
one the test publishes to by hand."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any, cast

from webhook_testkit import SPREADS

from py_engine.apiclient import Conflict, KubeClient, NotFound, WatchCache
from py_engine.workloadspread.admission.runtime.committer import KubeStatusStore


class MemoryStore:
    """Spreads by (namespace, name) with a resourceVersion; 409 on a stale write."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.rv = 0

    def add(self, namespace: str, name: str) -> None:
        with self.lock:
            self.rv += 1
            self.objects[(namespace, name)] = {
                "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(self.rv)},
                "status": {},
            }

    def get(self, namespace: str, name: str, *, timeout: float) -> dict[str, Any]:
        with self.lock:
            if (namespace, name) not in self.objects:
                raise NotFound(404, "NotFound", "not found")
            return self.objects[(namespace, name)]

    def replace_status(
        self, namespace: str, name: str, obj: dict[str, Any], *, timeout: float
    ) -> dict[str, Any]:
        with self.lock:
            current = self.objects[(namespace, name)]
            if obj["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise Conflict(409, "Conflict", "stale")
            self.rv += 1
            written = dict(obj, metadata=dict(obj["metadata"], resourceVersion=str(self.rv)))
            self.objects[(namespace, name)] = written
            return written

    def cached(self, namespace: str, name: str) -> dict[str, Any] | None:
        return None


class WriteHooks:
    """Hooks around a store's next write: `before` runs once before it is sent, `after` once with
    the stored object before it is answered (a test holds a write on the wire with them)."""

    def __init__(self) -> None:
        self.before: Callable[[], None] | None = None
        self.after: Callable[[dict[str, Any]], None] | None = None

    def around(self, write: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        before, self.before = self.before, None
        if before is not None:
            before()
        written = write()
        after, self.after = self.after, None
        if after is not None:
            after(written)
        return written


class PublishedCache:
    """What `KubeStatusStore` reads of a watch cache (`get`, `add_handler`), holding what the test
    `publish`es and calling the handlers as a watch event would."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.handlers: list[Callable[[str, dict[str, Any], dict[str, Any] | None], None]] = []

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.get((namespace, name))

    def add_handler(self, handler: Callable[[str, dict[str, Any], dict[str, Any] | None], None]) -> None:
        self.handlers.append(handler)

    def publish(self, obj: dict[str, Any]) -> None:
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        old, self.objects[key] = self.objects.get(key), obj
        for handler in self.handlers:
            handler("MODIFIED", obj, old)


class FollowedMemoryStore(MemoryStore):
    """`MemoryStore` with a watch cache that shows what the test `publish`es, when it does (a
    watch that delivers late, or whose follower wakes after two events), followed by the real
    `KubeStatusStore` (`cached`, `wait_cached`, `wake`; its client is never called); `hooks`
    around its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = PublishedCache()
        follower = KubeStatusStore(cast(KubeClient, None), SPREADS, cast(WatchCache, self.cache))
        self.cached = follower.cached  # type: ignore[method-assign]
        self.wait_cached = follower.wait_cached
        self.wake = follower.wake
        self.hooks = WriteHooks()

    def publish(self, namespace: str, name: str) -> None:
        self.cache.publish(self.get(namespace, name, timeout=1))

    def replace_status(
        self, namespace: str, name: str, obj: dict[str, Any], *, timeout: float
    ) -> dict[str, Any]:
        return self.hooks.around(partial(super().replace_status, namespace, name, obj, timeout=timeout))
