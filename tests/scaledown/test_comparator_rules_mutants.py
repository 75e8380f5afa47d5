"""Each rule of both pairwise comparators, pinned pair by pair and in both orders.

`decide` (Kubernetes' `ActivePodsWithRanks`) and `kruise_decide` (OpenKruise's
`clonesetutils.ActivePodsWithRanks`) answer `(-1 | 1 | 0, criterion)`. Every case
below is two pods that differ in exactly one rule's input; the expected answer is
the upstream rule as the design note states it (`docs/design-scaledown.md`,
mirrored in each module's docstring), written out literally, never computed by
the code under test. Swapping the pods must flip the sign and keep the criterion,
so one table pins both branches of every rule. Written for issue 29 (mutation
score of the `scaledown` package).
"""

from __future__ import annotations

from typing import Any

import pytest
from scaledown_times import BASE, HOUR, NOW, NOW_NS, SECOND

from py_engine.scaledown import PodFacts, active_pods_less, decide, is_pod_available
from py_engine.scaledown.gates import FeatureGates
from py_engine.scaledown.kruise import availability, kruise_decide, kruise_less
from py_engine.scaledown.kubernetes import k8s_less

GATES_OFF = FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=False)
PLAIN_TIMES = FeatureGates(pod_deletion_cost=True, logarithmic_scale_down=False)


def pair(first: dict[str, Any], second: dict[str, Any]) -> tuple[PodFacts, PodFacts]:
    """Two pods equal to BASE but for the given fields; `first` is expected to go first."""
    return BASE._replace(name="a", **first), BASE._replace(name="b", **second)


# (id, fields of the pod deleted first, fields of the other, criterion). Shared by both comparators.
COMMON_RULES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    ("unscheduled-first", {"node_name": ""}, {"node_name": "n1"}, "scheduled"),
    ("pending-before-running", {"phase": "Pending"}, {"phase": "Running"}, "phase"),
    ("unknown-before-running", {"phase": "Unknown"}, {"phase": "Running"}, "phase"),
    ("pending-before-unknown", {"phase": "Pending"}, {"phase": "Unknown"}, "phase"),
    # A phase outside the map counts as Pending (Go's missing map key reads 0).
    ("other-phase-before-unknown", {"phase": "Failed"}, {"phase": "Unknown"}, "phase"),
    ("empty-phase-before-running", {"phase": ""}, {"phase": "Running"}, "phase"),
    ("not-ready-first", {"ready": False, "ready_time": None}, {}, "ready"),
    ("lower-cost-first", {"cost": -3}, {"cost": 7}, "deletion-cost"),
    (
        "more-recently-ready-first",
        {"ready_time": NOW_NS - HOUR},
        {"ready_time": NOW_NS - 2 * HOUR},
        "ready-time",
    ),
    ("zero-ready-time-first", {"ready_time": None}, {}, "ready-time"),
    ("more-restarts-first", {"restarts": 4}, {"restarts": 1}, "restarts"),
    ("newer-first", {"created": NOW_NS - HOUR}, {"created": NOW_NS - 2 * HOUR}, "creation-time"),
    ("zero-creation-first", {"created": None}, {}, "creation-time"),
    # Earlier rules beat later ones.
    ("phase-beats-ready", {"phase": "Pending", "ready": True}, {"ready": False, "ready_time": None}, "phase"),
    ("ready-beats-cost", {"ready": False, "ready_time": None, "cost": 9}, {"cost": 0}, "ready"),
    (
        "cost-beats-times",
        {"cost": 0, "created": NOW_NS - 8 * HOUR},
        {"cost": 1, "created": NOW_NS},
        "deletion-cost",
    ),
    (
        "restarts-beat-creation",
        {"restarts": 2, "created": NOW_NS - 8 * HOUR},
        {"created": NOW_NS},
        "restarts",
    ),
    # Equal ready times (both ready): the ready-time rule does not fire, restarts decide.
    ("equal-ready-times-fall-through", {"restarts": 1}, {}, "restarts"),
    # Not ready: ready times are not compared at all, even when they differ.
    (
        "not-ready-times-ignored",
        {"ready": False, "ready_time": NOW_NS - 9 * HOUR, "restarts": 1},
        {"ready": False, "ready_time": NOW_NS - HOUR},
        "restarts",
    ),
    (
        "not-ready-times-ignored-by-creation",
        {"ready": False, "ready_time": NOW_NS - 9 * HOUR, "created": NOW_NS - HOUR},
        {"ready": False, "ready_time": NOW_NS - HOUR, "created": NOW_NS - 2 * HOUR},
        "creation-time",
    ),
]

