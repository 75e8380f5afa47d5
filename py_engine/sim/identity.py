"""Who a request comes from: the user info kube-apiserver hands to authorization and admission.

Kubernetes names users and groups by convention rather than by object: a ServiceAccount
`ns/name` authenticates as `system:serviceaccount:ns:name` in the groups
`system:serviceaccounts` and `system:serviceaccounts:ns`; every authenticated user is in
`system:authenticated`; a request without credentials is `system:anonymous` in
`system:unauthenticated`; `system:masters` bypasses authorization. This module holds those
names and the conversions, so the authenticator, impersonation and RBAC agree on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from py_engine.sim.interface import JSON

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
MASTERS = "system:masters"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated (or impersonated) identity; `extra` values are lists as in Kubernetes."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json(self) -> JSON:
        """The `userInfo` of an AdmissionReview or a SubjectAccessReview's status view."""
        out: JSON = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


def service_account_username(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def split_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) when `username` is a ServiceAccount's user name, else None."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = username[len(SERVICE_ACCOUNT_PREFIX) :].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return (SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}")


def service_account_user(namespace: str, name: str) -> UserInfo:
    """The identity a ServiceAccount token authenticates as."""
    return UserInfo(
        service_account_username(namespace, name), (*service_account_groups(namespace), AUTHENTICATED)
    )


def with_implicit_group(user: UserInfo) -> UserInfo:
    """Add `system:authenticated` (or `system:unauthenticated` for the anonymous user) when
    missing, as kube-apiserver does after authenticating or impersonating."""
    implicit = UNAUTHENTICATED if user.username == ANONYMOUS else AUTHENTICATED
    if implicit in user.groups:
        return user
    return UserInfo(user.username, (*user.groups, implicit), user.uid, user.extra)


def user_from_json(data: Mapping[str, object]) -> UserInfo:
    """A `UserInfo` from a SubjectAccessReview spec or admission `userInfo` (lenient on types)."""
    groups = data.get("groups")
    extra = data.get("extra")
    return UserInfo(
        str(data.get("user") or data.get("username") or ""),
        tuple(str(g) for g in groups) if isinstance(groups, Sequence) and not isinstance(groups, str) else (),
        str(data.get("uid") or ""),
        {
            str(k): tuple(str(x) for x in v)
            for k, v in extra.items()
            if isinstance(v, Sequence) and not isinstance(v, str)
        }
        if isinstance(extra, Mapping)
        else {},
    )
