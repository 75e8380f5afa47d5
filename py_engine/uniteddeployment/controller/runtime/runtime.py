"""Assembling a running UnitedDeployment controller: watch caches, triggers, loop,
optional leader lease. The order (caches first, workers with leadership, `stop()`
joining every thread) is `py_engine.runtime.assembly.LoopRuntime`'s, as
for the WorkloadSpread controller; this module only builds the parts.

Beside the WorkloadSpread controller (`spreadgate controller`) it takes no
Lease of its own: `start(lead=False)` warms the caches and `lead()` starts the
workers once the process holds the WorkloadSpread controller's Lease, so one
Lease (and the RBAC that names it) covers both loops.
"""

from __future__ import annotations

from collections.abc import Callable

from py_engine.apiclient import KubeClient
from py_engine.runtime.assembly import LoopRuntime
from py_engine.runtime.leader import LeaderConfig
from py_engine.semantics.clock import Clock, RealClock
from py_engine.uniteddeployment.controller.runtime.loop import UnitedController, UnitedOptions
from py_engine.uniteddeployment.controller.runtime.metrics import UnitedMetrics
from py_engine.uniteddeployment.controller.runtime.source import CachedUnitedSource
from py_engine.uniteddeployment.controller.runtime.triggers import UnitedTriggers

DEFAULT_LEASE = "spreadgate-united-controller"


class UnitedRuntime(LoopRuntime[CachedUnitedSource, UnitedController]):
    """`start()` returns at once; `stop()` joins every thread."""

    def __init__(self, client: KubeClient, *, clock: Clock | None = None, options: UnitedOptions | None = None,
                 leader: LeaderConfig | None = None, on_lost: Callable[[], None] | None = None,
                 namespace: str | None = None, watch_timeout_seconds: int = 300, owns_client: bool = False) -> None:
        clock = clock or RealClock()
        self.metrics = UnitedMetrics()
        source = CachedUnitedSource(client, namespace=namespace, watch_timeout_seconds=watch_timeout_seconds)
        controller = UnitedController(client, source, clock, options, self.metrics)
        UnitedTriggers(source, controller.enqueue, controller.inventory_changed).install()
        super().__init__(client, clock, source, controller, self.metrics, leader=leader, on_lost=on_lost,
                         owns_client=owns_client, leader_gauge=("spreadgate_united_leader",
                                                                "1 while this process leads (or runs unelected)."))
