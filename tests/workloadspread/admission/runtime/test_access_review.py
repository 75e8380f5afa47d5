"""The SubjectAccessReview edge (py_engine/workloadspread/admission/runtime/access_review.py) over a recording
fake client: the request it sends, the answers it reads, and failures raised, never guessed."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.apiclient import KubeError, NotFound
from py_engine.validation.authorization import AccessReviewFailed
from py_engine.validation.authorship import ResourceCheck, UserInfo
from py_engine.workloadspread.admission.runtime.access_review import SAR_PATH, KubeAccessReviewer, read_answer

USER = UserInfo("alice", "u-1", ("dev", "system:authenticated"), (("scopes", ("a", "b")),))
CHECK = ResourceCheck("update", "apps", "Deployment", "deployments", "team-a", "web")


class FakeClient:
    def __init__(
        self, answer: Any = None, error: KubeError | None = None, discovery: dict[str, Any] | None = None
    ) -> None:
        self.answer = answer if answer is not None else {"status": {"allowed": True}}
        self.error = error
        self.discovery = discovery or {}
        self.sent: list[tuple[str, str, Any]] = []

    def request(
        self,
        method: str,
        path: str,
        query: Any = None,
        body: Any = None,
        timeout: float | None = None,
        **_: Any,
    ) -> Any:
        self.sent.append((method, path, body))
        if method == "GET":
            if path not in self.discovery:
                raise NotFound(404, "NotFound", path)
            return self.discovery[path]
        if self.error is not None:
            raise self.error
        return self.answer


def test_the_review_carries_the_whole_user_and_the_attributes() -> None:
    client = FakeClient({"status": {"allowed": True}})
    assert KubeAccessReviewer(client).review(USER, CHECK).allowed  # type: ignore[arg-type]
    method, path, body = client.sent[0]
    assert (method, path) == ("POST", SAR_PATH)
    assert body == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "alice",
            "uid": "u-1",
            "groups": ["dev", "system:authenticated"],
            "extra": {"scopes": ["a", "b"]},
            "resourceAttributes": {
                "verb": "update",
                "group": "apps",
                "resource": "deployments",
                "namespace": "team-a",
                "name": "web",
            },
        },
    }


@pytest.mark.parametrize(
    ("status", "allowed", "reason"),
    [
        ({"allowed": False, "reason": "no RBAC policy matched"}, False, "no RBAC policy matched"),
        ({"allowed": False, "denied": True}, False, ""),
        (
            {"allowed": False, "evaluationError": 'clusterrole "x" not found'},
            False,
            'clusterrole "x" not found',
        ),
        ({"allowed": True, "reason": "RBAC: allowed by RoleBinding"}, True, "RBAC: allowed by RoleBinding"),
    ],
)
def test_answers_are_read(status: dict[str, Any], allowed: bool, reason: str) -> None:
    answer = read_answer({"status": status})
    assert (answer.allowed, answer.reason) == (allowed, reason)


@pytest.mark.parametrize("body", [{}, {"status": {}}, {"status": {"allowed": "true"}}, [], {"status": 5}])
def test_an_answer_without_a_verdict_is_a_failure(body: Any) -> None:
    with pytest.raises(AccessReviewFailed, match=r"status\.allowed"):
        read_answer(body)


def test_an_api_error_is_a_failure_not_a_verdict() -> None:
    client = FakeClient(error=KubeError(403, "Forbidden", "cannot create subjectaccessreviews"))
    with pytest.raises(AccessReviewFailed, match="cannot create subjectaccessreviews"):
        KubeAccessReviewer(client).review(USER, CHECK)  # type: ignore[arg-type]


def test_a_custom_kinds_resource_comes_from_discovery_once() -> None:
    discovery = {
        "/apis/game.kruise.io": {
            "versions": [{"version": "v1alpha1"}],
            "preferredVersion": {"version": "v1alpha1"},
        },
        "/apis/game.kruise.io/v1alpha1": {
            "resources": [{"name": "gameserversets", "kind": "GameServerSet", "namespaced": True}]
        },
    }
    client = FakeClient(discovery=discovery)
    reviewer = KubeAccessReviewer(client)  # type: ignore[arg-type]
    custom = ResourceCheck("update", "game.kruise.io", "GameServerSet", "", "ns", "gss")
    reviewer.review(USER, custom)
    reviewer.review(USER, custom)
    posts = [body for method, _, body in client.sent if method == "POST"]
    assert [p["spec"]["resourceAttributes"]["resource"] for p in posts] == ["gameserversets"] * 2
    assert sum(1 for method, _, _ in client.sent if method == "GET") == 2


def test_an_unserved_custom_kind_is_a_failure() -> None:
    with pytest.raises(AccessReviewFailed, match="serves no resource"):
        KubeAccessReviewer(FakeClient()).review(  # type: ignore[arg-type]
            USER, ResourceCheck("update", "x.example.com", "Thing", "", "ns", "t")
        )
