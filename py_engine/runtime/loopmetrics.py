"""The two metrics every controller loop records (`py_engine.runtime.reconciler`, protocol
`LoopMetrics`): how long one sync took and the syncs by result, under each loop's own names."""

from __future__ import annotations

from py_engine.metrics import LATENCY_BUCKETS, MetricSet


class LoopMetricSet(MetricSet):
    """A loop's `MetricSet`, starting with the metrics the `Reconciler` records, each given as
    `(name, help)`: `sync_duration` (seconds, `LATENCY_BUCKETS`) and `syncs` (by `result`).
    A subclass adds what its writer records."""

    def __init__(self, sync_duration: tuple[str, str], syncs: tuple[str, str]) -> None:
        super().__init__()
        self.sync_duration = self.histogram(*sync_duration, LATENCY_BUCKETS)
        self.syncs = self.counter(*syncs, ("result",))
