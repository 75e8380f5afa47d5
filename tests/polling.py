"""The one way tests wait: poll a condition with a deadline (never a sleep as synchronisation)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(cond: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll `cond` until it is truthy (and return that value) or fail when `timeout` passes.

    Between polls it waits at least as long as the poll itself took, so an expensive check
    (listing a thousand pods, running kubectl) never takes more than half the CPU from what it
    waits for.
    """
    deadline = time.monotonic() + timeout
    while True:
        started = time.monotonic()
        value = cond()
        if value:
            return value
        now = time.monotonic()
        if now > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(max(0.005, now - started))
