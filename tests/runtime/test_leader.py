"""Lease leader election: acquire, hold, take over an expired lease, lose it, release it."""

from __future__ import annotations

from datetime import UTC, datetime

import webhook_testkit
from metrics_kit import value
from polling import wait_until
from webhook_testkit import KubeEnv

from py_engine.apiclient import LEASES
from py_engine.runtime.leader import LeaderConfig, LeaderElector
from py_engine.runtime.manager import Manager
from py_engine.semantics.clock import RealClock, VirtualClock
from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller

FAST = {"lease_duration": 1.0, "renew_deadline": 0.8, "retry_period": 0.05, "namespace": "default"}
# On the real clock the lease must outlast a renewal on a loaded machine (a renewal that
# misses its deadline loses leadership); these tests never wait for an expiry.
REAL_TIME = {"lease_duration": 5.0, "renew_deadline": 4.0, "retry_period": 0.05, "namespace": "default"}

kube_env = webhook_testkit.kube_env  # the fixture, used by name


def elector(env: KubeEnv, identity: str, clock: object, calls: list[str] | None = None) -> LeaderElector:
    log = calls if calls is not None else []
    timing = REAL_TIME if isinstance(clock, RealClock) else FAST
    return LeaderElector(
        env.client,
        clock,
        LeaderConfig(identity=identity, **timing),  # type: ignore[arg-type]
        lambda: log.append(f"{identity} started"),
        lambda: log.append(f"{identity} stopped"),
    )


def steal(env: KubeEnv, thief: str = "thief") -> None:
    lease = env.client.get(LEASES, "default", "spreadgate-controller")
    lease["spec"]["holderIdentity"] = thief
    env.client.replace(LEASES, "default", "spreadgate-controller", lease)


def test_second_candidate_waits_until_the_lease_expires_then_takes_over(kube_env: KubeEnv) -> None:
    clock = VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))
    a, b = elector(kube_env, "a", clock), elector(kube_env, "b", clock)
    assert a.try_acquire_or_renew() is True
    assert b.try_acquire_or_renew() is False
    clock.advance(0.5)
    assert a.try_acquire_or_renew() is True  # renewal changes the record: b's observation restarts
    assert b.try_acquire_or_renew() is False
    clock.advance(0.9)
    assert b.try_acquire_or_renew() is False  # 0.9 s since b saw the renewal: still valid
    clock.advance(0.2)
    assert b.try_acquire_or_renew() is True
    spec = kube_env.client.get(LEASES, "default", "spreadgate-controller")["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert a.try_acquire_or_renew() is False


def test_losing_the_lease_calls_on_stopped_and_a_clean_stop_releases_it(kube_env: KubeEnv) -> None:
    calls: list[str] = []
    a = elector(kube_env, "a", RealClock(), calls).start()
    try:
        wait_until(a.leading.is_set, 5, "a to lead")
        steal(kube_env)
        wait_until(lambda: calls == ["a started", "a stopped"], 5, "a to notice the stolen lease")
        assert a.lost.is_set() and not a.leading.is_set()
    finally:
        a.stop()
    kube_env.client.delete(LEASES, "default", "spreadgate-controller")
    b = elector(kube_env, "b", RealClock(), calls).start()
    wait_until(b.leading.is_set, 5, "b to lead")
    b.stop()
    assert kube_env.client.get(LEASES, "default", "spreadgate-controller")["spec"]["holderIdentity"] == ""
    assert calls[-1] == "b started"


def test_the_spread_controller_stops_its_workers_when_leadership_is_lost(kube_env: KubeEnv) -> None:
    lost: list[bool] = []
    manager = Manager(
        kube_env.client,
        leader=LeaderConfig(identity="me", **REAL_TIME),  # type: ignore[arg-type]
        on_lost=lambda: lost.append(True),
        watch_timeout_seconds=30,
    )
    controller = add_spread_controller(manager)
    manager.start(sync_timeout=10)
    try:
        assert manager.wait_leading(5) and controller.running and manager.is_leading()
        assert value(manager.render_metrics(), "leader_election_master_status") == 1
        steal(kube_env)
        wait_until(lambda: lost == [True], 5, "on_lost")
        wait_until(lambda: not controller.running, 5, "the workers to stop")
        assert value(manager.render_metrics(), "leader_election_master_status") == 0
    finally:
        manager.stop()
