"""`UnitedDeployment.from_object` names every fault by its field and says what is wrong, and
keeps what it reads (mutation testing found the paths, the messages and several fields
unpinned). py_engine/model/uniteddeployment.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.errors import ModelError
from py_engine.model.ud_constants import DEFAULT_REVISION_HISTORY_LIMIT, TEMPLATE_KINDS
from py_engine.model.uniteddeployment import UnitedDeployment, is_uniteddeployment

pytestmark = pytest.mark.timeout(60)

SUBSETS = ("spec", "topology", "subsets")
SCHEDULE = ("spec", "topology", "scheduleStrategy")
UPDATE = ("spec", "updateStrategy")
ADAPTIVE = "spec.topology.scheduleStrategy.adaptive"
PARTITIONS = "spec.updateStrategy.manualUpdate.partitions"


def sample() -> dict[str, Any]:
    return ud_object(
        10,
        [
            {
                "name": "a",
                "replicas": "40%",
                "patch": {"metadata": {"labels": {"x": "y"}}},
                "tolerations": [{"key": "k", "operator": "Exists"}],
            },
            {"name": "b", "minReplicas": 1, "maxReplicas": 3},
        ],
    )


def changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    obj = sample()
    target = obj
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    ("path", "value", "field", "message"),
    [
        (
            ("kind",),
            "Deployment",
            "kind",
            "not a UnitedDeployment (spreadgate.dev or apps.kruise.io, v1beta1 or v1alpha1)",
        ),
        (("metadata",), "x", "metadata", "must be an object"),
        (("metadata", "name"), 5, "metadata.name", "must be a string"),
        (("metadata", "namespace"), 5, "metadata.namespace", "must be a string"),
        (("metadata", "uid"), 5, "metadata.uid", "must be a string"),
        (("metadata", "labels"), {"a": 1}, "metadata.labels[a]", "must be a string"),
        (("spec",), None, "spec", "is required"),
        (("spec", "replicas"), -1, "spec.replicas", "must be at least 0, got -1"),
        (("spec", "replicas"), "3", "spec.replicas", "must be an integer, not '3'"),
        (("spec", "replicas"), 2**31, "spec.replicas", "2147483648 is out of the int32 range"),
        (("spec", "selector"), None, "spec.selector", "is required"),
        (("spec", "selector"), {}, "spec.selector", "an empty selector would select every workload and pod"),
        (
            ("spec", "selector"),
            {"matchLabels": {"a": 1}},
            "spec.selector",
            "matchLabels['a'] must be a string",
        ),
        (("spec", "template"), None, "spec.template", "is required"),
        (
            ("spec", "template"),
            {},
            "spec.template",
            "should provide one of " + ", ".join(key for key, _, _ in TEMPLATE_KINDS),
        ),
        (("spec", "topology"), "x", "spec.topology", "must be an object"),
        (SUBSETS, "x", "spec.topology.subsets", "must be a list"),
        (SUBSETS, [None], "spec.topology.subsets[0]", "is required"),
        (SUBSETS, [{}], "spec.topology.subsets[0].name", "must be a non-empty string"),
        (
            SUBSETS,
            [{"name": "A"}],
            "spec.topology.subsets[0].name",
            "invalid subset name 'A': must be a DNS-1123 label",
        ),
        (
            SUBSETS,
            [{"name": "a"}, {"name": "a"}],
            "spec.topology.subsets[1].name",
            "duplicated subset name a",
        ),
        (
            SUBSETS,
            [{"name": "a", "nodeSelectorTerm": {"matchExpressions": [{"operator": "In"}]}}],
            "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].key",
            "must be a non-empty string",
        ),
        (
            SUBSETS,
            [{"name": "a", "tolerations": [None]}],
            "spec.topology.subsets[0].tolerations[0]",
            "is required",
        ),
        (SUBSETS, [{"name": "a", "patch": "x"}], "spec.topology.subsets[0].patch", "must be an object"),
        (
            SUBSETS,
            [{"name": f"s{i}"} for i in range(101)],
            "spec.topology.subsets",
            "101 subsets, more than the 100 allowed (the CRD's maxItems); "
            "nothing is reconciled until it is fixed",
        ),
        (SCHEDULE, "x", "spec.topology.scheduleStrategy", "must be an object"),
        (SCHEDULE, {"type": 5}, "spec.topology.scheduleStrategy.type", "must be a string"),
        (
            SCHEDULE,
            {"type": "Other"},
            "spec.topology.scheduleStrategy.type",
            "unsupported value 'Other': Fixed or Adaptive",
        ),
        (SCHEDULE, {"adaptive": "x"}, ADAPTIVE, "must be an object"),
        (
            SCHEDULE,
            {"adaptive": {"reserveUnschedulablePods": "yes"}},
            f"{ADAPTIVE}.reserveUnschedulablePods",
            "must be a boolean",
        ),
        (
            SCHEDULE,
            {"adaptive": {"rescheduleCriticalSeconds": -1}},
            f"{ADAPTIVE}.rescheduleCriticalSeconds",
            "must be at least 0, got -1",
        ),
        (
            SCHEDULE,
            {"adaptive": {"unschedulableDuration": "x"}},
            f"{ADAPTIVE}.unschedulableDuration",
            "must be an integer, not 'x'",
        ),
        (
            SCHEDULE,
            {"adaptive": {"unschedulableLastSeconds": "x"}},
            f"{ADAPTIVE}.unschedulableLastSeconds",
            "must be an integer, not 'x'",
        ),
        (UPDATE, "x", "spec.updateStrategy", "must be an object"),
        (UPDATE, {"type": 5}, "spec.updateStrategy.type", "must be a string"),
        (UPDATE, {"type": "Auto"}, "spec.updateStrategy.type", "unsupported value 'Auto': only Manual"),
        (UPDATE, {"manualUpdate": "x"}, "spec.updateStrategy.manualUpdate", "must be an object"),
        (UPDATE, {"manualUpdate": {"partitions": "x"}}, PARTITIONS, "must be an object"),
        (
            UPDATE,
            {"manualUpdate": {"partitions": {"a": "1"}}},
            f"{PARTITIONS}[a]",
            "must be an integer, not '1'",
        ),
        (("spec", "revisionHistoryLimit"), "x", "spec.revisionHistoryLimit", "must be an integer, not 'x'"),
    ],
)
def test_every_fault_is_named_with_its_field_and_what_is_wrong(
    path: tuple[str, ...], value: Any, field: str, message: str
) -> None:
    with pytest.raises(ModelError) as excinfo:
        UnitedDeployment.from_object(changed(path, value))
    assert (excinfo.value.field, excinfo.value.message) == (field, message)


def test_spelled_out_defaults_are_accepted() -> None:
    ud = UnitedDeployment.from_object(changed(SCHEDULE, {"type": "Fixed"}))
    assert ud.schedule.type == "Fixed"
    ud = UnitedDeployment.from_object(changed(UPDATE, {"type": "Manual"}))
    assert ud.update_strategy.type == "Manual" and ud.update_strategy.partitions == {}


def test_partitions_may_be_negative_and_null_reads_as_zero() -> None:
    ud = UnitedDeployment.from_object(
        changed(UPDATE, {"manualUpdate": {"partitions": {"a": 2, "b": None, "c": -1}}})
    )
    assert ud.update_strategy.partitions == {"a": 2, "b": 0, "c": -1}


def test_revision_history_limit_is_read_or_defaulted() -> None:
    assert (
        UnitedDeployment.from_object(changed(("spec", "revisionHistoryLimit"), 3)).revision_history_limit == 3
    )
    assert UnitedDeployment.from_object(sample()).revision_history_limit == DEFAULT_REVISION_HISTORY_LIMIT


def test_what_a_subset_keeps() -> None:
    ud = UnitedDeployment.from_object(sample())
    a, b = ud.subsets
    assert (a.index, b.index) == (0, 1)
    assert a.patch == {"metadata": {"labels": {"x": "y"}}} and b.patch is None
    assert a.tolerations == ({"key": "k", "operator": "Exists"},) and b.tolerations == ()
    labelled = copy.deepcopy(sample())
    labelled["metadata"]["labels"] = {"team": "x"}
    assert UnitedDeployment.from_object(labelled).labels == {"team": "x"}


def test_adaptive_options_are_read_or_defaulted() -> None:
    default = UnitedDeployment.from_object(changed(SCHEDULE, {"type": "Adaptive"})).schedule.adaptive
    assert (
        default.reschedule_critical_seconds,
        default.unschedulable_duration_seconds,
        default.reserve_unschedulable_pods,
    ) == (30, 300, False)
    given = UnitedDeployment.from_object(
        changed(
            SCHEDULE,
            {
                "type": "Adaptive",
                "adaptive": {
                    "rescheduleCriticalSeconds": 7,
                    "unschedulableDuration": 70,
                    "unschedulableLastSeconds": 99,
                    "reserveUnschedulablePods": True,
                },
            },
        )
    ).schedule.adaptive
    assert (
        given.reschedule_critical_seconds,
        given.unschedulable_duration_seconds,
        given.reserve_unschedulable_pods,
    ) == (7, 70, True)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("101%", "'101%' must be between 0% and 100%"),
        ("-1%", "'-1%' must be between 0% and 100%"),
        ("1.5%", "'1.5%' is not an integer or a percentage like \"25%\""),
    ],
)
def test_replica_percentages_are_whole_and_within_0_and_100(raw: str, message: str) -> None:
    with pytest.raises(ModelError) as excinfo:
        UnitedDeployment.from_object(changed(SUBSETS, [{"name": "a", "replicas": raw}]))
    assert (excinfo.value.field, excinfo.value.message) == ("spec.topology.subsets[0].replicas", message)


def test_replica_percentages_of_0_and_100_are_accepted() -> None:
    ud = UnitedDeployment.from_object(
        changed(SUBSETS, [{"name": "a", "replicas": "0%"}, {"name": "b", "maxReplicas": "100%"}])
    )
    assert ud.subsets[0].replicas is not None and ud.subsets[0].replicas.value == 0
    assert ud.subsets[1].max_replicas is not None and ud.subsets[1].max_replicas.value == 100


@pytest.mark.parametrize(
    ("term", "field", "message"),
    [
        ("x", "spec.topology.subsets[0].nodeSelectorTerm", "must be an object"),
        ({"matchFields": "x"}, "spec.topology.subsets[0].nodeSelectorTerm.matchFields", "must be a list"),
        ({"matchFields": [None]}, "spec.topology.subsets[0].nodeSelectorTerm.matchFields[0]", "is required"),
        (
            {"matchExpressions": [{"key": "k", "operator": "In", "values": "x"}]},
            "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].values",
            "must be a list",
        ),
        (
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [1]}]},
            "spec.topology.subsets[0].nodeSelectorTerm.matchFields[0].values[0]",
            "must be a string",
        ),
    ],
)
def test_node_selector_term_faults_are_named(term: Any, field: str, message: str) -> None:
    with pytest.raises(ModelError) as excinfo:
        UnitedDeployment.from_object(changed(SUBSETS, [{"name": "a", "nodeSelectorTerm": term}]))
    assert (excinfo.value.field, excinfo.value.message) == (field, message)


def test_bounds_of_subset_names_and_counts() -> None:
    ud = UnitedDeployment.from_object(changed(SUBSETS, [{"name": "a" * 63}]))
    assert ud.subsets[0].name == "a" * 63
    with pytest.raises(ModelError) as excinfo:
        UnitedDeployment.from_object(changed(SUBSETS, [{"name": "a" * 64}]))
    assert excinfo.value.message == f"invalid subset name {'a' * 64!r}: must be a DNS-1123 label"
    assert (
        len(UnitedDeployment.from_object(changed(SUBSETS, [{"name": f"s{i}"} for i in range(100)])).subsets)
        == 100
    )


def test_min_replicas_and_tolerations_are_read_and_checked() -> None:
    ud = UnitedDeployment.from_object(sample())
    assert ud.subsets[1].min_replicas is not None and ud.subsets[1].min_replicas.value == 1
    assert ud.subsets[0].min_replicas is None
    for field, value, message in (
        ("minReplicas", "x", "'x' is not an integer or a percentage like \"25%\""),
        ("tolerations", "x", "must be a list"),
    ):
        with pytest.raises(ModelError) as excinfo:
            UnitedDeployment.from_object(changed(SUBSETS, [{"name": "a", field: value}]))
        assert (excinfo.value.field, excinfo.value.message) == (f"spec.topology.subsets[0].{field}", message)


def _template_with(change: dict[str, Any]) -> tuple[dict[str, Any], str]:
    obj = sample()
    (key,) = obj["spec"]["template"]
    body = obj["spec"]["template"][key]
    for path, value in change.items():
        target = body
        parts = path.split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value
    return obj, f"spec.template.{key}"


@pytest.mark.parametrize(
    ("change", "suffix", "message"),
    [
        ({"metadata": "x"}, ".metadata", "must be an object"),
        ({"metadata.annotations": {"a": 1}}, ".metadata.annotations[a]", "must be a string"),
        ({"metadata.labels": {"a": 1}}, ".metadata.labels[a]", "must be a string"),
        ({"spec": "x"}, ".spec", "must be an object"),
        ({"spec.template": "x"}, ".spec.template", "must be an object"),
        ({"spec.template.metadata": "x"}, ".spec.template.metadata", "must be an object"),
        (
            {"spec.template.metadata.labels": {"a": 1}},
            ".spec.template.metadata.labels[a]",
            "must be a string",
        ),
        ({"spec.template.spec": "x"}, ".spec.template.spec", "must be an object"),
    ],
)
def test_template_faults_are_named(change: dict[str, Any], suffix: str, message: str) -> None:
    obj, prefix = _template_with(change)
    with pytest.raises(ModelError) as excinfo:
        UnitedDeployment.from_object(obj)
    assert (excinfo.value.field, excinfo.value.message) == (prefix + suffix, message)


def test_a_template_that_is_not_an_object_is_named() -> None:
    obj = sample()
    (key,) = obj["spec"]["template"]
    obj["spec"]["template"][key] = "x"
    with pytest.raises(ModelError) as excinfo:
        UnitedDeployment.from_object(obj)
    assert (excinfo.value.field, excinfo.value.message) == (f"spec.template.{key}", "must be an object")


@pytest.mark.parametrize(("raw", "expected"), [(0, 0), (2**31 - 1, 2**31 - 1), (3.0, 3)])
def test_whole_numbers_from_0_to_the_int32_bound_are_read(raw: Any, expected: int) -> None:
    replicas = UnitedDeployment.from_object(changed(("spec", "replicas"), raw)).replicas
    assert replicas == expected and type(replicas) is int


def test_only_a_group_and_version_of_ours_make_a_united_deployment() -> None:
    for api_version in (
        "v1",
        5,
        None,
        "apps/v1",
        "apps.kruise.io/v2",
        "apps/v1beta1",
        "apps.kruise.io/v1beta1/x",
    ):
        assert not is_uniteddeployment({"kind": "UnitedDeployment", "apiVersion": api_version})
    assert is_uniteddeployment({"kind": "UnitedDeployment", "apiVersion": "apps.kruise.io/v1alpha1"})


@pytest.mark.parametrize(("generation", "expected"), [(4, 4), ("4", 0), (True, 0), (None, 0)])
def test_a_generation_that_is_not_a_whole_number_reads_as_zero(generation: Any, expected: int) -> None:
    assert (
        UnitedDeployment.from_object(changed(("metadata", "generation"), generation)).generation == expected
    )


def test_the_raw_object_is_kept() -> None:
    assert UnitedDeployment.from_object(sample()).raw == sample()


def test_the_template_keeps_its_key_metadata_and_spec() -> None:
    obj = sample()
    (key,) = obj["spec"]["template"]
    template = UnitedDeployment.from_object(obj).template
    body = obj["spec"]["template"][key]
    assert (template.key, template.metadata, template.spec) == (key, body.get("metadata", {}), body["spec"])
