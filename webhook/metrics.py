"""Prometheus metrics in the text exposition format, without a client library.

A handful of counters and histograms is all the webhook needs; keeping them
in instance registries (no process-global state) lets tests and benchmarks run
several webhook servers in one process. Names follow controller-runtime's
webhook metrics with a `spreadgate_` prefix (ecosystem conventions §2.9).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
EVAL_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1)

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt_labels(labels: Labels, extra: Iterable[tuple[str, str]] = ()) -> str:
    pairs = [*labels, *extra]
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _num(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class Counter:
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
        lines += [f"{self.name}{_fmt_labels(k)} {_num(v)}" for k, v in items]
        return lines


class Gauge:
    """A gauge whose value is read at scrape time from a callback."""

    def __init__(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.name, self.help, self.read = name, help_text, read

    def render(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} gauge", f"{self.name} {_num(self.read())}"]


class Histogram:
    def __init__(self, name: str, help_text: str, buckets: Sequence[float]) -> None:
        self.name, self.help = name, help_text
        self.buckets = tuple(sorted(buckets))
        self._series: dict[Labels, list[float]] = {}  # bucket counts..., +Inf count, sum
        self._lock = threading.Lock()

    def observe(self, value: float, times: int = 1, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        index = bisect.bisect_left(self.buckets, value)
        with self._lock:
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = [0.0] * (len(self.buckets) + 2)
            series[index] += times
            series[-1] += value * times

    def count(self, **labels: str) -> int:
        with self._lock:
            series = self._series.get(tuple(sorted(labels.items())))
            return int(sum(series[:-1])) if series else 0

    def render(self) -> list[str]:
        with self._lock:
            items = sorted((k, list(v)) for k, v in self._series.items())
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        for key, series in items:
            running = 0.0
            for bound, count in zip((*self.buckets, float("inf")), series[:-1], strict=True):
                running += count
                lines.append(f"{self.name}_bucket{_fmt_labels(key, [('le', _num(bound))])} {_num(running)}")
            lines.append(f"{self.name}_sum{_fmt_labels(key)} {series[-1]!r}")
            lines.append(f"{self.name}_count{_fmt_labels(key)} {_num(running)}")
        return lines


class WebhookMetrics:
    """Every metric the webhook exposes on `/metrics`."""

    def __init__(self) -> None:
        self.latency = Histogram("spreadgate_webhook_latency_seconds",
                                 "Time to answer an admission request, by webhook path.", LATENCY_BUCKETS)
        self.requests = Counter("spreadgate_webhook_requests_total", "Admission HTTP requests by webhook and code.")
        self.decisions = Counter("spreadgate_webhook_decisions_total", "Admission decisions by webhook and outcome.")
        self.committer: Callable[[], Mapping[str, Any]] | None = None
        """Reads the committer's counters (`CommitterStats.snapshot`) at scrape time."""
        self.policy_eval = Histogram("spreadgate_policy_eval_seconds", "Rego evaluation time by rule.", EVAL_BUCKETS)
        self.extra: list[Gauge] = []

    def render(self) -> str:
        lines: list[str] = []
        metrics: list[Counter | Histogram | Gauge] = [self.latency, self.requests, self.decisions,
                                                       self.policy_eval, *self.extra]
        for metric in metrics:
            lines.extend(metric.render())
        if self.committer is not None:
            lines.extend(render_committer(self.committer()))
        return "\n".join(lines) + "\n"


def render_committer(stats: Mapping[str, Any]) -> list[str]:
    """Status writes, conflicts, timeouts and the batch-size histogram from committer counters."""
    batches = Histogram("spreadgate_commit_batch_size",
                        "Reservations carried by one WorkloadSpread status write.", BATCH_BUCKETS)
    for size, count in sorted((stats.get("batch_sizes") or {}).items()):
        batches.observe(float(size), times=int(count))
    lines: list[str] = []
    for name, key, text in (
        ("spreadgate_status_writes_total", "writes", "WorkloadSpread status writes."),
        ("spreadgate_status_update_conflicts_total", "conflicts",
         "409 Conflicts on WorkloadSpread status writes (re-read and retried)."),
        ("spreadgate_commit_timeouts_total", "timeouts", "Reservations not committed before their deadline."),
        ("spreadgate_commit_errors_total", "errors", "Failed WorkloadSpread reads or writes other than conflicts."),
    ):
        lines += [f"# HELP {name} {text}", f"# TYPE {name} counter", f"{name} {_num(float(stats.get(key, 0)))}"]
    return lines + batches.render()
