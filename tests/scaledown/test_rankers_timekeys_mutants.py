"""Rankers with shared UIDs, the time helpers at their edges, and order explanations.

Expected values are written out from the rules the modules' docstrings state
(Kruise's rankers key ranks by UID: SpreadConstraintsRanker adds, SameNodeRanker
assigns and skips kept pods; Go's `afterOrZero` and `math.Log2`), never computed
by the code under test. Written for issue 29 (mutation score of `scaledown`).
"""

from __future__ import annotations

import pytest
from scaledown_times import BASE, HOUR, NOW, NOW_NS

from py_engine.scaledown import PodFacts, same_node_ranks, spread_constraints_ranking
from py_engine.scaledown.errors import ScaledownInputError
from py_engine.scaledown.kruise import KruiseOrder
from py_engine.scaledown.ordering import LAST, Placement, explain_sorted
from py_engine.scaledown.rankers import (
    HOSTNAME_LABEL,
    SpreadConstraint,
    constraints_from_keys,
    constraints_from_workload,
)
from py_engine.scaledown.timekeys import (
    TimeReader,
    TimestampError,
    after_or_zero,
    go_log2_bucket,
    log2_bucket,
)


def copies_on_two_nodes() -> list[PodFacts]:
    """A and C share UID "x" (one pod seen twice), each the newest (deleted first) on its node."""
    return [
        BASE._replace(name="A", uid="x", node_name="n1", created=NOW_NS - HOUR),
        BASE._replace(name="B", uid="y", node_name="n1"),
        BASE._replace(name="C", uid="x", node_name="n2", created=NOW_NS - HOUR),
        BASE._replace(name="D", uid="z", node_name="n2"),
    ]


def test_same_node_ranks_of_one_uid_are_assigned_not_added() -> None:
    # Per node: 2 pods, the first to delete gets rank 1, the last (kept) none.
    # A and C both rank 1; the UID map is written twice with 1, so it stays 1.
    assert same_node_ranks(copies_on_two_nodes()) == [1.0, 0.0, 1.0, 0.0]


def test_same_node_rank_of_a_kept_copy_does_not_overwrite() -> None:
    pods = copies_on_two_nodes()
    pods[2] = pods[2]._replace(created=NOW_NS - 20 * HOUR)  # C is now kept on n2 (D goes first)
    # C is not written (rank 0), so the UID "x" keeps A's 1.
    assert same_node_ranks(pods) == [1.0, 0.0, 1.0, 1.0]


def test_spread_coefficients_of_one_uid_are_added() -> None:
    nodes = {"n1": {HOSTNAME_LABEL: "n1"}, "n2": {HOSTNAME_LABEL: "n2"}}
    ranking = spread_constraints_ranking(copies_on_two_nodes(), (SpreadConstraint(HOSTNAME_LABEL),), nodes)
    # Two topology values -> log argument 4. Per node the first pod scores 2, the
    # second 1; "x" collects A's 2 and C's 2.
    assert ranking.coefficients == {4: [4, 1, 4, 1]}
    assert all(type(value) is int for value in ranking.coefficients[4])


# ------------------------------------------------------------------------------ time helpers


def test_after_or_zero_equal_times_are_not_after() -> None:
    assert after_or_zero(NOW_NS, NOW_NS) is False
    assert after_or_zero(NOW_NS + 1, NOW_NS) is True
    assert after_or_zero(None, NOW_NS) is True
    assert after_or_zero(NOW_NS, None) is False


def test_go_log2_just_below_a_power_of_two_follows_the_float_formula() -> None:
    # Go: Log(frac) * (1/Ln2) + exp with frac = 1 - 2**-48, exp = 50: the product is
    # about -5.1e-15, more than half an ulp of 50 (3.6e-15), so the sum stays below 50.
    assert go_log2_bucket(2**50 - 4) == 49
    # 1 - 2**-50: the product (-1.3e-15) rounds away, the sum is 50.0.
    assert go_log2_bucket(2**50 - 1) == 50
    assert log2_bucket(2**50 - 4) == 49


