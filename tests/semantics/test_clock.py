"""The clocks every decision reads time from (py_engine/semantics/clock.py): UTC always, a frozen
clock that refuses to sleep, and a virtual clock whose sleepers wake exactly at their deadline."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from py_engine.semantics.clock import FixedClock, RealClock, VirtualClock

pytestmark = pytest.mark.timeout(30)

START = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
INDIA = timezone(timedelta(hours=5, minutes=30))


def test_the_real_clock_reads_utc_now_and_a_monotonic_scale() -> None:
    clock = RealClock()
    before = datetime.now(UTC)
    now = clock.now()
    assert now.utcoffset() == timedelta(0)
    assert before <= now <= datetime.now(UTC)
    first = clock.monotonic()
    assert time.monotonic() >= first >= 0


def test_the_real_clock_does_not_sleep_for_zero_or_less(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("py_engine.semantics.clock.time.sleep", slept.append)
    clock = RealClock()
    clock.sleep(0)
    clock.sleep(-1)
    clock.sleep(0.25)
    assert slept == [0.25]


def test_a_fixed_clock_is_the_same_instant_in_utc() -> None:
    clock = FixedClock(datetime(2024, 6, 1, 17, 30, 0, tzinfo=INDIA))
    assert clock.now() == START and clock.now().tzinfo is UTC
    assert clock.monotonic() == START.timestamp() == clock.monotonic()


def test_a_fixed_clock_refuses_to_sleep() -> None:
    with pytest.raises(RuntimeError, match=r"^FixedClock cannot sleep: time does not move$"):
        FixedClock(START).sleep(1)


def test_a_virtual_clock_moves_only_when_advanced() -> None:
    clock = VirtualClock(datetime(2024, 6, 1, 17, 30, 0, tzinfo=INDIA))
    assert clock.now() == START and clock.now().tzinfo is UTC
    assert clock.monotonic() == 0.0
    clock.advance(90.5)
    assert clock.now() == START + timedelta(seconds=90.5)
    assert clock.monotonic() == 90.5
    clock.advance(0)
    assert clock.monotonic() == 90.5


def test_a_virtual_clock_cannot_go_backwards() -> None:
    clock = VirtualClock(START)
    with pytest.raises(ValueError, match=r"^a clock cannot go backwards$"):
        clock.advance(-0.001)
    assert clock.monotonic() == 0.0


class _CountingCondition:
    """Stands in for the clock's condition: each wait is counted and moves time by one second,
    so a sleep's loop runs in the test's own thread, without timing."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.waits = 0

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None

    def wait(self) -> None:
        self.waits += 1
        self.clock._elapsed += 1.0  # the clock's own field, moved as advance() would

    def notify_all(self) -> None:
        return None


@pytest.mark.parametrize(("seconds", "waits"), [(5, 5), (4.5, 5), (0, 0), (-3, 0)])
def test_a_virtual_sleep_waits_until_exactly_its_deadline(seconds: float, waits: int) -> None:
    clock = VirtualClock(START)
    clock.advance(10)  # the deadline counts from now, not from the start
    condition = _CountingCondition(clock)
    clock._cond = condition  # type: ignore[assignment]
    clock.sleep(seconds)
    assert condition.waits == waits


def test_a_virtual_sleeper_wakes_when_another_thread_advances_past_its_deadline() -> None:
    clock = VirtualClock(START)
    woke = threading.Event()

    def sleeper() -> None:
        clock.sleep(30)
        woke.set()

    thread = threading.Thread(target=sleeper, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not woke.is_set() and time.monotonic() < deadline:
        clock.advance(1)  # one second at a time, each waking the sleeper to look
        woke.wait(0.001)
    thread.join(timeout=10)
    assert woke.is_set()
    assert clock.monotonic() >= 30
