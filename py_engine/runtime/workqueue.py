"""A rate-limited work queue keyed by spread (client-go's `workqueue` semantics, trimmed).

Why these rules: a key is never handed to two workers at once (a spread's
status write must not race itself), a key re-added while it is being processed
comes back once that sync is done (the event that arrived mid-sync is not lost),
duplicates collapse (a burst of 500 pod events costs one sync), and failures
back off per key exponentially while an overall token bucket caps the retry
rate. Delayed adds (`add_after`) are how a sync asks to run again at the
earliest expiry it computed.

Time is the injected clock's `monotonic()`, so a `VirtualClock` moves delayed
items without sleeping. Blocking `get` waits on a condition in real time in
short slices, re-reading the clock each time.
"""

from __future__ import annotations

import heapq
import threading
import time
from dataclasses import dataclass

from py_engine.semantics.clock import Clock


@dataclass(frozen=True)
class RateLimit:
    """Per-key exponential back-off (`base * 2^failures`, capped) plus an overall token bucket."""

    base_delay: float = 0.05
    max_delay: float = 60.0
    qps: float = 10.0
    burst: int = 100


class WorkQueue:
    """See the module docstring. Thread-safe."""

    def __init__(self, clock: Clock, rate_limit: RateLimit | None = None, wait_slice: float = 0.1) -> None:
        self.clock = clock
        self.limit = rate_limit or RateLimit()
        self._wait_slice = wait_slice
        self._cond = threading.Condition()
        self._queue: list[str] = []
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._delayed: list[tuple[float, int, str]] = []
        self._delayed_due: dict[str, float] = {}
        self._failures: dict[str, int] = {}
        self._tokens = float(self.limit.burst)
        self._tokens_at = clock.monotonic()
        self._seq = 0
        self._shutdown = False

    # ---------------------------------------------------------------- adding

    def add(self, key: str) -> None:
        """Queue `key` now (a no-op if it is already waiting)."""
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: str) -> None:
        if self._shutdown or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._cond.notify()

    def add_after(self, key: str, seconds: float) -> None:
        """Queue `key` once `seconds` have passed on the clock; an earlier pending time wins."""
        if seconds <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutdown:
                return
            due = self.clock.monotonic() + seconds
            current = self._delayed_due.get(key)
            if current is not None and current <= due:
                return
            self._delayed_due[key] = due
            self._seq += 1
            heapq.heappush(self._delayed, (due, self._seq, key))
            self._cond.notify()

    def add_rate_limited(self, key: str) -> float:
        """Retry `key` after its back-off (and the token bucket); returns the delay used."""
        with self._cond:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
            per_key = float(min(self.limit.base_delay * 2.0**failures, self.limit.max_delay))
            now = self.clock.monotonic()
            self._tokens = min(
                float(self.limit.burst), self._tokens + (now - self._tokens_at) * self.limit.qps
            )
            self._tokens_at = now
            self._tokens -= 1.0
            bucket = 0.0 if self._tokens >= 0 else -self._tokens / self.limit.qps
        delay = max(per_key, bucket)
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        """The key synced cleanly: reset its back-off."""
        with self._cond:
            self._failures.pop(key, None)

    def failures(self, key: str) -> int:
        with self._cond:
            return self._failures.get(key, 0)

    # --------------------------------------------------------------- taking

    def _promote_locked(self) -> None:
        now = self.clock.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            due, _, key = heapq.heappop(self._delayed)
            if self._delayed_due.get(key) == due:
                del self._delayed_due[key]
                self._add_locked(key)

    def get_nowait(self) -> str | None:
        """The next ready key (marked as processing), or None."""
        with self._cond:
            self._promote_locked()
            return self._take_locked()

    def _take_locked(self) -> str | None:
        if not self._queue:
            return None
        key = self._queue.pop(0)
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def get(self, timeout: float) -> str | None:
        """Block up to `timeout` real seconds for a ready key; None on timeout or shutdown."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._shutdown:
                self._promote_locked()
                key = self._take_locked()
                if key is not None:
                    return key
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(min(remaining, self._wait_slice))
            return None

    def done(self, key: str) -> None:
        """Processing of `key` finished; a re-add that came meanwhile is queued now."""
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._cond.notify()

    # ------------------------------------------------------------- inspection

    def next_due(self) -> float | None:
        """The clock time of the earliest delayed key (None when nothing is delayed)."""
        with self._cond:
            return min(self._delayed_due.values()) if self._delayed_due else None

    def depth(self) -> int:
        """Keys waiting to run now (not the delayed ones, not those being processed)."""
        with self._cond:
            self._promote_locked()
            return len(self._queue)

    def delayed(self) -> int:
        with self._cond:
            return len(self._delayed_due)

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    @property
    def is_shutdown(self) -> bool:
        with self._cond:
            return self._shutdown
