"""The admission errors and the committer port's default `submit_async`, field by field
(py_engine/workloadspread/admission/context.py, ports.py; mutation survivors of run A2,
MUTATION-admission.md)."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.workloadspread.admission.context import AdmissionError, OwnerNotFound
from py_engine.workloadspread.admission.ports import (
    Apply,
    CommitError,
    CommitFailed,
    CommitTimeout,
    SpreadCommitter,
    SpreadNotFound,
)


def test_an_admission_error_carries_its_message_and_code() -> None:
    error = AdmissionError("subset patch does not apply")
    assert (error.message, str(error), error.code) == (
        "subset patch does not apply",
        "subset patch does not apply",
        500,
    )


def test_a_missing_owner_is_named_with_every_field() -> None:
    error = OwnerNotFound("apps/v1", "ReplicaSet", "team-a", "web-abc123")
    expected = 'ReplicaSet "web-abc123" not found in namespace "team-a" (owner of the pod being admitted)'
    assert (error.message, str(error), error.code) == (expected, expected, 404)
    assert (error.api_version, error.kind, error.namespace, error.name) == (
        "apps/v1",
        "ReplicaSet",
        "team-a",
        "web-abc123",
    )


@pytest.mark.parametrize(
    ("error_type", "reason"),
    [
        (CommitFailed, "CommitFailed"),
        (CommitTimeout, "CommitTimeout"),
        (SpreadNotFound, "NotFound"),
        (CommitError, "CommitError"),
    ],
)
def test_a_commit_failure_carries_its_message_and_reason(error_type: type[CommitFailed], reason: str) -> None:
    error = error_type("status write refused: 422")
    assert (error.message, str(error), error.args, error.reason) == (
        "status write refused: 422",
        "status write refused: 422",
        ("status write refused: 422",),
        reason,
    )


class _Calls(SpreadCommitter):
    """A committer that records how the port's default `submit_async` calls `submit`."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def submit(
        self, namespace: str, name: str, apply: Apply[Any], deadline: float, *, dry_run: bool = False
    ) -> Any:
        self.calls.append((namespace, name, apply, deadline, dry_run))
        if self.fail is not None:
            raise self.fail
        return "result"


def _apply(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    return None, "unused"


@pytest.mark.parametrize("dry_run", [None, False, True], ids=["default", "explicit write", "dry run"])
def test_the_default_submit_async_hands_every_argument_to_submit(dry_run: bool | None) -> None:
    committer = _Calls()
    answers: list[tuple[Any, BaseException | None]] = []
    if dry_run is None:
        committer.submit_async("team-a", "ws", _apply, 12.5, lambda r, e: answers.append((r, e)))
    else:
        committer.submit_async(
            "team-a", "ws", _apply, 12.5, lambda r, e: answers.append((r, e)), dry_run=dry_run
        )
    assert committer.calls == [("team-a", "ws", _apply, 12.5, bool(dry_run))]
    assert answers == [("result", None)]


def test_the_default_submit_async_answers_a_failure_with_the_error() -> None:
    failure = SpreadNotFound("WorkloadSpread team-a/ws not found")
    committer = _Calls(fail=failure)
    answers: list[tuple[Any, ...]] = []
    committer.submit_async("team-a", "ws", _apply, 1.0, lambda *args: answers.append(args))
    assert len(answers) == 1 and answers[0][0] is None and answers[0][1] is failure and len(answers[0]) == 2
