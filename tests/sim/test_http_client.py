"""The HTTPS API driven by the official `kubernetes` Python client."""

from __future__ import annotations

import json
import threading
from typing import Any

import kubernetes
import pytest
from kubernetes.client import ApiException
from webhook_testkit import CRD

from benchmarks.kube_objects import workload, workload_spread
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer


def pod(name: str | None = "p", labels: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"labels": labels or {"app": "web"}, **meta}
    if name:
        md["name"] = name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


def deployment(name: str = "d") -> dict[str, Any]:
    return workload("Deployment", name, replicas=2, image="x:1")


def raw(resp: Any) -> Any:
    """Read and close a `_preload_content=False` response."""
    try:
        return json.loads(resp.data)
    finally:
        resp.release_conn()


def api_error(fn: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(ApiException) as info:
        fn()
    return info.value.status, json.loads(info.value.body)


def test_crud_round_trip(core_v1: kubernetes.client.CoreV1Api) -> None:
    created = core_v1.create_namespaced_pod("default", pod("a"))
    assert created.metadata.uid and created.status.phase == "Pending"
    got = raw(core_v1.read_namespaced_pod("a", "default", _preload_content=False))
    assert got["metadata"]["resourceVersion"] == created.metadata.resource_version
    got["metadata"]["labels"]["tier"] = "front"
    replaced = core_v1.replace_namespaced_pod("a", "default", got)
    assert replaced.metadata.labels == {"app": "web", "tier": "front"}
    patched = core_v1.patch_namespaced_pod("a", "default", {"metadata": {"annotations": {"k": "v"}}})
    assert patched.metadata.annotations == {"k": "v"}
    names = [p.metadata.name for p in core_v1.list_namespaced_pod("default").items]
    assert names == ["a"]
    core_v1.delete_namespaced_pod("a", "default")
    code, body = api_error(lambda: core_v1.read_namespaced_pod("a", "default"))
    assert code == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"
    assert body["message"] == 'pods "a" not found' and body["details"] == {"name": "a", "kind": "pods"}


def test_generate_name_and_dry_run(core_v1: kubernetes.client.CoreV1Api) -> None:
    made = core_v1.create_namespaced_pod("default", pod(None, generateName="gen-"))
    assert made.metadata.name.startswith("gen-") and len(made.metadata.name) == 9
    dry = core_v1.create_namespaced_pod("default", pod("dry"), dry_run="All")
    assert dry.metadata.name == "dry"
    assert api_error(lambda: core_v1.read_namespaced_pod("dry", "default"))[0] == 404
    code, body = api_error(lambda: core_v1.create_namespaced_pod("default", pod("x"), dry_run="Some"))
    assert code == 400 and body["reason"] == "BadRequest"


def test_stale_resource_version_conflict(core_v1: kubernetes.client.CoreV1Api) -> None:
    first = raw(
        core_v1.create_namespaced_config_map(
            "default", {"metadata": {"name": "cm"}, "data": {"a": "1"}}, _preload_content=False
        )
    )
    core_v1.patch_namespaced_config_map("cm", "default", {"data": {"a": "2"}})
    first["data"]["a"] = "3"
    code, body = api_error(lambda: core_v1.replace_namespaced_config_map("cm", "default", first))
    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"].startswith('Operation cannot be fulfilled on configmaps "cm"')
    code, body = api_error(
        lambda: core_v1.create_namespaced_config_map("default", {"metadata": {"name": "cm"}})
    )
    assert code == 409 and body["reason"] == "AlreadyExists"


def test_status_subresource_isolation_over_http(apps_v1: kubernetes.client.AppsV1Api) -> None:
    apps_v1.create_namespaced_deployment("default", deployment())
    obj = raw(apps_v1.read_namespaced_deployment("d", "default", _preload_content=False))
    obj["status"] = {"replicas": 5, "readyReplicas": 5}
    obj["spec"]["replicas"] = 9
    out = raw(apps_v1.replace_namespaced_deployment_status("d", "default", obj, _preload_content=False))
    assert out["status"]["replicas"] == 5 and out["spec"]["replicas"] == 2
    out["spec"]["replicas"] = 3
    out["status"] = {"replicas": 0}
    main = raw(apps_v1.replace_namespaced_deployment("d", "default", out, _preload_content=False))
    assert main["spec"]["replicas"] == 3 and main["status"]["replicas"] == 5
    assert main["metadata"]["generation"] == 2
    scale = apps_v1.patch_namespaced_deployment_scale("d", "default", {"spec": {"replicas": 7}})
    assert scale.spec.replicas == 7 and scale.status.selector == "app=d"
    assert apps_v1.read_namespaced_deployment_scale("d", "default").spec.replicas == 7


def test_list_and_watch_with_selectors(
    core_v1: kubernetes.client.CoreV1Api, apiserver: ApiServer, deadline_poll: Any
) -> None:
    core_v1.create_namespaced_pod("default", pod("w1", {"app": "web"}))
    core_v1.create_namespaced_pod("default", pod("d1", {"app": "db"}))
    listed = core_v1.list_namespaced_pod("default", label_selector="app in (web)")
    assert [p.metadata.name for p in listed.items] == ["w1"]
    assert listed.metadata.resource_version == apiserver.resource_version()
    events: list[tuple[str, str]] = []
    watcher = kubernetes.watch.Watch()

    def consume() -> None:
        for ev in watcher.stream(
            core_v1.list_namespaced_pod,
            "default",
            label_selector="app=web",
            resource_version=listed.metadata.resource_version,
            timeout_seconds=10,
        ):
            events.append((ev["type"], ev["object"].metadata.name))
            if ev["type"] == "DELETED":
                watcher.stop()

    t = threading.Thread(target=consume)
    t.start()
    try:
        core_v1.create_namespaced_pod("default", pod("d2", {"app": "db"}))
        core_v1.create_namespaced_pod("default", pod("w2", {"app": "web"}))
        core_v1.patch_namespaced_pod("w2", "default", {"metadata": {"labels": {"x": "1"}}})
        core_v1.delete_namespaced_pod("w2", "default")
    finally:
        t.join(15)
    assert not t.is_alive()
    assert events == [("ADDED", "w2"), ("MODIFIED", "w2"), ("DELETED", "w2")]
    by_field = core_v1.list_namespaced_pod("default", field_selector="metadata.name=d1")
    assert [p.metadata.name for p in by_field.items] == ["d1"]


def test_watch_resume_synthetic_added_and_410(
    core_v1: kubernetes.client.CoreV1Api, apiserver: ApiServer
) -> None:
    rv0 = core_v1.list_namespaced_pod("default").metadata.resource_version
    core_v1.create_namespaced_pod("default", pod("a"))
    core_v1.create_namespaced_pod("default", pod("b"))
    w = kubernetes.watch.Watch()
    resumed = [
        (e["type"], e["object"].metadata.name)
        for e in w.stream(core_v1.list_namespaced_pod, "default", resource_version=rv0, timeout_seconds=1)
    ]
    assert resumed == [("ADDED", "a"), ("ADDED", "b")]
    fresh = [
        (e["type"], e["object"].metadata.name)
        for e in w.stream(core_v1.list_namespaced_pod, "default", timeout_seconds=1)
    ]
    assert fresh == [("ADDED", "a"), ("ADDED", "b")]  # no resourceVersion: current state first
    for _ in range(apiserver.store._history.maxlen or 0):  # push rv0 out of the retained history
        apiserver.create("v1/configmaps", "default", {"metadata": {"generateName": "f-"}})
    with pytest.raises(ApiException) as info:
        list(w.stream(core_v1.list_namespaced_pod, "default", resource_version=rv0, timeout_seconds=1))
    assert info.value.status == 410


def test_watch_bookmarks_over_http(core_v1: kubernetes.client.CoreV1Api) -> None:
    w = kubernetes.watch.Watch()
    kinds = []
    for ev in w.stream(
        core_v1.list_namespaced_pod,
        "default",
        allow_watch_bookmarks=True,
        timeout_seconds=1,
        resource_version=core_v1.list_namespaced_pod("default").metadata.resource_version,
    ):
        kinds.append(ev["type"])
    assert "BOOKMARK" in kinds and w.resource_version


def test_graceful_deletion_finalizers_and_eviction(core_v1: kubernetes.client.CoreV1Api) -> None:
    core_v1.create_namespaced_pod("default", pod("g"))
    core_v1.create_namespaced_binding(
        "default",
        {"metadata": {"name": "g"}, "target": {"kind": "Node", "name": "n1"}},
        _preload_content=False,
    ).release_conn()
    assert core_v1.read_namespaced_pod("g", "default").spec.node_name == "n1"
    core_v1.delete_namespaced_pod("g", "default", grace_period_seconds=10)
    terminating = core_v1.read_namespaced_pod("g", "default")
    assert terminating.metadata.deletion_timestamp is not None
    assert terminating.metadata.deletion_grace_period_seconds == 10
    core_v1.delete_namespaced_pod(
        "g", "default", body=kubernetes.client.V1DeleteOptions(grace_period_seconds=0)
    )
    assert api_error(lambda: core_v1.read_namespaced_pod("g", "default"))[0] == 404

    core_v1.create_namespaced_config_map(
        "default", {"metadata": {"name": "f", "finalizers": ["example.com/x"]}}
    )
    core_v1.delete_namespaced_config_map("f", "default", propagation_policy="Foreground")
    held = core_v1.read_namespaced_config_map("f", "default")
    assert held.metadata.deletion_timestamp and held.metadata.finalizers == [
        "example.com/x",
        "foregroundDeletion",
    ]
    core_v1.patch_namespaced_config_map("f", "default", [{"op": "remove", "path": "/metadata/finalizers"}])
    assert api_error(lambda: core_v1.read_namespaced_config_map("f", "default"))[0] == 404

    core_v1.create_namespaced_pod("default", pod("e"))
    ev = kubernetes.client.V1Eviction(metadata=kubernetes.client.V1ObjectMeta(name="e", namespace="default"))
    resp = core_v1.create_namespaced_pod_eviction("e", "default", ev, _preload_content=False)
    assert resp.status == 201 and raw(resp)["status"] == "Success"
    assert api_error(lambda: core_v1.read_namespaced_pod("e", "default"))[0] == 404


def test_crd_served_workloadspread(
    k8s_client: kubernetes.client.ApiClient, custom_objects: kubernetes.client.CustomObjectsApi
) -> None:
    ext = kubernetes.client.ApiextensionsV1Api(k8s_client)
    raw(ext.create_custom_resource_definition(CRD, _preload_content=False))
    args = ("spreadgate.dev", "v1alpha1", "default", "workloadspreads")
    ws = workload_spread("ws", [{"name": "a", "maxReplicas": 2}], target="d", namespace=None)
    ws["status"] = {"observedGeneration": 99}
    created = custom_objects.create_namespaced_custom_object(*args, ws)
    assert "status" not in created and created["metadata"]["generation"] == 1
    status = custom_objects.patch_namespaced_custom_object_status(
        *args,
        "ws",
        {
            "status": {
                "observedGeneration": 1,
                "subsetStatuses": [{"name": "a", "replicas": 1, "missingReplicas": 1}],
            },
            "spec": {"subsets": []},
        },
    )
    assert status["status"]["observedGeneration"] == 1 and status["spec"]["subsets"][0]["name"] == "a"
    stale = dict(created)
    stale["spec"] = {"subsets": []}
    code, body = api_error(lambda: custom_objects.replace_namespaced_custom_object(*args, "ws", stale))
    assert (
        code == 409 and body["reason"] == "Conflict" and "workloadspreads.spreadgate.dev" in body["message"]
    )
    listed = custom_objects.list_namespaced_custom_object(*args)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["ws"]
    custom_objects.delete_namespaced_custom_object(*args, "ws")
    assert custom_objects.list_namespaced_custom_object(*args)["items"] == []


def test_discovery_documents(k8s_client: kubernetes.client.ApiClient, https_server: RunningServer) -> None:
    version = kubernetes.client.VersionApi(k8s_client).get_code()
    assert version.major == "1" and version.git_version.startswith("v1.")
    groups = {g.name for g in kubernetes.client.ApisApi(k8s_client).get_api_versions().groups}
    assert {
        "apps",
        "batch",
        "coordination.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
    } <= groups
    core = kubernetes.client.CoreV1Api(k8s_client).get_api_resources()
    names = {r.name: r for r in core.resources}
    assert {"pods", "pods/status", "pods/eviction", "pods/binding", "nodes", "namespaces", "events"} <= set(
        names
    )
    assert names["pods/eviction"].kind == "Eviction" and names["pods"].namespaced
    apps = {r.name for r in kubernetes.client.AppsV1Api(k8s_client).get_api_resources().resources}
    assert {"deployments/scale", "statefulsets/scale", "replicasets/status"} <= apps
