"""The parts of a `Reconciler` test double both test_reconciler and test_manager use."""

from __future__ import annotations

from dataclasses import dataclass, field

from py_engine.metrics import MetricSet
from py_engine.runtime.workqueue import RateLimit


@dataclass
class Report:
    key: str
    outcome: str
    error: str = ""
    requeue_after: float | None = None


@dataclass(frozen=True)
class Options:
    workers: int = 2
    resync_seconds: float = 300.0
    rate_limit: RateLimit = field(default_factory=RateLimit)


class Metrics(MetricSet):
    """What the loop records, under test names."""

    def __init__(self) -> None:
        super().__init__()
        self.sync_duration = self.histogram("t_sync_duration_seconds", "Sync duration.", (0.1, 1.0))
        self.syncs = self.counter("t_syncs_total", "Syncs by result.", ("result",))
