"""Turning slot reservations into status writes: per-spread group commit (the webhook's
`SpreadCommitter`, `py_engine.workloadspread.admission.ports`).

Every pod admission that takes (or frees) a slot must be durably written to the
WorkloadSpread's status before the pod is answered, or counting breaks. One
write per pod serialises a burst on the API server's write latency, so
reservations arriving while a write for the same spread is in flight are
batched into the next single write:

* `submit(namespace, name, apply, deadline)` queues `apply` for the spread and
  blocks until it is committed (or cannot be). `apply(obj) -> (new_obj | None,
  result)` is a function of the freshest object alone: it returns the object to
  write (None: nothing to write) and the caller's result. `obj["status"]` is a
  copy private to the batch attempt, which an apply that writes may extend in
  place (`Apply`, py_engine/workloadspread/admission/ports.py).
* `submit_async(..., on_done)` queues the same way without waiting: `on_done(result,
  error)` is called once, on the thread that committed the batch. The webhook
  answers pod CREATEs and DELETEs this way, so an admission waiting for its
  batch holds no thread: parking a worker thread per admission and waking it
  again cost about as much CPU as the whole decision (docs/performance.md,
  "Costs found, and what changed").
* Per spread, one thread at a time leads: it takes every pending request in
  arrival order, applies them one after another to one copy of the freshest
  object, and writes once through the status subresource with that object's
  resourceVersion. Each request is answered only after the write succeeded.
  The thread that queues a request while nobody leads becomes the leader. An
  asynchronous submitter leads until the queue is empty. A blocking one leads
  until its own request is answered, then hands leadership to the oldest
  blocked waiter; when only asynchronous requests wait, it starts a thread that
  leads them, so a blocking caller is never kept beyond its own batch.
* Each blocked waiter sleeps on its own bell (`_Request.bell`), rung when its
  request is answered or leadership is handed to it. A condition variable
  notified per batch woke every waiting thread (about 60 at 64 concurrent
  admissions) only for most of them to find nothing changed and sleep again.
* On 409 Conflict the batch is re-applied to a newer object (an apply depends on its input
  alone, so this is safe) until the write succeeds or the requests' deadlines pass, with the
  requests that arrived meanwhile joining it. Several webhook processes stay exact because
  they contend through resourceVersion, exactly like the reference. Between replicas a 409
  is the normal case: another writer's write succeeded and is on its way to the watch cache,
  so the retry takes the cache's copy once it is newer (waiting up to `conflict_wait`) and
  goes at once; only when no newer copy comes is the spread read from the API, and only when
  that read shows the very resourceVersion refused (no other writer won) does the retry wait
  a jittered backoff (docs/scale.md, "Replicas: the committer's conflict path").
* While another writer contends for the spread, a write is sent from a thread of its own
  (at most `max_write_threads` at a time) and the leader watches the cache meanwhile:
  between replicas a batch's write is usually sent while a peer's is still on the wire, lands
  second, and is answered 409 a whole write latency later. Once the cache shows another
  writer's object in place of the write's base, the write is given up as overtaken and the
  batch applied on that object and sent at once (an apply is idempotent, so even a write that
  was stored after all and written over by a peer counts once; docs/scale.md, "Overtaken
  writes"). A lone writer writes on the leader's thread.
* During a burst the leader lingers `linger` (10 ms) before taking a batch, so that more
  requests share its write; while another writer (a replica, the controller) contends for
  the spread (a 409 or a batch skipped as stale within `contention_window`), it lingers
  `contended_linger` (30 ms) instead. Each write attempt is a window in which a peer's
  write turns it into a 409 and a re-applied batch: between three replicas the longer
  linger halved the conflicts and cut the webhooks' CPU per pod by a sixth, where a longer
  linger for a lone writer only added latency (docs/scale.md, "Contended linger").
  `linger=0` turns both off.
* A request whose deadline passes before its batch is written fails with
  `CommitTimeout` and nothing of it is written; a request inside a batch whose
  write is already on the wire waits for that write's outcome (an overtaken write's: the
  batch's application on the object that overtook it), so a request is
  never reported failed while its reservation was written. A blocked waiter
  times out by itself; an asynchronous request is failed when the leader takes
  it, which is at most one write later (that write's own timeout ends at the
  batch's latest deadline, no later than the request's).
* Freshest object: the last object this process wrote or read from the API is
  used until the watch cache has shown that same resourceVersion, or one this process does
  not know to be superseded (a peer wrote since); from then on the watch cache is newer. A
  batch whose base the cache shows superseded once it is applied is applied again instead of
  being sent. resourceVersions are only compared for equality (they are opaque; each slot
  remembers the ones it saw superseded); a wrong guess costs one 409, never a miscount.
* `dry_run=True` decides on the freshest known object and never writes.
* Per-spread state lives only while it is useful: a spread's slot is dropped
  once no request uses it and it has been idle for `idle_ttl` seconds, or,
  beyond `max_idle_slots` idle slots, the longest idle ones first. Memory is
  bounded by the spreads in use plus `max_idle_slots`, not by every spread
  ever seen; a dropped slot only forgets the last object written (the next
  request reads the watch cache; at worst one 409 re-reads it).

A write that fails without a definite answer (timeout, 5xx) is reported as
`CommitError`: it may have been applied, and the orphaned reservation is aged
out by the controller (creatingPods after 30 s), as in the reference.

Time comes from the injected `Clock`: deadlines are `clock.monotonic()` values.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from py_engine.apiclient import (
    Conflict,
    KubeClient,
    KubeError,
    NotFound,
    Resource,
    TooManyRequests,
    WatchCache,
)
from py_engine.semantics import objects
from py_engine.semantics.clock import Clock
from py_engine.semantics.jsoncopy import json_copy
from py_engine.workloadspread.admission.ports import (
    Apply,
    CommitError,
    CommitFailed,
    CommitTimeout,
    Done,
    SpreadNotFound,
)

R = TypeVar("R")
JSON = dict[str, Any]
log = logging.getLogger(__name__)

__all__ = [
    "CommitError",
    "CommitFailed",
    "CommitTimeout",
    "Committer",
    "CommitterStats",
    "KubeStatusStore",
    "SpreadNotFound",
    "StatusStore",
]

_MIN_REQUEST_TIMEOUT = 0.05
_SUPERSEDED = 64
"""resourceVersions a slot remembers as superseded (`_Slot.superseded`)."""


class StatusStore(Protocol):
    """Where spreads are read and their status written."""

    def get(self, namespace: str, name: str, *, timeout: float) -> JSON:
        """The object straight from the API server; raises `NotFound`."""
        ...

    def replace_status(self, namespace: str, name: str, obj: JSON, *, timeout: float) -> JSON:
        """PUT to /status with obj's resourceVersion and return the object as stored; raises
        `Conflict` when stale."""
        ...

    def cached(self, namespace: str, name: str) -> JSON | None:
        """The watch cache's copy, if any (None: not cached / no cache)."""
        ...


