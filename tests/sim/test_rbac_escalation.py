"""RBAC escalation prevention (py_engine/sim/rbac_escalation.py): nobody grants what they do not hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from kubernetes.client import RbacAuthorizationV1Api
from kubernetes.client.exceptions import ApiException

from benchmarks.kube_objects import role_binding
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer
from py_engine.sim.identity import UserInfo
from py_engine.sim.rbac import CompiledRule
from py_engine.sim.rbac_escalation import not_held

pytestmark = pytest.mark.timeout(60)
RBAC = "rbac.authorization.k8s.io/v1"


def held(*rules: dict[str, Any]) -> list[CompiledRule]:
    return [CompiledRule.from_json(r) for r in rules]


@pytest.mark.parametrize(
    ("owner", "granted", "missing"),
    [
        (
            [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}],
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
            [],
        ),
        (
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
            [{"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]}],
            ['{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'],
        ),
        # A wildcard granted needs a wildcard held, whatever the holder has listed.
        (
            [
                {
                    "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
                    "apiGroups": [""],
                    "resources": ["secrets"],
                }
            ],
            [{"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"]}],
            ['{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}'],
        ),
        (
            [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            [{"verbs": ["*"], "apiGroups": ["apps"], "resources": ["*/scale"]}],
            [],
        ),
        (
            [{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments/scale"]}],
            [{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["*/scale"]}],
            ['{APIGroups:["apps"], Resources:["*/scale"], Verbs:["update"]}'],
        ),
        # Names: holding one name does not cover all names, all names cover one.
        (
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["tls"]}],
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}],
            ['{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'],
        ),
        (
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}],
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["tls", "db"]}],
            [],
        ),
        # URLs by prefix.
        (
            [{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}],
            [{"verbs": ["get"], "nonResourceURLs": ["/apis/apps", "/metrics"]}],
            ['{NonResourceURLs:["/metrics"], Verbs:["get"]}'],
        ),
    ],
)
def test_not_held(owner: list[dict[str, Any]], granted: list[dict[str, Any]], missing: list[str]) -> None:
    assert not_held(held(*owner), granted) == missing


def test_a_huge_rule_is_refused_without_being_walked() -> None:
    many = [f"r{i}" for i in range(400)]
    granted = [{"verbs": many[:50], "apiGroups": many[:50], "resources": many, "resourceNames": many[:10]}]
    assert not_held(held({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}), granted) == [
        "more than 100000 verb/group/resource/name combinations"
    ]


@pytest.fixture
def alice_rbac(
    apiserver: ApiServer, https_server: RunningServer, tmp_path: Path
) -> Iterator[RbacAuthorizationV1Api]:
    """Alice is `admin` of namespace team-a (a RoleBinding), nothing else."""
    apiserver.create("v1/namespaces", None, {"metadata": {"name": "team-a"}})
    apiserver.create(f"{RBAC}/rolebindings", "team-a", role_binding("alice-admin", "admin", "alice"))
    token = https_server.issue_token(UserInfo("alice", ("devs",)))
    path = https_server.write_kubeconfig(str(tmp_path / "alice"), "team-a", token=token, user_name="alice")
    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=path, client_configuration=cfg)
    cfg.retries = False
    client = kubernetes.client.ApiClient(cfg)
    yield RbacAuthorizationV1Api(client)
    client.rest_client.pool_manager.clear()
    client.close()


def _binding(name: str, kind: str, role: str) -> dict[str, Any]:
    return role_binding(name, role, "bob", role_kind=kind)


def _refused(call: Any) -> str:
    with pytest.raises(ApiException) as info:
        call()
    assert info.value.status == 403, info.value.body
    return str(json.loads(info.value.body)["message"])


def test_a_namespace_admin_cannot_grant_beyond_their_rights(
    apiserver: ApiServer, alice_rbac: RbacAuthorizationV1Api
) -> None:
    # Within what she holds: a Role and a binding to `view` in her namespace.
    alice_rbac.create_namespaced_role(
        "team-a",
        {
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
    )
    alice_rbac.create_namespaced_role_binding("team-a", _binding("bob-view", "ClusterRole", "view"))
    alice_rbac.create_namespaced_role_binding("team-a", _binding("bob-reads", "Role", "pod-reader"))
    # Beyond: every verb on Secrets (she has the listed verbs, not `*`), nodes, cluster-admin.
    message = _refused(
        lambda: alice_rbac.create_namespaced_role(
            "team-a",
            {
                "metadata": {"name": "all"},
                "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}],
            },
        )
    )
    assert message == (
        'roles.rbac.authorization.k8s.io "all" is forbidden: user "alice" (groups=["devs" '
        '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}'
    )
    message = _refused(
        lambda: alice_rbac.create_namespaced_role_binding(
            "team-a", _binding("bob-root", "ClusterRole", "cluster-admin")
        )
    )
    assert message.startswith('rolebindings.rbac.authorization.k8s.io "bob-root" is forbidden: user "alice"')
    assert '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}' in message
    # Updating her own Role to more than she holds is refused the same way.
    role = alice_rbac.read_namespaced_role("pod-reader", "team-a")
    role.rules[0].verbs = ["get", "list", "escalate"]
    _refused(lambda: alice_rbac.replace_namespaced_role("pod-reader", "team-a", role))
    # Cluster-wide objects: she holds nothing cluster-wide.
    _refused(
        lambda: alice_rbac.create_cluster_role(
            {
                "metadata": {"name": "x"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
            }
        )
    )
    with pytest.raises(ApiException) as missing:
        alice_rbac.create_namespaced_role_binding("team-a", _binding("dangling", "Role", "nope"))
    assert missing.value.status == 404
    assert [b["metadata"]["name"] for b in apiserver.list(f"{RBAC}/rolebindings", "team-a")["items"]] == [
        "alice-admin",
        "bob-reads",
        "bob-view",
    ]


def test_bind_and_escalate_verbs_lift_the_check(
    apiserver: ApiServer, alice_rbac: RbacAuthorizationV1Api
) -> None:
    apiserver.create(
        f"{RBAC}/clusterroles",
        None,
        {
            "metadata": {"name": "delegate"},
            "rules": [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["clusterroles"],
                    "verbs": ["bind"],
                    "resourceNames": ["cluster-admin"],
                },
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]},
            ],
        },
    )
    apiserver.create(f"{RBAC}/rolebindings", "team-a", role_binding("alice-delegate", "delegate", "alice"))
    alice_rbac.create_namespaced_role_binding("team-a", _binding("bob-root", "ClusterRole", "cluster-admin"))
    alice_rbac.create_namespaced_role(
        "team-a",
        {
            "metadata": {"name": "all"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}],
        },
    )
    # `bind` was granted in team-a only: a ClusterRoleBinding still needs the rules held cluster-wide.
    _refused(
        lambda: alice_rbac.create_cluster_role_binding(
            _binding("bob-root-everywhere", "ClusterRole", "cluster-admin")
        )
    )


def test_aggregation_rules_need_cluster_admin(
    https_server: RunningServer, apiserver: ApiServer, alice_rbac: RbacAuthorizationV1Api
) -> None:
    apiserver.create(
        f"{RBAC}/clusterroles",
        None,
        {
            "metadata": {"name": "role-writer"},
            "rules": [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["clusterroles"],
                    "verbs": ["create"],
                }
            ],
        },
    )
    apiserver.create(
        f"{RBAC}/clusterrolebindings", None, role_binding("alice-role-writer", "role-writer", "alice")
    )
    message = _refused(
        lambda: alice_rbac.create_cluster_role(
            {
                "metadata": {"name": "mine"},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
            }
        )
    )
    assert message == (
        'clusterroles.rbac.authorization.k8s.io "mine" is forbidden: must have cluster-admin '
        "privileges to use the aggregationRule"
    )
    assert https_server.errors == []
