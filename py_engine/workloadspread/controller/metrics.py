"""The controller's Prometheus metrics: sync duration, syncs by result, writes
by kind, status conflicts, and gauges (queue depth, leadership).

Names follow controller-runtime's with a `spreadgate_controller_` prefix
(docs/conventions.md §2.9); each controller instance owns its registry
(`py_engine.metrics.MetricSet`).
"""

from __future__ import annotations

from py_engine.runtime.loopmetrics import LoopMetricSet


class ControllerMetrics(LoopMetricSet):
    """Every metric the loop records; `render()` is the `/metrics` body."""

    def __init__(self) -> None:
        super().__init__(
            ("spreadgate_controller_sync_duration_seconds", "Time one sync of one WorkloadSpread took."),
            ("spreadgate_controller_syncs_total", "Syncs by result (success, error, conflict)."),
        )
        self.writes = self.counter(
            "spreadgate_controller_writes_total",
            "API writes by kind (status, deletion_cost, adoption, pod_delete, event).",
            ("kind",),
        )
        self.conflicts = self.counter(
            "spreadgate_controller_status_update_conflicts_total",
            "Status writes refused with 409 Conflict (retried by requeue).",
        )
