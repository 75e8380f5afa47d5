"""`UnitedDeployment.from_object`: both groups, both versions, defaults, and ModelError paths."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ud_testkit import ud_object

from py_engine.model.errors import ModelError
from py_engine.model.ud_conversion import status_to_v1alpha1, status_to_v1beta1
from py_engine.model.uniteddeployment import ReplicaValue, UnitedDeployment, is_uniteddeployment

pytestmark = pytest.mark.timeout(60)


def sample(**changes: Any) -> dict[str, Any]:
    obj = ud_object(10, [{"name": "a", "replicas": "40%"}, {"name": "b", "minReplicas": 1, "maxReplicas": 3}])
    obj["spec"].update(changes)
    return obj


def test_reads_every_field_with_defaults() -> None:
    ud = UnitedDeployment.from_object(sample())
    assert (ud.name, ud.namespace, ud.uid, ud.generation, ud.replicas) == (
        "web",
        "default",
        "ud-uid-1",
        2,
        10,
    )
    assert ud.template.kind == "Deployment" and ud.template.api_version == "apps/v1"
    assert [s.name for s in ud.subsets] == ["a", "b"]
    assert ud.subsets[0].replicas == ReplicaValue(40, percent=True)
    assert ud.subsets[1].max_replicas == ReplicaValue(3)
    assert ud.schedule.type == "Fixed" and not ud.schedule.is_adaptive
    assert ud.schedule.adaptive.reschedule_critical_seconds == 30
    assert ud.schedule.adaptive.unschedulable_duration_seconds == 300
    assert ud.update_strategy.type == "Manual" and ud.revision_history_limit == 10
    assert ud.hub_api_version == "spreadgate.dev/v1beta1"


@pytest.mark.parametrize(
    "api_version", ["apps.kruise.io/v1beta1", "apps.kruise.io/v1alpha1", "spreadgate.dev/v1alpha1"]
)
def test_kruise_group_and_alpha_version_are_accepted(api_version: str) -> None:
    obj = sample()
    obj["apiVersion"] = api_version
    ud = UnitedDeployment.from_object(obj)
    assert ud.hub_api_version == api_version.split("/")[0] + "/v1beta1"


def test_alpha_status_is_converted_to_the_hub_shape() -> None:
    obj = sample()
    obj["apiVersion"] = "apps.kruise.io/v1alpha1"
    obj["status"] = {
        "subsetReplicas": {"a": 4, "b": 6},
        "updateStatus": {"updatedRevision": "web-abc", "currentPartitions": {"a": 1}},
    }
    ud = UnitedDeployment.from_object(obj)
    assert ud.status["updatedRevision"] == "web-abc"
    assert ud.status["subsetStatuses"] == [
        {"name": "a", "replicas": 4, "partition": 1},
        {"name": "b", "replicas": 6},
    ]
    assert "subsetReplicas" not in ud.status and "updateStatus" not in ud.status


def test_status_conversion_round_trips() -> None:
    beta = {"updatedRevision": "web-1", "subsetStatuses": [{"name": "a", "replicas": 2, "partition": 1}]}
    alpha = status_to_v1alpha1(beta)
    assert alpha["subsetReplicas"] == {"a": 2}
    assert alpha["updateStatus"] == {"updatedRevision": "web-1", "currentPartitions": {"a": 1}}
    assert status_to_v1beta1(alpha) == beta
    assert "updateStatus" not in status_to_v1alpha1({"replicas": 0})


def test_old_unschedulable_field_name_is_read_as_an_alias() -> None:
    obj = sample()
    obj["spec"]["topology"]["scheduleStrategy"] = {
        "type": "Adaptive",
        "adaptive": {"unschedulableLastSeconds": 60},
    }
    assert UnitedDeployment.from_object(obj).schedule.adaptive.unschedulable_duration_seconds == 60


def test_highest_priority_template_wins() -> None:
    obj = sample()
    obj["spec"]["template"]["cloneSetTemplate"] = {"spec": {}}
    assert UnitedDeployment.from_object(obj).template.kind == "CloneSet"


@pytest.mark.parametrize(
    ("path", "mutate"),
    [
        ("kind", lambda o: o.update(kind="Deployment")),
        ("spec", lambda o: o.pop("spec")),
        ("spec.selector", lambda o: o["spec"].pop("selector")),
        ("spec.selector", lambda o: o["spec"].update(selector={})),
        ("spec.selector", lambda o: o["spec"].update(selector={"matchLabels": {"a": 1}})),
        ("spec.template", lambda o: o["spec"].update(template={})),
        ("spec.replicas", lambda o: o["spec"].update(replicas=-1)),
        ("spec.replicas", lambda o: o["spec"].update(replicas="3")),
        ("spec.topology.subsets", lambda o: o["spec"]["topology"].update(subsets={})),
        ("spec.topology.subsets[0].name", lambda o: o["spec"]["topology"]["subsets"][0].update(name="A_b")),
        ("spec.topology.subsets[1].name", lambda o: o["spec"]["topology"]["subsets"][1].update(name="a")),
        (
            "spec.topology.subsets[0].replicas",
            lambda o: o["spec"]["topology"]["subsets"][0].update(replicas="5.5%"),
        ),
        (
            "spec.topology.subsets[0].replicas",
            lambda o: o["spec"]["topology"]["subsets"][0].update(replicas="101%"),
        ),
        (
            "spec.topology.subsets[1].maxReplicas",
            lambda o: o["spec"]["topology"]["subsets"][1].update(maxReplicas=-2),
        ),
        ("spec.topology.subsets[0].patch", lambda o: o["spec"]["topology"]["subsets"][0].update(patch=[1])),
        (
            "spec.topology.subsets[0].tolerations[0]",
            lambda o: o["spec"]["topology"]["subsets"][0].update(tolerations=["x"]),
        ),
        (
            "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].operator",
            lambda o: o["spec"]["topology"]["subsets"][0].update(
                nodeSelectorTerm={"matchExpressions": [{"key": "k"}]}
            ),
        ),
        (
            "spec.topology.scheduleStrategy.type",
            lambda o: o["spec"]["topology"].update(scheduleStrategy={"type": "Sometimes"}),
        ),
        (
            "spec.topology.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
            lambda o: o["spec"]["topology"].update(
                scheduleStrategy={"adaptive": {"rescheduleCriticalSeconds": -1}}
            ),
        ),
        ("spec.updateStrategy.type", lambda o: o["spec"].update(updateStrategy={"type": "Auto"})),
        (
            "spec.updateStrategy.manualUpdate.partitions[a]",
            lambda o: o["spec"].update(updateStrategy={"manualUpdate": {"partitions": {"a": "x"}}}),
        ),
        (
            "spec.template.deploymentTemplate.metadata.labels",
            lambda o: o["spec"]["template"]["deploymentTemplate"]["metadata"].update(labels=[]),
        ),
    ],
)
def test_malformed_input_names_the_field(path: str, mutate: Any) -> None:
    obj = sample()
    mutate(obj)
    with pytest.raises(ModelError) as raised:
        UnitedDeployment.from_object(obj)
    assert raised.value.field == path


def test_replica_percentages_round_half_up() -> None:
    assert ReplicaValue(50, percent=True).resolve(5) == 3
    assert ReplicaValue(71, percent=True).resolve(10) == 7
    assert ReplicaValue(29, percent=True).resolve(10) == 3
    assert ReplicaValue(33, percent=True).resolve(10) == 3
    assert ReplicaValue(33, percent=True).resolve(-1) is None


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.text(max_size=4)
    | st.sampled_from(["50%", "x%", "-1"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
SPEC_KEYS = st.sampled_from(
    ["replicas", "selector", "template", "topology", "updateStrategy", "revisionHistoryLimit"]
)


@settings(max_examples=300, deadline=None)
@given(
    key=SPEC_KEYS,
    value=JSONISH,
    subset_key=st.sampled_from(
        ["name", "replicas", "minReplicas", "maxReplicas", "patch", "tolerations", "nodeSelectorTerm"]
    ),
    sub=JSONISH,
)
def test_hostile_input_raises_only_model_error(key: str, value: Any, subset_key: str, sub: Any) -> None:
    obj = copy.deepcopy(sample())
    obj["spec"][key] = value
    if isinstance(obj["spec"].get("topology"), dict):
        obj["spec"]["topology"]["subsets"] = [{"name": "a", subset_key: sub}]
    try:
        ud = UnitedDeployment.from_object(obj)
    except ModelError:
        return
    assert is_uniteddeployment(obj) and ud.name == "web"


def test_alpha_status_names_only_subsets_with_a_name_and_defaults_their_counts_to_zero() -> None:
    beta = {
        "subsetStatuses": [{"name": "a"}, {"name": ""}, {"name": 5, "replicas": 3}, "junk"],
        "conditions": [{"type": "Ready"}],
    }
    alpha = status_to_v1alpha1(beta)
    assert alpha["subsetReplicas"] == {"a": 0}
    assert alpha["updateStatus"] == {"currentPartitions": {"a": 0}}
    alpha["conditions"][0]["type"] = "changed"
    assert beta["conditions"] == [{"type": "Ready"}]  # a copy, nothing shared


def test_alpha_update_status_is_written_for_a_revision_alone_or_statuses_alone() -> None:
    assert status_to_v1alpha1({"updatedRevision": "web-1"})["updateStatus"] == {"updatedRevision": "web-1"}
    only_statuses = status_to_v1alpha1({"subsetStatuses": [{"name": "a", "replicas": 2, "partition": 1}]})
    assert only_statuses["updateStatus"] == {"currentPartitions": {"a": 1}}


def test_replica_values_resolve_and_print_as_written() -> None:
    half = ReplicaValue(50, percent=True)
    assert half.resolve(0) == 0 and half.resolve(3) == 2 and half.resolve(-1) is None
    assert ReplicaValue(3).resolve(-1) == 3
    assert half.to_json() == "50%" and ReplicaValue(3).to_json() == 3


def test_a_subset_is_found_by_its_name() -> None:
    ud = UnitedDeployment.from_object(sample())
    found = ud.subset("b")
    assert found is not None and found.name == "b"
    assert ud.subset("c") is None


def test_beta_status_keeps_existing_subset_statuses_and_its_own_revision() -> None:
    alpha = {
        "subsetStatuses": [{"name": "a", "conditions": [{"type": "X"}]}],
        "subsetReplicas": {"a": 2, "b": 1},
        "updatedRevision": "mine",
        "updateStatus": {"updatedRevision": "old"},
    }
    beta = status_to_v1beta1(alpha)
    assert beta["subsetStatuses"] == [
        {"name": "a", "conditions": [{"type": "X"}], "replicas": 2},
        {"name": "b", "replicas": 1},
    ]
    assert beta["updatedRevision"] == "mine"
    beta["subsetStatuses"][0]["conditions"][0]["type"] = "changed"
    assert alpha["subsetStatuses"][0]["conditions"] == [{"type": "X"}]  # a copy, nothing shared


def test_beta_status_writes_subset_statuses_and_revision_only_when_there_are_some() -> None:
    assert status_to_v1beta1({"replicas": 3}) == {"replicas": 3}
    assert status_to_v1beta1({"replicas": 3, "updateStatus": {"updatedRevision": ""}}) == {"replicas": 3}
    assert status_to_v1beta1({"subsetStatuses": []}) == {"subsetStatuses": []}
    assert status_to_v1beta1({"subsetStatuses": "x"}) == {"subsetStatuses": []}
