"""Admission webhooks called over HTTPS (AdmissionReview v1) by the emulated API server."""

from __future__ import annotations

import base64
import json
import socket
import time
from typing import Any

import kubernetes
import pytest
from kubernetes.client import ApiException

from benchmarks.kube_objects import role_binding
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.interface import ApiError
from py_engine.sim.tls import CertificateAuthority
from py_engine.sim.webhook_stub import WebhookStub, webhook_configuration

MWC = "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VWC = "admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def pod(name: str | None = "p", labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": labels or {"app": "web"}}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = "gen-"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


def api_error(fn: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn()
    return info.value


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def label_patch(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "allowed": True,
        "warnings": ["labelled by the test webhook"],
        "patch": [{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}],
    }


def test_mutating_webhook_patch_applied_over_http(
    core_v1: kubernetes.client.CoreV1Api, apiserver: ApiServer, webhook_stub: WebhookStub
) -> None:
    webhook_stub.set_decide(label_patch)
    apiserver.create(MWC, None, webhook_configuration("label", webhook_stub.url, webhook_stub.ca_bundle))
    resp = core_v1.create_namespaced_pod("default", pod(None), _preload_content=False)
    try:
        body = json.loads(resp.data)
        warnings = resp.headers.getlist("Warning")
    finally:
        resp.release_conn()
    assert body["metadata"]["labels"] == {"app": "web", "mutated": "yes"}
    assert warnings == ['299 - "labelled by the test webhook"']
    stored = apiserver.get("v1/pods", "default", body["metadata"]["name"])
    assert stored["metadata"]["labels"]["mutated"] == "yes"
    (req,) = list(webhook_stub.calls)
    assert req["operation"] == "CREATE" and req["name"] == ""  # generateName: no name yet
    assert req["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert req["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert req["namespace"] == "default" and req["dryRun"] is False
    assert req["object"]["metadata"]["generateName"] == "gen-" and req["oldObject"] is None
    assert req["options"]["kind"] == "CreateOptions"
    assert req["userInfo"]["username"] == "kubernetes-admin"
    assert apiserver.admission_audit[-1]["patched"] is True


def test_update_and_delete_send_old_object(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    rules = [
        {"operations": ["UPDATE", "DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}
    ]
    apiserver.create(
        VWC,
        None,
        webhook_configuration("audit", webhook_stub.url, webhook_stub.ca_bundle, mutating=False, rules=rules),
    )
    apiserver.create("v1/pods", "default", pod("p"))
    assert list(webhook_stub.calls) == []  # CREATE is not in the rules
    apiserver.patch("v1/pods", "default", "p", {"metadata": {"labels": {"v": "2"}}}, "merge")
    apiserver.patch(
        "v1/pods", "default", "p", {"status": {"phase": "Running"}}, "merge", subresource="status"
    )
    apiserver.delete("v1/pods", "default", "p")
    upd, dele = list(webhook_stub.calls)  # the status write does not match "pods"
    assert upd["operation"] == "UPDATE" and upd["oldObject"]["metadata"]["labels"] == {"app": "web"}
    assert upd["object"]["metadata"]["labels"] == {"app": "web", "v": "2"}
    assert dele["operation"] == "DELETE" and dele["object"] is None
    assert dele["oldObject"]["metadata"]["name"] == "p" and dele["options"]["kind"] == "DeleteOptions"


def test_validating_denial_is_returned_like_kubernetes(
    core_v1: kubernetes.client.CoreV1Api, apiserver: ApiServer, webhook_stub: WebhookStub
) -> None:
    webhook_stub.set_decide(
        lambda r: {
            "allowed": False,
            "status": {"code": 403, "reason": "Forbidden", "message": "pods need an owner"},
        }
    )
    apiserver.create(
        VWC, None, webhook_configuration("deny", webhook_stub.url, webhook_stub.ca_bundle, mutating=False)
    )
    with pytest.raises(ApiException) as info:
        core_v1.create_namespaced_pod("default", pod("p"))
    body = json.loads(info.value.body)
    assert info.value.status == 403 and body["kind"] == "Status" and body["status"] == "Failure"
    assert body["message"] == 'admission webhook "deny.spreadgate.dev" denied the request: pods need an owner'
    assert api_error(lambda: apiserver.get("v1/pods", "default", "p")).code == 404
    webhook_stub.set_decide(lambda r: {"allowed": False})
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("q")))
    assert err.code == 400 and err.status["message"].endswith("denied the request without explanation")


@pytest.mark.parametrize(("policy", "allowed"), [("Ignore", True), ("Fail", False)])
def test_failure_policy_with_webhook_down(
    apiserver: ApiServer, webhook_stub: WebhookStub, policy: str, allowed: bool
) -> None:
    cfg = webhook_configuration(
        "down", f"https://127.0.0.1:{closed_port()}", webhook_stub.ca_bundle, failurePolicy=policy
    )
    apiserver.create(MWC, None, cfg)
    if allowed:
        assert apiserver.create("v1/pods", "default", pod("p"))["metadata"]["name"] == "p"
    else:
        err = api_error(lambda: apiserver.create("v1/pods", "default", pod("p")))
        assert err.code == 500 and 'failed calling webhook "down.spreadgate.dev"' in err.status["message"]
    assert "error" in apiserver.admission_audit[-1]


def test_untrusted_ca_bundle_fails_tls(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    other = CertificateAuthority("someone-else")
    bundle = base64.b64encode(other.cert_pem.encode()).decode()
    apiserver.create(MWC, None, webhook_configuration("tls", webhook_stub.url, bundle))
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("p")))
    assert err.code == 500 and "failed calling webhook" in err.status["message"]
    assert list(webhook_stub.calls) == []


def test_webhook_timeout(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    def slow(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(1.5)  # simulates a slow webhook, longer than timeoutSeconds
        return {"allowed": True}

    webhook_stub.set_decide(slow)
    apiserver.create(
        MWC, None, webhook_configuration("slow", webhook_stub.url, webhook_stub.ca_bundle, timeoutSeconds=1)
    )
    started = time.monotonic()
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("p")))
    assert err.code == 500 and time.monotonic() - started < 1.45


def test_namespace_and_object_selectors(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    apiserver.create(
        "v1/namespaces", None, {"metadata": {"name": "excluded", "labels": {"spreadgate": "off"}}}
    )
    apiserver.create(
        MWC,
        None,
        webhook_configuration(
            "sel",
            webhook_stub.url,
            webhook_stub.ca_bundle,
            namespaceSelector={
                "matchExpressions": [{"key": "spreadgate", "operator": "NotIn", "values": ["off"]}]
            },
            objectSelector={"matchLabels": {"app": "web"}},
        ),
    )
    apiserver.create("v1/pods", "excluded", pod("a"))
    apiserver.create("v1/pods", "default", pod("b", {"app": "db"}))
    assert list(webhook_stub.calls) == []
    apiserver.create("v1/pods", "default", pod("c"))
    assert [c["object"]["metadata"]["name"] for c in webhook_stub.calls] == ["c"]


def test_rule_matching_wildcards_scope_and_subresources(
    apiserver: ApiServer, webhook_stub: WebhookStub
) -> None:
    rules = [
        {
            "operations": ["*"],
            "apiGroups": ["*"],
            "apiVersions": ["*"],
            "resources": ["*/status"],
            "scope": "Namespaced",
        }
    ]
    apiserver.create(
        VWC,
        None,
        webhook_configuration(
            "status", webhook_stub.url, webhook_stub.ca_bundle, mutating=False, rules=rules
        ),
    )
    apiserver.create("v1/pods", "default", pod("p"))
    apiserver.create("v1/nodes", None, {"metadata": {"name": "n1"}})
    apiserver.patch(
        "v1/nodes", None, "n1", {"status": {"phase": "x"}}, "merge", subresource="status"
    )  # Cluster
    apiserver.patch(
        "v1/pods", "default", "p", {"status": {"phase": "Running"}}, "merge", subresource="status"
    )
    (call,) = list(webhook_stub.calls)
    assert call["subResource"] == "status" and call["resource"]["resource"] == "pods"
    exact = [
        {
            "operations": ["CREATE"],
            "apiGroups": ["apps"],
            "apiVersions": ["v1beta1"],
            "resources": ["deployments"],
        }
    ]
    apiserver.create(
        VWC,
        None,
        webhook_configuration(
            "exact",
            webhook_stub.url,
            webhook_stub.ca_bundle,
            mutating=False,
            rules=exact,
            matchPolicy="Exact",
        ),
    )
    apiserver.create(
        VWC,
        None,
        webhook_configuration(
            "equiv",
            webhook_stub.url,
            webhook_stub.ca_bundle,
            mutating=False,
            rules=exact,
            matchPolicy="Equivalent",
        ),
    )
    webhook_stub.calls.clear()
    apiserver.create(
        "apps/v1/deployments",
        "default",
        {
            "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
    )
    assert len(webhook_stub.calls) == 1  # only the Equivalent webhook matches apps/v1


def test_eviction_goes_through_admission(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    rules = [
        {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/eviction"]}
    ]
    webhook_stub.set_decide(
        lambda r: {"allowed": r["object"]["metadata"]["name"] != "keep", "status": {"message": "protected"}}
    )
    apiserver.create(
        VWC,
        None,
        webhook_configuration("evict", webhook_stub.url, webhook_stub.ca_bundle, mutating=False, rules=rules),
    )
    for name in ("keep", "go"):
        apiserver.create("v1/pods", "default", pod(name))
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction"}
    err = api_error(
        lambda: apiserver.create(
            "v1/pods",
            "default",
            {**eviction, "metadata": {"name": "keep"}},
            subresource="eviction",
            name="keep",
        )
    )
    assert err.code == 400 and "protected" in err.status["message"]
    assert apiserver.get("v1/pods", "default", "keep")
    apiserver.create(
        "v1/pods", "default", {**eviction, "metadata": {"name": "go"}}, subresource="eviction", name="go"
    )
    assert api_error(lambda: apiserver.get("v1/pods", "default", "go")).code == 404
    kinds = [(c["kind"]["kind"], c["subResource"]) for c in webhook_stub.calls]
    assert kinds == [("Eviction", "eviction"), ("Eviction", "eviction")]


def test_dry_run_and_side_effects(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    apiserver.create(MWC, None, webhook_configuration("safe", webhook_stub.url, webhook_stub.ca_bundle))
    apiserver.create("v1/pods", "default", pod("p"), dry_run=True)
    assert [c["dryRun"] for c in webhook_stub.calls] == [True]
    apiserver.create(
        MWC,
        None,
        webhook_configuration("effects", webhook_stub.url, webhook_stub.ca_bundle, sideEffects="Some"),
    )
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("p"), dry_run=True))
    assert (
        err.code == 400
        and err.status["message"] == 'admission webhook "effects.spreadgate.dev" does not support dry run'
    )
    assert apiserver.create("v1/pods", "default", pod("p"))  # a real request calls both


def test_service_reference_resolved_and_verified_by_service_name(
    apiserver: ApiServer, webhook_stub: WebhookStub
) -> None:
    webhook_stub.set_decide(label_patch)
    cfg = webhook_configuration("svc", "unused", webhook_stub.ca_bundle)
    cfg["webhooks"][0]["clientConfig"] = {
        "caBundle": webhook_stub.ca_bundle,
        "service": {"namespace": "spreadgate-system", "name": "stub", "port": 443, "path": "/mutate"},
    }
    apiserver.create(MWC, None, cfg)
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("a")))
    assert err.code == 500 and "no endpoint" in err.status["message"]
    apiserver.set_service_resolver({("spreadgate-system", "stub", 443): webhook_stub.url})
    out = apiserver.create("v1/pods", "default", pod("b"))
    assert out["metadata"]["labels"]["mutated"] == "yes"
    assert apiserver.last_warnings() == ["labelled by the test webhook"]


def test_invalid_mutation_is_rejected(apiserver: ApiServer, webhook_stub: WebhookStub) -> None:
    webhook_stub.set_decide(
        lambda r: {
            "allowed": True,
            "patch": [{"op": "replace", "path": "/metadata/name", "value": "renamed"}],
        }
    )
    apiserver.create(MWC, None, webhook_configuration("rename", webhook_stub.url, webhook_stub.ca_bundle))
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("p")))
    assert err.code == 500 and "metadata.name may not be changed" in err.status["message"]
    webhook_stub.set_decide(
        lambda r: {"allowed": True, "patch": [{"op": "remove", "path": "/spec/containers"}]}
    )
    err = api_error(lambda: apiserver.create("v1/pods", "default", pod("p")))
    assert err.code == 422  # the mutated object is validated again


def test_webhook_configuration_validation(apiserver: ApiServer) -> None:
    cfg = webhook_configuration("bad", "https://127.0.0.1:1", "", sideEffects="Maybe")
    cfg["webhooks"][0]["admissionReviewVersions"] = ["v1beta1"]
    err = api_error(lambda: apiserver.create(MWC, None, cfg))
    fields = {c["field"] for c in err.status["details"]["causes"]}
    assert err.code == 422 and {"webhooks[0].sideEffects", "webhooks[0].admissionReviewVersions"} <= fields


def test_impersonated_user_reaches_the_webhook(
    k8s_client: kubernetes.client.ApiClient, apiserver: ApiServer, webhook_stub: WebhookStub
) -> None:
    apiserver.create(MWC, None, webhook_configuration("who", webhook_stub.url, webhook_stub.ca_bundle))
    # The impersonated ServiceAccount needs its own grant (RBAC is enforced over HTTPS).
    apiserver.create(
        "rbac.authorization.k8s.io/v1/rolebindings",
        "default",
        role_binding(
            "rs-edit", "edit", "replicaset-controller", subject_kind="ServiceAccount", namespace="kube-system"
        ),
    )
    k8s_client.set_default_header(
        "Impersonate-User", "system:serviceaccount:kube-system:replicaset-controller"
    )
    kubernetes.client.CoreV1Api(k8s_client).create_namespaced_pod("default", pod("p"))
    apiserver.as_user("alice", ["devs"]).create("v1/pods", "default", pod("q"))
    users = [c["userInfo"]["username"] for c in webhook_stub.calls]
    assert users == ["system:serviceaccount:kube-system:replicaset-controller", "alice"]
    assert webhook_stub.calls[0]["userInfo"]["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
        "system:authenticated",
    ]
    assert webhook_stub.calls[1]["userInfo"]["groups"] == ["devs"]
