"""Typed views of WorkloadSpread objects, Spreadgate's and Kruise's alike."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from py_engine.model import ModelError, WorkloadSpread, is_workloadspread

SPREAD: dict[str, Any] = {
    "apiVersion": "spreadgate.dev/v1alpha1",
    "kind": "WorkloadSpread",
    "metadata": {"name": "ws", "namespace": "default", "uid": "u1", "generation": 3,
                 "annotations": {"spreadgate.dev/in-subset-spread": "False",
                                 "spreadgate.dev/recovery-window-seconds": "600"}},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "targetFilter": {"selector": {"matchLabels": {"a": "b"}}, "replicasPathList": ["spec.replicas"]},
        "subsets": [
            {"name": "a", "maxReplicas": "30%", "tolerations": [{"operator": "Exists"}],
             "requiredNodeSelectorTerm": {"matchExpressions": []}, "patch": {"metadata": {"labels": {"x": "y"}}}},
            {"name": "b"},
        ],
        "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
    },
}


def test_reads_every_field() -> None:
    ws = WorkloadSpread.from_object(SPREAD)
    assert ws.target_ref.identity() == ("apps", "Deployment", "web")
    assert [s.name for s in ws.subsets] == ["a", "b"]
    assert ws.subsets[0].cap(10) == 3 and ws.subsets[1].cap(10) is None
    assert ws.subset("b") is ws.subsets[1] and ws.subset("zzz") is None
    assert ws.strategy.reschedules and ws.uses_percentages
    assert ws.target_filter is not None and ws.target_filter.replicas_path_list == ("spec.replicas",)
    assert not ws.in_subset_spread
    assert ws.recovery_window_seconds(300) == 600
    assert ws.generation == 3


def test_kruise_group_is_read_identically() -> None:
    kruise = copy.deepcopy(SPREAD)
    kruise["apiVersion"] = "apps.kruise.io/v1alpha1"
    assert is_workloadspread(kruise)
    ours, theirs = WorkloadSpread.from_object(SPREAD), WorkloadSpread.from_object(kruise)
    assert (ours.subsets, ours.strategy, ours.target_ref) == (theirs.subsets, theirs.strategy, theirs.target_ref)


def test_defaults() -> None:
    minimal = {"apiVersion": "spreadgate.dev/v1alpha1", "kind": "WorkloadSpread", "metadata": {"name": "m"},
               "spec": {"targetRef": {"apiVersion": "batch/v1", "kind": "Job", "name": "j"}, "subsets": [{"name": "a"}]}}
    ws = WorkloadSpread.from_object(minimal)
    assert ws.strategy.type == "Fixed" and not ws.strategy.reschedules
    assert ws.in_subset_spread and ws.recovery_window_seconds(300) == 300
    assert not ws.uses_percentages


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("spec",), None, "spec"),
        (("spec", "targetRef"), None, "spec.targetRef"),
        (("spec", "targetRef", "name"), "", "spec.targetRef.name"),
        (("spec", "subsets"), [], "spec.subsets"),
        (("spec", "subsets"), [{"name": "a"}, 5], "spec.subsets[1]"),
        (("spec", "subsets"), [{"name": "a", "maxReplicas": "1.5%"}], "spec.subsets[0].maxReplicas"),
        (("spec", "subsets"), [{"name": "a", "tolerations": "x"}], "spec.subsets[0].tolerations"),
        (("spec", "scheduleStrategy"), {"adaptive": {"rescheduleCriticalSeconds": "30"}},
         "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"),
        (("spec", "targetFilter"), {"selector": 3}, "spec.targetFilter.selector"),
        (("spec", "subsets"), [{"name": "a"}, {"name": "a"}], "spec.subsets[1].name"),
        (("spec", "subsets"), [{"name": "a", "requiredNodeSelectorTerm": {"matchExpressions": "zone"}}],
         "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions"),
        (("spec", "subsets"), [{"name": "a", "requiredNodeSelectorTerm": {"matchExpressions": [
            {"key": "zone", "operator": "In", "values": [1]}]}}],
         "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values[0]"),
        (("spec", "subsets"), [{"name": "a", "preferredNodeSelectorTerms": [{"weight": 1, "preference": {
            "matchFields": [{"key": "metadata.name"}]}}]}],
         "spec.subsets[0].preferredNodeSelectorTerms[0].preference.matchFields[0].operator"),
    ],
)
def test_malformed_objects_name_the_field(path: tuple[str, ...], value: Any, field: str) -> None:
    obj = copy.deepcopy(SPREAD)
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object(obj)
    assert excinfo.value.field == field


def test_other_kinds_are_not_spreads() -> None:
    assert not is_workloadspread({"apiVersion": "apps/v1", "kind": "WorkloadSpread"})
    with pytest.raises(ModelError):
        WorkloadSpread.from_object({"kind": "Deployment"})


@pytest.mark.parametrize("term", [None, "x"])
def test_a_preferred_term_must_be_an_object(term: Any) -> None:
    obj = copy.deepcopy(SPREAD)
    obj["spec"]["subsets"] = [{"name": "a", "preferredNodeSelectorTerms": [term]}]
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object(obj)
    assert (excinfo.value.field, excinfo.value.message) == (
        "spec.subsets[0].preferredNodeSelectorTerms[0]", "is required" if term is None else "must be an object")


def _with_term(term: Any) -> dict[str, Any]:
    obj = copy.deepcopy(SPREAD)
    obj["spec"]["subsets"] = [{"name": "a", "requiredNodeSelectorTerm": term}]
    return obj


@pytest.mark.parametrize(("term", "field", "message"), [
    ("x", "spec.subsets[0].requiredNodeSelectorTerm", "must be an object"),
    ({"matchExpressions": [None]}, "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0]", "is required"),
    ({"matchFields": ["x"]}, "spec.subsets[0].requiredNodeSelectorTerm.matchFields[0]", "must be an object"),
    ({"matchExpressions": [{"key": 5, "operator": "Exists"}]},
     "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].key", "must be a non-empty string"),
])
def test_malformed_node_selector_terms_name_the_field_and_the_fault(term: Any, field: str, message: str) -> None:
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object(_with_term(term))
    assert (excinfo.value.field, excinfo.value.message) == (field, message)


def test_a_requirement_may_omit_its_key() -> None:
    WorkloadSpread.from_object(_with_term({"matchExpressions": [{"operator": "Exists"}, {"key": "", "operator": "In",
                                                                                           "values": ["a"]}]}))


@pytest.mark.parametrize(("value", "expected"), [("0", 77), ("1", 1), ("600", 600), ("-5", 77), ("x", 77), ("", 77)])
def test_the_recovery_window_annotation_must_be_a_positive_integer(value: str, expected: int) -> None:
    obj = copy.deepcopy(SPREAD)
    obj["metadata"]["annotations"]["spreadgate.dev/recovery-window-seconds"] = value
    assert WorkloadSpread.from_object(obj).recovery_window_seconds(77) == expected
