"""A fake SubjectAccessReview port for the author gate's tests (tests/validation,
tests/webhook): records every question and answers with `allows`, or fails when `fail` is set."""

from __future__ import annotations

from py_engine.validation.authorization import AccessAnswer, AccessReviewFailed
from py_engine.validation.authorship import ResourceCheck, UserInfo


class RecordingReviewer:
    """Subclasses say which questions are allowed (`allows`) and may word the failure."""

    failure = "connection refused"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.asked: list[tuple[UserInfo, ResourceCheck]] = []

    def allows(self, user: UserInfo, check: ResourceCheck) -> bool:
        raise NotImplementedError

    def review(self, user: UserInfo, check: ResourceCheck) -> AccessAnswer:
        self.asked.append((user, check))
        if self.fail:
            raise AccessReviewFailed(self.failure)
        ok = self.allows(user, check)
        return AccessAnswer(ok, "" if ok else "no RBAC policy matched")
