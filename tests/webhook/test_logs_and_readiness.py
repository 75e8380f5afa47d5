"""The webhook's logs (one record per decision, fields, levels, JSON lines) and `/readyz`
(caches synced and the policy engine answering), over stub services and real engines."""

from __future__ import annotations

import io
import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from logging_kit import root_logger_restored
from webhook_testkit import AnswersAtOnce, StubValidation

from py_engine import logsetup
from py_engine.policy import PolicyError, create_engine
from py_engine.policy.opa_rest import OpaRestEngine
from py_engine.validation.verdict import Verdict
from py_engine.workloadspread.admission.service import Decision
from webhook.app import create_app
from webhook.metrics import WebhookMetrics
from webhook.readiness import PolicyHealth, Readiness

pytestmark = pytest.mark.timeout(60)


class StubView:
    def __init__(self, synced: bool = True) -> None:
        self.synced = synced

    def ready(self) -> bool:
        return self.synced


OPA_DOWN = StubValidation(
    Verdict(
        False,
        "error",
        code=500,
        message="WorkloadSpread validation failed to run: OPA down",
        reason="InternalError",
    )
)


class StubService(AnswersAtOnce):
    """Answers by pod name: `deny-me` is denied, `policy-down` raises PolicyError, `boom` crashes."""

    def __init__(self) -> None:
        self.view = StubView()
        self.validation_engine = None
        self.config = None

    def mutate_pod(self, request: dict[str, Any]) -> Decision:
        name = request.get("name")
        if name == "policy-down":
            raise PolicyError("OPA at http://127.0.0.1:1 unreachable: connection refused")
        if name == "boom":
            raise RuntimeError("boom")
        if name == "no-commit":
            return Decision(True, "commit-failed", warnings=("WorkloadSpread default/ws: write failed",))
        return Decision(True, "patched", patch=[], audit={"workloadspread": "ws", "subset": "zone-a"})

    def validate_pod(self, request: dict[str, Any]) -> Decision:
        return Decision(
            False,
            "denied",
            code=403,
            message="subset full",
            reason="Forbidden",
            audit={"workloadspread": "ws"},
        )


def review(name: str = "web-1", operation: str = "CREATE", uid: str = "u-1") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "operation": operation,
            "namespace": "default",
            "name": name,
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "object": {"metadata": {"name": name, "namespace": "default"}},
        },
    }


@pytest.fixture
def client() -> Any:
    return create_app(StubService(), OPA_DOWN, metrics=WebhookMetrics()).test_client()  # type: ignore[arg-type]


def app_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "webhook.app"]


