"""Every `validate` reference vector passes through the same path as `spreadgate validate`."""

from __future__ import annotations

from typing import Any

import pytest
from vectors import workloadspread_cases

from py_engine.policy import PolicyEngine, create_engine
from py_engine.validation import build_review_input, validate_spread

CASES = workloadspread_cases("validate")


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return create_engine()


def test_all_validate_vectors_are_loaded() -> None:
    assert len(CASES) >= 14


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_validate_vector(engine: PolicyEngine, case: dict[str, Any]) -> None:
    given = case["input"]
    expected = case["expected"]
    policy_input = build_review_input(
        given["workloadSpread"],
        operation=given.get("operation", "CREATE"),
        old=given.get("oldWorkloadSpread"),
        other_spreads=given.get("existingWorkloadSpreads", []),
        workload=given.get("workload"),
    )
    violations = validate_spread(engine, policy_input)
    fields = {v.field for v in violations}

    assert (not violations) == expected["allowed"], [v.message for v in violations]
    for field in expected.get("errorFieldsV1alpha1", expected.get("errorFields", [])):
        assert field in fields, f"{field} not reported; got {sorted(fields)}"
    if "errorCount" in expected:
        assert len(violations) == expected["errorCount"]
