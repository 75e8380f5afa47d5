"""The `TargetNotFound` condition and its Events, on the pure core alone
(py_engine.workloadspread.controller.target): the exact condition and Event bodies, the
transition time kept while the reason holds, other conditions kept as stored. Written
for what mutation testing found unpinned (docs/testing.md, "Mutation testing"); the loop's
side (writes, logs) is in `runtime/test_target_not_found.py`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from py_engine.model.workloads import EMPTY_WHITELIST, parse_whitelist
from py_engine.model.workloadspread import WorkloadSpread
from py_engine.semantics.events import Event
from py_engine.workloadspread.controller.target import check_target, target_problem

pytestmark = pytest.mark.timeout(30)

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
STAMP = "2024-06-01T12:00:00Z"
EARLIER = "2024-05-30T08:00:00Z"
WORKLOAD = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"}}
GAME = {"apiVersion": "game.io/v2", "kind": "Game", "name": "g"}
FOREIGN = {"type": "Ready", "status": "True", "reason": "WorkloadNotFound", "message": "someone else's"}
MISSING_MESSAGE = "target ReplicaSet prod/web (apps/v1) does not exist"
GAME_MESSAGE = (
    "target Game prod/g (game.io/v2): kind 'Game' of group 'game.io' is not a built-in workload kind "
    "and not in the custom-workload whitelist, so the controller does not read it"
)


def spread(
    conditions: list[Any] | None = None,
    *,
    namespace: str | None = "prod",
    target: dict[str, str] | None = None,
    status: Any = None,
) -> WorkloadSpread:
    metadata: dict[str, Any] = {"name": "ws"}
    if namespace is not None:
        metadata["namespace"] = namespace
    obj: dict[str, Any] = {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": metadata,
        "spec": {
            "targetRef": target or {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web"},
            "subsets": [{"name": "a"}],
        },
    }
    if conditions is not None:
        obj["status"] = {"conditions": conditions}
    if status is not None:
        obj["status"] = status
    return WorkloadSpread.from_object(obj)


def stored(reason: str, *, status: str = "True", since: Any = EARLIER) -> dict[str, Any]:
    return {
        "type": "TargetNotFound",
        "status": status,
        "reason": reason,
        "message": "as stored",
        "lastTransitionTime": since,
    }


def missing_condition(since: str) -> dict[str, str]:
    """The condition a missing ReplicaSet prod/web is stored as."""
    return {
        "type": "TargetNotFound",
        "status": "True",
        "reason": "WorkloadNotFound",
        "message": MISSING_MESSAGE,
        "lastTransitionTime": since,
    }


def test_a_missing_workload_appears_with_the_exact_condition_and_warning() -> None:
    check = check_target(spread([FOREIGN]), None, EMPTY_WHITELIST, NOW)
    assert check.conditions == [FOREIGN, missing_condition(STAMP)]
    assert check.problem is not None
    assert (check.problem.reason, check.problem.message) == ("WorkloadNotFound", MISSING_MESSAGE)
    assert check.appeared is True
    assert check.events == [Event("Warning", "TargetNotFound", f"WorkloadSpread prod/ws: {MISSING_MESSAGE}")]


def test_a_kind_the_controller_does_not_read_is_named_with_its_group() -> None:
    check = check_target(spread(target=GAME), {"kind": "Game"}, EMPTY_WHITELIST, NOW)
    assert check.problem is not None
    assert (check.problem.reason, check.problem.message) == ("KindNotAllowed", GAME_MESSAGE)
    assert check.conditions[0]["reason"] == "KindNotAllowed"
    assert check.conditions[0]["message"] == GAME_MESSAGE
    assert check.events == [Event("Warning", "TargetNotFound", f"WorkloadSpread prod/ws: {GAME_MESSAGE}")]
    listed = parse_whitelist('{"workloads":[{"Group":"game.io","Kind":"Game"}]}')
    assert target_problem(spread(target=GAME), {"kind": "Game"}, listed) is None
    missing = target_problem(spread(target=GAME), None, listed)
    assert missing is not None and missing.reason == "WorkloadNotFound"


def test_a_spread_without_a_namespace_is_described_in_default() -> None:
    check = check_target(spread(namespace=None), None, EMPTY_WHITELIST, NOW)
    message = "target ReplicaSet default/web (apps/v1) does not exist"
    assert check.problem is not None and check.problem.message == message
    assert check.events == [Event("Warning", "TargetNotFound", f"WorkloadSpread default/ws: {message}")]
    found = check_target(spread([stored("WorkloadNotFound")], namespace=None), WORKLOAD, EMPTY_WHITELIST, NOW)
    assert found.events == [Event("Normal", "TargetFound", "WorkloadSpread default/ws: target found")]


def test_the_same_reason_keeps_its_transition_time_and_records_nothing() -> None:
    check = check_target(spread([FOREIGN, stored("WorkloadNotFound")]), None, EMPTY_WHITELIST, NOW)
    assert check.conditions == [FOREIGN, missing_condition(EARLIER)]
    assert check.problem is not None and check.problem.reason == "WorkloadNotFound"
    assert check.appeared is False
    assert check.events == []


def test_a_new_reason_is_a_new_transition() -> None:
    check = check_target(spread([stored("KindNotAllowed")]), None, EMPTY_WHITELIST, NOW)
    [condition] = check.conditions
    assert (condition["reason"], condition["lastTransitionTime"]) == ("WorkloadNotFound", STAMP)
    assert check.appeared is True
    assert check.events == [Event("Warning", "TargetNotFound", f"WorkloadSpread prod/ws: {MISSING_MESSAGE}")]


def test_a_stored_condition_that_is_not_true_or_has_no_time_starts_now() -> None:
    for previous in (stored("WorkloadNotFound", status="False"), stored("WorkloadNotFound", since=5)):
        check = check_target(spread([previous]), None, EMPTY_WHITELIST, NOW)
        [condition] = check.conditions
        assert condition["lastTransitionTime"] == STAMP
        if previous["status"] == "False":  # not a problem that held: it appears again
            assert check.appeared is True and len(check.events) == 1
        else:  # the same problem held; only its unreadable time is replaced
            assert check.appeared is False and check.events == []


def test_a_found_target_drops_the_condition_keeps_the_others_and_says_so_once() -> None:
    check = check_target(spread([FOREIGN, stored("WorkloadNotFound")]), WORKLOAD, EMPTY_WHITELIST, NOW)
    assert check.conditions == [FOREIGN]
    assert check.problem is None
    assert check.appeared is False
    assert check.events == [Event("Normal", "TargetFound", "WorkloadSpread prod/ws: target found")]


def test_a_found_target_without_the_condition_records_nothing() -> None:
    # A true condition of another type is not ours: no "target found" for it.
    check = check_target(spread([FOREIGN]), WORKLOAD, EMPTY_WHITELIST, NOW)
    assert check.conditions == [FOREIGN]
    assert check.events == []
    assert check.appeared is False
    # Neither is a TargetNotFound that was not "True".
    check = check_target(spread([stored("WorkloadNotFound", status="False")]), WORKLOAD, EMPTY_WHITELIST, NOW)
    assert check.conditions == []
    assert check.events == []


def test_malformed_stored_conditions_are_read_as_none() -> None:
    for status in ({"conditions": {"type": "TargetNotFound"}}, {"conditions": ["x", 3]}):
        check = check_target(spread(status=status), None, EMPTY_WHITELIST, NOW)
        assert [c["lastTransitionTime"] for c in check.conditions] == [STAMP]
        assert check.appeared is True
