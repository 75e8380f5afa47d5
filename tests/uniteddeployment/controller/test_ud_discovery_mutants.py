"""Discovery of subset workloads and their partitions: what mutation testing (run U1) found
unpinned. Kubernetes' StatefulSet has a partition only under the `RollingUpdate` strategy (the
default when `type` is unset); `OnDelete` has none. A CloneSet's partition may be a percentage of
its replicas, rounded up. Discovery (docs/uniteddeployment.md, "Subset workloads" and "Adoption")
looks at workloads of the four subset kinds in the UnitedDeployment's namespace only; owned ones
it selects are its subsets, owned ones it no longer selects are released, an owned one without a
subset label is reported, one of a subset no longer in the spec is deleted; an orphan naming the
UnitedDeployment is adopted into an empty spec subset with its pods; one owned by another
controller is never touched."""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.discovery import SubsetWorkload, discover

pytestmark = pytest.mark.timeout(30)


def statefulset(strategy: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web-a-x"},
        "spec": {"replicas": 3, "updateStrategy": strategy},
    }


@pytest.mark.parametrize(
    ("strategy", "partition"),
    [
        ({"type": "OnDelete", "rollingUpdate": {"partition": 2}}, None),
        ({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, 2),
        ({"rollingUpdate": {"partition": 2}}, 2),
        ({}, 0),
    ],
)
def test_an_on_delete_statefulset_has_no_partition(strategy: dict[str, Any], partition: int | None) -> None:
    assert SubsetWorkload("a", statefulset(strategy)).partition() == partition


# --- CloneSet partitions -------------------------------------------------------------------


def cloneset(replicas: int, partition: object) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": "web-a-x"},
        "spec": {"replicas": replicas, "updateStrategy": {"rollingUpdate": {"partition": partition}}},
    }


@pytest.mark.parametrize(
    ("replicas", "partition", "expected"),
    [
        (10, "25%", 3),  # a percentage of spec.replicas, rounded up
        (101, "100%", 101),
        (4, 3, 3),
        (4, "40", 0),  # a string that is not a percentage reads as 0
        (4, "x%", 0),
        (4, "2x%", 0),
    ],
)
def test_a_clonesets_partition_may_be_a_percentage_of_its_replicas(
    replicas: int, partition: object, expected: int
) -> None:
    assert SubsetWorkload("a", cloneset(replicas, partition)).partition() == expected


# --- discovery -----------------------------------------------------------------------------

CREATED_BY = "spreadgate.dev/united-deployment"
OWNER = {"kind": "UnitedDeployment", "name": "web", "uid": "ud-uid-1", "controller": True}


def deployment(
    name: str,
    subset: str | None,
    *,
    owner: dict[str, Any] | None = OWNER,
    kind: str = "Deployment",
    namespace: str | None = "default",
    app: str = "web",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    labels = {"app": app}
    if subset is not None:
        labels["spreadgate.dev/subset-name"] = subset
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace is not None:
        meta["namespace"] = namespace
    if owner is not None:
        meta["ownerReferences"] = [owner]
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": {"replicas": 1}}


def ud(subsets: list[str], namespace: str | None = "default") -> UnitedDeployment:
    obj = ud_object(2, [{"name": n} for n in subsets])
    if namespace is None:
        del obj["metadata"]["namespace"]
    return UnitedDeployment.from_object(obj)


def test_only_owned_or_adoptable_workloads_of_the_namespace_count_and_each_is_looked_at() -> None:
    workloads = [
        deployment("rs", "a", kind="ReplicaSet"),  # not a subset kind: left alone
        deployment("elsewhere", "a", namespace="other"),
        deployment("old-kind", "a", kind="StatefulSet"),  # owned, the template's kind was switched
        deployment("foreign", "c", owner={**OWNER, "uid": "other"}, annotations={CREATED_BY: "web"}),
        deployment("unselected", "b", app="db"),  # owned, no longer selected: released
        deployment("orphan-b", "b", owner=None, annotations={CREATED_BY: "web"}),  # adopted into b
        deployment("web-a", "a"),
        deployment("unlabelled", None),
        deployment("gone", "gone"),
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "orphan-b-1",
            "namespace": "default",
            "labels": {"app": "web"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "orphan-b-5d8f7c9b6",
                    "controller": True,
                }
            ],
        },
    }
    found = discover(ud(["a", "b", "c"]), workloads, [pod])
    assert {
        n: (w.subset, w.name, w.adopt, [p["metadata"]["name"] for p in w.pods])
        for n, w in found.subsets.items()
    } == {
        "a": ("a", "web-a", False, []),
        "b": ("b", "orphan-b", True, ["orphan-b-1"]),
        "gone": ("gone", "gone", False, []),  # found, then deleted
    }
    assert [r["metadata"]["name"] for r in found.release] == ["unselected"]
    assert [r["metadata"]["name"] for r in found.delete] == ["old-kind", "gone"]
    assert found.errors == ("Deployment unlabelled is owned but has no subset-name label; left alone",)


def test_a_workload_without_a_namespace_belongs_to_a_ud_without_one() -> None:
    found = discover(ud(["a"], namespace=None), [deployment("web-a", "a", namespace=None)], [])
    assert list(found.subsets) == ["a"]
