"""The work queue: dedup, one worker per key, re-add during processing, delays, back-off."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from metrics_kit import exposed_types, value

from py_engine.runtime.workqueue import RateLimit, WorkQueue
from py_engine.semantics.clock import VirtualClock
from py_engine.workloadspread.controller.metrics import ControllerMetrics


def queue(**limit: float) -> tuple[WorkQueue, VirtualClock]:
    clock = VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))
    return WorkQueue(clock, RateLimit(**limit)), clock  # type: ignore[arg-type]


def test_duplicates_collapse_and_order_is_fifo() -> None:
    q, _ = queue()
    for key in ["ns/a", "ns/b", "ns/a", "ns/c", "ns/b"]:
        q.add(key)
    assert q.depth() == 3
    assert [q.get_nowait(), q.get_nowait(), q.get_nowait(), q.get_nowait()] == ["ns/a", "ns/b", "ns/c", None]


def test_a_key_being_processed_is_not_handed_out_again_until_done() -> None:
    q, _ = queue()
    q.add("ns/a")
    assert q.get_nowait() == "ns/a"
    q.add("ns/a")  # an event arrives mid-sync
    assert q.get_nowait() is None
    q.done("ns/a")
    assert q.get_nowait() == "ns/a"
    q.done("ns/a")
    assert q.get_nowait() is None


def test_add_after_waits_for_the_clock_and_the_earliest_time_wins() -> None:
    q, clock = queue()
    q.add_after("ns/a", 30)
    q.add_after("ns/a", 10)
    q.add_after("ns/a", 20)
    assert q.next_due() == 10
    clock.advance(9.9)
    assert q.get_nowait() is None
    clock.advance(0.1)
    assert q.get_nowait() == "ns/a"
    q.done("ns/a")
    assert q.next_due() is None


def test_rate_limited_back_off_doubles_per_failure_and_forget_resets_it() -> None:
    q, _ = queue(base_delay=1.0, max_delay=5.0)
    assert [q.add_rate_limited("ns/a") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert q.failures("ns/a") == 5
    q.forget("ns/a")
    assert q.add_rate_limited("ns/a") == 1.0


def test_token_bucket_caps_the_overall_retry_rate() -> None:
    q, _ = queue(base_delay=0.0, qps=2.0, burst=2)
    delays = [q.add_rate_limited(f"ns/{i}") for i in range(4)]
    assert delays[:2] == [0.0, 0.0]
    assert delays[2] == 0.5 and delays[3] == 1.0


def test_blocking_get_wakes_on_add_and_shutdown_releases_waiters() -> None:
    q, _ = queue()
    got: list[str | None] = []
    waiter = threading.Thread(target=lambda: got.append(q.get(timeout=10)))
    waiter.start()
    q.add("ns/a")
    waiter.join(10)
    assert got == ["ns/a"]
    waiter = threading.Thread(target=lambda: got.append(q.get(timeout=10)))
    waiter.start()
    q.shutdown()
    waiter.join(10)
    assert not waiter.is_alive() and got == ["ns/a", None]


def test_metrics_render_in_the_exposition_format() -> None:
    metrics = ControllerMetrics()
    metrics.sync_duration.observe(0.003)
    metrics.writes.inc(kind="status")
    metrics.writes.inc(2, kind="deletion_cost")
    metrics.add_gauge("spreadgate_controller_queue_depth", "depth", lambda: 4.0)
    text = metrics.render()
    assert value(text, "spreadgate_controller_sync_duration_seconds_bucket", le="0.0025") == 0
    assert value(text, "spreadgate_controller_sync_duration_seconds_bucket", le="0.005") == 1
    assert value(text, "spreadgate_controller_sync_duration_seconds_count") == 1
    assert value(text, "spreadgate_controller_writes_total", kind="deletion_cost") == 2
    assert value(text, "spreadgate_controller_writes_total", kind="status") == 1
    assert value(text, "spreadgate_controller_queue_depth") == 4
    assert exposed_types(text) == {
        "spreadgate_controller_sync_duration_seconds": "histogram",
        "spreadgate_controller_syncs_total": "counter",
        "spreadgate_controller_writes_total": "counter",
        "spreadgate_controller_status_update_conflicts_total": "counter",
        "spreadgate_controller_queue_depth": "gauge",
    }