@runtime_checkable
class FollowedStatusStore(Protocol):
    """A `StatusStore` whose watch cache can be waited on (`KubeStatusStore` with a cache)."""

    def wait_cached(
        self,
        namespace: str,
        name: str,
        superseded: Collection[str],
        timeout: float,
        until: Callable[[], bool] | None = None,
    ) -> JSON | None:
        """The cached copy once its resourceVersion is none of `superseded` (at once when it
        already is), or None after `timeout` seconds or once `until()` holds (checked on every
        `wake` and every change of the cache)."""
        ...

    def wake(self) -> None:
        """Wake every `wait_cached` caller to check its `until` again."""
        ...


class KubeStatusStore:
    """`StatusStore` on a `KubeClient` and (optionally) the resource's `WatchCache`, which
    `wait_cached` follows: a handler on the cache wakes the waiters on every change."""

    def __init__(self, client: KubeClient, resource: Resource, cache: WatchCache | None = None) -> None:
        self.client = client
        self.resource = resource
        self.cache = cache
        self._changed = threading.Condition()
        self._waiting = 0
        if cache is not None:
            cache.add_handler(self._on_change)

    def _on_change(self, kind: str, obj: JSON, old: JSON | None) -> None:
        """Wake the waiters (the cache has stored `obj` before calling its handlers, so a waiter
        that registers after this unlocked read finds the new copy itself)."""
        if self._waiting:
            with self._changed:
                self._changed.notify_all()

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def wait_cached(
        self,
        namespace: str,
        name: str,
        superseded: Collection[str],
        timeout: float,
        until: Callable[[], bool] | None = None,
    ) -> JSON | None:
        if self.cache is None:
            return None
        deadline = time.monotonic() + timeout
        with self._changed:
            self._waiting += 1
            try:
                for _ in range(1000):  # woken once per change of any cached spread; bounded anyway
                    if until is not None and until():
                        break
                    obj = self.cache.get(namespace, name)
                    if obj is not None and _rv(obj) not in superseded:
                        return obj
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._changed.wait(remaining)
            finally:
                self._waiting -= 1
        return None

    def get(self, namespace: str, name: str, *, timeout: float) -> JSON:
        return self.client.get(self.resource, namespace, name, timeout=timeout)

    def replace_status(self, namespace: str, name: str, obj: JSON, *, timeout: float) -> JSON:
        """The write asks for the stored metadata alone: the whole spread, its status holding an entry
        per pod admitted since the controller last counted, would otherwise come back (and be
        decoded) on every write, as large as the request. The stored object is then `obj` with
        that metadata: a status PUT takes the status as sent and nothing else, and the spec is the
        one read (a spec changed since would have moved the resourceVersion: a 409). A schema that
        prunes or defaults status fields shows in the watch cache's copy, which replaces this one
        once it has caught up. A server that answers the whole object instead is taken at its word."""
        answer = self.client.replace_status(
            self.resource, namespace, name, obj, timeout=timeout, metadata_only=True
        )
        if answer.get("kind") != "PartialObjectMetadata" or not isinstance(answer.get("metadata"), dict):
            return answer
        return dict(obj, metadata=answer["metadata"])

    def cached(self, namespace: str, name: str) -> JSON | None:
        return self.cache.get(namespace, name) if self.cache is not None else None


