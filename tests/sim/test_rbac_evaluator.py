"""The pure RBAC evaluator (py_engine/sim/rbac.py): each rule dimension, bindings, subjects, aggregation."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.sim import rbac_bootstrap
from py_engine.sim.identity import UserInfo, service_account_user
from py_engine.sim.rbac import Policy, aggregated_rules, rule_allows
from py_engine.sim.request_info import RequestAttributes, request_attributes

ALICE = UserInfo("alice", ("devs", "system:authenticated"))


def attrs(
    verb: str,
    resource: str,
    *,
    group: str = "",
    namespace: str = "default",
    name: str = "",
    subresource: str = "",
) -> RequestAttributes:
    return RequestAttributes(verb, "", True, group, "v1", resource, subresource, name, namespace)


def url(verb: str, path: str) -> RequestAttributes:
    return RequestAttributes(verb, path)


def rule(**fields: Any) -> dict[str, Any]:
    return fields


@pytest.mark.parametrize(
    ("granted", "request_", "allowed"),
    [
        # verbs
        (rule(verbs=["get"], apiGroups=[""], resources=["pods"]), attrs("get", "pods"), True),
        (rule(verbs=["get"], apiGroups=[""], resources=["pods"]), attrs("list", "pods"), False),
        (rule(verbs=["*"], apiGroups=[""], resources=["pods"]), attrs("deletecollection", "pods"), True),
        (rule(verbs=["get"], apiGroups=[""], resources=["pods"]), attrs("*", "pods"), False),
        # API groups
        (
            rule(verbs=["get"], apiGroups=["apps"], resources=["deployments"]),
            attrs("get", "deployments"),
            False,
        ),
        (
            rule(verbs=["get"], apiGroups=["apps"], resources=["deployments"]),
            attrs("get", "deployments", group="apps"),
            True,
        ),
        (
            rule(verbs=["get"], apiGroups=["*"], resources=["deployments"]),
            attrs("get", "deployments", group="apps.kruise.io"),
            True,
        ),
        # resources and subresources
        (
            rule(verbs=["get"], apiGroups=[""], resources=["pods"]),
            attrs("get", "pods", subresource="status"),
            False,
        ),
        (rule(verbs=["get"], apiGroups=[""], resources=["pods/status"]), attrs("get", "pods"), False),
        (
            rule(verbs=["get"], apiGroups=[""], resources=["pods/status"]),
            attrs("get", "pods", subresource="status"),
            True,
        ),
        (
            rule(verbs=["update"], apiGroups=["*"], resources=["*/scale"]),
            attrs("update", "deployments", group="apps", subresource="scale"),
            True,
        ),
        (
            rule(verbs=["update"], apiGroups=["*"], resources=["*/scale"]),
            attrs("update", "deployments", group="apps"),
            False,
        ),
        (
            rule(verbs=["update"], apiGroups=["*"], resources=["*/scale"]),
            attrs("update", "deployments", group="apps", subresource="status"),
            False,
        ),
        (rule(verbs=["get"], apiGroups=[""], resources=["*"]), attrs("get", "pods", subresource="log"), True),
        # resourceNames
        (
            rule(verbs=["get"], apiGroups=[""], resources=["secrets"], resourceNames=["tls"]),
            attrs("get", "secrets", name="tls"),
            True,
        ),
        (
            rule(verbs=["get"], apiGroups=[""], resources=["secrets"], resourceNames=["tls"]),
            attrs("get", "secrets", name="other"),
            False,
        ),
        (
            rule(verbs=["list"], apiGroups=[""], resources=["secrets"], resourceNames=["tls"]),
            attrs("list", "secrets"),
            False,
        ),
        (
            rule(verbs=["create"], apiGroups=[""], resources=["secrets"], resourceNames=["tls"]),
            attrs("create", "secrets"),
            False,
        ),
        (
            rule(verbs=["watch"], apiGroups=[""], resources=["secrets"], resourceNames=["tls"]),
            request_attributes(
                "GET",
                "/api/v1/namespaces/default/secrets",
                {"watch": "1", "fieldSelector": "metadata.name=tls"},
            ),
            True,
        ),
        # nonResourceURLs
        (rule(verbs=["get"], nonResourceURLs=["/healthz"]), url("get", "/healthz"), True),
        (rule(verbs=["get"], nonResourceURLs=["/healthz"]), url("get", "/healthz/etcd"), False),
        (rule(verbs=["get"], nonResourceURLs=["/apis/*"]), url("get", "/apis/apps/v1"), True),
        (rule(verbs=["get"], nonResourceURLs=["/apis/*"]), url("get", "/apis"), False),
        (rule(verbs=["get"], nonResourceURLs=["*"]), url("get", "/anything"), True),
        (rule(verbs=["get"], nonResourceURLs=["/healthz"]), url("post", "/healthz"), False),
        (rule(verbs=["get"], apiGroups=["*"], resources=["*"]), url("get", "/healthz"), False),
        (rule(verbs=["get"], nonResourceURLs=["*"]), attrs("get", "pods"), False),
    ],
)
def test_rule_dimensions(granted: dict[str, Any], request_: RequestAttributes, allowed: bool) -> None:
    assert rule_allows(granted, request_) is allowed


def _role(
    kind: str,
    name: str,
    rules: list[dict[str, Any]],
    namespace: str = "",
    labels: dict[str, str] | None = None,
    aggregate: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if namespace:
        meta["namespace"] = namespace
    out: dict[str, Any] = {"kind": kind, "metadata": meta, "rules": rules}
    if aggregate is not None:
        out["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": aggregate}]}
    return out


def _binding(
    kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, Any]], namespace: str = ""
) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "kind": kind,
        "metadata": meta,
        "subjects": subjects,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
    }


READ_PODS = [rule(verbs=["get", "list"], apiGroups=[""], resources=["pods"])]


def test_role_bindings_are_confined_to_their_namespace() -> None:
    policy = Policy.from_objects(
        [_role("Role", "pod-reader", READ_PODS, "team-a")],
        [_role("ClusterRole", "pod-reader", READ_PODS)],
        [
            _binding("RoleBinding", "a", "Role", "pod-reader", [{"kind": "User", "name": "alice"}], "team-a"),
            _binding(
                "RoleBinding", "b", "ClusterRole", "pod-reader", [{"kind": "Group", "name": "devs"}], "team-b"
            ),
        ],
        [],
    )
    assert policy.authorize(ALICE, attrs("list", "pods", namespace="team-a")).allowed
    # A RoleBinding to a ClusterRole grants its rules in that namespace only.
    decision = policy.authorize(ALICE, attrs("list", "pods", namespace="team-b"))
    assert decision.allowed
    assert (
        decision.reason
        == 'RBAC: allowed by RoleBinding "b/team-b" of ClusterRole "pod-reader" to Group "devs"'
    )
    assert not policy.authorize(ALICE, attrs("list", "pods", namespace="team-c")).allowed
    assert not policy.authorize(ALICE, attrs("list", "pods", namespace="")).allowed  # all namespaces
    assert not policy.authorize(
        UserInfo("bob", ("system:authenticated",)), attrs("list", "pods", namespace="team-a")
    ).allowed


def test_cluster_role_bindings_apply_everywhere_and_to_urls() -> None:
    urls = rule(verbs=["get"], nonResourceURLs=["/metrics"])
    policy = Policy.from_objects(
        [],
        [_role("ClusterRole", "reader", [*READ_PODS, urls])],
        [_binding("RoleBinding", "ns-only", "ClusterRole", "reader", [{"kind": "User", "name": "bob"}], "d")],
        [
            _binding(
                "ClusterRoleBinding",
                "everywhere",
                "ClusterRole",
                "reader",
                [{"kind": "User", "name": "alice"}],
            )
        ],
    )
    assert policy.authorize(ALICE, attrs("list", "pods", namespace="")).allowed
    assert policy.authorize(ALICE, attrs("get", "pods", namespace="any")).allowed
    assert policy.authorize(ALICE, url("get", "/metrics")).allowed
    # URLs are granted through ClusterRoleBindings only.
    assert not policy.authorize(UserInfo("bob"), url("get", "/metrics")).allowed
    assert policy.authorize(UserInfo("bob"), attrs("get", "pods", namespace="d")).allowed


def test_service_account_subjects_and_groups() -> None:
    sa = service_account_user("team-a", "builder")
    assert sa.username == "system:serviceaccount:team-a:builder"
    assert sa.groups == ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")
    roles = [_role("ClusterRole", "reader", READ_PODS)]

    def allowed(subjects: list[dict[str, Any]], binding_ns: str = "team-a", who: UserInfo = sa) -> bool:
        policy = Policy.from_objects(
            [], roles, [_binding("RoleBinding", "b", "ClusterRole", "reader", subjects, binding_ns)], []
        )
        return policy.authorize(who, attrs("get", "pods", namespace=binding_ns)).allowed

    assert allowed([{"kind": "ServiceAccount", "name": "builder", "namespace": "team-a"}])
    assert allowed([{"kind": "ServiceAccount", "name": "builder"}])  # the binding's namespace
    assert not allowed([{"kind": "ServiceAccount", "name": "builder"}], "team-b")
    assert allowed([{"kind": "ServiceAccount", "name": "builder", "namespace": "team-a"}], "team-b")
    assert not allowed([{"kind": "ServiceAccount", "name": "other", "namespace": "team-a"}])
    assert allowed([{"kind": "Group", "name": "system:serviceaccounts:team-a"}])
    assert allowed([{"kind": "Group", "name": "system:serviceaccounts"}])
    assert not allowed([{"kind": "Group", "name": "system:serviceaccounts:team-b"}])
    assert allowed([{"kind": "Group", "name": "system:authenticated"}])
    # A user who merely claims the name in a User subject is not the ServiceAccount, and vice versa.
    assert not allowed([{"kind": "User", "name": "builder"}])
    assert not allowed(
        [{"kind": "ServiceAccount", "name": "builder", "namespace": "team-a"}],
        who=UserInfo("builder", ("system:authenticated",)),
    )


def test_masters_is_superuser_and_missing_roles_are_named() -> None:
    policy = Policy.from_objects(
        [],
        [],
        [],
        [
            _binding(
                "ClusterRoleBinding", "dangling", "ClusterRole", "gone", [{"kind": "User", "name": "alice"}]
            )
        ],
    )
    assert policy.authorize(
        UserInfo("root", ("system:masters",)), attrs("delete", "nodes", namespace="")
    ).allowed
    assert policy.authorize(UserInfo("root", ("system:masters",)), url("put", "/anything")).allowed
    denied = policy.authorize(ALICE, attrs("get", "pods"))
    assert not denied.allowed
    assert denied.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'
    assert policy.authorize(UserInfo("carol"), attrs("get", "pods")).reason == ""


def test_aggregation_follows_labels_transitively_and_ignores_stored_rules() -> None:
    roles = [
        _role(
            "ClusterRole",
            "admin",
            [rule(verbs=["*"], apiGroups=["*"], resources=["*"])],
            aggregate={"agg/admin": "true"},
        ),
        _role("ClusterRole", "edit", [], labels={"agg/admin": "true"}, aggregate={"agg/edit": "true"}),
        _role("ClusterRole", "view", [], labels={"agg/edit": "true"}, aggregate={"agg/view": "true"}),
        _role("ClusterRole", "pods-view", READ_PODS, labels={"agg/view": "true"}),
        _role(
            "ClusterRole",
            "spreads-edit",
            [rule(verbs=["create"], apiGroups=["spreadgate.dev"], resources=["workloadspreads"])],
            labels={"agg/edit": "true"},
        ),
        _role("ClusterRole", "unrelated", [rule(verbs=["*"], apiGroups=[""], resources=["secrets"])]),
        # A cycle terminates.
        _role("ClusterRole", "loop-a", [], labels={"loop": "b"}, aggregate={"loop": "a"}),
        _role(
            "ClusterRole",
            "loop-b",
            [rule(verbs=["get"], apiGroups=[""], resources=["nodes"])],
            labels={"loop": "a"},
            aggregate={"loop": "b"},
        ),
    ]
    effective = aggregated_rules(roles)
    assert effective["view"] == READ_PODS
    assert effective["edit"] == [effective["spreads-edit"][0], *READ_PODS]
    assert effective["admin"] == effective["edit"]  # the stored wildcard rule is not used
    assert effective["loop-a"] == []
    assert effective["loop-b"] == []  # loop-b aggregates loop-a, which contributes nothing
    policy = Policy.from_objects(
        [],
        roles,
        [_binding("RoleBinding", "a", "ClusterRole", "admin", [{"kind": "User", "name": "alice"}], "d")],
        [],
    )
    assert policy.authorize(
        ALICE, attrs("create", "workloadspreads", group="spreadgate.dev", namespace="d")
    ).allowed
    assert policy.authorize(ALICE, attrs("list", "pods", namespace="d")).allowed
    assert not policy.authorize(ALICE, attrs("get", "secrets", namespace="d")).allowed


def test_bootstrap_roles_aggregate_like_upstream() -> None:
    policy = Policy.from_objects(
        [],
        rbac_bootstrap.cluster_roles(),
        [
            _binding("RoleBinding", "v", "ClusterRole", "view", [{"kind": "User", "name": "viewer"}], "d"),
            _binding("RoleBinding", "e", "ClusterRole", "edit", [{"kind": "User", "name": "editor"}], "d"),
            _binding("RoleBinding", "a", "ClusterRole", "admin", [{"kind": "User", "name": "alice"}], "d"),
        ],
        rbac_bootstrap.cluster_role_bindings(),
    )
    viewer, editor = (
        UserInfo("viewer", ("system:authenticated",)),
        UserInfo("editor", ("system:authenticated",)),
    )
    alice = UserInfo("alice", ("system:authenticated",))
    assert policy.authorize(viewer, attrs("list", "pods", namespace="d")).allowed
    assert not policy.authorize(viewer, attrs("get", "secrets", namespace="d")).allowed
    assert not policy.authorize(viewer, attrs("create", "pods", namespace="d")).allowed
    assert policy.authorize(editor, attrs("create", "pods", namespace="d")).allowed
    assert policy.authorize(editor, attrs("get", "secrets", namespace="d")).allowed
    assert policy.authorize(
        editor, attrs("update", "deployments", group="apps", namespace="d", subresource="scale")
    ).allowed
    assert not policy.authorize(
        editor, attrs("create", "rolebindings", group="rbac.authorization.k8s.io", namespace="d")
    ).allowed
    assert policy.authorize(
        alice, attrs("create", "rolebindings", group="rbac.authorization.k8s.io", namespace="d")
    ).allowed
    assert policy.authorize(alice, attrs("list", "pods", namespace="d")).allowed  # view via edit via admin
    anonymous = UserInfo("system:anonymous", ("system:unauthenticated",))
    assert policy.authorize(anonymous, url("get", "/healthz")).allowed
    assert not policy.authorize(anonymous, url("get", "/apis")).allowed
    assert policy.authorize(viewer, url("get", "/apis")).allowed
    assert policy.authorize(
        viewer, attrs("create", "selfsubjectaccessreviews", group="authorization.k8s.io", namespace="")
    ).allowed
    assert not policy.authorize(
        viewer, attrs("create", "subjectaccessreviews", group="authorization.k8s.io", namespace="")
    ).allowed


def test_rules_for_lists_what_applies_in_the_namespace() -> None:
    policy = Policy.from_objects(
        [
            _role(
                "Role",
                "cfg",
                [rule(verbs=["get"], apiGroups=[""], resources=["configmaps"], resourceNames=["c"])],
                "d",
            )
        ],
        [_role("ClusterRole", "urls", [rule(verbs=["get"], nonResourceURLs=["/version"])])],
        [
            _binding("RoleBinding", "cfg", "Role", "cfg", [{"kind": "User", "name": "alice"}], "d"),
            _binding("RoleBinding", "gone", "Role", "missing", [{"kind": "User", "name": "alice"}], "d"),
        ],
        [_binding("ClusterRoleBinding", "urls", "ClusterRole", "urls", [{"kind": "Group", "name": "devs"}])],
    )
    resources, urls, errs = policy.rules_for(ALICE, "d")
    assert resources == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["c"]}
    ]
    assert urls == [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]
    assert errs == ['role.rbac.authorization.k8s.io "missing" not found']
    assert policy.rules_for(ALICE, "other")[0] == []


def test_malformed_stored_objects_grant_nothing_and_do_not_raise() -> None:
    policy = Policy.from_objects(
        [{"metadata": {"name": "r", "namespace": "d"}, "rules": "all"}],
        [{"metadata": {"name": "c"}, "rules": [{"verbs": "*", "apiGroups": ["*"], "resources": ["*"]}, 7]}],
        [
            {
                "metadata": {"name": "b", "namespace": "d"},
                "roleRef": {"kind": "Role", "name": "r"},
                "subjects": [{"kind": "User", "name": "alice"}, "x"],
            },
            {"metadata": {"name": "c", "namespace": "d"}, "roleRef": "c", "subjects": {"kind": "User"}},
        ],
        [
            {
                "metadata": {"name": "x"},
                "roleRef": {"kind": "ClusterRole", "name": "c"},
                "subjects": [{"kind": "User", "name": "alice"}],
            }
        ],
    )
    assert not policy.authorize(ALICE, attrs("get", "pods", namespace="d")).allowed


def test_the_reason_names_the_first_subject_that_applies_and_bindings_in_name_order() -> None:
    subjects = [{"kind": "Group", "name": "devs"}, {"kind": "User", "name": "alice"}]
    policy = Policy.from_objects(
        [],
        [_role("ClusterRole", "reader", READ_PODS)],
        [
            _binding(
                "RoleBinding", "b-later", "ClusterRole", "reader", [{"kind": "User", "name": "alice"}], "d"
            ),
            _binding("RoleBinding", "a-first", "ClusterRole", "reader", subjects, "d"),
        ],
        [],
    )
    decision = policy.authorize(ALICE, attrs("get", "pods", namespace="d"))
    assert (
        decision.reason == 'RBAC: allowed by RoleBinding "a-first/d" of ClusterRole "reader" to Group "devs"'
    )


@pytest.mark.timeout(20)
def test_aggregation_of_roles_that_all_select_each_other_settles() -> None:
    """A clique of aggregated roles (each picks every other) must not be walked path by path."""
    clique = [
        _role("ClusterRole", f"agg-{i:02}", [], labels={"team": "x"}, aggregate={"team": "x"})
        for i in range(40)
    ]
    sources = [
        _role(
            "ClusterRole",
            f"src-{i}",
            [rule(verbs=["get"], apiGroups=[""], resources=[f"r{i}"])],
            labels={"team": "x"},
        )
        for i in range(5)
    ]
    effective = aggregated_rules(clique + sources)
    expected = [rule(verbs=["get"], apiGroups=[""], resources=[f"r{i}"]) for i in range(5)]
    assert all(effective[f"agg-{i:02}"] == expected for i in range(40))
