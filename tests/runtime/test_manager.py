"""The Manager: any number of controllers over shared watch caches, one leader election driving
all of them (won: every controller's workers start; lost: all stop, `on_lost` is called once and
the loss logged once; won back: all start again), one `/metrics` body, and a stop that joins
every thread and releases the Lease."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from typing import Any

import pytest
import webhook_testkit
from metrics_kit import value
from polling import wait_until
from reconciler_kit import Metrics, Options, Report
from webhook_testkit import KubeEnv

from py_engine.apiclient import LEASES, NODES, PODS, WatchCache
from py_engine.logsetup import record_fields
from py_engine.runtime.cachegroup import CacheGroup, SharedCaches
from py_engine.runtime.leader import LeaderConfig
from py_engine.runtime.manager import Managed, Manager
from py_engine.runtime.reconciler import Reconciler
from py_engine.semantics.clock import VirtualClock
from py_engine.uniteddeployment.controller.runtime.runtime import add_united_controller
from py_engine.uniteddeployment.controller.runtime.source import CachedUnitedSource
from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller
from py_engine.workloadspread.controller.runtime.sources import CachedSource

kube_env = webhook_testkit.kube_env  # the fixture, used by name
pytestmark = pytest.mark.timeout(60)

# Virtual time: a Lease never expires unless a test advances the clock; renewals run every 50 ms.
LEASE = {"lease_duration": 1.0, "renew_deadline": 0.8, "retry_period": 0.05, "namespace": "default"}
LEASE_NAME = "spreadgate-controller"


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
    """Pods plus one resource of its own, through the group's (maybe shared) caches."""

    def __init__(self, env: KubeEnv, shared: SharedCaches | None, *, pods: str, other: Any) -> None:
        super().__init__(env.client, shared=shared)
        self.pod_cache = self.watch(PODS, pods)
        self.other_cache = self.watch(other, f"{pods}-other")

    def caches(self) -> list[WatchCache]:
        return [self.pod_cache, self.other_cache]


def controller(manager: Manager, env: KubeEnv, name: str, other: Any = NODES) -> Managed:
    metrics = Metrics()
    loop = Loop(
        manager.clock, Options(workers=1, resync_seconds=3600.0), metrics, (f"{name}_depth", "Depth.")
    )
    source = Caches(env, manager.caches, pods=f"{name}-pods", other=other)
    return manager.add(Managed(name, source, loop, metrics, (f"{name}_leader", "Leads.")))


@pytest.fixture
def env(kube_env: KubeEnv) -> KubeEnv:
    return kube_env


def clock() -> VirtualClock:
    return VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))


def manager(env: KubeEnv, clk: VirtualClock, identity: str | None, lost: list[str] | None = None) -> Manager:
    leader = LeaderConfig(identity=identity, **LEASE) if identity is not None else None  # type: ignore[arg-type]
    on_lost = (lambda: lost.append(str(identity))) if lost is not None else None
    return Manager(env.client, clock=clk, leader=leader, on_lost=on_lost)


def loops(m: Manager) -> list[Reconciler[Any]]:
    return [c.loop for c in m.controllers]


def synced(controller: Managed) -> float:
    assert isinstance(controller.metrics, Metrics)
    return controller.metrics.syncs.value(result="success")


def holder(env: KubeEnv) -> str:
    return str(env.client.get(LEASES, "default", LEASE_NAME)["spec"]["holderIdentity"])


def steal(env: KubeEnv) -> None:
    lease = env.client.get(LEASES, "default", LEASE_NAME)
    lease["spec"]["holderIdentity"] = "thief"
    env.client.replace(LEASES, "default", LEASE_NAME, lease)


def test_two_controllers_share_one_cache_per_resource(env: KubeEnv) -> None:
    m = manager(env, clock(), None)
    one, two = controller(m, env, "one"), controller(m, env, "two")
    assert isinstance(one.source, Caches) and isinstance(two.source, Caches)
    assert one.source.pod_cache is two.source.pod_cache and one.source.other_cache is two.source.other_cache
    assert len(m.caches.caches()) == 2  # pods and nodes, once each
    m.start(sync_timeout=10)
    try:
        assert m.ready() and one.source.pod_cache.stats.lists == 1  # one list and one watch for both
    finally:
        m.stop()


