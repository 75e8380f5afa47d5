"""CloneSet subsets in the layout of the version the API serves (issue 25).

The embedded cluster serves Kruise's CloneSet at v1beta1 (storage) with its structural schema
and prunes unknown fields, as a real API server does: `spec.updateStrategy.partition` (the
v1alpha1 place) is dropped at v1beta1, where the partition lives in `rollingUpdate`. A
UnitedDeployment's partitions must survive the write, and a settled sync must not rewrite.
"""

from __future__ import annotations

from typing import Any

import pytest
from united_kit import UDS, pools, term, united, workloads

from py_engine.assembled_stack import Stack
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.construct import SubsetTarget, build_workload
from py_engine.uniteddeployment.controller.discovery import SubsetWorkload
from py_engine.uniteddeployment.controller.kruise_layout import convert_spec, rolling_update, to_version

pytestmark = [pytest.mark.timeout(180)]

CLONESETS_V1BETA1 = "apps.kruise.io/v1beta1/clonesets"
AB: list[dict[str, Any]] = [
    {"name": "a", "replicas": 2, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]


def _cloneset(name: str, strategy: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": []}},
            "updateStrategy": strategy,
        },
    }


@pytest.mark.e2e
def test_the_embedded_cluster_prunes_a_partition_in_the_v1alpha1_place() -> None:
    with Stack(pools("a")) as stack:
        wrong = stack.api.create(CLONESETS_V1BETA1, "default", _cloneset("wrong", {"partition": 1}))
        right = stack.api.create(
            CLONESETS_V1BETA1, "default", _cloneset("right", {"rollingUpdate": {"partition": 1}})
        )
        assert wrong["spec"]["updateStrategy"] == {}
        assert right["spec"]["updateStrategy"] == {"rollingUpdate": {"partition": 1}}
        assert right["spec"]["template"]["spec"] == {"containers": []}  # the pod template is schemaless


@pytest.mark.e2e
def test_cloneset_partitions_survive_and_a_settled_sync_writes_nothing() -> None:
    with Stack(pools("a", "b")) as stack:
        stack.create(UDS, united("web", 6, AB, kind="cloneSetTemplate", partitions={"a": 1}))
        stack.settle()
        found = workloads(stack, CLONESETS_V1BETA1)
        assert {n: w["spec"]["replicas"] for n, w in found.items()} == {"a": 2, "b": 4}
        assert {n: w["spec"]["updateStrategy"] for n, w in found.items()} == {
            "a": {"rollingUpdate": {"partition": 1}},
            "b": {"rollingUpdate": {"partition": 0}},
        }
        assert stack.united_controller is not None and stack.united_source is not None
        stack.united_source.refresh()
        reports = stack.united_controller.step()
        assert [r.outcome for r in reports] == ["synced"] and reports[0].writes.total == 0
        assert reports[0].plan is not None and reports[0].plan.subsets["a"].partition == 1


def _ud() -> UnitedDeployment:
    obj = united("web", 6, AB, kind="cloneSetTemplate", partitions={"a": 1})
    obj["metadata"]["uid"] = "u1"
    return UnitedDeployment.from_object(obj)


def test_a_v1alpha1_cloneset_is_read_and_written_at_the_top_level() -> None:
    ud = _ud()
    existing = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web-a-x", "namespace": "default"},
        "spec": {"replicas": 2, "updateStrategy": {"type": "InPlaceIfPossible", "partition": 1}},
    }
    assert SubsetWorkload("a", existing).partition() == 1
    assert SubsetWorkload("a", to_version(existing, "apps.kruise.io/v1beta1")).partition() == 1
    built = build_workload(ud, ud.subsets[0], "web-r", SubsetTarget(2, 2, max_unavailable=1), existing)
    assert built["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert built["spec"]["updateStrategy"] == {"partition": 2, "maxUnavailable": 1}
    assert rolling_update(built) == {"partition": 2, "maxUnavailable": 1}


@pytest.mark.parametrize(
    ("alpha", "beta"),
    [
        (
            {"type": "InPlaceIfPossible", "partition": "20%", "maxSurge": 1, "paused": True},
            {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "podUpdatePolicy": "InPlaceIfPossible",
                    "partition": "20%",
                    "maxSurge": 1,
                    "paused": True,
                },
            },
        ),
        ({"type": "OnDelete"}, {"type": "OnDelete"}),
        ({"partition": 1}, {"rollingUpdate": {"partition": 1}}),
    ],
)
def test_update_strategy_converts_both_ways(alpha: dict[str, Any], beta: dict[str, Any]) -> None:
    assert convert_spec({"updateStrategy": alpha}, "v1beta1") == {"updateStrategy": beta}
    assert convert_spec({"updateStrategy": beta}, "v1beta1") == {"updateStrategy": beta}  # idempotent
    back = convert_spec({"updateStrategy": beta}, "v1alpha1")["updateStrategy"]
    assert {k: v for k, v in back.items() if k != "type"} == {k: v for k, v in alpha.items() if k != "type"}
    assert back.get("type", "ReCreate") == alpha.get("type", "ReCreate")


def test_pvc_reuse_flag_inverts_between_versions() -> None:
    assert convert_spec({"scaleStrategy": {"disablePVCReuse": True}}, "v1beta1") == {
        "scaleStrategy": {"enablePVCReuse": False}
    }
    assert convert_spec({"scaleStrategy": {"enablePVCReuse": True}}, "v1alpha1") == {
        "scaleStrategy": {"disablePVCReuse": False}
    }


def test_an_advanced_statefulset_keeps_rolling_update_at_both_versions() -> None:
    obj = united("db", 4, AB, kind="advancedStatefulSetTemplate", partitions={"a": 1})
    ud = UnitedDeployment.from_object(obj)
    for version in ("apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"):
        existing = {
            "apiVersion": version,
            "kind": "StatefulSet",
            "metadata": {"name": "db-a-x", "namespace": "default"},
            "spec": {"replicas": 2, "updateStrategy": {"rollingUpdate": {"partition": 1}}},
        }
        assert SubsetWorkload("a", existing).partition() == 1
        built = build_workload(ud, ud.subsets[0], "db-r", SubsetTarget(2, 2), existing)
        assert built["apiVersion"] == version
        assert built["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 2}
        assert to_version(built, "apps.kruise.io/v1alpha1")["spec"] == built["spec"]
