"""Condition setters: what mutation testing (run U1) found unpinned. A subset's setter (Kruise's
`UnitedDeploymentSubsetStatus.SetCondition`), stated literally: nothing changes while status and
reason stay; a condition of a new type is appended after the others; a changed one is replaced in
place; the others are kept as they are, as copies."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ud_testkit import condition

from py_engine.uniteddeployment.controller.conditions import make, remove, set_condition, set_subset_condition

pytestmark = pytest.mark.timeout(30)

READY = condition("Ready", "True", "Up", "", "T1")
SCHEDULABLE = condition("Schedulable", "True", "Ok", "", "T1")


def test_a_new_type_is_appended_after_copies_of_the_others() -> None:
    new = condition("Schedulable", "False", "Down", "m", "T2")
    result = set_subset_condition([READY], new)
    assert result == [READY, new]
    assert result[0] is not READY and result[1] is not new


def test_a_changed_condition_is_replaced_in_place_and_the_others_are_kept() -> None:
    new = condition("Ready", "False", "Down", "m", "T2")
    result = set_subset_condition([READY, SCHEDULABLE], new)
    assert result == [new, SCHEDULABLE]
    assert result[1] is not SCHEDULABLE
    last = {**SCHEDULABLE, "status": "False", "lastTransitionTime": "T3"}
    assert set_subset_condition([READY, SCHEDULABLE], last) == [READY, last]


def test_a_subset_condition_with_the_same_status_and_reason_is_left_as_it_is() -> None:
    new = {**READY, "message": "new words", "lastTransitionTime": "T9"}
    assert set_subset_condition([READY, SCHEDULABLE], new) == [READY, SCHEDULABLE]


# The UnitedDeployment's own conditions (Kruise's SetUnitedDeploymentCondition): nothing changes
# while status and reason stay; a changed one moves to the end, keeping its time when only the
# reason changed.

OLD = condition("SubsetUpdated", "True", "", "", "T1")
OTHER = condition("SubsetProvisioned", "True", "", "", "T1")


def test_make_writes_every_field() -> None:
    assert make("Kind", False, "Why", "what", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == condition(
        "Kind", "False", "Why", "what", "2026-01-02T03:04:05Z"
    )


def test_a_new_reason_keeps_the_time_and_moves_the_condition_last() -> None:
    new = {**OLD, "reason": "Other", "message": "m", "lastTransitionTime": "T2"}
    assert set_condition([OLD, OTHER], new) == [OTHER, {**new, "lastTransitionTime": "T1"}]


def test_a_new_status_takes_the_new_time() -> None:
    new = {**OLD, "status": "False", "reason": "Error", "lastTransitionTime": "T2"}
    assert set_condition([OLD, OTHER], new) == [OTHER, new]
    undated = {k: v for k, v in OLD.items() if k != "lastTransitionTime"}
    renamed = {**OLD, "reason": "Other", "lastTransitionTime": "T2"}
    assert set_condition([undated, OTHER], renamed) == [OTHER, renamed]


def test_the_same_status_and_reason_change_nothing() -> None:
    result = set_condition([OLD, OTHER], {**OLD, "message": "new words", "lastTransitionTime": "T2"})
    assert result == [OLD, OTHER] and result[0] is not OLD


def test_remove_drops_only_the_named_type() -> None:
    assert remove([OLD, OTHER, {**OLD, "status": "False"}], "SubsetUpdated") == [OTHER]
    assert remove([OTHER], "SubsetUpdated")[0] is not OTHER
