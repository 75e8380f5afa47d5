"""The stepped Manager (py_engine/runtime/stepped.py): what the virtual-time stack runs its
controllers with. Each step refreshes a controller's listed source, then runs one pass of it,
controller by controller in the order added; it reports the writes and the earliest requeue;
no election (leading from start to stop); stop is idempotent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import reconciler_kit
import webhook_testkit
from metrics_kit import value
from reconciler_kit import Metrics, Options
from united_kit import UDS, pools, term, united
from webhook_testkit import KubeEnv

from py_engine.apiclient import PODS, WatchCache
from py_engine.assembled_stack import Stack
from py_engine.resources import UNITEDDEPLOYMENT_CRD, read_yaml
from py_engine.runtime.cachegroup import CacheGroup
from py_engine.runtime.listing import ListedLists
from py_engine.runtime.manager import Managed, Manager
from py_engine.runtime.reconciler import REQUEUE_SLACK, Reconciler
from py_engine.runtime.stepped import SteppedManager
from py_engine.semantics.clock import VirtualClock
from py_engine.uniteddeployment.controller.runtime.runtime import add_united_controller
from py_engine.uniteddeployment.controller.runtime.source import ListedUnitedSource
from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller
from py_engine.workloadspread.controller.runtime.sources import ListedSource

kube_env = webhook_testkit.kube_env  # the fixture, used by name
pytestmark = pytest.mark.timeout(60)


class Client:
    """Stands in for the KubeClient: the fakes below list nothing through it."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


@dataclass(frozen=True)
class Writes:
    total: int


@dataclass
class Report(reconciler_kit.Report):
    writes: Writes = field(default_factory=lambda: Writes(0))


class Listed(ListedLists):
    """A listed source whose keys are what the cluster held at its last `refresh()`."""

    def __init__(self, client: Client, name: str, cluster: list[str], journal: list[tuple[str, ...]]) -> None:
        super().__init__(client)  # type: ignore[arg-type]
        self.name, self.cluster, self.journal = name, cluster, journal
        self.listed: list[str] = []

    def refresh(self) -> None:
        self.journal.append(("refresh", self.name))
        self.listed = list(self.cluster)


class Loop(Reconciler[Report]):
    """Syncs the keys its source listed; each sync makes `writes` writes and asks for `requeue`."""

    def __init__(self, clock: VirtualClock, source: Listed, writes: int, requeue: float | None) -> None:
        self.metrics = Metrics()
        super().__init__(clock, Options(workers=1), self.metrics, (f"{source.name}_depth", "Keys waiting."))
        self.source, self.writes, self.requeue = source, writes, requeue
        self.stops = 0

    def keys(self) -> list[str]:
        return list(self.source.listed)

    def key_fields(self, key: str) -> dict[str, Any]:
        return {"thing": key}

    def sync(self, key: str) -> Report:
        self.source.journal.append(("sync", self.source.name, key))
        return Report(key, "synced", requeue_after=self.requeue, writes=Writes(self.writes))

    def failed_report(self, key: str, outcome: str, error: str) -> Report:
        return Report(key, outcome, error=error)

    def stop(self, timeout: float = 10.0) -> None:
        self.stops += 1
        super().stop(timeout)


def clock() -> VirtualClock:
    return VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))


def add(
    m: SteppedManager,
    name: str,
    keys: list[str],
    journal: list[tuple[str, ...]],
    *,
    writes: int = 0,
    requeue: float | None = None,
) -> Loop:
    assert isinstance(m.clock, VirtualClock)
    source = Listed(m.client, name, keys, journal)  # type: ignore[arg-type]
    loop = Loop(m.clock, source, writes, requeue)
    m.add(Managed(name, source, loop, loop.metrics, (f"{name}_leader", "Leads.")))
    return loop


def stepped(client: Client | None = None, *, owns_client: bool = False) -> SteppedManager:
    return SteppedManager(client or Client(), clock=clock(), owns_client=owns_client)  # type: ignore[arg-type]


def test_each_step_refreshes_a_controllers_source_then_runs_it_once_controller_by_controller() -> None:
    journal: list[tuple[str, ...]] = []
    m = stepped()
    add(m, "one", ["ns/a", "ns/b"], journal)
    two_cluster = ["ns/c"]
    add(m, "two", two_cluster, journal)
    m.start()
    m.step()
    one_pass = [
        ("refresh", "one"),
        ("sync", "one", "ns/a"),
        ("sync", "one", "ns/b"),
        ("refresh", "two"),
        ("sync", "two", "ns/c"),
    ]
    assert journal == one_pass
    two_cluster.append("ns/d")  # what the next refresh lists, and so what the next pass syncs
    m.step()
    assert journal == [
        *one_pass,
        *one_pass[:3],
        ("refresh", "two"),
        ("sync", "two", "ns/c"),
        ("sync", "two", "ns/d"),
    ]


