"""The versioned object store behind the API server (the emulator's etcd).

One lock guards everything: the global resourceVersion counter, the objects,
the bounded event history and the watcher registry. It is held only for dict
operations and for handing events to watcher queues, never for admission,
serialisation or copying, so it stays cheap under many concurrent requests.

Stored objects are immutable by convention (copy-on-write): a write stores a
fresh dict and never touches the previous one, so readers may hold and
serialise a stored object without copying it or taking the lock. Anything
handed to code that might mutate it must be deep-copied by the caller.

Watches are registered under the same lock that assigns resourceVersions, so a
watch that starts from version N sees every later event exactly once, and one
that asks for a version older than the retained history gets `TooOld` (410).
"""

from __future__ import annotations

import builtins
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from py_engine.sim.interface import JSON

Predicate = Callable[[JSON], bool]

_CLOSE = object()


class StoreConflict(Exception):
    """The object's resourceVersion is not the expected one (or it vanished)."""


class StoreExists(Exception):
    """Create of a key that is already present."""


class StoreMissing(Exception):
    """Update or delete of a key that is absent."""


class TooOld(Exception):
    """Watch from a resourceVersion older than the retained history."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


@dataclass(frozen=True, slots=True)
class StoredEvent:
    rv: int
    resource: str
    type: str  # ADDED, MODIFIED, DELETED
    obj: JSON
    old: JSON | None


@dataclass(eq=False)
class Watcher:
    """A registered watch: the store pushes (type, object) pairs into `queue`.

    `predicate` filters by namespace/label/field selectors; an object moving
    into the selection is sent as ADDED and out of it as DELETED, as Kubernetes
    does. If the consumer falls more than `max_pending` events behind, the
    watch is closed (the consumer must re-list or resume), never unbounded.
    """

    resource: str
    predicate: Predicate
    max_pending: int = 100_000
    queue: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    closed: bool = False
    overflowed: bool = False

    def offer(self, ev: StoredEvent) -> None:
        if self.closed:
            return
        new_in = self.predicate(ev.obj)
        if ev.type == "ADDED":
            if new_in:
                self._push("ADDED", ev.obj, ev.rv)
            return
        old_in = ev.old is not None and self.predicate(ev.old)
        if ev.type == "DELETED":
            if old_in or new_in:
                self._push("DELETED", ev.obj, ev.rv)
            return
        if old_in and new_in:
            self._push("MODIFIED", ev.obj, ev.rv)
        elif new_in:
            self._push("ADDED", ev.obj, ev.rv)
        elif old_in:
            self._push("DELETED", ev.obj, ev.rv)

    def _push(self, typ: str, obj: JSON, rv: int) -> None:
        if self.queue.qsize() >= self.max_pending:
            self.overflowed = True
            self.close()
            return
        self.queue.put((typ, obj, rv))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put(_CLOSE)

    @staticmethod
    def is_close(item: Any) -> bool:
        return item is _CLOSE


def _rv_of(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


class Store:
    """Objects keyed by (resource, namespace, name) with a global revision."""

    def __init__(self, history_size: int = 10_000) -> None:
        if history_size < 1:
            raise ValueError("history_size must be at least 1")
        self._lock = threading.Lock()
        self._rv = 0
        self._objects: dict[str, dict[tuple[str, str], JSON]] = {}
        self._history: deque[StoredEvent] = deque(maxlen=history_size)
        self._compacted = 0  # rv of the newest event dropped from history
        self._watchers: dict[str, set[Watcher]] = {}
        self._changed_at: dict[str, int] = {}  # resource -> revision of its latest write
        self.on_removed: builtins.list[Callable[[str, JSON], None]] = []
        self.on_written: builtins.list[Callable[[str, JSON], None]] = []
        """Called after every create, update and removal (outside the lock) with the resource
        and the stored object, for derived state kept in other objects (ClusterRole aggregation)."""

    # ----------------------------------------------------------------- reads

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    def get(self, resource: str, namespace: str, name: str) -> JSON | None:
        with self._lock:
            return self._objects.get(resource, {}).get((namespace, name))

    def list(self, resource: str, namespace: str | None = None) -> tuple[builtins.list[JSON], int]:
        with self._lock:
            bucket = self._objects.get(resource, {})
            if namespace is None:
                items = list(bucket.values())
            else:
                items = [o for (ns, _), o in bucket.items() if ns == namespace]
            return items, self._rv

    def changed_at(self, resources: Iterable[str]) -> int:
        """The revision of the latest write to any of `resources` (0: never written), so a
        reader can cache what it derives from them until they, not the whole store, change."""
        with self._lock:
            return max((self._changed_at.get(r, 0) for r in resources), default=0)

    def count(self, resource: str, namespace: str | None = None) -> int:
        with self._lock:
            bucket = self._objects.get(resource, {})
            if namespace is None:
                return len(bucket)
            return sum(1 for (ns, _) in bucket if ns == namespace)

    def namespaced_resources_with_objects(self, namespace: str) -> builtins.list[str]:
        with self._lock:
            return [r for r, b in self._objects.items() if any(ns == namespace for ns, _ in b)]

    # ---------------------------------------------------------------- writes

    def _stamp(self, obj: JSON) -> JSON:
        self._rv += 1
        meta = dict(obj.get("metadata") or {})
        meta["resourceVersion"] = str(self._rv)
        out = dict(obj)
        out["metadata"] = meta
        return out

    def _emit(self, resource: str, typ: str, obj: JSON, old: JSON | None) -> None:
        if len(self._history) == self._history.maxlen:
            self._compacted = self._history[0].rv
        ev = StoredEvent(self._rv, resource, typ, obj, old)
        self._changed_at[resource] = self._rv
        self._history.append(ev)
        for w in self._watchers.get(resource, ()):
            w.offer(ev)

    def create(self, resource: str, namespace: str, name: str, obj: JSON) -> JSON:
        """Store a new object; the store owns `obj` from now on. Returns the stored copy."""
        with self._lock:
            bucket = self._objects.setdefault(resource, {})
            if (namespace, name) in bucket:
                raise StoreExists(name)
            stored = self._put(resource, (namespace, name), obj, None)
        self._written(resource, stored)
        return stored

    def _put(self, resource: str, key: tuple[str, str], obj: JSON, old: JSON | None) -> JSON:
        """Store `obj` at `key` with the next resourceVersion and tell the watchers (ADDED when
        there was no `old`, else MODIFIED). Under the lock."""
        stored = self._stamp(obj)
        self._objects.setdefault(resource, {})[key] = stored
        self._emit(resource, "ADDED" if old is None else "MODIFIED", stored, old)
        return stored

    def update(self, resource: str, namespace: str, name: str, obj: JSON, expected_rv: str) -> JSON:
        """Replace an object if its resourceVersion is still `expected_rv`."""
        with self._lock:
            bucket = self._objects.get(resource, {})
            old = bucket.get((namespace, name))
            if old is None:
                raise StoreMissing(name)
            if _rv_of(old) != expected_rv:
                raise StoreConflict(name)
            stored = self._put(resource, (namespace, name), obj, old)
        self._written(resource, stored)
        return stored

    def remove(self, resource: str, namespace: str, name: str, expected_rv: str | None) -> JSON:
        """Delete an object (optionally only at `expected_rv`); returns it with the deletion rv."""
        with self._lock:
            bucket = self._objects.get(resource, {})
            old = bucket.get((namespace, name))
            if old is None:
                raise StoreMissing(name)
            if expected_rv is not None and _rv_of(old) != expected_rv:
                raise StoreConflict(name)
            del bucket[(namespace, name)]
            stored = self._stamp(old)
            self._emit(resource, "DELETED", stored, old)
        for hook in list(self.on_removed):
            hook(resource, stored)
        self._written(resource, stored)
        return stored

    def _written(self, resource: str, stored: JSON) -> None:
        for hook in list(self.on_written):
            hook(resource, stored)

    # ----------------------------------------------------------------- watch

    def watch(
        self, resource: str, predicate: Predicate, since: int | None, max_pending: int = 100_000
    ) -> tuple[Watcher, builtins.list[tuple[str, JSON, int]], int]:
        """Register a watcher.

        `since=None`: the initial events are synthetic ADDEDs of the current
        state. Otherwise they are the retained events after `since`; raises
        `TooOld` if history no longer reaches back that far. Returns the
        watcher, the initial events and the current resourceVersion.
        """
        with self._lock:
            initial: builtins.list[tuple[str, JSON, int]] = []
            w = Watcher(resource, predicate, max_pending)
            if since is None:
                for obj in self._objects.get(resource, {}).values():
                    if predicate(obj):
                        initial.append(("ADDED", obj, int(_rv_of(obj) or 0)))
                initial.sort(key=lambda t: t[2])
            else:
                if since < self._compacted:
                    raise TooOld(since, self._compacted + 1)
                collector = Watcher(resource, predicate, max_pending=1 << 62)
                for ev in self._history:
                    if ev.rv > since and ev.resource == resource:
                        collector.offer(ev)
                while not collector.queue.empty():
                    initial.append(collector.queue.get_nowait())
            self._watchers.setdefault(resource, set()).add(w)
            return w, initial, self._rv

    def unwatch(self, w: Watcher) -> None:
        with self._lock:
            self._watchers.get(w.resource, set()).discard(w)
        w.close()

    def close_all_watchers(self) -> None:
        with self._lock:
            all_w = [w for ws in self._watchers.values() for w in ws]
            self._watchers.clear()
        for w in all_w:
            w.close()

    def oldest_watchable(self) -> int:
        with self._lock:
            return self._compacted
