"""Adoption of pre-existing pods (docs/design-workloadspread.md §2.5.1), pinned case by case.

Each test states the expected outcome literally: which subset a pod on a given node may join,
its exact score (`100 * preferred weight + 10 * patch already applied + 1 * quota left`), and the
exact adoption patch. The inputs (pods from the cache, the spread's subsets) are never modified.
"""

from __future__ import annotations

import copy
from typing import Any

from mutant_support import MATCHED, spread_view

from py_engine.model.workloadspread import Subset, WorkloadSpread
from py_engine.workloadspread.controller.adoption import (
    NO_MATCH,
    adoption_patch,
    best_subset,
    patch_already_applied,
    subset_score,
)

IGNORE = "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"


def subset(
    name: str = "a",
    *,
    required: dict[str, Any] | None = None,
    preferred: tuple[dict[str, Any], ...] = (),
    tolerations: tuple[dict[str, Any], ...] = (),
    patch: dict[str, Any] | None = None,
) -> Subset:
    return Subset(
        name=name,
        index=0,
        max_replicas=None,
        required_node_selector_term=required,
        preferred_node_selector_terms=preferred,
        tolerations=tolerations,
        patch=patch,
    )


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}}
    if spec:
        obj["spec"] = spec
    return obj


def pod_requiring(*terms: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", **meta},
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
                }
            }
        },
    }


