"""Unit tests of the scale-down model: parsing, facts, gates, rankers, CloneSet flow.

Examples come from the scale-down design note (`docs/design-scaledown.md`):
its deletion-cost rules, the log2 bucket table, the feature-gate behaviour and the
CloneSet scale flow.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
from scaledown_times import NOW, NOW_NS
from vectors import load_vector_file

from py_engine.scaledown import (
    CloneSetSpec,
    FeatureGateError,
    FeatureGates,
    K8sOrder,
    NodeFormatError,
    PodFacts,
    PodFormatError,
    ScaledownInputError,
    SpreadConstraint,
    active_pods_less,
    active_pods_order,
    choose_pods_to_delete,
    cloneset_deletion_order,
    cloneset_spec_from_object,
    cloneset_victims,
    constraints_from_workload,
    decide,
    deletion_cost,
    gates_from_mapping,
    get_pods_to_delete,
    is_pod_available,
    merge_related,
    parse_deletion_cost,
    parse_feature_gates,
    pod_list_items,
    read_nodes,
    read_pod,
    read_pods,
    related_pod_ranks,
    same_node_ranks,
    scale_down_passes,
    scale_in_pass,
    spread_constraints_ranking,
)
from py_engine.scaledown.cloneset import equal_to_revision_hash, is_updated, planned_deletions
from py_engine.scaledown.timekeys import TimeReader, after_or_zero, go_log2_bucket, log2_bucket
from py_engine.semantics.timeutil import format_time


def ago(**delta: float) -> str:
    return format_time(NOW - timedelta(**delta))


def pod(
    name: str,
    *,
    uid: str | None = None,
    node: str = "n1",
    phase: str = "Running",
    ready: bool | None = True,
    ready_at: str | None = None,
    created: str | None = None,
    restarts: int = 0,
    cost: str | None = None,
    labels: dict[str, str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    """A pod dict shaped like API output."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": uid if uid is not None else f"uid-{name}",
        "creationTimestamp": created or ago(hours=10),
    }
    if cost is not None:
        metadata["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
    if labels:
        metadata["labels"] = labels
    if deleting:
        metadata["deletionTimestamp"] = format_time(NOW)
    status: dict[str, Any] = {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}
    if conditions is not None:
        status["conditions"] = conditions
    elif ready is not None:
        status["conditions"] = [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": ready_at or ago(hours=9),
            }
        ]
    return {"metadata": metadata, "spec": {"nodeName": node}, "status": status}


def names(facts: list[PodFacts], indices: list[int]) -> list[str]:
    return [facts[i].name for i in indices]


# --- deletion cost -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 0),
        ("", 0),
        ("0", 0),
        ("-0", 0),
        ("10", 10),
        ("-5", -5),
        ("-007", -7),  # only the first character is vetted; ParseInt takes the rest
        ("+10", 0),
        ("008", 0),
        ("00", 0),
        (" 1", 0),
        ("1 ", 0),
        ("1e3", 0),
        ("\u0661", 0),  # an Arabic-Indic digit: not an ASCII digit
        ("-", 0),
        ("--1", 0),
        ("2147483647", 2147483647),
        ("2147483648", 0),
        ("-2147483648", -2147483648),
        ("-2147483649", 0),
    ],
)
def test_deletion_cost_parsing(value: str | None, expected: int) -> None:
    assert parse_deletion_cost(value) == expected


def test_deletion_cost_from_annotations() -> None:
    assert deletion_cost(None) == 0
    assert deletion_cost({"controller.kubernetes.io/pod-deletion-cost": "42"}) == 42
    assert deletion_cost({"other": "42"}) == 0


# --- feature gates -------------------------------------------------------------------------


