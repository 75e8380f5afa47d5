"""A subset's condition setter (Kruise's `UnitedDeploymentSubsetStatus.SetCondition`): what
mutation testing (run U1) found unpinned. The rule, stated literally: a condition of a new type
is appended after the others; a changed one is replaced in place; the others are kept as they
are, as copies."""

from __future__ import annotations

import pytest

from py_engine.uniteddeployment.controller.conditions import set_subset_condition

pytestmark = pytest.mark.timeout(30)

READY = {"type": "Ready", "status": "True", "reason": "Up", "message": "", "lastTransitionTime": "T1"}
SCHEDULABLE = {
    "type": "Schedulable",
    "status": "True",
    "reason": "Ok",
    "message": "",
    "lastTransitionTime": "T1",
}


def test_a_new_type_is_appended_after_copies_of_the_others() -> None:
    new = {
        "type": "Schedulable",
        "status": "False",
        "reason": "Down",
        "message": "m",
        "lastTransitionTime": "T2",
    }
    result = set_subset_condition([READY], new)
    assert result == [READY, new]
    assert result[0] is not READY and result[1] is not new


def test_a_changed_condition_is_replaced_in_place_and_the_others_are_kept() -> None:
    new = {"type": "Ready", "status": "False", "reason": "Down", "message": "m", "lastTransitionTime": "T2"}
    result = set_subset_condition([READY, SCHEDULABLE], new)
    assert result == [new, SCHEDULABLE]
    assert result[1] is not SCHEDULABLE
    last = {**SCHEDULABLE, "status": "False", "lastTransitionTime": "T3"}
    assert set_subset_condition([READY, SCHEDULABLE], last) == [READY, last]
