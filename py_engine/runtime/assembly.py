"""A running controller: its watch caches, its reconcile loop, optional leader election.

Both controllers (`daemon.ControllerRuntime`, `py_engine.uniteddeployment.controller.runtime.runtime.UnitedRuntime`)
are run the same way, so the order lives here once:

* caches are fed from `start()` on, whether or not this process leads, so a
  follower is warm when it takes over; `start` waits (bounded) for their first
  lists and warns, with the timeout as a field, when they are late;
* workers start only with leadership: at once without election, on
  `on_started` of the `LeaderElector`, or when `lead()` says leadership was won
  elsewhere (the UnitedDeployment loop under the WorkloadSpread controller's
  Lease, `start(lead=False)`);
* losing the Lease stops the workers and calls `on_lost` (the CLI exits; the
  elector has already logged the loss, once);
* `stop()` joins every thread: the elector's (releasing the Lease), the
  workers and resync timer, the caches' watches; the client is closed when the
  runtime owns it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar

from py_engine.apiclient import KubeClient
from py_engine.logsetup import fields
from py_engine.runtime.cachegroup import CacheGroup
from py_engine.runtime.leader import LeaderConfig, LeaderElector
from py_engine.runtime.reconciler import LoopMetrics, Reconciler
from py_engine.semantics.clock import Clock

log = logging.getLogger(__name__)

SourceT = TypeVar("SourceT", bound=CacheGroup)
LoopT = TypeVar("LoopT", bound=Reconciler[Any])


class LoopRuntime(Generic[SourceT, LoopT]):
    """See the module docstring. `start()` returns at once; `stop()` joins every thread."""

    def __init__(self, client: KubeClient, clock: Clock, source: SourceT, controller: LoopT, metrics: LoopMetrics,
                 *, leader: LeaderConfig | None, on_lost: Callable[[], None] | None, owns_client: bool,
                 leader_gauge: tuple[str, str]) -> None:
        self.client, self.clock, self.source, self.controller = client, clock, source, controller
        self._on_lost = on_lost
        self._owns_client = owns_client
        self._started_event = threading.Event()
        self.elector: LeaderElector | None = None
        if leader is not None:
            self.elector = LeaderElector(client, clock, leader, self._started, self._lost)
        name, help_text = leader_gauge
        metrics.add_gauge(name, help_text, lambda: 1.0 if self.is_leading() else 0.0)

    def is_leading(self) -> bool:
        return self.elector.leading.is_set() if self.elector is not None else self._started_event.is_set()

    def _started(self) -> None:
        self.controller.start()
        self._started_event.set()

    def _lost(self) -> None:
        self.controller.stop()
        if self._on_lost is not None:
            self._on_lost()

    def start(self, sync_timeout: float = 30.0, *, lead: bool = True) -> Self:
        """Start the caches, wait for their first lists, then lead (or campaign); with
        `lead=False` only the caches run until `lead()`."""
        self.source.start()
        if not self.source.wait_synced(sync_timeout):
            log.warning("caches not synced after %.0fs; starting anyway", sync_timeout,
                        extra=fields(timeout_seconds=sync_timeout))
        if not lead:
            return self
        if self.elector is None:
            self._started()
        else:
            self.elector.start()
        return self

    def lead(self) -> None:
        """Start the workers (leadership was won elsewhere)."""
        if not self._started_event.is_set():
            self._started()

    def wait_started(self, timeout: float) -> bool:
        return self._started_event.wait(timeout)

    def stop(self) -> None:
        if self.elector is not None:
            self.elector.stop()
        self.controller.stop()
        self.source.stop()
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
