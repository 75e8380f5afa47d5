"""Authentication, impersonation, RBAC and access reviews over HTTPS, with the official client."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from kubernetes.client import (
    AuthenticationV1Api,
    AuthorizationV1Api,
    CoreV1Api,
    RbacAuthorizationV1Api,
    V1LocalSubjectAccessReview,
    V1NonResourceAttributes,
    V1ResourceAttributes,
    V1SelfSubjectAccessReview,
    V1SelfSubjectAccessReviewSpec,
    V1SelfSubjectRulesReview,
    V1SelfSubjectRulesReviewSpec,
    V1SubjectAccessReview,
    V1SubjectAccessReviewSpec,
)
from kubernetes.client.exceptions import ApiException

from benchmarks.common import loopback_pool
from benchmarks.kube_objects import role_binding
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer
from py_engine.sim.identity import UserInfo
from py_engine.sim.webhook_stub import WebhookStub

pytestmark = pytest.mark.timeout(60)
RBAC = "rbac.authorization.k8s.io/v1"
ClientFactory = Callable[..., kubernetes.client.ApiClient]


@pytest.fixture
def client_for(https_server: RunningServer, tmp_path: Path) -> Iterator[ClientFactory]:
    """`client_for(token, **default_headers)`: an official client as the token's holder
    (loaded from a kubeconfig with that token; `Impersonate_User=` adds that header)."""
    made: list[kubernetes.client.ApiClient] = []

    def make(token: str, **headers: str) -> kubernetes.client.ApiClient:
        path = https_server.write_kubeconfig(str(tmp_path / f"kubeconfig-{len(made)}"), token=token)
        cfg = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(config_file=path, client_configuration=cfg)
        cfg.retries = False
        api_client = kubernetes.client.ApiClient(cfg)
        for key, value in headers.items():
            api_client.set_default_header(key.replace("_", "-"), value)
        made.append(api_client)
        return api_client

    yield make
    for c in made:
        c.rest_client.pool_manager.clear()
        c.close()


def raw(api_client: kubernetes.client.ApiClient, method: str, path: str, payload: Any = None) -> Any:
    """A request the generated API classes do not offer; non-2xx raises ApiException."""
    _, url, headers, _, _ = api_client.param_serialize(
        method=method,
        resource_path=path,
        header_params={"Content-Type": "application/json"},
        body=None,
        auth_settings=["BearerToken"],
    )
    response = api_client.call_api(method, url, header_params=headers, body=payload)
    response.read()
    if not 200 <= response.status <= 299:
        raise ApiException(http_resp=response)
    return json.loads(response.data)


def body(exc: ApiException) -> dict[str, Any]:
    return dict(json.loads(exc.body))


def forbidden(call: Callable[[], Any]) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        call()
    assert info.value.status == 403, info.value.body
    status = body(info.value)
    assert status["kind"] == "Status" and status["reason"] == "Forbidden" and status["code"] == 403
    return status


def bind(
    api: ApiServer, namespace: str | None, role: str, subject: dict[str, str], name: str = "grant"
) -> None:
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}
    obj = {"apiVersion": RBAC, "metadata": {"name": name}, "roleRef": ref, "subjects": [subject]}
    if namespace is None:
        api.create(f"{RBAC}/clusterrolebindings", None, obj)
    else:
        api.create(f"{RBAC}/rolebindings", namespace, obj)


def cluster_role(api: ApiServer, name: str, rules: list[dict[str, Any]]) -> None:
    api.create(f"{RBAC}/clusterroles", None, {"apiVersion": RBAC, "metadata": {"name": name}, "rules": rules})


ALICE = UserInfo("alice", ("devs",))


def test_tokens_anonymous_and_unknown(https_server: RunningServer, client_for: ClientFactory) -> None:
    with pytest.raises(ApiException) as unknown:
        CoreV1Api(client_for("not-a-token")).list_namespaced_pod("default")
    assert unknown.value.status == 401 and body(unknown.value)["reason"] == "Unauthorized"
    pool = loopback_pool(https_server.port, https_server.ca_pem)  # no credentials
    try:
        assert pool.request("GET", "/healthz").status == 200  # system:public-info-viewer
        anonymous = pool.request("GET", "/api")
        assert anonymous.status == 403
        assert (
            json.loads(anonymous.data)["message"]
            == 'forbidden: User "system:anonymous" cannot get path "/api"'
        )
        scheme = pool.request("GET", "/api", headers={"Authorization": "Basic YWRtaW46YWRtaW4="})
        assert scheme.status == 401
    finally:
        pool.close()
    admin = CoreV1Api(client_for(https_server.token))
    assert {ns.metadata.name for ns in admin.list_namespace().items} >= {"default", "kube-system"}


def test_denials_are_worded_like_kube_apiserver(
    apiserver: ApiServer, https_server: RunningServer, client_for: ClientFactory
) -> None:
    alice = client_for(https_server.issue_token(ALICE))
    core = CoreV1Api(alice)
    status = forbidden(lambda: core.list_namespaced_pod("default"))
    assert status["message"] == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
        'in the namespace "default"'
    )
    assert status["details"] == {"kind": "pods"}
    status = forbidden(lambda: core.read_namespaced_pod_status("p", "default"))
    assert status["message"] == (
        'pods "p" is forbidden: User "alice" cannot get resource "pods/status" in API '
        'group "" in the namespace "default"'
    )
    assert status["details"] == {"name": "p", "kind": "pods"}
    status = forbidden(lambda: kubernetes.client.AppsV1Api(alice).list_deployment_for_all_namespaces())
    assert status["message"] == (
        'deployments.apps is forbidden: User "alice" cannot list resource "deployments" '
        'in API group "apps" at the cluster scope'
    )
    assert status["details"] == {"group": "apps", "kind": "deployments"}
    # Authorization comes before routing: an unknown resource is still a 403 for her.
    status = forbidden(lambda: raw(alice, "GET", "/apis/nothing.example/v1/widgets"))
    assert "widgets.nothing.example is forbidden" in status["message"]
    # Granting `view` in the namespace lets her list, there only; writes stay refused.
    bind(apiserver, "default", "view", {"kind": "Group", "name": "devs"})
    assert core.list_namespaced_pod("default").items == []
    forbidden(lambda: core.list_namespaced_pod("kube-system"))
    forbidden(lambda: core.create_namespaced_config_map("default", {"metadata": {"name": "c"}}))
    forbidden(lambda: core.list_namespaced_secret("default"))
    assert https_server.errors == []


def test_impersonation_is_authorized_per_header(
    apiserver: ApiServer, https_server: RunningServer, client_for: ClientFactory, webhook_stub: WebhookStub
) -> None:
    alice_token = https_server.issue_token(ALICE)
    # The administrator may impersonate anyone; the impersonated user's own rights then apply.
    as_bob = CoreV1Api(client_for(https_server.token, Impersonate_User="bob"))
    status = forbidden(lambda: as_bob.list_namespaced_pod("default"))
    assert 'User "bob" cannot list resource "pods"' in status["message"]
    # Alice may not impersonate at all.
    status = forbidden(
        lambda: CoreV1Api(client_for(alice_token, Impersonate_User="bob")).list_namespaced_pod("d")
    )
    assert status["message"] == (
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in '
        'API group "" at the cluster scope'
    )
    assert status["details"] == {"name": "bob", "kind": "users"}
    status = forbidden(
        lambda: CoreV1Api(
            client_for(alice_token, Impersonate_User="system:serviceaccount:team-a:builder")
        ).list_namespaced_pod("d")
    )
    assert status["message"] == (
        'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource '
        '"serviceaccounts" in API group "" in the namespace "team-a"'
    )
    # Allowed to impersonate the user bob only: asking for a group as well is checked separately.
    cluster_role(
        apiserver,
        "impersonate-bob",
        [
            {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]},
            {
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["userextras/scopes"],
                "verbs": ["impersonate"],
            },
        ],
    )
    bind(apiserver, None, "impersonate-bob", {"kind": "User", "name": "alice"}, "alice-impersonates-bob")
    bind(apiserver, "default", "edit", {"kind": "User", "name": "bob"}, "bob-edits")
    apiserver.create(
        "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        None,
        {
            "metadata": {"name": "who"},
            "webhooks": [
                {
                    "name": "who.example.dev",
                    "clientConfig": {"url": webhook_stub.url, "caBundle": webhook_stub.ca_bundle},
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["configmaps"],
                        }
                    ],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ],
        },
    )
    as_bob_by_alice = CoreV1Api(
        client_for(alice_token, Impersonate_User="bob", Impersonate_Extra_Scopes="read")
    )
    as_bob_by_alice.create_namespaced_config_map("default", {"metadata": {"name": "by-bob"}})
    assert webhook_stub.calls[-1]["userInfo"] == {
        "username": "bob",
        "groups": ["system:authenticated"],
        "extra": {"scopes": ["read"]},
    }
    # What alice may not impersonate: the headers beyond the user, and the start of (or, with
    # `whole`, the whole) message of the 403.
    refused: list[tuple[dict[str, str], str, bool]] = [
        ({"Impersonate_User": "carol"}, 'users "carol" is forbidden', False),
        (
            {"Impersonate_Group": "system:masters"},
            'groups "system:masters" is forbidden: User "alice" cannot impersonate resource '
            '"groups" in API group "" at the cluster scope',
            True,
        ),
        (
            {"Impersonate_Uid": "42"},
            'uids.authentication.k8s.io "42" is forbidden: User "alice" cannot impersonate '
            'resource "uids" in API group "authentication.k8s.io" at the cluster scope',
            True,
        ),
        (
            {"Impersonate_Extra_Team": "x"},
            'userextras.authentication.k8s.io "x" is forbidden: User "alice" cannot '
            'impersonate resource "userextras/team"',
            False,
        ),
    ]
    for headers, message, whole in refused:
        impersonating = {"Impersonate_User": "bob", **headers}
        status = forbidden(
            lambda h=impersonating: CoreV1Api(client_for(alice_token, **h)).list_namespaced_pod("d")
        )
        got = status["message"]
        assert got == message if whole else got.startswith(message), (headers, got)
    # A group without a user is malformed.
    with pytest.raises(ApiException) as no_user:
        CoreV1Api(client_for(https_server.token, Impersonate_Group="devs")).list_namespaced_pod("default")
    assert no_user.value.status == 400 and "without impersonating a user" in body(no_user.value)["message"]
    # Impersonating a ServiceAccount gives its groups.
    sa_client = client_for(https_server.token, Impersonate_User="system:serviceaccount:team-a:builder")
    whoami = AuthenticationV1Api(sa_client).create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    )
    assert whoami.status.user_info.username == "system:serviceaccount:team-a:builder"
    assert whoami.status.user_info.groups == [
        "system:serviceaccounts",
        "system:serviceaccounts:team-a",
        "system:authenticated",
    ]


def test_access_reviews_with_the_official_client(
    apiserver: ApiServer, https_server: RunningServer, client_for: ClientFactory
) -> None:
    admin = AuthorizationV1Api(client_for(https_server.token))
    apiserver.create("v1/namespaces", None, {"metadata": {"name": "team-a"}})
    bind(apiserver, "team-a", "edit", {"kind": "ServiceAccount", "name": "builder", "namespace": "team-a"})
    cluster_role(apiserver, "metrics", [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
    bind(apiserver, None, "metrics", {"kind": "Group", "name": "devs"}, "devs-metrics")

    def sar(
        resource: V1ResourceAttributes | None = None, url: V1NonResourceAttributes | None = None, **who: Any
    ) -> Any:
        spec = V1SubjectAccessReviewSpec(resource_attributes=resource, non_resource_attributes=url, **who)
        return admin.create_subject_access_review(V1SubjectAccessReview(spec=spec)).status

    sa = "system:serviceaccount:team-a:builder"
    allowed = sar(
        V1ResourceAttributes(namespace="team-a", verb="update", group="apps", resource="deployments"),
        user=sa,
        groups=["system:serviceaccounts", "system:serviceaccounts:team-a"],
    )
    assert allowed.allowed and allowed.reason == (
        'RBAC: allowed by RoleBinding "grant/team-a" of ClusterRole "edit" to ServiceAccount "builder/team-a"'
    )
    assert not sar(
        V1ResourceAttributes(namespace="team-b", verb="update", group="apps", resource="deployments"), user=sa
    ).allowed
    assert not sar(
        V1ResourceAttributes(
            namespace="team-a", verb="create", group="rbac.authorization.k8s.io", resource="rolebindings"
        ),
        user=sa,
    ).allowed
    assert sar(url=V1NonResourceAttributes(path="/metrics", verb="get"), user="x", groups=["devs"]).allowed
    assert not sar(url=V1NonResourceAttributes(path="/metrics", verb="get"), user="x").allowed
    assert sar(
        V1ResourceAttributes(verb="delete", resource="nodes"), user="root", groups=["system:masters"]
    ).allowed
    with pytest.raises(ApiException) as invalid:
        admin.create_subject_access_review(
            V1SubjectAccessReview(
                spec=V1SubjectAccessReviewSpec(
                    resource_attributes=V1ResourceAttributes(verb="get", resource="pods")
                )
            )
        )
    assert (
        invalid.value.status == 422
        and "at least one of user or group must be specified" in invalid.value.body
    )
    # Reviews are answers, not objects: nothing was stored.
    assert apiserver.store.count("subjectaccessreviews.authorization.k8s.io") == 0

    # Self reviews: the asker (or whom they impersonate) is the subject.
    alice = AuthorizationV1Api(client_for(https_server.issue_token(ALICE)))
    ssar = alice.create_self_subject_access_review(
        V1SelfSubjectAccessReview(
            spec=V1SelfSubjectAccessReviewSpec(
                non_resource_attributes=V1NonResourceAttributes(path="/metrics", verb="get")
            )
        )
    )
    assert ssar.status.allowed
    ssar = alice.create_self_subject_access_review(
        V1SelfSubjectAccessReview(
            spec=V1SelfSubjectAccessReviewSpec(
                resource_attributes=V1ResourceAttributes(namespace="team-a", verb="list", resource="pods")
            )
        )
    )
    assert not ssar.status.allowed
    # Alice may not ask about others.
    forbidden(
        lambda: alice.create_subject_access_review(
            V1SubjectAccessReview(
                spec=V1SubjectAccessReviewSpec(
                    user="bob", resource_attributes=V1ResourceAttributes(verb="get", resource="pods")
                )
            )
        )
    )
    as_sa = AuthorizationV1Api(client_for(https_server.token, Impersonate_User=sa))
    rules = as_sa.create_self_subject_rules_review(
        V1SelfSubjectRulesReview(spec=V1SelfSubjectRulesReviewSpec(namespace="team-a"))
    ).status
    assert not rules.incomplete
    assert any("deployments" in (r.resources or []) and "update" in r.verbs for r in rules.resource_rules)
    assert any("/apis/*" in r.non_resource_urls for r in rules.non_resource_rules)
    elsewhere = as_sa.create_self_subject_rules_review(
        V1SelfSubjectRulesReview(spec=V1SelfSubjectRulesReviewSpec(namespace="team-b"))
    ).status
    assert not any("deployments" in (r.resources or []) for r in elsewhere.resource_rules)

    def review_in_team_a(asked_namespace: str) -> Any:
        """A LocalSubjectAccessReview posted to team-a asking whether sa may get pods in `asked_namespace`."""
        return admin.create_namespaced_local_subject_access_review(
            "team-a",
            V1LocalSubjectAccessReview(
                metadata={"namespace": "team-a"},
                spec=V1SubjectAccessReviewSpec(
                    user=sa,
                    resource_attributes=V1ResourceAttributes(
                        namespace=asked_namespace, verb="get", resource="pods"
                    ),
                ),
            ),
        )

    assert review_in_team_a("team-a").status.allowed
    with pytest.raises(ApiException) as other_ns:
        review_in_team_a("team-b")
    assert other_ns.value.status == 400


def test_rbac_objects_are_served_validated_and_discovered(
    https_server: RunningServer, client_for: ClientFactory
) -> None:
    admin = client_for(https_server.token)
    groups = {g.name: g for g in kubernetes.client.ApisApi(admin).get_api_versions().groups}
    assert {"rbac.authorization.k8s.io", "authorization.k8s.io", "authentication.k8s.io"} <= set(groups)
    resources = kubernetes.client.AuthorizationV1Api(admin).get_api_resources().resources
    assert {r.name: r.verbs for r in resources}["selfsubjectaccessreviews"] == ["create"]
    rbac = RbacAuthorizationV1Api(admin)
    names = {r.metadata.name for r in rbac.list_cluster_role().items}
    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user"} <= names
    # The client percent-encodes the colon; the server decodes it before routing and authorizing.
    discovery = rbac.read_cluster_role("system:discovery")
    assert "/apis/*" in discovery.rules[0].non_resource_urls
    rbac.create_namespaced_role(
        "default",
        {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    )
    with pytest.raises(ApiException) as bad_role:
        rbac.create_namespaced_role(
            "default",
            {"metadata": {"name": "urls"}, "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
        )
    assert (
        bad_role.value.status == 422
        and "namespaced rules cannot apply to non-resource URLs" in bad_role.value.body
    )
    binding = role_binding("b", "r", "alice", role_kind="Role")
    rbac.create_namespaced_role_binding("default", binding)
    with pytest.raises(ApiException) as changed:
        rbac.patch_namespaced_role_binding("b", "default", {"roleRef": {"name": "other"}})
    assert changed.value.status == 422 and "cannot change roleRef" in changed.value.body


def test_aggregated_rules_are_written_back_like_the_aggregation_controller(
    apiserver: ApiServer, https_server: RunningServer, client_for: ClientFactory
) -> None:
    rbac = RbacAuthorizationV1Api(client_for(https_server.token))
    spreads = {
        "apiGroups": ["spreadgate.dev"],
        "resources": ["workloadspreads"],
        "verbs": ["get", "list", "watch"],
    }
    rbac.create_cluster_role(
        {
            "metadata": {
                "name": "spreads-view",
                "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
            },
            "rules": [spreads],
        }
    )

    def has_spreads(role: str) -> bool:
        rules = rbac.read_cluster_role(role).rules or []
        return any(r.api_groups == ["spreadgate.dev"] for r in rules)

    assert has_spreads("view") and has_spreads("edit") and has_spreads("admin")  # view -> edit -> admin
    assert not has_spreads("cluster-admin")
    rbac.delete_cluster_role("spreads-view")
    assert not has_spreads("view") and not has_spreads("admin")
