"""Malformed and unusual HTTP requests get Kubernetes Status errors, never tracebacks or hangs."""

from __future__ import annotations

import json
from typing import Any

import cluster_fixtures
import kubernetes
import pytest
import urllib3

from py_engine.sim.http_server import RunningServer

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


http = cluster_fixtures.admin_http  # the fixture, under the name the tests use


def call(
    pool: urllib3.HTTPSConnectionPool,
    method: str,
    path: str,
    body: bytes | None = None,
    ctype: str = "application/json",
) -> tuple[int, Any]:
    resp = pool.request(
        method, path, body=body, headers={"Content-Type": ctype, "Accept": "application/json"}
    )
    data = json.loads(resp.data) if resp.data else None
    return resp.status, data


def assert_status(result: tuple[int, Any], code: int, reason: str) -> dict[str, Any]:
    status, body = result
    assert status == code, body
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["code"] == code and body["reason"] == reason and body["message"]
    return dict(body)


def test_malformed_requests(http: urllib3.HTTPSConnectionPool) -> None:
    base = "/api/v1/namespaces/default/pods"
    assert_status(call(http, "POST", base, b"{not json"), 400, "BadRequest")
    assert_status(call(http, "POST", base, b"[1, 2]"), 400, "BadRequest")
    assert_status(call(http, "POST", base, b""), 400, "BadRequest")
    assert_status(call(http, "GET", "/api/v1/namespaces/default/widgets"), 404, "NotFound")
    assert_status(call(http, "GET", "/apis/nope.io/v1/things"), 404, "NotFound")
    assert_status(call(http, "GET", "/totally/unknown"), 404, "NotFound")
    assert_status(call(http, "GET", base + "?labelSelector=app%20in%20(a"), 400, "BadRequest")
    assert_status(call(http, "GET", base + "?fieldSelector=spec.image%3Dx"), 400, "BadRequest")
    big = json.dumps(
        {**POD, "metadata": {"name": "big", "annotations": {"x": "y" * (3 * 1024 * 1024)}}}
    ).encode()
    assert_status(call(http, "POST", base, big), 413, "RequestEntityTooLarge")
    assert_status(
        call(http, "POST", base, json.dumps(POD).encode(), "application/vnd.kubernetes.protobuf"),
        415,
        "UnsupportedMediaType",
    )
    assert call(http, "POST", base, json.dumps(POD).encode())[0] == 201
    assert_status(
        call(http, "PATCH", base + "/p", b'{"metadata":{}}', "application/json"), 415, "UnsupportedMediaType"
    )
    # Server-side apply is served: without fieldManager it is kube-apiserver's 422 ...
    assert_status(call(http, "PATCH", base + "/p", b"{}", "application/apply-patch+yaml"), 422, "Invalid")
    # ... and a YAML body is bounded once its aliases are expanded ("billion laughs"), like any body.
    laughs = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n".encode()
        for i in range(8)
    )
    bomb = assert_status(
        call(http, "PATCH", base + "/p?fieldManager=m", laughs, "application/apply-patch+yaml"),
        400,
        "BadRequest",
    )
    assert "excessive aliasing" in bomb["message"]
    assert_status(
        call(http, "PATCH", base + "/p", b'{"a":', "application/merge-patch+json"), 400, "BadRequest"
    )
    invalid = assert_status(
        call(http, "POST", base, json.dumps({"metadata": {"name": "x"}, "spec": {}}).encode()), 422, "Invalid"
    )
    assert invalid["details"]["kind"] == "Pod" and invalid["details"]["causes"]
    assert_status(
        call(http, "PUT", base + "/p", json.dumps({**POD, "metadata": {"name": "q"}}).encode()),
        400,
        "BadRequest",
    )
    assert_status(call(http, "POST", base + "/p", json.dumps(POD).encode()), 405, "MethodNotAllowed")
    assert_status(call(http, "DELETE", base + "/p?gracePeriodSeconds=soon"), 400, "BadRequest")
    exec_refused = assert_status(call(http, "GET", base + "/p/exec"), 405, "MethodNotAllowed")
    assert "it runs no containers" in exec_refused["message"]
    other = assert_status(call(http, "GET", base + "/p/nonsense"), 405, "MethodNotAllowed")
    assert "subresources served: binding, eviction, status" in other["message"]
    assert_status(call(http, "GET", base + "?watch=true&resourceVersion=abc"), 400, "BadRequest")
    # the keep-alive connection survived every error above
    status, body = call(http, "GET", base + "/p")
    assert status == 200 and body["metadata"]["name"] == "p"