def test_log2_bucket_beyond_the_table_uses_the_float_formula() -> None:
    assert log2_bucket(2**256) == 256
    assert log2_bucket(2**256 + 2**200) == 256


def test_timestamps_read_as_integer_nanoseconds() -> None:
    value = TimeReader()("2024-06-01T00:00:00Z")
    assert type(value) is int
    assert value == NOW_NS
    assert NOW.year == 2024


def test_a_non_string_timestamp_is_named_in_the_error() -> None:
    with pytest.raises(TimestampError, match=r"RFC 3339 string or null, got 5$"):
        TimeReader()(5)


# ------------------------------------------------------------------------------ explanations


def test_explain_sorted_names_the_criterion_against_the_next_pod() -> None:
    values = {0: (1, 0), 1: (0, 5), 2: (0, 7)}
    placements = explain_sorted([1, 2, 0], values.__getitem__, ("first", "second"), [0.5, 1.5, 2.5])
    assert placements == [
        Placement(1, 1.5, "second"),
        Placement(2, 2.5, "first"),
        Placement(0, 0.5, LAST),
    ]
    assert explain_sorted([], values.__getitem__, ("first", "second"), []) == []


def test_kruise_order_placements_without_explanations() -> None:
    pods = [BASE._replace(name="old"), BASE._replace(name="new", created=NOW_NS - HOUR)]
    order = KruiseOrder(pods, [0.0, 0.0])
    assert order.placements(explain=False) == [Placement(1, 0.0, ""), Placement(0, 0.0, "")]
    assert order.placements(explain=False, items=[7, 9]) == [Placement(9, 0.0, ""), Placement(7, 0.0, "")]
    # Explained by default.
    assert order.placements() == [Placement(1, 0.0, "creation-time"), Placement(0, 0.0, LAST)]
    assert order.placements(items=[7, 9]) == [Placement(9, 0.0, "creation-time"), Placement(7, 0.0, LAST)]


def test_constraints_with_the_same_number_of_values_add_into_one_column() -> None:
    pods = [
        BASE._replace(name="A", uid="a", node_name="n1", created=NOW_NS - HOUR),
        BASE._replace(name="B", uid="b", node_name="n1"),
        BASE._replace(name="C", uid="c", node_name="n2", created=NOW_NS - HOUR),
        BASE._replace(name="D", uid="d", node_name="n2"),
    ]
    nodes = {"n1": {HOSTNAME_LABEL: "n1", "zone": "za"}, "n2": {HOSTNAME_LABEL: "n2", "zone": "zb"}}
    constraints = (SpreadConstraint("zone"), SpreadConstraint(HOSTNAME_LABEL))
    ranking = spread_constraints_ranking(pods, constraints, nodes)
    # Each constraint has two values (log argument 4) and scores 2, 1 per value: summed.
    assert ranking.coefficients == {4: [4, 2, 4, 2]}


def test_constraints_from_workload_tolerates_missing_parts_and_names_bad_ones() -> None:
    assert constraints_from_workload({"spec": None}) == ()
    assert constraints_from_workload({"spec": ["not", "a", "mapping"]}) == ()
    with pytest.raises(
        ScaledownInputError, match=r"^spec\.template\.spec\.topologySpreadConstraints must be a list$"
    ):
        constraints_from_workload({"spec": {"template": {"spec": {"topologySpreadConstraints": {}}}}})
    for item in ("zone", {"topologyKey": 5}, {"topologyKey": ""}):
        workload = {
            "spec": {"template": {"spec": {"topologySpreadConstraints": [{"topologyKey": "zone"}, item]}}}
        }
        with pytest.raises(
            ScaledownInputError,
            match=r"^spec\.template\.spec\.topologySpreadConstraints\[1\]\.topologyKey "
            r"must be a non-empty string$",
        ):
            constraints_from_workload(workload)


def test_constraints_from_keys_one_per_key_in_order() -> None:
    assert constraints_from_keys(["zone", "rack", "zone"]) == (
        SpreadConstraint("zone"),
        SpreadConstraint("rack"),
        SpreadConstraint("zone"),
    )