CASE_IDS = [case[0] for case in COMMON_RULES]


@pytest.mark.parametrize(("first", "second", "criterion"), [case[1:] for case in COMMON_RULES], ids=CASE_IDS)
def test_kubernetes_rule_decides_in_both_orders(
    first: dict[str, Any], second: dict[str, Any], criterion: str
) -> None:
    a, b = pair(first, second)
    assert decide(a, b, gates=PLAIN_TIMES) == (-1, criterion)
    assert decide(b, a, gates=PLAIN_TIMES) == (1, criterion)
    assert k8s_less(a, b, gates=PLAIN_TIMES) is True
    assert k8s_less(b, a, gates=PLAIN_TIMES) is False


@pytest.mark.parametrize(("first", "second", "criterion"), [case[1:] for case in COMMON_RULES], ids=CASE_IDS)
def test_kruise_rule_decides_in_both_orders(
    first: dict[str, Any], second: dict[str, Any], criterion: str
) -> None:
    a, b = pair(first, second)
    assert kruise_decide(a, b) == (-1, criterion)
    assert kruise_decide(b, a) == (1, criterion)
    assert kruise_less(a, b) is True
    assert kruise_less(b, a) is False


def test_both_scheduled_on_different_nodes_is_no_scheduling_difference() -> None:
    a, b = pair({"node_name": "n1"}, {"node_name": "n2"})
    assert decide(a, b) == (0, "equal")
    assert kruise_decide(a, b) == (0, "equal")
    assert decide(b, a) == (0, "equal")
    assert kruise_decide(b, a) == (0, "equal")


def test_pods_equal_on_every_rule_tie_and_neither_is_less() -> None:
    a, b = pair({}, {})
    assert decide(a, b) == (0, "equal")
    assert decide(a, b, now=NOW) == (0, "equal")
    assert kruise_decide(a, b) == (0, "equal")
    assert not k8s_less(a, b) and not k8s_less(b, a)
    assert not kruise_less(a, b) and not kruise_less(b, a)
    assert not active_pods_less(a, b) and not active_pods_less(b, a)


@pytest.mark.parametrize("comparator", ["kubernetes", "kruise"])
def test_higher_rank_first_in_both_orders(comparator: str) -> None:
    a, b = pair({}, {})
    compare = decide if comparator == "kubernetes" else kruise_decide
    assert compare(a, b, 3, 1) == (-1, "rank")
    assert compare(b, a, 1, 3) == (1, "rank")
    assert compare(a, b, 1, 3) == (1, "rank")
    # Rank is rule 5: the deletion cost (rule 4) beats it.
    cheap, dear = pair({"cost": 0}, {"cost": 1})
    assert compare(cheap, dear, 0, 5) == (-1, "deletion-cost")


def test_rank_reaches_kruise_less_in_both_orders() -> None:
    a, b = pair({}, {})
    assert kruise_less(a, b, 2.5, 0.5) is True
    assert kruise_less(a, b, 0.5, 2.5) is False
    assert k8s_less(a, b, 2, 1) is True
    assert k8s_less(a, b, 1, 2) is False


def test_kruise_unavailable_before_available_only_when_both_are_known() -> None:
    a, b = pair({}, {})
    assert kruise_decide(a, b, available_a=False, available_b=True) == (-1, "available")
    assert kruise_decide(a, b, available_a=True, available_b=False) == (1, "available")
    assert kruise_less(a, b, available_a=False, available_b=True) is True
    assert kruise_less(a, b, available_a=True, available_b=False) is False
    # Availability is rule 3a: it beats readiness (3b) and cost (4).
    ready_a, not_ready_b = pair({"cost": 9}, {"ready": False, "ready_time": None})
    assert kruise_decide(ready_a, not_ready_b, available_a=False, available_b=True) == (-1, "available")
    # Without an AvailableFunc (None) the rule is skipped.
    assert kruise_decide(a, b, available_a=None, available_b=True) == (0, "equal")
    assert kruise_decide(a, b, available_a=False, available_b=None) == (0, "equal")


