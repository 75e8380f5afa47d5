"""The author's rights, checked at validation: a WorkloadSpread or UnitedDeployment never lends
its author powers they do not have (issue 24; which rights, py_engine/validation/authorship.py).

`AuthorGate` asks an `AccessReviewer` (the port: a SubjectAccessReview at the edge,
py_engine/workloadspread/admission/runtime/access_review.py; a fake in the tests) whether the review's user
may do each required thing, and turns the answers into a denial or nothing:

* answers are cached for `ttl` seconds (default `DEFAULT_TTL`, 10 s) in a bounded LRU
  (`max_entries`) keyed by the whole user (username, uid, groups, extra) and the attributes,
  so a burst of edits costs one review per distinct question, and a revoked grant stops
  working within the TTL. Failed reviews are not cached;
* a review that cannot be made (the API server unreachable, forbidden, an answer without a
  status) denies: fail closed, with a message saying the check could not be made. The
  webhook logs each denial once, with its cause (webhook/app.py);
* members of `system:masters` are not asked (see authorship.py).

The denial names the missing verb and resource (`denial_message`), with code 403 as the API
server's own authorization denials.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from py_engine.semantics.lru import put_recent
from py_engine.validation.authorship import ResourceCheck, UserInfo, denial_message

DEFAULT_TTL = 10.0
"""Seconds an answer is reused (docs/operations.md, "Tuning")."""
DEFAULT_MAX_ENTRIES = 4096


@dataclass(frozen=True)
class AccessAnswer:
    """A SubjectAccessReview's verdict: `allowed`, and the authorizer's reason when it gave one."""

    allowed: bool
    reason: str = ""


class AccessReviewFailed(Exception):
    """The question could not be asked or answered; the message says why (one line)."""


class AccessReviewer(Protocol):
    """The port: whether `user` may do `check` (raises AccessReviewFailed when it cannot tell)."""

    def review(self, user: UserInfo, check: ResourceCheck) -> AccessAnswer: ...


@dataclass(frozen=True)
class Refusal:
    """Why the author may not: `code` (403 denied, 500 the check failed) and the message."""

    code: int
    message: str
    reason: str


class AuthorGate:
    """See the module docstring. Thread-safe: the webhook calls it from many threads."""

    def __init__(
        self,
        reviewer: AccessReviewer,
        monotonic: Callable[[], float],
        *,
        ttl: float = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        if ttl < 0 or max_entries < 1:
            raise ValueError("ttl must be >= 0 and max_entries >= 1")
        self.reviewer = reviewer
        self.monotonic = monotonic
        self.ttl = ttl
        self.max_entries = max_entries
        self.reviews = 0
        self._cache: OrderedDict[Hashable, tuple[float, AccessAnswer]] = OrderedDict()
        self._lock = threading.Lock()

    def refusal(self, user: UserInfo, checks: Sequence[ResourceCheck]) -> Refusal | None:
        """None when `user` may do every check; else the first refusal, in order."""
        if user.privileged:
            return None
        for check in checks:
            try:
                answer = self._answer(user, check)
            except AccessReviewFailed as exc:
                return Refusal(
                    500,
                    f'could not check whether user "{user.username}" may {check.describe()}: '
                    f"{exc}; the change is refused until it can be checked",
                    "InternalError",
                )
            if not answer.allowed:
                return Refusal(403, denial_message(user, check, answer.reason), "Forbidden")
        return None

    def _answer(self, user: UserInfo, check: ResourceCheck) -> AccessAnswer:
        key: tuple[Any, ...] = (user, check)
        now = self.monotonic()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and now - cached[0] < self.ttl:
                self._cache.move_to_end(key)
                return cached[1]
        answer = self.reviewer.review(user, check)
        with self._lock:
            self.reviews += 1
            put_recent(self._cache, key, (now, answer), self.max_entries)
        return answer
