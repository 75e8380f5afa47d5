"""Revision numbers read from stored ControllerRevisions: what mutation testing (run U1) found
unpinned. A `revision` that is not an integer (a boolean or a string, which the API would not
store) counts as 0, so the next revision created is number 1."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ud_testkit import OWNER, ud_object
from ud_testkit import stored_revision as stored

from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.revisions import plan_revisions, revision_data, revision_name

pytestmark = pytest.mark.timeout(30)


def model(image: str) -> UnitedDeployment:
    obj = ud_object(2, [{"name": "a"}])
    obj["spec"]["template"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = (
        image
    )
    return UnitedDeployment.from_object(obj)


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
                "ownerReferences": [OWNER],
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


def with_status(ud: UnitedDeployment, status: dict[str, Any], limit: int | None = None) -> UnitedDeployment:
    obj = copy.deepcopy(ud.raw)
    obj["status"] = status
    if limit is not None:
        obj["spec"]["revisionHistoryLimit"] = limit
    return UnitedDeployment.from_object(obj)


def test_the_stored_collision_count_names_the_new_revision() -> None:
    ud = with_status(model("v2"), {"collisionCount": 2})
    result = plan_revisions(ud, [stored(model("v1"), 1)])
    assert result.collision_count == 2
    assert [r["metadata"]["name"] for r in result.create] == [revision_name(ud, 2)[0]]


def test_every_clash_bumps_the_collision_count_once_more() -> None:
    ud = model("v2")
    clashes = [
        {
            **stored(model(f"other-{i}"), i + 1),
            "metadata": {**stored(model("x"), 0)["metadata"], "name": revision_name(ud, i)[0]},
        }
        for i in range(2)
    ]
    result = plan_revisions(ud, clashes)
    assert result.collision_count == 2 and result.updated == revision_name(ud, 2)[0]


def test_a_stored_current_revision_that_is_gone_gives_way_to_the_updated_one() -> None:
    ud = with_status(model("v2"), {"currentRevision": "web-gone"})
    result = plan_revisions(ud, [stored(model("v1"), 1)])
    assert result.current == result.updated == revision_name(ud, 0)[0]
    fresh = plan_revisions(ud, [])  # no history yet: the stored name is kept
    assert fresh.current == "web-gone"


def test_history_within_the_limit_is_kept() -> None:
    history = [stored(model("v1"), 1), stored(model("v2"), 2)]
    assert plan_revisions(model("v3"), history).delete == ()


def test_revisions_with_one_number_are_deleted_in_name_order() -> None:
    ud = with_status(model("v3"), {}, limit=1)
    b = {**stored(model("v1"), 1), "metadata": {**stored(model("v1"), 1)["metadata"], "name": "web-b"}}
    a = {**stored(model("v2"), 1), "metadata": {**stored(model("v2"), 1)["metadata"], "name": "web-a"}}
    c = stored(model("v4"), 2)
    result = plan_revisions(ud, [c, b, a])  # 3 stored, limit 1: the 2 oldest go
    assert [r["metadata"]["name"] for r in result.delete] == ["web-a", "web-b"]


def test_a_renumbered_revision_shares_nothing_with_the_stored_one() -> None:
    v1, v2 = model("v1"), model("v2")
    old = stored(v1, 1)
    result = plan_revisions(v1, [old, stored(v2, 2)])
    renumbered = result.update[0]
    assert renumbered["revision"] == 3 and old["revision"] == 1
    assert renumbered["metadata"] == old["metadata"] and renumbered["metadata"] is not old["metadata"]
    assert renumbered["data"] is not old["data"]
