"""Prometheus metrics through `prometheus_client`, one registry per instance.

The webhook and both controllers expose `/metrics` (docs/operations.md, "Metrics").
Each of them owns a `MetricSet`, and each `MetricSet` its own `CollectorRegistry`:
nothing is registered on the library's process-wide default `REGISTRY`, so several
instances in one process (the tests, the embedded stack, the benchmarks) never share
or double-register a series. This module is the only one that imports
`prometheus_client` (an import contract in `.importlinter` says so), which keeps the
"always pass a registry" rule in one place.

`Counter` and `Histogram` are thin handles on the library's metrics that keep the
call sites' keyword-label form (`writes.inc(kind="status")`) and add the two reads
tests use (`value`, `count`). Names follow docs/conventions.md §2.9: base units,
counters end in `_total` (prometheus_client strips the suffix from a counter's family
name and writes it back on the sample, so the exposed name is the one given here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Generic, TypeVar

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.utils import floatToGoString

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
"""The media type of `generate_latest`'s output: the Prometheus text format 0.0.4 (every
name here is a legacy-valid one, so no UTF-8 escaping is ever needed). It is what
prometheus_client's own handlers answer a scraper that does not ask for OpenMetrics."""


LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds, 1 ms to 10 s: the buckets of every latency histogram (the webhook's answers, the
controllers' syncs), so their quantiles compare on one scale."""


def new_registry() -> CollectorRegistry:
    """An empty registry for one instance.

    prometheus_client adds a `<name>_created` series beside each counter and histogram
    unless told not to; those are not among the documented metrics, and the library's
    only switch for them is process-wide, so it is thrown here, where every registry of
    the product is built (idempotent)."""
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]  # (untyped in the library)
    return CollectorRegistry()


def exposition(*registries: CollectorRegistry) -> bytes:
    """The `/metrics` body for these registries, one after the other (their names never overlap)."""
    return b"".join(generate_latest(registry) for registry in registries)


MetricT = TypeVar("MetricT", bound=MetricWrapperBase)


class _Labelled(Generic[MetricT]):
    """A library metric and its children by label set, looked up without the library's lock.

    `labels(**kw)` validates the names and takes the metric's lock on every call, which
    is most of the cost of one observation; the webhook records three per admission. The
    cache keys a child by the label pairs in the caller's order (a call site always names
    them in one order; another order only adds a key for the same child). Its size is the
    number of label sets, which are low-cardinality by convention (docs/conventions.md §2.9)."""

    def __init__(self, registry: CollectorRegistry, metric: MetricT) -> None:
        self._registry = registry
        self._metric = metric
        self._children: dict[tuple[tuple[str, str], ...], MetricT] = {}

    def _child(self, labels: dict[str, str]) -> MetricT:
        if not labels:
            return self._metric
        key = tuple(labels.items())
        child = self._children.get(key)
        if child is None:  # two threads may both get here: labels() hands both the one child
            child = self._children[key] = self._metric.labels(**labels)
        return child


class Counter(_Labelled[prometheus_client.Counter]):
    """A monotonically increasing count per label set, registered on one registry."""

    def __init__(
        self, registry: CollectorRegistry, name: str, help_text: str, labels: Sequence[str] = ()
    ) -> None:
        super().__init__(
            registry, prometheus_client.Counter(name, help_text, labelnames=tuple(labels), registry=registry)
        )
        self.name = name.removesuffix("_total") + "_total"
        """The exposed name: prometheus_client keeps the family's name without `_total`
        and writes the suffix back on the sample and in `# TYPE`."""

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        self._child(labels).inc(amount)

    def value(self, **labels: str) -> float:
        """The current count of one label set (0 when never incremented); for tests."""
        return self._registry.get_sample_value(self.name, labels) or 0.0


class Histogram(_Labelled[prometheus_client.Histogram]):
    """Cumulative buckets, sum and count per label set, registered on one registry."""

    def __init__(
        self,
        registry: CollectorRegistry,
        name: str,
        help_text: str,
        buckets: Sequence[float],
        labels: Sequence[str] = (),
    ) -> None:
        super().__init__(
            registry,
            prometheus_client.Histogram(
                name, help_text, labelnames=tuple(labels), buckets=tuple(buckets), registry=registry
            ),
        )
        self.name = name

    def observe(self, value: float, **labels: str) -> None:
        self._child(labels).observe(value)

    def count(self, **labels: str) -> int:
        """How many observations one label set holds (0 when none); for tests."""
        return int(self._registry.get_sample_value(self.name + "_count", labels) or 0)


class _ReadAtScrape:
    """A collector of one family built at scrape time from state its owner keeps anyway.
    `describe` names the family, so the registry refuses a second one of the same name."""

    def __init__(self, build: Callable[[bool], Metric]) -> None:
        self._build = build

    def collect(self) -> Iterator[Metric]:
        yield self._build(True)

    def describe(self) -> Iterator[Metric]:
        yield self._build(False)


def _bound_text(bound: float) -> str:
    """A bucket bound as the library's own histograms write it (`1.0`, `+Inf`)."""
    text: str = floatToGoString(bound)  # type: ignore[no-untyped-call]  # (untyped in the library)
    return text


def _histogram_family(
    name: str, help_text: str, bounds: Sequence[float], counts: Mapping[float, int] | None
) -> HistogramMetricFamily:
    """A histogram family from how many times each value was observed (None: no samples)."""
    if counts is None:
        return HistogramMetricFamily(name, help_text)
    cumulative = [
        (_bound_text(bound), sum(n for value, n in counts.items() if value <= bound))
        for bound in (*sorted(bounds), float("inf"))
    ]
    return HistogramMetricFamily(
        name, help_text, buckets=cumulative, sum_value=sum(value * n for value, n in counts.items())
    )


class MetricSet:
    """The metrics of one instance (a webhook, a controller loop) on their own registry."""

    def __init__(self) -> None:
        self.registry = new_registry()

    def counter(self, name: str, help_text: str, labels: Sequence[str] = ()) -> Counter:
        return Counter(self.registry, name, help_text, labels)

    def histogram(
        self, name: str, help_text: str, buckets: Sequence[float], labels: Sequence[str] = ()
    ) -> Histogram:
        return Histogram(self.registry, name, help_text, buckets, labels)

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """A gauge whose value `read` returns at scrape time."""
        prometheus_client.Gauge(name, help_text, registry=self.registry).set_function(read)

    def add_counter_reading(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """A counter whose running total `read` returns at scrape time."""
        self.registry.register(
            _ReadAtScrape(
                lambda scrape: CounterMetricFamily(name, help_text, value=read() if scrape else None)
            )
        )

    def add_histogram_reading(
        self, name: str, help_text: str, buckets: Sequence[float], read: Callable[[], Mapping[float, int]]
    ) -> None:
        """A histogram built at scrape time from `read()`: how many times each value was observed."""
        self.registry.register(
            _ReadAtScrape(
                lambda scrape: _histogram_family(name, help_text, buckets, read() if scrape else None)
            )
        )

    def render(self) -> str:
        """The `/metrics` body of this instance alone."""
        return exposition(self.registry).decode()
