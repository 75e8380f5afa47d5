"""Issue 24, finding 2: the subset patch allowlist is enforced by the UnitedDeployment controller
as well. A stored UnitedDeployment whose patch sets `serviceAccountName` (validation would refuse
it, but it was stored without the webhook) was applied with the controller's rights; now no
workload is written from it, its status says why and a Warning Event names the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from united_kit import DEPLOYMENTS, UDS, opt_out_of_validation, pools, term, ud, ud_events, united

from py_engine.assembled_stack import Stack
from py_engine.model.uniteddeployment import UnitedDeployment
from py_engine.uniteddeployment.controller.plan import plan
from py_engine.uniteddeployment.controller.runtime.patchcheck import PatchCheck
from py_engine.uniteddeployment.controller.state import UnitedState

pytestmark = [pytest.mark.timeout(180)]

FORBIDDEN = {"spec": {"serviceAccountName": "admin-sa"}}
ALLOWED = {"metadata": {"labels": {"cost-class": "spot"}}}


def _ud(patch: dict[str, Any] | None, uid: str = "u1") -> dict[str, Any]:
    subset: dict[str, Any] = {"name": "a", "nodeSelectorTerm": term("a")}
    if patch is not None:
        subset["patch"] = patch
    obj = united("web", 2, [subset])
    obj["metadata"].update(uid=uid, generation=1)
    return obj


@pytest.fixture(scope="module")
def check() -> Any:
    found = PatchCheck()
    yield found
    found.close()


def test_the_validation_rule_finds_the_forbidden_field(check: PatchCheck) -> None:
    obj = _ud(FORBIDDEN)
    found = check.forbidden(obj, UnitedDeployment.from_object(obj))
    assert len(found) == 1 and found[0].startswith("spec.topology.subsets[0].patch.spec.serviceAccountName")
    assert check.forbidden(obj, UnitedDeployment.from_object(obj)) == found  # cached per generation
    allowed = _ud(ALLOWED, uid="u2")
    assert check.forbidden(allowed, UnitedDeployment.from_object(allowed)) == ()
    before = check.evaluations
    none = _ud(None, uid="u3")
    assert check.forbidden(none, UnitedDeployment.from_object(none)) == () and check.evaluations == before


def test_an_operator_widened_allowlist_is_honoured() -> None:
    widened = PatchCheck(allowed_patch_fields=("spec.serviceAccountName",))
    try:
        obj = _ud(FORBIDDEN)
        assert widened.forbidden(obj, UnitedDeployment.from_object(obj)) == ()
    finally:
        widened.close()


def test_the_plan_writes_nothing_but_the_status() -> None:
    obj = _ud(FORBIDDEN)
    result = plan(
        UnitedState(ud=UnitedDeployment.from_object(obj), forbidden_patches=("x: Forbidden",)),
        datetime(2030, 1, 1, tzinfo=UTC),
    )
    assert result.refused and result.refusal == "patch"
    assert result.create == () and result.update == () and result.delete == () and result.release == ()
    failure = [c for c in result.status["conditions"] if c["type"] == "SubsetFailure"]
    assert failure and failure[0]["status"] == "True" and failure[0]["reason"] == "ForbiddenPatch"
    assert "x: Forbidden" in failure[0]["message"] and result.status_changed


@pytest.mark.e2e
def test_a_stored_ud_with_a_forbidden_patch_creates_nothing_until_fixed() -> None:
    with Stack(pools("a")) as stack:
        obj = _ud(FORBIDDEN)
        del obj["metadata"]["uid"], obj["metadata"]["generation"]
        opt_out_of_validation(stack)  # stored as is, as with the webhook off or the namespace opted out
        stack.create(UDS, obj)
        stack.settle()
        assert stack.api.list(DEPLOYMENTS, "default")["items"] == []
        conditions = {c["type"]: c for c in ud(stack, "web")["status"]["conditions"]}
        assert conditions["SubsetFailure"]["reason"] == "ForbiddenPatch"
        assert "serviceAccountName" in conditions["SubsetFailure"]["message"]
        events = [(e["type"], e["reason"], e["message"]) for e in ud_events(stack)]
        assert any(
            t == "Warning" and r == "ForbiddenSubsetPatch" and "serviceAccountName" in m for t, r, m in events
        )
        stack.api.patch(
            UDS,
            "default",
            "web",
            {
                "spec": {
                    "topology": {"subsets": [{"name": "a", "nodeSelectorTerm": term("a"), "patch": ALLOWED}]}
                }
            },
            "merge",
        )
        stack.settle()
        created = stack.api.list(DEPLOYMENTS, "default")["items"]
        assert len(created) == 1 and "serviceAccountName" not in created[0]["spec"]["template"]["spec"]
        assert "SubsetFailure" not in {c["type"] for c in ud(stack, "web")["status"]["conditions"]}
