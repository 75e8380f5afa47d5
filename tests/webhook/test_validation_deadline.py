"""A UnitedDeployment review whose policy evaluation passes its deadline (issue 23): denied,
the answer naming the deadline, and one log record (webhook/app.py) with the same cause."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from py_engine import logsetup
from py_engine.policy import PolicySource
from py_engine.policy.isolated import IsolatedEngine
from py_engine.semantics.clock import RealClock
from py_engine.validation.service import ValidationService
from py_engine.workloadspread.admission.service import AdmissionService
from webhook.app import create_app

# Tens of millions of steps: the deadline always passes first.
SLOW = PolicySource(
    "slow.rego",
    "package spreadgate.uniteddeployment\nimport rego.v1\n"
    "violation contains count([x | some a in numbers.range(1, 9000); "
    "some b in numbers.range(1, 9000); x := a + b])\n",
)


def test_a_review_past_its_deadline_is_denied_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    engine = IsolatedEngine((SLOW,), deadline_seconds=2.0, workers=1).start()
    try:
        # The real services: the UnitedDeployment route reads only the validation engine (no author gate).
        service = AdmissionService(None, None, RealClock())  # type: ignore[arg-type]
        validation = ValidationService(None, engine)  # type: ignore[arg-type]
        client = create_app(service, validation, ready=lambda: True).test_client()
        review: dict[str, Any] = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "operation": "CREATE",
                "namespace": "default",
                "name": "ud",
                "resource": {
                    "group": "spreadgate.dev",
                    "version": "v1beta1",
                    "resource": "uniteddeployments",
                },
                "object": {
                    "apiVersion": "spreadgate.dev/v1beta1",
                    "kind": "UnitedDeployment",
                    "metadata": {"name": "ud", "namespace": "default"},
                },
            },
        }
        response = client.post("/validate/uniteddeployments", json=review).get_json()["response"]
    finally:
        engine.close()
    assert response["allowed"] is False and response["status"]["code"] == 500
    assert "did not finish within its deadline of 2 s" in response["status"]["message"]
    [record] = [r for r in caplog.records if r.name == "webhook.app"]
    assert record.levelno == logging.ERROR and record.exc_info is None
    assert "did not finish within its deadline of 2 s" in logsetup.record_fields(record)["cause"]
