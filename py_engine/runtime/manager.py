"""The Manager: any number of controllers over one client, one set of watch caches, one
leader election and one `/metrics` body (controller-runtime's Manager, trimmed).

`spreadgate controller` and the embedded stack (`py_engine.assembled_stack`) build one,
let each product add its controller (`add_spread_controller`, `add_united_controller`:
they build a `CacheGroup` over `manager.caches`, a `Reconciler`, its triggers and its
metrics, and hand them over as a `Managed`), then `start()` it. The virtual-time stack
builds its stepped sibling, `py_engine.runtime.stepped.SteppedManager`, through the same
two entry points (listed sources instead of watch caches, no threads, no election); what
both share is `BaseManager`. The order is the Manager's, for every controller alike:

* caches are fed from `start()` on, whether or not this process leads, so a follower is
  warm when it takes over; a resource two controllers read (pods, nodes, Deployments...)
  is listed and watched once (`SharedCaches`). `start` waits (bounded) for the first lists
  and warns, with the timeout as a field, when they are late;
* workers start only with leadership: at once without election, else when the one
  `LeaderElector` calls `on_started`; losing the Lease stops every controller's workers
  (the elector logs the loss, once) and calls `on_lost` (the CLI exits, so the Deployment
  restarts it as a follower). The elector keeps campaigning (`rejoin`): should the Lease be
  won back before the process ends, every controller starts again, on a fresh queue;
* **`is_leading()` implies the workers are running**: on winning, every controller's
  workers start first and the leading flag is set after them; on losing (or `stop()`), the
  flag is cleared first and the workers stop after it, both under the Manager's lock. So
  the leader gauge (1 while `is_leading()`) never reads 1 while no worker runs; it may
  read 0 for the moment workers are starting or stopping. tests/runtime/test_manager.py
  (`test_the_leading_flag_is_set_after_the_workers_start_and_cleared_before_they_stop`)
  pins the order; setting the flag before the starts once made the leader tests flaky;
* `ready()` is true once every cache has its first list (a follower is ready: it can take
  over at once); `is_leading()` says whether the workers may run;
* `stop()` releases the Lease, joins every worker and timer and every cache's watch, and
  closes the client when the Manager owns it. Leadership changes and `stop()` are
  serialised, so a loss racing a shutdown stops each controller once.

Leadership is pushed by the elector's callbacks; nothing polls it.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypedDict, Unpack

from py_engine.apiclient import KubeClient
from py_engine.logsetup import fields
from py_engine.runtime.cachegroup import CacheGroup, SharedCaches
from py_engine.runtime.leader import LeaderConfig, LeaderElector
from py_engine.runtime.listing import ListedLists
from py_engine.runtime.reconciler import Reconciler
from py_engine.semantics.clock import Clock, RealClock

log = logging.getLogger(__name__)


class MetricSet(Protocol):
    """What the Manager needs of a controller's metrics: the loop's, and its part of `/metrics`."""

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None: ...

    def render(self) -> str: ...


@dataclass(frozen=True)
class Managed:
    """One controller as a Manager runs it. `source` is what its syncs read: watch caches
    (`CacheGroup`) under a `Manager`, lists taken at each step (`ListedLists`) under a
    `SteppedManager`. `leader_gauge` is the (name, help) of the gauge, among the
    controller's metrics, that reads 1 while `is_leading()`."""

    name: str
    source: CacheGroup | ListedLists
    loop: Reconciler[Any]
    metrics: MetricSet
    leader_gauge: tuple[str, str]


class ManagerOptions(TypedDict, total=False):
    """Every Manager's keyword options: `clock` (default the real one), `namespace` (default None:
    all), `owns_client` (default False: `stop()` leaves the client open)."""

    clock: Clock | None
    namespace: str | None
    owns_client: bool


