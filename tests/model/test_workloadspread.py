"""Typed views of WorkloadSpread objects, Spreadgate's and Kruise's alike."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from py_engine.model import ModelError, WorkloadSpread, is_workloadspread

SPREAD: dict[str, Any] = {
    "apiVersion": "spreadgate.dev/v1alpha1",
    "kind": "WorkloadSpread",
    "metadata": {
        "name": "ws",
        "namespace": "default",
        "uid": "u1",
        "generation": 3,
        "annotations": {
            "spreadgate.dev/in-subset-spread": "False",
            "spreadgate.dev/recovery-window-seconds": "600",
        },
    },
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "targetFilter": {"selector": {"matchLabels": {"a": "b"}}, "replicasPathList": ["spec.replicas"]},
        "subsets": [
            {
                "name": "a",
                "maxReplicas": "30%",
                "tolerations": [{"operator": "Exists"}],
                "requiredNodeSelectorTerm": {"matchExpressions": []},
                "patch": {"metadata": {"labels": {"x": "y"}}},
            },
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
    assert (ours.subsets, ours.strategy, ours.target_ref) == (
        theirs.subsets,
        theirs.strategy,
        theirs.target_ref,
    )


def test_defaults() -> None:
    minimal = {
        "apiVersion": "spreadgate.dev/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "m"},
        "spec": {
            "targetRef": {"apiVersion": "batch/v1", "kind": "Job", "name": "j"},
            "subsets": [{"name": "a"}],
        },
    }
    ws = WorkloadSpread.from_object(minimal)
    assert ws.strategy.type == "Fixed" and not ws.strategy.reschedules
    assert ws.in_subset_spread and ws.recovery_window_seconds(300) == 300
    assert not ws.uses_percentages


def _error_with(path: tuple[str, ...], value: Any) -> ModelError:
    """The ModelError that reading SPREAD raises once `value` is set at `path`."""
    obj = copy.deepcopy(SPREAD)
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object(obj)
    return excinfo.value


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
        (
            ("spec", "scheduleStrategy"),
            {"adaptive": {"rescheduleCriticalSeconds": "30"}},
            "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
        ),
        (("spec", "targetFilter"), {"selector": 3}, "spec.targetFilter.selector"),
        (("spec", "subsets"), [{"name": "a"}, {"name": "a"}], "spec.subsets[1].name"),
        (
            ("spec", "subsets"),
            [{"name": "a", "requiredNodeSelectorTerm": {"matchExpressions": "zone"}}],
            "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions",
        ),
        (
            ("spec", "subsets"),
            [
                {
                    "name": "a",
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": [1]}]
                    },
                }
            ],
            "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values[0]",
        ),
        (
            ("spec", "subsets"),
            [
                {
                    "name": "a",
                    "preferredNodeSelectorTerms": [
                        {"weight": 1, "preference": {"matchFields": [{"key": "metadata.name"}]}}
                    ],
                }
            ],
            "spec.subsets[0].preferredNodeSelectorTerms[0].preference.matchFields[0].operator",
        ),
    ],
)
def test_malformed_objects_name_the_field(path: tuple[str, ...], value: Any, field: str) -> None:
    assert _error_with(path, value).field == field


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
        "spec.subsets[0].preferredNodeSelectorTerms[0]",
        "is required" if term is None else "must be an object",
    )


def _with_term(term: Any) -> dict[str, Any]:
    obj = copy.deepcopy(SPREAD)
    obj["spec"]["subsets"] = [{"name": "a", "requiredNodeSelectorTerm": term}]
    return obj


@pytest.mark.parametrize(
    ("term", "field", "message"),
    [
        ("x", "spec.subsets[0].requiredNodeSelectorTerm", "must be an object"),
        (
            {"matchExpressions": [None]},
            "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0]",
            "is required",
        ),
        (
            {"matchFields": ["x"]},
            "spec.subsets[0].requiredNodeSelectorTerm.matchFields[0]",
            "must be an object",
        ),
        (
            {"matchExpressions": [{"key": 5, "operator": "Exists"}]},
            "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].key",
            "must be a non-empty string",
        ),
        (
            {"matchExpressions": [{"key": "k", "operator": "In", "values": "x"}]},
            "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values",
            "must be a list",
        ),
        (
            {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a", 1]}]},
            "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values[1]",
            "must be a string",
        ),
    ],
)
def test_malformed_node_selector_terms_name_the_field_and_the_fault(
    term: Any, field: str, message: str
) -> None:
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object(_with_term(term))
    assert (excinfo.value.field, excinfo.value.message) == (field, message)


def test_a_requirement_may_omit_its_key() -> None:
    WorkloadSpread.from_object(
        _with_term(
            {"matchExpressions": [{"operator": "Exists"}, {"key": "", "operator": "In", "values": ["a"]}]}
        )
    )


@pytest.mark.parametrize(
    ("value", "expected"), [("0", 77), ("1", 1), ("600", 600), ("-5", 77), ("x", 77), ("", 77)]
)
def test_the_recovery_window_annotation_must_be_a_positive_integer(value: str, expected: int) -> None:
    obj = copy.deepcopy(SPREAD)
    obj["metadata"]["annotations"]["spreadgate.dev/recovery-window-seconds"] = value
    assert WorkloadSpread.from_object(obj).recovery_window_seconds(77) == expected


SUBSET_PATH = ("spec", "subsets")


@pytest.mark.parametrize(
    ("path", "value", "field", "message"),
    [
        (("spec", "targetRef"), None, "spec.targetRef", "is required"),
        (("spec", "targetRef"), "x", "spec.targetRef", "must be an object"),
        (("spec", "targetRef", "apiVersion"), 5, "spec.targetRef.apiVersion", "must be a non-empty string"),
        (("spec", "targetRef", "kind"), "", "spec.targetRef.kind", "must be a non-empty string"),
        (("spec", "targetFilter"), "x", "spec.targetFilter", "must be an object"),
        (
            ("spec", "targetFilter"),
            {"selector": 3},
            "spec.targetFilter.selector",
            "must be a label selector object",
        ),
        (
            ("spec", "targetFilter"),
            {"replicasPathList": "x"},
            "spec.targetFilter.replicasPathList",
            "must be a list",
        ),
        (
            ("spec", "targetFilter"),
            {"replicasPathList": [5]},
            "spec.targetFilter.replicasPathList[0]",
            "must be a non-empty string",
        ),
        (SUBSET_PATH, "x", "spec.subsets", "must be a list"),
        (SUBSET_PATH, [], "spec.subsets", "at least one subset is required"),
        (SUBSET_PATH, [None], "spec.subsets[0]", "is required"),
        (SUBSET_PATH, [{"name": 5}], "spec.subsets[0].name", "must be a non-empty string"),
        (SUBSET_PATH, [{"name": "a"}, {"name": "a"}], "spec.subsets[1].name", "duplicate subset name 'a'"),
        (
            SUBSET_PATH,
            [{"name": "a", "preferredNodeSelectorTerms": "x"}],
            "spec.subsets[0].preferredNodeSelectorTerms",
            "must be a list",
        ),
        (
            SUBSET_PATH,
            [{"name": "a", "tolerations": [None]}],
            "spec.subsets[0].tolerations[0]",
            "is required",
        ),
        (
            SUBSET_PATH,
            [{"name": "a", "tolerations": ["x"]}],
            "spec.subsets[0].tolerations[0]",
            "must be an object",
        ),
        (SUBSET_PATH, [{"name": "a", "patch": "x"}], "spec.subsets[0].patch", "must be an object"),
        (("spec", "scheduleStrategy"), "x", "spec.scheduleStrategy", "must be an object"),
        (
            ("spec", "scheduleStrategy"),
            {"type": 5},
            "spec.scheduleStrategy.type",
            "must be a non-empty string",
        ),
        (
            ("spec", "scheduleStrategy"),
            {"adaptive": "x"},
            "spec.scheduleStrategy.adaptive",
            "must be an object",
        ),
        (
            ("spec", "scheduleStrategy"),
            {"adaptive": {"rescheduleCriticalSeconds": True}},
            "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
            "must be an integer",
        ),
    ],
)
def test_every_fault_is_named_with_its_field_and_what_is_wrong(
    path: tuple[str, ...], value: Any, field: str, message: str
) -> None:
    error = _error_with(path, value)
    assert (error.field, error.message) == (field, message)


def test_what_a_subset_and_the_strategy_keep() -> None:
    ws = WorkloadSpread.from_object(SPREAD)
    assert [s.index for s in ws.subsets] == [0, 1]
    assert ws.subsets[0].patch == {"metadata": {"labels": {"x": "y"}}} and ws.subsets[1].patch is None
    assert ws.target_filter is not None and ws.target_filter.selector == {"matchLabels": {"a": "b"}}
    assert ws.strategy.adaptive_set and not ws.strategy.disable_simulation_schedule
    obj = copy.deepcopy(SPREAD)
    obj["spec"]["scheduleStrategy"] = {"type": "Adaptive", "adaptive": {"disableSimulationSchedule": True}}
    assert WorkloadSpread.from_object(obj).strategy.disable_simulation_schedule
    obj["spec"]["scheduleStrategy"] = {"type": "Adaptive"}
    assert not WorkloadSpread.from_object(obj).strategy.adaptive_set
    obj["spec"]["targetFilter"] = {"replicasPathList": ["spec.replicas"]}
    assert WorkloadSpread.from_object(obj).target_filter.selector is None  # type: ignore[union-attr]


@pytest.mark.parametrize(("generation", "expected"), [(3, 3), ("3", 0), (True, 0), (None, 0), (2.0, 0)])
def test_a_generation_that_is_not_a_whole_number_reads_as_zero(generation: Any, expected: int) -> None:
    obj = copy.deepcopy(SPREAD)
    obj["metadata"]["generation"] = generation
    assert WorkloadSpread.from_object(obj).generation == expected


def test_identity_fields_and_the_raw_object_are_kept() -> None:
    ws = WorkloadSpread.from_object(SPREAD)
    assert (ws.name, ws.namespace, ws.uid) == ("ws", "default", "u1")
    assert ws.raw == SPREAD
    nameless = copy.deepcopy(SPREAD)
    nameless["metadata"] = {}
    ws = WorkloadSpread.from_object(nameless)
    assert (ws.name, ws.namespace, ws.uid, ws.annotations) == ("", "", "", {})


@pytest.mark.parametrize(
    ("metadata", "field", "message"),
    [
        ("x", "metadata", "must be an object"),
        ({"name": 5}, "metadata.name", "must be a non-empty string"),
        ({"namespace": 5}, "metadata.namespace", "must be a non-empty string"),
        ({"uid": 5}, "metadata.uid", "must be a non-empty string"),
        ({"annotations": "x"}, "metadata.annotations", "must be an object"),
    ],
)
def test_metadata_faults_are_named(metadata: Any, field: str, message: str) -> None:
    obj = copy.deepcopy(SPREAD)
    obj["metadata"] = metadata
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object(obj)
    assert (excinfo.value.field, excinfo.value.message) == (field, message)


def test_another_kind_is_refused_by_name() -> None:
    with pytest.raises(ModelError) as excinfo:
        WorkloadSpread.from_object({**SPREAD, "kind": "Deployment"})
    assert (excinfo.value.field, excinfo.value.message) == (
        "kind",
        "not a WorkloadSpread (spreadgate.dev or apps.kruise.io)",
    )