def test_kubernetes_deletion_cost_gate_off_skips_the_cost_rule() -> None:
    # The dearer pod is newer: with the gate off, creation time decides instead of cost.
    dear_new, cheap_old = pair({"cost": 5, "created": NOW_NS - HOUR}, {"cost": 1})
    assert decide(dear_new, cheap_old, gates=GATES_OFF) == (-1, "creation-time")
    assert k8s_less(dear_new, cheap_old, gates=GATES_OFF) is True
    assert k8s_less(dear_new, cheap_old) is False  # default gates: cost on
    assert active_pods_less(dear_new, cheap_old) is True  # ActivePods never reads the cost
    # Kruise never gates the cost.
    assert kruise_decide(dear_new, cheap_old) == (1, "deletion-cost")


# --------------------------------------------------------------- LogarithmicScaleDown (rules 6 and 8)


@pytest.mark.parametrize("field", ["ready_time", "created"])
def test_log2_buckets_younger_bucket_first_in_both_orders(field: str) -> None:
    label = "ready-time" if field == "ready_time" else "creation-time"
    # Ages 1 h (bucket 41) and 4 h (bucket 43): different buckets.
    young, old = pair({field: NOW_NS - HOUR, "uid": "z"}, {field: NOW_NS - 4 * HOUR, "uid": "a"})
    assert decide(young, old, now=NOW) == (-1, label)
    assert decide(old, young, now=NOW) == (1, label)


@pytest.mark.parametrize("field", ["ready_time", "created"])
def test_log2_buckets_same_bucket_smaller_uid_first_and_the_comparison_ends(field: str) -> None:
    label = "ready-time" if field == "ready_time" else "creation-time"
    # Ages 5 h and 5 h + 1 s share a bucket; the pod with more restarts would win rule 7,
    # but the UID decides and the comparison ends there.
    small, big = pair(
        {field: NOW_NS - 5 * HOUR - SECOND, "uid": "a"},
        {field: NOW_NS - 5 * HOUR + SECOND, "uid": "b", "restarts": 3},
    )
    if field == "created":  # restarts come before rule 8: keep them equal there
        big = big._replace(restarts=0)
    assert decide(small, big, now=NOW) == (-1, f"{label}-uid")
    assert decide(big, small, now=NOW) == (1, f"{label}-uid")
    # Equal UIDs in one bucket: neither goes first, and the later rules are not consulted.
    same_uid = big._replace(uid="a")
    assert decide(small, same_uid, now=NOW) == (0, "equal")
    # Without a reference time the exact times decide (the later first).
    assert decide(small, big) == (1, label)


# --------------------------------------------------------------- Kruise availability (rule 3a's input)


def test_available_needs_running_ready_normal_and_in_place_ready_true() -> None:
    ok = BASE._replace(in_place_update_ready="True")
    not_in_place = BASE._replace(in_place_update_ready="False")
    pods = [BASE, ok, not_in_place, BASE._replace(lifecycle_state="PreparingDelete")]
    # minReadySeconds 0 needs no reference time.
    assert availability(pods, 0, None) == [True, True, False, False]
    assert [is_pod_available(pod, 0, None) for pod in pods] == [True, True, False, False]
    assert availability(pods, 5, NOW) == [True, True, False, False]


def test_min_ready_seconds_counts_strictly_more_than_the_window() -> None:
    exactly = BASE._replace(ready_time=NOW_NS - SECOND)
    one_ns_more = BASE._replace(ready_time=NOW_NS - SECOND - 1)
    half = BASE._replace(ready_time=NOW_NS - SECOND // 2)
    assert is_pod_available(exactly, 1, NOW) is False
    assert is_pod_available(one_ns_more, 1, NOW) is True
    assert is_pod_available(half, 1, NOW) is False
    assert availability([exactly, one_ns_more, half], 1, NOW) == [False, True, False]
    with pytest.raises(ValueError, match=r"^availability with minReadySeconds > 0 needs a reference time$"):
        is_pod_available(BASE, 1, None)
