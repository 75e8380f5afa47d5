"""Which rights an author must hold to create or update a WorkloadSpread or UnitedDeployment.

Pure decisions for the webhook's authorization check (issue 24): a WorkloadSpread changes
every pod of its target workload at admission (node affinity, tolerations, the subset
patch), and a UnitedDeployment makes the controller write workloads with the controller's
own rights. Neither may lend its author powers the author does not have, so:

* creating or updating a WorkloadSpread needs `update` on its target workload (group and
  resource from the workload registry, py_engine/model/workloads.py; the spread's
  namespace; the target's name);
* creating or updating a UnitedDeployment needs `create` and `update` on the kind of its
  template (`statefulSetTemplate` -> `statefulsets.apps`, ...) in its namespace.

What the user may do is asked of the API server with a SubjectAccessReview for the
review's `userInfo` (username, uid, groups, extra), at the edge
(py_engine/workloadspread/admission/runtime/access_review.py); the cache and the fail-closed rule are in
py_engine/validation/authorization.py. Members of `system:masters` are not asked: the API
server's authorizer allows them everything without consulting RBAC, and a review would
say the same. docs/operations.md, "Threat model", describes the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from py_engine.model.ud_constants import TEMPLATE_KINDS
from py_engine.model.workloads import builtin
from py_engine.semantics.objects import JSON_OBJECT, api_group

PRIVILEGED_GROUP = "system:masters"
"""The group the API server's authorizer allows everything (kube-apiserver's privileged group)."""


class UserInfoError(ValueError):
    """A review's `userInfo` that does not say who asks; the message names the field."""


@dataclass(frozen=True)
class UserInfo:
    """Who sent a request, as the API server authenticated them (the review's `userInfo`).
    Hashable, so the whole of it can key a cache."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def privileged(self) -> bool:
        return PRIVILEGED_GROUP in self.groups

    def spec(self) -> dict[str, Any]:
        """The user fields of a SubjectAccessReview's `spec`."""
        spec: dict[str, Any] = {"user": self.username, "groups": list(self.groups)}
        if self.uid:
            spec["uid"] = self.uid
        if self.extra:
            spec["extra"] = {key: list(values) for key, values in self.extra}
        return spec


def read_user_info(raw: Any) -> UserInfo:
    """The review's `request.userInfo`; raises UserInfoError naming the field that is wrong.
    Kubernetes sends `username` (a string), optional `uid`, `groups` (strings) and `extra`
    (a map of string lists)."""
    if not isinstance(raw, JSON_OBJECT):
        raise UserInfoError("request.userInfo is required to check the author's rights and must be an object")
    username = raw.get("username")
    if not isinstance(username, str) or not username:
        raise UserInfoError("request.userInfo.username must be a non-empty string")
    uid = raw.get("uid")
    if uid is not None and not isinstance(uid, str):
        raise UserInfoError("request.userInfo.uid must be a string")
    groups = raw.get("groups")
    if groups is None:
        groups = []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise UserInfoError("request.userInfo.groups must be a list of strings")
    extra = raw.get("extra")
    if extra is None:
        extra = {}
    if not isinstance(extra, JSON_OBJECT) or not all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in extra.values()
    ):
        raise UserInfoError("request.userInfo.extra must be a map of string lists")
    return UserInfo(
        username, uid or "", tuple(groups), tuple(sorted((str(k), tuple(v)) for k, v in extra.items()))
    )


@dataclass(frozen=True)
class ResourceCheck:
    """One thing the author must be allowed to do: `verb` on `resource` of `group` (`kind`
    names it for custom kinds, whose resource the edge finds by discovery when `resource`
    is empty) in `namespace`, on the object `name` (empty: any object)."""

    verb: str
    group: str
    kind: str
    resource: str
    namespace: str
    name: str = ""

    def resolved(self, resource: str) -> ResourceCheck:
        return ResourceCheck(self.verb, self.group, self.kind, resource, self.namespace, self.name)

    def attributes(self) -> dict[str, str]:
        """A SubjectAccessReview's `spec.resourceAttributes`."""
        attributes = {
            "verb": self.verb,
            "group": self.group,
            "resource": self.resource,
            "namespace": self.namespace,
        }
        if self.name:
            attributes["name"] = self.name
        return attributes

    def describe(self) -> str:
        """`update deployments.apps "web" in namespace "team-a"`, as kubectl names a resource."""
        resource = self.resource or self.kind
        what = f"{resource}.{self.group}" if self.group else resource
        target = f' "{self.name}"' if self.name else ""
        return f'{self.verb} {what}{target} in namespace "{self.namespace}"'


def spread_checks(spread: Mapping[str, Any], namespace: str) -> tuple[ResourceCheck, ...]:
    """What the author of `spread` (in `namespace`) must be allowed: `update` on its target
    workload. Empty when the targetRef is unusable (validation refuses such a spread first)."""
    spec = spread.get("spec")
    ref = spec.get("targetRef") if isinstance(spec, JSON_OBJECT) else None
    if not isinstance(ref, JSON_OBJECT):
        return ()
    api_version, kind, name = ref.get("apiVersion"), ref.get("kind"), ref.get("name")
    if not (
        isinstance(api_version, str)
        and isinstance(kind, str)
        and isinstance(name, str)
        and api_version
        and kind
        and name
    ):
        return ()
    group = api_group(api_version)
    known = builtin(group, kind)
    return (ResourceCheck("update", group, kind, known.plural if known is not None else "", namespace, name),)


def uniteddeployment_checks(united: Mapping[str, Any], namespace: str) -> tuple[ResourceCheck, ...]:
    """What the author of `united` (in `namespace`) must be allowed: `create` and `update` on the
    kind of each template it holds (validation allows exactly one). Empty without a template."""
    spec = united.get("spec")
    template = spec.get("template") if isinstance(spec, JSON_OBJECT) else None
    if not isinstance(template, JSON_OBJECT):
        return ()
    checks: list[ResourceCheck] = []
    for key, api_version, kind in TEMPLATE_KINDS:
        if template.get(key) is None:
            continue
        group = api_group(api_version)
        known = builtin(group, kind)
        resource = known.plural if known is not None else ""
        checks.extend(ResourceCheck(verb, group, kind, resource, namespace) for verb in ("create", "update"))
    return tuple(checks)


def denial_message(user: UserInfo, check: ResourceCheck, reason: str = "") -> str:
    """The denial naming the missing verb and resource (and the authorizer's reason, if any)."""
    because = f" ({reason})" if reason else ""
    return (
        f'user "{user.username}" may not {check.describe()}{because}; creating or updating this object '
        'would let it act with those rights (docs/operations.md, "Threat model")'
    )
