"""The pieces of the stress and fault suite: the embedded API server, real webhook
processes, a burst driver playing the API server and ReplicaSet controller, and
the checks every trial ends with.

The driver sends each pod's AdmissionReview to one of the live webhook
processes (round robin). An allowed answer is applied (JSON patch) and the pod
is created in the API server, as the real API server does after admission; a
denial or a connection failure is what a failed create is to the ReplicaSet
controller: the pod is tried again (a new review, so a new generated key)
against the next live process, a bounded number of times.

A trial then checks: no subset ever admitted more pods than its cap; every
admitted pod's key is in the status the webhooks wrote; after exactly two
controller syncs the status equals what the controller recomputes from the
cluster (a third sync writes nothing), every admitted pod is counted and no
slot is leaked.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import jsonpatch
import urllib3
from polling import wait_until
from webhook_testkit import CRD, SPREADS, WebhookProcess, shared_ca, spread, webhook_https, write_cert

from benchmarks.kube_objects import (
    admission_review,
    create_deployment_and_replicaset,
    pod_create_request,
    replicaset_pod,
)
from py_engine.apiclient import DEPLOYMENTS, REPLICASETS, KubeClient
from py_engine.model import MATCHED_ANNOTATION
from py_engine.semantics.clock import RealClock
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer, serve_https
from py_engine.workloadspread.controller.options import ReconcileOptions
from py_engine.workloadspread.controller.reconcile import reconcile
from py_engine.workloadspread.controller.runtime.loop import LoopOptions, SpreadController
from py_engine.workloadspread.controller.runtime.sources import ListedSource
from py_engine.workloadspread.controller.runtime.views import view_for

FULL = os.environ.get("SPREADGATE_STRESS") == "1"
"""The full variants (10 trials x 1,000 creates) run only with SPREADGATE_STRESS=1."""

BURST_FAULTS = (
    "workloadspreads/status:update:conflict=0.1,error500=0.02,latency=0-10ms;"
    "workloadspreads:get:latency=0-5ms;pods:*:latency=0-2ms"
)
"""10 % 409s and 2 % 500s on status writes, random latency on status writes, spread reads and pod calls."""

CREATING_TIMEOUT = 30.0


@dataclass
class Env:
    api: ApiServer
    server: RunningServer
    kubeconfig: str
    client: KubeClient
    tmp: Path
    cert: str
    key: str


@contextmanager
def cluster(tmp: Path) -> Iterator[Env]:
    """The embedded API server over HTTPS with the WorkloadSpread CRD, and a serving certificate."""
    api = ApiServer(history_size=20_000, bookmark_interval=0.5)
    server = serve_https(api, ca=shared_ca())
    kubeconfig = server.write_kubeconfig(str(tmp / "kubeconfig"))
    api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, CRD)
    client = KubeClient.load(kubeconfig, timeout=10)
    cert, key = write_cert(tmp)
    try:
        yield Env(api, server, kubeconfig, client, tmp, cert, key)
    finally:
        client.close()
        server.stop()
        api.close()


def start_webhook(env: Env, name: str, *extra: str) -> WebhookProcess:
    """A real webhook process against the stress cluster, its log in the test's directory."""
    return WebhookProcess(env.kubeconfig, env.cert, env.key, env.tmp / f"{name}.log", *extra)


def http_pool() -> urllib3.PoolManager:
    return webhook_https(maxsize=64, block=True, timeout=120.0)


def wait_ready(http: urllib3.PoolManager, procs: list[WebhookProcess]) -> None:
    for p in procs:
        url = p.url + "/readyz"
        wait_until(partial(_is_ready, http, url), 30, "webhook ready")


def _is_ready(http: urllib3.PoolManager, url: str) -> bool:
    return bool(http.request("GET", url, timeout=5).status == 200)


def wait_spread_seen(procs: list[WebhookProcess], w: Workload) -> None:
    """Poll (dry run: nothing is reserved) until every live process places a pod of `w`
    in a subset, i.e. the spread has reached its watch cache."""
    http = http_pool()
    try:
        for p in procs:
            if p.alive:
                wait_until(
                    partial(_places_in_a_subset, http, p.url, w), 30, f"{p.url} to see the spread of {w.name}"
                )
    finally:
        http.clear()