def test_a_step_returns_the_api_writes_of_every_controller() -> None:
    m = stepped()
    add(m, "one", ["ns/a", "ns/b"], [], writes=2)
    add(m, "two", ["ns/c"], [], writes=3)
    add(m, "quiet", ["ns/e"], [], writes=0)
    m.start()
    assert m.step() == 2 * 2 + 3


def test_next_deadline_is_the_earliest_requeue_over_every_controller() -> None:
    m = stepped()
    add(m, "late", ["ns/a"], [], requeue=30.0)
    add(m, "soon", ["ns/b"], [], requeue=5.0)
    add(m, "never", ["ns/c"], [])
    m.start()
    assert m.next_deadline() is None  # nothing pending before the first pass
    now = m.clock.monotonic()
    m.step()
    assert m.next_deadline() == pytest.approx(now + 5.0 + REQUEUE_SLACK)


def test_it_runs_unelected_from_start_to_stop_and_stop_is_idempotent() -> None:
    client = Client()
    m = stepped(client, owns_client=True)
    loops = [add(m, "one", ["ns/a"], []), add(m, "two", ["ns/b"], [])]
    assert not m.is_leading() and value(m.render_metrics(), "one_leader") == 0
    with pytest.raises(RuntimeError):
        m.step()  # not started
    m.start()
    assert m.is_leading() and value(m.render_metrics(), "two_leader") == 1  # no election in steps
    m.step()
    m.stop()
    m.stop()
    assert [loop.stops for loop in loops] == [1, 1] and client.closed == 1
    assert not m.is_leading() and value(m.render_metrics(), "one_leader") == 0
    with pytest.raises(RuntimeError):
        m.step()


def test_a_client_the_manager_does_not_own_stays_open() -> None:
    client = Client()
    m = stepped(client)
    m.start()
    m.stop()
    assert client.closed == 0


class Caches(CacheGroup):
    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.pod_cache = self.watch(PODS, "pods")

    def caches(self) -> list[WatchCache]:
        return [self.pod_cache]


def test_each_manager_takes_only_the_sources_it_runs() -> None:
    journal: list[tuple[str, ...]] = []
    m = stepped()
    source = Listed(m.client, "listed", [], journal)  # type: ignore[arg-type]
    loop = Loop(clock(), source, 0, None)
    watched = Managed("watched", Caches(m.client), loop, loop.metrics, ("w_leader", "Leads."))
    with pytest.raises(TypeError, match="SteppedManager runs controllers over a ListedLists"):
        m.add(watched)
    threaded = Manager(Client(), clock=clock())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Manager runs controllers over a CacheGroup"):
        threaded.add(Managed("listed", source, loop, loop.metrics, ("l_leader", "Leads.")))
    assert m.controllers == [] and threaded.controllers == []


def test_both_products_added_to_a_stepped_manager_read_listed_sources(kube_env: KubeEnv) -> None:
    kube_env.api.create(
        "apiextensions.k8s.io/v1/customresourcedefinitions", None, read_yaml(UNITEDDEPLOYMENT_CRD)
    )
    m = SteppedManager(kube_env.client, clock=clock(), namespace="default")
    spread = add_spread_controller(m)
    united = add_united_controller(m)
    assert isinstance(spread.source, ListedSource) and isinstance(united.source, ListedUnitedSource)
    assert spread.source.namespace == "default" and united.source.namespace == "default"
    assert [c.name for c in m.controllers] == ["workloadspread", "uniteddeployment"]
    with m:
        assert m.step() == 0 and m.next_deadline() is None  # nothing to reconcile
    assert kube_env.client is m.client  # not owned: the fixture closes it


def test_the_virtual_stack_composes_its_controllers_on_a_stepped_manager(tmp_path: Path) -> None:
    """`Stack(virtual=True)` adds both controllers to a SteppedManager through the products'
    entry points and steps them through it (py_engine/assembled_stack.py, `start_controller`)."""
    with Stack(pools("a", "b"), workdir=tmp_path) as stack:
        m = stack.manager
        assert isinstance(m, SteppedManager) and m.is_leading()
        assert [c.name for c in m.controllers] == ["workloadspread", "uniteddeployment"]
        assert [c.loop for c in m.controllers] == [stack.controller, stack.united_controller]
        assert isinstance(stack.source, ListedSource) and isinstance(stack.united_source, ListedUnitedSource)
        stack.create(
            UDS,
            united(
                "web",
                2,
                [{"name": "a", "nodeSelectorTerm": term("a")}, {"name": "b", "nodeSelectorTerm": term("b")}],
            ),
        )
        assert stack.controller_step() > 0  # the UnitedDeployment's first pass writes its workloads
        assert stack.united_controller is not None and "default/web" in stack.united_controller.last
        stack.stop_controller()
        assert not m.is_leading() and stack.manager is None and stack.controller_step() == 0
