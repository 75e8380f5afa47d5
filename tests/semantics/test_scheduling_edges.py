"""Edges of the placement predicates (py_engine/semantics/scheduling.py) that mutation testing
found unpinned: defaults of missing fields, `matchFields` operators, the order and the zero
cases of the resource-fit reasons, and how init containers raise a pod's requests."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from py_engine.semantics import scheduling

pytestmark = pytest.mark.timeout(30)


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def fields_term(operator: str, *values: str) -> dict[str, Any]:
    return {"matchFields": [{"key": "metadata.name", "operator": operator, "values": list(values)}]}


def container(
    requests: dict[str, str] | None = None, limits: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "resources": resources, **extra}


# ----------------------------------------------------------------- missing fields


def test_a_pod_without_spec_and_a_node_without_metadata_are_read_as_empty() -> None:
    assert scheduling.pod_matches_node_selector_and_affinity({}, {}) is True
    assert scheduling.pod_matches_node_selector_and_affinity({}, node("n1", zone="a")) is True
    assert scheduling.preferred_affinity_score({}, node("n1")) == 0
    assert scheduling.tolerates_unschedulable({}) is False
    assert (
        scheduling.pod_matches_node_selector_and_affinity({"spec": {"nodeSelector": {"zone": "a"}}}, {})
        is False
    )
    assert scheduling.node_selector_term_matches(
        {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, {}
    )


def test_values_that_are_not_a_list_match_nothing() -> None:
    assert not scheduling.node_selector_requirement_matches(
        {"key": "zone", "operator": "In", "values": "abc"}, {"zone": "a"}
    )
    assert not scheduling.node_selector_requirement_matches(
        {"key": "zone", "operator": "NotIn", "values": "x"}, {"zone": "a"}
    )


# ------------------------------------------------------------------ matchFields


def test_match_fields_take_in_and_not_in_on_the_node_name() -> None:
    assert scheduling.node_selector_term_matches(fields_term("In", "n1"), node("n1"))
    assert not scheduling.node_selector_term_matches(fields_term("In", "n1"), node("n2"))
    assert scheduling.node_selector_term_matches(fields_term("NotIn", "n1"), node("n2"))
    assert not scheduling.node_selector_term_matches(fields_term("NotIn", "n1"), node("n1"))


def test_match_fields_refuse_other_operators_even_when_they_would_hold() -> None:
    assert not scheduling.node_selector_term_matches(fields_term("Gt", "5"), node("7"))
    assert not scheduling.node_selector_term_matches(fields_term("Lt", "9"), node("7"))
    assert not scheduling.node_selector_term_matches(
        fields_term("In", "n1", "n2"), node("n1")
    )  # exactly one value


# ---------------------------------------------------------- preferences, taints


def test_a_preferred_term_without_a_weight_adds_nothing() -> None:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    pod = {
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"preference": term},
                        {"weight": 7, "preference": term},
                    ]
                }
            }
        }
    }
    assert scheduling.preferred_affinity_score(pod, node("n1", zone="a")) == 7


def test_equal_without_values_tolerates_a_taint_without_value_only() -> None:
    assert scheduling.tolerates_taint({"key": "k", "operator": "Equal"}, {"key": "k", "effect": "NoSchedule"})
    assert scheduling.tolerates_taint({"key": "k"}, {"key": "k", "value": "", "effect": "NoSchedule"})
    assert not scheduling.tolerates_taint(
        {"key": "k", "operator": "Equal"}, {"key": "k", "value": "v", "effect": "NoSchedule"}
    )
    assert not scheduling.tolerates_taint({"key": "k", "value": "v"}, {"key": "k", "effect": "NoSchedule"})


def test_a_prefer_no_schedule_taint_tolerated_with_its_effect_named_is_not_counted() -> None:
    taints = [{"key": "k", "effect": "PreferNoSchedule"}, {"key": "other", "effect": "PreferNoSchedule"}]
    named = [{"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}]
    assert scheduling.intolerable_prefer_no_schedule_count(taints, named) == 1
    assert scheduling.intolerable_prefer_no_schedule_count(taints, [{"key": "k", "operator": "Exists"}]) == 1
    assert scheduling.intolerable_prefer_no_schedule_count(taints, []) == 2


# --------------------------------------------------------------------- requests


def test_a_resource_with_only_a_limit_requests_its_limit() -> None:
    pod = {
        "spec": {
            "containers": [container(limits={"cpu": "2", "memory": "1Gi"}, requests={"memory": "512Mi"})]
        }
    }
    assert scheduling.pod_requests(pod) == {"cpu": Fraction(2), "memory": Fraction(512 * 2**20)}


def test_a_quantity_that_does_not_parse_counts_for_nothing_and_the_others_still_count() -> None:
    pod = {
        "spec": {"containers": [container(requests={"cpu": "lots", "memory": "1Ki", "nvidia.com/gpu": "1"})]}
    }
    assert scheduling.pod_requests(pod) == {"memory": Fraction(1024), "nvidia.com/gpu": Fraction(1)}
    assert scheduling.node_allocatable({"status": {"allocatable": {"pods": "x", "cpu": "4"}}}) == {
        "cpu": Fraction(4)
    }


def test_the_largest_init_container_raises_the_requests_not_the_last() -> None:
    pod = {
        "spec": {
            "containers": [container(requests={"cpu": "1"})],
            "initContainers": [container(requests={"cpu": "5"}), container(requests={"cpu": "2"})],
        }
    }
    assert scheduling.pod_requests(pod) == {"cpu": Fraction(5)}


def test_app_containers_larger_than_every_init_container_decide() -> None:
    pod = {
        "spec": {
            "containers": [container(requests={"cpu": "5"})],
            "initContainers": [container(requests={"cpu": "2", "memory": "1Ki"})],
        }
    }
    assert scheduling.pod_requests(pod) == {"cpu": Fraction(5), "memory": Fraction(1024)}


def test_small_init_requests_are_not_rounded_up() -> None:
    pod = {
        "spec": {
            "containers": [container(requests={"cpu": "100m"})],
            "initContainers": [container(requests={"cpu": "500m", "memory": "500m"})],
        }
    }
    assert scheduling.pod_requests(pod) == {"cpu": Fraction(1, 2), "memory": Fraction(1, 2)}


def test_an_init_container_after_a_sidecar_still_counts_with_the_sidecar() -> None:
    pod = {
        "spec": {
            "containers": [container(requests={"cpu": "2"})],
            "initContainers": [
                container(requests={"cpu": "1"}, restartPolicy="Always"),
                container(requests={"cpu": "5"}),
            ],
        }
    }
    assert scheduling.pod_requests(pod) == {
        "cpu": Fraction(6)
    }  # the sidecar (1) runs beside the init container (5)


# -------------------------------------------------------------------------- fit


def test_reasons_come_cpu_memory_ephemeral_storage_then_by_name() -> None:
    request = {name: Fraction(1) for name in ("zz.io/x", "memory", "aa.io/y", "ephemeral-storage", "cpu")}
    assert scheduling.insufficient_resources(request, {}, {}, 0) == [
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient ephemeral-storage",
        "Insufficient aa.io/y",
        "Insufficient zz.io/x",
    ]


def test_a_resource_nothing_uses_yet_is_free_up_to_its_allocatable() -> None:
    assert scheduling.insufficient_resources({"cpu": Fraction(1)}, {"cpu": Fraction(1)}, {}, 0) == []


def test_a_zero_request_fits_an_overcommitted_node() -> None:
    assert (
        scheduling.insufficient_resources({"cpu": Fraction(0)}, {"cpu": Fraction(1)}, {"cpu": Fraction(2)}, 0)
        == []
    )


def test_pods_are_counted_by_the_pods_on_the_node_not_as_a_request() -> None:
    full = {"pods": Fraction(1)}
    assert scheduling.insufficient_resources({"pods": Fraction(1)}, full, {"pods": Fraction(1)}, 0) == []
    assert scheduling.insufficient_resources({}, full, {}, 1) == ["Too many pods"]


def test_a_node_without_metadata_or_name_has_the_empty_name() -> None:
    assert scheduling.node_selector_term_matches(fields_term("NotIn", "n1"), {})
    assert scheduling.node_selector_term_matches(fields_term("In", ""), {"metadata": {}})
    assert not scheduling.node_selector_term_matches(fields_term("In", "None"), {"metadata": {}})


def test_a_requirement_without_a_string_key_matches_nothing_even_not_in() -> None:
    for key in (5, "", None):
        assert not scheduling.node_selector_requirement_matches(
            {"key": key, "operator": "NotIn", "values": ["a"]}, {"zone": "a"}
        )
        assert not scheduling.node_selector_requirement_matches({"key": key, "operator": "DoesNotExist"}, {})
