"""Subset choice (py_engine/workloadspread/admission/choose.py) asserted whole: the ordinal read from
a StatefulSet pod's name at the int32 boundary, and the engine-less eligibility, subset by subset.

Expected values are written out from docs/design-workloadspread.md §2.1.2-§2.1.3: a
`Schedulable` condition whose status is exactly "False" excludes a subset; an ordinal is the
decimal suffix of `<parent>-<digits>`, read as a 32-bit signed integer (-1 when it has none or
does not fit), and the first eligible subset whose running cap sum exceeds it is chosen.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from admission_builders import spread, subset

from py_engine.model import WorkloadSpread
from py_engine.workloadspread.admission.choose import (
    UNSCHEDULABLE_REASON,
    Eligibility,
    choose_by_ordinal,
    eligibility,
    pod_ordinal,
    schedulable,
)
from py_engine.workloadspread.admission.context import AdmissionContext, no_lookup

pytestmark = pytest.mark.timeout(10)

CTX = AdmissionContext(now=datetime(2026, 1, 1, tzinfo=UTC), lookup=no_lookup)


@pytest.mark.parametrize(
    ("name", "ordinal"),
    [
        ("web-0", 0),
        ("web-12", 12),
        ("db-a-7", 7),
        ("web-2147483647", 2147483647),  # the largest int32 still parses
        ("web-2147483648", -1),  # one more does not (Go's ParseInt(..., 10, 32) fails)
        ("web", -1),
        ("web-", -1),
        ("web-1a", -1),
    ],
)
def test_the_ordinal_is_the_decimal_suffix_read_as_an_int32(name: str, ordinal: int) -> None:
    assert pod_ordinal(name) == ordinal


def test_the_largest_int32_ordinal_is_beyond_even_an_unlimited_subset() -> None:
    """Unlimited is 2^31-1: ordinal 2147483647 is not below it, so no subset; a name whose ordinal
    does not parse reads -1 and goes to the first subset."""
    view = WorkloadSpread.from_object(
        spread([subset("a", 5), subset("b")], target=("apps/v1", "StatefulSet", "web"))
    )
    both = Eligibility(frozenset({"a", "b"}))
    assert choose_by_ordinal(view, "web-2147483647", both) is None
    assert choose_by_ordinal(view, "web-2147483646", both) == "b"
    assert choose_by_ordinal(view, "web-2147483648", both) == "a"
    assert choose_by_ordinal(view, "web-4", both) == "a"
    assert choose_by_ordinal(view, "web-5", both) == "b"


def _unschedulable(status: str = "False", kind: str = "Schedulable") -> list[dict[str, str]]:
    return [{"type": kind, "status": status, "reason": "PodUnschedulable"}]


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        (_unschedulable(), False),
        ([{"type": "Ready", "status": "True"}, *_unschedulable()], False),
        (_unschedulable("True"), True),
        (_unschedulable("false"), True),  # condition statuses are "True"/"False"/"Unknown", exactly
        (_unschedulable("Unknown"), True),
        (_unschedulable(kind="Ready"), True),  # another condition's False says nothing
        ([], True),
    ],
)
def test_only_a_schedulable_false_condition_makes_a_subset_unschedulable(
    conditions: list[dict[str, str]], expected: bool
) -> None:
    assert schedulable({"name": "a", "conditions": conditions}) is expected
    assert schedulable({"name": "a"}) is True


def test_without_an_engine_eligibility_is_the_schedulable_check_subset_by_subset() -> None:
    view = WorkloadSpread.from_object(spread([subset("a", 2), subset("b", 2), subset("c"), subset("d", 1)]))
    statuses = [
        {"name": "a", "conditions": _unschedulable(kind="Ready")},
        {"name": "b", "conditions": _unschedulable()},
        # no entry for "c": schedulable
        {"name": "d", "conditions": _unschedulable("True")},
        {"name": "gone", "conditions": _unschedulable()},
    ]
    got = eligibility({"metadata": {"name": "p"}}, view, statuses, CTX)
    assert got == Eligibility(frozenset({"a", "c", "d"}), {"b": (UNSCHEDULABLE_REASON,)})
    assert type(got.names) is frozenset
    assert UNSCHEDULABLE_REASON == (
        "Schedulable condition is False (pods could not be scheduled there recently)"
    )
