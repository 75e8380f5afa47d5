"""Assembling a running controller: client, watch caches, triggers, loop, optional leader lease.

Used by `spreadgate controller`, the end-to-end tests and the demo, so all
three run the same wiring. Without leader election the loop starts at once;
with it, caches are fed from the start (a follower is warm when it takes
over) but workers start only in `on_started`, and `on_lost` (default: none)
is what the process does when leadership goes — the CLI exits. That order is
`assembly.LoopRuntime`'s, shared with the UnitedDeployment runtime; this
module only builds the WorkloadSpread controller's parts.
"""

from __future__ import annotations

from collections.abc import Callable

from py_engine.apiclient import KubeClient
from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist
from py_engine.runtime.assembly import LoopRuntime
from py_engine.runtime.leader import LeaderConfig
from py_engine.semantics.clock import Clock, RealClock
from py_engine.workloadspread.controller.metrics import ControllerMetrics
from py_engine.workloadspread.controller.runtime.loop import LoopOptions, SpreadController
from py_engine.workloadspread.controller.runtime.sources import CachedSource
from py_engine.workloadspread.controller.runtime.triggers import Triggers


class ControllerRuntime(LoopRuntime[CachedSource, SpreadController]):
    """See the module docstring. `start()` returns at once; `stop()` joins every thread."""

    def __init__(self, client: KubeClient, *, clock: Clock | None = None, options: LoopOptions | None = None,
                 leader: LeaderConfig | None = None, on_lost: Callable[[], None] | None = None,
                 namespace: str | None = None, watch_timeout_seconds: int = 300, owns_client: bool = False,
                 whitelist: Whitelist = EMPTY_WHITELIST) -> None:
        clock = clock or RealClock()
        self.metrics = ControllerMetrics()
        source = CachedSource(client, namespace=namespace, watch_timeout_seconds=watch_timeout_seconds,
                              whitelist=whitelist)
        controller = SpreadController(client, source, clock, options, self.metrics)
        Triggers(source, controller.enqueue).install()
        super().__init__(client, clock, source, controller, self.metrics, leader=leader, on_lost=on_lost,
                         owns_client=owns_client, leader_gauge=("leader_election_master_status",
                                                                "1 while this process leads (or runs unelected)."))