@dataclass
class CommitterStats:
    """Counters read by the metrics endpoint and the tests (guarded by `lock`)."""

    writes: int = 0
    conflicts: int = 0
    reads: int = 0
    retries: int = 0
    """Write attempts after the first of a batch (after a 409 or a 429)."""
    backoffs: int = 0
    """Pauses taken before a retry (a 429, or a 409 that no newer object explains)."""
    refreshed: int = 0
    """Retries after a 409 that took the newer object from the watch cache instead of a GET."""
    applied: int = 0
    """Requests applied, counting each time a retry applies them again."""
    overtaken: int = 0
    """Writes given up while on the wire: the watch cache showed another writer's object in
    place of their base, so their 409 was certain; the batch was sent again at once."""
    stale_skips: int = 0
    """Batches not sent because the watch cache showed a newer object while they were applied
    (the write could only have been answered 409)."""
    timeouts: int = 0
    errors: int = 0
    committed: int = 0
    batch_sizes: Counter[int] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for key, value in counts.items():
                setattr(self, key, getattr(self, key) + value)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "writes": self.writes,
                "conflicts": self.conflicts,
                "reads": self.reads,
                "retries": self.retries,
                "backoffs": self.backoffs,
                "refreshed": self.refreshed,
                "stale_skips": self.stale_skips,
                "overtaken": self.overtaken,
                "applied": self.applied,
                "timeouts": self.timeouts,
                "errors": self.errors,
                "committed": self.committed,
                "batch_sizes": dict(self.batch_sizes),
            }


class _Request(Generic[R]):
    __slots__ = ("apply", "bell", "deadline", "done", "error", "leads", "on_done", "result", "taken")

    def __init__(
        self, apply: Apply[R], deadline: float, on_done: Callable[[_Request[R]], None] | None = None
    ) -> None:
        self.apply = apply
        self.deadline = deadline
        self.done = False
        self.taken = False
        self.leads = False
        """Set (under the slot's lock) when leadership is handed to this blocked waiter."""
        self.result: R | None = None
        self.error: BaseException | None = None
        self.on_done = on_done
        """Asynchronous requests: called once when answered. Blocking ones have a bell instead."""
        self.bell: queue.SimpleQueue[None] | None = queue.SimpleQueue() if on_done is None else None
        """Rung (put) when the request is answered or may lead; a ring may be stale, so the
        woken thread re-checks under the slot's lock."""

    @property
    def blocked(self) -> bool:
        """Whether a thread waits for this request (it can be handed leadership)."""
        return self.bell is not None

    def ring(self) -> None:
        if self.bell is not None:
            self.bell.put(None)

    def park(self, timeout: float) -> None:
        """Sleep until rung or `timeout` seconds passed (the caller holds no lock)."""
        assert self.bell is not None
        with contextlib.suppress(queue.Empty):
            self.bell.get(timeout=timeout)

    def answer(self) -> None:
        """Wake the waiter or run the continuation (`done` is already set)."""
        if self.on_done is None:
            self.ring()
            return
        try:
            self.on_done(self)
        except Exception:  # the continuation answers its own failures; this is a bug in it
            log.exception("a committed request's continuation failed")


