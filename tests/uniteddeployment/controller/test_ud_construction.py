"""Subset workload construction: the four kinds, placement, patch, labels, adoption."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from ud_testkit import OWNER, SELECTOR, ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.construct import (
    ConstructionError,
    SubsetTarget,
    build_workload,
    name_prefix,
)

pytestmark = pytest.mark.timeout(30)

POD_TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "main", "image": "nginx"}]},
}


def template(key: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"selector": copy.deepcopy(SELECTOR), "template": copy.deepcopy(POD_TEMPLATE), **(spec or {})}
    return {
        key: {
            "metadata": {"labels": {"app": "web", "tier": "front"}, "annotations": {"note": "x"}},
            "spec": body,
        }
    }


def ud_with(
    key: str = "deploymentTemplate", spec: dict[str, Any] | None = None, subset: dict[str, Any] | None = None
) -> UnitedDeployment:
    return UnitedDeployment.from_object(
        ud_object(4, [{"name": "zone-a", **(subset or {})}], template=template(key, spec))
    )


def build(
    ud: UnitedDeployment, existing: dict[str, Any] | None = None, replicas: int = 3, partition: int = 1
) -> dict[str, Any]:
    return build_workload(ud, ud.subsets[0], "web-abc", SubsetTarget(replicas, partition), existing)


def test_new_deployment_has_name_prefix_labels_owner_and_selector() -> None:
    obj = build(ud_with())
    assert (obj["apiVersion"], obj["kind"]) == ("apps/v1", "Deployment")
    meta = obj["metadata"]
    assert meta["generateName"] == "web-zone-a-" and meta["namespace"] == "default"
    assert meta["labels"] == {
        "app": "web",
        "tier": "front",
        "spreadgate.dev/subset-name": "zone-a",
        "spreadgate.dev/controller-revision-hash": "web-abc",
    }
    assert meta["annotations"]["note"] == "x" and meta["annotations"]["spreadgate.dev/subset-patch"] == ""
    assert meta["ownerReferences"] == [OWNER]
    spec = obj["spec"]
    assert spec["replicas"] == 3
    assert spec["selector"] == {"matchLabels": {"app": "web", "spreadgate.dev/subset-name": "zone-a"}}
    assert spec["template"]["metadata"]["labels"]["spreadgate.dev/controller-revision-hash"] == "web-abc"
    assert "strategy" not in spec  # Deployments have no partition


@pytest.mark.parametrize(
    ("key", "strategy", "expected"),
    [
        ("statefulSetTemplate", {}, {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}),
        ("statefulSetTemplate", {"type": "OnDelete"}, {"type": "OnDelete"}),
        ("advancedStatefulSetTemplate", {}, {"rollingUpdate": {"partition": 1}}),
        # v1beta1 CloneSet layout; a template in v1alpha1's layout is moved there
        (
            "cloneSetTemplate",
            {"rollingUpdate": {"partition": 3, "maxSurge": 1}},
            {"rollingUpdate": {"partition": 1, "maxSurge": 1}},
        ),
        (
            "cloneSetTemplate",
            {"partition": 3, "type": "InPlaceIfPossible"},
            {
                "type": "RollingUpdate",
                "rollingUpdate": {"partition": 1, "podUpdatePolicy": "InPlaceIfPossible"},
            },
        ),
    ],
)
def test_partition_per_kind(key: str, strategy: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = build(ud_with(key, {"updateStrategy": strategy}))
    assert obj["spec"]["updateStrategy"] == expected


def test_kinds_and_api_versions() -> None:
    assert (
        build(ud_with("advancedStatefulSetTemplate"))["apiVersion"],
        build(ud_with("cloneSetTemplate"))["kind"],
    ) == ("apps.kruise.io/v1beta1", "CloneSet")


def test_node_term_is_anded_into_every_or_term_and_tolerations_appended() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "test", "operator": "Exists"},
                            {"key": "region", "operator": "In", "values": ["x"]},
                        ]
                    },
                    {"matchExpressions": [{"key": "test", "operator": "Exists"}]},
                ]
            }
        }
    }
    spec = {
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"affinity": affinity, "tolerations": [{"key": "t", "operator": "Exists"}]},
        }
    }
    subset = {
        "nodeSelectorTerm": {
            "matchExpressions": [{"key": "node-name", "operator": "In", "values": ["node-b"]}]
        },
        "tolerations": [{"key": "spot", "operator": "Exists"}],
    }
    pod_spec = build(ud_with(spec=spec, subset=subset))["spec"]["template"]["spec"]
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert [[e["key"] for e in t["matchExpressions"]] for t in terms] == [
        ["test", "region", "node-name"],
        ["test", "node-name"],
    ]
    assert [t["key"] for t in pod_spec["tolerations"]] == ["t", "spot"]


def test_match_fields_are_used_and_an_empty_term_list_gets_one_term() -> None:
    subset = {
        "nodeSelectorTerm": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    }
    pod_spec = build(ud_with(subset=subset))["spec"]["template"]["spec"]
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]


def test_patch_merges_containers_by_name_and_cannot_drop_subset_labels() -> None:
    patch = {
        "metadata": {"labels": {"spreadgate.dev/subset-name": "other", "extra": "1"}},
        "spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]},
    }
    obj = build(ud_with(subset={"patch": patch}))
    template_ = obj["spec"]["template"]
    assert template_["spec"]["containers"] == [
        {"name": "main", "image": "nginx", "env": [{"name": "A", "value": "1"}]}
    ]
    assert template_["metadata"]["labels"]["extra"] == "1"
    assert template_["metadata"]["labels"]["spreadgate.dev/subset-name"] == "zone-a"
    assert json.loads(obj["metadata"]["annotations"]["spreadgate.dev/subset-patch"]) == patch


def test_invalid_patch_is_a_construction_error() -> None:
    patch = {"spec": {"containers": [{"image": "no-name"}]}}
    with pytest.raises(ConstructionError, match="zone-a"):
        build(ud_with(subset={"patch": patch}))


def test_update_removes_template_keys_that_disappeared_and_keeps_foreign_ones() -> None:
    first = build(ud_with())
    first["metadata"]["name"] = "web-zone-a-x1"
    first["metadata"]["labels"]["added-by-someone"] = "yes"
    obj = ud_object(4, [{"name": "zone-a"}], template=template("deploymentTemplate"))
    del obj["spec"]["template"]["deploymentTemplate"]["metadata"]["labels"]["tier"]
    del obj["spec"]["template"]["deploymentTemplate"]["metadata"]["annotations"]
    second = build(UnitedDeployment.from_object(obj), existing=first)
    assert "tier" not in second["metadata"]["labels"] and "note" not in second["metadata"]["annotations"]
    assert second["metadata"]["labels"]["added-by-someone"] == "yes"
    assert second["metadata"]["name"] == "web-zone-a-x1"


def test_adopted_kruise_workload_keeps_its_selector_and_both_label_keys() -> None:
    existing = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web-zone-a-k",
            "namespace": "default",
            "labels": {"app": "web", "apps.kruise.io/subset-name": "zone-a"},
        },
        "spec": {"selector": {"matchLabels": {"app": "web", "apps.kruise.io/subset-name": "zone-a"}}},
    }
    obj = build(ud_with(), existing=existing)
    assert obj["spec"]["selector"] == existing["spec"]["selector"]
    labels = obj["spec"]["template"]["metadata"]["labels"]
    assert labels["apps.kruise.io/subset-name"] == labels["spreadgate.dev/subset-name"] == "zone-a"
    assert obj["metadata"]["ownerReferences"][0]["uid"] == "ud-uid-1"


def test_selector_with_only_expressions_gets_match_labels() -> None:
    obj = ud_object(4, [{"name": "a"}])
    obj["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}
    spec = build_workload(
        UnitedDeployment.from_object(obj),
        UnitedDeployment.from_object(obj).subsets[0],
        "r",
        SubsetTarget(1, 0),
    )["spec"]
    assert spec["selector"]["matchLabels"] == {"spreadgate.dev/subset-name": "a"}


def test_name_prefix_falls_back_when_too_long() -> None:
    assert name_prefix("web", "a") == "web-a-"
    assert name_prefix("w" * 200, "s" * 60) == "w" * 200 + "-"


def test_reservation_max_unavailable_for_deployment_and_cloneset() -> None:
    deployment = build_workload(ud_with(), ud_with().subsets[0], "r", SubsetTarget(3, 0, max_unavailable=2))
    assert deployment["spec"]["strategy"] == {"rollingUpdate": {"maxUnavailable": 2}}
    cloneset = ud_with("cloneSetTemplate")
    spec = build_workload(cloneset, cloneset.subsets[0], "r", SubsetTarget(3, 0, max_unavailable=2))["spec"]
    assert spec["updateStrategy"] == {"rollingUpdate": {"partition": 0, "maxUnavailable": 2}}
