"""The shared reconcile loop: requeue-after, back-off, failure logging, metrics, threads."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from metrics_kit import value
from polling import wait_until
from reconciler_kit import Metrics, Options, Report

from py_engine.apiclient import Conflict, KubeError
from py_engine.logsetup import record_fields
from py_engine.runtime.reconciler import REQUEUE_SLACK, SUCCESS, Reconciler
from py_engine.runtime.workqueue import RateLimit
from py_engine.semantics.clock import VirtualClock

LOGGER = "tests.reconciler"


BACK_OFF = RateLimit(base_delay=1.0, max_delay=60.0, qps=1000.0, burst=1000)  # 1 s, 2 s, ...; no bucket wait


class Loop(Reconciler[Report]):
    """Each key's sync does what `behaviour[key]` says: return a report or raise."""

    log = logging.getLogger(LOGGER)
    thread_prefix = "test"
    settled = SUCCESS | {"refused"}

    def __init__(
        self,
        clock: VirtualClock,
        behaviour: dict[str, Callable[[str], Report]],
        options: Options | None = None,
    ) -> None:
        self.metrics = Metrics()
        super().__init__(
            clock, options or Options(rate_limit=BACK_OFF), self.metrics, ("t_queue_depth", "Keys waiting.")
        )
        self.behaviour = behaviour
        self.synced: list[str] = []

    def keys(self) -> list[str]:
        return list(self.behaviour)

    def key_fields(self, key: str) -> dict[str, Any]:
        return {"thing": key}

    def sync(self, key: str) -> Report:
        self.synced.append(key)
        return self.behaviour[key](key)

    def failed_report(self, key: str, outcome: str, error: str) -> Report:
        return Report(key, outcome, error=error)


def clock() -> VirtualClock:
    return VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))


def raising(exc: Exception) -> Callable[[str], Report]:
    def sync(key: str) -> Report:
        raise exc

    return sync


def test_a_settled_sync_is_requeued_after_its_requeue_after_plus_the_slack() -> None:
    c = clock()
    loop = Loop(c, {"ns/a": lambda key: Report(key, "synced", requeue_after=5.0)})
    assert [r.outcome for r in loop.step()] == ["synced"]
    assert loop.next_deadline() == pytest.approx(5.0 + REQUEUE_SLACK)
    c.advance(5.0)
    assert loop.process_ready() == []  # the requeue is strictly after the expiry
    c.advance(REQUEUE_SLACK)
    assert [r.key for r in loop.process_ready()] == ["ns/a"]


def test_a_sync_without_requeue_after_is_not_requeued() -> None:
    loop = Loop(clock(), {"ns/a": lambda key: Report(key, "synced"), "ns/b": lambda key: Report(key, "gone")})
    loop.step()
    assert loop.next_deadline() is None and loop.queue.depth() == 0


def test_failures_back_off_per_key_and_a_settled_sync_resets_the_back_off() -> None:
    c = clock()
    outcomes = iter(
        [raising(KubeError(500, "InternalError", "boom"))] * 2 + [lambda key: Report(key, "refused")]
    )
    loop = Loop(c, {"ns/a": lambda key: next(outcomes)(key)})
    assert [r.outcome for r in loop.step()] == ["error"]
    assert loop.queue.failures("ns/a") == 1 and loop.next_deadline() == pytest.approx(1.0)
    c.advance(1.0)
    assert [r.outcome for r in loop.process_ready()] == ["error"]
    assert loop.queue.failures("ns/a") == 2 and loop.next_deadline() == pytest.approx(3.0)  # 1 s, then 2 s
    c.advance(2.0)
    assert [r.outcome for r in loop.process_ready()] == ["refused"]  # a subclass's settled outcome
    assert loop.queue.failures("ns/a") == 0 and loop.next_deadline() is None


def test_each_failure_is_logged_once_with_the_key_fields_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = Loop(
        clock(),
        {
            "ns/conflict": raising(Conflict(409, "Conflict", "stale")),
            "ns/api": raising(KubeError(500, "InternalError", "boom")),
            "ns/bug": raising(ValueError("oops")),
        },
    )
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        reports = {r.key: r for r in loop.step()}
    assert {k: (r.outcome, r.error) for k, r in reports.items()} == {
        "ns/conflict": ("conflict", "409 Conflict: stale"),
        "ns/api": ("error", "500 InternalError: boom"),
        "ns/bug": ("error", "ValueError: oops"),
    }
    records = [r for r in caplog.records if r.name == LOGGER]
    assert [(r.levelname, r.getMessage(), record_fields(r)["thing"]) for r in records] == [
        ("DEBUG", "status write conflict, requeued", "ns/conflict"),
        ("WARNING", "sync failed", "ns/api"),
        ("ERROR", "sync crashed", "ns/bug"),
    ]
    assert record_fields(records[0])["write"] == "status"
    assert record_fields(records[1])["cause"] == "500 InternalError: boom"
    assert records[2].exc_info is not None and record_fields(records[2])["cause"] == "ValueError: oops"
    assert loop.last["ns/bug"].outcome == "error"


def test_metrics_count_outcomes_and_the_gauge_reads_the_queue() -> None:
    loop = Loop(
        clock(),
        {
            "ns/a": lambda key: Report(key, "synced"),
            "ns/b": lambda key: Report(key, "refused"),
            "ns/c": raising(Conflict(409, "Conflict", "stale")),
        },
    )
    loop.enqueue_all()
    assert value(loop.metrics.render(), "t_queue_depth") == 3
    loop.process_ready()
    assert {
        result: loop.metrics.syncs.value(result=result) for result in ("success", "refused", "conflict")
    } == {"success": 1, "refused": 1, "conflict": 1}
    assert loop.metrics.sync_duration.count() == 3
    assert value(loop.metrics.render(), "t_queue_depth") == 0


def test_workers_sync_enqueued_keys_and_stop_joins_every_thread() -> None:
    workers: set[str] = set()

    def sync(key: str) -> Report:
        workers.add(threading.current_thread().name)
        return Report(key, "synced")

    loop = Loop(clock(), {"ns/a": sync, "ns/b": sync}, Options(workers=3, rate_limit=BACK_OFF))
    loop.start()
    threads = list(loop._threads)
    assert sorted(t.name for t in threads) == [
        "test-resync",
        "test-worker-0",
        "test-worker-1",
        "test-worker-2",
    ]
    assert loop.start() is loop and loop._threads == threads  # a second start starts nothing
    wait_until(lambda: set(loop.last) == {"ns/a", "ns/b"}, 5, "the resync's keys to be synced")
    assert workers <= {"test-worker-0", "test-worker-1", "test-worker-2"} and loop.running
    loop.stop()
    assert not loop.running and not any(t.is_alive() for t in threads)
    assert loop.queue.is_shutdown


def test_a_crashing_sync_does_not_kill_its_worker() -> None:
    loop = Loop(
        clock(),
        {"ns/bug": raising(RuntimeError("bug")), "ns/ok": lambda key: Report(key, "synced")},
        Options(workers=1, resync_seconds=3600.0, rate_limit=BACK_OFF),
    )
    loop.start()
    try:
        wait_until(lambda: "ns/ok" in loop.last, 5, "the key after the crash to be synced")
        assert loop.last["ns/bug"].outcome == "error" and loop.running
    finally:
        loop.stop()
