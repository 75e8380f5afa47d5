"""Ownership edges mutation testing (run U1) found unpinned, asserted on the functions' whole results.

Rules (docs/uniteddeployment.md, "Adoption", and the module's docstring): a controller reference
is the UnitedDeployment's by uid when both have a non-empty string uid, else by kind
`UnitedDeployment` and name; no controller reference is "orphan", anyone else's "foreign". A
workload owns a pod through its controller reference (same namespace, same API group, same kind;
by uid when both have one, else by name), a Deployment through the ReplicaSet
`<deployment>-<pod-template-hash>`, and an ownerless pod when its non-empty `spec.selector`
matches. Releasing removes only the UnitedDeployment's *controller* reference, on a copy.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.ownership import (
    deployment_behind,
    is_ours,
    names_ud,
    ownership,
    owns_pod,
    reference,
    released,
    selected,
)

pytestmark = pytest.mark.timeout(30)

UD = UnitedDeployment.from_object(ud_object(2, [{"name": "a"}]))  # name web, uid ud-uid-1, namespace default
NO_UID = dataclasses.replace(UD, uid="")


def _ref(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "spreadgate.dev/v1beta1", "controller": True, **fields}


def test_a_reference_is_ours_by_uid_when_both_have_one_else_by_kind_and_name() -> None:
    verdicts = {
        "same uid": is_ours(_ref(kind="Deployment", name="x", uid="ud-uid-1"), UD),
        "other uid": is_ours(_ref(kind="UnitedDeployment", name="web", uid="other"), UD),
        "no ref uid": is_ours(_ref(kind="UnitedDeployment", name="web"), UD),
        "empty ref uid": is_ours(_ref(kind="UnitedDeployment", name="web", uid=""), UD),
        "uid not a string": is_ours(_ref(kind="UnitedDeployment", name="web", uid=7), UD),
        "no ud uid": is_ours(_ref(kind="UnitedDeployment", name="web", uid="other"), NO_UID),
        "no ud uid, other name": is_ours(_ref(kind="UnitedDeployment", name="api", uid="ud-uid-1"), NO_UID),
        "other kind": is_ours(_ref(kind="Deployment", name="web"), UD),
        "other name": is_ours(_ref(kind="UnitedDeployment", name="api"), UD),
        "no kind": is_ours({"name": "web"}, UD),
        "no name": is_ours({"kind": "UnitedDeployment"}, UD),
    }
    assert verdicts == {
        "same uid": True,
        "other uid": False,
        "no ref uid": True,
        "empty ref uid": True,
        "uid not a string": True,
        "no ud uid": True,
        "no ud uid, other name": False,
        "other kind": False,
        "other name": False,
        "no kind": False,
        "no name": False,
    }


def _obj(
    refs: Any = None, namespace: str | None = "default", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "web-a"}
    if namespace is not None:
        metadata["namespace"] = namespace
    if refs is not None:
        metadata["ownerReferences"] = refs
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata}


def test_ownership_names_its_three_answers() -> None:
    ours = _ref(kind="UnitedDeployment", name="web", uid="ud-uid-1")
    theirs = _ref(kind="UnitedDeployment", name="web", uid="other")
    not_controller = {**ours, "controller": False}
    assert [ownership(_obj(refs), UD) for refs in (None, [ours], [theirs], [not_controller], "bad")] == [
        "orphan",
        "owned",
        "foreign",
        "orphan",
        "orphan",
    ]


def test_released_drops_only_our_controller_reference_on_a_copy() -> None:
    ours = _ref(kind="UnitedDeployment", name="web", uid="ud-uid-1")
    ours_not_controller = {**ours, "controller": False}
    other = _ref(kind="UnitedDeployment", name="api", uid="other")
    obj = _obj([ours_not_controller, ours, other, "junk"])
    before = copy.deepcopy(obj)
    out = released(obj, UD)
    assert out == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web-a",
            "namespace": "default",
            "ownerReferences": [ours_not_controller, other, "junk"],
        },
    }
    assert obj == before
    assert released({"kind": "Deployment"}, UD) == {"kind": "Deployment", "metadata": {"ownerReferences": []}}
    assert released(_obj(), UD)["metadata"] == {
        "name": "web-a",
        "namespace": "default",
        "ownerReferences": [],
    }
    assert released(_obj({"a": 1}), UD)["metadata"]["ownerReferences"] == []


def test_reference_is_the_identity_to_delete() -> None:
    assert reference(_obj([_ref(kind="UnitedDeployment", name="web")], namespace="team")) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"namespace": "team", "name": "web-a"},
    }
    assert reference({"kind": "Pod"}) == {
        "apiVersion": None,
        "kind": "Pod",
        "metadata": {"namespace": "", "name": None},
    }


def test_selected_needs_the_namespace_and_a_valid_matching_selector() -> None:
    app = {"app": "web"}
    assert selected(_obj(labels=app), UD) is True
    assert selected(_obj(labels=app, namespace="team"), UD) is False
    assert selected(_obj(labels={"app": "api"}), UD) is False
    # no namespace on the object reads as "": selected only by a UnitedDeployment without one
    assert selected(_obj(labels=app, namespace=None), UD) is False
    assert selected(_obj(labels=app, namespace=None), dataclasses.replace(UD, namespace="")) is True
    bogus = dataclasses.replace(UD, selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]})
    assert selected(_obj(labels=app), bogus) is False


def test_names_ud_by_annotation_or_a_revision_label_of_its_name_and_a_hash() -> None:
    def orphan(
        labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
    ) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": "w", "labels": labels or {}}
        if annotations is not None:
            metadata["annotations"] = annotations
        return {"metadata": metadata}

    cases = {
        "annotation": orphan(annotations={"spreadgate.dev/united-deployment": "web"}),
        "annotation of another": orphan(annotations={"spreadgate.dev/united-deployment": "api"}),
        "spreadgate label": orphan({"spreadgate.dev/controller-revision-hash": "web-7b9f5c"}),
        "kruise label": orphan({"apps.kruise.io/controller-revision-hash": "web-7b9f5c"}),
        "other ud": orphan({"apps.kruise.io/controller-revision-hash": "webx-7b9f5c"}),
        "not a hash": orphan({"spreadgate.dev/controller-revision-hash": "web-abc"}),
        "no hash": orphan({"spreadgate.dev/controller-revision-hash": "web-"}),
        "other label": orphan({"controller-revision-hash": "web-7b9f5c"}),
        "nothing": orphan(),
    }
    assert {name: names_ud(obj, UD) for name, obj in cases.items()} == {
        "annotation": True,
        "annotation of another": False,
        "spreadgate label": True,
        "kruise label": True,
        "other ud": False,
        "not a hash": False,
        "no hash": False,
        "other label": False,
        "nothing": False,
    }


def _workload(
    kind: str, uid: str | None = "w-uid", spec: Any = None, api_version: str = "apps/v1"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "web-a", "namespace": "default"}
    if uid is not None:
        metadata["uid"] = uid
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    if spec is not None:
        out["spec"] = spec
    return out


def _pod(
    ref: dict[str, Any] | None = None, labels: dict[str, str] | None = None, namespace: str = "default"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p", "namespace": namespace, "labels": labels or {"app": "web"}}
    if ref is not None:
        metadata["ownerReferences"] = [{"controller": True, **ref}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}


def test_a_workload_owns_a_pod_through_its_controller_reference() -> None:
    sts = _workload("StatefulSet")
    sts_no_uid = _workload("StatefulSet", uid=None)
    apps = {"apiVersion": "apps/v1", "kind": "StatefulSet"}
    verdicts = {
        "by uid": owns_pod(sts, _pod({**apps, "name": "other", "uid": "w-uid"})),
        "other uid": owns_pod(sts, _pod({**apps, "name": "web-a", "uid": "x"})),
        "ref without uid, by name": owns_pod(sts, _pod({**apps, "name": "web-a"})),
        "ref without uid, other name": owns_pod(sts, _pod({**apps, "name": "web-b"})),
        "workload without uid, by name": owns_pod(sts_no_uid, _pod({**apps, "name": "web-a", "uid": "x"})),
        "other kind": owns_pod(sts, _pod({"apiVersion": "apps/v1", "kind": "Deployment", "uid": "w-uid"})),
        "other group": owns_pod(
            sts, _pod({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "uid": "w-uid"})
        ),
        "other namespace": owns_pod(sts, _pod({**apps, "uid": "w-uid"}, namespace="team")),
    }
    assert verdicts == {
        "by uid": True,
        "other uid": False,
        "ref without uid, by name": True,
        "ref without uid, other name": False,
        "workload without uid, by name": True,
        "other kind": False,
        "other group": False,
        "other namespace": False,
    }


def test_an_ownerless_pod_belongs_to_a_workload_whose_non_empty_selector_matches() -> None:
    selector = {"selector": {"matchLabels": {"app": "web"}}}
    verdicts = {
        "matching": owns_pod(_workload("StatefulSet", spec=selector), _pod()),
        "not matching": owns_pod(_workload("StatefulSet", spec=selector), _pod(labels={"app": "api"})),
        "empty selector": owns_pod(_workload("StatefulSet", spec={"selector": {}}), _pod()),
        "selector not an object": owns_pod(_workload("StatefulSet", spec={"selector": "app=web"}), _pod()),
        "invalid selector": owns_pod(
            _workload(
                "StatefulSet", spec={"selector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}}
            ),
            _pod(),
        ),
        "no spec": owns_pod(_workload("StatefulSet"), _pod()),
        "spec not an object": owns_pod(_workload("StatefulSet", spec="x"), _pod()),
    }
    assert verdicts == {
        "matching": True,
        "not matching": False,
        "empty selector": False,
        "selector not an object": False,
        "invalid selector": False,
        "no spec": False,
        "spec not an object": False,
    }


def test_a_deployment_owns_pods_through_its_replicaset() -> None:
    deployment = _workload("Deployment")
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet"}
    hashed = {"app": "web", "pod-template-hash": "5d8f"}
    verdicts = {
        "hash suffix": owns_pod(deployment, _pod({**rs, "name": "web-a-5d8f"}, labels=hashed)),
        "other hash": owns_pod(deployment, _pod({**rs, "name": "web-a-9999"}, labels=hashed)),
        "no hash label": owns_pod(deployment, _pod({**rs, "name": "web-a-9999"})),
        "other deployment": owns_pod(deployment, _pod({**rs, "name": "web-b-5d8f"}, labels=hashed)),
    }
    assert verdicts == {
        "hash suffix": True,
        "other hash": False,
        "no hash label": True,
        "other deployment": False,
    }
    assert deployment_behind({**rs, "name": "web-a-5d8f"}, _pod(labels=hashed)) == "web-a"
    assert deployment_behind({**rs, "name": "web-a-5d8f"}, _pod(labels={"pod-template-hash": ""})) == "web-a"
    assert deployment_behind({**rs, "name": "web-a-x"}, _pod(labels=hashed)) is None
    assert deployment_behind({**rs, "name": "plain"}, _pod()) == ""
    assert deployment_behind({"apiVersion": "v1", "kind": "ReplicaSet", "name": "web-a-5d8f"}, _pod()) is None
    assert (
        deployment_behind({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-a-5d8f"}, _pod())
        is None
    )
    assert deployment_behind({**rs}, _pod()) == ""
    assert deployment_behind({**rs, "name": "web-a-5d8f"}, {"metadata": {}}) == "web-a"


def test_namespaces_and_kinds_are_compared_as_given_an_absent_one_reading_empty() -> None:
    apps = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web-a"}
    nowhere = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web-a"}}
    pod_nowhere = {"metadata": {"name": "p", "ownerReferences": [{"controller": True, **apps}]}}
    assert owns_pod(nowhere, pod_nowhere) is True
    assert owns_pod(nowhere, _pod(apps)) is False  # the pod is in "default"
    assert owns_pod(_workload("StatefulSet", uid=None), pod_nowhere) is False
    kindless = {"apiVersion": "apps/v1", "metadata": {"name": "web-a", "namespace": "default"}}
    assert owns_pod(kindless, _pod({"apiVersion": "apps/v1", "kind": "", "name": "web-a"})) is True
    assert owns_pod(kindless, _pod(apps)) is False
