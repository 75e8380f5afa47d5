"""The controller loop: work queue -> sync -> writes -> requeue.

`SpreadController` is a `reconciler.Reconciler` (the queue, the workers,
the retry rules, failure logging and metrics, shared with the UnitedDeployment
loop). A sync reads the spread and its view from a `Source`, runs the pure
`reconcile`, writes the differences (`Writer`) and requeues the key at the
earliest expiry the sync computed. Failures (a 409 on the status, an API error,
a failed write, a spread the core cannot reconcile) requeue the key with
per-key back-off; a spread that is gone is simply forgotten. A periodic resync
enqueues every spread, as informers' resync does, so a missed event costs at
most one period.

Two ways to drive it, same sync code:
* threads (`start()`/`stop()`): `workers` threads block on the queue, fed by
  `Triggers` from watch caches and by the resync timer;
* steps (`step()`, `next_deadline()`): the caller enqueues every spread and
  processes what is ready, synchronously — `--once` and the virtual-time
  stack (through `py_engine.runtime.stepped.SteppedManager`) use this.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from py_engine.apiclient import KubeClient
from py_engine.logsetup import fields
from py_engine.runtime.reconciler import Reconciler
from py_engine.runtime.triggers import queue_key
from py_engine.runtime.workqueue import RateLimit
from py_engine.semantics.clock import Clock
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.metrics import ControllerMetrics
from py_engine.workloadspread.controller.options import DEFAULT_OPTIONS, ReconcileOptions
from py_engine.workloadspread.controller.reconcile import SyncResult, reconcile
from py_engine.workloadspread.controller.runtime.sources import Source
from py_engine.workloadspread.controller.runtime.views import view_for
from py_engine.workloadspread.controller.runtime.writer import EventRecorder, WriteCounts, WriteFailed, Writer
from py_engine.workloadspread.controller.target import TARGET_FOUND

log = logging.getLogger(__name__)


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


class SpreadController(Reconciler[SyncReport]):
    """See the module docstring; the queue, workers and retry rules are `Reconciler`'s."""

    log = log
    thread_prefix = "spread"

    def __init__(
        self,
        client: KubeClient,
        source: Source,
        clock: Clock,
        options: LoopOptions | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.client, self.source = client, source
        self.options = options or LoopOptions()
        self.metrics = metrics or ControllerMetrics()
        super().__init__(
            clock,
            self.options,
            self.metrics,
            ("spreadgate_controller_queue_depth", "Spread keys waiting to be synced."),
        )
        self.writer = Writer(client, source, self.metrics, recorder or EventRecorder(client, clock))

    # ----------------------------------------------------------------- keys

    def keys(self) -> list[str]:
        return [queue_key(spread) for spread in self.source.spreads()]

    def key_fields(self, key: str) -> dict[str, Any]:
        namespace, _, name = key.partition("/")
        return {"namespace": namespace, "spread": name}

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
            log.warning(
                "target not found: %s",
                problem.message,
                extra=fields(namespace=namespace, spread=name, reason=problem.reason, cause=problem.message),
            )
        elif problem is None and any(e.reason == TARGET_FOUND for e in result.events):
            log.info("target found", extra=fields(namespace=namespace, spread=name))
        return SyncReport(key, "synced", writes, result, requeue_after=result.requeue_after)

    def failed_report(self, key: str, outcome: str, error: str) -> SyncReport:
        return SyncReport(key, outcome, error=error)

    def expected_failure(self, exc: Exception) -> tuple[str, dict[str, Any]] | None:
        """A failed write names the write and the pod (the writer raises, never logs); a spread
        the core cannot reconcile is a failed sync, not a bug."""
        if isinstance(exc, WriteFailed):
            return f"{exc.kind} write failed", {"pod": exc.pod, "write": exc.kind, "cause": str(exc.cause)}
        if isinstance(exc, ReconcileError):
            return "sync failed", {"cause": str(exc)}
        return super().expected_failure(exc)
