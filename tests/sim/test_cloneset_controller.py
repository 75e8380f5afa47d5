"""The embedded cluster's CloneSet: its victims against Kruise's recorded vectors, and the controller
creating, scaling in, rolling out under a partition and being collected, at v1beta1 and v1alpha1."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import cluster_fixtures
import pytest
from cluster_fixtures import pods_of
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import load_vector_file
from victim_strategies import pod_groups

from benchmarks.kube_objects import custom_resource_definition
from py_engine.scaledown import read_pods
from py_engine.scaledown.cloneset import choose as product_choose
from py_engine.scaledown.cloneset import cloneset_spec_from_object
from py_engine.sim.cluster import Cluster
from py_engine.sim.controllers.cloneset import REVISION_LABEL, rolling_update_fields
from py_engine.sim.controllers.cloneset_victims import choose, kruise_available, kruise_order, same_node_ranks

make_cluster = cluster_fixtures.make_cluster  # the fixture, used by name

CASES = {case["id"]: case for case in load_vector_file("scaledown_cases.json")["cases"]}
COST = "controller.kubernetes.io/pod-deletion-cost"


def _names(pods: list[dict[str, Any]]) -> list[str]:
    return [pod["metadata"]["name"] for pod in pods]


@pytest.mark.parametrize("case_id", ["kruise-less-00", "kruise-less-02", "kruise-less-03", "kruise-less-04"])
def test_the_kruise_comparator_orders_each_upstream_pair(case_id: str) -> None:
    case = CASES[case_id]
    for order in (case["pods"], case["pods"][::-1]):
        assert _names(kruise_order(order, {}, None)) == case["expected_order"]


def test_availability_is_read_before_readiness_and_cost() -> None:
    case = CASES["derived-kruise-availability-before-cost"]
    now = datetime.fromisoformat(case["now"].replace("Z", "+00:00"))
    pods = case["pods"]
    available = kruise_available(case["cloneset"]["available_func"]["minReadySeconds"], now)
    assert _names(kruise_order(pods, same_node_ranks(pods), available)) == case["expected_order"]


def test_same_node_ranks_as_the_proposal_states_them() -> None:
    case = CASES["proposal-same-node-example"]
    ranks = same_node_ranks(case["pods"])
    assert {pod["metadata"]["name"]: ranks.get(pod["metadata"]["uid"], 0) for pod in case["pods"]} == case[
        "expected_ranks"
    ]


def _crd(storage: str) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return custom_resource_definition(
        "apps.kruise.io", "CloneSet", versions=("v1alpha1", "v1beta1"), storage=storage, schema=schema
    )


def _cloneset(replicas: int, image: str = "nginx:1", **update: Any) -> dict[str, Any]:
    labels = {"app": "game"}
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": "game"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "updateStrategy": update,
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


def _with_clonesets(make_cluster: Callable[..., Cluster], storage: str) -> tuple[Cluster, str]:
    cluster = make_cluster()
    cluster.api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, _crd(storage))
    cluster.run_until_stable()
    return cluster, f"apps.kruise.io/{storage}/clonesets"


def _revisions(cluster: Cluster) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pod in pods_of(cluster, "app=game"):
        if not pod["metadata"].get("deletionTimestamp"):
            image = pod["spec"]["containers"][0]["image"]
            counts[image] = counts.get(image, 0) + 1
    return counts


def _roll_out(cluster: Cluster, resource: str, image: str) -> None:
    cluster.api.patch(
        resource,
        "default",
        "game",
        {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}},
        "merge",
    )
    cluster.run_until_stable(advance_time=True)


def test_pods_are_created_owned_and_counted(make_cluster: Callable[..., Cluster]) -> None:
    cluster, resource = _with_clonesets(make_cluster, "v1beta1")
    cluster.api.create(resource, "default", _cloneset(4))
    cluster.run_until_stable(advance_time=True)
    pods = pods_of(cluster, "app=game")
    assert len(pods) == 4 and all(p["spec"].get("nodeName") for p in pods)
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "CloneSet" for p in pods)
    assert len({p["metadata"]["labels"][REVISION_LABEL] for p in pods}) == 1
    status = cluster.api.get(resource, "default", "game")["status"]
    assert {k: status[k] for k in ("replicas", "readyReplicas", "updatedReplicas", "labelSelector")} == {
        "replicas": 4,
        "readyReplicas": 4,
        "updatedReplicas": 4,
        "labelSelector": "app=game",
    }


def test_scale_in_removes_the_cheapest_pod_first(make_cluster: Callable[..., Cluster]) -> None:
    cluster, resource = _with_clonesets(make_cluster, "v1beta1")
    cluster.api.create(resource, "default", _cloneset(4))
    cluster.run_until_stable(advance_time=True)
    cheap = sorted(_names(pods_of(cluster, "app=game")))[2]
    cluster.api.patch("v1/pods", "default", cheap, {"metadata": {"annotations": {COST: "-10"}}}, "merge")
    cluster.api.patch(resource, "default", "game", {"spec": {"replicas": 3}}, "merge")
    cluster.run_until_stable(advance_time=True)
    remaining = _names(
        [p for p in pods_of(cluster, "app=game") if not p["metadata"].get("deletionTimestamp")]
    )
    assert len(remaining) == 3 and cheap not in remaining


@pytest.mark.parametrize("storage", ["v1beta1", "v1alpha1"])
def test_a_partition_keeps_old_pods_in_the_layout_of_the_stored_version(
    make_cluster: Callable[..., Cluster], storage: str
) -> None:
    cluster, resource = _with_clonesets(make_cluster, storage)
    update = {"rollingUpdate": {"partition": 2}} if storage == "v1beta1" else {"partition": 2}
    cluster.api.create(resource, "default", _cloneset(4, **update))
    cluster.run_until_stable(advance_time=True)
    _roll_out(cluster, resource, "nginx:2")
    assert _revisions(cluster) == {"nginx:1": 2, "nginx:2": 2}
    stored = cluster.api.get(resource, "default", "game")
    assert rolling_update_fields(stored, storage)["partition"] == 2
    assert stored["status"]["expectedUpdatedReplicas"] == 2 and stored["status"]["updatedReplicas"] == 2


def test_a_percentage_partition_and_its_removal(make_cluster: Callable[..., Cluster]) -> None:
    cluster, resource = _with_clonesets(make_cluster, "v1beta1")
    cluster.api.create(resource, "default", _cloneset(4, rollingUpdate={"partition": "50%"}))
    cluster.run_until_stable(advance_time=True)
    _roll_out(cluster, resource, "nginx:2")
    assert _revisions(cluster) == {"nginx:1": 2, "nginx:2": 2}
    cluster.api.patch(
        resource,
        "default",
        "game",
        {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}},
        "merge",
    )
    cluster.run_until_stable(advance_time=True)
    assert _revisions(cluster) == {"nginx:2": 4}


def test_deleting_the_cloneset_collects_its_pods(make_cluster: Callable[..., Cluster]) -> None:
    cluster, resource = _with_clonesets(make_cluster, "v1beta1")
    cluster.api.create(resource, "default", _cloneset(2))
    cluster.run_until_stable(advance_time=True)
    assert len(pods_of(cluster, "app=game")) == 2
    cluster.api.delete(resource, "default", "game")
    cluster.run_until_stable(advance_time=True)
    assert pods_of(cluster, "app=game") == []


NOW = datetime(2024, 6, 1, tzinfo=UTC)


GROUPS = pod_groups(
    NOW, max_count=12, max_age_days=30, max_restarts=2, costs=["-1", "0", "5"], nodes=["", "n1", "n2"]
)


@settings(max_examples=150, deadline=None)
@given(group=GROUPS, data=st.data())
def test_the_emulated_choice_agrees_with_the_product_model(
    group: list[dict[str, Any]], data: st.DataObject
) -> None:
    count = data.draw(st.integers(min_value=1, max_value=len(group) - 1))
    min_ready = data.draw(st.sampled_from([0, 30, 3600]))
    spec = cloneset_spec_from_object(
        {"metadata": {"name": "c"}, "spec": {"replicas": 1, "minReadySeconds": min_ready}}
    )
    chosen = product_choose(read_pods(group), range(len(group)), count, spec, None, NOW)
    expected = [group[placement.item]["metadata"]["name"] for placement in chosen]
    assert _names(choose(group, count, kruise_available(min_ready, NOW))) == expected