def test_feature_gates_default_on_and_parse_like_kube_controller_manager() -> None:
    assert parse_feature_gates("") == FeatureGates(pod_deletion_cost=True, logarithmic_scale_down=True)
    gates = parse_feature_gates(" PodDeletionCost=false , LogarithmicScaleDown=F ")
    assert gates == FeatureGates(pod_deletion_cost=False, logarithmic_scale_down=False)
    assert parse_feature_gates("LogarithmicScaleDown=0").as_dict() == {
        "LogarithmicScaleDown": False,
        "PodDeletionCost": True,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Foo=true", "unrecognized feature gate: 'Foo'"),
        ("PodDeletionCost", "missing bool value"),
        ("PodDeletionCost=yes", "invalid value 'yes'"),
        ("podDeletionCost=true", "unrecognized feature gate"),
    ],
)
def test_bad_feature_gates_are_rejected(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError, match=message):
        parse_feature_gates(text)


def test_gates_from_mapping_validates() -> None:
    assert gates_from_mapping({"PodDeletionCost": False}).pod_deletion_cost is False
    with pytest.raises(FeatureGateError):
        gates_from_mapping({"PodDeletionCost": "false"})  # type: ignore[dict-item]
    with pytest.raises(FeatureGateError):
        gates_from_mapping({"Nope": True})


# --- time ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "bucket"),
    [
        (timedelta(0), -1),
        (timedelta(seconds=-5), -1),
        (timedelta(hours=2), 42),
        (timedelta(hours=5), 44),
        (timedelta(hours=6), 44),
        (timedelta(hours=8), 44),
        (timedelta(days=31), 51),
        (timedelta(seconds=4398), 41),
        (timedelta(seconds=4399), 42),
    ],
)
def test_log2_buckets_of_the_reference_table(age: timedelta, bucket: int) -> None:
    nanos = age // timedelta(microseconds=1) * 1000
    assert log2_bucket(nanos) == bucket
    assert go_log2_bucket(nanos) == bucket


def test_log2_bucket_follows_go_just_below_a_power_of_two() -> None:
    # float64(2**50 - 1) rounds to a Log2 of exactly 50.0 in Go; exact floor(log2) is 49.
    assert (2**50 - 1).bit_length() - 1 == 49
    assert log2_bucket(2**50 - 1) == go_log2_bucket(2**50 - 1) == 50
    assert log2_bucket(2**50 - 2**20) == 49
    assert log2_bucket(1) == 0


def test_after_or_zero() -> None:
    assert after_or_zero(None, 5) is True
    assert after_or_zero(5, None) is False
    assert after_or_zero(None, None) is True  # callers only ask for unequal times
    assert after_or_zero(6, 5) is True
    assert after_or_zero(5, 6) is False


def test_time_reader_accepts_rfc3339_forms_and_the_zero_time() -> None:
    reader = TimeReader()
    assert reader(None) is None
    assert reader("0001-01-01T00:00:00Z") is None
    assert reader("2024-06-01T00:00:00Z") == NOW_NS
    assert reader("2024-06-01T02:00:00+02:00") == NOW_NS
    assert reader("2024-06-01T00:00:00.5Z") == NOW_NS + 500_000_000
    assert reader("2024-06-01T00:00:00Z") == NOW_NS  # cached
    with pytest.raises(ValueError, match="time zone"):
        reader("2024-06-01T00:00:00")
    with pytest.raises(ValueError, match="RFC 3339"):
        reader("2024-13-01T00:00:00Z")
    with pytest.raises(ValueError):
        reader(1717200000)


# --- pod facts ---------------------------------------------------------------------------


def test_read_pod_extracts_what_the_rules_use() -> None:
    raw = pod(
        "p",
        cost="-3",
        labels={"lifecycle.apps.kruise.io/state": "Normal", "apps.kruise.io/specified-delete": ""},
    )
    raw["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": ago(hours=10)},
        {"type": "Ready", "status": "True", "lastTransitionTime": ago(hours=3)},
        {"type": "Ready", "status": "False", "lastTransitionTime": ago(hours=1)},  # only the first counts
        {"type": "InPlaceUpdateReady", "status": "False"},
    ]
    raw["status"]["containerStatuses"] = [{"restartCount": 2}, {"restartCount": 7}]
    raw["status"]["initContainerStatuses"] = [{"restartCount": 99}]
    facts = read_pod(raw)
    assert facts.ready is True
    assert facts.ready_time == NOW_NS - 3 * 3600 * 10**9
    assert facts.restarts == 7
    assert facts.cost == -3
    assert facts.lifecycle_state == "Normal"
    assert facts.specified_delete is True
    assert facts.in_place_update_ready == "False"
    assert facts.active is True
    assert facts.phase_ordinal == 2