def test_a_group_without_a_manager_has_caches_of_its_own(env: KubeEnv) -> None:
    shared = SharedCaches(env.client)
    first = Caches(env, shared, pods="a", other=NODES)
    alone = Caches(env, None, pods="b", other=NODES)
    assert (
        first.pod_cache is not alone.pod_cache
        and first.pod_cache is Caches(env, shared, pods="c", other=NODES).pod_cache
    )


def test_without_election_every_controller_runs_at_once_and_stop_joins_every_thread(env: KubeEnv) -> None:
    m = manager(env, clock(), None)
    controller(m, env, "one")
    controller(m, env, "two")
    m.start(sync_timeout=10)
    assert m.is_leading() and m.ready() and all(loop.running for loop in loops(m))
    wait_until(lambda: all("ns/a" in loop.last for loop in loops(m)), 5, "both resyncs to sync the key")
    body = m.render_metrics()
    assert value(body, "one_leader") == 1 and value(body, "two_leader") == 1
    threads = [t for loop in loops(m) for t in loop._threads]
    caches = m.caches.caches()
    m.stop()
    m.stop()  # idempotent
    assert not m.is_leading() and not any(t.is_alive() for t in threads)
    assert not any(cache.running for cache in caches)
    assert value(m.render_metrics(), "one_leader") == 0


def test_one_election_drives_both_controllers_lost_stops_both_won_back_restarts_both(
    env: KubeEnv, caplog: pytest.LogCaptureFixture
) -> None:
    clk = clock()
    lost: list[str] = []
    m = manager(env, clk, "a", lost)
    controller(m, env, "one")
    controller(m, env, "two")
    m.start(sync_timeout=10)
    try:
        wait_until(
            lambda: all(synced(c) == 1 for c in m.controllers), 5, "both controllers to start with the Lease"
        )
        assert m.is_leading() and holder(env) == "a"
        first_queues = [loop.queue for loop in loops(m)]
        with caplog.at_level(logging.INFO):
            steal(env)
            wait_until(lambda: lost == ["a"], 5, "on_lost")
            assert not m.is_leading() and not any(loop.running for loop in loops(m))
            assert all(synced(c) == 1 for c in m.controllers)  # the first term's resync
            assert (
                value(m.render_metrics(), "one_leader") == 0 and value(m.render_metrics(), "two_leader") == 0
            )
            clk.advance(LEASE["lease_duration"] + 0.5)  # the thief does not renew: its Lease expires
            wait_until(lambda: all(loop.running for loop in loops(m)), 5, "both controllers to restart")
        assert m.wait_leading(5) and holder(env) == "a" and lost == ["a"]
        assert all(
            loop.queue is not q and not loop.queue.is_shutdown
            for loop, q in zip(loops(m), first_queues, strict=True)
        )
        wait_until(
            lambda: all(synced(c) == 2 for c in m.controllers), 5, "the restarted workers to sync again"
        )
    finally:
        m.stop()
    losses = [r for r in caplog.records if "lost" in r.getMessage().lower()]
    assert [(r.levelname, r.getMessage()) for r in losses] == [("ERROR", f"lost lease default/{LEASE_NAME}")]
    assert record_fields(losses[0])["cause"] == "taken by thief"
    assert holder(env) == ""  # released on stop
    assert m.elector is not None and m.elector._thread is not None and not m.elector._thread.is_alive()


def test_a_follower_is_warm_and_takes_over_with_all_its_controllers(env: KubeEnv) -> None:
    clk = clock()
    a, b = manager(env, clk, "a"), manager(env, clk, "b")
    for m in (a, b):
        controller(m, env, "one")
        controller(m, env, "two")
    a.start(sync_timeout=10)
    wait_until(lambda: all(loop.running for loop in loops(a)), 5, "a to lead")
    b.start(sync_timeout=10)
    try:
        assert b.ready() and not b.is_leading()  # caches fed while following
        assert not any(loop.running for loop in loops(b))
        a.stop()  # releases the Lease: b need not wait for it to expire
        assert not any(loop.running for loop in loops(a))
        wait_until(lambda: all(loop.running for loop in loops(b)), 5, "b to take over")
        # The loops start before the leading flag is set (both under the Manager's lock).
        assert b.wait_leading(5) and holder(env) == "b"
    finally:
        b.stop()


