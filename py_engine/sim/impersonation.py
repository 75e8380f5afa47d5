"""Impersonation as kube-apiserver does it: `kubectl --as USER --as-group G --as-uid U`.

The headers `Impersonate-User`, `Impersonate-Group` (repeatable), `Impersonate-Uid` and
`Impersonate-Extra-<key>` (repeatable; the key lower-cased and percent-decoded) ask to
act as someone else. Each one is authorized separately, with the verb `impersonate` on
`users`, `groups` (API group ""), `uids` or `userextras/<key>` (API group
`authentication.k8s.io`), named by the value asked for; a user name of the form
`system:serviceaccount:<ns>:<name>` is checked as `impersonate` on that
`serviceaccounts` object in its namespace instead, and, when no group is asked for,
gets the ServiceAccount's groups. The first refusal is kube-apiserver's 403:
`users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group
"" at the cluster scope`. The resulting identity also gets `system:authenticated`.

Groups, extras or a uid without a user are refused with the words kube-apiserver uses
(`requested [...] without impersonating a user`), as a 400 rather than its 500: the
request is malformed, the server is fine.

Pure apart from the `authorize` callback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import unquote

from py_engine.sim import errors
from py_engine.sim.authorizer import forbidden
from py_engine.sim.identity import (
    UserInfo,
    service_account_groups,
    split_service_account,
    with_implicit_group,
)
from py_engine.sim.interface import ApiError
from py_engine.sim.rbac import Decision
from py_engine.sim.request_info import RequestAttributes

USER = "impersonate-user"
GROUP = "impersonate-group"
UID = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"

AuthorizeFn = Callable[[UserInfo, RequestAttributes], Decision]


def _attrs(
    resource: str, name: str, *, group: str = "", namespace: str = "", subresource: str = ""
) -> RequestAttributes:
    return RequestAttributes.on_resource(
        "impersonate", group, resource, name=name, namespace=namespace, subresource=subresource
    )


def requested(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether any header asks for impersonation."""
    return any(k.lower() in (USER, GROUP, UID) or k.lower().startswith(EXTRA_PREFIX) for k, _ in headers)


def impersonate(requester: UserInfo, headers: Iterable[tuple[str, str]], authorize: AuthorizeFn) -> UserInfo:
    """The identity the request acts as: `requester` itself when nothing is asked for."""
    user: str | None = None
    uid: str | None = None
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for key, value in headers:
        k = key.lower()
        if k == USER:
            user = value or None  # an empty header asks for nothing, as in kube-apiserver
        elif k == GROUP:
            groups.append(value)
        elif k == UID:
            uid = value
        elif k.startswith(EXTRA_PREFIX):
            extra.setdefault(unquote(k[len(EXTRA_PREFIX) :]), []).append(value)
    if user is None:
        if groups or extra or uid is not None:
            asked = [f"Group {g}" for g in groups] + [
                f"UserExtra {k}={v}" for k, vs in extra.items() for v in vs
            ]
            asked += [f"UID {uid}"] if uid is not None else []
            raise errors.bad_request(f"requested [{', '.join(asked)}] without impersonating a user")
        return requester
    checks: list[RequestAttributes] = []
    service_account = split_service_account(user)
    if service_account is not None:
        checks.append(_attrs("serviceaccounts", service_account[1], namespace=service_account[0]))
    else:
        checks.append(_attrs("users", user))
    checks += [_attrs("groups", g) for g in groups]
    checks += [
        _attrs("userextras", v, group=AUTHENTICATION_GROUP, subresource=k)
        for k, vs in extra.items()
        for v in vs
    ]
    if uid is not None:
        checks.append(_attrs("uids", uid, group=AUTHENTICATION_GROUP))
    for attrs in checks:
        decision = authorize(requester, attrs)
        if not decision.allowed:
            raise _refused(requester, attrs, decision.reason)
    if service_account is not None and not groups:
        groups = list(service_account_groups(service_account[0]))
    return with_implicit_group(
        UserInfo(user, tuple(groups), uid or "", {k: tuple(v) for k, v in extra.items()})
    )


def _refused(requester: UserInfo, attrs: RequestAttributes, reason: str) -> ApiError:
    return forbidden(requester, attrs, reason)