class _Slot:
    """Per-spread state: the queue, who leads, and the freshest object known."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending: list[_Request[Any]] = []
        self.leading = False
        self.known: JSON | None = None
        self.caught_up = False
        self.superseded: dict[str, None] = {}
        """resourceVersions known to be older than the newest object (in the order learnt,
        at most `_SUPERSEDED` of them): the base of every write (written over or answered 409),
        the object a GET or a write replaced. Only compared for equality."""
        self.last_commit = float("-inf")
        self.contended_until = float("-inf")
        """Until when another writer is taken to be writing this spread too: set by a 409 or a
        batch skipped as stale (`Committer.contention_window` from then)."""
        self.users = 0  # submits holding this slot (guarded by the committer's slots lock)
        self.idle_since = float("-inf")

    def remember(self, obj: JSON) -> None:
        self.known = obj
        self.caught_up = False

    def supersede(self, *objs: JSON | None) -> None:
        """Note these objects' resourceVersions as older than the newest (under the slot's lock:
        a dry run reads from any thread while the leader writes)."""
        with self.lock:
            for obj in objs:
                rv = _rv(obj)
                if rv:
                    self.superseded.pop(rv, None)
                    self.superseded[rv] = None
            while len(self.superseded) > _SUPERSEDED:
                del self.superseded[next(iter(self.superseded))]

    def current_after_all(self, obj: JSON) -> bool:
        """Take `obj`'s resourceVersion off the superseded ones; whether it was on them."""
        rv = _rv(obj)
        with self.lock:
            if rv not in self.superseded:
                return False
            del self.superseded[rv]
            return True

    def newer_in_cache(self, cached: JSON | None) -> bool:
        """Whether the watch cache's copy is none this process knows to be superseded."""
        return cached is not None and _rv(cached) not in self.superseded


class _Overtaken(Exception):
    """The watch cache showed another writer's object (`newer`) while this process's write was
    on the wire: a status PUT conditional on its base's resourceVersion can then only be
    refused."""

    def __init__(self, newer: JSON) -> None:
        super().__init__("overtaken")
        self.newer = newer


class _InFlight:
    """One status write on a thread of its own, so that the leader can stop waiting for it;
    `after` runs once it has its answer (or failed)."""

    __slots__ = ("_after", "_write", "done", "error", "result")

    def __init__(self, write: Callable[[], JSON], after: Callable[[], None]) -> None:
        self._write = write
        self._after = after
        self.done = threading.Event()
        self.result: JSON | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._write()
        except BaseException as exc:  # raised again to whoever reads the outcome, if anyone does
            self.error = exc
        finally:
            self.done.set()
            self._after()

    def outcome(self) -> JSON:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def _writes_nothing(request: _Request[Any], base: JSON) -> bool:
    """Whether `request` applied on `base` leaves nothing to write: its reservation is there
    already (a write that was overtaken and stored after all), or it takes none."""
    try:
        new, _ = request.apply(_working_copy(base))
    except Exception:  # the batch's own application reports it
        return False
    return new is None


def _working_copy(base: JSON) -> JSON:
    """What a batch's applies start from: `status` deep-copied (JSON data: many times cheaper than
    `copy.deepcopy`), so the applies may extend its maps in place (`Apply`) and nothing they do
    there reaches the cached object; `spec` and the maps inside `metadata` shared, as every
    reservation and release already shares them with its input (py_engine/workloadspread/admission/ledger.py,
    `SubsetLedger.written`). Sharing keeps the spec the very object the parsed-view cache saw
    (py_engine/workloadspread/admission/caches.py), so the batch's reservations find their view by identity
    instead of re-encoding the spec each."""
    obj = dict(base)
    metadata = base.get("metadata")
    if isinstance(metadata, dict):
        obj["metadata"] = dict(metadata)
    if "status" in base:
        obj["status"] = json_copy(base["status"])
    return obj


def _rv(obj: JSON | None) -> str:
    return str(objects.meta(obj or {}).get("resourceVersion") or "")


