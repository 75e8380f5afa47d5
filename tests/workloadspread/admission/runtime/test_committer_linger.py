"""How long a leader lingers for more requests before it writes (issue 28).

One writer lingers `linger` during a burst. Once another writer contends for the spread (a
409 within `contention_window`), it lingers `contended_linger`: each write attempt is a window
in which a peer's write turns it into a 409 and a re-applied batch, so between replicas fewer
and larger attempts halve the conflicts (docs/scale.md, "Contended linger"). A clock that
records every pause and moves by it keeps the test exact and instant.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from memory_store import MemoryStore

from py_engine.workloadspread.admission.runtime.committer import Committer

pytestmark = pytest.mark.timeout(30)


class PauseRecordingClock:
    """A `Clock` whose `sleep` records the pause and moves time by it at once."""

    def __init__(self) -> None:
        self.seconds = 1000.0
        self.pauses: list[float] = []

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.seconds, UTC)

    def monotonic(self) -> float:
        return self.seconds

    def sleep(self, seconds: float) -> None:
        self.pauses.append(round(seconds, 6))
        self.seconds += seconds


def count_up(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, int]:
    """A toy reservation: status.count + 1."""
    count = int(obj["status"].get("count") or 0) + 1
    return dict(obj, status={"count": count}), count


def peer_writes(store: MemoryStore) -> None:
    """Another replica's write: the resourceVersion moves under the committer."""
    current = store.get("default", "ws", timeout=1)
    store.replace_status("default", "ws", dict(current, status={"count": 100}), timeout=1)


def test_a_leader_lingers_longer_while_another_writer_contends_then_goes_back() -> None:
    store, clock = MemoryStore(), PauseRecordingClock()
    store.add("default", "ws")
    committer = Committer(
        store, clock, linger=0.01, contended_linger=0.03, contention_window=1.0, conflict_backoff=0.0
    )

    def submit() -> int:
        result: int = committer.submit("default", "ws", count_up, clock.monotonic() + 8)
        return result

    assert submit() == 1 and clock.pauses == []  # no burst yet: nothing to wait for
    assert submit() == 2 and clock.pauses == [0.01]  # a commit 0 s ago: a burst, one writer
    peer_writes(store)
    assert submit() == 101 and clock.pauses == [0.01, 0.01]  # lingered as one writer, then a 409
    assert committer.stats.conflicts == 1
    assert submit() == 102 and clock.pauses == [0.01, 0.01, 0.03]  # contended: the longer linger
    clock.seconds += 1.0  # the contention window has passed since the 409; no commit for 1 s
    assert submit() == 103 and clock.pauses == [0.01, 0.01, 0.03]  # not a burst any more
    assert submit() == 104 and clock.pauses == [0.01, 0.01, 0.03, 0.01]  # one writer again


def after_a_conflict(linger: float) -> tuple[Committer, PauseRecordingClock]:
    """A committer (`contended_linger` 30 ms) that has written once and then met a peer's write."""
    store, clock = MemoryStore(), PauseRecordingClock()
    store.add("default", "ws")
    committer = Committer(store, clock, linger=linger, contended_linger=0.03, conflict_backoff=0.0)
    committer.submit("default", "ws", count_up, clock.monotonic() + 8)
    peer_writes(store)
    return committer, clock


def test_the_linger_never_takes_more_than_a_quarter_of_the_earliest_deadline() -> None:
    committer, clock = after_a_conflict(linger=0.01)
    committer.submit("default", "ws", count_up, clock.monotonic() + 8)
    committer.submit("default", "ws", count_up, clock.monotonic() + 0.08)
    assert clock.pauses == [0.01, 0.02]  # contended, but 0.08 s left: a quarter of it


def test_no_linger_turns_the_contended_linger_off_too() -> None:
    committer, clock = after_a_conflict(linger=0.0)
    for _ in range(3):
        committer.submit("default", "ws", count_up, clock.monotonic() + 8)
    assert committer.stats.conflicts == 1 and clock.pauses == []
