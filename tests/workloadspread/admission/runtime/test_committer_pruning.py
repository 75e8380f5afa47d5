"""The committer keeps per-spread state only for spreads in use or recently idle.

An in-memory status store and a virtual clock: pruning is a matter of idle time
and of how many idle spreads there are, never of a slot a request still holds.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest
from memory_store import MemoryStore

from py_engine.semantics.clock import VirtualClock
from py_engine.workloadspread.admission.runtime.committer import Committer

pytestmark = pytest.mark.timeout(30)


def count_up(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, int]:
    """A toy reservation: status.count + 1."""
    count = int(obj["status"].get("count") or 0) + 1
    return dict(obj, status={"count": count}), count


def make(n_spreads: int, **kwargs: Any) -> tuple[MemoryStore, VirtualClock, Committer]:
    store = MemoryStore()
    for i in range(n_spreads):
        store.add("default", f"ws-{i}")
    clock = VirtualClock(datetime(2024, 6, 1, tzinfo=UTC))
    # linger=0: a virtual clock never moves by itself, so nothing may sleep on it.
    return store, clock, Committer(store, clock, linger=0.0, seed=1, **kwargs)


def submit(committer: Committer, clock: VirtualClock, name: str) -> int:
    result: int = committer.submit("default", name, count_up, clock.monotonic() + 5)
    return result


def test_idle_spreads_are_forgotten_after_the_idle_ttl() -> None:
    _, clock, committer = make(501, idle_ttl=60.0, max_idle_slots=10_000)
    for i in range(500):
        assert submit(committer, clock, f"ws-{i}") == 1
    assert committer.tracked_spreads() == 500
    clock.advance(30)
    assert submit(committer, clock, "ws-0") == 2
    assert committer.tracked_spreads() == 500  # not idle long enough yet
    clock.advance(31)
    assert submit(committer, clock, "ws-500") == 1
    # ws-1..ws-499 were idle for 61 s; ws-0 (used 31 s ago) and ws-500 stay.
    assert committer.tracked_spreads() == 2


def test_idle_spreads_are_bounded_without_time_passing() -> None:
    _, clock, committer = make(2000, idle_ttl=3600.0, max_idle_slots=100)
    most = 0
    for i in range(2000):
        submit(committer, clock, f"ws-{i}")
        most = max(most, committer.tracked_spreads())
    assert most <= 101
    # A forgotten spread is read again from the store: its count continues.
    assert submit(committer, clock, "ws-0") == 2


def test_a_spread_in_use_is_never_pruned() -> None:
    store, clock, committer = make(3, idle_ttl=60.0, max_idle_slots=1)
    inside, release = threading.Event(), threading.Event()
    results: list[int] = []

    def held_apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, int]:
        inside.set()
        assert release.wait(10)
        return count_up(obj)

    holder = threading.Thread(
        target=lambda: results.append(
            committer.submit("default", "ws-held", held_apply, clock.monotonic() + 60)
        )
    )
    store.add("default", "ws-held")
    holder.start()
    try:
        assert inside.wait(10)
        clock.advance(120)
        for i in range(3):  # each of these prunes: past the ttl and over the idle bound
            submit(committer, clock, f"ws-{i}")
        assert committer.tracked_spreads() == 2  # the held spread and the last idle one
    finally:
        release.set()
        holder.join(10)
    assert results == [1]
    clock.advance(120)
    submit(committer, clock, "ws-0")
    assert committer.tracked_spreads() == 1


def test_a_write_that_lands_after_the_deadline_is_reported_committed() -> None:
    """The deadline passes while the write is on the wire: the reservation was written,
    so the request must be answered with its result, not with CommitTimeout."""
    store, clock, committer = make(1)
    write = store.replace_status

    def slow_write(namespace: str, name: str, obj: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        clock.advance(10)
        return write(namespace, name, obj, timeout=timeout)

    store.replace_status = slow_write  # type: ignore[method-assign]
    assert committer.submit("default", "ws-0", count_up, clock.monotonic() + 5) == 1
    assert store.objects[("default", "ws-0")]["status"] == {"count": 1}
    assert committer.stats.snapshot()["timeouts"] == 0
