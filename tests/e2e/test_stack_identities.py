"""The assembled stack runs the webhook and the controller as their ServiceAccounts under the
shipped RBAC, which the embedded cluster enforces: a grant the code needs and the manifests
lack shows up as a 403 here, as it would on a real cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kube_objects import workload, workload_spread
from py_engine.apiclient import KubeError
from py_engine.assembled_stack import DEPLOYMENTS, SPREADS, Stack, install_product_rbac
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.identity import service_account_user
from py_engine.sim.nodepool import nodes_from_description
from py_engine.sim.request_info import request_attributes

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
CLUSTER_ROLES = "rbac.authorization.k8s.io/v1/clusterroles"


def _deployment(replicas: int) -> dict[str, Any]:
    return workload(
        "Deployment", "web", replicas=replicas, namespace="default", container="app", image="nginx:1"
    )


def _spread() -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}
    return workload_spread(
        "ws", [{"name": "a", "maxReplicas": 2, "requiredNodeSelectorTerm": term}, {"name": "b"}]
    )


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    nodes = nodes_from_description({"pools": [{"name": p, "count": 1, "labels": {"pool": p}} for p in "ab"]})
    made = Stack(nodes, workdir=tmp_path).start()
    yield made
    made.close()


def test_components_run_as_their_service_accounts_without_a_refusal(stack: Stack) -> None:
    assert stack.client is not None
    who = stack.client.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert (
        who["status"]["userInfo"]["username"]
        == "system:serviceaccount:spreadgate-system:spreadgate-controller"
    )
    with pytest.raises(KubeError) as denied:  # nothing in the shipped RBAC lets it read Secrets
        stack.client.request("GET", "/api/v1/secrets")
    assert denied.value.status == 403 and denied.value.reason == "Forbidden"
    before = len(stack.cluster.refusals)
    stack.create(DEPLOYMENTS, _deployment(0))
    stack.create(SPREADS, _spread())
    stack.settle()
    stack.api.patch(DEPLOYMENTS, "default", "web", {"spec": {"replicas": 4}}, "merge")
    stack.settle()
    statuses = stack.api.get(SPREADS, "default", "ws")["status"]["subsetStatuses"]
    assert [(s["name"], s["replicas"]) for s in statuses] == [("a", 2), ("b", 2)]
    assert stack.cluster.refusals[before:] == []


def test_a_grant_missing_from_the_manifests_is_a_403_the_stack_shows(stack: Stack) -> None:
    """What a product RBAC bug looks like: the controller's role without `patch` on pods."""
    role = stack.api.get(CLUSTER_ROLES, None, "spreadgate-controller")
    for rule in role["rules"]:
        if rule.get("resources") == ["pods"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != "patch"]
    stack.api.update(CLUSTER_ROLES, None, "spreadgate-controller", role)
    stack.create(DEPLOYMENTS, _deployment(3))
    stack.create(SPREADS, _spread())
    stack.settle()
    refused = [r for r in stack.cluster.refusals if "spreadgate-controller" in r]
    assert refused, "the controller patches pods (deletion cost); without the grant it must be refused"
    assert any(
        'cannot patch resource "pods" in API group "" in the namespace "default"' in r for r in refused
    )


def test_the_shipped_rbac_follows_the_namespace_it_is_installed_in() -> None:
    api = ApiServer()
    try:
        install_product_rbac(api, "platform")
        controller = service_account_user("platform", "spreadgate-controller")
        lease = request_attributes(
            "PUT", "/apis/coordination.k8s.io/v1/namespaces/platform/leases/spreadgate-controller"
        )
        assert api.authorizer.authorize(controller, lease).allowed
        pods = request_attributes("PATCH", "/api/v1/namespaces/default/pods/p")
        assert api.authorizer.authorize(controller, pods).allowed
        assert not api.authorizer.authorize(
            service_account_user("spreadgate-system", "spreadgate-controller"), pods
        ).allowed
        webhook = service_account_user("platform", "spreadgate-webhook")
        assert not api.authorizer.authorize(webhook, pods).allowed  # the webhook only reads pods
    finally:
        api.close()
