"""Assembling a running controller: client, watch caches, triggers, loop, optional leader lease.

Used by `spreadgate controller`, the end-to-end tests and the demo, so all
three run the same wiring. Without leader election the loop starts at once;
with it, caches are fed from the start (a follower is warm when it takes
over) but workers start only in `on_started`, and `on_lost` (default: none)
is what the process does when leadership goes — the CLI exits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from py_engine.apiclient import KubeClient
from py_engine.controller.metrics import ControllerMetrics
from py_engine.controller.runtime.leader import LeaderConfig, LeaderElector
from py_engine.controller.runtime.loop import LoopOptions, SpreadController
from py_engine.controller.runtime.sources import CachedSource
from py_engine.controller.runtime.triggers import Triggers
from py_engine.semantics.clock import Clock, RealClock

log = logging.getLogger(__name__)


class ControllerRuntime:
    """See the module docstring. `start()` returns at once; `stop()` joins every thread."""

    def __init__(self, client: KubeClient, *, clock: Clock | None = None, options: LoopOptions | None = None,
                 leader: LeaderConfig | None = None, on_lost: Callable[[], None] | None = None,
                 namespace: str | None = None, watch_timeout_seconds: int = 300, owns_client: bool = False) -> None:
        self.client = client
        self.clock = clock or RealClock()
        self.metrics = ControllerMetrics()
        self.source = CachedSource(client, namespace=namespace, watch_timeout_seconds=watch_timeout_seconds)
        self.controller = SpreadController(client, self.source, self.clock, options, self.metrics)
        Triggers(self.source, self.controller.enqueue).install()
        self._on_lost = on_lost
        self._owns_client = owns_client
        self.elector: LeaderElector | None = None
        if leader is not None:
            self.elector = LeaderElector(client, self.clock, leader, self._started, self._lost)
        self.metrics.add_gauge("leader_election_master_status", "1 while this process leads (or runs unelected).",
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

    def start(self, sync_timeout: float = 30.0) -> ControllerRuntime:
        """Start the caches, wait for their first lists, then lead (or campaign)."""
        self.source.start()
        if not self.source.wait_synced(sync_timeout):
            log.warning("caches not synced after %.0fs; starting anyway", sync_timeout)
        if self.elector is None:
            self._started()
        else:
            self.elector.start()
        return self

    def wait_started(self, timeout: float) -> bool:
        return self._started_event.wait(timeout)

    def stop(self) -> None:
        if self.elector is not None:
            self.elector.stop()
        self.controller.stop()
        self.source.stop()
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> ControllerRuntime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
