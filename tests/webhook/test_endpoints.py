"""The endpoint objects (webhook/endpoints.py) and their registration (webhook/app.py): each path
is one `Endpoint` whose reader, decision and response builder the app uses, and `create_app`
registers exactly the endpoints plus the probes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from flask import Flask
from webhook_testkit import AnswersAtOnce, StubValidation

from py_engine.validation.verdict import Verdict
from py_engine.workloadspread.admission.service import Decision
from webhook.app import EndpointView, create_app
from webhook.endpoints import Endpoint, verdict_decision, webhook_endpoints
from webhook.metrics import WebhookMetrics
from webhook.review import ReviewError, parse_review, review_response

pytestmark = pytest.mark.timeout(30)


class Admission(AnswersAtOnce):
    def mutate_pod(self, request: Any) -> Decision:
        return Decision(True, "patched")

    def validate_pod(self, request: Any) -> Decision:
        return Decision(True, "released")


class RecordingValidation:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def review_workloadspread(self, request: Mapping[str, Any]) -> Verdict:
        self.seen.append(("workloadspread", str(request["uid"])))
        return Verdict(False, "invalid", 422, "spec.subsets: bad", "Invalid")

    def review_uniteddeployment(self, request: Mapping[str, Any]) -> Verdict:
        self.seen.append(("uniteddeployment", str(request["uid"])))
        return Verdict(True, "allowed", warnings=("deprecated field",))


def body(uid: str = "u-1") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "namespace": "default", "object": {"metadata": {}}},
    }


def test_the_four_endpoints_in_order_with_their_subjects_and_deferral() -> None:
    admission = Admission()
    endpoints = webhook_endpoints(admission, RecordingValidation())
    assert [(e.path, e.subject, e.decide_later is not None) for e in endpoints] == [
        ("/mutate/pods", "pod", True),
        ("/validate/pods", "pod", True),
        ("/validate/workloadspreads", "spread", False),
        ("/validate/uniteddeployments", "uniteddeployment", False),
    ]
    assert (
        endpoints[0].decide == admission.mutate_pod
        and endpoints[1].decide_later == admission.validate_pod_async
    )
    assert all(e.read is parse_review and e.respond is review_response for e in endpoints)


def test_the_validating_endpoints_ask_the_validation_port_and_answer_its_verdict() -> None:
    validation = RecordingValidation()
    _, _, spreads, united = webhook_endpoints(Admission(), validation)
    assert spreads.decide({"uid": "a"}) == Decision(
        False, "invalid", code=422, message="spec.subsets: bad", reason="Invalid"
    )
    assert united.decide({"uid": "b"}) == Decision(True, "allowed", warnings=("deprecated field",))
    assert validation.seen == [("workloadspread", "a"), ("uniteddeployment", "b")]


def test_verdict_decision_keeps_every_field_the_answer_carries() -> None:
    verdict = Verdict(False, "forbidden", 403, "may not", "Forbidden", ("w",))
    decision = verdict_decision(lambda request: verdict, {})
    assert (
        decision.allowed,
        decision.outcome,
        decision.code,
        decision.message,
        decision.reason,
        decision.warnings,
        decision.patch,
        dict(decision.audit),
    ) == (False, "forbidden", 403, "may not", "Forbidden", ("w",), None, {})


def test_an_extra_route_adds_a_path_or_replaces_a_decision_keeping_the_subject() -> None:
    def noop(request: Mapping[str, Any]) -> Decision:
        return Decision(True, "allowed")

    endpoints = webhook_endpoints(
        Admission(), StubValidation(), {"/noop": noop, "/validate/workloadspreads": noop}
    )
    by_path = {e.path: e for e in endpoints}
    assert [e.path for e in endpoints][-1] == "/noop" and len(endpoints) == 5
    assert by_path["/noop"] == Endpoint("/noop", noop)
    replaced = by_path["/validate/workloadspreads"]
    assert replaced.decide is noop and replaced.subject == "spread" and replaced.decide_later is None


def test_create_app_registers_the_endpoints_and_the_probes_only() -> None:
    app = create_app(Admission(), StubValidation(), metrics=WebhookMetrics())  # type: ignore[arg-type]
    rules = {
        (rule.rule, frozenset(rule.methods or ()) - {"HEAD", "OPTIONS"})
        for rule in app.url_map.iter_rules()
        if rule.endpoint != "static"
    }
    post, get = frozenset({"POST"}), frozenset({"GET"})
    assert rules == {
        ("/mutate/pods", post),
        ("/validate/pods", post),
        ("/validate/workloadspreads", post),
        ("/validate/uniteddeployments", post),
        ("/healthz", get),
        ("/readyz", get),
        ("/metrics", get),
    }
    views = [app.view_functions[path] for path in ("/mutate/pods", "/validate/uniteddeployments")]
    assert all(isinstance(view, EndpointView) for view in views)


def test_the_view_uses_the_endpoint_s_reader_and_response_builder() -> None:
    """An endpoint is the whole of what is specific to a path: swap its reader or its response
    builder and the view follows, with the HTTP rules, metrics and log record unchanged."""

    def read(raw: bytes) -> tuple[str, dict[str, Any]]:
        if b"forged" in raw:
            raise ReviewError(400, "forged review")
        return parse_review(raw)

    def respond(api_version: str, uid: str, decision: Decision) -> dict[str, Any]:
        return {"echo": uid, "outcome": decision.outcome}

    metrics = WebhookMetrics()
    endpoint = Endpoint("/custom", lambda request: Decision(True, "allowed"), read=read, respond=respond)
    app = Flask("endpoint-under-test")
    app.add_url_rule(
        "/custom", endpoint="/custom", view_func=EndpointView(endpoint, metrics, 4096), methods=["POST"]
    )
    client = app.test_client()
    answered = client.post("/custom", json=body("abc"))
    assert answered.status_code == 200 and answered.get_json() == {"echo": "abc", "outcome": "allowed"}
    refused = client.post(
        "/custom", data=json.dumps({**body(), "forged": 1}), content_type="application/json"
    )
    assert refused.status_code == 400 and refused.get_json()["message"] == "forged review"
    too_big = client.post("/custom", data=b"{" + b" " * 5000 + b"}", content_type="application/json")
    assert too_big.status_code == 413
    assert metrics.decisions.value(webhook="/custom", outcome="allowed") == 1
    assert metrics.decisions.value(webhook="/custom", outcome="bad-request") == 1
    assert metrics.requests.value(webhook="/custom", code="413") == 1
