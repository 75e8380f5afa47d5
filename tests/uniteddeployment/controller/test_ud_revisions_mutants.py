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
