"""Kruise's sort keys (`KruiseKeys`, `KruiseOrder`, `kruise_components`) and `first_difference`.

The Kruise comparator (docs/design-scaledown.md §2.1) is a strict weak order, and
`py_engine/scaledown/kruise.py` sorts by per-pod values instead of comparing pairs:
`kruise_components` (tuple order = Kruise's order, as the module docstring states) and
`KruiseKeys` (the same values packed into one integer). The expected orders below
are the upstream rules applied by hand, written out literally. Written for issue 29
(survivors of run SD1R in `kruise.py` and `ordering.py`).
"""

from __future__ import annotations

from typing import Any

import pytest
from scaledown_times import BASE, HOUR, NOW_NS

from py_engine.scaledown import PodFacts
from py_engine.scaledown.kruise import KRUISE_CRITERIA, KruiseKeys, KruiseOrder, kruise_components
from py_engine.scaledown.ordering import EQUAL, LAST, first_difference


def pod(name: str, **fields: Any) -> PodFacts:
    return BASE._replace(name=name, uid=name, **fields)


def names(facts: list[PodFacts], order: list[int]) -> list[str]:
    return [facts[index].name for index in order]


def test_no_pods_give_no_keys_and_an_empty_order() -> None:
    parts = KruiseKeys([])
    assert parts.keys() == []
    assert parts.keys([], []) == []
    assert KruiseOrder([]).order == []
    assert KruiseOrder([], [], []).placements() == []
    assert KruiseOrder([]).placements(explain=False) == []


def test_restarts_never_spill_into_the_ready_time() -> None:
    """Rule 6 before rule 7: the pod ready 1 ns later goes first, whatever its restarts and age.

    `late` was ready 1 ns after `early`; `early` has the one restart and is much newer.
    Kruise: both ready, ready times differ, `afterOrZero` -> `late` first. (The restart
    count is packed next to the ready time; with one bit too few for it the two would tie
    and the creation time would put `early` first.)
    """
    late = pod("late", ready_time=NOW_NS - 5 * HOUR, restarts=0, created=NOW_NS - 9 * HOUR)
    early = pod("early", ready_time=NOW_NS - 5 * HOUR - 1, restarts=1, created=NOW_NS - HOUR)
    for facts in ([late, early], [early, late]):
        assert names(facts, KruiseOrder(facts).order) == ["late", "early"]
    # Two restarts against none (a count that needs two bits).
    early_2 = early._replace(restarts=2)
    assert names([early_2, late], KruiseOrder([early_2, late]).order) == ["late", "early"]


def test_availability_flags_must_match_the_pods() -> None:
    parts = KruiseKeys([pod("a"), pod("b")])
    with pytest.raises(ValueError):
        parts.keys(None, [True])
    with pytest.raises(ValueError):
        parts.keys([1.0, 2.0], [True, False, True])
    with pytest.raises(ValueError):
        parts.heads([False])
    assert len(parts.keys(None, [True, False])) == 2


def test_mismatched_counts_are_reported_with_both_numbers() -> None:
    facts = [pod("a"), pod("b")]
    with pytest.raises(ValueError, match=r"^1 ranks for 2 pods$"):
        KruiseKeys(facts).keys([1.0])
    with pytest.raises(ValueError, match=r"^3 ranks for 2 pods$"):
        KruiseOrder(facts, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^1 availability flags for 2 pods$"):
        KruiseOrder(facts, None, [True])


def test_without_a_ranker_every_pod_ranks_zero() -> None:
    """docs/design-scaledown.md §2.1: a pod without a rank from a `Ranker` ranks 0."""
    facts = [pod("a"), pod("b", created=NOW_NS - HOUR)]
    order = KruiseOrder(facts)
    assert list(order.ranks) == [0.0, 0.0]
    assert [(p.item, p.rank, p.criterion) for p in order.placements()] == [
        (1, 0.0, "creation-time"),
        (0, 0.0, LAST),
    ]
    assert [(p.item, p.rank) for p in order.placements(explain=False)] == [(1, 0.0), (0, 0.0)]
    assert [(p.item, p.rank) for p in order.placements(items=[7, 8])] == [(8, 0.0), (7, 0.0)]


# (pod deleted first, its rank, its availability, the other pod, its rank, its availability, rule)
RULE_PAIRS: list[tuple[dict[str, Any], float, bool | None, dict[str, Any], float, bool | None, str]] = [
    ({"node_name": ""}, 0.0, None, {}, 0.0, None, "scheduled"),
    ({"phase": "Pending"}, 0.0, None, {}, 0.0, None, "phase"),
    ({}, 0.0, False, {}, 0.0, True, "available"),
    ({"ready": False, "ready_time": None}, 0.0, None, {}, 0.0, None, "ready"),
    ({"cost": -1}, 0.0, None, {}, 0.0, None, "deletion-cost"),
    ({}, 3.0, None, {}, 1.0, None, "rank"),
    ({}, 0.5, None, {}, -2.0, None, "rank"),
    ({"ready_time": NOW_NS - HOUR}, 0.0, None, {}, 0.0, None, "ready-time"),
    ({"restarts": 4}, 0.0, None, {"restarts": 1}, 0.0, None, "restarts"),
    ({"restarts": 1}, 0.0, None, {}, 0.0, None, "restarts"),
    ({"created": NOW_NS - HOUR}, 0.0, None, {}, 0.0, None, "creation-time"),
]


@pytest.mark.parametrize(
    ("first", "rank_first", "available_first", "second", "rank_second", "available_second", "rule"),
    RULE_PAIRS,
    ids=[f"{case[-1]}-{number}" for number, case in enumerate(RULE_PAIRS)],
)
def test_kruise_components_sort_in_kruise_order(
    first: dict[str, Any],
    rank_first: float,
    available_first: bool | None,
    second: dict[str, Any],
    rank_second: float,
    available_second: bool | None,
    rule: str,
) -> None:
    """The module docstring: sorting by the tuple of `kruise_components` is Kruise's order."""
    a = kruise_components(pod("a", **first), rank_first, available_first)
    b = kruise_components(pod("b", **second), rank_second, available_second)
    assert a < b
    assert sorted([b, a]) == [a, b]
    assert first_difference(a, b, KRUISE_CRITERIA) == rule


def test_first_difference_rejects_names_and_values_of_different_lengths() -> None:
    assert first_difference((1, 2), (1, 3), ("a", "b")) == "b"
    assert first_difference((1, 2), (1, 2), ("a", "b")) == EQUAL
    # A names tuple or a value tuple cut short would otherwise answer "equal" silently.
    with pytest.raises(ValueError):
        first_difference((1, 2), (1, 3), ("a",))
    with pytest.raises(ValueError):
        first_difference((1,), (1, 3), ("a", "b"))
