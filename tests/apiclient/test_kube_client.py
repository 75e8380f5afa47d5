"""The dict-speaking client against the embedded API server over HTTPS."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import webhook_testkit
from clock_kit import ManualClock
from kubernetes.config.kube_config import KubeConfigLoader
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, kube_env, spread  # noqa: F401

from benchmarks.kube_objects import workload
from py_engine.apiclient import (
    DEPLOYMENTS,
    JOBS,
    NODES,
    PODS,
    AlreadyExists,
    Conflict,
    Invalid,
    KubeClient,
    KubeError,
    NotFound,
    ServerError,
)
from py_engine.apiclient.client import TOKEN_REFRESH_INTERVAL, ThrottledRefresh

env = webhook_testkit.env  # the fixture, used by name


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def test_core_crud_and_error_mapping(env: KubeEnv) -> None:
    c = env.client
    created = c.create(PODS, "default", pod("p1", app="a"))
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert c.get(PODS, "default", "p1")["metadata"]["labels"] == {"app": "a"}
    with pytest.raises(AlreadyExists) as exists:
        c.create(PODS, "default", pod("p1"))
    assert exists.value.status == 409 and isinstance(exists.value, Conflict)
    with pytest.raises(NotFound) as missing:
        c.get(PODS, "default", "nope")
    assert missing.value.status == 404 and "nope" in missing.value.message
    merged = c.patch(PODS, "default", "p1", {"metadata": {"labels": {"tier": "x"}}}, "merge")
    assert merged["metadata"]["labels"] == {"app": "a", "tier": "x"}
    jsonp = c.patch(PODS, "default", "p1", [{"op": "remove", "path": "/metadata/labels/tier"}], "json")
    assert jsonp["metadata"]["labels"] == {"app": "a"}
    strategic = c.patch(
        PODS, "default", "p1", {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}, "strategic"
    )
    assert strategic["spec"]["containers"][0]["image"] == "nginx:2"
    stale = dict(created)
    with pytest.raises(Conflict):
        c.replace(PODS, "default", "p1", stale)
    assert [p["metadata"]["name"] for p in c.list(PODS, "default", label_selector="app=a")["items"]] == ["p1"]
    assert c.list(PODS, "default", label_selector="app=zzz")["items"] == []
    c.delete(PODS, "default", "p1", grace_period_seconds=0)
    with pytest.raises(NotFound):
        c.get(PODS, "default", "p1")


def test_dry_run_create_does_not_persist(env: KubeEnv) -> None:
    out = env.client.create(PODS, "default", pod("dry"), dry_run=True)
    assert out["metadata"]["name"] == "dry"
    with pytest.raises(NotFound):
        env.client.get(PODS, "default", "dry")


def test_apps_batch_and_cluster_scoped(env: KubeEnv) -> None:
    c = env.client
    dep = workload("Deployment", "d", replicas=2)
    assert c.create(DEPLOYMENTS, "default", dep)["spec"]["replicas"] == 2
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}
        },
    }
    assert c.create(JOBS, "default", job)["kind"] == "Job"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}
    c.create(NODES, None, node)
    assert c.get(NODES, None, "n1")["metadata"]["labels"] == {"zone": "a"}
    assert "n1" in {n["metadata"]["name"] for n in c.list(NODES)["items"]}
    with pytest.raises(ValueError, match="namespaced"):
        c.get(PODS, None, "x")


def test_custom_resource_status_subresource(env: KubeEnv) -> None:
    c = env.client
    created = c.create(SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 2}]))
    obj = dict(created, status={"subsetStatuses": [{"name": "a", "replicas": 0, "missingReplicas": 1}]})
    written = c.replace_status(SPREADS, "default", "ws", obj)
    assert written["status"]["subsetStatuses"][0]["missingReplicas"] == 1
    assert written["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    # The old resourceVersion is stale now: the status write is refused, nothing changes.
    with pytest.raises(Conflict):
        c.replace_status(SPREADS, "default", "ws", dict(created, status={"x": 1}))
    assert c.get(SPREADS, "default", "ws")["status"] == written["status"]
    with pytest.raises(Invalid):
        c.create(
            SPREADS,
            "default",
            {
                "apiVersion": "spreadgate.dev/v1alpha1",
                "kind": "WorkloadSpread",
                "metadata": {"name": "Bad_Name"},
            },
        )


def test_injected_errors_and_unreachable_server(env: KubeEnv) -> None:
    env.faults.set_spec("pods:get:error500=1")
    with pytest.raises(ServerError) as err:
        env.client.get(PODS, "default", "x")
    assert err.value.status == 500
    env.faults.clear()
    with open(env.kubeconfig) as f:
        text = f.read().replace(env.server.url, "https://127.0.0.1:1")
    path = env.kubeconfig + ".dead"
    with open(path, "w") as f:
        f.write(text)
    with KubeClient.load(path, timeout=2) as dead, pytest.raises(ServerError) as conn:
        dead.get(PODS, "default", "x")
    assert conn.value.status == 0


def test_load_reports_bad_kubeconfig(tmp_path: Any) -> None:
    path = tmp_path / "kc"
    path.write_text("not: [a kubeconfig")
    with pytest.raises(KubeError, match="cannot load cluster configuration"):
        KubeClient.load(str(path))


def _pooled_sockets(client: KubeClient) -> list[Any]:
    """The sockets of the idle connections in the client's pools (None for a closed one)."""
    socks = []
    for key in list(client.api_client.rest_client.pool_manager.pools.keys()):
        pool = client.api_client.rest_client.pool_manager.pools[key]
        socks.extend(conn.sock for conn in list(pool.pool.queue) if conn is not None)
    return socks


