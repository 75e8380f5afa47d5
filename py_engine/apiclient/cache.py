"""A watch-fed, thread-safe cache of one resource (an informer, in client-go terms).

List, then watch from the list's resourceVersion with bookmarks; a watch that
ends (server timeout, dropped connection) resumes from the last seen
resourceVersion; a 410 Gone (at open or as an ERROR event) relists, because
the official client's own watch retries a 410 only once. Failures back off
exponentially up to a cap, forever, until `stop()`. Readers get objects by
namespace/name or through index functions; a `version` counter moves on every
change so callers can key derived caches on it.

Objects handed out are the cache's own dicts: treat them as read-only. They are kept without
`metadata.managedFields` (as controller-runtime's `TransformStripManagedFields` does): nothing
Spreadgate decides reads them, they are a large part of every object (a pod's field sets can
outweigh its spec), and a write of a cached object without them leaves the stored ones as they
are (kube-apiserver keeps managedFields an update omits).
Backoff waits on a `threading.Event` so `stop()` interrupts them at once.

A writer hands the object its write returned to `upsert`, so its next sync does not read the
version it has just replaced. That response can reach the cache after the watch has already
delivered a later version of the object (someone changed it right after the write) or its
deletion; applied then, it would move the cache back to the older object, and no watch event
would correct it before the next relist (the newer spec would go unseen). So an upsert whose
resourceVersion is not newer than the cached object's, or than what the watch has delivered
already, is dropped, as client-go's mutation cache keeps the newer of its two objects.
resourceVersions are compared as integers (what kube-apiserver and the embedded emulator hand
out); one that is not an integer is compared for equality only, as before. The watch itself
stays authoritative: its events and relists are always applied (an older event over an upserted
object is followed by the object's own event), so a server whose resourceVersions went backwards
(a restored etcd) cannot leave the cache stuck.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.apiclient.client import JSON, KubeClient, WatchStream
from py_engine.apiclient.errors import Gone, KubeError
from py_engine.apiclient.resources import Resource

log = logging.getLogger(__name__)

Key = tuple[str, str]
IndexFunc = Callable[[Mapping[str, Any]], Iterable[str]]
Handler = Callable[[str, JSON, JSON | None], None]
"""`handler(event_type, object, old_object)`; event_type is ADDED, MODIFIED or DELETED."""


def object_key(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def without_managed_fields(obj: JSON) -> JSON:
    """`obj` as the cache keeps it: the same object when it has no managed fields, else a
    shallow copy whose metadata lacks them (the rest is shared, not copied)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return obj
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _rv_number(resource_version: str) -> int | None:
    """`resource_version` as an integer to order by, or None when it is not one."""
    return int(resource_version) if resource_version.isdigit() else None


def _not_newer(candidate: str, than: str) -> bool:
    """Whether resourceVersion `candidate` is known to be no later than `than`."""
    new, old = _rv_number(candidate), _rv_number(than)
    return new is not None and old is not None and new <= old


def _later(candidate: str, than: str) -> bool:
    """Whether resourceVersion `candidate` is known to be later than `than`."""
    return candidate != than and _not_newer(than, candidate)


@dataclass
class CacheStats:
    lists: int = 0
    watches: int = 0
    gone: int = 0
    errors: int = 0
    events: int = 0
    bookmarks: int = 0


