"""The admission errors (py_engine/workloadspread/admission/context.py) carry their words and fields:
the service answers the webhook with `message` and `code`, and logs the owner that is missing."""

from __future__ import annotations

import pytest

from py_engine.workloadspread.admission.context import AdmissionError, OwnerNotFound

pytestmark = pytest.mark.timeout(10)


def test_an_admission_error_keeps_its_message_and_answers_500() -> None:
    error = AdmissionError("WorkloadSpread default/ws: targetFilter.replicasPathList: bad")
    assert (error.message, error.code, str(error)) == (
        "WorkloadSpread default/ws: targetFilter.replicasPathList: bad",
        500,
        "WorkloadSpread default/ws: targetFilter.replicasPathList: bad",
    )


def test_owner_not_found_names_the_owner_and_answers_404() -> None:
    error = OwnerNotFound("apps/v1", "ReplicaSet", "team-a", "web-abc123")
    assert isinstance(error, AdmissionError)
    assert (error.api_version, error.kind, error.namespace, error.name, error.code) == (
        "apps/v1",
        "ReplicaSet",
        "team-a",
        "web-abc123",
        404,
    )
    expected = 'ReplicaSet "web-abc123" not found in namespace "team-a" (owner of the pod being admitted)'
    assert (error.message, str(error)) == (expected, expected)
