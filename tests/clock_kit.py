"""A clock a test moves by hand: a `Callable[[], float]` (the monotonic-seconds reader the token
refresh throttle and the author gate take) that returns `now`, starting at 100.0."""

from __future__ import annotations


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now
