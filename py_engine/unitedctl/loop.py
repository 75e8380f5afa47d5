"""The UnitedDeployment controller loop: work queue -> snapshot -> node fit -> plan -> writes -> requeue.

`UnitedController` owns a `WorkQueue` (the WorkloadSpread controller's: one
worker per key, collapsed duplicates, per-key back-off) and its workers. A sync
reads the UnitedDeployment and its objects from a `UnitedSource`, asks the
subset policy which subsets have no node for a new pod (Adaptive, see
`nodefit`), runs the pure `plan`, applies it (`UnitedWriter`) and requeues the
key after the plan's `requeue_after` (plus a small slack: the planner's
deadlines are strict). A refused allocation records a Warning Event and
touches nothing; a spec the model cannot read records one and is not retried
until the object changes; API failures requeue with back-off.

Two ways to drive it, as the WorkloadSpread loop: threads (`start()`/`stop()`)
fed by watch triggers and a periodic resync, or steps (`step()`,
`next_deadline()`) for `--once` and the virtual-time stack.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from py_engine import logsetup
from py_engine.apiclient import Conflict, KubeClient, KubeError
from py_engine.controller.runtime.workqueue import RateLimit, WorkQueue
from py_engine.model.errors import ModelError
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.semantics.clock import Clock
from py_engine.united.plan import Plan, plan
from py_engine.united.state import UnitedState
from py_engine.unitedctl.events import (
    FAILED_REVISION_PROVISION,
    FAILED_SPECIFY_SUBSET_REPLICAS,
    INVALID_SPEC,
    WARNING,
    Event,
    UnitedEventRecorder,
)
from py_engine.unitedctl.metrics import UnitedMetrics
from py_engine.unitedctl.nodefit import NodeFit, node_fit_enabled
from py_engine.unitedctl.source import UnitedSource, meta
from py_engine.unitedctl.writer import UnitedWriter, UnitedWrites

log = logging.getLogger(__name__)

REQUEUE_SLACK = 0.1
"""Seconds added to the plan's requeue: its deadlines are strict (a pod times out once
`rescheduleCriticalSeconds` have passed), so the sync acting on one runs just after it."""


@dataclass(frozen=True)
class UnitedOptions:
    workers: int = 2
    resync_seconds: float = 300.0
    rate_limit: RateLimit = field(default_factory=RateLimit)
    node_fit: bool = True
    """Ask the subset policy before allocating (Adaptive); off: Kruise's behaviour everywhere."""


@dataclass
class UnitedReport:
    """What one sync of one key did (`outcome`: synced, gone, refused, invalid, conflict, error)."""

    key: str
    outcome: str
    writes: UnitedWrites = field(default_factory=UnitedWrites)
    plan: Plan | None = None
    error: str = ""
    requeue_after: float | None = None
    no_node_fit: frozenset[str] = frozenset()


def ud_key(obj: Mapping[str, Any]) -> str:
    m = meta(obj)
    return f"{m.get('namespace') or ''}/{m.get('name') or ''}"