class Committer:
    """Group-committing status writer (see the module docstring).

    `batching=False` writes each reservation on its own (the one-write-per-pod
    baseline of the benchmark). `max_batch` bounds a batch (and so the size of
    one status write's worth of reservations). `idle_ttl` and `max_idle_slots`
    bound the per-spread state kept for spreads no request is using. `answering`
    is entered around each batch's write and answers.
    """

    def __init__(
        self,
        store: StatusStore,
        clock: Clock,
        *,
        batching: bool = True,
        max_batch: int = 256,
        conflict_backoff: float = 0.005,
        conflict_wait: float = 0.05,
        linger: float = 0.01,
        contended_linger: float = 0.03,
        contention_window: float = 1.0,
        burst_window: float = 0.1,
        seed: int | None = None,
        idle_ttl: float = 60.0,
        max_idle_slots: int = 1024,
        max_write_threads: int = 16,
        answering: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
    ) -> None:
        self.store = store
        self.answering = answering
        """Entered around each batch's write and answers: the webhook's front end holds the
        answers posted to its event loop there, so a batch reaches the loop in one wakeup."""
        self.clock = clock
        self.max_batch = max_batch if batching else 1
        self.conflict_backoff = conflict_backoff
        self.conflict_wait = conflict_wait
        self._followed = store if isinstance(store, FollowedStatusStore) else None
        self._write_threads = threading.BoundedSemaphore(max_write_threads)
        self.linger = linger if batching else 0.0
        self.contended_linger = contended_linger if self.linger > 0 else 0.0
        self.contention_window = contention_window
        self.burst_window = burst_window
        self.stats = CommitterStats()
        self.idle_ttl = idle_ttl
        self.max_idle_slots = max(max_idle_slots, 1)
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._slots_lock = threading.Lock()
        self._next_sweep = float("-inf")
        self._random = random.Random(seed)

    def _acquire(self, namespace: str, name: str) -> _Slot:
        """The spread's slot, held until `_release` (a held slot is never pruned)."""
        now = self.clock.monotonic()
        with self._slots_lock:
            if now >= self._next_sweep or len(self._slots) > self.max_idle_slots:
                self._prune_locked(now)
            slot = self._slots.get((namespace, name))
            if slot is None:
                slot = self._slots[(namespace, name)] = _Slot()
            slot.users += 1
            return slot

    def _release(self, slot: _Slot) -> None:
        with self._slots_lock:
            slot.users -= 1
            if slot.users == 0:
                slot.idle_since = self.clock.monotonic()

    def _prune_locked(self, now: float) -> None:
        """Drop slots no submit holds that were idle for `idle_ttl`; beyond `max_idle_slots`
        idle ones, drop the longest idle down to half that bound (amortised: the next
        overflow is half the bound away). Runs at most every `idle_ttl / 4` seconds
        otherwise. Caller holds `_slots_lock`."""
        self._next_sweep = now + self.idle_ttl / 4
        idle = [(slot.idle_since, key) for key, slot in self._slots.items() if slot.users == 0]
        expired = [key for since, key in idle if now - since >= self.idle_ttl]
        for key in expired:
            del self._slots[key]
        remaining = sorted((since, key) for since, key in idle if now - since < self.idle_ttl)
        if len(remaining) > self.max_idle_slots:
            for _, key in remaining[: len(remaining) - self.max_idle_slots // 2]:
                del self._slots[key]

    def tracked_spreads(self) -> int:
        """How many spreads the committer keeps state for (in use or recently idle)."""
        with self._slots_lock:
            return len(self._slots)

    # ---------------------------------------------------------------- public

    def submit(
        self, namespace: str, name: str, apply: Apply[R], deadline: float, *, dry_run: bool = False
    ) -> R:
        """Commit `apply` on spread namespace/name before `deadline` (clock.monotonic());
        returns apply's result from the committed attempt. Raises `CommitFailed`
        subclasses, or whatever `apply` raised."""
        slot = self._acquire(namespace, name)
        try:
            if dry_run:
                return self._dry_run(slot, namespace, name, apply, deadline)
            return self._submit(slot, namespace, name, apply, deadline)
        finally:
            self._release(slot)

    def submit_async(
        self,
        namespace: str,
        name: str,
        apply: Apply[R],
        deadline: float,
        on_done: Done[R],
        *,
        dry_run: bool = False,
    ) -> None:
        """Like `submit`, without waiting: `on_done(result, None)` or `on_done(None, error)` is
        called exactly once, on the thread that committed the request's batch (this one, when
        it finds nobody leading; it then leads until the queue is empty)."""
        slot = self._acquire(namespace, name)
        if dry_run:
            try:
                result = self._dry_run(slot, namespace, name, apply, deadline)
            except Exception as exc:
                self._release(slot)
                on_done(None, exc)
                return
            self._release(slot)
            on_done(result, None)
            return

        def answered(req: _Request[R]) -> None:
            self._release(slot)
            on_done(req.result, req.error)

        req: _Request[R] = _Request(apply, deadline, answered)
        with slot.lock:
            slot.pending.append(req)
            lead = not slot.leading
            slot.leading = True
        if lead:
            self._lead(slot, namespace, name, None)

    def _dry_run(self, slot: _Slot, namespace: str, name: str, apply: Apply[R], deadline: float) -> R:
        base = self._read(slot, namespace, name, fresh=False, timeout=self._remaining(deadline))
        _, result = apply(json_copy(base))
        return result

    def _submit(self, slot: _Slot, namespace: str, name: str, apply: Apply[R], deadline: float) -> R:
        req: _Request[R] = _Request(apply, deadline)
        with slot.lock:
            slot.pending.append(req)
            lead = not slot.leading
            slot.leading = True
        while not lead:
            with slot.lock:
                if req.done:
                    break
                if req.leads:
                    lead = True
                    break
                remaining = deadline - self.clock.monotonic()
                if remaining <= 0 and not req.taken:
                    slot.pending.remove(req)
                    self._fail(req, CommitTimeout(self._timeout_message(namespace, name)))
                    break
            # Taken requests wait for their batch's outcome whatever the time.
            req.park(max(remaining, 0.0) + 0.001 if not req.taken else 0.05)
        if lead:
            self._lead(slot, namespace, name, req)
        if req.error is not None:
            raise req.error
        return req.result  # type: ignore[return-value]

    # --------------------------------------------------------------- leading

    def _lead(self, slot: _Slot, namespace: str, name: str, own: _Request[Any] | None) -> None:
        """Commit batch after batch; the caller holds leadership (`slot.leading`). Returns when
        the queue is empty (leadership released) or, for a blocking leader (`own`), once its
        own request is answered (leadership handed on, `_hand_over`)."""
        while True:
            if own is not None and own.done:
                self._hand_over(slot, namespace, name)
                return
            self._linger(slot)
            batch = self._take(slot, self.max_batch)
            if not batch:
                with slot.lock:
                    if not slot.pending:  # checked under the lock a submitter takes to see `leading`
                        slot.leading = False
                        return
                continue
            try:
                with self.answering():
                    self._commit(slot, namespace, name, batch)
            except Exception as exc:  # never leave a taken request unanswered; the next batch goes on
                for r in batch:
                    if not r.done:
                        self._fail(r, exc)
            except BaseException as exc:
                for r in batch:
                    if not r.done:
                        self._fail(r, CommitError(f"interrupted: {type(exc).__name__}"))
                self._hand_over(slot, namespace, name)
                raise

    def _hand_over(self, slot: _Slot, namespace: str, name: str) -> None:
        """Pass leadership on: released when nothing waits; to the oldest blocked waiter; or,
        when only asynchronous requests wait, to a new thread that leads them to the end."""
        with slot.lock:
            if not slot.pending:
                slot.leading = False
                return
            waiter = next((r for r in slot.pending if r.blocked), None)
            if waiter is not None:
                waiter.leads = True
                waiter.ring()
                return
        threading.Thread(
            target=self._lead,
            args=(slot, namespace, name, None),
            daemon=True,
            name=f"committer-{namespace}/{name}",
        ).start()

    @staticmethod
    def _take(slot: _Slot, limit: int) -> list[_Request[Any]]:
        """Move up to `limit` pending requests, in arrival order, into a batch."""
        if limit <= 0:
            return []
        with slot.lock:
            batch = slot.pending[:limit]
            del slot.pending[: len(batch)]
            for r in batch:
                r.taken = True
        return batch

    def _linger(self, slot: _Slot) -> None:
        """During a burst (a commit finished within `burst_window`), wait up to `linger`
        for more requests to join the batch: a few milliseconds of latency buy several
        reservations per write. Never past a quarter of the earliest pending deadline.

        While another writer contends for the spread (a 409 or a batch skipped as stale within
        `contention_window`), wait `contended_linger` instead: every write attempt is a window
        in which a peer's write makes it a 409, and the re-applied batch costs CPU the peers
        need too; fewer, larger attempts halve the conflicts (docs/scale.md, "Contended
        linger")."""
        now = self.clock.monotonic()
        linger = self.contended_linger if now < slot.contended_until else self.linger
        if linger <= 0 or now - slot.last_commit > self.burst_window:
            return
        with slot.lock:
            if len(slot.pending) >= self.max_batch or not slot.pending:
                return
            room = min(r.deadline for r in slot.pending) - now
        pause = min(linger, room / 4)
        if pause > 0:
            self.clock.sleep(pause)

    def _commit(self, slot: _Slot, namespace: str, name: str, batch: list[_Request[Any]]) -> None:
        """Write `batch` once (re-applied after each conflict). Requests taken on a retry are
        appended to `batch` itself, so a caller that fails the unanswered ones after an
        exception reaches every request this commit took."""
        owned = batch
        base: JSON | None = None  # the object to apply on, when a retry already has it
        backoff = self.conflict_backoff
        overtaken_by: JSON | None = None  # what overtook the last write, which may yet be stored
        while batch:
            now = self.clock.monotonic()
            for r in batch:
                if r.deadline <= now and not (overtaken_by is not None and _writes_nothing(r, overtaken_by)):
                    self._fail(r, CommitTimeout(self._timeout_message(namespace, name)))
            overtaken_by = None
            batch = [r for r in batch if not r.done]
            if not batch:
                return
            timeout = max(max(r.deadline for r in batch) - now, _MIN_REQUEST_TIMEOUT)
            try:
                if base is None:
                    base = self._read(slot, namespace, name, fresh=False, timeout=timeout)
            except CommitFailed as exc:
                for r in batch:
                    self._fail(r, exc)
                return
            obj = _working_copy(base)
            changed = False
            results: dict[int, Any] = {}
            self.stats.add(applied=len(batch))
            for r in batch:
                try:
                    new, result = r.apply(obj)
                except Exception as exc:  # this request alone fails; the others go on
                    self._fail(r, exc)
                    continue
                results[id(r)] = result
                if new is not None:
                    obj = new
                    changed = True
            batch = [r for r in batch if not r.done]
            if not changed:
                for r in batch:
                    self._succeed(r, results[id(r)])
                return
            applied_on, base = base, None
            cached = self.store.cached(namespace, name)
            if _rv(cached) != _rv(applied_on) and slot.newer_in_cache(cached):
                # Another writer's object arrived while the batch was applied: this write could
                # only be answered 409. Apply again on the newer one, with what arrived meanwhile.
                self.stats.add(stale_skips=1)
                self._note_contention(slot)
                slot.supersede(applied_on, slot.known)
                slot.caught_up = True
                base = cached
                batch = self._join(slot, owned, batch)
                continue
            try:
                written = self._write(slot, namespace, name, obj, applied_on, timeout)
            except _Overtaken as overtaken:
                # Almost always refused; but the object that overtook it may be a peer's written
                # on top of it. Re-applied on that object, a reservation already there changes
                # nothing (an apply is idempotent), and a request past its deadline is failed
                # only if it would change something there (so it was not stored).
                self.stats.add(conflicts=1, retries=1, overtaken=1)
                self._note_contention(slot)
                slot.supersede(applied_on, slot.known)
                slot.caught_up = True
                base = overtaken_by = overtaken.newer
                batch = self._join(slot, owned, batch)
                continue
            except Conflict:
                self.stats.add(conflicts=1, retries=1)
                self._note_contention(slot)
                slot.supersede(applied_on, slot.known)
                try:
                    base = self._after_conflict(slot, namespace, name, batch, timeout)
                except CommitFailed as exc:
                    for r in batch:
                        self._fail(r, exc)
                    return
                if base is None:  # no newer object: not another writer's success; wait, re-read
                    self._sleep_before_retry(backoff, batch)
                    backoff = min(backoff * 2, 0.1)
                # The retry is a new write anyway: let what arrived meanwhile ride along.
                batch = self._join(slot, owned, batch)
                continue
            except TooManyRequests:
                self.stats.add(retries=1)
                self._sleep_before_retry(backoff * 4, batch)
                try:
                    base = self._read(slot, namespace, name, fresh=True, timeout=timeout)
                except CommitFailed as exc:
                    for r in batch:
                        self._fail(r, exc)
                    return
                continue
            except NotFound:
                for r in batch:
                    self._fail(r, SpreadNotFound(f"WorkloadSpread {namespace}/{name} not found"))
                return
            except KubeError as exc:
                self.stats.add(errors=1)
                for r in batch:
                    self._fail(r, CommitError(f"writing status of WorkloadSpread {namespace}/{name}: {exc}"))
                return
            slot.supersede(applied_on)
            slot.remember(written)
            slot.last_commit = self.clock.monotonic()
            with self.stats.lock:
                self.stats.writes += 1
                self.stats.batch_sizes[len(batch)] += 1
            for r in batch:
                self._succeed(r, results[id(r)])
            # Written: done. Looping again would fail these (now answered) requests
            # with CommitTimeout when their deadline passed while the write was on the wire.
            return

    def _write(
        self, slot: _Slot, namespace: str, name: str, obj: JSON, applied_on: JSON, timeout: float
    ) -> JSON:
        """PUT `obj`, conditional on the resourceVersion of `applied_on`, its base.

        While another writer contends for the spread, the write runs on a thread of its own and
        the leader watches the cache meanwhile: an object there that is neither the base, nor
        one known superseded, nor the one being written (same status) is another writer's, and
        this write can then only be refused (a resourceVersion, once replaced, never comes
        back). `_Overtaken` hands that object to the caller at once, so the retry goes out
        without waiting out the 409, a whole write latency later: between three replicas
        nearly every batch's first attempt is overtaken this way (docs/scale.md,
        "Overtaken writes"). A lone writer, or one past `max_write_threads` writes in flight,
        writes on the leader's own thread."""
        followed = self._followed
        if (
            followed is None
            or self.clock.monotonic() >= slot.contended_until
            or not self._write_threads.acquire(blocking=False)
        ):
            return self.store.replace_status(namespace, name, obj, timeout=timeout)

        def written() -> None:
            self._write_threads.release()
            followed.wake()

        flight = _InFlight(partial(self.store.replace_status, namespace, name, obj, timeout=timeout), written)
        with slot.lock:
            older = {*slot.superseded, _rv(applied_on)}
        threading.Thread(target=flight.run, daemon=True, name=f"status-write-{namespace}/{name}").start()
        newer = followed.wait_cached(namespace, name, older, timeout, until=flight.done.is_set)
        if newer is None or flight.done.is_set() or newer.get("status") == obj.get("status"):
            return flight.outcome()
        raise _Overtaken(newer)

    def _note_contention(self, slot: _Slot) -> None:
        """Another writer moved the spread under a batch: linger `contended_linger` for a while."""
        slot.contended_until = self.clock.monotonic() + self.contention_window

    def _join(
        self, slot: _Slot, owned: list[_Request[Any]], batch: list[_Request[Any]]
    ) -> list[_Request[Any]]:
        """`batch` with the requests that arrived meanwhile (up to `max_batch`), also recorded in
        `owned` (the list the leader fails on an exception)."""
        joined = self._take(slot, self.max_batch - len(batch))
        owned.extend(joined)
        return batch + joined

    def _after_conflict(
        self, slot: _Slot, namespace: str, name: str, batch: list[_Request[Any]], timeout: float
    ) -> JSON | None:
        """The object to retry on after a 409, or None when nothing newer exists (the 409 was
        not another writer's success: the caller backs off before reading again).

        A 409 on a status write almost always means another writer (a replica, the
        controller) moved the resourceVersion, and its write is then already on its way to
        the watch cache: the cache's copy is taken as soon as it is none this process knows
        to be superseded, waiting for it up to `conflict_wait` (never past the batch's
        earliest deadline), instead of a GET. Only when it does not come is the spread read
        from the API server."""
        cached = self.store.cached(namespace, name)
        if not slot.newer_in_cache(cached) and self._followed is not None:
            room = min(r.deadline for r in batch) - self.clock.monotonic()
            wait = min(self.conflict_wait, room)
            cached = self._followed.wait_cached(namespace, name, slot.superseded, wait) if wait > 0 else None
        if cached is not None and slot.newer_in_cache(cached):
            self.stats.add(refreshed=1)
            slot.caught_up = True
            return cached
        got = self._read(slot, namespace, name, fresh=True, timeout=timeout)
        return None if slot.current_after_all(got) else got  # the very object written over: no writer won

    def _sleep_before_retry(self, backoff: float, batch: list[_Request[Any]]) -> None:
        """Jittered pause before a retry that no other writer's success explains (a 429, a 409
        with the resourceVersion unchanged), never past a deadline."""
        room = min(r.deadline for r in batch) - self.clock.monotonic()
        pause = min(backoff * (0.5 + self._random.random()), max(room, 0.0))
        if pause > 0:
            self.stats.add(backoffs=1)
            self.clock.sleep(pause)

    # --------------------------------------------------------------- reading

    def _read(self, slot: _Slot, namespace: str, name: str, *, fresh: bool, timeout: float) -> JSON:
        """The freshest object known (`fresh=False`), else one read from the API server.

        Freshest: the watch cache's copy once it has shown the object this process last wrote
        or read (`caught_up`), or when it holds one this process does not know to be
        superseded (another replica wrote since); the object last written or read while the
        cache is behind."""
        cached = self.store.cached(namespace, name)
        known = slot.known
        if not fresh:
            if cached is not None and (known is None or slot.caught_up or _rv(cached) == _rv(known)):
                slot.caught_up = known is not None
                return cached
            if cached is not None and slot.newer_in_cache(cached):
                slot.supersede(known)
                slot.caught_up = True
                return cached
            if known is not None and not slot.caught_up:
                return known
        self.stats.add(reads=1)
        try:
            obj = self.store.get(namespace, name, timeout=max(timeout, _MIN_REQUEST_TIMEOUT))
        except NotFound:
            raise SpreadNotFound(f"WorkloadSpread {namespace}/{name} not found") from None
        except KubeError as exc:
            self.stats.add(errors=1)
            raise CommitError(f"reading WorkloadSpread {namespace}/{name}: {exc}") from None
        # What the cache and this process held before are no newer than what the server has now.
        for older in (cached, known):
            if older is not None and _rv(older) != _rv(obj):
                slot.supersede(older)
        slot.remember(obj)
        return obj

    # ------------------------------------------------------------- answering

    def _remaining(self, deadline: float) -> float:
        return max(deadline - self.clock.monotonic(), _MIN_REQUEST_TIMEOUT)

    @staticmethod
    def _timeout_message(namespace: str, name: str) -> str:
        return (
            f"could not commit the slot reservation to WorkloadSpread {namespace}/{name} status in time "
            "(write conflicts or a slow API server); nothing was written"
        )

    def _succeed(self, req: _Request[Any], result: Any) -> None:
        req.result = result
        req.done = True
        self.stats.add(committed=1)
        req.answer()

    def _fail(self, req: _Request[Any], error: BaseException) -> None:
        req.error = error
        req.done = True
        if isinstance(error, CommitTimeout):
            self.stats.add(timeouts=1)
        req.answer()
