"""The controller's Prometheus metrics: sync duration, syncs by result, writes
by kind, status conflicts, and gauges (queue depth, leadership).

Names follow controller-runtime's with a `spreadgate_controller_` prefix
(docs/conventions.md §2.9); the primitives are in `py_engine.metrics`.
"""

from __future__ import annotations

from collections.abc import Callable

from py_engine.metrics import Counter, Gauge, Histogram, render_all

SYNC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ControllerMetrics:
    """Every metric the loop records; `render()` is the `/metrics` body."""

    def __init__(self) -> None:
        self.sync_duration = Histogram("spreadgate_controller_sync_duration_seconds",
                                       "Time one sync of one WorkloadSpread took.", SYNC_BUCKETS)
        self.syncs = Counter("spreadgate_controller_syncs_total", "Syncs by result (success, error, conflict).")
        self.writes = Counter("spreadgate_controller_writes_total",
                              "API writes by kind (status, deletion_cost, adoption, pod_delete, event).")
        self.conflicts = Counter("spreadgate_controller_status_update_conflicts_total",
                                 "Status writes refused with 409 Conflict (retried by requeue).")
        self.gauges: list[Gauge] = []

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges.append(Gauge(name, help_text, read))

    def render(self) -> str:
        return render_all([self.sync_duration, self.syncs, self.writes, self.conflicts, *self.gauges])