def test_read_pod_defaults_like_go_zero_values() -> None:
    facts = read_pod({"metadata": {"name": "bare"}})
    assert (facts.uid, facts.node_name, facts.phase, facts.ready, facts.ready_time) == (
        "",
        "",
        "",
        False,
        None,
    )
    assert (facts.created, facts.restarts, facts.cost, facts.phase_ordinal) == (None, 0, 0, 0)
    ready_without_time = read_pod(pod("r", conditions=[{"type": "Ready", "status": "True"}]))
    assert ready_without_time.ready is True and ready_without_time.ready_time is None


def test_inactive_pods() -> None:
    assert read_pod(pod("s", phase="Succeeded")).active is False
    assert read_pod(pod("f", phase="Failed")).active is False
    assert read_pod(pod("d", deleting=True)).active is False
    assert read_pod(pod("p", phase="Pending", ready=False)).active is True
    assert read_pod(pod("u", phase="Unknown")).phase_ordinal == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (42, "item 0: expected a pod object"),
        ({"spec": {}}, "missing metadata"),
        ({"metadata": {}}, "metadata.name is missing"),
        ({"metadata": {"name": 5}}, "metadata.name is missing or not a string"),
        ({"kind": "Node", "metadata": {"name": "n"}}, "kind is 'Node', expected a Pod"),
        (
            {"metadata": {"name": "p", "creationTimestamp": "yesterday"}},
            "metadata.creationTimestamp: not an RFC 3339",
        ),
        (
            {"metadata": {"name": "p", "creationTimestamp": "2024-06-01T25:00:00Z"}},
            "metadata.creationTimestamp",
        ),
        ({"metadata": {"name": "p", "uid": 7}}, "metadata.uid must be a string"),
        ({"metadata": {"name": "p", "annotations": ["x"]}}, "metadata.annotations must be an object"),
        (
            {"metadata": {"name": "p", "annotations": {"controller.kubernetes.io/pod-deletion-cost": 5}}},
            "must be a string",
        ),
        ({"metadata": {"name": "p"}, "spec": []}, "spec must be an object"),
        ({"metadata": {"name": "p"}, "spec": {"nodeName": 1}}, "spec.nodeName must be a string"),
        ({"metadata": {"name": "p"}, "status": {"conditions": {}}}, "status.conditions must be a list"),
        (
            {"metadata": {"name": "p"}, "status": {"conditions": [1]}},
            r"status.conditions\[0\] must be an object",
        ),
        (
            {
                "metadata": {"name": "p"},
                "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "x"}]},
            },
            r"status.conditions\[0\].lastTransitionTime: not an RFC 3339",
        ),
        (
            {"metadata": {"name": "p"}, "status": {"containerStatuses": [{"restartCount": True}]}},
            r"containerStatuses\[0\].restartCount must be an integer",
        ),
        ({"metadata": {"name": "p"}, "status": {"phase": 3}}, "status.phase must be a string"),
    ],
)
def test_read_pod_rejects_malformed_pods(raw: object, message: str) -> None:
    with pytest.raises(PodFormatError, match=message):
        read_pod(raw)


def test_errors_name_the_pod_and_its_position() -> None:
    with pytest.raises(PodFormatError, match=r"pod 'b' \(item 1\): metadata.creationTimestamp"):
        read_pods([pod("a"), {"metadata": {"name": "b", "creationTimestamp": "nope"}}])


