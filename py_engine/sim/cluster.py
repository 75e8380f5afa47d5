"""The embedded cluster: API server + controllers + scheduler + kubelet + nodes.

`Cluster` assembles the pieces and runs them in one of two modes:

* **stepped** (deterministic): call `sync_once()` / `run_until_stable()`. Each
  pass relists every informer from the API server, then runs every loop once
  in a fixed order (Deployment, ReplicaSet, StatefulSet, Job, garbage
  collector, pod GC, scheduler, kubelet). With a `VirtualClock`,
  `run_until_stable(advance_time=True)` also moves time forward to the next
  pending delay (kubelet start/ready delays, minReadySeconds, grace periods),
  so a whole rollout runs in virtual time without sleeping.
* **threaded** (real time): `start()` launches one watch thread per resource
  and one worker per loop; `stop()` joins them. Reaction time is the watch
  latency plus one sync, i.e. milliseconds.

`serve_https()` adds the HTTPS front end (the API server engineer's
`http_server`) and writes a kubeconfig (a cluster administrator's), so `kubectl`
and the Kubernetes Python client can talk to the cluster;
`service_account_kubeconfig()` writes one for a ServiceAccount, whose requests RBAC
then authorizes. The cluster is a context manager:
leaving it stops threads, the HTTPS server and every watch.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from py_engine.semantics.clock import Clock, RealClock, VirtualClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.controllers.base import Controller, InformerSet
from py_engine.sim.controllers.cloneset import CloneSetController
from py_engine.sim.controllers.deployment import DeploymentController
from py_engine.sim.controllers.garbage_collector import GarbageCollector, PodGC
from py_engine.sim.controllers.job import JobController
from py_engine.sim.controllers.replicaset import ReplicaSetController
from py_engine.sim.controllers.statefulset import AdvancedStatefulSetController, StatefulSetController
from py_engine.sim.faults import FaultInjector
from py_engine.sim.interface import JSON, ApiError
from py_engine.sim.kubelet import Kubelet, KubeletConfig
from py_engine.sim.nodepool import default_pool
from py_engine.sim.scheduler import Scheduler

__all__ = ["Cluster", "ClusterNotStable", "advance_to_deadline"]


class ClusterNotStable(RuntimeError):
    """`run_until_stable` ran out of iterations or time with work still pending."""


def advance_to_deadline(
    clock: VirtualClock, due: float | None, advanced: float, max_advance: float
) -> float | None:
    """Move a quiet run's virtual `clock` to the next delayed work (`due`, on its monotonic
    scale) and return how far it moved; None, not moving it, when nothing is due or the run,
    `advanced` virtual seconds so far, would pass `max_advance`."""
    if due is None:
        return None
    step = max(due - clock.monotonic(), 0.0)
    if advanced + step > max_advance:
        return None
    clock.advance(step)
    return step


class Cluster:
    """An in-process Kubernetes cluster (see the module docstring).

    `seed` makes a run reproducible: generated names are drawn from it and the ReplicaSet and
    Job controllers create one pod at a time, so the order of creates (and of the admission
    decisions they meet) no longer depends on thread scheduling. `None` (the default) keeps
    the live behaviour: unpredictable names, concurrent creates.
    """

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        nodes: Sequence[JSON] | None = None,
        kubelet: KubeletConfig | None = None,
        faults: str | None = None,
        faults_in_process: bool = False,
        gc_resources: Mapping[str, str] | None = None,
        api: ApiServer | None = None,
        seed: int | None = None,
    ) -> None:
        self.clock: Clock = clock or RealClock()
        injector = FaultInjector()
        if faults:
            injector.set_spec(faults)
        injector.in_process = faults_in_process
        self.api = api or ApiServer(self.clock, faults=injector, name_seed=seed)
        self.informers = InformerSet(self.api)
        args = (self.api, self.informers, self.clock)
        self.deployments = DeploymentController(*args)
        self.replicasets = ReplicaSetController(*args)
        self.statefulsets = StatefulSetController(*args)
        self.jobs = JobController(*args)
        if seed is not None:  # a reproducible run: pods created one at a time, in a fixed order
            self.replicasets.concurrent_creates = self.jobs.concurrent_creates = 1
        self.clonesets = CloneSetController(*args)  # idle until Kruise's CloneSet CRD is installed
        self.advanced_statefulsets = AdvancedStatefulSetController(*args)  # the same for Kruise's StatefulSet
        self.garbage_collector = GarbageCollector(*args, resources=gc_resources)
        self.pod_gc = PodGC(*args)
        self.scheduler = Scheduler(*args)
        self.kubelet = Kubelet(*args, config=kubelet)
        self.controllers: list[Controller] = [
            self.deployments,
            self.replicasets,
            self.statefulsets,
            self.jobs,
            self.clonesets,
            self.advanced_statefulsets,
            self.garbage_collector,
            self.pod_gc,
            self.scheduler,
            self.kubelet,
        ]
        self._running = False
        self._https: Any = None
        self.kubeconfig_path: Path | None = None
        self.url: str | None = None
        for node in default_pool() if nodes is None else nodes:
            self.add_node(node)

    # ------------------------------------------------------------------ nodes

    def add_node(self, node: JSON) -> JSON:
        """Register a node (the kubelet's job upstream); status is written as given."""
        created = self.api.create("v1/nodes", None, node)
        if node.get("status") and created.get("status") != node["status"]:
            created = self.api.patch(
                "v1/nodes",
                None,
                created["metadata"]["name"],
                {"status": node["status"]},
                "merge",
                subresource="status",
            )
        return created

    def delete_node(self, name: str) -> None:
        """Remove a node; its pods are failed and removed by the pod GC."""
        with contextlib.suppress(ApiError):
            self.api.delete("v1/nodes", None, name)

    # ---------------------------------------------------------------- stepped

    def sync_once(self) -> int:
        """One deterministic pass over every loop; returns the number of writes."""
        if self._running:
            raise RuntimeError("sync_once() cannot be mixed with start(): the cluster runs threads")
        self.informers.relist_all()
        return sum(controller.step() for controller in self.controllers)

    def next_deadline(self) -> float | None:
        """The earliest clock time (`Clock.monotonic`) at which some loop has delayed work."""
        deadlines = [d for c in self.controllers if (d := c.next_deadline()) is not None]
        return min(deadlines) if deadlines else None

    def run_until_stable(
        self,
        timeout: float = 30.0,
        max_iterations: int = 1000,
        *,
        advance_time: bool = False,
        max_advance: float = 3600.0,
        on_step: Callable[[Cluster], None] | None = None,
    ) -> int:
        """Run passes until one makes no write; returns the number of passes.

        With `advance_time` (VirtualClock only) a quiet pass moves the clock to the
        next delayed work instead of stopping, up to `max_advance` virtual seconds
        in total. `on_step` is called after every pass (tests assert invariants
        there). Raises `ClusterNotStable` if `max_iterations` or `timeout` (real
        seconds) runs out first.
        """
        if advance_time and not isinstance(self.clock, VirtualClock):
            raise ValueError("advance_time needs a VirtualClock")
        deadline = time.monotonic() + timeout
        advanced = 0.0
        for iteration in range(1, max_iterations + 1):
            writes = self.sync_once()
            if on_step is not None:
                on_step(self)
            if writes:
                if time.monotonic() > deadline:
                    raise ClusterNotStable(f"still busy after {timeout:g}s ({iteration} passes)")
                continue
            if not advance_time:
                return iteration
            assert isinstance(self.clock, VirtualClock)
            step = advance_to_deadline(self.clock, self.next_deadline(), advanced, max_advance)
            if step is None:
                return iteration
            advanced += step
            if time.monotonic() > deadline:
                raise ClusterNotStable(f"still busy after {timeout:g}s ({iteration} passes)")
        raise ClusterNotStable(f"no stable state within {max_iterations} passes")

    # --------------------------------------------------------------- threaded

    def start(self) -> None:
        """Run every loop in background threads (watch-driven)."""
        if self._running:
            return
        self._running = True
        self.informers.start()
        for controller in self.controllers:
            controller.start()

    def stop(self) -> None:
        """Stop threads and the HTTPS server and close every watch; idempotent."""
        for controller in self.controllers:
            controller.stop()
        self.informers.stop()
        self._running = False
        if self._https is not None:
            with contextlib.suppress(Exception):
                self._https.stop()
            self._https = None

    def close(self) -> None:
        self.stop()
        self.api.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ https

    def serve_https(
        self, port: int = 0, host: str = "127.0.0.1", kubeconfig_out: str | Path | None = None
    ) -> str:
        """Start the HTTPS front end and write a kubeconfig (to `kubeconfig_out`, or a
        fresh temporary file); returns the URL. Stopped by `stop()`/`close()`."""
        from py_engine.sim.http_server import serve_https

        if self._https is not None:
            raise RuntimeError("the HTTPS server is already running")
        server = serve_https(self.api, host, port)
        self._https = server
        if kubeconfig_out is None:
            handle, name = tempfile.mkstemp(prefix="spreadgate-kubeconfig-", suffix=".yaml")
            os.close(handle)
            kubeconfig_out = name
        self.kubeconfig_path = Path(server.write_kubeconfig(str(kubeconfig_out)))
        self.url = server.url
        return server.url

    def service_account_kubeconfig(self, path: str | Path, namespace: str, name: str) -> Path:
        """Write a kubeconfig that authenticates as the ServiceAccount `namespace/name` (RBAC
        then applies to it, as to a pod running under that account); needs `serve_https()`."""
        if self._https is None:
            raise RuntimeError("serve_https() first: tokens are issued by the HTTPS front end")
        return Path(self._https.service_account_kubeconfig(str(path), namespace, name))

    @property
    def refusals(self) -> list[str]:
        """The HTTPS front end's latest 401/403 answers (see `RunningServer.refusals`)."""
        return [] if self._https is None else list(self._https.refusals)
