"""The isolated backend: regorus in worker processes, each evaluation under a deadline (issue 23).

regorus holds the GIL for a whole evaluation and cannot be stopped: in-process, a costly
evaluation stalls every thread of the webhook. In a worker, the waiting thread releases the
GIL, other threads keep running, and past the deadline the worker is killed and replaced.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from py_engine.policy import PolicyError, PolicySource, load_policy_sources
from py_engine.policy.embedded import EmbeddedEngine
from py_engine.policy.isolated import IsolatedEngine, PolicyDeadlineExceeded
from py_engine.validation.uniteddeployment import review_uniteddeployment

POLICY = PolicySource(
    "demo.rego",
    "package demo\nimport rego.v1\n"
    'names contains n if { some n in input.names; startswith(n, "a") }\n'
    "first := input.names[0]\n"
    "broken := 1 / input.zero\n"
    # tens of millions of steps: minutes for regorus, whatever the machine
    "slow := count([x | some a in numbers.range(1, input.n); "
    "some b in numbers.range(1, input.n); x := a + b])\n",
)


@pytest.fixture
def engine() -> Iterator[IsolatedEngine]:
    isolated = IsolatedEngine((POLICY,), deadline_seconds=20.0, workers=1).start()
    yield isolated
    isolated.close()


def test_answers_as_the_embedded_engine(engine: IsolatedEngine) -> None:
    embedded = EmbeddedEngine((POLICY,))
    for rule, document in [
        ("data.demo.names", {"names": ["ab", "b", "aa"]}),
        ("data.demo.first", {"names": []}),
        ("data.demo.first", {"names": ["x"]}),
    ]:
        assert engine.evaluate(rule, document) == embedded.evaluate(rule, document)
    assert engine.evaluate("data.demo.first", {"names": []}) is None
    with pytest.raises(PolicyError, match=r"evaluating data\.demo\.broken"):
        engine.evaluate("data.demo.broken", {"zero": 0})
    assert engine.evaluate("data.demo.first", {"names": ["after an error"]}) == "after an error"


def test_past_the_deadline_the_worker_is_stopped_while_other_threads_run(engine: IsolatedEngine) -> None:
    engine.deadline_seconds = 1.0
    outcome: list[BaseException] = []

    def evaluate() -> None:
        try:
            engine.evaluate("data.demo.slow", {"n": 8000})
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=evaluate)
    started = time.monotonic()
    worker.start()
    # This thread keeps running while the policy evaluates: the longest pause between two of
    # its steps is short (in-process, regorus would hold the GIL for the whole evaluation).
    longest_pause, last = 0.0, time.monotonic()
    while worker.is_alive() and time.monotonic() - started < 30:
        now = time.monotonic()
        longest_pause, last = max(longest_pause, now - last), now
        worker.join(timeout=0.01)
    assert not worker.is_alive()
    assert longest_pause < 0.5
    assert len(outcome) == 1 and isinstance(outcome[0], PolicyDeadlineExceeded)
    assert "did not finish within its deadline of 1 s" in str(outcome[0])
    engine.deadline_seconds = 20.0
    assert engine.evaluate("data.demo.first", {"names": ["replaced"]}) == "replaced"


def test_a_request_waiting_for_a_busy_worker_is_refused_at_its_deadline(engine: IsolatedEngine) -> None:
    engine.deadline_seconds = 1.0
    errors: list[str] = []
    slow = threading.Thread(target=lambda: errors.append(_error_of(engine, "data.demo.slow", {"n": 8000})))
    slow.start()
    errors.append(_error_of(engine, "data.demo.first", {"names": ["x"]}))
    slow.join(timeout=30)
    assert any("every policy worker was busy" in e for e in errors), errors


def _error_of(engine: IsolatedEngine, rule: str, document: dict[str, object]) -> str:
    try:
        engine.evaluate(rule, document)
    except PolicyError as exc:
        return str(exc)
    return ""


def test_a_review_past_the_deadline_is_denied_naming_the_cause() -> None:
    slow_policy = PolicySource(
        "slow_ud.rego",
        "package spreadgate.uniteddeployment\nimport rego.v1\n"
        "violation contains count([x | some a in numbers.range(1, 9000); "
        "some b in numbers.range(1, 9000); x := a + b])\n",
    )
    isolated = IsolatedEngine((slow_policy,), deadline_seconds=0.5, workers=1)
    try:
        result = review_uniteddeployment(
            isolated,
            {
                "uid": "u",
                "operation": "CREATE",
                "object": {
                    "apiVersion": "spreadgate.dev/v1beta1",
                    "kind": "UnitedDeployment",
                    "metadata": {"name": "u"},
                },
            },
        )
    finally:
        isolated.close()
    assert (result.allowed, result.code, result.outcome) == (False, 500, "error")
    assert "did not finish within its deadline of 0.5 s" in result.message


def test_shipped_policies_load_in_a_worker() -> None:
    isolated = IsolatedEngine(load_policy_sources(), workers=1)
    try:
        assert isolated.evaluate("data.spreadgate.validation.max_subsets", {}) == 100
    finally:
        isolated.close()
