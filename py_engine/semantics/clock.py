"""The injectable clock.

Every decision in Spreadgate is a function of (objects, now). Code never calls
`datetime.now()` itself; it asks a `Clock`, so tests, the simulator and the
offline CLI commands control time, and a production process uses `RealClock`.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Source of the current time and of (possibly virtual) waiting."""

    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale, for deadlines and durations."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` on this clock's scale."""
        ...


class RealClock:
    """Wall-clock time; the default everywhere outside tests and simulation."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FixedClock:
    """A clock frozen at one instant: offline commands (`--now`) and pure tests."""

    def __init__(self, moment: datetime) -> None:
        self._moment = moment.astimezone(UTC)

    def now(self) -> datetime:
        return self._moment

    def monotonic(self) -> float:
        return self._moment.timestamp()

    def sleep(self, seconds: float) -> None:
        raise RuntimeError("FixedClock cannot sleep: time does not move")


class VirtualClock:
    """Time that moves only when told to, for deterministic simulation.

    `sleep` blocks the calling thread until another thread `advance`s the clock
    far enough, so background loops written against `Clock` run unchanged in
    virtual time.
    """

    def __init__(self, start: datetime) -> None:
        self._start = start.astimezone(UTC)
        self._elapsed = 0.0
        self._cond = threading.Condition()

    def now(self) -> datetime:
        with self._cond:
            return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        with self._cond:
            return self._elapsed

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose deadline has passed."""
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        with self._cond:
            self._elapsed += seconds
            self._cond.notify_all()

    def sleep(self, seconds: float) -> None:
        with self._cond:
            deadline = self._elapsed + max(seconds, 0.0)
            while self._elapsed < deadline:
                self._cond.wait()