def test_pod_list_shapes() -> None:
    items = [pod("a"), pod("b")]
    assert pod_list_items(items) == items
    assert pod_list_items({"kind": "List", "items": items}) == items
    assert pod_list_items({"kind": "PodList", "items": None}) == []
    assert pod_list_items(pod("a")) == [pod("a")]
    with pytest.raises(PodFormatError, match="PodList or a JSON array"):
        pod_list_items({"kind": "Deployment"})
    with pytest.raises(PodFormatError, match="items must be a list"):
        pod_list_items({"items": {}})
    with pytest.raises(PodFormatError):
        pod_list_items("pods")


def test_read_nodes() -> None:
    node = {"kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}
    assert read_nodes({"kind": "List", "items": [node]}) == {"n1": {"zone": "a"}}
    assert read_nodes([{"metadata": {"name": "n2"}}]) == {"n2": {}}
    assert read_nodes(node) == {"n1": {"zone": "a"}}
    for bad, message in [
        ({"kind": "Pod"}, "NodeList or a JSON array"),
        ([1], "expected a node object"),
        ([{"metadata": {}}], "metadata.name"),
        ([{"metadata": {"name": "n", "labels": {"a": 1}}}], "labels must map strings to strings"),
        ([{"kind": "Pod", "metadata": {"name": "n"}}], "kind is 'Pod'"),
    ]:
        with pytest.raises(NodeFormatError, match=message):
            read_nodes(bad)


# --- Kubernetes comparator -----------------------------------------------------------------


def test_bucket_uid_tie_break_ends_the_comparison() -> None:
    """docs/design-scaledown.md §1.4: 'a' ready 6 h (0 restarts) vs 'b' ready 5 h (100 restarts)."""
    a = read_pod(pod("a", uid="a", ready_at=ago(hours=6), restarts=0))
    b = read_pod(pod("b", uid="b", ready_at=ago(hours=5), restarts=100))
    assert decide(a, b, 1, 1, now=NOW) == (-1, "ready-time-uid")
    off = FeatureGates(logarithmic_scale_down=False)
    assert decide(a, b, 1, 1, now=NOW, gates=off) == (1, "ready-time")
    assert decide(a, b, 1, 1, now=None) == (1, "ready-time")  # no reference time: exact times
    assert names([a, b], K8sOrder([a, b], [1, 1], now=NOW).order) == ["a", "b"]
    assert names([a, b], K8sOrder([a, b], [1, 1], now=NOW, gates=off).order) == ["b", "a"]


def test_deletion_cost_gate() -> None:
    cheap = read_pod(pod("cheap", cost="-10", created=ago(hours=20)))
    dear = read_pod(pod("dear", cost="10", created=ago(hours=1)))
    assert decide(cheap, dear, now=NOW)[1] == "deletion-cost"
    assert names([dear, cheap], K8sOrder([dear, cheap], now=NOW).order) == ["cheap", "dear"]
    off = FeatureGates(pod_deletion_cost=False)
    assert decide(cheap, dear, now=NOW, gates=off)[1] != "deletion-cost"


def test_active_pods_ignores_cost_rank_and_buckets() -> None:
    old = read_pod(pod("old", cost="-100", ready_at=ago(hours=6)))
    new = read_pod(pod("new", cost="100", ready_at=ago(hours=5)))
    assert active_pods_less(new, old)  # the more recently ready first, cost ignored
    assert names([old, new], active_pods_order([old, new])) == ["new", "old"]


def test_k8s_order_placements_and_criteria() -> None:
    facts = read_pods(
        [
            pod("running", created=ago(hours=3)),
            pod("pending", phase="Pending", ready=False),
            pod("unscheduled", node="", phase="Pending", ready=False),
            pod("notready", ready=False),
        ]
    )
    order = K8sOrder(facts, [1, 1, 1, 1], now=NOW)
    placements = order.placements()
    assert names(facts, [p.item for p in placements]) == ["unscheduled", "pending", "notready", "running"]
    assert [p.criterion for p in placements] == ["scheduled", "phase", "ready", "last"]
    with pytest.raises(ValueError, match="ranks"):
        K8sOrder(facts, [1], now=NOW)


# --- ReplicaSet ---------------------------------------------------------------------------


def test_ranks_count_active_related_pods_on_the_node() -> None:
    own = read_pods([pod("a", node="n1"), pod("b", node="n2")])
    siblings = read_pods(
        [pod("s1", node="n1"), pod("s2", node="n1", phase="Failed"), pod("s3", node="n2", deleting=True)]
    )
    related = merge_related(own, siblings)
    assert related_pod_ranks(own, related) == [2, 1]
    assert related_pod_ranks(own, None) == [0, 0]  # no controller owner


def test_merge_related_deduplicates_by_uid() -> None:
    own = read_pods([pod("a"), pod("b")])
    again = read_pods([pod("a"), pod("c"), pod("x", uid="")])
    merged = merge_related(own, [*again, read_pod(pod("x", uid=""))])
    assert [p.name for p in merged] == ["a", "b", "c", "x"]


def test_get_pods_to_delete_bounds() -> None:
    facts = read_pods([pod("a"), pod("b")])
    assert get_pods_to_delete(facts, facts, 0, now=NOW) == []
    with pytest.raises(ValueError):
        get_pods_to_delete(facts, facts, 3, now=NOW)


def test_scale_down_reranks_between_syncs() -> None:
    """Node A holds two pods, node B three (older ones). Two syncs of one pod each
    take one from B, then, with both nodes at two pods, the newest pod overall (on A);
    one sync of two would take two from B."""
    raw = [
        pod("a1", node="A", created=ago(hours=1), ready_at=ago(minutes=50)),
        pod("a2", node="A", created=ago(hours=1, minutes=1), ready_at=ago(minutes=51)),
        pod("b1", node="B", created=ago(hours=5), ready_at=ago(hours=4)),
        pod("b2", node="B", created=ago(hours=6), ready_at=ago(hours=5)),
        pod("b3", node="B", created=ago(hours=7), ready_at=ago(hours=6)),
    ]
    facts = read_pods(raw)
    one_sync = scale_down_passes(facts, facts, 2, now=NOW, burst=2)
    assert [names(facts, [p.item for p in chosen]) for chosen in one_sync] == [["b1", "b2"]]
    two_syncs = scale_down_passes(facts, facts, 2, now=NOW, burst=1)
    assert [names(facts, [p.item for p in chosen]) for chosen in two_syncs] == [["b1"], ["a1"]]
    assert [p.criterion for chosen in two_syncs for p in chosen] == ["next-sync", "last"]
    everything = scale_down_passes(facts, facts, 5, now=NOW, burst=3)
    assert [len(chosen) for chosen in everything] == [3, 2]
    assert [p.criterion for p in everything[1]] == ["unsorted", "last"]  # all remaining go unsorted


def test_burst_of_500_per_sync() -> None:
    raw = [pod(f"p{i:04d}", node=f"n{i % 7}", created=ago(minutes=i)) for i in range(1200)]
    facts = read_pods(raw)
    passes = scale_down_passes(facts, facts, 1100, now=NOW)
    assert [len(chosen) for chosen in passes] == [500, 500, 100]
    victims = [p.item for chosen in passes for p in chosen]
    assert len(set(victims)) == 1100


# --- Kruise -------------------------------------------------------------------------------


def test_cloneset_availability() -> None:
    assert is_pod_available(read_pod(pod("p", ready_at=ago(seconds=31))), 30, NOW)
    assert not is_pod_available(read_pod(pod("p", ready_at=ago(seconds=30))), 30, NOW)  # strictly before now
    assert is_pod_available(read_pod(pod("p", ready_at=ago(seconds=1))), 0, NOW)
    assert not is_pod_available(read_pod(pod("p", conditions=[{"type": "Ready", "status": "True"}])), 5, NOW)
    assert not is_pod_available(read_pod(pod("p", phase="Pending")), 0, NOW)
    assert not is_pod_available(read_pod(pod("p", ready=False)), 0, NOW)
    preparing = pod("p", labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})
    assert not is_pod_available(read_pod(preparing), 0, NOW)
    in_place = pod("p")
    in_place["status"]["conditions"].append({"type": "InPlaceUpdateReady", "status": "False"})
    assert not is_pod_available(read_pod(in_place), 0, NOW)
    in_place["status"]["conditions"][-1]["status"] = "True"
    assert is_pod_available(read_pod(in_place), 0, NOW)
    with pytest.raises(ValueError, match="reference time"):
        is_pod_available(read_pod(pod("p")), 5, None)


