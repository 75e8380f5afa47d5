"""Reading stored subset status entries that a writer may have left malformed."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.model.subset_status import pod_records, subset_conditions


@pytest.mark.parametrize("value", ["x" * 10, 7, ["a"], None, True])
def test_malformed_pod_records_read_as_empty(value: Any) -> None:
    assert pod_records({"creatingPods": value}, "creatingPods") == {}


def test_pod_records_are_a_copy() -> None:
    stored = {"p1": "2026-01-01T00:00:00Z"}
    records = pod_records({"deletingPods": stored}, "deletingPods")
    records["p2"] = "later"
    assert records == {"p1": "2026-01-01T00:00:00Z", "p2": "later"} and stored == {
        "p1": "2026-01-01T00:00:00Z"
    }
    assert pod_records(None, "creatingPods") == {}


def test_conditions_keep_only_objects() -> None:
    condition = {"type": "Schedulable", "status": "False"}
    assert subset_conditions({"conditions": [condition, "junk", 3]}) == [condition]
    assert subset_conditions({"conditions": 5}) == [] and subset_conditions({"conditions": "abc"}) == []
    assert subset_conditions(None) == []


def test_owned_records_are_handed_back_themselves_and_others_copied() -> None:
    records = {"p1": "t"}
    assert pod_records({"creatingPods": records}, "creatingPods", in_place=True) is records
    copied = pod_records({"creatingPods": records}, "creatingPods")
    assert copied == records and copied is not records
    assert pod_records(None, "creatingPods", in_place=True) == {}
