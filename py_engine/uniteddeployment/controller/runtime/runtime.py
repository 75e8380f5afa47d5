"""The UnitedDeployment controller as a Manager runs it (`py_engine.runtime.manager.Manager`,
or its stepped sibling `py_engine.runtime.stepped.SteppedManager`).

`add_united_controller` builds its parts over the Manager's client and adds them. Under a
`Manager`: the `CachedUnitedSource` over the Manager's shared watch caches, the
`UnitedController` loop, the `UnitedTriggers`, the metrics. Beside the WorkloadSpread
controller (`spreadgate controller`) it runs under the Manager's one Lease, so one Lease (and
the RBAC that names it) covers both loops, and it reads the pods, nodes and workloads both
controllers read from the same caches. Under a `SteppedManager` (the virtual-time stack): a
`ListedUnitedSource`, refreshed by the Manager before each pass, and no triggers.
"""

from __future__ import annotations

from py_engine.runtime.manager import Managed, Manager
from py_engine.runtime.stepped import SteppedManager
from py_engine.uniteddeployment.controller.runtime.loop import UnitedController, UnitedOptions
from py_engine.uniteddeployment.controller.runtime.metrics import UnitedMetrics
from py_engine.uniteddeployment.controller.runtime.source import CachedUnitedSource, ListedUnitedSource
from py_engine.uniteddeployment.controller.runtime.triggers import UnitedTriggers

LEADER_GAUGE = ("spreadgate_united_leader", "1 while this process leads (or runs unelected).")


def add_united_controller(
    manager: Manager | SteppedManager, *, options: UnitedOptions | None = None
) -> UnitedController:
    """Build the UnitedDeployment controller on `manager` and add it; raises `KubeError` when
    the cluster cannot say which workload kinds it serves."""
    metrics = UnitedMetrics()
    source: CachedUnitedSource | ListedUnitedSource
    if isinstance(manager, SteppedManager):
        source = ListedUnitedSource(manager.client, namespace=manager.namespace)
    else:
        source = CachedUnitedSource(manager.client, shared=manager.caches)
    controller = UnitedController(manager.client, source, manager.clock, options, metrics)
    if isinstance(source, CachedUnitedSource):
        UnitedTriggers(source, controller.enqueue, controller.inventory_changed).install()
    manager.add(Managed("uniteddeployment", source, controller, metrics, LEADER_GAUGE))
    return controller