def test_constraints_from_workload() -> None:
    cloneset = {
        "spec": {
            "template": {
                "spec": {
                    "topologySpreadConstraints": [
                        {"topologyKey": "zone", "maxSkew": 1},
                        {"topologyKey": "kubernetes.io/hostname"},
                    ]
                }
            }
        }
    }
    assert constraints_from_workload(cloneset) == (
        SpreadConstraint("zone"),
        SpreadConstraint("kubernetes.io/hostname"),
    )
    assert constraints_from_workload({"spec": {}}) == ()
    with pytest.raises(ScaledownInputError, match="topologyKey"):
        constraints_from_workload({"spec": {"template": {"spec": {"topologySpreadConstraints": [{}]}}}})


def test_same_node_ranker_shares_ranks_between_copies_of_a_pod() -> None:
    facts = read_pods(
        [pod("a", created=ago(hours=1)), pod("b", created=ago(hours=2)), pod("a", created=ago(hours=1))]
    )
    ranks = same_node_ranks(facts)
    assert ranks[0] == ranks[2]
    assert sorted(ranks) != [0.0, 1.0, 2.0]


def test_spread_ranker_with_zone_and_hostname_matches_the_upstream_test() -> None:
    """§2.3: zone (3 values) plus hostname (6 hosts) expects d-0, e-0, d-1, e-1, c-0, i-0, ..."""
    case = next(
        c for c in load_vector_file("scaledown_cases.json")["cases"] if c["id"] == "kruise-spread-ranker-0"
    )
    facts = read_pods(case["pods"])
    nodes = {node["name"]: node["labels"] for node in case["nodes"]}
    constraints = (
        SpreadConstraint("failure-domain.beta.kubernetes.io/zone"),
        SpreadConstraint("kubernetes.io/hostname"),
    )
    ranking = spread_constraints_ranking(facts, constraints, nodes)
    positive = sorted(
        (i for i, rank in enumerate(ranking.ranks) if rank > 0), key=lambda i: -ranking.ranks[i]
    )
    assert names(facts, positive)[:6] == ["d-0", "e-0", "d-1", "e-1", "c-0", "i-0"]
    d0 = facts.index(next(p for p in facts if p.name == "d-0"))
    assert ranking.terms[d0] == {5: 10, 8: 5}
    assert math.isclose(ranking.ranks[d0], 10 * math.log(5) + 5 * math.log(8))


