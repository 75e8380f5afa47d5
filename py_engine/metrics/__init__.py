"""Prometheus metrics in the text exposition format, without a client library.

Shared by the webhook and the controller (both expose `/metrics`). Metrics live
in per-instance registries rather than process-global state, so tests and
benchmarks can run several servers in one process. Names follow the
conventions (docs/conventions.md §2.9): base units, counters end in `_total`.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Sequence

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt_labels(labels: Labels, extra: Iterable[tuple[str, str]] = ()) -> str:
    pairs = [*labels, *extra]
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def format_number(value: float) -> str:
    """A sample value as Prometheus writes it (`+Inf`, integers without a fraction)."""
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


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
        lines += [f"{self.name}{_fmt_labels(k)} {format_number(v)}" for k, v in items]
        return lines


class Gauge:
    """A gauge whose value is read at scrape time from a callback."""

    def __init__(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.name, self.help, self.read = name, help_text, read

    def render(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} gauge", f"{self.name} {format_number(self.read())}"]


class Histogram:
    """Cumulative buckets, sum and count per label set."""

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
                labels = _fmt_labels(key, [("le", format_number(bound))])
                lines.append(f"{self.name}_bucket{labels} {format_number(running)}")
            lines.append(f"{self.name}_sum{_fmt_labels(key)} {series[-1]!r}")
            lines.append(f"{self.name}_count{_fmt_labels(key)} {format_number(running)}")
        return lines


def render_all(metrics: Iterable[Counter | Gauge | Histogram]) -> str:
    """The `/metrics` body for these metrics."""
    lines: list[str] = []
    for metric in metrics:
        lines.extend(metric.render())
    return "\n".join(lines) + "\n"
