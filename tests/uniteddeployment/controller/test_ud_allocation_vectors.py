"""Every shared allocation vector (kinds "allocate" and "adaptive"/alloc) against the allocators.

No vector is skipped and none needed a deliberate deviation: the allocators keep Kruise's
arithmetic exactly (docs/uniteddeployment.md, "Allocation").
"""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import observations, ud_from_vector
from vectors import uniteddeployment_cases

from py_engine.uniteddeployment.controller.allocation import AllocationError
from py_engine.uniteddeployment.controller.allocator import allocate, allocator_for
from py_engine.uniteddeployment.controller.partitions import next_partitions

pytestmark = pytest.mark.timeout(30)

ALLOCATE = uniteddeployment_cases("allocate")
ADAPTIVE_ALLOC = [c for c in uniteddeployment_cases("adaptive") if c["function"] == "alloc"]
ALLOCATOR_NAMES = {"specified": "specified", "minmax": "capacity"}


def test_the_vector_file_holds_the_allocation_cases() -> None:
    assert len(ALLOCATE) >= 12
    assert len(ADAPTIVE_ALLOC) >= 22


@pytest.mark.parametrize("case", ALLOCATE + ADAPTIVE_ALLOC, ids=lambda c: str(c["id"]))
def test_allocation_vector(case: dict[str, Any]) -> None:
    data = case["input"]
    ud = ud_from_vector(data)
    if "allocator" in data:
        assert allocator_for(ud) == ALLOCATOR_NAMES[data["allocator"]]
    expected = case["expected"]
    existing = observations(data.get("existing"))
    if "error" in expected:
        with pytest.raises(AllocationError, match=expected["error"]):
            allocate(ud, existing)
        return
    result = allocate(ud, existing)
    assert dict(result.replicas) == expected["replicas"]
    if "string" in expected:
        assert result.describe() == expected["string"]
    if "partitions" in expected:
        partitions = next_partitions(ud, result.replicas)
        for name, value in expected["partitions"].items():
            assert partitions[name] == value
