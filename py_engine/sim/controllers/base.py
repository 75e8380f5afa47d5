"""Informers, a work queue and the controller skeleton shared by every loop.

Every in-cluster loop (workload controllers, garbage collector, scheduler,
kubelet) is level-triggered: `sync(key)` reads the informer caches, compares
them with the desired state and writes the difference through `ClusterAPI`.
The same code runs in two modes:

* **threads** (real time): an informer per resource lists once, then watches
  from that resourceVersion (a 410 Gone or a broken watch relists and diffs);
  events enqueue keys and one worker per controller drains its queue in
  batches, so a burst of 1,000 pod events coalesces into a few syncs.
* **steps** (deterministic, usually with a `VirtualClock`): the cluster relists
  every informer, then calls `sync_keys(all_keys())` on each controller in a
  fixed order until no controller writes anything.

Writes are reflected in the cache immediately (`Informer.apply_local`), which
plays the role of Kubernetes' "expectations": a controller that just created a
pod sees it on its next sync even if the watch event has not arrived, so it
never creates the same replica twice. Cache entries only move forward in
resourceVersion, so a late watch event cannot resurrect an older state.
"""

from __future__ import annotations

import abc
import contextlib
import heapq
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from py_engine.semantics.clock import Clock
from py_engine.sim.apiserver import ClusterAPI
from py_engine.sim.events import EventRecorder
from py_engine.sim.interface import JSON, ApiError, Watch

__all__ = [
    "Controller",
    "DelayingKeyQueue",
    "Informer",
    "InformerSet",
    "object_key",
    "resource_version",
    "split_key",
]

log = logging.getLogger(__name__)

Handler = Callable[[str, JSON], None]
"""Called with the event type (ADDED, MODIFIED, DELETED) and the object."""

IndexFunc = Callable[[JSON], Iterable[str]]


def object_key(obj: JSON) -> str:
    """`namespace/name` (or `name` for cluster-scoped objects), the queue key."""
    meta = obj.get("metadata", {})
    namespace = meta.get("namespace")
    name = str(meta.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str | None, str]:
    """Inverse of `object_key`."""
    namespace, slash, name = key.partition("/")
    return (namespace, name) if slash else (None, key)


def resource_version(obj: JSON) -> int | None:
    """The object's resourceVersion as a number (the emulator's are), or None."""
    raw = obj.get("metadata", {}).get("resourceVersion")
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def _not_older(new: JSON, old: JSON | None) -> bool:
    """Whether `new` may replace `old` in a cache (unknown versions always may)."""
    if old is None:
        return True
    new_rv, old_rv = resource_version(new), resource_version(old)
    return new_rv is None or old_rv is None or new_rv >= old_rv


