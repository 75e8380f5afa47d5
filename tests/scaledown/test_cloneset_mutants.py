"""CloneSet scale-down: every input of every entry point reaches the decision (issue 29).

The oracles are Kruise's rules stated independently of the code:

* topology spread: with a `zone` constraint, scale-in takes from the most
  populated zone first (here zone `a` holds two of each revision group's three pods);
* `minReadySeconds > 0` needs the reference time (availability is undefined without it);
* explicit ranks replace the ranker and the higher rank goes first (comparator rule 5);
* criteria are reported unless `explain=False`;
* the partition keeps that many old-revision pods until every update-revision pod
  went; `deleteReadyLimit` caps ready victims, readiness judged with minReadySeconds 0;
* `EqualToRevisionHash` compares the whole hash or the suffix after the last `-`;
* exact `cloneset_spec_from_object` messages and defaults for each field.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from scaledown_times import NOW

from py_engine.scaledown import (
    CloneSetSpec,
    PodFacts,
    ScaledownInputError,
    SpreadConstraint,
    choose_pods_to_delete,
    cloneset_deletion_order,
    cloneset_spec_from_object,
    cloneset_victims,
    read_pods,
    scale_in_pass,
)
from py_engine.scaledown.cloneset import (
    choose,
    equal_to_revision_hash,
    filter_delete_ready_limit,
    is_specified_delete,
    rank_group,
)
from py_engine.semantics.timeutil import format_time

ZONE = "topology.kubernetes.io/zone"
PCT = "must be an integer or a percentage like '20%', got"


def ago(**delta: float) -> str:
    return format_time(NOW - timedelta(**delta))


def cpod(name: str, revision: str, node: str, created_hours: float, **extra: Any) -> dict[str, Any]:
    ready_at = extra.pop("ready_at", ago(hours=9))
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "creationTimestamp": ago(hours=created_hours),
        "labels": {"controller-revision-hash": revision, **extra.pop("labels", {})},
    }
    return {
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}],
        },
    }


# Input order: 0..2 old revision (r1), 3..5 update revision (r2). In each group the
# zone-b pod is the newest, so without node labels (no spread ranks) it would go first.
FACTS = read_pods(
    [
        cpod("old-a1", "r1", "na1", 30),
        cpod("old-a2", "r1", "na2", 29),
        cpod("old-b", "r1", "nb1", 28),
        cpod("new-a1", "r2", "na3", 3),
        cpod("new-a2", "r2", "na4", 2),
        cpod("new-b", "r2", "nb2", 1),
    ]
)
NODES = {
    "na1": {ZONE: "a"},
    "na2": {ZONE: "a"},
    "na3": {ZONE: "a"},
    "na4": {ZONE: "a"},
    "nb1": {ZONE: "b"},
    "nb2": {ZONE: "b"},
}
OLD, NEW = [0, 1, 2], [3, 4, 5]
# minReadySeconds > 0: a call that loses `now` raises instead of ranking.
SPEC = CloneSetSpec(update_revision="r2", min_ready_seconds=60, constraints=(SpreadConstraint(ZONE),))
RANKS = {0: 1.0, 1: 2.0, 2: 3.0, 3: 1.0, 4: 2.0, 5: 3.0}


def names(indices: list[int]) -> list[str]:
    return [FACTS[i].name for i in indices]


def zones(indices: list[int]) -> list[str]:
    return [NODES[FACTS[i].node_name][ZONE] for i in indices]


SPREAD_CASES: list[tuple[str, Any, list[str]]] = [
    ("choose-old", lambda: [p.item for p in choose(FACTS, OLD, 1, SPEC, NODES, NOW)], ["a"]),
    ("choose-new", lambda: [p.item for p in choose(FACTS, NEW, 1, SPEC, NODES, NOW)], ["a"]),
    (
        "choose-pods-old-only",
        lambda: [p.item for p in choose_pods_to_delete(FACTS, 1, 5, OLD, NEW, SPEC, NODES, NOW)],
        ["a"],
    ),
    (
        "choose-pods-both",
        lambda: [p.item for p in choose_pods_to_delete(FACTS, 2, 1, OLD, NEW, SPEC, NODES, NOW)],
        ["a", "a"],
    ),
    (
        "choose-pods-new-only",
        lambda: [p.item for p in choose_pods_to_delete(FACTS, 1, 0, OLD, NEW, SPEC, NODES, NOW)],
        ["a"],
    ),
    ("victims", lambda: [p.item for p in cloneset_victims(FACTS, SPEC, 1, NODES, NOW)], ["a"]),
    (
        "order",
        lambda: [p.item for p in cloneset_deletion_order(FACTS, SPEC, NODES, NOW)][0:4:3],
        ["a", "a"],
    ),
    ("scale-in-old", lambda: scale_in_pass(FACTS, SPEC, 1, 1, nodes=NODES, now=NOW), ["a"]),
    ("scale-in-new", lambda: scale_in_pass(FACTS, SPEC, 1, 0, nodes=NODES, now=NOW), ["a"]),
]


@pytest.mark.parametrize(
    ("call", "expected"), [(c, e) for _, c, e in SPREAD_CASES], ids=[i for i, _, _ in SPREAD_CASES]
)
def test_spread_ranking_takes_the_crowded_zone_first(call: Any, expected: list[str]) -> None:
    assert zones(call()) == expected


def test_without_node_labels_the_newest_goes_first() -> None:
    # Control for the cases above: the zone-b pods are the newest of their groups.
    assert names([p.item for p in choose(FACTS, OLD, 1, SPEC, None, NOW)]) == ["old-b"]
    assert names([p.item for p in choose(FACTS, NEW, 1, SPEC, None, NOW)]) == ["new-b"]


RANKED_CASES: list[tuple[str, Any, list[str], list[str]]] = [
    (
        "rank-group",
        lambda: rank_group(FACTS, OLD, SPEC, NODES, NOW, RANKS),
        ["old-b", "old-a2", "old-a1"],
        ["rank", "rank", "last"],
    ),
    (
        "choose",
        lambda: choose(FACTS, NEW, 2, SPEC, NODES, NOW, RANKS),
        ["new-b", "new-a2"],
        ["rank", "rank"],
    ),
    (
        "choose-pods-old-only",
        lambda: choose_pods_to_delete(FACTS, 2, 5, OLD, NEW, SPEC, NODES, NOW, RANKS),
        ["old-b", "old-a2"],
        ["rank", "last"],
    ),
    (
        "choose-pods-both",
        lambda: choose_pods_to_delete(FACTS, 4, 2, OLD, NEW, SPEC, NODES, NOW, RANKS),
        ["old-b", "old-a2", "new-b", "new-a2"],
        ["rank", "revision", "rank", "last"],
    ),
    (
        "choose-pods-new-only",
        lambda: choose_pods_to_delete(FACTS, 2, 0, OLD, NEW, SPEC, NODES, NOW, RANKS),
        ["new-b", "new-a2"],
        ["rank", "last"],
    ),
    (
        "victims",
        lambda: cloneset_victims(FACTS, SPEC, 2, NODES, NOW, RANKS),
        ["old-b", "old-a2"],
        ["rank", "last"],
    ),
    (
        "order",
        lambda: cloneset_deletion_order(FACTS, SPEC, NODES, NOW, RANKS),
        ["old-b", "old-a2", "old-a1", "new-b", "new-a2", "new-a1"],
        ["rank", "rank", "revision", "rank", "rank", "last"],
    ),
]


@pytest.mark.parametrize(
    ("call", "order", "criteria"),
    [(c, o, k) for _, c, o, k in RANKED_CASES],
    ids=[i for i, _, _, _ in RANKED_CASES],
)
def test_given_ranks_replace_the_ranker_and_are_explained(
    call: Any, order: list[str], criteria: list[str]
) -> None:
    placements = call()
    assert names([p.item for p in placements]) == order
    assert [p.criterion for p in placements] == criteria


QUIET_CASES: list[tuple[str, Any, list[str]]] = [
    ("rank-group", lambda: rank_group(FACTS, OLD, SPEC, NODES, NOW, RANKS, explain=False), ["", "", ""]),
    ("choose", lambda: choose(FACTS, NEW, 2, SPEC, NODES, NOW, RANKS, False), ["", ""]),
    (
        "choose-pods-old-only",
        lambda: choose_pods_to_delete(FACTS, 2, 5, OLD, NEW, SPEC, NODES, NOW, RANKS, False),
        ["", "last"],
    ),
    (
        "choose-pods-both",
        lambda: choose_pods_to_delete(FACTS, 4, 2, OLD, NEW, SPEC, NODES, NOW, RANKS, False),
        ["", "revision", "", "last"],
    ),
    (
        "choose-pods-new-only",
        lambda: choose_pods_to_delete(FACTS, 2, 0, OLD, NEW, SPEC, NODES, NOW, RANKS, False),
        ["", "last"],
    ),
    ("victims", lambda: cloneset_victims(FACTS, SPEC, 2, NODES, NOW, RANKS, False), ["", "last"]),
    (
        "order",
        lambda: cloneset_deletion_order(FACTS, SPEC, NODES, NOW, RANKS, False),
        ["", "", "revision", "", "", "last"],
    ),
]


@pytest.mark.parametrize(
    ("call", "criteria"), [(c, k) for _, c, k in QUIET_CASES], ids=[i for i, _, _ in QUIET_CASES]
)
def test_explain_false_leaves_per_pod_criteria_empty(call: Any, criteria: list[str]) -> None:
    # Only the group boundaries the flattening adds stay labelled; the order is unchanged.
    placements = call()
    assert [p.criterion for p in placements] == criteria
    assert [FACTS[p.item].name[-1] for p in placements][:1] == ["b"]


def test_is_specified_delete_by_label_or_by_name() -> None:
    spec = CloneSetSpec(pods_to_delete=frozenset({"listed"}))
    pods = read_pods(
        [
            cpod("labelled", "r", "n1", 1, labels={"apps.kruise.io/specified-delete": ""}),
            cpod("listed", "r", "n2", 1),
            cpod("other", "r", "n3", 1),
        ]
    )
    assert [is_specified_delete(p, spec) for p in pods] == [True, True, False]


# --- partition, planned deletions, deleteReadyLimit ----------------------------------------

PLAIN = read_pods(
    [
        cpod("going", "r2", "n1", 5, labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"}),
        cpod("marked", "r2", "n2", 5, labels={"apps.kruise.io/specified-delete": "x"}),
        cpod("old-1", "r1", "n3", 30),
        cpod("old-2", "r1", "n4", 20),
        cpod("new-1", "r2", "n5", 2),
        cpod("new-2", "r2", "n6", 1),
    ]
)


def plain_names(indices: list[int]) -> list[str]:
    return [PLAIN[i].name for i in indices]


def test_planned_deletions_then_revision_groups_with_labels() -> None:
    order = cloneset_deletion_order(PLAIN, CloneSetSpec(update_revision="r2"), None, NOW)
    assert plain_names([p.item for p in order]) == ["going", "marked", "old-2", "old-1", "new-2", "new-1"]
    # No specified old-revision pod: the specified group ends on "specified-delete".
    assert [p.criterion for p in order][:2] == ["preparing-delete", "specified-delete"]


def test_a_partition_as_large_as_the_old_group_keeps_every_old_pod_last() -> None:
    spec = CloneSetSpec(update_revision="r2", partition=2)
    order = cloneset_deletion_order(PLAIN, spec, None, NOW)
    assert plain_names([p.item for p in order]) == ["going", "marked", "new-2", "new-1", "old-2", "old-1"]
    # Scale-in by one after the planned deletions: an update-revision pod, never a kept old one.
    assert plain_names([p.item for p in cloneset_victims(PLAIN, spec, 3, None, NOW)]) == [
        "going",
        "marked",
        "new-2",
    ]


def test_partition_limits_how_many_old_pods_victims_take() -> None:
    spec = CloneSetSpec(update_revision="r2", partition=1)
    victims = cloneset_victims(PLAIN, spec, 4, None, NOW)
    assert plain_names([p.item for p in victims]) == ["going", "marked", "old-2", "new-2"]


def test_victims_count_out_of_range_message() -> None:
    with pytest.raises(ValueError) as caught:
        cloneset_victims(PLAIN, CloneSetSpec(), 7)
    assert str(caught.value) == "cannot scale down by 7: there are 6 active pods"


def test_scale_in_pass_by_one() -> None:
    plain = [PLAIN[i] for i in (2, 3, 4, 5)]
    assert [
        p.name
        for p in (plain[i] for i in scale_in_pass(plain, CloneSetSpec(update_revision="r2"), 1, 1, now=NOW))
    ] == ["old-2"]


def ready_pods(count: int, ready_at: str) -> list[PodFacts]:
    return read_pods([cpod(f"p{i}", "r", f"n{i}", 1, ready_at=ready_at) for i in range(count)])


@pytest.mark.parametrize(("limit", "kept"), [(0, []), (1, [0]), (2, [0, 1]), (5, [0, 1, 2])])
def test_delete_ready_limit_counts_each_ready_pod_once(limit: int, kept: list[int]) -> None:
    assert filter_delete_ready_limit(ready_pods(3, ago(hours=1)), [0, 1, 2], limit, NOW) == kept


def test_delete_ready_limit_judges_readiness_with_min_ready_zero() -> None:
    # Ready this very second: ready (and limited) although not yet available for any minReadySeconds > 0.
    assert filter_delete_ready_limit(ready_pods(2, format_time(NOW)), [0, 1], 0, NOW) == []


# --- revision hashes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "revision", "equal"),
    [
        ("web-v1-abc", "other-abc", True),
        ("web-v1-abc", "web-v2-abc", True),
        ("web-v1-abc", "v1-abc", True),
        ("web-v1-abc", "web-v1-abd", False),
        (None, "", True),
        (None, "web-abc", False),
    ],
)
def test_equal_to_revision_hash(label: str | None, revision: str, equal: bool) -> None:
    assert equal_to_revision_hash(label, revision) is equal


# --- cloneset_spec_from_object ------------------------------------------------------------


@pytest.mark.parametrize(
    ("cloneset", "message"),
    [
        ([], "the CloneSet must be a JSON object"),
        ({"kind": "Deployment"}, "expected a CloneSet, got kind 'Deployment'"),
        ({"spec": ["x"]}, "CloneSet spec and status must be objects"),
        ({"status": "x"}, "CloneSet spec and status must be objects"),
        ({"status": {"updateRevision": 3}}, "status.updateRevision must be a string"),
        ({"spec": {"minReadySeconds": -1}}, "spec.minReadySeconds must be a non-negative integer"),
        ({"spec": {"minReadySeconds": True}}, "spec.minReadySeconds must be a non-negative integer"),
        ({"spec": {"minReadySeconds": "5"}}, "spec.minReadySeconds must be a non-negative integer"),
        ({"spec": {"scaleStrategy": "x"}}, "spec.scaleStrategy.podsToDelete must be a list of pod names"),
        (
            {"spec": {"scaleStrategy": {"podsToDelete": ["a", 1]}}},
            "spec.scaleStrategy.podsToDelete must be a list of pod names",
        ),
        ({"spec": {"replicas": "3"}}, "spec.replicas must be an integer"),
        ({"spec": {"replicas": True}}, "spec.replicas must be an integer"),
        (
            {"apiVersion": "apps.kruise.io/v1alpha1", "spec": {"updateStrategy": {"partition": 1.5}}},
            "spec.updateStrategy.partition must be an integer or a percentage like '20%', got 1.5",
        ),
        (
            {
                "apiVersion": "apps.kruise.io/v1beta1",
                "spec": {"updateStrategy": {"rollingUpdate": {"partition": "x%"}}},
            },
            "spec.updateStrategy.rollingUpdate.partition " + PCT + " 'x%'",
        ),
        (
            {"spec": {"updateStrategy": {"partition": "20"}}},
            "spec.updateStrategy.partition must be an integer or a percentage like '20%', got '20'",
        ),
    ],
)
def test_cloneset_spec_rejects_with_exact_message(cloneset: Any, message: str) -> None:
    with pytest.raises(ScaledownInputError) as caught:
        cloneset_spec_from_object(cloneset)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("cloneset", "expected"),
    [
        ({}, CloneSetSpec()),
        ({"kind": "CloneSet", "spec": None, "status": None}, CloneSetSpec()),
        ({"spec": {"minReadySeconds": 0}}, CloneSetSpec()),
        ({"spec": {"minReadySeconds": None, "scaleStrategy": {"podsToDelete": None}}}, CloneSetSpec()),
        ({"status": {"updateRevision": ""}}, CloneSetSpec()),
        ({"spec": {"replicas": 3, "updateStrategy": {"partition": 0}}}, CloneSetSpec()),
        ({"spec": {"replicas": 3, "updateStrategy": {"partition": -2}}}, CloneSetSpec()),
        ({"spec": {"replicas": 300, "updateStrategy": {"partition": "50%"}}}, CloneSetSpec(partition=150)),
        ({"spec": {"replicas": 10, "updateStrategy": {"partition": "1%"}}}, CloneSetSpec(partition=1)),
        ({"spec": {"replicas": 3, "updateStrategy": {"partition": "200%"}}}, CloneSetSpec(partition=3)),
    ],
)
def test_cloneset_spec_defaults_and_partition(cloneset: Any, expected: CloneSetSpec) -> None:
    assert cloneset_spec_from_object(cloneset) == expected
