"""The reconcile loop both controllers run: keys from a `WorkQueue` -> `sync(key)` -> requeue.

The WorkloadSpread loop (`loop.SpreadController`) and the UnitedDeployment loop
(`py_engine.uniteddeployment.controller.runtime.loop.UnitedController`) differ only in what one sync
reads and writes, so everything around a sync lives here once:

* **retry rules**: a sync that ends in a settled outcome (`synced`, `gone`, and
  whatever a subclass adds) resets the key's back-off and, when it asked for one,
  requeues the key after `requeue_after` plus `REQUEUE_SLACK`; any other outcome
  (a failure) requeues with per-key back-off (`WorkQueue.add_rate_limited`);
* **failures are logged once, here**, with the key's structured fields
  (`py_engine.logsetup.fields`), as docs/operations.md ("What is logged, at which
  level") says: a 409 that reaches the loop at debug (a stale status, requeued),
  an expected failure (an API error; a subclass may name more) at warning, any
  other exception at error with its traceback; a bug in one sync never kills
  a worker. Records go to the subclass's logger, so they keep its name;
* **metrics**: the sync's duration and its outcome (`success` for a settled
  sync that wrote what it meant to, else the outcome), the queue-depth gauge;
* **two ways to drive it**, same sync code: threads (`start()`/`stop()`, workers
  blocked on the queue plus a resync timer that enqueues every key, as informers'
  resync does) or steps (`step()`, `next_deadline()`) for `--once` and the
  virtual-time stack (whose `stepped.SteppedManager` calls them). `stop()` joins every
  thread it started.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, Self, TypeVar

from py_engine.apiclient import Conflict, KubeError
from py_engine.logsetup import fields
from py_engine.metrics import Counter, Histogram
from py_engine.runtime.workqueue import RateLimit, WorkQueue
from py_engine.semantics.clock import Clock

REQUEUE_SLACK = 0.1
"""Seconds added to a computed requeue: expiries are strict (`t + timeout < now`), so the
sync that acts on an expiry must run just after it, never exactly at it (which, in
virtual time, would requeue at zero delay forever)."""

SUCCESS = frozenset({"synced", "gone"})
"""Outcomes counted as `success` in the syncs metric."""


class Report(Protocol):
    """What one sync of one key did, as far as the loop needs to know."""

    key: str
    outcome: str
    error: str
    requeue_after: float | None


class WorkerSettings(Protocol):
    """The options of a loop that the shared part reads."""

    @property
    def workers(self) -> int: ...

    @property
    def resync_seconds(self) -> float: ...

    @property
    def rate_limit(self) -> RateLimit: ...


class LoopMetrics(Protocol):
    """The metrics the loop records (`ControllerMetrics`, `UnitedMetrics`)."""

    @property
    def sync_duration(self) -> Histogram: ...

    @property
    def syncs(self) -> Counter: ...

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None: ...


ReportT = TypeVar("ReportT", bound=Report)


class Reconciler(ABC, Generic[ReportT]):
    """See the module docstring. Subclasses say what a key is (`keys`, `key_fields`) and
    what one sync does (`sync`, `failed_report`); they may add settled outcomes
    (`settled`) and expected failures (`expected_failure`)."""

    log: logging.Logger = logging.getLogger(__name__)
    """Where failures are logged: subclasses set their module's logger."""
    thread_prefix = "reconcile"
    settled: frozenset[str] = SUCCESS
    """Outcomes that end the key's back-off and honour its `requeue_after`."""

    def __init__(
        self, clock: Clock, options: WorkerSettings, metrics: LoopMetrics, queue_gauge: tuple[str, str]
    ) -> None:
        self.clock = clock
        self._rate_limit = options.rate_limit
        self.queue = WorkQueue(clock, options.rate_limit)
        self.last: dict[str, ReportT] = {}
        self._workers = options.workers
        self._resync_seconds = options.resync_seconds
        self._loop_metrics = metrics
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        name, help_text = queue_gauge
        metrics.add_gauge(name, help_text, lambda: float(self.queue.depth()))

    # ------------------------------------------------------ what subclasses say

    @abstractmethod
    def keys(self) -> Iterable[str]:
        """Every key a resync enqueues."""

    @abstractmethod
    def sync(self, key: str) -> ReportT:
        """One sync of `key`; raises on failure (`process` logs it and requeues)."""

    @abstractmethod
    def failed_report(self, key: str, outcome: str, error: str) -> ReportT:
        """The report of a sync that raised (`outcome`: conflict or error)."""

    @abstractmethod
    def key_fields(self, key: str) -> dict[str, Any]:
        """The structured log fields that name the object of `key`."""

    def expected_failure(self, exc: Exception) -> tuple[str, dict[str, Any]] | None:
        """Message and fields of a failure that is not a bug (logged at warning, no traceback);
        None for anything else. An API error is expected; subclasses add their own."""
        if isinstance(exc, KubeError):
            return "sync failed", {"cause": str(exc)}
        return None

    # ---------------------------------------------------------------- keys

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    def enqueue_all(self) -> int:
        count = 0
        for key in self.keys():
            self.queue.add(key)
            count += 1
        return count

    # ---------------------------------------------------------------- sync

    def process(self, key: str) -> ReportT:
        """Sync a key taken from the queue, record metrics, requeue as the outcome says."""
        started = time.monotonic()
        try:
            report = self.sync(key)
        except Exception as exc:  # a bug in one sync must not kill the worker
            report = self._failed(key, exc)
        finally:
            self._loop_metrics.sync_duration.observe(time.monotonic() - started)
            self.queue.done(key)
        self._loop_metrics.syncs.inc(result="success" if report.outcome in SUCCESS else report.outcome)
        if report.outcome in self.settled:
            self.queue.forget(key)
            # A sync never asks for a requeue <= 0 (Kruise ignores those); the guard keeps a
            # zero from turning into an immediate extra sync should that ever change.
            if report.requeue_after is not None and report.requeue_after > 0:
                self.queue.add_after(key, report.requeue_after + REQUEUE_SLACK)
        else:
            self.queue.add_rate_limited(key)
        with self._lock:
            self.last[key] = report
        return report

    def _failed(self, key: str, exc: Exception) -> ReportT:
        """Log a sync that raised, once, and report it (called inside the `except`, so
        `log.exception` has the traceback)."""
        where = self.key_fields(key)
        if isinstance(exc, Conflict):
            # Both writers turn every other 409 into a failure or retry it themselves: one that
            # reaches the loop is a stale status (the webhook wrote first), requeued.
            self.log.debug(
                "status write conflict, requeued", extra=fields(**where, write="status", cause=str(exc))
            )
            return self.failed_report(key, "conflict", str(exc))
        expected = self.expected_failure(exc)
        if expected is not None:
            message, extra = expected
            self.log.warning(message, extra=fields(**where, **extra))
            return self.failed_report(key, "error", str(exc))
        cause = f"{type(exc).__name__}: {exc}"
        self.log.exception("sync crashed", extra=fields(**where, cause=cause))
        return self.failed_report(key, "error", cause)

    # ---------------------------------------------------------------- steps

    def process_ready(self, limit: int = 10_000) -> list[ReportT]:
        """Process every key that is ready now (bounded by `limit`), synchronously."""
        reports = []
        for _ in range(limit):
            key = self.queue.get_nowait()
            if key is None:
                break
            reports.append(self.process(key))
        return reports

    def step(self) -> list[ReportT]:
        """Enqueue every key and process what is ready: one level-triggered pass."""
        self.enqueue_all()
        return self.process_ready()

    def next_deadline(self) -> float | None:
        """Clock time (`monotonic`) of the earliest requeue."""
        return self.queue.next_due()

    # -------------------------------------------------------------- threads

    def start(self) -> Self:
        """Start the workers and the resync timer (the source must already be fed). After
        `stop()` it starts again on a fresh queue (leadership won back: the resync enqueues
        every key, as a new leader's first pass does)."""
        if self._threads:
            return self
        if self.queue.is_shutdown:
            self.queue = WorkQueue(self.clock, self._rate_limit)
        self._stop.clear()
        for index in range(max(1, self._workers)):
            self._spawn(self._work, f"{self.thread_prefix}-worker-{index}")
        self._spawn(self._resync, f"{self.thread_prefix}-resync")
        return self

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, daemon=True, name=name)
        thread.start()
        self._threads.append(thread)

    def _work(self) -> None:
        while not self._stop.is_set():
            key = self.queue.get(timeout=0.5)
            if key is not None:
                self.process(key)

    def _resync(self) -> None:
        self.enqueue_all()
        while not self._stop.wait(self._resync_seconds):
            self.enqueue_all()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the workers and the timer and join them (the queue takes no more keys)."""
        self._stop.set()
        self.queue.shutdown()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)