class UnitedController:
    """See the module docstring."""

    def __init__(self, client: KubeClient, source: UnitedSource, clock: Clock, options: UnitedOptions | None = None,
                 metrics: UnitedMetrics | None = None, recorder: UnitedEventRecorder | None = None,
                 node_fit: NodeFit | None = None) -> None:
        self.client, self.source, self.clock = client, source, clock
        self.options = options or UnitedOptions()
        self.metrics = metrics or UnitedMetrics()
        self.queue = WorkQueue(clock, self.options.rate_limit)
        self.recorder = recorder or UnitedEventRecorder(client, clock)
        self.writer = UnitedWriter(client, source, self.metrics, self.recorder)
        self.node_fit = node_fit if node_fit is not None else NodeFit()
        self.metrics.add_gauge("spreadgate_united_queue_depth", "UnitedDeployment keys waiting to be synced.",
                               lambda: float(self.queue.depth()))
        self.last: dict[str, UnitedReport] = {}
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._inventory_version = 0

    # ----------------------------------------------------------------- keys

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    def enqueue_all(self) -> int:
        uds = self.source.united_deployments()
        for ud in uds:
            self.queue.add(ud_key(ud))
        return len(uds)

    def inventory_changed(self) -> None:
        """Nodes or bound pods changed: the next node-fit check rebuilds the inventory."""
        with self._lock:
            self._inventory_version += 1

    # ----------------------------------------------------------------- sync

    def state(self, ud: UnitedDeployment) -> UnitedState:
        """The snapshot one sync plans over, with the node-fit verdict when it applies."""
        no_fit: frozenset[str] = frozenset()
        if self.options.node_fit and node_fit_enabled(ud):
            with self._lock:
                version = self._inventory_version
            inventory = self.node_fit.inventory(version, self.source.nodes, self.source.all_pods)
            no_fit = self.node_fit.unfit(ud, inventory)
        return UnitedState(
            ud=ud,
            workloads=tuple(self.source.workloads(ud.namespace, ud.uid, ud.selector)),
            pods=tuple(self.source.pods(ud.namespace, ud.selector)),
            revisions=tuple(self.source.revisions(ud.namespace, ud.uid, ud.selector)),
            no_node_fit=no_fit,
        )

    def sync(self, key: str) -> UnitedReport:
        """One sync of `key`; raises KubeError on API failure (`process` requeues)."""
        namespace, _, name = key.partition("/")
        obj = self.source.united_deployment(namespace, name)
        if obj is None:
            return UnitedReport(key, "gone")
        try:
            ud = UnitedDeployment.from_object(obj)
        except ModelError as exc:
            self.recorder.record(obj, Event(WARNING, INVALID_SPEC, str(exc)))
            return UnitedReport(key, "invalid", error=str(exc))
        state = self.state(ud)
        now = self.clock.now()
        result = plan(state, now)
        if result.refused:
            message = "; ".join(result.errors)
            reason = FAILED_REVISION_PROVISION if message.startswith("spec.template") else FAILED_SPECIFY_SUBSET_REPLICAS
            self.recorder.record(obj, Event(WARNING, reason, message))
            log.warning("allocation refused", extra=logsetup.fields(uniteddeployment=key, reason=message))
            return UnitedReport(key, "refused", plan=result, error=message)
        writes = self.writer.apply(obj, result, now)
        if writes.total:
            log.info("synced", extra=logsetup.fields(
                uniteddeployment=key, created=writes.created, updated=writes.updated, deleted=writes.deleted,
                pod_labels=writes.pod_labels, status=writes.status, errors=len(writes.errors) or None,
                no_node_fit=",".join(sorted(state.no_node_fit)) or None,
                replicas=",".join(f"{n}={s.replicas}" for n, s in result.subsets.items())))
        outcome = "error" if writes.errors else "synced"
        return UnitedReport(key, outcome, writes, result, error="; ".join(writes.errors),
                            requeue_after=result.requeue_after, no_node_fit=state.no_node_fit)

    def process(self, key: str) -> UnitedReport:
        """Sync a key taken from the queue, record metrics, requeue as the outcome says."""
        started = time.monotonic()
        try:
            report = self.sync(key)
        except Conflict as exc:
            report = UnitedReport(key, "conflict", error=str(exc))
        except KubeError as exc:
            log.warning("sync failed", extra=logsetup.fields(uniteddeployment=key, error=str(exc)))
            report = UnitedReport(key, "error", error=str(exc))
        except Exception as exc:  # a bug in one sync must not kill the worker
            log.exception("sync %s crashed", key)
            report = UnitedReport(key, "error", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.metrics.sync_duration.observe(time.monotonic() - started)
            self.queue.done(key)
        good = report.outcome in ("synced", "gone", "refused", "invalid")
        self.metrics.syncs.inc(result="success" if report.outcome in ("synced", "gone") else report.outcome)
        if good:
            self.queue.forget(key)
            if report.requeue_after is not None and report.requeue_after > 0:
                self.queue.add_after(key, report.requeue_after + REQUEUE_SLACK)
        else:
            self.queue.add_rate_limited(key)
        with self._lock:
            self.last[key] = report
        return report

    # ---------------------------------------------------------------- steps

    def process_ready(self, limit: int = 10_000) -> list[UnitedReport]:
        reports = []
        for _ in range(limit):
            key = self.queue.get_nowait()
            if key is None:
                break
            reports.append(self.process(key))
        return reports

    def step(self) -> list[UnitedReport]:
        """Enqueue every UnitedDeployment and process what is ready (one level-triggered pass)."""
        self.inventory_changed()
        self.enqueue_all()
        return self.process_ready()

    def next_deadline(self) -> float | None:
        return self.queue.next_due()

    # -------------------------------------------------------------- threads

    def start(self) -> UnitedController:
        if self._threads:
            return self
        self._stop.clear()
        for index in range(max(1, self.options.workers)):
            thread = threading.Thread(target=self._work, daemon=True, name=f"united-worker-{index}")
            thread.start()
            self._threads.append(thread)
        resync = threading.Thread(target=self._resync, daemon=True, name="united-resync")
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
        self.node_fit.close()

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)
