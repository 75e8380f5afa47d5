"""The authorization port at the edge: one SubjectAccessReview (authorization.k8s.io/v1) per question.

`KubeAccessReviewer` POSTs `/apis/authorization.k8s.io/v1/subjectaccessreviews` through the
webhook's API client (py_engine/apiclient, the official client underneath) with the
review's user (username, uid, groups, extra) and the resource attributes
(py_engine/validation/authorship.py), and reads `status.allowed` and `status.reason`. The
webhook's ServiceAccount needs `create` on `subjectaccessreviews`
(manifests/base/rbac-webhook.yaml). A custom workload kind's resource comes from discovery,
remembered per kind. Any failure (unreachable, 403, an answer without a boolean
`status.allowed`) raises `AccessReviewFailed`, which the gate turns into a denial
(py_engine/validation/authorization.py).
"""

from __future__ import annotations

import threading
from typing import Any

from py_engine.apiclient import KubeClient, KubeError
from py_engine.apiclient.discovery import discover_resource
from py_engine.validation.authorization import AccessAnswer, AccessReviewFailed
from py_engine.validation.authorship import ResourceCheck, UserInfo

SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
SAR_TIMEOUT = 3.0
"""Seconds for one review, well inside the webhook's 5 s `timeoutSeconds`."""


def access_review(user: UserInfo, check: ResourceCheck) -> dict[str, Any]:
    """The SubjectAccessReview asking whether `user` may do `check` (its resource resolved)."""
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {**user.spec(), "resourceAttributes": check.attributes()},
    }


def read_answer(body: Any) -> AccessAnswer:
    """The verdict of a SubjectAccessReview response; raises AccessReviewFailed without one."""
    status = body.get("status") if isinstance(body, dict) else None
    allowed = status.get("allowed") if isinstance(status, dict) else None
    if not isinstance(allowed, bool):
        raise AccessReviewFailed("the SubjectAccessReview answer has no status.allowed")
    assert isinstance(status, dict)
    reason = status.get("reason")
    error = status.get("evaluationError")
    # RBAC reports bindings to missing roles as an evaluationError beside its verdict: a denial stays
    # a denial (fail closed) and says so.
    because = "; ".join(text[:200] for text in (reason, error) if isinstance(text, str) and text)
    return AccessAnswer(allowed, because)


class KubeAccessReviewer:
    """`AccessReviewer` over the API server (see the module docstring). Thread-safe."""

    def __init__(self, client: KubeClient, *, timeout: float = SAR_TIMEOUT) -> None:
        self.client = client
        self.timeout = timeout
        self._resources: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def review(self, user: UserInfo, check: ResourceCheck) -> AccessAnswer:
        resolved = check if check.resource else check.resolved(self._resource(check.group, check.kind))
        try:
            body = self.client.request(
                "POST", SAR_PATH, body=access_review(user, resolved), timeout=self.timeout
            )
        except KubeError as exc:
            raise AccessReviewFailed(f"SubjectAccessReview failed: {exc}") from None
        return read_answer(body)

    def _resource(self, group: str, kind: str) -> str:
        with self._lock:
            known = self._resources.get((group, kind))
        if known is not None:
            return known
        try:
            found = discover_resource(self.client, group, kind, timeout=self.timeout)
        except KubeError as exc:
            raise AccessReviewFailed(f"cannot find the resource serving {kind}.{group}: {exc}") from None
        if found is None:
            raise AccessReviewFailed(f"the cluster serves no resource for {kind}.{group}")
        with self._lock:
            self._resources[(group, kind)] = found.plural
        return found.plural
