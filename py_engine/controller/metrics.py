"""The controller's Prometheus metrics, rendered in the text exposition format.

Why not reuse `webhook.metrics`: the layering forbids the controller importing
the webhook package, and no Prometheus client library is a dependency. The
registry is per instance (no process-global state), so tests can run several
controllers in one process. Names follow controller-runtime's with a
`spreadgate_controller_` prefix (ecosystem conventions §2.9); base units,
counters end in `_total`.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable

SYNC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

Labels = tuple[tuple[str, str], ...]


def _labels(pairs: Labels) -> str:
    if not pairs:
        return ""
    inner = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                     for k, v in pairs)
    return "{" + inner + "}"


def _num(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Counter:
    """A monotonically increasing count per label set."""

    def __init__(self, name: str, help_text: str) -> None:
        self.name, self.help = name, help_text
        self._values: dict[Labels, float] = {}
        self._lock = threading.Lock()

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        with self._lock:
            return self._values.get(tuple(sorted(labels.items())), 0.0)

    def render(self) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        return lines + [f"{self.name}{_labels(k)} {_num(v)}" for k, v in items]


class Gauge:
    """A value read when rendered (queue depth, leadership)."""

    def __init__(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.name, self.help, self.read = name, help_text, read

    def render(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} gauge", f"{self.name} {_num(self.read())}"]


class Histogram:
    """Cumulative buckets, sum and count (no labels: one series is all the sync needs)."""

    def __init__(self, name: str, help_text: str, buckets: tuple[float, ...] = SYNC_BUCKETS) -> None:
        self.name, self.help, self.buckets = name, help_text, buckets
        self._counts = [0] * (len(buckets) + 1)
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self._lock:
            self._counts[bisect.bisect_left(self.buckets, value)] += 1
            self._sum += value

    @property
    def count(self) -> int:
        with self._lock:
            return sum(self._counts)

    def render(self) -> list[str]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, count in zip([*self.buckets, float("inf")], counts, strict=True):
            running += count
            lines.append(f'{self.name}_bucket{{le="{_num(bound)}"}} {running}')
        lines += [f"{self.name}_sum {_num(total)}", f"{self.name}_count {running}"]
        return lines


class ControllerMetrics:
    """Every metric the loop records; `render()` is the `/metrics` body."""

    def __init__(self) -> None:
        self.sync_duration = Histogram("spreadgate_controller_sync_duration_seconds",
                                       "Time one sync of one WorkloadSpread took.")
        self.syncs = Counter("spreadgate_controller_syncs_total", "Syncs by result (success, error, conflict).")
        self.writes = Counter("spreadgate_controller_writes_total",
                              "API writes by kind (status, deletion_cost, adoption, pod_delete, event).")
        self.conflicts = Counter("spreadgate_controller_status_update_conflicts_total",
                                 "Status writes refused with 409 Conflict (retried by requeue).")
        self.gauges: list[Gauge] = []

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges.append(Gauge(name, help_text, read))

    def render(self) -> str:
        lines: list[str] = []
        for metric in (self.sync_duration, self.syncs, self.writes, self.conflicts):
            lines += metric.render()
        for gauge in self.gauges:
            lines += gauge.render()
        return "\n".join(lines) + "\n"