def test_spread_ranker_skips_unknown_nodes_and_honours_limited_values() -> None:
    facts = read_pods([pod("a", node="known"), pod("b", node="ghost"), pod("c", node="")])
    nodes = {"known": {"zone": "z1"}}
    ranking = spread_constraints_ranking(facts, (SpreadConstraint("zone"),), nodes)
    assert ranking.terms == [{3: 1}, {}, {}]
    limited = spread_constraints_ranking(facts, (SpreadConstraint("zone", frozenset({"z2"})),), nodes)
    assert limited.ranks == [0.0, 0.0, 0.0]
    empty_limit = spread_constraints_ranking(facts, (SpreadConstraint("zone", frozenset()),), nodes)
    assert empty_limit.ranks[0] == math.log(3)


# --- CloneSet flow ------------------------------------------------------------------------


def test_revision_matching() -> None:
    assert equal_to_revision_hash("web-5d4f8", "web-5d4f8")
    assert equal_to_revision_hash("5d4f8", "web-5d4f8")  # suffix after the last '-'
    assert not equal_to_revision_hash(None, "web-5d4f8")
    preparing = read_pod(pod("p", labels={"lifecycle.apps.kruise.io/state": "PreparingUpdate"}))
    spec = CloneSetSpec(update_revision="r2")
    assert not is_updated(preparing, spec)
    assert is_updated(preparing, CloneSetSpec(update_revision="r2", preparing_update_as_update=True))
    assert is_updated(preparing, CloneSetSpec())  # unknown revision: everything counts as updated


