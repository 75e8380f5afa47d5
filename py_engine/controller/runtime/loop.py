"""The controller loop: work queue -> sync -> writes -> requeue.

`SpreadController` owns the queue and the workers. A sync reads the spread
and its view from a `Source`, runs the pure `reconcile`, writes the
differences (`Writer`) and requeues the key at the earliest expiry the sync
computed. Failures (a 409 on the status, an API error, a spread the core
cannot reconcile) requeue the key with per-key back-off; a spread that is
gone is simply forgotten. A periodic resync enqueues every spread, as
informers' resync does, so a missed event costs at most one period.

Two ways to drive it, same sync code:
* threads (`start()`/`stop()`): `workers` threads block on the queue, fed by
  `Triggers` from watch caches and by the resync timer;
* steps (`step()`, `next_deadline()`): the caller enqueues every spread and
  processes what is ready, synchronously — `--once` and the virtual-time
  simulator use this.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from py_engine.apiclient import Conflict, KubeClient, KubeError
from py_engine.controller.errors import ReconcileError
from py_engine.controller.metrics import ControllerMetrics
from py_engine.controller.options import DEFAULT_OPTIONS, ReconcileOptions
from py_engine.controller.reconcile import SyncResult, reconcile
from py_engine.controller.runtime.sources import Source
from py_engine.controller.runtime.triggers import spread_key
from py_engine.controller.runtime.views import view_for
from py_engine.controller.runtime.workqueue import RateLimit, WorkQueue
from py_engine.controller.runtime.writer import EventRecorder, WriteCounts, WriteFailed, Writer
from py_engine.controller.target import TARGET_FOUND
from py_engine.logsetup import fields
from py_engine.semantics.clock import Clock

log = logging.getLogger(__name__)

REQUEUE_SLACK = 0.1
"""Seconds added to a computed requeue: expiries are strict (`t + timeout < now`), so the
sync that acts on an expiry must run just after it, never exactly at it (which, in
virtual time, would requeue at zero delay forever)."""


@dataclass(frozen=True)
class LoopOptions:
    """How the loop runs; `reconcile` holds the ageing windows and the recovery default."""

    reconcile: ReconcileOptions = DEFAULT_OPTIONS
    workers: int = 2
    resync_seconds: float = 300.0
    rate_limit: RateLimit = field(default_factory=RateLimit)


@dataclass
class SyncReport:
    """What one sync of one key did (`outcome`: synced, gone, conflict, error)."""

    key: str
    outcome: str
    writes: WriteCounts = field(default_factory=WriteCounts)
    result: SyncResult | None = None
    error: str = ""
    requeue_after: float | None = None


class SpreadController:
    """See the module docstring."""

    def __init__(self, client: KubeClient, source: Source, clock: Clock, options: LoopOptions | None = None,
                 metrics: ControllerMetrics | None = None, recorder: EventRecorder | None = None) -> None:
        self.client, self.source, self.clock = client, source, clock
        self.options = options or LoopOptions()
        self.metrics = metrics or ControllerMetrics()
        self.queue = WorkQueue(clock, self.options.rate_limit)
        self.writer = Writer(client, source, self.metrics, recorder or EventRecorder(client, clock))
        self.metrics.add_gauge("spreadgate_controller_queue_depth", "Spread keys waiting to be synced.",
                               lambda: float(self.queue.depth()))
        self.last: dict[str, SyncReport] = {}
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- keys

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    def enqueue_all(self) -> int:
        spreads = self.source.spreads()
        for spread in spreads:
            self.queue.add(spread_key(spread))
        return len(spreads)

    # ----------------------------------------------------------------- sync

    def sync(self, key: str) -> SyncReport:
        """One sync of `key`; raises on failure (`process` turns that into a requeue)."""
        namespace, _, name = key.partition("/")
        spread = self.source.spread(namespace, name)
        if spread is None:
            return SyncReport(key, "gone")
        result = reconcile(spread, view_for(self.source, spread), self.clock.now(), self.options.reconcile)
        writes = self.writer.apply(spread, result)
        problem = result.target_problem
        if problem is not None and result.target_problem_new:
            log.warning("target not found: %s", problem.message, extra=fields(
                namespace=namespace, spread=name, reason=problem.reason, cause=problem.message))
        elif problem is None and any(e.reason == TARGET_FOUND for e in result.events):
            log.info("target found", extra=fields(namespace=namespace, spread=name))
        return SyncReport(key, "synced", writes, result, requeue_after=result.requeue_after)

    def process(self, key: str) -> SyncReport:
        """Sync a key taken from the queue, record metrics, requeue as the outcome says."""
        started = time.monotonic()
        namespace, _, name = key.partition("/")
        try:
            report = self.sync(key)
        except Conflict as exc:  # a stale status: expected while the webhook writes too; requeued
            log.debug("status write conflict, requeued", extra=fields(
                namespace=namespace, spread=name, write="status", cause=str(exc)))
            report = SyncReport(key, "conflict", error=str(exc))
        except WriteFailed as exc:  # logged here only: the writer raises, never logs
            log.warning("%s write failed", exc.kind, extra=fields(
                namespace=namespace, spread=name, pod=exc.pod, write=exc.kind, cause=str(exc.cause)))
            report = SyncReport(key, "error", error=str(exc))
        except (KubeError, ReconcileError) as exc:
            log.warning("sync failed", extra=fields(namespace=namespace, spread=name, cause=str(exc)))
            report = SyncReport(key, "error", error=str(exc))
        except Exception as exc:  # a bug in one sync must not kill the worker
            log.exception("sync crashed", extra=fields(namespace=namespace, spread=name,
                                                       cause=f"{type(exc).__name__}: {exc}"))
            report = SyncReport(key, "error", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.metrics.sync_duration.observe(time.monotonic() - started)
            self.queue.done(key)
        self.metrics.syncs.inc(result="success" if report.outcome in ("synced", "gone") else report.outcome)
        if report.outcome in ("synced", "gone"):
            self.queue.forget(key)
            # `reconcile` never asks for a requeue <= 0 (Kruise ignores those); the guard keeps a
            # zero from turning into an immediate extra sync should that ever change.
            if report.requeue_after is not None and report.requeue_after > 0:
                self.queue.add_after(key, report.requeue_after + REQUEUE_SLACK)
        else:
            self.queue.add_rate_limited(key)
        with self._lock:
            self.last[key] = report
        return report

    # ---------------------------------------------------------------- steps

    def process_ready(self, limit: int = 10_000) -> list[SyncReport]:
        """Process every key that is ready now (bounded by `limit`), synchronously."""
        reports = []
        for _ in range(limit):
            key = self.queue.get_nowait()
            if key is None:
                break
            reports.append(self.process(key))
        return reports

    def step(self) -> list[SyncReport]:
        """Enqueue every spread and process what is ready: one level-triggered pass."""
        self.enqueue_all()
        return self.process_ready()

    def next_deadline(self) -> float | None:
        """Clock time (`monotonic`) of the earliest requeue."""
        return self.queue.next_due()

    # -------------------------------------------------------------- threads

    def start(self) -> SpreadController:
        """Start the workers and the resync timer (the source must already be fed)."""
        if self._threads:
            return self
        self._stop.clear()
        for index in range(max(1, self.options.workers)):
            thread = threading.Thread(target=self._work, daemon=True, name=f"spread-worker-{index}")
            thread.start()
            self._threads.append(thread)
        resync = threading.Thread(target=self._resync, daemon=True, name="spread-resync")
        resync.start()
        self._threads.append(resync)
        return self

    def _work(self) -> None:
        while not self._stop.is_set():
            key = self.queue.get(timeout=0.5)
            if key is not None:
                self.process(key)

    def _resync(self) -> None:
        self.enqueue_all()
        while not self._stop.wait(self.options.resync_seconds):
            self.enqueue_all()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self.queue.shutdown()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)
