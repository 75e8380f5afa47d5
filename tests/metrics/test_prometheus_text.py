"""The shared Prometheus text exposition used by the webhook and the controller."""

from __future__ import annotations

from py_engine.metrics import Counter, Gauge, Histogram, format_number, render_all


def test_counter_gauge_histogram_render_the_exposition_format() -> None:
    requests = Counter("x_requests_total", "Requests.")
    requests.inc(webhook="/mutate", code="200")
    requests.inc(2, webhook="/mutate", code="200")
    latency = Histogram("x_latency_seconds", "Latency.", (0.1, 1.0))
    latency.observe(0.05)
    latency.observe(0.5, times=2)
    depth = Gauge("x_queue_depth", "Depth.", lambda: 4)
    text = render_all([requests, latency, depth])
    assert 'x_requests_total{code="200",webhook="/mutate"} 3' in text
    assert 'x_latency_seconds_bucket{le="0.1"} 1' in text
    assert 'x_latency_seconds_bucket{le="1"} 3' in text
    assert 'x_latency_seconds_bucket{le="+Inf"} 3' in text
    assert "x_latency_seconds_count 3" in text and "x_latency_seconds_sum 1.05" in text
    assert "# TYPE x_queue_depth gauge\nx_queue_depth 4" in text
    assert text.endswith("\n")
    assert requests.value(webhook="/mutate", code="200") == 3
    assert latency.count() == 3


def test_label_values_are_escaped_and_numbers_formatted() -> None:
    counter = Counter("x_total", "X.")
    counter.inc(path='a"b\\c\nd')
    assert 'path="a\\"b\\\\c\\nd"' in counter.render()[-1]
    assert format_number(float("inf")) == "+Inf"
    assert format_number(2.0) == "2" and format_number(0.25) == "0.25"