def test_watch_closed_from_another_thread_returns_a_closed_connection(env: KubeEnv) -> None:
    client = env.new_client(timeout=5)
    try:
        watch = client.watch(PODS, "default", timeout_seconds=30)
        seen: list[str] = []
        done = threading.Event()

        def read() -> None:
            for event in watch:
                seen.append(str(event.get("type")))
            done.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        env.client.create(PODS, "default", pod("w1"))
        wait_until(lambda: seen == ["ADDED"], 5, "the ADDED event")
        watch.close()
        assert done.wait(5), "close() from another thread must end the iteration"
        reader.join(5)
        assert _pooled_sockets(client) and all(sock is None for sock in _pooled_sockets(client))
    finally:
        client.close()


def test_watch_closed_before_iteration_and_by_its_reader(env: KubeEnv) -> None:
    client = env.new_client(timeout=5)
    try:
        unread = client.watch(PODS, "default", timeout_seconds=30)
        unread.close()
        assert list(unread) == []
        partly_read = client.watch(PODS, "default", timeout_seconds=30)
        env.client.create(PODS, "default", pod("w2"))
        for event in partly_read:
            assert event["type"] == "ADDED"
            partly_read.close()  # the reader itself, suspended between events
        assert all(sock is None for sock in _pooled_sockets(client))
    finally:
        client.close()


def test_token_refresh_hook_runs_at_most_once_per_interval() -> None:
    calls: list[object] = []
    clock = ManualClock()
    throttled = ThrottledRefresh(calls.append, interval=1.0, clock=clock)
    for _ in range(5):
        throttled("cfg")
    assert calls == ["cfg"]
    clock.now += 0.999
    throttled("cfg")
    assert len(calls) == 1
    clock.now += 0.001
    throttled("cfg")
    assert len(calls) == 2  # an expiring token is still renewed, one interval late at most


def test_a_token_kubeconfig_refreshes_once_per_interval_not_per_request(
    env: KubeEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    real_set_config = KubeConfigLoader._set_config

    def counted(self: Any, configuration: Any) -> None:
        calls.append(configuration)
        real_set_config(self, configuration)

    client = KubeClient.load(env.kubeconfig)
    try:
        throttled = client.api_client.configuration.refresh_api_key_hook
        assert isinstance(throttled, ThrottledRefresh)  # the kubeconfig's user has a token
        clock = ManualClock()
        throttled._clock = clock
        monkeypatch.setattr(KubeConfigLoader, "_set_config", counted)
        for i in range(10):
            client.create(PODS, "default", pod(f"refresh-{i}"))
        assert len(calls) == 1  # the loader's hook re-applies the configuration once, not per request
        clock.now += TOKEN_REFRESH_INTERVAL
        for i in range(3):
            assert client.get(PODS, "default", f"refresh-{i}")["metadata"]["name"] == f"refresh-{i}"
        assert len(calls) == 2
        assert client.api_client.configuration.refresh_api_key_hook is throttled  # still installed
    finally:
        client.close()