def _places_in_a_subset(http: urllib3.PoolManager, url: str, w: Workload) -> bool:
    review = review_of(pod_of(w))
    review["request"]["dryRun"] = True
    resp = http.request(
        "POST",
        url + "/mutate/pods",
        body=json.dumps(review),
        headers={"Content-Type": "application/json"},
        timeout=5,
    )
    return resp.status == 200 and "patch" in json.loads(resp.data)["response"]


@dataclass
class Workload:
    """A Deployment, its ReplicaSet and its WorkloadSpread; `caps` per subset."""

    name: str
    rs: dict[str, Any]
    caps: dict[str, int]


def workload(env: Env, name: str, replicas: int, caps: dict[str, int]) -> Workload:
    rs = create_deployment_and_replicaset(
        env.client, DEPLOYMENTS, REPLICASETS, name, replicas=replicas, template_hash="abc"
    )
    env.client.create(
        SPREADS,
        "default",
        spread(f"ws-{name}", [{"name": n, "maxReplicas": c} for n, c in caps.items()], target=name),
    )
    return Workload(name, rs, caps)


def pod_of(w: Workload) -> dict[str, Any]:
    return replicaset_pod(w.rs["metadata"]["uid"], app=w.name, template_hash="abc")


def review_of(pod: dict[str, Any]) -> dict[str, Any]:
    return admission_review(pod_create_request(pod, str(uuid.uuid4())))


@dataclass
class Outcome:
    """What a burst did: per pod name, the (subset, key) it was admitted with (None: no subset)."""

    admitted: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    attempts: Counter[str] = field(default_factory=Counter)
    gave_up: list[str] = field(default_factory=list)

    def per_subset(self) -> Counter[str]:
        return Counter(m[0] for m in self.admitted.values() if m is not None)

    def keys(self, subset: str) -> set[str]:
        return {m[1] for m in self.admitted.values() if m is not None and m[0] == subset}