def test_a_stop_racing_a_won_lease_leaves_nothing_running(env: KubeEnv) -> None:
    """`stop()` while the elector is handing leadership to the controllers: each loop ends stopped."""
    m = manager(env, clock(), "a")
    controller(m, env, "one")
    controller(m, env, "two")
    m.start(sync_timeout=10)
    stopper = threading.Thread(target=m.stop)
    stopper.start()
    stopper.join(30)
    assert not stopper.is_alive()
    assert not m.is_leading() and not any(loop.running for loop in loops(m))


def test_both_products_read_pods_nodes_and_shared_workload_kinds_from_one_cache(env: KubeEnv) -> None:
    m = manager(env, clock(), None)
    spread = add_spread_controller(m)
    united = add_united_controller(m)
    assert isinstance(spread.source, CachedSource) and isinstance(united.source, CachedUnitedSource)
    assert spread.source.pod_cache is united.source.pod_cache
    assert spread.source.node_cache is united.source.node_cache
    for kind in ("Deployment", "StatefulSet"):
        assert spread.source.workload_caches[("apps", kind)] is united.source.workload_caches[("apps", kind)]
    resources = [cache.resource for cache in m.caches.caches()]
    assert len(resources) == len(set(resources))
    assert [c.name for c in m.controllers] == ["workloadspread", "uniteddeployment"]


class Recording(Loop):
    """Notes what `is_leading()` read when the Manager started or stopped it."""

    def __init__(self, m: Manager, name: str, seen: list[tuple[str, str, bool]]) -> None:
        self.metrics = Metrics()
        super().__init__(
            m.clock, Options(workers=1, resync_seconds=3600.0), self.metrics, (f"{name}_d", "D.")
        )
        self.manager, self.name, self.seen = m, name, seen

    def start(self) -> Recording:
        self.seen.append(("start", self.name, self.manager.is_leading()))
        return super().start()

    def stop(self, timeout: float = 10.0) -> None:
        self.seen.append(("stop", self.name, self.manager.is_leading()))
        super().stop(timeout)


def recording(m: Manager, env: KubeEnv, seen: list[tuple[str, str, bool]]) -> None:
    for name in ("one", "two"):
        loop = Recording(m, name, seen)
        source = Caches(env, m.caches, pods=f"{name}-pods", other=NODES)
        m.add(Managed(name, source, loop, loop.metrics, (f"{name}_leader", "Leads.")))


def test_the_leading_flag_is_set_after_the_workers_start_and_cleared_before_they_stop(env: KubeEnv) -> None:
    """`is_leading()` implies the workers run (py_engine/runtime/manager.py): every loop is
    started while the flag still reads False, and stopped after it reads False again, on every
    path: run unelected and `stop()`; win the Lease, lose it, `stop()`."""
    seen: list[tuple[str, str, bool]] = []
    m = manager(env, clock(), None)
    recording(m, env, seen)
    m.start(sync_timeout=10)
    assert m.is_leading() and value(m.render_metrics(), "one_leader") == 1
    m.stop()
    assert seen == [
        ("start", "one", False),
        ("start", "two", False),
        ("stop", "one", False),
        ("stop", "two", False),
    ]

    seen.clear()
    lost: list[str] = []
    elected = manager(env, clock(), "a", lost)
    recording(elected, env, seen)
    elected.start(sync_timeout=10)
    try:
        assert elected.wait_leading(5)
        assert seen == [("start", "one", False), ("start", "two", False)]
        steal(env)
        wait_until(lambda: lost == ["a"], 5, "on_lost")
        assert seen[2:] == [("stop", "one", False), ("stop", "two", False)]
    finally:
        elected.stop()
    assert all(not leading for _, _, leading in seen)
