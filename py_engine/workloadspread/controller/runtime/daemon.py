"""The WorkloadSpread controller as a Manager runs it (`py_engine.runtime.manager.Manager`,
or its stepped sibling `py_engine.runtime.stepped.SteppedManager`).

`add_spread_controller` builds its parts over the Manager's client and adds them. Under a
`Manager`: a `CachedSource` over the Manager's shared watch caches, the `SpreadController`
loop, the `Triggers` that route watch events to spread keys, the metrics; the Manager starts
the caches, runs the workers while the process leads and stops everything. Under a
`SteppedManager`: a `ListedSource` (fresh lists, refreshed by the Manager before each pass)
and no triggers, since every step enqueues every spread. Used by `spreadgate controller`,
the embedded stack in both of its modes (`py_engine.assembled_stack`) and the end-to-end
tests, so all run the same wiring.
"""

from __future__ import annotations

from py_engine.model.workloads import EMPTY_WHITELIST, Whitelist
from py_engine.runtime.manager import Managed, Manager
from py_engine.runtime.stepped import SteppedManager
from py_engine.workloadspread.controller.metrics import ControllerMetrics
from py_engine.workloadspread.controller.runtime.loop import LoopOptions, SpreadController
from py_engine.workloadspread.controller.runtime.sources import CachedSource, ListedSource
from py_engine.workloadspread.controller.runtime.triggers import Triggers

LEADER_GAUGE = ("leader_election_master_status", "1 while this process leads (or runs unelected).")


def add_spread_controller(
    manager: Manager | SteppedManager,
    *,
    options: LoopOptions | None = None,
    whitelist: Whitelist = EMPTY_WHITELIST,
) -> SpreadController:
    """Build the WorkloadSpread controller on `manager` and add it; raises `KubeError` when
    the cluster cannot say which workload kinds it serves."""
    metrics = ControllerMetrics()
    source: CachedSource | ListedSource
    if isinstance(manager, SteppedManager):
        source = ListedSource(manager.client, namespace=manager.namespace, whitelist=whitelist)
    else:
        source = CachedSource(manager.client, shared=manager.caches, whitelist=whitelist)
    controller = SpreadController(manager.client, source, manager.clock, options, metrics)
    if isinstance(source, CachedSource):
        Triggers(source, controller.enqueue).install()
    manager.add(Managed("workloadspread", source, controller, metrics, LEADER_GAUGE))
    return controller