class Burst:
    """See the module docstring. `procs` may change while the burst runs (kill, restart)."""

    def __init__(self, env: Env, w: Workload, procs: list[WebhookProcess], *, attempts: int = 20) -> None:
        self.env, self.w, self.procs, self.attempts = env, w, procs, attempts
        self.http = http_pool()
        self.outcome = Outcome()
        self.answered = 0
        self._lock = threading.Lock()
        self._turn = 0

    def _next_url(self) -> str:
        with self._lock:
            live = [p for p in self.procs if p.alive]
            self._turn += 1
            return live[self._turn % len(live)].url

    def _one(self, index: int) -> None:
        name = f"{self.w.name}-abc-{index:05d}"
        for _ in range(self.attempts):
            pod = pod_of(self.w)
            review = review_of(pod)
            self.outcome.attempts["sent"] += 1
            try:
                resp = self.http.request(
                    "POST",
                    self._next_url() + "/mutate/pods",
                    body=json.dumps(review),
                    headers={"Content-Type": "application/json"},
                    timeout=20,
                )
            except urllib3.exceptions.HTTPError:
                self.outcome.attempts["connection"] += 1
                time.sleep(0.05)
                continue
            assert resp.status == 200, (resp.status, resp.data[:300])
            answer = json.loads(resp.data)["response"]
            assert answer["uid"] == review["request"]["uid"]
            with self._lock:
                self.answered += 1
            if not answer["allowed"]:
                assert answer["status"]["code"] == 500, answer  # only our injected API failures deny
                self.outcome.attempts["denied"] += 1
                continue
            matched: tuple[str, str] | None = None
            if "patch" in answer:
                ops = json.loads(base64.b64decode(answer["patch"]))
                pod = jsonpatch.apply_patch(pod, ops)
                raw = json.loads(pod["metadata"]["annotations"][MATCHED_ANNOTATION])
                matched = (raw["subset"], raw["uid"])
            pod["metadata"]["name"] = name
            self.env.api.create("v1/pods", "default", pod)
            with self._lock:
                self.outcome.admitted[name] = matched
            return
        with self._lock:
            self.outcome.gave_up.append(name)

    def run(self, pods: int, clients: int = 48, during: Callable[[Burst], None] | None = None) -> Outcome:
        """Create `pods` pods with `clients` in flight; `during(self)` runs on its own thread meanwhile."""
        pending = iter(range(pods))

        def worker() -> None:
            while True:
                with self._lock:
                    index = next(pending, None)
                if index is None:
                    return
                self._one(index)

        failures: list[BaseException] = []

        def guarded(func: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                try:
                    func()
                except BaseException as exc:  # re-raised on the test's thread below
                    failures.append(exc)

            return run

        threads = [threading.Thread(target=guarded(worker), daemon=True) for _ in range(clients)]
        side = (
            threading.Thread(target=guarded(partial(during, self)), daemon=True)
            if during is not None
            else None
        )
        try:
            for t in threads:
                t.start()
            if side is not None:
                side.start()
            for t in threads:
                t.join(300)
            if side is not None:
                side.join(120)
            assert not any(t.is_alive() for t in threads), "burst workers did not finish"
        finally:
            self.http.clear()
        if failures:
            raise failures[0]
        return self.outcome


def wait_answered(burst: Burst, count: int, timeout: float = 120.0) -> None:
    wait_until(lambda: burst.answered >= count, timeout, f"{count} answers")


class OffsetClock(RealClock):
    """Real time moved forward: a controller that runs `offset` seconds later (orphans aged out)."""

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def now(self) -> datetime:
        return super().now() + timedelta(seconds=self.offset)


def status_entries(env: Env, w: Workload) -> dict[str, dict[str, Any]]:
    status = env.client.get(SPREADS, "default", f"ws-{w.name}").get("status") or {}
    entries = (status.get("versionedSubsetStatuses") or {}).get("abc") or []
    return {e["name"]: e for e in entries}


def check_no_overcommit(outcome: Outcome, w: Workload) -> None:
    per = outcome.per_subset()
    for subset, cap in w.caps.items():
        assert per[subset] <= cap, f"subset {subset}: {per[subset]} admitted, cap {cap}"


def check_reservations(env: Env, outcome: Outcome, w: Workload, *, exact: bool) -> None:
    """Every admitted pod's key is in its subset's creatingPods (exact: and nothing else)."""
    entries = status_entries(env, w)
    for subset in w.caps:
        recorded = set((entries.get(subset) or {}).get("creatingPods") or {})
        keys = outcome.keys(subset)
        missing = keys - recorded
        assert not missing, f"subset {subset}: {len(missing)} admitted pods have no reservation"
        if exact:
            assert recorded == keys, f"subset {subset}: {len(recorded - keys)} reservations without a pod"


def converge(env: Env, outcome: Outcome, w: Workload, *, offset: float = 0.0) -> None:
    """Two controller syncs make the status exact; a third writes nothing (offset ages orphans out)."""
    client = KubeClient.load(env.kubeconfig, timeout=10)
    try:
        source = ListedSource(client)
        clock = OffsetClock(offset)
        options = LoopOptions(reconcile=ReconcileOptions(creating_timeout_seconds=CREATING_TIMEOUT))
        controller = SpreadController(client, source, clock, options)
        key = f"default/ws-{w.name}"
        for _ in range(2):
            source.refresh()
            controller.enqueue(key)
            reports = controller.process_ready()
            assert all(r.outcome == "synced" for r in reports), [(r.outcome, r.error) for r in reports]
        source.refresh()
        obj = source.spread("default", f"ws-{w.name}")
        assert obj is not None
        recomputed = reconcile(obj, view_for(source, obj), clock.now(), options.reconcile)
        assert not recomputed.status_changed, "status differs from the recomputation after two syncs"
        controller.enqueue(key)
        third = controller.process_ready()
        assert sum(r.writes.total for r in third) == 0, "a third sync still wrote"
    finally:
        client.close()
    per = outcome.per_subset()
    entries = status_entries(env, w)
    for subset, cap in w.caps.items():
        entry = entries[subset]
        assert entry["replicas"] == per[subset], (
            f"subset {subset}: {entry['replicas']} counted, {per[subset]} admitted"
        )
        assert not entry.get("creatingPods"), f"subset {subset}: reservations left after convergence"
        assert entry["missingReplicas"] == cap - per[subset], f"subset {subset}: slots leaked"


def caps_for(pods: int) -> dict[str, int]:
    """Caps adding up to 90 % of the burst: every slot is contended and some pods find no room."""
    return {"a": pods * 3 // 10, "b": pods * 35 // 100, "c": pods // 4}
