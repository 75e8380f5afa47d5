"""The Flask app over a stub service: HTTP rules, AdmissionReview shape, fuzzing."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_kit import value
from webhook_testkit import AnswersAtOnce, StubValidation

from benchmarks.kube_objects import admission_review, pod_create_request
from py_engine.metrics import CONTENT_TYPE
from py_engine.workloadspread.admission.service import Decision
from webhook.app import create_app
from webhook.metrics import WebhookMetrics


class StubView:
    def __init__(self) -> None:
        self.synced = False

    def ready(self) -> bool:
        return self.synced


class StubService(AnswersAtOnce):
    def __init__(self) -> None:
        self.view = StubView()
        self.seen: list[dict[str, Any]] = []

    def mutate_pod(self, request: dict[str, Any]) -> Decision:
        self.seen.append(request)
        if request.get("name") == "crash":
            raise RuntimeError("boom")
        return Decision(
            True,
            "patched",
            patch=[{"op": "add", "path": "/metadata/labels/x", "value": "y"}],
            warnings=("w" * 500,),
            audit={"subset": "a"},
        )

    def validate_pod(self, request: dict[str, Any]) -> Decision:
        return Decision(False, "denied", code=403, message="no", reason="Forbidden")


@pytest.fixture
def setup() -> Any:
    service = StubService()
    metrics = WebhookMetrics()
    app = create_app(service, StubValidation(), metrics=metrics, max_body=64 * 1024)  # type: ignore[arg-type]
    return app.test_client(), service, metrics


def review(uid: str = "u-1", version: str = "admission.k8s.io/v1", **request: Any) -> dict[str, Any]:
    return {
        **admission_review({**pod_create_request({"metadata": {}}, uid), **request}),
        "apiVersion": version,
    }


def test_patch_response_shape_and_uid(setup: Any) -> None:
    client, _, metrics = setup
    resp = client.post("/mutate/pods", json=review("abc"))
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["apiVersion"] == "admission.k8s.io/v1" and body["kind"] == "AdmissionReview"
    r = body["response"]
    assert r["uid"] == "abc" and r["allowed"] is True and r["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(r["patch"])) == [
        {"op": "add", "path": "/metadata/labels/x", "value": "y"}
    ]
    assert r["auditAnnotations"] == {"subset": "a"} and len(r["warnings"][0]) <= 240
    assert metrics.decisions.value(webhook="/mutate/pods", outcome="patched") == 1
    assert metrics.latency.count(webhook="/mutate/pods") == 1


def test_v1beta1_answered_in_kind_and_denial_status(setup: Any) -> None:
    client, _, _ = setup
    body = client.post("/validate/pods", json=review("x", "admission.k8s.io/v1beta1")).get_json()
    assert body["apiVersion"] == "admission.k8s.io/v1beta1"
    assert body["response"] == {
        "uid": "x",
        "allowed": False,
        "status": {"code": 403, "message": "no", "status": "Failure", "reason": "Forbidden"},
    }


def test_handler_crash_is_a_denial_with_uid_not_a_traceback(setup: Any) -> None:
    client, _, metrics = setup
    resp = client.post("/mutate/pods", json=review("c1", name="crash"))
    assert resp.status_code == 200
    r = resp.get_json()["response"]
    assert r["uid"] == "c1" and r["allowed"] is False and r["status"]["code"] == 500
    assert "boom" in r["status"]["message"] and "Traceback" not in resp.get_data(as_text=True)
    assert metrics.decisions.value(webhook="/mutate/pods", outcome="error") == 1


@pytest.mark.parametrize(
    "body, fragment",
    [
        (b"", "empty"),
        (b"{not json", "not valid JSON"),
        (b"[1,2]", "JSON object"),
        (json.dumps({"kind": "Pod"}).encode(), "AdmissionReview"),
        (json.dumps({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v2"}).encode(), "apiVersion"),
        (json.dumps({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}).encode(), "no request"),
        (json.dumps(review(uid="")).encode(), "uid"),
        (json.dumps(review(object=[1])).encode(), "request.object"),
        (json.dumps(review(dryRun="yes")).encode(), "dryRun"),
    ],
)
def test_malformed_bodies_are_400_with_a_message(setup: Any, body: bytes, fragment: str) -> None:
    client, service, _ = setup
    resp = client.post("/mutate/pods", data=body, content_type="application/json")
    assert resp.status_code == 400
    assert fragment in resp.get_json()["message"]
    assert service.seen == []


def test_content_type_size_and_routes(setup: Any) -> None:
    client, _, _ = setup
    resp = client.post("/mutate/pods", data=json.dumps(review()), content_type="text/plain")
    assert resp.status_code == 415 and "application/json" in resp.get_json()["message"]
    big = json.dumps(review(object={"metadata": {"annotations": {"x": "y" * 70_000}}}))
    resp = client.post("/mutate/pods", data=big, content_type="application/json")
    assert resp.status_code == 413
    assert client.get("/mutate/pods").status_code == 405
    assert client.post("/nope", json={}).status_code == 404


def test_probes_and_metrics(setup: Any) -> None:
    client, service, _ = setup
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 503
    service.view.synced = True
    assert client.get("/readyz").status_code == 200
    client.post("/mutate/pods", json=review())
    page = client.get("/metrics")
    assert page.status_code == 200 and page.content_type == CONTENT_TYPE
    text = page.get_data(as_text=True)
    assert value(text, "spreadgate_webhook_latency_seconds_count", webhook="/mutate/pods") == 1
    assert value(text, "spreadgate_webhook_requests_total", code="200", webhook="/mutate/pods") == 1
    assert value(text, "spreadgate_webhook_decisions_total", outcome="patched", webhook="/mutate/pods") == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=10,
)
reviews = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["admission.k8s.io/v1", "admission.k8s.io/v1beta1", "v1"])
        | json_values,
        "kind": st.sampled_from(["AdmissionReview"]) | json_values,
        "request": st.fixed_dictionaries(
            {},
            optional={
                "uid": st.text(max_size=5) | json_values,
                "operation": json_values,
                "name": json_values,
                "namespace": json_values,
                "object": json_values,
                "oldObject": json_values,
                "dryRun": json_values,
                "resource": json_values,
                "subResource": json_values,
            },
        )
        | json_values,
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=reviews, path=st.sampled_from(["/mutate/pods", "/validate/pods", "/validate/workloadspreads"]))
def test_fuzzed_reviews_never_5xx_and_always_well_formed(setup: Any, body: Any, path: str) -> None:
    client, _, _ = setup
    resp = client.post(path, data=json.dumps(body), content_type="application/json")
    assert resp.status_code in (200, 400)
    out = resp.get_json()
    if resp.status_code == 200:
        assert out["kind"] == "AdmissionReview" and out["apiVersion"] == body["apiVersion"]
        assert out["response"]["uid"] == body["request"]["uid"] and isinstance(
            out["response"]["allowed"], bool
        )
    else:
        assert out["kind"] == "Status" and out["message"]
