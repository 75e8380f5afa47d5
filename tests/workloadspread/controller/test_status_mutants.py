"""Whether a new status differs from the stored one (`semantically_equal`), stated literally.

Kruise compares with `apiequality.Semantic.DeepEqual` on typed objects: nil and empty are equal,
and timestamps compare as instants (the API server stores them in one canonical form), so
`2024-06-01T14:00:00+02:00` and `2024-06-01T12:00:00Z` are the same time; any other difference
(a condition's status, a subset's count) is a difference.
"""

from __future__ import annotations

from typing import Any

from py_engine.workloadspread.controller.status import semantically_equal

LOCAL = "2024-06-01T14:00:00+02:00"
UTC_FORM = "2024-06-01T12:00:00Z"
LATER = "2024-06-01T12:00:05Z"


def entry(**fields: Any) -> dict[str, Any]:
    return {"subsetStatuses": [{"name": "a", "replicas": 1, "missingReplicas": 0, **fields}]}


def test_creating_and_deleting_times_compare_as_instants() -> None:
    for key in ("creatingPods", "deletingPods"):
        assert semantically_equal(entry(**{key: {"p1": LOCAL}}), entry(**{key: {"p1": UTC_FORM}}))
        assert not semantically_equal(entry(**{key: {"p1": UTC_FORM}}), entry(**{key: {"p1": LATER}}))
        assert not semantically_equal(entry(**{key: {"p1": UTC_FORM}}), entry(**{key: {"p2": UTC_FORM}}))


def test_versioned_creating_times_compare_as_instants() -> None:
    old = {"versionedSubsetStatuses": {"h1": [{"name": "a", "creatingPods": {"p1": LOCAL}}]}}
    new = {"versionedSubsetStatuses": {"h1": [{"name": "a", "creatingPods": {"p1": UTC_FORM}}]}}
    assert semantically_equal(old, new)


def condition(status: str, when: str) -> dict[str, Any]:
    return {"type": "Schedulable", "status": status, "lastTransitionTime": when, "reason": "r"}


def test_condition_transition_times_compare_as_instants() -> None:
    assert semantically_equal(
        entry(conditions=[condition("False", LOCAL)]), entry(conditions=[condition("False", UTC_FORM)])
    )
    assert not semantically_equal(
        entry(conditions=[condition("False", UTC_FORM)]), entry(conditions=[condition("False", LATER)])
    )


def test_other_fields_compare_as_written() -> None:
    assert not semantically_equal(
        entry(conditions=[condition("False", UTC_FORM)]), entry(conditions=[condition("True", UTC_FORM)])
    )
    # a field that merely looks like a time is not a timestamp field
    assert not semantically_equal(entry(reason=LOCAL), entry(reason=UTC_FORM))
    assert not semantically_equal({"observedGeneration": 1}, {"observedGeneration": 2})


def test_nil_and_empty_are_equal() -> None:
    assert semantically_equal(None, {})
    assert semantically_equal(entry(creatingPods={}), entry())
    assert semantically_equal(entry(conditions=[]), entry(conditions=None))
    assert not semantically_equal(entry(creatingPods={"p1": UTC_FORM}), entry())
