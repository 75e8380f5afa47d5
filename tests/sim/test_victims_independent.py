"""The emulated ReplicaSet's scale-down victims: its own reading of the upstream rules.

`py_engine/sim/controllers/victims.py` is written from docs/design-scaledown.md §1 without the
product's scale-down model, so the cluster can disagree with the model when the model is wrong.
It is checked here against the recorded upstream vectors (tests/vectors/scaledown_cases.json),
against literals from the design document, and against the product's model on generated pods
whose order is total (distinct UIDs and times), where the two readings must agree exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import load_vector_file
from victim_strategies import pod_groups

from py_engine.scaledown import get_pods_to_delete, read_pods
from py_engine.sim.controllers.victims import choose_victims, deletion_cost, deletion_order

CASES = [
    case
    for case in load_vector_file("scaledown_cases.json")["cases"]
    if case["comparator"] == "k8s.ActivePodsWithRanks"
]
GATES_ON = {"LogarithmicScaleDown": True, "PodDeletionCost": True}
NOW = datetime(2024, 6, 1, tzinfo=UTC)
COST = "controller.kubernetes.io/pod-deletion-cost"


def _now(case: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(case["now"].replace("Z", "+00:00"))


def _names(pods: list[dict[str, Any]]) -> list[str]:
    return [pod["metadata"]["name"] for pod in pods]


def _ranked(case: dict[str, Any]) -> tuple[list[dict[str, Any]], list[int]]:
    pods = case["pods"]
    return pods, [case.get("ranks", {}).get(pod["metadata"]["name"], 0) for pod in pods]


@pytest.mark.parametrize("case", [c for c in CASES if c["feature_gates"] == GATES_ON], ids=lambda c: c["id"])
def test_every_upstream_replicaset_vector_with_the_gates_on(case: dict[str, Any]) -> None:
    now = _now(case)
    if case["assertion"] == "delete_prefix":
        chosen = choose_victims(case["pods"], case["related_pods"], case["diff"], now)
        assert _names(chosen) == case["expected_to_delete"]
        return
    pods, ranks = _ranked(case)
    if case["assertion"] == "pair_equivalent":
        for order in (pods, pods[::-1]):  # equal pods keep their input order both ways
            order_ranks = ranks if order is pods else ranks[::-1]
            assert _names(deletion_order(order, order_ranks, now)) == _names(order)
        return
    assert case["assertion"] in ("pair_less", "sorted_order")
    assert _names(deletion_order(pods, ranks, now)) == case["expected_order"]
    assert _names(deletion_order(pods[::-1], ranks[::-1], now)) == case["expected_order"]


def test_the_vectors_cover_each_assertion_kind() -> None:
    kinds = {c["assertion"] for c in CASES if c["feature_gates"] == GATES_ON}
    assert kinds == {"pair_less", "pair_equivalent", "sorted_order", "delete_prefix"}


@pytest.mark.parametrize(
    ("text", "cost"),
    [
        (None, 0),
        ("", 0),
        ("0", 0),
        ("7", 7),
        ("+7", 0),
        ("008", 0),
        ("-007", -7),
        ("-", 0),
        ("1e3", 0),
        (" 5", 0),
        ("2147483647", 2147483647),
        ("2147483648", 0),
        ("-2147483648", -2147483648),
        ("-2147483649", 0),
        ("٣", 0),
    ],
)
def test_deletion_cost_parsing_as_the_design_states_it(text: str | None, cost: int) -> None:
    annotations = {} if text is None else {COST: text}
    assert deletion_cost({"metadata": {"annotations": annotations}}) == cost


def _ready_pod(name: str, uid: str, ready_ago: timedelta, restarts: int = 0) -> dict[str, Any]:
    since = (NOW - ready_ago).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "metadata": {"name": name, "uid": uid, "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"nodeName": "n"},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": since}],
            "containerStatuses": [{"restartCount": restarts}],
        },
    }


def test_same_age_bucket_is_decided_by_uid_and_restarts_are_never_read() -> None:
    # docs/design-scaledown.md §1.4: ready 6 h and 5 h ago share bucket 44; "a" goes first by UID
    # although "b" restarted 100 times; 2 h ago (bucket 42) goes before both.
    pods = [
        _ready_pod("b", "b", timedelta(hours=5), restarts=100),
        _ready_pod("a", "a", timedelta(hours=6)),
        _ready_pod("young", "c", timedelta(hours=2)),
    ]
    assert _names(deletion_order(pods, [1, 1, 1], NOW)) == ["young", "a", "b"]


def test_a_related_pod_listed_twice_counts_once() -> None:
    # §1.1.3: related pods are de-duplicated by UID; "a" on node n shares it with "b" alone.
    a, b = _ready_pod("a", "a", timedelta(hours=1)), _ready_pod("b", "b", timedelta(hours=1))
    lone = {**_ready_pod("lone", "lone", timedelta(hours=1)), "spec": {"nodeName": "m"}}
    twice = [a, b, lone, lone, lone]
    # By rank alone "lone" (rank 1 once de-duplicated, 3 if counted thrice) goes last, not first.
    assert _names(choose_victims([a, lone], twice, 1, NOW)) == ["a"]


def test_removing_every_pod_needs_no_order_and_nothing_is_removed_for_no_diff() -> None:
    pods = [_ready_pod("x", "x", timedelta(hours=1)), _ready_pod("y", "y", timedelta(hours=9))]
    assert _names(choose_victims(pods, None, 5, NOW)) == ["x", "y"]
    assert choose_victims(pods, None, 0, NOW) == []


COSTS = ["-5", "0", "3", "100", "+1", "08", "x"]  # valid, signed, leading zero, not a number


@settings(max_examples=150, deadline=None)
@given(
    pods=pod_groups(
        NOW, max_count=14, max_age_days=90, max_restarts=3, costs=COSTS, nodes=["", "n1", "n2", "n3"]
    ),
    data=st.data(),
)
def test_the_emulator_and_the_product_model_agree_when_the_order_is_total(
    pods: list[dict[str, Any]], data: st.DataObject
) -> None:
    diff = data.draw(st.integers(min_value=1, max_value=len(pods) - 1))
    siblings = [
        {**pod, "metadata": {**pod["metadata"], "name": f"s{i}", "uid": f"sibling-{i}"}}
        for i, pod in enumerate(data.draw(st.lists(st.sampled_from(pods), max_size=4)))
    ]
    related = pods + siblings  # another ReplicaSet's pods on the same nodes raise the ranks
    facts = read_pods(pods)
    related_facts = read_pods(related)
    expected = [pods[i]["metadata"]["name"] for i in get_pods_to_delete(facts, related_facts, diff, now=NOW)]
    assert _names(choose_victims(pods, related, diff, NOW)) == expected