def label_is(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": [value]}


def name_is(value: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": [value]}


def spread(annotations: dict[str, str] | None = None) -> WorkloadSpread:
    return spread_view(annotations=annotations)


# --- the subset's required term is ANDed into each of the pod's own required terms ---


def test_the_pods_own_required_label_term_still_applies_under_a_subset_term() -> None:
    pod = pod_requiring({"matchExpressions": [label_is("disk", "ssd")]})
    zone_a = subset(required={"matchExpressions": [label_is("zone", "a")]})
    assert subset_score(pod, node("n1", {"zone": "a", "disk": "ssd"}), zone_a, 0) == 0
    assert subset_score(pod, node("n2", {"zone": "a"}), zone_a, 0) == NO_MATCH
    assert subset_score(pod, node("n3", {"disk": "ssd"}), zone_a, 0) == NO_MATCH


def test_the_pods_own_required_field_term_still_applies_under_a_subset_term() -> None:
    pod = pod_requiring({"matchFields": [name_is("n1")]})
    zone_a = subset(required={"matchExpressions": [label_is("zone", "a")]})
    assert subset_score(pod, node("n1", {"zone": "a"}), zone_a, 0) == 0
    assert subset_score(pod, node("n2", {"zone": "a"}), zone_a, 0) == NO_MATCH


def test_the_subsets_field_term_applies_to_a_pod_with_its_own_terms() -> None:
    pod = pod_requiring({"matchExpressions": [label_is("disk", "ssd")]})
    only_n1 = subset(required={"matchFields": [name_is("n1")]})
    assert subset_score(pod, node("n1", {"disk": "ssd"}), only_n1, 0) == 0
    assert subset_score(pod, node("n2", {"disk": "ssd"}), only_n1, 0) == NO_MATCH


def test_a_pod_with_two_own_terms_matches_either_one_with_the_subset_term() -> None:
    pod = pod_requiring(
        {"matchExpressions": [label_is("disk", "ssd")]}, {"matchExpressions": [label_is("gpu", "1")]}
    )
    zone_a = subset(required={"matchExpressions": [label_is("zone", "a")]})
    assert subset_score(pod, node("n1", {"zone": "a", "gpu": "1"}), zone_a, 0) == 0
    assert subset_score(pod, node("n2", {"zone": "b", "gpu": "1"}), zone_a, 0) == NO_MATCH


def test_a_pod_without_affinity_gets_the_subsets_term_alone() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    zone_a = subset(required={"matchExpressions": [label_is("zone", "a")]})
    assert subset_score(pod, node("n1", {"zone": "a"}), zone_a, 0) == 0
    assert subset_score(pod, node("n2", {"zone": "b"}), zone_a, 0) == NO_MATCH


def test_the_pods_node_selector_still_applies_under_a_subset_term() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {"nodeSelector": {"disk": "ssd"}}}
    zone_a = subset(required={"matchExpressions": [label_is("zone", "a")]})
    assert subset_score(pod, node("n1", {"zone": "a", "disk": "ssd"}), zone_a, 0) == 0
    assert subset_score(pod, node("n2", {"zone": "a"}), zone_a, 0) == NO_MATCH


def test_scoring_leaves_the_pod_and_the_subset_as_they_were() -> None:
    pod = pod_requiring(
        {"matchExpressions": [label_is("disk", "ssd")], "matchFields": [name_is("n1")]},
        annotations={"keep": "me"},
    )
    pod["metadata"]["labels"] = {"app": "x"}
    term = {"matchExpressions": [label_is("zone", "a")], "matchFields": [name_is("n1")]}
    patch = {"metadata": {"labels": {"app": "x"}, "annotations": {"added": "yes"}}}
    zone_a = subset(required=term, patch=patch)
    pod_before, term_before, patch_before = copy.deepcopy(pod), copy.deepcopy(term), copy.deepcopy(patch)
    assert subset_score(pod, node("n1", {"zone": "a", "disk": "ssd"}), zone_a, 0) == 10
    assert pod == pod_before
    assert term == term_before
    assert patch == patch_before


def test_scoring_a_pod_without_affinity_leaves_it_without_affinity() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p", "annotations": {"k": "v"}}, "spec": {"containers": []}}
    before = copy.deepcopy(pod)
    zone_a = subset(
        required={"matchExpressions": [label_is("zone", "a")]}, patch={"metadata": {"labels": {"x": "y"}}}
    )
    assert subset_score(pod, node("n1", {"zone": "a"}), zone_a, 0) == 0
    assert pod == before


def test_pods_and_nodes_without_a_spec_are_scored() -> None:
    bare_pod: dict[str, Any] = {"metadata": {"name": "p"}}
    assert subset_score(bare_pod, {"metadata": {"name": "n1"}}, subset(), 1) == 1
    assert (
        subset_score(
            {"metadata": {"name": "p"}, "spec": None}, {"metadata": {"name": "n1"}, "spec": None}, subset(), 0
        )
        == 0
    )
    assert (
        subset_score(
            {"metadata": {"name": "p"}, "spec": "x"}, {"metadata": {"name": "n1"}, "spec": ["x"]}, subset(), 0
        )
        == 0
    )


def test_a_tainted_node_needs_a_toleration_from_the_pod_or_the_subset() -> None:
    tainted = node("n1", taints=[{"key": "gpu", "value": "1", "effect": "NoSchedule"}])
    toleration = {"key": "gpu", "operator": "Equal", "value": "1", "effect": "NoSchedule"}
    assert subset_score({"metadata": {"name": "p"}}, tainted, subset(), 0) == NO_MATCH
    assert subset_score({"metadata": {"name": "p"}}, tainted, subset(tolerations=(toleration,)), 0) == 0
    tolerant = {"metadata": {"name": "p"}, "spec": {"tolerations": [toleration]}}
    assert subset_score(tolerant, tainted, subset(), 0) == 0


# --- the score ---


def test_quota_left_adds_exactly_one() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    assert subset_score(pod, node("n1"), subset(), 0) == 0
    assert subset_score(pod, node("n1"), subset(), 1) == 1
    assert subset_score(pod, node("n1"), subset(), 7) == 1
    assert subset_score(pod, node("n1"), subset(), -2) == 0


def test_preferred_weights_add_a_hundred_each_and_a_zero_weight_adds_nothing() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    preferred = (
        {"weight": 3, "preference": {"matchExpressions": [label_is("zone", "a")]}},
        {"weight": 0, "preference": {"matchExpressions": [label_is("zone", "a")]}},
        {"preference": {"matchExpressions": [label_is("zone", "a")]}},
        {"weight": 50, "preference": {"matchExpressions": [label_is("zone", "b")]}},
    )
    assert subset_score(pod, node("n1", {"zone": "a"}), subset(preferred=preferred), 1) == 301


def test_patch_already_applied_adds_ten() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p", "labels": {"tier": "gold"}}, "spec": {}}
    gold = subset(patch={"metadata": {"labels": {"tier": "gold"}}})
    silver = subset(patch={"metadata": {"labels": {"tier": "silver"}}})
    assert subset_score(pod, node("n1"), gold, 1) == 11
    assert subset_score(pod, node("n1"), silver, 1) == 1


def test_no_patch_and_a_broken_patch_count_as_not_applied() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    assert patch_already_applied(pod, None) is False
    assert patch_already_applied(pod, {}) is False
    # "$patch: explode" is no strategic-merge directive: the merge refuses it.
    assert patch_already_applied(pod, {"metadata": {"$patch": "explode"}}) is False
    assert subset_score(pod, node("n1"), subset(patch={"metadata": {"$patch": "explode"}}), 0) == 0


def test_a_patch_adding_only_annotations_counts_as_applied() -> None:
    patch = {"metadata": {"labels": {"tier": "gold"}, "annotations": {"note": "added"}}}
    without = {"metadata": {"name": "p", "labels": {"tier": "gold"}}, "spec": {}}
    with_other = {
        "metadata": {"name": "p", "labels": {"tier": "gold"}, "annotations": {"x": "1"}},
        "spec": {},
    }
    assert patch_already_applied(without, patch) is True
    assert patch_already_applied(with_other, patch) is True
    assert patch_already_applied(without, {"metadata": {"labels": {"tier": "silver"}}}) is False


def test_patch_already_applied_leaves_the_pods_annotations() -> None:
    pod = {"metadata": {"name": "p", "labels": {"tier": "gold"}, "annotations": {"x": "1"}}, "spec": {}}
    before = copy.deepcopy(pod)
    assert patch_already_applied(pod, {"metadata": {"labels": {"tier": "gold"}}}) is True
    assert pod == before


# --- the best subset ---


def test_quota_left_breaks_a_tie_and_a_subset_missing_from_the_quota_has_none() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}
    first, second = subset("first"), subset("second")
    chosen = best_subset(pod, node("n1"), [first, second], {"first": 0, "second": 2})
    assert chosen is not None and chosen.name == "second"
    chosen = best_subset(pod, node("n1"), [first, second], {"second": 1})
    assert chosen is not None and chosen.name == "second"
    chosen = best_subset(pod, node("n1"), [first, second], {})
    assert chosen is not None and chosen.name == "first"