class Informer:
    """A watched, indexed cache of one resource (all namespaces).

    Objects in the cache are shared, never mutated: callers copy before editing.
    """

    WATCH_TIMEOUT_SECONDS = 300.0

    def __init__(self, api: ClusterAPI, resource: str) -> None:
        self.api = api
        self.resource = resource
        self._lock = threading.RLock()
        self._items: dict[str, JSON] = {}
        self._tombstones: dict[str, int] = {}
        self._handlers: list[Handler] = []
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        self._resource_version: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._watch: Watch | None = None
        self.synced = threading.Event()

    # ------------------------------------------------------------ registration

    def add_handler(self, handler: Handler) -> None:
        with self._lock:
            self._handlers.append(handler)

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Maintain `by_index(name, value)` for every value `func(obj)` yields."""
        with self._lock:
            if name in self._indexers:
                return
            self._indexers[name] = func
            index: dict[str, set[str]] = {}
            for key, obj in self._items.items():
                for value in func(obj):
                    index.setdefault(value, set()).add(key)
            self._indices[name] = index

    # ----------------------------------------------------------------- reading

    def get(self, namespace: str | None, name: str) -> JSON | None:
        with self._lock:
            return self._items.get(f"{namespace}/{name}" if namespace else name)

    def get_key(self, key: str) -> JSON | None:
        with self._lock:
            return self._items.get(key)

    def items(self) -> list[JSON]:
        with self._lock:
            return list(self._items.values())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def by_index(self, name: str, value: str) -> list[JSON]:
        with self._lock:
            keys = self._indices[name].get(value, set())
            return [self._items[k] for k in sorted(keys)]

    # ----------------------------------------------------------------- writing

    def _index_remove(self, key: str, obj: JSON) -> None:
        for name, func in self._indexers.items():
            for value in func(obj):
                bucket = self._indices[name].get(value)
                if bucket is not None:
                    bucket.discard(key)
                    if not bucket:
                        del self._indices[name][value]

    def _index_add(self, key: str, obj: JSON) -> None:
        for name, func in self._indexers.items():
            for value in func(obj):
                self._indices[name].setdefault(value, set()).add(key)

    def _store(self, obj: JSON) -> str | None:
        """Insert or replace; returns the event type, or None if nothing changed."""
        key = object_key(obj)
        with self._lock:
            tomb = self._tombstones.get(key)
            rv = resource_version(obj)
            if tomb is not None and rv is not None and rv <= tomb:
                return None
            old = self._items.get(key)
            if old is not None:
                if not _not_older(obj, old) or old == obj:
                    return None
                self._index_remove(key, old)
            self._items[key] = obj
            self._index_add(key, obj)
            return "ADDED" if old is None else "MODIFIED"

    def _drop(self, obj: JSON) -> JSON | None:
        key = object_key(obj)
        with self._lock:
            old = self._items.pop(key, None)
            rv = resource_version(obj)
            if rv is not None:
                self._tombstones[key] = max(rv, self._tombstones.get(key, 0))
                if len(self._tombstones) > 20000:
                    self._tombstones.clear()
            if old is not None:
                self._index_remove(key, old)
            return old

    def _notify(self, event: str, obj: JSON) -> None:
        with self._lock:
            handlers = list(self._handlers)
        for handler in handlers:
            try:
                handler(event, obj)
            except Exception:  # a handler bug must not kill the watch
                log.exception("informer %s: handler failed", self.resource)

    def apply_local(self, obj: JSON) -> None:
        """Reflect our own write (create/update/patch result) before the watch does."""
        if not isinstance(obj, dict) or obj.get("kind") == "Status" or "metadata" not in obj:
            return
        event = self._store(obj)
        if event is not None:
            self._notify(event, obj)

    def delete_local(self, obj: JSON) -> None:
        """Reflect a delete we issued, given the object the server returned: it
        still exists while finalizers or a pod's grace period hold it (now with a
        deletionTimestamp), otherwise it is gone."""
        if obj.get("kind") == "Status" or "metadata" not in obj:
            return
        meta = obj["metadata"]
        pending_grace = obj.get("kind") == "Pod" and int(meta.get("deletionGracePeriodSeconds") or 0) > 0
        if meta.get("deletionTimestamp") and (meta.get("finalizers") or pending_grace):
            self.apply_local(obj)
            return
        self.apply_event("DELETED", obj)

    def apply_event(self, event_type: str, obj: JSON) -> None:
        if event_type in ("ADDED", "MODIFIED"):
            event = self._store(obj)
            if event is not None:
                self._notify(event, obj)
        elif event_type == "DELETED":
            old = self._drop(obj)
            if old is not None:
                self._notify("DELETED", obj)

    def relist(self) -> None:
        """List everything, replace the cache and notify the differences."""
        listing = self.api.list(self.resource)
        fresh = {object_key(o): o for o in listing.get("items") or []}
        kind = str(listing.get("kind", ""))
        api_version = listing.get("apiVersion")
        for obj in fresh.values():
            # Lists carry kind/apiVersion on the list, not always on items.
            if "kind" not in obj and kind.endswith("List"):
                obj["kind"] = kind[: -len("List")]
            if "apiVersion" not in obj and api_version:
                obj["apiVersion"] = api_version
        events: list[tuple[str, JSON]] = []
        with self._lock:
            for key, gone in list(self._items.items()):
                if key not in fresh:
                    self._items.pop(key)
                    self._index_remove(key, gone)
                    events.append(("DELETED", gone))
            self._tombstones.clear()
            for key, obj in fresh.items():
                old = self._items.get(key)
                if old is not None and old == obj:
                    continue
                if old is not None:
                    self._index_remove(key, old)
                self._items[key] = obj
                self._index_add(key, obj)
                events.append(("ADDED" if old is None else "MODIFIED", obj))
            self._resource_version = listing.get("metadata", {}).get("resourceVersion")
        self.synced.set()
        for event, obj in events:
            self._notify(event, obj)

    # ---------------------------------------------------------------- watching

    def start(self) -> None:
        """List, then keep the cache current from a watch in a daemon thread."""
        if self._thread is not None:
            return
        self._stop.clear()
        self.relist()
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.resource}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            watch = self._watch
        if watch is not None:
            with contextlib.suppress(Exception):
                watch.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                self._watch_once()
                failures = 0
            except ApiError as exc:
                if exc.code == 410:
                    self._safe_relist()
                    continue
                failures += 1
            except Exception:
                if self._stop.is_set():
                    return
                log.debug("informer %s: watch failed", self.resource, exc_info=True)
                failures += 1
            if failures:
                # Back off (real time: the API is down or faulty), then relist.
                self._stop.wait(min(0.05 * 2**failures, 2.0))
                self._safe_relist()

    def _safe_relist(self) -> None:
        if self._stop.is_set():
            return
        try:
            self.relist()
        except Exception:
            log.debug("informer %s: relist failed", self.resource, exc_info=True)

    def _watch_once(self) -> None:
        watch = self.api.watch(
            self.resource,
            resource_version=self._resource_version,
            allow_bookmarks=True,
            timeout_seconds=self.WATCH_TIMEOUT_SECONDS,
        )
        with self._lock:
            self._watch = watch
        if self._stop.is_set():
            watch.close()
            return
        try:
            for event in watch:
                if self._stop.is_set():
                    return
                kind, obj = event["type"], event["object"]
                if kind == "ERROR":
                    code = int(obj.get("code", 500))
                    if code == 410:
                        self.relist()
                        return
                    raise ApiError(obj)
                rv = obj.get("metadata", {}).get("resourceVersion")
                if rv:
                    self._resource_version = str(rv)
                if kind != "BOOKMARK":
                    self.apply_event(kind, obj)
        finally:
            with contextlib.suppress(Exception):
                watch.close()
            with self._lock:
                self._watch = None


class InformerSet:
    """One shared informer per resource, so the scheduler, kubelet and every
    controller read the same pod cache (one list+watch per resource)."""

    def __init__(self, api: ClusterAPI) -> None:
        self.api = api
        self._informers: dict[str, Informer] = {}
        self._lock = threading.Lock()
        self._running = False

    def get(self, resource: str) -> Informer:
        with self._lock:
            informer = self._informers.get(resource)
            if informer is None:
                informer = Informer(self.api, resource)
                self._informers[resource] = informer
                if self._running:
                    informer.start()
            return informer

    def all(self) -> list[Informer]:
        with self._lock:
            return list(self._informers.values())

    def relist_all(self) -> None:
        for informer in self.all():
            informer.relist()

    def start(self) -> None:
        with self._lock:
            self._running = True
        for informer in self.all():
            informer.start()

    def stop(self) -> None:
        with self._lock:
            self._running = False
        for informer in self.all():
            informer.stop()


class DelayingKeyQueue:
    """Deduplicating FIFO of keys with delayed adds measured on a `Clock`."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: dict[str, None] = {}
        self._delayed: list[tuple[float, int, str]] = []
        self._due_at: dict[str, float] = {}
        self._seq = 0
        self._shutdown = False

    def add(self, key: str) -> None:
        with self._cond:
            self._queue[key] = None
            self._cond.notify()

    def add_after(self, key: str, seconds: float) -> None:
        if seconds <= 0:
            self.add(key)
            return
        with self._cond:
            due = self._clock.monotonic() + seconds
            if self._due_at.get(key, float("inf")) <= due:
                return  # an earlier wake-up is already scheduled
            self._due_at[key] = due
            self._seq += 1
            heapq.heappush(self._delayed, (due, self._seq, key))
            self._cond.notify()

    def _promote_due(self) -> None:
        now = self._clock.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            due, _, key = heapq.heappop(self._delayed)
            if self._due_at.get(key) == due:
                del self._due_at[key]
                self._queue[key] = None

    def next_deadline(self) -> float | None:
        """Clock time of the earliest delayed key, if any."""
        with self._cond:
            while self._delayed and self._due_at.get(self._delayed[0][2]) != self._delayed[0][0]:
                heapq.heappop(self._delayed)  # superseded entry
            return self._delayed[0][0] if self._delayed else None

    def drain(self) -> list[str]:
        """Every key that is due now (non-blocking)."""
        with self._cond:
            self._promote_due()
            keys = list(self._queue)
            self._queue.clear()
            return keys

    def get_batch(self, max_wait: float) -> list[str]:
        """Block up to `max_wait` real seconds for due keys. Delayed keys are checked
        at least every 20 ms so a virtual clock advanced elsewhere is noticed."""
        deadline = time.monotonic() + max_wait
        with self._cond:
            while not self._shutdown:
                self._promote_due()
                if self._queue:
                    keys = list(self._queue)
                    self._queue.clear()
                    return keys
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return []
                wait = min(remaining, 0.02) if self._delayed else remaining
                self._cond.wait(wait)
            return []

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    def restart(self) -> None:
        with self._cond:
            self._shutdown = False


