"""End to end (issue 24): a user who may edit WorkloadSpreads but not the target Deployment cannot
create a spread over it; one who may update the Deployment can. The real webhook (its
SubjectAccessReviews on) registered with the embedded cluster, which authorizes with RBAC and
answers SubjectAccessReviews; requests go over HTTPS through the official client, impersonating
each user with `Impersonate-User` / `Impersonate-Group` headers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webhook_on_cluster import register, webhook_for
from webhook_testkit import spread

from benchmarks.kube_objects import workload
from py_engine.apiclient import KubeClient, KubeError
from py_engine.semantics.clock import RealClock
from py_engine.sim.cluster import Cluster

WORKLOADSPREADS = "/apis/spreadgate.dev/v1alpha1/namespaces/default/workloadspreads"


pytestmark = [pytest.mark.e2e]


def _role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": "default"},
        "rules": rules,
    }


def _binding(role: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"{role}-{group}", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    }


SPREAD_EDITING = [
    {
        "apiGroups": ["spreadgate.dev"],
        "resources": ["workloadspreads"],
        "verbs": ["get", "list", "watch", "create", "update", "patch"],
    }
]
DEPLOYMENT_EDITING = [
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "update", "patch"]}
]
SUBSETS = [{"name": "a", "maxReplicas": 1}, {"name": "b"}]


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[str]:
    cluster = Cluster(clock=RealClock())
    api = cluster.api
    hook = webhook_for(cluster, tmp_path, threads=4)
    try:
        register(cluster, hook)
        web = workload("Deployment", "web", replicas=0, namespace="default", container="app", image="nginx")
        api.create("apps/v1/deployments", "default", web)
        rbac = "rbac.authorization.k8s.io/v1"
        api.create(f"{rbac}/roles", "default", _role("spread-editor", SPREAD_EDITING))
        api.create(f"{rbac}/roles", "default", _role("web-editor", DEPLOYMENT_EDITING))
        api.create(f"{rbac}/rolebindings", "default", _binding("spread-editor", "spread-editors"))
        api.create(f"{rbac}/rolebindings", "default", _binding("spread-editor", "web-editors"))
        api.create(f"{rbac}/rolebindings", "default", _binding("web-editor", "web-editors"))
        yield str(cluster.kubeconfig_path)
    finally:
        hook.stop()
        cluster.close()


def _create_as(kubeconfig: str, user: str, group: str, name: str) -> dict[str, Any]:
    with KubeClient.load(kubeconfig, timeout=10) as client:
        client.api_client.set_default_header("Impersonate-User", user)
        client.api_client.set_default_header("Impersonate-Group", group)
        return client.request("POST", WORKLOADSPREADS, body=spread(name, SUBSETS))


@pytest.mark.timeout(60)
def test_a_spread_editor_without_rights_on_the_deployment_is_denied(kubeconfig: str) -> None:
    with pytest.raises(KubeError) as denied:
        _create_as(kubeconfig, "mallory", "spread-editors", "ws")
    assert denied.value.status == 403, denied.value
    assert 'user "mallory" may not update deployments.apps "web" in namespace "default"' in str(denied.value)


@pytest.mark.timeout(60)
def test_a_deployment_editor_may_create_the_spread(kubeconfig: str) -> None:
    created = _create_as(kubeconfig, "erin", "web-editors", "ws")
    assert created["metadata"]["name"] == "ws"
