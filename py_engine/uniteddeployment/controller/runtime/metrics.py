"""The UnitedDeployment controller's Prometheus metrics (prefix `spreadgate_united_`, so
they sit beside the WorkloadSpread controller's on one `/metrics`); each instance owns
its registry (`py_engine.metrics.MetricSet`)."""

from __future__ import annotations

from py_engine.runtime.loopmetrics import LoopMetricSet


class UnitedMetrics(LoopMetricSet):
    """Every metric the UnitedDeployment loop records; `render()` is its part of `/metrics`."""

    def __init__(self) -> None:
        super().__init__(
            ("spreadgate_united_sync_duration_seconds", "Time one sync of one UnitedDeployment took."),
            (
                "spreadgate_united_syncs_total",
                "UnitedDeployment syncs by result (success, error, conflict, invalid).",
            ),
        )
        self.writes = self.counter(
            "spreadgate_united_writes_total",
            "API writes by kind (create, update, delete, release, pod_label, status, event).",
            ("kind",),
        )
        self.conflicts = self.counter(
            "spreadgate_united_update_conflicts_total",
            "Writes refused with 409 Conflict (retried with a fresh object).",
        )
