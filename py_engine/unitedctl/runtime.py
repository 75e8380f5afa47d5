"""Assembling a running UnitedDeployment controller: watch caches, triggers, loop,
optional leader lease. Same shape as `py_engine.controller.runtime.daemon.ControllerRuntime`.

Beside the WorkloadSpread controller (`spreadgate controller`) it takes no
Lease of its own: `start(lead=False)` warms the caches and `lead()` starts the
workers once the process holds the WorkloadSpread controller's Lease, so one
Lease (and the RBAC that names it) covers both loops.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from py_engine.apiclient import KubeClient
from py_engine.controller.runtime.leader import LeaderConfig, LeaderElector
from py_engine.semantics.clock import Clock, RealClock
from py_engine.unitedctl.loop import UnitedController, UnitedOptions
from py_engine.unitedctl.metrics import UnitedMetrics
from py_engine.unitedctl.source import CachedUnitedSource
from py_engine.unitedctl.triggers import UnitedTriggers

log = logging.getLogger(__name__)

DEFAULT_LEASE = "spreadgate-united-controller"


class UnitedRuntime:
    """`start()` returns at once; `stop()` joins every thread."""

    def __init__(self, client: KubeClient, *, clock: Clock | None = None, options: UnitedOptions | None = None,
                 leader: LeaderConfig | None = None, on_lost: Callable[[], None] | None = None,
                 namespace: str | None = None, watch_timeout_seconds: int = 300, owns_client: bool = False) -> None:
        self.client = client
        self.clock = clock or RealClock()
        self.metrics = UnitedMetrics()
        self.source = CachedUnitedSource(client, namespace=namespace, watch_timeout_seconds=watch_timeout_seconds)
        self.controller = UnitedController(client, self.source, self.clock, options, self.metrics)
        UnitedTriggers(self.source, self.controller.enqueue, self.controller.inventory_changed).install()
        self._on_lost = on_lost
        self._owns_client = owns_client
        self.elector: LeaderElector | None = None
        if leader is not None:
            self.elector = LeaderElector(client, self.clock, leader, self._started, self._lost)
        self.metrics.add_gauge("spreadgate_united_leader", "1 while this process leads (or runs unelected).",
                               lambda: 1.0 if self.is_leading() else 0.0)
        self._started_event = threading.Event()

    def is_leading(self) -> bool:
        return self.elector.leading.is_set() if self.elector is not None else self._started_event.is_set()

    def _started(self) -> None:
        self.controller.start()
        self._started_event.set()

    def _lost(self) -> None:
        self.controller.stop()
        if self._on_lost is not None:
            self._on_lost()

    def start(self, sync_timeout: float = 30.0, *, lead: bool = True) -> UnitedRuntime:
        """Start the caches, wait for their first lists, then lead (or campaign); with
        `lead=False` only the caches run until `lead()`."""
        self.source.start()
        if not self.source.wait_synced(sync_timeout):
            log.warning("caches not synced after %.0fs; starting anyway", sync_timeout)
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

    def __enter__(self) -> UnitedRuntime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
