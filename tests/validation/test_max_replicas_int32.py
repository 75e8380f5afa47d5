"""`maxReplicas` is an int32 in the CRD (like Kruise's IntOrString): the largest int32 is a valid
cap, one more is not (policies/validation/max_replicas.rego, `well_formed_cap`). A bound off by
one either way must turn this red, without relying on the Gatekeeper drift checks."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kube_objects import workload_spread
from py_engine.policy import create_engine
from py_engine.validation import build_review_input, validate_spread

pytestmark = pytest.mark.timeout(60)

ENGINE = create_engine()
FIELD = "spec.subsets[0].maxReplicas"


def _spread(cap: Any) -> dict[str, Any]:
    return workload_spread("ws", [{"name": "a", "maxReplicas": cap}, {"name": "b"}])


def _fields(cap: Any) -> set[str]:
    return {v.field for v in validate_spread(ENGINE, build_review_input(_spread(cap)))}


@pytest.mark.parametrize("cap", [0, 1, 2147483646, 2147483647])
def test_caps_up_to_the_largest_int32_are_accepted(cap: int) -> None:
    assert _fields(cap) == set()


@pytest.mark.parametrize("cap", [2147483648, 2147483649, 2**63, -1, -2147483648])
def test_caps_outside_zero_to_int32_max_are_refused(cap: int) -> None:
    assert FIELD in _fields(cap)
