"""The embedded cluster runs OpenKruise's Advanced StatefulSet at the version its CRD stores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cluster_fixtures
import pytest
from cluster_fixtures import pods_of

from benchmarks.kube_objects import custom_resource_definition
from py_engine.sim.cluster import Cluster

make_cluster = cluster_fixtures.make_cluster  # the fixture, used by name


def _crd(storage: str) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    versions = ("v1alpha1", "v1beta1")
    return custom_resource_definition(
        "apps.kruise.io",
        "StatefulSet",
        versions=versions,
        storage=storage,
        schema=schema,
        short_names=["asts"],
    )


def _asts(replicas: int, image: str, partition: int) -> dict[str, Any]:
    labels = {"app": "db"}
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


@pytest.mark.parametrize("storage", ["v1beta1", "v1alpha1"])
def test_ordinal_pods_and_a_partitioned_rollout(make_cluster: Callable[..., Cluster], storage: str) -> None:
    cluster = make_cluster()
    cluster.api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, _crd(storage))
    cluster.run_until_stable()
    resource = f"apps.kruise.io/{storage}/statefulsets"
    cluster.api.create(
        resource, "default", {"apiVersion": f"apps.kruise.io/{storage}", **_asts(3, "db:1", 1)}
    )
    cluster.run_until_stable(advance_time=True)
    pods = sorted(pods_of(cluster, "app=db"), key=lambda p: p["metadata"]["name"])
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    assert {p["metadata"]["ownerReferences"][0]["apiVersion"] for p in pods} == {f"apps.kruise.io/{storage}"}
    cluster.api.patch(
        resource,
        "default",
        "db",
        {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "db:2"}]}}}},
        "merge",
    )
    cluster.run_until_stable(advance_time=True)
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in pods_of(cluster, "app=db")}
    assert images == {"db-0": "db:1", "db-1": "db:2", "db-2": "db:2"}  # ordinals below the partition stay
    status = cluster.api.get(resource, "default", "db")["status"]
    assert (status["replicas"], status["updatedReplicas"]) == (3, 2)
    cluster.api.delete(resource, "default", "db")
    cluster.run_until_stable(advance_time=True)
    assert pods_of(cluster, "app=db") == []
