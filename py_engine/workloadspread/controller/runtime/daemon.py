"""The WorkloadSpread controller as a `py_engine.runtime.manager.Manager` runs it.

`add_spread_controller` builds its parts over the Manager's client and shared watch caches
(the `CachedSource`, the `SpreadController` loop, the `Triggers` that route watch events to
spread keys, the metrics) and adds them; the Manager starts the caches, runs the workers
while the process leads and stops everything. Used by `spreadgate controller`, the
embedded stack (`py_engine.assembled_stack`) and the end-to-end tests, so all run the same
wiring.
"""

from __future__ import annotations

from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist
from py_engine.runtime.manager import Managed, Manager
from py_engine.workloadspread.controller.metrics import ControllerMetrics
from py_engine.workloadspread.controller.runtime.loop import LoopOptions, SpreadController
from py_engine.workloadspread.controller.runtime.sources import CachedSource
from py_engine.workloadspread.controller.runtime.triggers import Triggers

LEADER_GAUGE = ("leader_election_master_status", "1 while this process leads (or runs unelected).")


def add_spread_controller(
    manager: Manager, *, options: LoopOptions | None = None, whitelist: Whitelist = EMPTY_WHITELIST
) -> SpreadController:
    """Build the WorkloadSpread controller on `manager` and add it; raises `KubeError` when
    the cluster cannot say which workload kinds it serves."""
    metrics = ControllerMetrics()
    source = CachedSource(manager.client, shared=manager.caches, whitelist=whitelist)
    controller = SpreadController(manager.client, source, manager.clock, options, metrics)
    Triggers(source, controller.enqueue).install()
    manager.add(Managed("workloadspread", source, controller, metrics, LEADER_GAUGE))
    return controller