# --- the adoption patch ---


def matched(subset_name: str) -> str:
    return f'{{"name":"ws","subset":"{subset_name}"}}'


def test_the_adoption_patch_without_a_subset_patch_is_the_matched_annotation() -> None:
    assert adoption_patch(spread(), subset("a")) == {"metadata": {"annotations": {MATCHED: matched("a")}}}


def test_the_adoption_patch_carries_the_subsets_metadata() -> None:
    labels_only = subset("a", patch={"metadata": {"labels": {"tier": "gold"}}, "spec": {"priority": 3}})
    assert adoption_patch(spread(), labels_only) == {
        "metadata": {"labels": {"tier": "gold"}, "annotations": {MATCHED: matched("a")}}
    }
    spec_only = subset("b", patch={"spec": {"priority": 3}})
    assert adoption_patch(spread(), spec_only) == {"metadata": {"annotations": {MATCHED: matched("b")}}}


def test_the_adoption_patch_leaves_the_subsets_patch_as_it_was() -> None:
    patch = {"metadata": {"annotations": {"note": "x"}, "labels": {"tier": "gold"}}}
    before = copy.deepcopy(patch)
    a = subset("a", patch=patch)
    assert adoption_patch(spread(), a) == {
        "metadata": {"labels": {"tier": "gold"}, "annotations": {"note": "x", MATCHED: matched("a")}}
    }
    assert patch == before


def test_the_ignore_annotation_keeps_the_subsets_metadata_out_in_any_case() -> None:
    a = subset("a", patch={"metadata": {"labels": {"tier": "gold"}}})
    for value in ("true", "True", "TRUE"):
        assert adoption_patch(spread({IGNORE: value}), a) == {
            "metadata": {"annotations": {MATCHED: matched("a")}}
        }
    assert adoption_patch(spread({IGNORE: "false"}), a) == {
        "metadata": {"labels": {"tier": "gold"}, "annotations": {MATCHED: matched("a")}}
    }
