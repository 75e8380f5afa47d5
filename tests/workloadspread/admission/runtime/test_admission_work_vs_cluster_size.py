"""Per-admission work must not grow with the pods and spreads elsewhere in the cluster
(issue 28; the large sizes are `python -m benchmarks bench_scale`, docs/scale.md).

Counted, not timed: the Python calls one pod CREATE makes in the admitting thread
(`sys.setprofile`), and the API server requests it sends, on the live watch-cache view with
node simulation on (as `spreadgate webhook` ships: it watches every pod and node). Between
admissions a pod elsewhere changes, as in a live cluster, so a view that rebuilt anything
cluster-wide inside an admission would show it here.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import webhook_testkit
from live_service import start_live_service
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from benchmarks.kube_objects import create_deployment_and_replicaset, pod_create_request, replicaset_pod
from py_engine.policy import create_engine
from py_engine.workloadspread.admission.runtime.service_view import LiveAdmissionView
from py_engine.workloadspread.admission.service import AdmissionService

pytestmark = pytest.mark.timeout(90)

ENGINE = create_engine()  # one engine for the module (regorus engines are bound to a thread)
ADMISSIONS = 5


env = webhook_testkit.env  # the fixture, used by name


def workload(env: KubeEnv, namespace: str, app: str) -> dict[str, Any]:
    """A Deployment and its ReplicaSet; returns the ReplicaSet."""
    return create_deployment_and_replicaset(
        env.api, "apps/v1/deployments", "apps/v1/replicasets", app, replicas=1, namespace=namespace
    )


def grow(env: KubeEnv, first: int, spreads: int, pods_each: int) -> None:
    """Spreads `first..first+spreads` elsewhere (namespace `elsewhere-K`), each with its
    workload and `pods_each` Running pods bound to one of 10 nodes."""
    for k in range(first, first + spreads):
        namespace = f"elsewhere-{k}"
        env.api.create(
            "v1/namespaces", None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )
        rs = workload(env, namespace, f"app-{k}")
        env.api.create(
            SPREADS_PATH,
            namespace,
            spread(
                f"ws-{k}",
                [{"name": "a", "maxReplicas": 3}, {"name": "b"}],
                target=f"app-{k}",
                namespace=namespace,
            ),
        )
        for i in range(pods_each):
            pod = replicaset_pod(rs["metadata"]["uid"], app=f"app-{k}", name=f"app-{k}-h-{i}", namespace=None)
            pod["spec"]["nodeName"] = f"node-{i % 10}"
            env.api.create("v1/pods", namespace, {**pod, "status": {"phase": "Running"}})


SPREADS_PATH = "spreadgate.dev/v1alpha1/workloadspreads"


@pytest.fixture
def cluster(env: KubeEnv) -> Iterator[tuple[KubeEnv, AdmissionService, LiveAdmissionView, dict[str, Any]]]:
    for n in range(10):
        env.api.create(
            "v1/nodes",
            None,
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{n}"},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
            },
        )
    rs = workload(env, "default", "web")
    env.client.create(SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 1000}, {"name": "b"}]))
    grow(env, 0, 2, 10)
    # inventory_interval 0: the node inventory is as fresh as the caches (the worst case for
    # work inside an admission; the shipped interval only spaces the same work out).
    service, view = start_live_service(
        env.client, ENGINE, view_options={"node_simulation": True, "inventory_interval": 0.0}
    )
    try:
        yield env, service, view, rs
    finally:
        view.stop()


def pod_request(rs: dict[str, Any], n: int) -> dict[str, Any]:
    return pod_create_request(replicaset_pod(rs["metadata"]["uid"], name=f"web-h-{n}"), uid=f"u{n}")


def admit_counting(
    env: KubeEnv, service: AdmissionService, view: LiveAdmissionView, rs: dict[str, Any], start: int
) -> tuple[float, float]:
    """Median Python calls per admission in this thread, and API requests per admission."""
    calls: list[int] = []
    assert view.pods is not None
    before = env.server.requests
    for n in range(start, start + ADMISSIONS):
        # A pod elsewhere changes, and the view has seen it, before each admission.
        seen = view.pods.version
        env.api.patch(
            "v1/pods", "elsewhere-0", "app-0-h-0", {"metadata": {"labels": {"churn": str(n)}}}, "merge"
        )
        wait_until(
            lambda seen=seen: view.pods is not None and view.pods.version > seen, 10, "pod change cached"
        )
        counter = [0]

        def profile(frame: Any, event: str, arg: Any, counter: list[int] = counter) -> None:
            if event == "call":
                counter[0] += 1

        sys.setprofile(profile)
        try:
            decision = service.mutate_pod(pod_request(rs, n))
        finally:
            sys.setprofile(None)
        assert decision.outcome == "patched", decision
        calls.append(counter[0])
    # The server counts a request after its answer is sent: wait for at least one a pod.
    wait_until(lambda: env.server.requests - before >= ADMISSIONS, 10, "requests counted")
    return statistics.median(calls), (env.server.requests - before) / ADMISSIONS


def test_admission_work_does_not_grow_with_pods_and_spreads_elsewhere(
    cluster: tuple[KubeEnv, AdmissionService, LiveAdmissionView, dict[str, Any]],
) -> None:
    env, service, view, rs = cluster
    admit_counting(env, service, view, rs, 0)  # warm: parsed-spread and decision caches filled
    small_calls, small_requests = admit_counting(env, service, view, rs, 100)
    grow(env, 2, 18, 20)  # 20 spreads and 380 pods elsewhere now, from 2 and 20
    assert view.pods is not None
    wait_until(lambda: view.pods is not None and len(view.pods.list()) == 380, 20, "pods cached")
    wait_until(lambda: len(view.spreads.list()) == 21, 20, "spreads cached")
    large_calls, large_requests = admit_counting(env, service, view, rs, 200)
    # One status write per admission (sequential admissions: each is its own batch), no reads.
    assert small_requests == large_requests == 1.0
    # 19x the pods and 10x the spreads elsewhere: the same work, give or take a few calls
    # (an LRU eviction, a retried lock); per-pod work would add thousands.
    assert large_calls <= small_calls * 1.05 + 20, (small_calls, large_calls)