class WatchCache:
    """See the module docstring. `start()` runs the list/watch loop in a daemon thread."""

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        watch_timeout_seconds: int = 300,
        backoff_initial: float = 0.2,
        backoff_max: float = 10.0,
        name: str | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.name = name or resource.plural
        self._indexers = dict(indexers or {})
        self._watch_timeout = watch_timeout_seconds
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._lock = threading.RLock()
        self._items: dict[Key, JSON] = {}
        self._indices: dict[str, dict[str, set[Key]]] = {n: {} for n in self._indexers}
        self._handlers: builtins.list[Handler] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watch: WatchStream | None = None
        self.synced = threading.Event()
        """Set once the first list has been loaded (and stays set across relists)."""
        self.version = 0
        """Bumped on every change to the cached set (for keying derived caches)."""
        self.resource_version = ""
        self.stats = CacheStats()
        self.last_error: str = ""

    # ---------------------------------------------------------------- reading

    def get(self, namespace: str | None, name: str) -> JSON | None:
        with self._lock:
            return self._items.get((namespace or "", name))

    def list(self, namespace: str | None = None) -> builtins.list[JSON]:
        with self._lock:
            if namespace is None:
                return list(self._items.values())
            return [o for (ns, _), o in self._items.items() if ns == namespace]

    def by_index(self, index: str, value: str) -> builtins.list[JSON]:
        with self._lock:
            keys = self._indices[index].get(value, set())
            return [self._items[k] for k in sorted(keys)]

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def add_handler(self, handler: Handler) -> None:
        """Call `handler` (on the cache's thread) for every change, including relist diffs."""
        with self._lock:
            self._handlers.append(handler)

    def wait_synced(self, timeout: float) -> bool:
        return self.synced.wait(timeout)

    # ------------------------------------------------------------- lifecycle

    def start(self) -> WatchCache:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name=f"watch-cache-{self.name}")
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            watch = self._watch
        if watch is not None:
            watch.close()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------ the store

    def _index_keys(self, obj: Mapping[str, Any]) -> dict[str, builtins.list[str]]:
        out: dict[str, builtins.list[str]] = {}
        for name, fn in self._indexers.items():
            try:
                out[name] = list(fn(obj))
            except Exception:  # an index function must not kill the cache
                log.exception("index function %s failed", name)
                out[name] = []
        return out

    def _unindex(self, key: Key, obj: Mapping[str, Any]) -> None:
        for name, values in self._index_keys(obj).items():
            for value in values:
                bucket = self._indices[name].get(value)
                if bucket is not None:
                    bucket.discard(key)
                    if not bucket:
                        del self._indices[name][value]

    def _put(self, obj: JSON) -> tuple[str, JSON | None] | None:
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None and _rv(old) == _rv(obj) and old == obj:
            return None
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name, values in self._index_keys(obj).items():
            for value in values:
                self._indices[name].setdefault(value, set()).add(key)
        self.version += 1
        return ("MODIFIED" if old is not None else "ADDED"), old

    def _remove(self, key: Key) -> JSON | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
            self.version += 1
        return old

    def _stale_locked(self, obj: Mapping[str, Any]) -> bool:
        """Whether the watch has delivered `obj`'s version or a later one already, or the cached
        object is newer (see the module docstring)."""
        rv = _rv(obj)
        cached = self._items.get(object_key(obj))
        return _not_newer(rv, self.resource_version) or (cached is not None and _later(_rv(cached), rv))

    def upsert(self, obj: JSON) -> None:
        """Put an object the caller has just written (keeps the cache ahead of the watch).
        Dropped when the watch has delivered this version or a later one already (a later
        change, or the deletion), or when the cached object is newer (see the module
        docstring); else applied unless it is there already with the same resourceVersion."""
        obj = without_managed_fields(obj)
        with self._lock:
            if self._stale_locked(obj):
                return
            changed = self._put(obj)
        if changed:
            self._notify(changed[0], obj, changed[1])

    def _notify(self, typ: str, obj: JSON, old: JSON | None) -> None:
        for handler in list(self._handlers):
            try:
                handler(typ, obj, old)
            except Exception:
                log.exception("watch cache %s: handler failed", self.name)

    def _replace_all(self, items: builtins.list[JSON], resource_version: str) -> None:
        events: builtins.list[tuple[str, JSON, JSON | None]] = []
        with self._lock:
            self.resource_version = resource_version
            fresh = {object_key(o): o for o in map(without_managed_fields, items)}
            for key in [k for k in self._items if k not in fresh]:
                old = self._remove(key)
                if old is not None:
                    events.append(("DELETED", old, old))
            for obj in fresh.values():
                changed = self._put(obj)
                if changed:
                    events.append((changed[0], obj, changed[1]))
        for typ, obj, old in events:
            self._notify(typ, obj, old)

    def _apply(self, event: JSON) -> None:
        typ = str(event.get("type", ""))
        obj = without_managed_fields(event["object"])
        changed: tuple[str, JSON | None] | None = None
        with self._lock:
            # The resourceVersion moves in the same step as the store, so an `upsert` racing
            # this event sees both or neither.
            if typ in ("ADDED", "MODIFIED"):
                changed = self._put(obj)
            elif typ == "DELETED":
                old = self._remove(object_key(obj))
                changed = ("DELETED", old) if old is not None else None
            rv = _rv(obj)
            if rv:
                self.resource_version = rv
        if changed:
            self._notify(changed[0], obj, changed[1])

    # ------------------------------------------------------------ the loop

    def _relist(self) -> None:
        listed = self.client.list(self.resource, self.namespace, label_selector=self.label_selector)
        resource_version = str((listed.get("metadata") or {}).get("resourceVersion") or "")
        self._replace_all(list(listed.get("items") or []), resource_version)
        self.stats.lists += 1
        self.synced.set()

    def _watch_once(self) -> None:
        """Stream one watch to its end; raises Gone when the server says the RV is too old."""
        watch = self.client.watch(
            self.resource,
            self.namespace,
            resource_version=self.resource_version or None,
            label_selector=self.label_selector,
            allow_bookmarks=True,
            timeout_seconds=self._watch_timeout,
        )
        with self._lock:
            self._watch = watch
        if self._stop.is_set():
            watch.close()
        self.stats.watches += 1
        try:
            for event in watch:
                if self._stop.is_set():
                    return
                typ = event.get("type")
                if typ == "ERROR":
                    status = event["object"]
                    code = int(status.get("code") or 0)
                    if code == 410:
                        raise Gone(
                            410, str(status.get("reason") or "Expired"), str(status.get("message") or "")
                        )
                    raise KubeError(code, str(status.get("reason") or ""), str(status.get("message") or ""))
                if typ == "BOOKMARK":
                    self.stats.bookmarks += 1
                    rv = _rv(event["object"])
                    if rv:
                        with self._lock:
                            self.resource_version = rv
                    continue
                self.stats.events += 1
                self._apply(event)
        finally:
            watch.close()
            with self._lock:
                self._watch = None

    def _run(self) -> None:
        delay = self._backoff_initial
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._relist()
                    need_list = False
                self._watch_once()
                delay = self._backoff_initial
                continue
            except Gone:
                self.stats.gone += 1
                need_list = True
                # A relist right away is what the server asks for; a second 410 in a row backs off.
                if self.stats.gone % 2 == 1:
                    continue
            except Exception as exc:  # keep the cache alive whatever the failure
                if self._stop.is_set():
                    return
                self.stats.errors += 1
                self.last_error = str(exc)
                log.warning("watch cache %s: %s (retrying in %.1fs)", self.name, exc, delay)
            if self._stop.wait(delay):
                return
            delay = min(delay * 2, self._backoff_max)
