"""Revision numbers read from stored ControllerRevisions: what mutation testing (run U1) found
unpinned. A `revision` that is not an integer (a boolean or a string, which the API would not
store) counts as 0, so the next revision created is number 1."""

from __future__ import annotations

from typing import Any

import pytest
from ud_testkit import ud_object

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.revisions import plan_revisions, revision_data, revision_name

pytestmark = pytest.mark.timeout(30)


def model(image: str) -> UnitedDeployment:
    obj = ud_object(2, [{"name": "a"}])
    obj["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = (
        image
    )
    return UnitedDeployment.from_object(obj)


def stored(ud: UnitedDeployment, number: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(ud, 0)[0],
            "namespace": "default",
            "labels": {"app": "web"},
            "ownerReferences": [
                {"kind": "UnitedDeployment", "name": "web", "uid": "ud-uid-1", "controller": True}
            ],
        },
        "data": revision_data(ud),
        "revision": number,
    }


@pytest.mark.parametrize("number", [True, "7", 2.0, None])
def test_a_revision_number_that_is_not_an_integer_counts_as_zero(number: Any) -> None:
    result = plan_revisions(model("v2"), [stored(model("v1"), number)])
    assert [r["revision"] for r in result.create] == [1]


def test_a_new_revision_is_written_whole() -> None:
    ud = model("v2")
    name, digest = revision_name(ud, 0)
    result = plan_revisions(ud, [])
    assert result.create == (
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": {"app": "web", "controller.kubernetes.io/hash": digest},
                "ownerReferences": [
                    {
                        "apiVersion": "spreadgate.dev/v1beta1",
                        "kind": "UnitedDeployment",
                        "name": "web",
                        "uid": "ud-uid-1",
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "data": revision_data(ud),
            "revision": 1,
        },
    )


def foreign(revision: dict[str, Any]) -> dict[str, Any]:
    revision["metadata"]["ownerReferences"] = [
        {"kind": "UnitedDeployment", "name": "other", "uid": "other-uid", "controller": True}
    ]
    return revision


def orphan(revision: dict[str, Any], app: str) -> dict[str, Any]:
    del revision["metadata"]["ownerReferences"]
    revision["metadata"]["labels"] = {"app": app}
    return revision


@pytest.mark.parametrize(
    ("make", "next_number"),
    [
        (lambda r: foreign(r), 1),  # another controller's, though its labels match: not ours
        (lambda r: orphan(r, "db"), 1),  # an orphan the selector does not match
        (lambda r: orphan(r, "web"), 8),  # an orphan the selector matches: part of the history
        (lambda r: r, 8),
        (lambda r: {**r, "kind": "Deployment"}, 1),  # owned, but not a ControllerRevision
    ],
    ids=["foreign", "unselected-orphan", "selected-orphan", "owned", "owned-deployment"],
)
def test_the_history_holds_owned_revisions_and_selected_orphans(make: Any, next_number: int) -> None:
    result = plan_revisions(model("v2"), [make(stored(model("v1"), 7))])
    assert [r["revision"] for r in result.create] == [next_number]
