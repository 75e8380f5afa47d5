"""What the admission service reads in the webhook: watch caches of spreads, workloads and
nodes (the live `AdmissionReader`, `py_engine.workloadspread.admission.ports`). The validation
service reads the same view (its `ValidationReader`, py_engine/validation/service.py).

Requests never list: WorkloadSpreads, Deployments, ReplicaSets, StatefulSets,
Jobs (and CloneSets when their CRD exists) are kept by watch caches. A cache
miss on a workload falls back to one direct GET, because a pod CREATE often
arrives right after its ReplicaSet was created, before the watch delivered it;
denying with "owner not found" would only make the controller retry.
For node-fit simulation (Adaptive spreads) nodes and pods are cached too and
folded into a `NodeInventory`, rebuilt at most once per `inventory_interval`
seconds (node facts a second old are good enough for a placement heuristic), and only
when a decision reads it (an Adaptive spread's node-fit check).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from py_engine.apiclient import (
    CRDS,
    NODES,
    PODS,
    KubeClient,
    KubeError,
    NotFound,
    Resource,
    WatchCache,
)
from py_engine.apiclient.discovery import resource_in_listing
from py_engine.apiclient.resources import BUILTIN_WORKLOADS, OPTIONAL_WORKLOADS
from py_engine.model.resource import SPREADS
from py_engine.placement.inventory import NodeFacts, NodeInventory, build_node_inventory
from py_engine.semantics import objects
from py_engine.semantics.clock import Clock

log = logging.getLogger(__name__)


NAMESPACE_INDEX = "namespace"


def _namespace_of(obj: Mapping[str, Any]) -> tuple[str]:
    return (objects.namespace(obj),)


class LiveAdmissionView:
    """Watch caches plus the lookups the admission core needs (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        node_simulation: bool = True,
        watch_timeout_seconds: int = 300,
        inventory_interval: float = 1.0,
        lookup_timeout: float = 1.0,
    ) -> None:
        self.client = client
        self.clock = clock
        self.node_simulation = node_simulation
        self._watch_timeout = watch_timeout_seconds
        self._inventory_interval = inventory_interval
        self._lookup_timeout = lookup_timeout
        self.spreads = WatchCache(
            client,
            SPREADS,
            watch_timeout_seconds=watch_timeout_seconds,
            name="workloadspreads",
            indexers={NAMESPACE_INDEX: _namespace_of},
        )
        self.workloads: dict[tuple[str, str], WatchCache] = {}
        self.nodes: WatchCache | None = None
        self.pods: WatchCache | None = None
        self._discovered: dict[tuple[str, str], Resource | None] = {}
        self._lock = threading.Lock()
        self._inventory: NodeInventory | None = None
        self._inventory_key: tuple[int, int] | None = None
        self._inventory_at = float("-inf")
        self._rebuilding = False
        self.direct_gets = 0

    # ------------------------------------------------------------- lifecycle

    def start(self) -> LiveAdmissionView:
        wanted = dict(BUILTIN_WORKLOADS)
        for key, resource in OPTIONAL_WORKLOADS.items():
            if self._crd_exists(resource):
                wanted[key] = resource
        for key, resource in wanted.items():
            self.workloads[key] = WatchCache(
                self.client,
                resource,
                watch_timeout_seconds=self._watch_timeout,
                name=f"{resource.plural}.{resource.group or 'core'}",
            )
        if self.node_simulation:
            self.nodes = WatchCache(self.client, NODES, watch_timeout_seconds=self._watch_timeout)
            self.pods = WatchCache(self.client, PODS, watch_timeout_seconds=self._watch_timeout)
        for cache in self.caches():
            cache.start()
        return self

    def _crd_exists(self, resource: Resource) -> bool:
        try:
            self.client.get(
                CRDS, None, f"{resource.plural}.{resource.group}", timeout=self._lookup_timeout * 5
            )
        except KubeError:
            return False
        return True

    def caches(self) -> list[WatchCache]:
        out = [self.spreads, *self.workloads.values()]
        out += [c for c in (self.nodes, self.pods) if c is not None]
        return out

    def ready(self) -> bool:
        """Every cache has loaded its first list."""
        return all(c.synced.is_set() for c in self.caches())

    def wait_ready(self, timeout: float) -> bool:
        deadline = self.clock.monotonic() + timeout
        return all(cache.wait_synced(max(deadline - self.clock.monotonic(), 0.0)) for cache in self.caches())

    def stop(self) -> None:
        for cache in self.caches():
            cache.stop()

    # --------------------------------------------------------------- reading

    def spreads_in(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's spreads in name order (the API's list order), from the namespace index:
        every pod CREATE asks, and scanning the cluster's spreads for each grows with the cluster."""
        return self.spreads.by_index(NAMESPACE_INDEX, namespace)

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """(apiVersion, kind, namespace, name) -> object: cache first, then one direct GET."""
        key = (objects.api_group(api_version), kind)
        cache = self.workloads.get(key)
        if cache is not None:
            found = cache.get(namespace, name)
            if found is not None:
                return found
            resource: Resource | None = cache.resource
        else:
            resource = self._discover(api_version, kind)
        if resource is None:
            return None
        return self._direct_get(resource, namespace, name)

    def fresh_lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """Like `lookup`, but always one direct GET: for decisions that must not act on a
        cache that may be behind (see `AdmissionContext.fresh_lookup`)."""
        cache = self.workloads.get((objects.api_group(api_version), kind))
        resource = cache.resource if cache is not None else self._discover(api_version, kind)
        if resource is None:
            return None
        try:
            return self._direct_get(resource, namespace, name)
        except KubeError:
            return None  # the cached answer stands

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        if self.pods is not None:
            found = self.pods.get(namespace, name)
            if found is not None:
                return found
        return self._direct_get(PODS, namespace, name)

    def _direct_get(self, resource: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        self.direct_gets += 1
        try:
            return self.client.get(resource, namespace, name, timeout=self._lookup_timeout)
        except NotFound:
            return None

    def _discover(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving `kind` in `api_version` (custom workloads), from discovery."""
        key = (api_version, kind)
        with self._lock:
            if key in self._discovered:
                return self._discovered[key]
        group = objects.api_group(api_version)
        version = api_version.rsplit("/", 1)[-1]
        path = f"/apis/{api_version}" if group else f"/api/{version}"
        try:
            doc = self.client.request("GET", path, timeout=self._lookup_timeout)
        except KubeError:
            return None  # not cached: retried on the next request
        found = resource_in_listing(doc, group, version, kind)
        with self._lock:
            self._discovered[key] = found
        return found

    def node_inventory(self) -> NodeInventory | None:
        """Compact node facts for node-fit simulation; None when simulation is off.

        Every admission's context asks, but only an Adaptive spread's decision reads it; the
        inventory folds every cached pod and node, so it is built when first read (a
        `LazyNodeInventory`), not here: a pod CREATE for any other spread does no work that
        grows with the cluster (issue 28, tests/workloadspread/admission/runtime/
        test_admission_work_vs_cluster_size.py).
        """
        if self.nodes is None or self.pods is None:
            return None
        return LazyNodeInventory(self._current_inventory)

    def _current_inventory(self) -> NodeInventory:
        """The inventory, rebuilt when the caches changed and `inventory_interval` passed.
        One thread rebuilds at a time; the others read the previous inventory meanwhile."""
        assert self.nodes is not None and self.pods is not None
        key = (self.nodes.version, self.pods.version)
        now = self.clock.monotonic()
        with self._lock:
            current = self._inventory
            if current is not None and (
                key == self._inventory_key
                or self._rebuilding
                or now - self._inventory_at < self._inventory_interval
            ):
                return current
            self._rebuilding = True
        try:
            inventory = build_node_inventory(self.nodes.list(), self.pods.list())
        finally:
            with self._lock:
                self._rebuilding = False
        with self._lock:
            self._inventory, self._inventory_key, self._inventory_at = inventory, key, now
        return inventory

    def workload_kinds(self) -> Sequence[tuple[str, str]]:
        return sorted(self.workloads)


class LazyNodeInventory(NodeInventory):
    """A `NodeInventory` read from `source` on first use (its facts or its `version`), then
    kept: one decision sees one inventory, and a decision that never reads it costs nothing."""

    __slots__ = ("_built", "_source")

    def __init__(self, source: Callable[[], NodeInventory]) -> None:  # no facts yet: not NodeInventory's
        self._source = source
        self._built: NodeInventory | None = None

    def _resolved(self) -> NodeInventory:
        if self._built is None:
            self._built = self._source()
        return self._built

    @property
    def version(self) -> str:  # type: ignore[override]  # read-only here: read from the source
        return self._resolved().version

    @overload
    def __getitem__(self, index: int) -> NodeFacts: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeFacts]: ...

    def __getitem__(self, index: int | slice) -> NodeFacts | Sequence[NodeFacts]:
        return self._resolved()[index]

    def __len__(self) -> int:
        return len(self._resolved())

    def __iter__(self) -> Iterator[NodeFacts]:
        return iter(self._resolved())

    def __repr__(self) -> str:
        return repr(self._built) if self._built is not None else "LazyNodeInventory(not read yet)"