class BaseManager(ABC):
    """What every Manager has: the client and clock its controllers are built over, the
    namespace they are scoped to (None: all), the controllers in the order they were added,
    each one's leader gauge, and the one `/metrics` body. Subclasses say which sources they
    run (`source_type`) and how the controllers run (`start`, `stop`, `is_leading`)."""

    source_type: type[CacheGroup] | type[ListedLists]
    """The kind of source a controller added to this Manager must read."""

    def __init__(self, client: KubeClient, **options: Unpack[ManagerOptions]) -> None:
        self.client = client
        self.clock = options.get("clock") or RealClock()
        self.namespace = options.get("namespace")
        self.controllers: list[Managed] = []
        self._owns_client = options.get("owns_client", False)
        self._lock = threading.RLock()

    def add(self, controller: Managed) -> Managed:
        """Run `controller` too (before `start()`); TypeError when its source is not the kind
        this Manager runs (watch caches for `Manager`, listed sources for `SteppedManager`)."""
        if not isinstance(controller.source, self.source_type):
            raise TypeError(
                f"{type(self).__name__} runs controllers over a {self.source_type.__name__}, "
                f"not a {type(controller.source).__name__} ({controller.name})"
            )
        with self._lock:
            self.controllers.append(controller)
        name, help_text = controller.leader_gauge
        controller.metrics.add_gauge(name, help_text, lambda: 1.0 if self.is_leading() else 0.0)
        return controller

    @abstractmethod
    def is_leading(self) -> bool:
        """True while the controllers may run; never True while their workers are stopped."""

    @abstractmethod
    def start(self) -> Self:
        """Begin running the controllers."""

    @abstractmethod
    def stop(self) -> None:
        """Stop every controller (idempotent)."""

    def _close_client(self) -> None:
        if self._owns_client:
            self.client.close()

    def render_metrics(self) -> str:
        """The `/metrics` body: every controller's metrics, in the order they were added."""
        return "".join(controller.metrics.render() for controller in self.controllers)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Manager(BaseManager):
    """See the module docstring. `start()` returns at once; `stop()` joins every thread."""

    source_type = CacheGroup

    def __init__(
        self,
        client: KubeClient,
        *,
        leader: LeaderConfig | None = None,
        on_lost: Callable[[], None] | None = None,
        watch_timeout_seconds: int = 300,
        **options: Unpack[ManagerOptions],
    ) -> None:
        super().__init__(client, **options)
        self.caches = SharedCaches(
            client, namespace=self.namespace, watch_timeout_seconds=watch_timeout_seconds
        )
        self._on_lost = on_lost
        self._leading = threading.Event()
        self._stopped = False
        self.elector: LeaderElector | None = None
        if leader is not None:
            self.elector = LeaderElector(client, self.clock, leader, self._gained, self._lost, rejoin=True)

    # ---------------------------------------------------------- leadership

    def _start_workers(self) -> None:
        """Every controller's workers, THEN the leading flag (call with `_lock` held): while
        `is_leading()` reads True, every worker has been started. Keep this order."""
        for controller in self.controllers:
            controller.loop.start()
        self._leading.set()

    def _stop_workers(self) -> None:
        """The leading flag off, THEN every controller's workers stopped (call with `_lock`
        held): `is_leading()` reads False before the first worker stops. Keep this order."""
        self._leading.clear()
        for controller in self.controllers:
            controller.loop.stop()

    def _gained(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._start_workers()
        log.info("controllers started", extra=fields(controllers=",".join(c.name for c in self.controllers)))

    def _lost(self) -> None:
        with self._lock:
            self._stop_workers()
        if self._on_lost is not None:
            self._on_lost()

    def is_leading(self) -> bool:
        """True while the controllers' workers may run (this process leads, or runs unelected).
        Set only after every worker started, cleared before any stops: True implies running."""
        return self._leading.is_set()

    def wait_leading(self, timeout: float) -> bool:
        return self._leading.wait(timeout)

    def ready(self) -> bool:
        """Every cache has its first list (leading or not)."""
        return self.caches.wait_synced(0)

    # ----------------------------------------------------------- lifecycle

    def start(self, sync_timeout: float = 30.0) -> Self:
        """Start the caches, wait for their first lists, then lead (or campaign)."""
        self.caches.start()
        if not self.caches.wait_synced(sync_timeout):
            log.warning(
                "caches not synced after %.0fs; starting anyway",
                sync_timeout,
                extra=fields(timeout_seconds=sync_timeout),
            )
        if self.elector is None:
            self._gained()
        else:
            self.elector.start()
        return self

    def stop(self) -> None:
        """Release the Lease, stop every controller's workers, then the caches (and the client
        when the Manager owns it). Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        if self.elector is not None:
            self.elector.stop()
        with self._lock:
            self._stop_workers()
        self.caches.stop()
        self._close_client()
