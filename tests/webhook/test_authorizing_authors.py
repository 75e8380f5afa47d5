"""Issue 24: the validating webhook denies a WorkloadSpread or UnitedDeployment change whose author
may not change the workloads it acts on. The real app and validation service, the SubjectAccessReview
port replaced by a fake that answers from a table of grants (the embedded cluster's answer is
tested end to end in tests/e2e/test_author_authorization.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from access_review_kit import RecordingReviewer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.kube_objects import united_deployment, workload, workload_spread
from py_engine.policy import create_engine
from py_engine.semantics.clock import RealClock
from py_engine.validation.authorization import AuthorGate
from py_engine.validation.authorship import ResourceCheck, UserInfo
from py_engine.validation.service import ValidationService
from py_engine.workloadspread.admission.service import AdmissionService
from webhook.app import create_app

ENGINE = create_engine()
DEPLOYMENT = workload(
    "Deployment", "web", replicas=3, namespace="team-a", uid="d1", container="main", image="nginx"
)
EDITOR = {
    "username": "erin",
    "uid": "e-1",
    "groups": ["web-editors", "system:authenticated"],
    "extra": {"scopes": ["x"]},
}
SPREAD_EDITOR = {"username": "mallory", "groups": ["spread-editors", "system:authenticated"]}


class View:
    def ready(self) -> bool:
        return True

    def spreads_in(self, namespace: str) -> list[Any]:
        return []

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> Any:
        return DEPLOYMENT if (kind, namespace, name) == ("Deployment", "team-a", "web") else None


class Grants(RecordingReviewer):
    """The SubjectAccessReview port: `web-editors` may create and update deployments in team-a."""

    failure = "Post https://10.0.0.1/apis/...: connection refused"

    def allows(self, user: UserInfo, check: ResourceCheck) -> bool:
        return (
            "web-editors" in user.groups and check.resource == "deployments" and check.namespace == "team-a"
        )


def _client(grants: Grants | None) -> Any:
    gate = AuthorGate(grants, RealClock().monotonic) if grants is not None else None
    service = AdmissionService(View(), None, RealClock(), engine=ENGINE)  # type: ignore[arg-type]
    return create_app(service, ValidationService(View(), ENGINE, author_gate=gate)).test_client()


def _spread(patch: Any = None) -> dict[str, Any]:
    subset: dict[str, Any] = {"name": "a", "maxReplicas": 1}
    if patch is not None:
        subset["patch"] = patch
    return workload_spread("ws", [subset, {"name": "b"}], namespace="team-a")


def _united() -> dict[str, Any]:
    return united_deployment("ud", [{"name": "a"}, {"name": "b"}], namespace="team-a")


def _review(client: Any, path: str, obj: Any, user: Any, operation: str = "CREATE", old: Any = None) -> Any:
    request: dict[str, Any] = {"uid": "u1", "operation": operation, "namespace": "team-a", "object": obj}
    if user is not None:
        request["userInfo"] = user
    if old is not None:
        request["oldObject"] = old
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    resp = client.post(path, data=json.dumps(body), content_type="application/json")
    assert resp.status_code == 200, resp.data
    return resp.get_json()["response"]


def test_a_spread_author_without_update_on_the_target_is_denied() -> None:
    grants = Grants()
    response = _review(_client(grants), "/validate/workloadspreads", _spread(), SPREAD_EDITOR)
    assert not response["allowed"]
    assert response["status"]["code"] == 403 and response["status"]["reason"] == "Forbidden"
    assert (
        'user "mallory" may not update deployments.apps "web" in namespace "team-a"'
        in response["status"]["message"]
    )
    ((user, check),) = grants.asked
    assert user == UserInfo("mallory", "", ("spread-editors", "system:authenticated"))
    assert check.attributes() == {
        "verb": "update",
        "group": "apps",
        "resource": "deployments",
        "namespace": "team-a",
        "name": "web",
    }


def test_a_workload_editor_may_create_the_spread_and_is_asked_with_the_whole_user_info() -> None:
    grants = Grants()
    response = _review(_client(grants), "/validate/workloadspreads", _spread(), EDITOR)
    assert response["allowed"], response
    assert grants.asked[0][0] == UserInfo(
        "erin", "e-1", ("web-editors", "system:authenticated"), (("scopes", ("x",)),)
    )


def test_an_update_that_changes_the_spec_is_checked_one_that_does_not_is_not() -> None:
    grants = Grants()
    client = _client(grants)
    changed = _spread({"metadata": {"labels": {"pool": "spot"}}})
    assert not _review(client, "/validate/workloadspreads", changed, SPREAD_EDITOR, "UPDATE", _spread())[
        "allowed"
    ]
    relabelled = dict(_spread(), metadata={"name": "ws", "namespace": "team-a", "labels": {"x": "y"}})
    assert _review(client, "/validate/workloadspreads", relabelled, SPREAD_EDITOR, "UPDATE", _spread())[
        "allowed"
    ]
    assert len(grants.asked) == 1


def test_an_invalid_spread_is_refused_for_being_invalid_without_asking() -> None:
    grants = Grants()
    bad = _spread({"spec": {"hostNetwork": True}})
    response = _review(_client(grants), "/validate/workloadspreads", bad, SPREAD_EDITOR)
    assert response["status"]["code"] == 422 and grants.asked == []


def test_a_failed_check_denies_with_a_message_saying_so() -> None:
    response = _review(_client(Grants(fail=True)), "/validate/workloadspreads", _spread(), EDITOR)
    assert not response["allowed"] and response["status"]["code"] == 500
    assert response["status"]["message"].startswith(
        'could not check whether user "erin" may update deployments.apps'
    )
    assert "connection refused" in response["status"]["message"]


@pytest.mark.parametrize(
    ("user", "field"),
    [
        (None, "request.userInfo"),
        ({"username": 7}, "request.userInfo.username"),
        ({"username": "a", "groups": "x"}, "request.userInfo.groups"),
    ],
)
def test_a_review_without_a_usable_user_is_400_naming_the_field(user: Any, field: str) -> None:
    response = _review(_client(Grants()), "/validate/workloadspreads", _spread(), user)
    assert response["status"]["code"] == 400 and field in response["status"]["message"]


def test_the_check_can_be_turned_off() -> None:
    assert _review(_client(None), "/validate/workloadspreads", _spread(), SPREAD_EDITOR)["allowed"]


def test_a_uniteddeployment_needs_create_and_update_on_its_template_kind() -> None:
    grants = Grants()
    client = _client(grants)
    response = _review(client, "/validate/uniteddeployments", _united(), SPREAD_EDITOR)
    assert not response["allowed"] and response["status"]["code"] == 403
    assert 'may not create deployments.apps in namespace "team-a"' in response["status"]["message"]
    assert _review(client, "/validate/uniteddeployments", _united(), EDITOR)["allowed"]
    assert [c.verb for u, c in grants.asked if u.username == "erin"] == ["create", "update"]


def test_system_masters_are_not_asked() -> None:
    grants = Grants()
    admin = {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
    assert _review(_client(grants), "/validate/workloadspreads", _spread(), admin)["allowed"]
    assert grants.asked == []


def test_the_knobs_are_documented_with_their_defaults() -> None:
    from pathlib import Path

    from py_engine.validation.authorization import DEFAULT_TTL

    text = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    tuning = text[text.index("## Tuning") :]
    assert "| `--authorize-authors` | webhook | true |" in tuning
    assert f"| `--authorization-cache-ttl` | webhook | {DEFAULT_TTL:g} s |" in tuning
    assert "| `--client-ca` | webhook | none |" in tuning
    assert f"(default **{DEFAULT_TTL:g} s**)" in text


USER_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.lists(st.text(max_size=8) | st.integers(), max_size=3)
    | st.dictionaries(
        st.text(max_size=8), st.lists(st.text(max_size=4), max_size=2) | st.text(max_size=4), max_size=2
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    user=st.one_of(
        USER_VALUES,
        st.dictionaries(st.sampled_from(["username", "uid", "groups", "extra"]), USER_VALUES, max_size=4),
    )
)
def test_any_user_info_gets_a_decision_never_an_internal_error(user: Any) -> None:
    response = _review(_client(Grants()), "/validate/workloadspreads", _spread(), user)
    if not response["allowed"]:
        status = response["status"]
        assert status["code"] in (400, 403), status
        assert status["code"] == 403 or status["message"].startswith("request.userInfo"), status
