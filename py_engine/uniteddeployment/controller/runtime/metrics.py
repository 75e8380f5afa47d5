"""The UnitedDeployment controller's Prometheus metrics (prefix `spreadgate_united_`, so
they sit beside the WorkloadSpread controller's on one `/metrics`)."""

from __future__ import annotations

from collections.abc import Callable

from py_engine.metrics import Counter, Gauge, Histogram, render_all

SYNC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class UnitedMetrics:
    """Every metric the UnitedDeployment loop records; `render()` is its part of `/metrics`."""

    def __init__(self) -> None:
        self.sync_duration = Histogram("spreadgate_united_sync_duration_seconds",
                                       "Time one sync of one UnitedDeployment took.", SYNC_BUCKETS)
        self.syncs = Counter("spreadgate_united_syncs_total",
                             "UnitedDeployment syncs by result (success, error, conflict, invalid).")
        self.writes = Counter("spreadgate_united_writes_total",
                              "API writes by kind (create, update, delete, release, pod_label, status, event).")
        self.conflicts = Counter("spreadgate_united_update_conflicts_total",
                                 "Writes refused with 409 Conflict (retried with a fresh object).")
        self.gauges: list[Gauge] = []

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges.append(Gauge(name, help_text, read))

    def render(self) -> str:
        return render_all([self.sync_duration, self.syncs, self.writes, self.conflicts, *self.gauges])