def test_cloneset_spec_from_object() -> None:
    cloneset = {
        "kind": "CloneSet",
        "spec": {
            "replicas": 10,
            "minReadySeconds": 5,
            "scaleStrategy": {"podsToDelete": ["p1"]},
            "updateStrategy": {"partition": "25%"},
            "template": {"spec": {"topologySpreadConstraints": [{"topologyKey": "zone"}]}},
        },
        "status": {"updateRevision": "web-abc"},
    }
    spec = cloneset_spec_from_object(cloneset)
    assert spec == CloneSetSpec(
        update_revision="web-abc",
        min_ready_seconds=5,
        pods_to_delete=frozenset({"p1"}),
        constraints=(SpreadConstraint("zone"),),
        partition=3,
    )
    assert cloneset_spec_from_object({"spec": {"updateStrategy": {"partition": 4}}}).partition == 1  # capped
    for bad in (
        {"kind": "Deployment"},
        {"spec": {"minReadySeconds": -1}},
        {"spec": {"updateStrategy": {"partition": "x%"}}},
        {"spec": {"scaleStrategy": {"podsToDelete": "p1"}}},
    ):
        with pytest.raises(ScaledownInputError):
            cloneset_spec_from_object(bad)


@pytest.mark.parametrize(
    ("api_version", "strategy", "partition"),
    [
        ("apps.kruise.io/v1beta1", {"rollingUpdate": {"partition": 3}}, 3),
        ("apps.kruise.io/v1beta1", {"partition": 3}, 0),  # v1alpha1's place: pruned by a v1beta1 API server
        ("apps.kruise.io/v1alpha1", {"partition": "50%"}, 5),
        ("apps.kruise.io/v1alpha1", {"rollingUpdate": {"partition": 3}}, 0),
        (None, {"rollingUpdate": {"partition": 2}}, 2),
        (None, {"partition": 2}, 2),
    ],
)
def test_the_partition_is_read_where_the_cloneset_version_keeps_it(
    api_version: str | None, strategy: dict[str, object], partition: int
) -> None:
    # `kubectl get cloneset -o json` from a cluster serving v1beta1 has it in rollingUpdate: reading only
    # the v1alpha1 place made `rank` treat every pod of a partitioned rollout as one group.
    cloneset: dict[str, object] = {"spec": {"replicas": 10, "updateStrategy": strategy}}
    if api_version is not None:
        cloneset["apiVersion"] = api_version
    assert cloneset_spec_from_object(cloneset).partition == partition


def _revision_pods() -> list[PodFacts]:
    return read_pods(
        [
            pod("old-1", labels={"controller-revision-hash": "r1"}, created=ago(hours=30)),
            pod("old-2", labels={"controller-revision-hash": "r1"}, created=ago(hours=20)),
            pod("new-1", labels={"controller-revision-hash": "r2"}, created=ago(hours=2)),
            pod("new-2", labels={"controller-revision-hash": "r2"}, ready=False, created=ago(hours=1)),
            pod(
                "marked", labels={"controller-revision-hash": "r1", "apps.kruise.io/specified-delete": "true"}
            ),
            pod("listed", labels={"controller-revision-hash": "r2"}),
            pod(
                "going",
                labels={
                    "controller-revision-hash": "r2",
                    "lifecycle.apps.kruise.io/state": "PreparingDelete",
                },
            ),
        ]
    )


