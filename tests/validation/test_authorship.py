"""Which rights an author needs (py_engine/validation/authorship.py): pure decisions."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.validation.authorship import (
    ResourceCheck,
    UserInfo,
    UserInfoError,
    denial_message,
    read_user_info,
    spread_checks,
    uniteddeployment_checks,
)


def _spread(api_version: Any = "apps/v1", kind: Any = "Deployment", name: Any = "web") -> dict[str, Any]:
    return {"spec": {"targetRef": {"apiVersion": api_version, "kind": kind, "name": name}, "subsets": []}}


@pytest.mark.parametrize(
    ("api_version", "kind", "group", "resource"),
    [
        ("apps/v1", "Deployment", "apps", "deployments"),
        ("apps/v1", "ReplicaSet", "apps", "replicasets"),
        ("apps/v1", "StatefulSet", "apps", "statefulsets"),
        ("batch/v1", "Job", "batch", "jobs"),
        ("apps.kruise.io/v1alpha1", "CloneSet", "apps.kruise.io", "clonesets"),
        ("apps.kruise.io/v1beta1", "StatefulSet", "apps.kruise.io", "statefulsets"),
    ],
)
def test_a_spread_needs_update_on_its_target(api_version: str, kind: str, group: str, resource: str) -> None:
    assert spread_checks(_spread(api_version, kind), "team-a") == (
        ResourceCheck("update", group, kind, resource, "team-a", "web"),
    )


def test_a_custom_kind_is_named_by_kind_for_the_edge_to_resolve() -> None:
    (check,) = spread_checks(_spread("game.kruise.io/v1alpha1", "GameServerSet"), "ns")
    assert (check.group, check.kind, check.resource, check.name) == (
        "game.kruise.io",
        "GameServerSet",
        "",
        "web",
    )
    assert check.resolved("gameserversets").attributes() == {
        "verb": "update",
        "group": "game.kruise.io",
        "resource": "gameserversets",
        "namespace": "ns",
        "name": "web",
    }


@pytest.mark.parametrize(
    "spread",
    [
        {},
        {"spec": 5},
        {"spec": {"targetRef": "x"}},
        _spread(api_version=5),
        _spread(name=""),
        _spread(kind=None),
    ],
)
def test_an_unusable_target_asks_nothing(spread: Any) -> None:
    assert spread_checks(spread, "ns") == ()


@pytest.mark.parametrize(
    ("key", "group", "resource"),
    [
        ("deploymentTemplate", "apps", "deployments"),
        ("statefulSetTemplate", "apps", "statefulsets"),
        ("advancedStatefulSetTemplate", "apps.kruise.io", "statefulsets"),
        ("cloneSetTemplate", "apps.kruise.io", "clonesets"),
    ],
)
def test_a_uniteddeployment_needs_create_and_update_on_its_template_kind(
    key: str, group: str, resource: str
) -> None:
    checks = uniteddeployment_checks({"spec": {"template": {key: {"spec": {}}}}}, "ns")
    assert [(c.verb, c.group, c.resource, c.namespace, c.name) for c in checks] == [
        ("create", group, resource, "ns", ""),
        ("update", group, resource, "ns", ""),
    ]
    assert "name" not in checks[0].attributes()


def test_a_uniteddeployment_without_template_asks_nothing() -> None:
    assert uniteddeployment_checks({"spec": {}}, "ns") == () == uniteddeployment_checks({"spec": []}, "ns")


def test_user_info_is_read_whole() -> None:
    user = read_user_info(
        {
            "username": "alice",
            "uid": "42",
            "groups": ["dev", "system:authenticated"],
            "extra": {"scopes": ["b", "a"], "authentication.kubernetes.io/pod-name": ["p"]},
        }
    )
    assert user == UserInfo(
        "alice",
        "42",
        ("dev", "system:authenticated"),
        (("authentication.kubernetes.io/pod-name", ("p",)), ("scopes", ("b", "a"))),
    )
    assert user.spec() == {
        "user": "alice",
        "uid": "42",
        "groups": ["dev", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/pod-name": ["p"], "scopes": ["b", "a"]},
    }
    assert (
        not user.privileged and read_user_info({"username": "root", "groups": ["system:masters"]}).privileged
    )


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (None, "request.userInfo"),
        ({"username": ""}, "request.userInfo.username"),
        ({"username": 5}, "username"),
        ({"username": "a", "groups": "dev"}, "groups"),
        ({"username": "a", "groups": [1]}, "groups"),
        ({"username": "a", "extra": {"k": "v"}}, "extra"),
        ({"username": "a", "uid": 3}, "uid"),
    ],
)
def test_malformed_user_info_names_the_field(raw: Any, field: str) -> None:
    with pytest.raises(UserInfoError, match=field.replace(".", r"\.")):
        read_user_info(raw)


def test_the_denial_names_the_verb_and_the_resource() -> None:
    check = ResourceCheck("update", "apps", "Deployment", "deployments", "team-a", "web")
    message = denial_message(UserInfo("mallory"), check, "no RBAC policy matched")
    assert message.startswith(
        'user "mallory" may not update deployments.apps "web" in namespace "team-a" (no RBAC policy matched)'
    )
    core = ResourceCheck("create", "", "Pod", "pods", "ns")
    assert core.describe() == 'create pods in namespace "ns"'
