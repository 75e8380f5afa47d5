"""What `/readyz` answers: can this replica decide admissions right now?

Two conditions, both required (docs/operations.md, "Readiness"):

* the watch caches have loaded their first lists (a replica that counts from
  an empty cache would admit over the caps);
* the configured policy engine can answer. For an OPA server that is a cheap
  `GET /health` with a short timeout; its answer is kept for `ttl` seconds so
  kubelet probes (and several of them, from several replicas) never hammer
  the sidecar. For the embedded engine it is "the policies loaded", which the
  engine checks when it is built. An engine without a `health` method (a test
  double) counts as healthy.

`/healthz` is liveness only and never consults this.

A change of state is logged once: the first failure (and a change of reason)
at warning with the reason, the recovery at info, so a probe every few
seconds during an outage does not repeat the same line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from py_engine.logsetup import fields

log = logging.getLogger(__name__)

DEFAULT_TTL = 5.0
DEFAULT_TIMEOUT = 0.5


@runtime_checkable
class HealthReporting(Protocol):
    """A policy engine that can say whether it answers (`None`) or why not."""

    def health(self, timeout: float) -> str | None:
        """None when the engine can evaluate now, else a one-line reason."""
        ...


class PolicyHealth:
    """The engine's `health` answer, asked at most once per `ttl` seconds (one probe at a time)."""

    def __init__(
        self,
        engine: object,
        *,
        ttl: float = DEFAULT_TTL,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine if isinstance(engine, HealthReporting) else None
        self.ttl, self.timeout, self.clock = ttl, timeout, clock
        self.probes = 0
        self._lock = threading.Lock()
        self._expires = float("-inf")
        self._problem: str | None = None

    def problem(self) -> str | None:
        if self.engine is None:
            return None
        with self._lock:
            if self.clock() >= self._expires:
                self.probes += 1
                try:
                    self._problem = self.engine.health(self.timeout)
                except Exception as exc:  # a health check that crashes is a failed health check
                    self._problem = f"policy engine health check failed: {type(exc).__name__}: {exc}"
                self._expires = self.clock() + self.ttl
            return self._problem


class Readiness:
    """`problem()`: None when ready, else the reason `/readyz` reports (see the module docstring)."""

    def __init__(
        self,
        caches_synced: Callable[[], bool],
        engine: object | None = None,
        *,
        ttl: float = DEFAULT_TTL,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.caches_synced = caches_synced
        self.policy = PolicyHealth(engine, ttl=ttl, timeout=timeout, clock=clock)
        self._lock = threading.Lock()
        self._last: str | None = None
        self._reported = False

    def problem(self) -> str | None:
        reasons = []
        if not self.caches_synced():
            reasons.append("watch caches not synced")
        policy = self.policy.problem()
        if policy is not None:
            reasons.append(f"policy engine unreachable: {policy}")
        reason = "; ".join(reasons) or None
        self._report(reason)
        return reason

    def _report(self, reason: str | None) -> None:
        with self._lock:
            changed = reason != self._last or not self._reported
            previous, self._last, self._reported = self._last, reason, True
        if not changed:
            return
        if reason is not None:
            log.warning("not ready", extra=fields(reason=reason))
        elif previous is not None:
            log.info("ready: watch caches synced and policy engine answering")
