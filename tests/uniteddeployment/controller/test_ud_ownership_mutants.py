"""Ownership decisions: what mutation testing (run U1) found unpinned.

Rules (docs/uniteddeployment.md, "Subset workloads" and "Adoption"): a controller reference is
the UnitedDeployment's when its uid equals the UnitedDeployment's, or, when either has no uid,
when it names a `UnitedDeployment` of the same name; an object without a controller reference
is an orphan, one with another controller is foreign. A workload controls a pod its controller
reference names (by uid when both have one, else by name), and an ownerless pod only through a
non-empty selector. Releasing removes only the UnitedDeployment's controller reference; the
identity of an object to delete is its apiVersion, kind, namespace and name.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.ownership import (
    is_ours,
    ownership,
    owns_pod,
    reference,
    released,
    selected,
)

pytestmark = pytest.mark.timeout(30)


def model(uid: bool = True, namespace: bool = True) -> UnitedDeployment:
    obj = ud_object(2, [{"name": "a"}])
    if not uid:
        del obj["metadata"]["uid"]
    if not namespace:
        del obj["metadata"]["namespace"]
    return UnitedDeployment.from_object(obj)


@pytest.mark.parametrize(
    ("ref", "with_uid", "ours"),
    [
        ({"kind": "UnitedDeployment", "name": "web", "uid": "ud-uid-1"}, True, True),
        ({"kind": "UnitedDeployment", "name": "web", "uid": "other"}, True, False),
        ({"kind": "Other", "name": "x", "uid": "ud-uid-1"}, True, True),  # the uid decides
        ({"kind": "UnitedDeployment", "name": "web"}, True, True),  # no uid: kind and name
        ({"kind": "UnitedDeployment", "name": "web", "uid": ""}, True, True),
        ({"kind": "UnitedDeployment", "name": "other"}, True, False),
        ({"kind": "Deployment", "name": "web"}, True, False),
        ({"name": "web"}, True, False),
        ({"kind": "UnitedDeployment"}, True, False),
        ({"kind": "UnitedDeployment", "name": "web", "uid": "x"}, False, True),  # the UD has none
        ({"kind": "UnitedDeployment", "name": "db", "uid": "x"}, False, False),
    ],
)
def test_a_reference_is_ours_by_uid_else_by_kind_and_name(
    ref: dict[str, Any], with_uid: bool, ours: bool
) -> None:
    assert is_ours(ref, model(uid=with_uid)) is ours


def owned_by(ref: dict[str, Any] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "w", "namespace": "default"}
    if ref is not None:
        meta["ownerReferences"] = [{**ref, "controller": True}]
    return {"kind": "Deployment", "metadata": meta}


def test_the_three_verdicts() -> None:
    ud = model()
    assert ownership(owned_by(None), ud) == "orphan"
    assert ownership(owned_by({"kind": "UnitedDeployment", "name": "web", "uid": "ud-uid-1"}), ud) == "owned"
    assert ownership(owned_by({"kind": "UnitedDeployment", "name": "web", "uid": "zzz"}), ud) == "foreign"


def test_selection_needs_the_namespace_and_the_selector() -> None:
    labelled = {"metadata": {"namespace": "default", "labels": {"app": "web"}}}
    assert selected(labelled, model()) is True
    assert selected({"metadata": {"namespace": "other", "labels": {"app": "web"}}}, model()) is False
    assert selected({"metadata": {"labels": {"app": "web"}}}, model(namespace=False)) is True
    broken = dataclasses.replace(
        model(), selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    )
    assert selected(labelled, broken) is False  # a selector that cannot be read selects nothing


def test_releasing_removes_only_our_controller_reference_and_copies() -> None:
    ours = {"kind": "UnitedDeployment", "name": "web", "uid": "ud-uid-1", "controller": True}
    ours_not_controller = {**ours, "controller": False}
    theirs = {"kind": "ReplicaSet", "name": "x", "uid": "x1", "controller": True}
    obj = {
        "kind": "Deployment",
        "metadata": {"name": "w", "ownerReferences": [ours, ours_not_controller, theirs, "junk"]},
    }
    before = copy.deepcopy(obj)
    assert released(obj, model()) == {
        "kind": "Deployment",
        "metadata": {"name": "w", "ownerReferences": [ours_not_controller, theirs, "junk"]},
    }
    assert obj == before
    assert released({"kind": "Deployment"}, model()) == {
        "kind": "Deployment",
        "metadata": {"ownerReferences": []},
    }
    assert released({"metadata": {"name": "w"}}, model()) == {
        "metadata": {"name": "w", "ownerReferences": []}
    }


def test_a_reference_to_delete_names_version_kind_namespace_and_name() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u"},
        "spec": {},
    }
    assert reference(obj) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"namespace": "ns", "name": "w"},
    }
    assert reference({"kind": "Pod", "metadata": {"name": "p"}}) == {
        "apiVersion": None,
        "kind": "Pod",
        "metadata": {"namespace": "", "name": "p"},
    }


def statefulset(selector: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web-a", "namespace": "default", "uid": "w1"},
        "spec": {"selector": selector} if selector != "no-spec" else "junk",
    }


def test_a_pod_is_controlled_by_name_when_its_reference_has_no_uid() -> None:
    pod = {
        "metadata": {
            "name": "web-a-0",
            "namespace": "default",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web-a", "controller": True}
            ],
        }
    }
    assert owns_pod(statefulset({"matchLabels": {"app": "web"}}), pod) is True


@pytest.mark.parametrize("selector", [{}, None, "no-spec"], ids=["empty", "none", "no-spec"])
def test_an_ownerless_pod_is_not_taken_by_an_empty_or_missing_selector(selector: Any) -> None:
    pod = {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}}}
    assert owns_pod(statefulset(selector), pod) is False
    assert owns_pod(statefulset({"matchLabels": {"app": "web"}}), pod) is True
