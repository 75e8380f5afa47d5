"""The author gate (py_engine/validation/authorization.py) over a fake reviewer and a fake clock:
answers cached by the whole user and the attributes for the TTL, bounded, failures denied
and not cached, `system:masters` not asked."""

from __future__ import annotations

import pytest
from access_review_kit import RecordingReviewer
from clock_kit import ManualClock

from py_engine.validation.authorization import AuthorGate
from py_engine.validation.authorship import ResourceCheck, UserInfo

UPDATE_WEB = ResourceCheck("update", "apps", "Deployment", "deployments", "ns", "web")
CREATE = ResourceCheck("create", "apps", "Deployment", "deployments", "ns")
ALICE = UserInfo("alice", "1", ("dev",))


class FakeReviewer(RecordingReviewer):
    """Allows the (user name, verb, resource) triples in `allowed`."""

    def __init__(self, allowed: set[tuple[str, str, str]] | None = None, fail: bool = False) -> None:
        super().__init__(fail)
        self.allowed = allowed or set()

    def allows(self, user: UserInfo, check: ResourceCheck) -> bool:
        return (user.username, check.verb, check.resource) in self.allowed


def test_allowed_and_denied_with_the_missing_verb_and_resource() -> None:
    reviewer = FakeReviewer({("alice", "update", "deployments")})
    gate = AuthorGate(reviewer, ManualClock())
    assert gate.refusal(ALICE, [UPDATE_WEB]) is None
    refusal = gate.refusal(UserInfo("bob"), [UPDATE_WEB])
    assert refusal is not None and refusal.code == 403 and refusal.reason == "Forbidden"
    assert 'user "bob" may not update deployments.apps "web" in namespace "ns"' in refusal.message


def test_the_first_missing_right_is_named() -> None:
    gate = AuthorGate(FakeReviewer({("alice", "update", "deployments")}), ManualClock())
    refusal = gate.refusal(ALICE, [UPDATE_WEB, CREATE])
    assert refusal is not None and "may not create deployments.apps in" in refusal.message


def test_answers_are_cached_for_the_ttl_by_the_whole_user() -> None:
    reviewer, clock = FakeReviewer({("alice", "update", "deployments")}), ManualClock()
    gate = AuthorGate(reviewer, clock, ttl=10)
    for _ in range(5):
        assert gate.refusal(ALICE, [UPDATE_WEB]) is None
    assert len(reviewer.asked) == 1
    gate.refusal(UserInfo("alice", "1", ("dev", "admins")), [UPDATE_WEB])  # other groups: another question
    gate.refusal(UserInfo("alice", "1", ("dev",), (("scopes", ("x",)),)), [UPDATE_WEB])  # other extra
    gate.refusal(ALICE, [ResourceCheck("update", "apps", "Deployment", "deployments", "ns", "api")])
    assert len(reviewer.asked) == 4
    clock.now += 9.9
    gate.refusal(ALICE, [UPDATE_WEB])
    assert len(reviewer.asked) == 4
    clock.now += 0.2
    gate.refusal(ALICE, [UPDATE_WEB])
    assert len(reviewer.asked) == 5, "a revoked grant stops working once the TTL is over"


def test_denials_are_cached_too_and_the_cache_is_bounded() -> None:
    reviewer = FakeReviewer()
    gate = AuthorGate(reviewer, ManualClock(), max_entries=3)
    for i in range(10):
        assert gate.refusal(UserInfo(f"u{i}"), [UPDATE_WEB]) is not None
    assert len(gate._cache) == 3
    gate.refusal(UserInfo("u9"), [UPDATE_WEB])
    assert len(reviewer.asked) == 10
    gate.refusal(UserInfo("u0"), [UPDATE_WEB])
    assert len(reviewer.asked) == 11


def test_a_failed_review_denies_and_is_not_cached() -> None:
    reviewer = FakeReviewer(fail=True)
    gate = AuthorGate(reviewer, ManualClock())
    for _ in range(2):
        refusal = gate.refusal(ALICE, [UPDATE_WEB])
        assert refusal is not None and refusal.code == 500
        assert 'could not check whether user "alice" may update deployments.apps' in refusal.message
        assert "connection refused" in refusal.message
    assert len(reviewer.asked) == 2


def test_system_masters_is_not_asked() -> None:
    reviewer = FakeReviewer()
    assert (
        AuthorGate(reviewer, ManualClock()).refusal(
            UserInfo("root", groups=("system:masters",)), [UPDATE_WEB]
        )
        is None
    )
    assert reviewer.asked == []


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        AuthorGate(FakeReviewer(), ManualClock(), ttl=-1)
