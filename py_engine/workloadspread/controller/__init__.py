"""The WorkloadSpread controller's pure reconcile core (docs/design-workloadspread.md §2.5).

`reconcile(spread, view, now)` computes one sync from plain dicts and an
injected time: grouping and adoption (`grouping`, `adoption`), subset status
and ageing (`subset_status`, `status`), Adaptive rescheduling (`reschedule`),
deletion costs between subsets (`costs`) and inside a subset (`slots`). Target
kinds, replica counts and pod listing are in `workloads`, `podlisting` and
`versions`; `snapshot` builds the inputs from a flat list of objects. Nothing
here does I/O (contract controller-core-no-io in `.importlinter`): the running
controller in `py_engine.workloadspread.controller.runtime` and `spreadgate reconcile` both
drive it.
"""

from py_engine.model.workloads import Whitelist, parse_whitelist
from py_engine.workloadspread.controller.errors import ReconcileError
from py_engine.workloadspread.controller.events import Event
from py_engine.workloadspread.controller.grouping import Adoption
from py_engine.workloadspread.controller.options import DEFAULT_OPTIONS, ReconcileOptions
from py_engine.workloadspread.controller.reconcile import ClusterView, SyncResult, reconcile
from py_engine.workloadspread.controller.snapshot import Snapshot, snapshot_from_objects

__all__ = [
    "DEFAULT_OPTIONS",
    "Adoption",
    "ClusterView",
    "Event",
    "ReconcileError",
    "ReconcileOptions",
    "Snapshot",
    "SyncResult",
    "Whitelist",
    "parse_whitelist",
    "reconcile",
    "snapshot_from_objects",
]