def test_cloneset_order_planned_then_old_then_new() -> None:
    facts = _revision_pods()
    spec = CloneSetSpec(update_revision="r2", pods_to_delete=frozenset({"listed"}))
    assert planned_deletions(facts, spec) == ([6], [5], [4])
    order = cloneset_deletion_order(facts, spec, None, NOW)
    assert names(facts, [p.item for p in order]) == [
        "going",
        "listed",
        "marked",
        "old-2",
        "old-1",
        "new-2",
        "new-1",
    ]
    assert [p.criterion for p in order] == [
        "preparing-delete",
        "revision",
        "specified-delete",
        "rank",  # both old pods share node n1: the same-node ranker separates them
        "revision",
        "available",  # new-2 is not ready, so not available either (rule 3a)
        "last",
    ]
    assert [p.rank for p in order][:3] == [None, None, None]
    partitioned = cloneset_deletion_order(facts, CloneSetSpec(update_revision="r2", partition=1), None, NOW)
    # The partition keeps one old pod: it goes after every update-revision pod.
    assert names(facts, [p.item for p in partitioned]) == [
        "going",
        "marked",
        "old-2",
        "new-2",
        "new-1",
        "listed",
        "old-1",
    ]
    assert [p.criterion for p in partitioned][-2:] == ["partition", "last"]


def test_cloneset_victims_and_choose() -> None:
    facts = _revision_pods()
    spec = CloneSetSpec(update_revision="r2", pods_to_delete=frozenset({"listed"}))
    assert names(facts, [p.item for p in cloneset_victims(facts, spec, 2, None, NOW)]) == ["going", "listed"]
    victims = cloneset_victims(facts, spec, 5, None, NOW)
    # The whole old group goes: unsorted, in list order (no ranks built).
    assert names(facts, [p.item for p in victims]) == ["going", "listed", "marked", "old-1", "old-2"]
    assert [p.criterion for p in victims][-2:] == ["unsorted", "last"]
    assert [p.rank for p in victims] == [None] * 5
    # One of two old pods goes: ranked (same node, the newer one first).
    victims = cloneset_victims(facts, spec, 4, None, NOW)
    assert names(facts, [p.item for p in victims])[-1] == "old-2"
    assert victims[-1].rank == 1.0
    old, new = [0, 1], [2, 3]
    plain = CloneSetSpec(update_revision="r2")
    both = choose_pods_to_delete(facts, 2, 1, old, new, plain, None, NOW)
    assert names(facts, [p.item for p in both]) == ["old-2", "new-2"]
    assert [p.criterion for p in both] == ["revision", "last"]
    # All of the update-revision group goes: unsorted.
    whole = choose_pods_to_delete(facts, 3, 1, old, new, plain, None, NOW)
    assert names(facts, [p.item for p in whole]) == ["old-2", "new-1", "new-2"]
    assert names(facts, [p.item for p in choose_pods_to_delete(facts, 1, 0, old, new, plain, None, NOW)]) == [
        "new-2"
    ]
    assert names(facts, [p.item for p in choose_pods_to_delete(facts, 1, 5, old, new, plain, None, NOW)]) == [
        "old-2"
    ]
    with pytest.raises(ValueError):
        cloneset_victims(facts, spec, 99, None, NOW)


def test_scale_in_pass() -> None:
    facts = _revision_pods()
    spec = CloneSetSpec(update_revision="r2", pods_to_delete=frozenset({"listed"}))
    # PreparingDelete pods are finished first, and scale-in waits for planned deletions.
    assert scale_in_pass(facts, spec, 3, 2) == [6]
    without_pre = [f for f in facts if f.name != "going"]
    assert names(without_pre, scale_in_pass(without_pre, spec, 3, 2, now=NOW)) == ["listed", "marked"]
    # Update-revision specified pods first; only one ready pod may go.
    assert names(without_pre, scale_in_pass(without_pre, spec, 3, 2, delete_ready_limit=1, now=NOW)) == [
        "listed"
    ]
    plain = [f for f in facts if f.name in {"old-1", "old-2", "new-1", "new-2"}]
    chosen = scale_in_pass(plain, CloneSetSpec(update_revision="r2"), 3, 1, delete_ready_limit=1, now=NOW)
    # old-2 and new-2 chosen; ready old-2 uses the only ready slot, not-ready new-2 always goes.
    assert names(plain, chosen) == ["old-2", "new-2"]
    assert scale_in_pass(plain, CloneSetSpec(), 0, 0, now=NOW) == []