def test_a_denial_is_exactly_one_record_with_its_cause_and_fields(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    resp = client.post("/validate/pods", json=review("web-7", "DELETE", uid="u-77"))
    assert resp.get_json()["response"]["allowed"] is False
    [record] = app_records(caplog)
    assert record.levelno == logging.WARNING and record.getMessage() == "admission denied"
    got = logsetup.record_fields(record)
    assert {
        k: got[k] for k in ("namespace", "pod", "spread", "decision", "operation", "uid", "code", "cause")
    } == {
        "namespace": "default",
        "pod": "web-7",
        "spread": "ws",
        "decision": "denied",
        "operation": "DELETE",
        "uid": "u-77",
        "code": 403,
        "cause": "subset full",
    }
    assert isinstance(got["duration_ms"], float) and got["duration_ms"] >= 0


def test_admissions_are_debug_records_and_info_stays_quiet(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    for i in range(5):
        client.post("/mutate/pods", json=review(f"web-{i}", uid=f"u-{i}"))
    assert app_records(caplog) == []
    caplog.set_level(logging.DEBUG)
    client.post("/mutate/pods", json=review("web-9"))
    [record] = app_records(caplog)
    assert record.levelno == logging.DEBUG
    got = logsetup.record_fields(record)
    assert (got["decision"], got["spread"], got["subset"], got["pod"]) == ("patched", "ws", "zone-a", "web-9")


@pytest.mark.parametrize(
    ("name", "level", "traceback"),
    [
        ("policy-down", logging.ERROR, False),
        ("boom", logging.ERROR, True),
        ("no-commit", logging.WARNING, False),
    ],
)
def test_errors_and_commit_failures_are_one_record_each(
    client: Any, caplog: pytest.LogCaptureFixture, name: str, level: int, traceback: bool
) -> None:
    caplog.set_level(logging.DEBUG)
    client.post("/mutate/pods", json=review(name))
    [record] = app_records(caplog)
    assert record.levelno == level and (record.exc_info is not None) == traceback
    got = logsetup.record_fields(record)
    assert got["pod"] == name and got["cause"]


def test_a_failed_validation_is_an_error_record(client: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    body = review("ws")
    body["request"]["resource"] = {
        "group": "spreadgate.dev",
        "version": "v1alpha1",
        "resource": "workloadspreads",
    }
    client.post("/validate/workloadspreads", json=body)
    [record] = app_records(caplog)
    got = logsetup.record_fields(record)
    assert record.levelno == logging.ERROR and "OPA down" in got["cause"] and got["spread"] == "ws"


@pytest.fixture
def json_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    with root_logger_restored():
        logsetup.configure("debug", "json", stream)
        yield stream


def test_json_format_lines_parse(client: Any, json_stream: io.StringIO) -> None:
    for name in ("web-1", "no-commit", "boom"):
        client.post("/mutate/pods", json=review(name))
    client.post("/validate/pods", json=review("web-2", "DELETE"))
    lines = json_stream.getvalue().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["level"] for e in entries if e["logger"] == "webhook.app"] == [
        "debug",
        "warning",
        "error",
        "warning",
    ]
    for entry in entries:
        assert {"ts", "level", "logger", "msg"} <= entry.keys()
    crash = next(e for e in entries if e["level"] == "error")
    assert crash["pod"] == "boom" and "RuntimeError: boom" in crash["exception"]


# ------------------------------------------------------------------ readiness


def dead_url() -> str:
    """A loopback port with nothing listening (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_readyz_fails_with_the_reason_while_opa_is_unreachable(caplog: pytest.LogCaptureFixture) -> None:
    url = dead_url()
    engine = OpaRestEngine(url)
    readiness = Readiness(lambda: True, engine, ttl=60.0)
    app = create_app(StubService(), OPA_DOWN, metrics=WebhookMetrics(), readiness=readiness.problem)  # type: ignore[arg-type]
    caplog.set_level(logging.INFO)
    try:
        client = app.test_client()
        for _ in range(3):
            resp = client.get("/readyz")
            assert resp.status_code == 503
            assert f"policy engine unreachable: OPA at {url} unreachable" in resp.get_data(as_text=True)
        assert client.get("/healthz").status_code == 200  # liveness only
    finally:
        engine.close()
    assert readiness.policy.probes == 1  # cached: three probes, one call to OPA
    [record] = [r for r in caplog.records if r.name == "webhook.readiness"]
    assert record.levelno == logging.WARNING and record.getMessage() == "not ready"
    assert url in logsetup.record_fields(record)["reason"]


def test_readyz_with_the_embedded_engine_and_synced_caches_is_ok(caplog: pytest.LogCaptureFixture) -> None:
    engine = create_engine()
    service = StubService()
    service.view.synced = False
    readiness = Readiness(service.view.ready, engine)
    app = create_app(service, OPA_DOWN, metrics=WebhookMetrics(), readiness=readiness.problem)  # type: ignore[arg-type]
    caplog.set_level(logging.INFO)
    try:
        client = app.test_client()
        resp = client.get("/readyz")
        assert (
            resp.status_code == 503 and resp.get_data(as_text=True) == "not ready: watch caches not synced\n"
        )
        service.view.synced = True
        resp = client.get("/readyz")
        assert resp.status_code == 200 and resp.get_data(as_text=True) == "ok\n"
    finally:
        engine.close()
    assert [r.levelname for r in caplog.records if r.name == "webhook.readiness"] == ["WARNING", "INFO"]


def test_policy_health_is_asked_once_per_ttl() -> None:
    class Engine:
        def __init__(self) -> None:
            self.answers: list[str | None] = ["down", None]

        def health(self, timeout: float) -> str | None:
            return self.answers.pop(0)

    now = [0.0]
    health = PolicyHealth(Engine(), ttl=5.0, clock=lambda: now[0])
    assert [health.problem() for _ in range(3)] == ["down"] * 3 and health.probes == 1
    now[0] = 5.0
    assert health.problem() is None and health.probes == 2
    assert PolicyHealth(object()).problem() is None  # an engine without health() counts as healthy
