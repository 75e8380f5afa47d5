"""Pure placement predicates: node selector, required/preferred node affinity,
taints and tolerations, cordoned nodes and resource fit."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from py_engine.semantics.scheduling import (
    insufficient_resources,
    intolerable_prefer_no_schedule_count,
    node_allocatable,
    node_selector_requirement_matches,
    node_selector_term_matches,
    pod_matches_node_selector_and_affinity,
    pod_requests,
    preferred_affinity_score,
    tolerates_taint,
    tolerates_unschedulable,
    untolerated_taint,
)


def node(name: str = "n1", labels: dict[str, str] | None = None, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {}, "status": status}


def pod_with_affinity(
    required: list[dict[str, Any]] | None = None,
    preferred: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    node_affinity: dict[str, Any] = {}
    if required is not None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "affinity": {"nodeAffinity": node_affinity}}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return {"metadata": {"name": "p"}, "spec": spec}


LABELS = {"zone": "a", "gen": "5", "ssd": ""}


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        ({"key": "zone", "operator": "In", "values": ["a", "b"]}, True),
        ({"key": "zone", "operator": "In", "values": ["b"]}, False),
        ({"key": "missing", "operator": "In", "values": ["a"]}, False),
        ({"key": "zone", "operator": "In", "values": []}, False),
        ({"key": "zone", "operator": "NotIn", "values": ["b"]}, True),
        ({"key": "zone", "operator": "NotIn", "values": ["a"]}, False),
        ({"key": "missing", "operator": "NotIn", "values": ["a"]}, True),
        ({"key": "ssd", "operator": "Exists"}, True),
        ({"key": "missing", "operator": "Exists"}, False),
        ({"key": "ssd", "operator": "Exists", "values": ["x"]}, False),
        ({"key": "missing", "operator": "DoesNotExist"}, True),
        ({"key": "zone", "operator": "DoesNotExist"}, False),
        ({"key": "gen", "operator": "Gt", "values": ["4"]}, True),
        ({"key": "gen", "operator": "Gt", "values": ["5"]}, False),
        ({"key": "gen", "operator": "Lt", "values": ["6"]}, True),
        ({"key": "gen", "operator": "Lt", "values": ["5"]}, False),
        ({"key": "zone", "operator": "Gt", "values": ["1"]}, False),
        ({"key": "gen", "operator": "Gt", "values": ["x"]}, False),
        ({"key": "gen", "operator": "Gt", "values": ["1", "2"]}, False),
        ({"key": "missing", "operator": "Lt", "values": ["9"]}, False),
        ({"key": "zone", "operator": "Bogus", "values": ["a"]}, False),
    ],
)
def test_requirement_operators(requirement: dict[str, Any], expected: bool) -> None:
    assert node_selector_requirement_matches(requirement, LABELS) is expected


@pytest.mark.parametrize(
    ("bound", "label", "expected"),
    [
        ("4", "05", True),  # leading zeros are allowed (strconv.ParseInt)
        ("-3", "0", True),
        ("9007199254740992", "9007199254740993", True),
        ("9223372036854775806", "9223372036854775807", True),  # the largest int64
        ("1", "99999999999999999999", False),  # beyond 64 bits: not an integer
        ("+4", "5", False),  # int() would accept all of these; Kubernetes does not
        (" 4", "5", False),
        ("4 ", "5", False),
        ("4", "1_0", False),
        ("4", "\u0665", False),  # ARABIC-INDIC DIGIT FIVE
    ],
)
def test_gt_reads_integers_as_kubernetes_does(bound: str, label: str, expected: bool) -> None:
    requirement = {"key": "n", "operator": "Gt", "values": [bound]}
    assert node_selector_requirement_matches(requirement, {"n": label}) is expected


def test_term_ands_expressions_and_fields_and_empty_term_matches_nothing() -> None:
    n = node("n7", LABELS)
    zone_a = {"key": "zone", "operator": "In", "values": ["a"]}
    name_is = {"key": "metadata.name", "operator": "In", "values": ["n7"]}
    name_not = {"key": "metadata.name", "operator": "NotIn", "values": ["n7"]}
    assert node_selector_term_matches({"matchExpressions": [zone_a], "matchFields": [name_is]}, n)
    assert not node_selector_term_matches({"matchExpressions": [zone_a], "matchFields": [name_not]}, n)
    assert node_selector_term_matches({"matchFields": [name_is]}, n)
    assert not node_selector_term_matches({}, n)
    # Only metadata.name is a legal field; other operators are rejected upstream.
    assert not node_selector_term_matches(
        {"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n7"]}]}, n
    )
    assert not node_selector_term_matches(
        {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}, n
    )


def test_required_terms_are_ored_and_node_selector_is_anded() -> None:
    a = node("a", {"zone": "a", "disk": "ssd"})
    b = node("b", {"zone": "b"})
    c = node("c", {"zone": "c"})
    terms = [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
    ]
    pod = pod_with_affinity(required=terms)
    assert [pod_matches_node_selector_and_affinity(pod, n) for n in (a, b, c)] == [True, True, False]
    pod = pod_with_affinity(required=terms, node_selector={"disk": "ssd"})
    assert [pod_matches_node_selector_and_affinity(pod, n) for n in (a, b, c)] == [True, False, False]
    assert not pod_matches_node_selector_and_affinity(pod_with_affinity(required=[]), a)
    assert pod_matches_node_selector_and_affinity(pod_with_affinity(), c)


def test_preferred_score_sums_matching_weights() -> None:
    preferred = [
        {
            "weight": 10,
            "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
        },
        {"weight": 5, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
        {"weight": 50, "preference": {}},
    ]
    pod = pod_with_affinity(preferred=preferred)
    assert preferred_affinity_score(pod, node("a", {"zone": "a", "disk": "x"})) == 15
    assert preferred_affinity_score(pod, node("b", {"zone": "b", "disk": "x"})) == 5
    assert preferred_affinity_score(pod, node("c", {})) == 0


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "value": "v"}, True),
        ({"key": "k", "value": "w"}, False),
        ({"key": "k", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),
        ({"key": "other", "operator": "Exists"}, False),
        ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "k", "operator": "Weird"}, False),
    ],
)
def test_toleration_matching(toleration: dict[str, Any], expected: bool) -> None:
    assert tolerates_taint(toleration, {"key": "k", "value": "v", "effect": "NoSchedule"}) is expected


def test_untolerated_taint_only_considers_filter_effects() -> None:
    taints = [
        {"key": "soft", "effect": "PreferNoSchedule"},
        {"key": "hard", "value": "1", "effect": "NoExecute"},
    ]
    assert untolerated_taint(taints, []) == taints[1]
    assert untolerated_taint(taints, [{"key": "hard", "operator": "Exists"}]) is None
    assert untolerated_taint(taints[:1], []) is None
    assert intolerable_prefer_no_schedule_count(taints, []) == 1
    assert intolerable_prefer_no_schedule_count(taints, [{"key": "soft", "operator": "Exists"}]) == 0
    # A toleration restricted to NoSchedule does not tolerate a PreferNoSchedule taint.
    assert (
        intolerable_prefer_no_schedule_count(
            taints, [{"key": "soft", "operator": "Exists", "effect": "NoSchedule"}]
        )
        == 1
    )


def test_unschedulable_toleration() -> None:
    pod = pod_with_affinity()
    assert not tolerates_unschedulable(pod)
    pod["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert tolerates_unschedulable(pod)


def test_pod_requests_sum_containers_init_peak_limits_and_overhead() -> None:
    pod = {
        "spec": {
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}},
                {
                    "name": "b",
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"memory": "128Mi"}},
                },
            ],
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
            "overhead": {"memory": "10Mi"},
        }
    }
    got = pod_requests(pod)
    assert got["cpu"] == 2  # the init container's 2 cores exceed 1.25
    assert got["memory"] == (64 + 128 + 10) * 2**20
    sidecar = {
        "spec": {
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
            "initContainers": [
                {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}}
            ],
        }
    }
    assert pod_requests(sidecar)["cpu"] == Fraction(3, 2)


def test_resource_fit_reasons() -> None:
    alloc = node_allocatable(
        node(capacity={"cpu": "4", "memory": "8Gi", "pods": "3"}, allocatable={"cpu": "3500m"})
    )
    assert alloc == {"cpu": Fraction(7, 2), "memory": 8 * 2**30, "pods": 3}
    used = {"cpu": Fraction(3), "memory": Fraction(2**30)}
    assert insufficient_resources({"cpu": Fraction(1, 2)}, alloc, used, 2) == []
    assert insufficient_resources({"cpu": Fraction(1)}, alloc, used, 2) == ["Insufficient cpu"]
    assert insufficient_resources({"cpu": Fraction(1), "memory": Fraction(8 * 2**30)}, alloc, used, 3) == [
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
    ]
    assert insufficient_resources({"nvidia.com/gpu": Fraction(1)}, alloc, used, 0) == [
        "Insufficient nvidia.com/gpu"
    ]
    assert insufficient_resources({}, alloc, used, 0) == []


@pytest.mark.parametrize(
    "node",
    [
        {"status": "Ready"},
        {"status": {"capacity": ["cpu"], "allocatable": "8"}},
        {"status": None},
        {},
    ],
)
def test_a_node_of_the_wrong_shape_has_nothing_allocatable(node: dict[str, Any]) -> None:
    # `united plan` reads nodes from a snapshot nobody validated: a node whose status is a string
    # crashed the node-fit step (found by tests/fuzz/test_fuzz_uniteddeployment.py).
    assert node_allocatable(node) == {}


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": "main"},
        {"containers": ["main", {"resources": "big"}, {"resources": {"requests": ["cpu"]}}]},
        {"initContainers": [7], "overhead": "1"},
        "not a spec",
    ],
)
def test_a_pod_of_the_wrong_shape_requests_nothing(spec: Any) -> None:
    assert pod_requests({"spec": spec}) == {}