def test_info_endpoints_and_openapi(http: urllib3.HTTPSConnectionPool) -> None:
    assert call(http, "GET", "/version")[1]["major"] == "1"
    assert call(http, "GET", "/api")[1]["versions"] == ["v1"]
    assert call(http, "GET", "/apis/apps")[1]["preferredVersion"]["version"] == "v1"
    root = call(http, "GET", "/openapi/v3")[1]
    assert "api/v1" in root["paths"] and "apis/apps/v1" in root["paths"]
    doc = call(http, "GET", root["paths"]["api/v1"]["serverRelativeURL"])[1]
    assert "/api/v1/namespaces/{namespace}/pods/{name}" in doc["paths"]
    assert_status(call(http, "GET", "/openapi/v2"), 404, "NotFound")
    resp = http.request("GET", "/healthz")
    assert resp.status == 200 and resp.data == b"ok"


def test_watch_stream_410_is_an_error_event(
    http: urllib3.HTTPSConnectionPool, https_server: RunningServer
) -> None:
    for _ in range(501):
        https_server.api.create("v1/configmaps", "default", {"metadata": {"generateName": "c-"}})
    resp = http.request(
        "GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=1", preload_content=False
    )
    try:
        assert resp.status == 200
        lines = [json.loads(line) for line in resp.data.splitlines() if line.strip()]
    finally:
        resp.release_conn()
    assert len(lines) == 1 and lines[0]["type"] == "ERROR"
    assert lines[0]["object"]["code"] == 410 and lines[0]["object"]["reason"] == "Expired"


def test_table_output_for_kubectl(http: urllib3.HTTPSConnectionPool) -> None:
    resp = http.request(
        "GET", "/api/v1/namespaces", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    )
    table = json.loads(resp.data)
    assert table["kind"] == "Table" and [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Status",
        "Age",
    ]
    assert [r["cells"][0] for r in table["rows"]] == [
        "default",
        "kube-node-lease",
        "kube-public",
        "kube-system",
    ]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_collection_verbs_and_delete_collection(http: urllib3.HTTPSConnectionPool) -> None:
    base = "/api/v1/namespaces/default/pods"
    assert_status(call(http, "PUT", base, json.dumps(POD).encode()), 405, "MethodNotAllowed")
    assert_status(call(http, "PATCH", base, b"{}", "application/merge-patch+json"), 405, "MethodNotAllowed")
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        body = {**POD, "metadata": {"name": name, "labels": {"app": app}}}
        assert call(http, "POST", base, json.dumps(body).encode())[0] == 201
    status, out = call(http, "DELETE", base + "?labelSelector=app%3Dx")
    assert status == 200 and sorted(i["metadata"]["name"] for i in out["items"]) == ["a", "b"]
    status, listed = call(http, "GET", base)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["c"]


def test_stop_is_idempotent_and_closes_keep_alive(
    https_server: RunningServer, http: urllib3.HTTPSConnectionPool
) -> None:
    assert call(http, "GET", "/version")[0] == 200  # a live keep-alive connection
    https_server.stop()
    https_server.stop()
    with pytest.raises(urllib3.exceptions.HTTPError):
        http.request("GET", "/version")


def test_unsupported_subresources_say_so(core_v1: kubernetes.client.CoreV1Api) -> None:
    # `kubectl exec` answered "the request body is empty"; a pod's logs and an unknown subresource
    # are named as unsupported instead.
    core_v1.create_namespaced_pod(
        "default", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    )
    with pytest.raises(kubernetes.client.ApiException) as logs:
        core_v1.read_namespaced_pod_log("p", "default")
    assert logs.value.status == 405
    assert "pods/log is not supported by the embedded cluster: it runs no containers" in str(logs.value.body)
