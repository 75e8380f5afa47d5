"""Impersonation (py_engine/sim/impersonation.py) with a stand-in authorizer.

What is checked, in which order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_engine.sim.identity import UserInfo
from py_engine.sim.impersonation import impersonate
from py_engine.sim.interface import ApiError
from py_engine.sim.rbac import Decision
from py_engine.sim.request_info import RequestAttributes

ALICE = UserInfo("alice", ("system:authenticated",))


class Recorder:
    def __init__(self, refuse: set[str] | None = None) -> None:
        self.asked: list[tuple[str, str, str, str, str]] = []
        self.refuse = refuse or set()

    def __call__(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        assert user == ALICE and attrs.verb == "impersonate" and attrs.resource_request
        self.asked.append(
            (attrs.api_group, attrs.resource_with_subresource, attrs.namespace, attrs.name, user.username)
        )
        return Decision(attrs.name not in self.refuse)


def test_nothing_asked_is_the_requester() -> None:
    check = Recorder()
    assert impersonate(ALICE, [("Accept", "application/json"), ("Impersonate-User", "")], check) is ALICE
    assert check.asked == []


def test_every_value_is_checked_in_kube_apiservers_order() -> None:
    check = Recorder()
    got = impersonate(
        ALICE,
        [
            ("Impersonate-Uid", "42"),
            ("Impersonate-Group", "devs"),
            ("impersonate-extra-Scopes%2Fkind", "read"),
            ("Impersonate-User", "bob"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-scopes%2Fkind", "write"),
        ],
        check,
    )
    assert check.asked == [
        ("", "users", "", "bob", "alice"),
        ("", "groups", "", "devs", "alice"),
        ("", "groups", "", "ops", "alice"),
        ("authentication.k8s.io", "userextras/scopes/kind", "", "read", "alice"),
        ("authentication.k8s.io", "userextras/scopes/kind", "", "write", "alice"),
        ("authentication.k8s.io", "uids", "", "42", "alice"),
    ]
    assert got == UserInfo(
        "bob", ("devs", "ops", "system:authenticated"), "42", {"scopes/kind": ("read", "write")}
    )


def test_service_accounts_are_checked_in_their_namespace_and_get_their_groups() -> None:
    check = Recorder()
    got = impersonate(ALICE, [("Impersonate-User", "system:serviceaccount:ns:builder")], check)
    assert check.asked == [("", "serviceaccounts", "ns", "builder", "alice")]
    assert got.groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")
    with_group = impersonate(
        ALICE,
        [("Impersonate-User", "system:serviceaccount:ns:builder"), ("Impersonate-Group", "devs")],
        Recorder(),
    )
    assert with_group.groups == ("devs", "system:authenticated")
    anonymous = impersonate(ALICE, [("Impersonate-User", "system:anonymous")], Recorder())
    assert anonymous.groups == ("system:unauthenticated",)


def test_the_first_refusal_stops_and_names_what_was_refused() -> None:
    check = Recorder(refuse={"system:masters"})
    with pytest.raises(ApiError) as refused:
        impersonate(
            ALICE,
            [
                ("Impersonate-User", "bob"),
                ("Impersonate-Group", "system:masters"),
                ("Impersonate-Group", "later"),
            ],
            check,
        )
    assert refused.value.code == 403
    assert refused.value.status["message"] == (
        'groups "system:masters" is forbidden: User "alice" cannot '
        'impersonate resource "groups" in API group "" at the cluster scope'
    )
    assert [a[3] for a in check.asked] == ["bob", "system:masters"]


def test_groups_without_a_user_are_a_bad_request() -> None:
    with pytest.raises(ApiError) as bad:
        impersonate(ALICE, [("Impersonate-Group", "devs"), ("Impersonate-Uid", "1")], Recorder())
    assert bad.value.code == 400
    assert bad.value.status["message"] == "requested [Group devs, UID 1] without impersonating a user"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "Impersonate-User",
                    "Impersonate-Group",
                    "Impersonate-Uid",
                    "Impersonate-Extra-",
                    "Impersonate-Extra-%zz",
                    "impersonate-user",
                    "X",
                ]
            ),
            st.text(max_size=12),
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_any_headers_give_an_identity_or_an_api_error(headers: list[tuple[str, str]], allow: bool) -> None:
    try:
        got = impersonate(ALICE, headers, lambda user, attrs: Decision(allow))
    except ApiError as exc:
        assert exc.code in (400, 403)
    else:
        assert got is ALICE or "system:authenticated" in got.groups or got.username == "system:anonymous"
