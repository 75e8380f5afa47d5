"""The parts of a `Reconciler` test double both test_reconciler and test_manager use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from py_engine.metrics import Counter, Gauge, Histogram
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


class Metrics:
    """What the loop records, under test names; gauges by name."""

    def __init__(self) -> None:
        self.sync_duration = Histogram("t_sync_duration_seconds", "Sync duration.", (0.1, 1.0))
        self.syncs = Counter("t_syncs_total", "Syncs by result.")
        self.gauges: dict[str, Gauge] = {}

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges[name] = Gauge(name, help_text, read)
