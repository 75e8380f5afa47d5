"""Leader election with a `coordination.k8s.io/v1` Lease (client-go's algorithm, dict-speaking).

Why not `kubernetes.leaderelection`: its `LeaseLock` goes through the generated
pydantic models and `time.sleep` loops, cannot be stopped from outside, and —
a known pitfall of that client — keeps the leader's work running after
leadership is lost. Here `on_stopped` is called as soon as a renewal has failed
for `renew_deadline` seconds (or another holder is seen), and the CLI's
`on_stopped` exits the process (client-go's "ReleaseOnCancel + exit" pattern:
the Deployment restarts it as a follower); with `rejoin` the elector instead campaigns
again and calls `on_started` when it wins the Lease back (the `Manager` restarts its
controllers then). A clean `stop()` releases the lease (empty holder) so a successor
need not wait for it to expire.

Defaults are controller-runtime's: lease 15 s, renew deadline 10 s, retry 2 s.
Expiry is judged by local observation time, as client-go does: a lease is free
once its record has not changed for `lease_duration` seconds of our clock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from py_engine.apiclient import LEASES, Conflict, KubeClient, KubeError, NotFound
from py_engine.logsetup import fields
from py_engine.semantics.clock import Clock
from py_engine.semantics.timeutil import format_micro_time

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaderConfig:
    name: str = "spreadgate-controller"
    namespace: str = "spreadgate-system"
    identity: str = "spreadgate-controller"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaderElector:
    """Acquire, renew and release one Lease; see the module docstring."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        config: LeaderConfig,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
        *,
        rejoin: bool = False,
    ) -> None:
        self.client, self.clock, self.config = client, clock, config
        self.on_started, self.on_stopped = on_started, on_stopped
        self.rejoin = rejoin
        self._observed: Any = None
        self._observed_at = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.leading = threading.Event()
        self.lost = threading.Event()

    # ------------------------------------------------------------- one try

    def _record(self, lease: dict[str, Any]) -> Any:
        spec = lease.get("spec") or {}
        return (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"))

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards."""
        cfg = self.config
        now = format_micro_time(self.clock.now())
        try:
            lease = self.client.get(LEASES, cfg.namespace, cfg.name)
        except NotFound:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": {
                    "holderIdentity": cfg.identity,
                    "leaseDurationSeconds": int(cfg.lease_duration),
                    "acquireTime": now,
                    "renewTime": now,
                    "leaseTransitions": 0,
                },
            }
            try:
                self.client.create(LEASES, cfg.namespace, body)
            except KubeError as exc:
                log.info("lease %s/%s: create failed: %s", cfg.namespace, cfg.name, exc)
                return False
            self._observe(body)
            return True
        except KubeError as exc:
            log.warning("lease %s/%s: get failed: %s", cfg.namespace, cfg.name, exc)
            return False
        record = self._record(lease)
        if record != self._observed:
            self._observe(lease)
        spec = dict(lease.get("spec") or {})
        holder = spec.get("holderIdentity") or ""
        expired = self.clock.monotonic() >= self._observed_at + cfg.lease_duration
        if holder and holder != cfg.identity and not expired:
            return False
        if holder != cfg.identity:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        spec.update(holderIdentity=cfg.identity, renewTime=now, leaseDurationSeconds=int(cfg.lease_duration))
        lease = dict(lease)
        lease["spec"] = spec
        try:
            updated = self.client.replace(LEASES, cfg.namespace, cfg.name, lease)
        except (Conflict, KubeError) as exc:
            log.info("lease %s/%s: update failed: %s", cfg.namespace, cfg.name, exc)
            return False
        self._observe(updated)
        return True

    def _observe(self, lease: dict[str, Any]) -> None:
        self._observed = self._record(lease)
        self._observed_at = self.clock.monotonic()

    def holder(self) -> str | None:
        try:
            lease = self.client.get(LEASES, self.config.namespace, self.config.name)
        except KubeError:
            return None
        return (lease.get("spec") or {}).get("holderIdentity") or None

    # ---------------------------------------------------------------- loop

    def run(self) -> None:
        """Block: acquire, call `on_started`, renew until lost (`on_stopped`) or `stop()`; with
        `rejoin`, campaign again after a loss (`on_started` once more when it is won back)."""
        while self._lead_once() and self.rejoin:
            pass

    def _lead_once(self) -> bool:
        """One term: acquire, lead, renew; True when it ended by a loss (not by `stop()`)."""
        while not self._stop.is_set():
            if self.try_acquire_or_renew():
                break
            self._stop.wait(self.config.retry_period)
        if self._stop.is_set():
            return False
        self.lost.clear()
        self.leading.set()
        log.info(
            "acquired lease %s/%s as %s",
            self.config.namespace,
            self.config.name,
            self.config.identity,
            extra=fields(lease=self._lease_name(), identity=self.config.identity),
        )
        self.on_started()
        last_renew = self.clock.monotonic()
        while not self._stop.wait(self.config.retry_period):
            if self.try_acquire_or_renew():
                last_renew = self.clock.monotonic()
                continue
            taken = self._observed is not None and self._observed[0] not in ("", None, self.config.identity)
            if taken or self.clock.monotonic() - last_renew >= self.config.renew_deadline:
                self.leading.clear()
                self.lost.set()
                # The one record of the loss: `on_stopped` (the CLI exits) does not log it again.
                cause = (
                    f"taken by {self._observed[0]}"
                    if taken
                    else f"not renewed for {self.config.renew_deadline:g}s"
                )
                log.error(
                    "lost lease %s/%s",
                    self.config.namespace,
                    self.config.name,
                    extra=fields(lease=self._lease_name(), identity=self.config.identity, cause=cause),
                )
                self.on_stopped()
                return True
        self.release()
        return False

    def _lease_name(self) -> str:
        return f"{self.config.namespace}/{self.config.name}"

    def release(self) -> None:
        """Give the lease up (empty holder) if we hold it."""
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = self.client.get(LEASES, self.config.namespace, self.config.name)
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.config.identity:
                return
            spec.update(holderIdentity="", leaseDurationSeconds=1)
            lease = dict(lease)
            lease["spec"] = spec
            self.client.replace(LEASES, self.config.namespace, self.config.name, lease)
        except KubeError as exc:
            log.warning("lease release failed: %s", exc)

    def start(self) -> LeaderElector:
        self._thread = threading.Thread(target=self.run, daemon=True, name="leader-election")
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