class Controller(abc.ABC):
    """Skeleton of a level-triggered loop over one kind of key.

    Subclasses declare the informers they read (`setup`), map events to keys
    (`on_event` handlers enqueue), list every key for a full pass
    (`all_keys`) and implement `sync(key) -> writes`.
    """

    name = "controller"
    # `source.component` of the Events it records (Kubernetes' names: deployment-controller, ...).
    component = "controller"
    RESYNC_SECONDS = 5.0

    def __init__(self, api: ClusterAPI, informers: InformerSet, clock: Clock) -> None:
        self.api = api
        self.informers = informers
        self.clock = clock
        self.queue = DelayingKeyQueue(clock)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.errors: list[str] = []
        self.events = EventRecorder(api, clock, self.component)
        self.setup()

    def setup(self) -> None:  # noqa: B027 - an optional hook: nothing to set up by default
        """Register informers, indices and handlers."""

    @abc.abstractmethod
    def all_keys(self) -> Sequence[str]:
        """Every key this controller is responsible for (a full resync)."""

    @abc.abstractmethod
    def sync(self, key: str) -> int:
        """Bring one key to its desired state; returns the number of writes made."""

    def sync_keys(self, keys: Sequence[str]) -> int:
        """Sync several keys; the scheduler overrides this to share one snapshot."""
        writes = 0
        for key in keys:
            writes += self._guarded_sync(key)
        return writes

    def _guarded_sync(self, key: str) -> int:
        try:
            return self.sync(key)
        except ApiError as exc:
            # Conflicts and transient failures: try again shortly.
            self._record(f"{key}: {exc.code} {exc.reason}: {exc}")
            self.queue.add_after(key, 0.05 if exc.code == 409 else 0.5)
            return 0
        except Exception as exc:
            log.exception("%s: sync of %s failed", self.name, key)
            self._record(f"{key}: {type(exc).__name__}: {exc}")
            self.queue.add_after(key, 1.0)
            return 0

    def _record(self, message: str) -> None:
        self.errors.append(message)
        if len(self.errors) > 200:
            del self.errors[:100]

    def step(self) -> int:
        """One deterministic pass: every key plus every due queued key."""
        keys = dict.fromkeys(self.all_keys())
        keys.update(dict.fromkeys(self.queue.drain()))
        return self.sync_keys(list(keys))

    def next_deadline(self) -> float | None:
        return self.queue.next_deadline()

    # ---------------------------------------------------------------- threads

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self.queue.restart()
        for key in self.all_keys():
            self.queue.add(key)
        self._thread = threading.Thread(target=self._run, name=f"ctrl-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.queue.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        last_resync = time.monotonic()
        while not self._stop.is_set():
            keys = self.queue.get_batch(0.5)
            if self._stop.is_set():
                return
            if keys:
                self.sync_keys(keys)
            if time.monotonic() - last_resync >= self.RESYNC_SECONDS:
                last_resync = time.monotonic()
                for key in self.all_keys():
                    self.queue.add(key)

    # ----------------------------------------------------------------- helpers

    def enqueue(self, key: str | None) -> None:
        if key:
            self.queue.add(key)


class ObjectController(Controller):
    """A controller whose keys are the objects of one resource, its `primary` informer (None
    until that resource is known, as for a custom kind whose CRD has not arrived). The full
    pass and the lookup of a key are the same for every workload controller; what it does
    with the object (`reconcile`) is what differs."""

    primary: Informer | None = None

    def watch_primary(self, resource: str) -> Informer:
        """Make `resource` this controller's: an event on one of its objects enqueues it."""
        informer = self.informers.get(resource)
        informer.add_handler(lambda _e, obj: self.enqueue(object_key(obj)))
        self.primary = informer
        return informer

    def watch_owned(self, resource: str, owner_kind: str) -> Informer:
        """Objects a `owner_kind` controls, indexed by `controller` uid: an event on one
        enqueues its owner."""
        informer = self.informers.get(resource)
        informer.add_index("controller", controller_uid)
        informer.add_handler(lambda _e, obj: self.enqueue(owner_key(obj, owner_kind)))
        return informer

    def all_keys(self) -> Sequence[str]:
        return sorted(self.primary.keys()) if self.primary is not None else []

    def sync(self, key: str) -> int:
        obj = self.primary.get_key(key) if self.primary is not None else None
        return 0 if obj is None else self.reconcile(obj)

    @abc.abstractmethod
    def reconcile(self, obj: JSON) -> int:
        """Bring one object (as the informer holds it) to its desired state; returns the writes."""


CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"


def crd_storage_resource(crd: JSON) -> tuple[str, str] | None:
    """(`group/version/plural`, kind) of a CustomResourceDefinition at the version it stores
    (the first one when none says so); None for a CRD without versions or names."""
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("storage")] or spec.get("versions") or []
    names = spec.get("names") or {}
    if not versions or not names.get("plural") or not names.get("kind"):
        return None
    return f"{spec.get('group')}/{versions[0]['name']}/{names['plural']}", str(names["kind"])


def controller_ref(obj: JSON) -> dict[str, Any] | None:
    """The ownerReference with `controller: true`, if any."""
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def controller_uid(obj: JSON) -> list[str]:
    """Index function: the controlling owner's uid."""
    ref = controller_ref(obj)
    return [str(ref["uid"])] if ref and ref.get("uid") else []


def owner_key(obj: JSON, kind: str) -> str | None:
    """Queue key of the controlling owner of `kind` in the object's namespace."""
    ref = controller_ref(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    namespace = obj.get("metadata", {}).get("namespace")
    name = str(ref.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def new_owner_ref(owner: JSON, api_version: str, kind: str) -> dict[str, Any]:
    """An ownerReference marking `owner` as the controller, blocking its deletion."""
    meta = owner["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
