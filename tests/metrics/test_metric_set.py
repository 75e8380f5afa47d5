"""`py_engine.metrics`: prometheus_client metrics on one registry per instance, read back
with prometheus_client's parser as a scraper reads them."""

from __future__ import annotations

import prometheus_client
import pytest
from metrics_kit import exposed_types, samples, value

from py_engine.metrics import CONTENT_TYPE, MetricSet, exposition


def test_counter_histogram_and_gauge_expose_names_types_and_values() -> None:
    metrics = MetricSet()
    requests = metrics.counter("x_requests_total", "Requests.", ("webhook", "code"))
    requests.inc(webhook="/mutate", code="200")
    requests.inc(2, code="200", webhook="/mutate")  # another keyword order names the same series
    latency = metrics.histogram("x_latency_seconds", "Latency.", (0.1, 1.0))
    latency.observe(0.05)
    latency.observe(0.5)
    latency.observe(0.5)
    latency.observe(1.0)  # a bound is inclusive: `le` means less than or equal
    metrics.add_gauge("x_queue_depth", "Depth.", lambda: 4)
    text = metrics.render()
    assert exposed_types(text) == {
        "x_requests_total": "counter",
        "x_latency_seconds": "histogram",
        "x_queue_depth": "gauge",
    }
    assert "# HELP x_requests_total Requests.\n# TYPE x_requests_total counter\n" in text
    assert value(text, "x_requests_total", code="200", webhook="/mutate") == 3
    assert [(s.labels["le"], s.value) for s in samples(text) if s.name == "x_latency_seconds_bucket"] == [
        ("0.1", 1),
        ("1.0", 4),
        ("+Inf", 4),
    ]
    assert value(text, "x_latency_seconds_count") == 4
    assert value(text, "x_latency_seconds_sum") == pytest.approx(2.05)
    assert value(text, "x_queue_depth") == 4
    assert not any(s.name.endswith("_created") for s in samples(text))  # not among the documented names
    assert requests.value(webhook="/mutate", code="200") == 3 and requests.value(webhook="/x", code="1") == 0
    assert latency.count() == 4


def test_label_values_round_trip_escaped() -> None:
    metrics = MetricSet()
    counter = metrics.counter("x_total", "X.", ("path",))
    counter.inc(path='a"b\\c\nd')
    assert value(metrics.render(), "x_total", path='a"b\\c\nd') == 1


def test_a_label_set_that_is_not_declared_is_refused() -> None:
    metrics = MetricSet()
    counter = metrics.counter("x_total", "X.", ("kind",))
    with pytest.raises(ValueError, match="label"):
        counter.inc(result="ok")
    with pytest.raises(ValueError, match="label"):
        counter.inc()  # a labelled counter has no unlabelled series


def test_readings_are_taken_at_scrape_time() -> None:
    """Counters and a histogram computed from state the instance keeps anyway (the
    committer's statistics): each scrape reads the state afresh."""
    writes = [1.0]
    sizes = {1.0: 2, 5.0: 1}
    metrics = MetricSet()
    metrics.add_counter_reading("x_writes_total", "Writes.", lambda: writes[-1])
    metrics.add_histogram_reading("x_batch_size", "Batch sizes.", (1, 4, 8), lambda: sizes)
    text = metrics.render()
    assert exposed_types(text) == {"x_writes_total": "counter", "x_batch_size": "histogram"}
    assert value(text, "x_writes_total") == 1
    assert [(s.labels["le"], s.value) for s in samples(text) if s.name == "x_batch_size_bucket"] == [
        ("1.0", 2),
        ("4.0", 2),
        ("8.0", 3),
        ("+Inf", 3),
    ]
    assert value(text, "x_batch_size_count") == 3 and value(text, "x_batch_size_sum") == 7
    writes.append(5.0)
    sizes[300.0] = 1
    text = metrics.render()
    assert value(text, "x_writes_total") == 5
    assert (
        value(text, "x_batch_size_bucket", le="8.0") == 3
        and value(text, "x_batch_size_bucket", le="+Inf") == 4
    )


def test_instances_keep_separate_registries() -> None:
    """Two instances with the same metric names in one process: separate counts, no clash,
    and nothing on prometheus_client's process-wide default registry."""
    first, second = MetricSet(), MetricSet()
    a = first.counter("x_syncs_total", "Syncs.", ("result",))
    b = second.counter("x_syncs_total", "Syncs.", ("result",))
    a.inc(result="success")
    a.inc(result="success")
    b.inc(result="error")
    assert value(first.render(), "x_syncs_total", result="success") == 2
    assert value(first.render(), "x_syncs_total", result="error") is None
    assert value(second.render(), "x_syncs_total", result="error") == 1
    assert value(second.render(), "x_syncs_total", result="success") is None
    assert "x_syncs" not in {family.name for family in prometheus_client.REGISTRY.collect()}
    with pytest.raises(ValueError, match="Duplicated"):  # one instance cannot register a name twice
        first.counter("x_syncs_total", "Again.")


def test_exposition_concatenates_registries_and_names_its_media_type() -> None:
    first, second = MetricSet(), MetricSet()
    first.add_gauge("x_a", "A.", lambda: 1)
    second.add_gauge("x_b", "B.", lambda: 2)
    text = exposition(first.registry, second.registry).decode()
    assert exposed_types(text) == {"x_a": "gauge", "x_b": "gauge"}
    assert CONTENT_TYPE.startswith("text/plain; version=0.0.4")
