"""The shared runtime assembly: caches fed from start, workers only with leadership, one log
record of a lost Lease, and a stop that joins every thread."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
import webhook_testkit
from reconciler_kit import Metrics, Options, Report
from webhook_testkit import KubeEnv, wait_until

from py_engine.apiclient import LEASES, KubeClient, WatchCache
from py_engine.logsetup import record_fields
from py_engine.runtime.assembly import LoopRuntime
from py_engine.runtime.cachegroup import CacheGroup
from py_engine.runtime.leader import LeaderConfig
from py_engine.runtime.reconciler import Reconciler
from py_engine.semantics.clock import VirtualClock

kube_env = webhook_testkit.kube_env  # the fixture, used by name

# Virtual time: a Lease never expires unless a test advances the clock; renewals run every 50 ms.
LEASE = {"lease_duration": 1.0, "renew_deadline": 0.8, "retry_period": 0.05, "namespace": "default"}


class Loop(Reconciler[Report]):
    def keys(self) -> list[str]:
        return ["ns/a"]

    def key_fields(self, key: str) -> dict[str, Any]:
        return {"thing": key}

    def sync(self, key: str) -> Report:
        return Report(key, "synced")

    def failed_report(self, key: str, outcome: str, error: str) -> Report:
        return Report(key, outcome, error=error)


class Caches(CacheGroup):
    """No watch of its own: records what the runtime asked of it."""

    def __init__(self, client: KubeClient) -> None:
        super().__init__(client)
        self.calls: list[str] = []

    def caches(self) -> list[WatchCache]:
        return []

    def start(self) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")

    def wait_synced(self, timeout: float) -> bool:
        self.calls.append("wait_synced")
        return True


def runtime(env: KubeEnv, clock: VirtualClock, identity: str | None = None,
            lost: list[str] | None = None) -> LoopRuntime[Caches, Loop]:
    metrics = Metrics()
    leader = LeaderConfig(identity=identity, **LEASE) if identity is not None else None  # type: ignore[arg-type]
    on_lost = (lambda: lost.append(str(identity))) if lost is not None else None
    return LoopRuntime(env.client, clock, Caches(env.client), Loop(clock, Options(workers=1, resync_seconds=3600.0), metrics, ("t_depth", "Depth.")),
                       metrics, leader=leader, on_lost=on_lost, owns_client=False, leader_gauge=("t_leader", "Leads."))


def clock() -> VirtualClock:
    return VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))


def test_caches_run_from_start_and_workers_only_once_leadership_is_won(kube_env: KubeEnv) -> None:
    rt = runtime(kube_env, clock())
    rt.start(lead=False)
    assert rt.source.calls == ["start", "wait_synced"]
    assert not rt.controller.running and not rt.is_leading()
    rt.lead()
    assert rt.controller.running and rt.is_leading() and rt.wait_started(0)
    wait_until(lambda: "ns/a" in rt.controller.last, 5, "the resync to sync the key")
    threads = list(rt.controller._threads)
    rt.stop()
    assert rt.source.calls[-1] == "stop" and not any(t.is_alive() for t in threads)


def test_a_follower_is_warm_and_takes_over_when_the_leader_releases_the_lease(kube_env: KubeEnv) -> None:
    c = clock()
    a, b = runtime(kube_env, c, "a"), runtime(kube_env, c, "b")
    a.start()
    wait_until(lambda: a.controller.running, 5, "a to lead")
    b.start()
    assert b.source.calls == ["start", "wait_synced"]  # caches fed while following
    assert not b.controller.running and not b.is_leading()
    a.stop()  # releases the Lease: b need not wait for it to expire
    assert not a.controller.running and a.elector is not None and not a.elector.leading.is_set()
    try:
        wait_until(lambda: b.controller.running, 5, "b to take over")
        assert b.is_leading()
    finally:
        b.stop()
    assert b.elector is not None and b.elector._thread is not None and not b.elector._thread.is_alive()


def test_losing_the_lease_stops_the_workers_calls_on_lost_and_is_logged_once(
        kube_env: KubeEnv, caplog: pytest.LogCaptureFixture) -> None:
    lost: list[str] = []
    rt = runtime(kube_env, clock(), "a", lost)
    rt.start()
    try:
        wait_until(lambda: rt.controller.running, 5, "a to lead")
        lease = kube_env.client.get(LEASES, "default", "spreadgate-controller")
        lease["spec"]["holderIdentity"] = "thief"
        with caplog.at_level(logging.INFO):
            kube_env.client.replace(LEASES, "default", "spreadgate-controller", lease)
            wait_until(lambda: lost == ["a"], 5, "on_lost")
        assert not rt.controller.running and not rt.is_leading()
    finally:
        rt.stop()
    losses = [r for r in caplog.records if "lost" in r.getMessage().lower()]
    assert [(r.levelname, r.getMessage()) for r in losses] == [("ERROR", "lost lease default/spreadgate-controller")]
    assert record_fields(losses[0])["cause"] == "taken by thief"
