"""The embedded cluster's authorizer: RBAC over the stored objects, and kube-apiserver's 403s.

`Authorizer.authorize(user, attrs)` evaluates `rbac.Policy` (pure) over a snapshot of the
stored Roles, ClusterRoles and bindings, rebuilt only after one of them was written, so
requests between RBAC writes read nothing; `system:masters` is allowed without it. `mode="AlwaysAllow"` turns
authorization off (kube-apiserver's `--authorization-mode=AlwaysAllow`), for a benchmark
that wants to measure the emulator without it; the default is `RBAC`.

`forbidden(user, attrs, reason)` is the 403 Status kube-apiserver answers, word for word:
`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the
namespace "default"`, or `... cannot get path "/apis"` for a request that is not for a
resource, with reason `Forbidden` and details naming the group, resource and object.
"""

from __future__ import annotations

import threading
from typing import Any

from py_engine.sim import errors, rbac_escalation
from py_engine.sim.identity import MASTERS, UserInfo
from py_engine.sim.interface import JSON, ApiError
from py_engine.sim.rbac import RBAC_GROUP, Decision, Policy
from py_engine.sim.request_info import RequestAttributes
from py_engine.sim.store import Store

MODES = ("RBAC", "AlwaysAllow")
RBAC_RESOURCES = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")
_STORED = tuple(f"{r}.rbac.authorization.k8s.io" for r in RBAC_RESOURCES)


class Authorizer:
    """RBAC decisions over `store` (see the module docstring). Thread-safe."""

    def __init__(self, store: Store, mode: str = "RBAC") -> None:
        if mode not in MODES:
            raise ValueError(f"authorization mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self._store = store
        self._lock = threading.Lock()
        self._snapshot: tuple[int, Policy] | None = None

    def policy(self) -> Policy:
        """The RBAC objects as of their latest write."""
        rv = self._store.changed_at(_STORED)
        with self._lock:
            if self._snapshot is not None and self._snapshot[0] == rv:
                return self._snapshot[1]
        lists = [self._store.list(r)[0] for r in _STORED]
        policy = Policy.from_objects(*lists)
        with self._lock:
            self._snapshot = (rv, policy)
        return policy

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        if self.mode == "AlwaysAllow" or MASTERS in user.groups:  # no snapshot needed for either
            return Decision(True, "")
        return self.policy().authorize(user, attrs)

    def check(self, user: UserInfo, attrs: RequestAttributes) -> None:
        """Raise kube-apiserver's 403 unless `user` may make the request."""
        decision = self.authorize(user, attrs)
        if not decision.allowed:
            raise forbidden(user, attrs, decision.reason)

    def confirm_no_escalation(self, user: UserInfo, kind: str, obj: JSON, namespace: str) -> None:
        """Refuse (403) to store a Role, ClusterRole or binding that grants what `user` does not
        hold, unless they may `escalate` the role / `bind` the role it names
        (py_engine/sim/rbac_escalation.py); 404 for a binding to a role that does not exist."""
        if (
            kind not in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
            or self.mode == "AlwaysAllow"
        ):
            return
        if rbac_escalation.is_superuser(user):
            return
        meta = obj.get("metadata")
        name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
        resource = kind.lower() + "s"
        policy = self.policy()
        granted: list[Any]
        if kind in ("Role", "ClusterRole"):
            escalate = RequestAttributes.on_resource(
                "escalate", RBAC_GROUP, resource, name=name, namespace=namespace
            )
            if policy.authorize(user, escalate).allowed:
                return
            if kind == "ClusterRole" and obj.get("aggregationRule"):
                raise errors.forbidden(
                    RBAC_GROUP,
                    resource,
                    name,
                    "must have cluster-admin privileges to use the aggregationRule",
                )
            rules_field = obj.get("rules")
            granted = rules_field if isinstance(rules_field, list) else []
        else:
            ref_field = obj.get("roleRef")
            ref: dict[str, Any] = ref_field if isinstance(ref_field, dict) else {}
            ref_kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            bind = RequestAttributes.on_resource(  # where the binding is: delegation per namespace
                "bind", RBAC_GROUP, ref_kind.lower() + "s", name=ref_name, namespace=namespace
            )
            if policy.authorize(user, bind).allowed:
                return
            rules, _ = policy.role_rules(ref, namespace)
            if rules is None:
                raise errors.not_found(RBAC_GROUP, ref_kind.lower() + "s", ref_name)
            granted = rules
        held, errs = policy.held_rules(user, namespace)
        missing = rbac_escalation.not_held(held, granted)
        if missing:
            raise rbac_escalation.escalation_refused(user, resource, name, missing, errs)


def forbidden_message(username: str, attrs: RequestAttributes) -> str:
    if not attrs.resource_request:
        return f'User "{username}" cannot {attrs.verb} path "{attrs.path}"'
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (
        f'User "{username}" cannot {attrs.verb} resource "{attrs.resource_with_subresource}" '
        f'in API group "{attrs.api_group}" {where}'
    )


def forbidden(user: UserInfo, attrs: RequestAttributes, reason: str = "") -> ApiError:
    why = forbidden_message(user.username, attrs)
    if reason:
        why = f"{why}: {reason}"
    if not attrs.resource_request or not attrs.resource:
        return ApiError(errors.status(403, "Forbidden", f"forbidden: {why}"))
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: JSON = {"name": attrs.name} if attrs.name else {}
    if attrs.api_group:
        details["group"] = attrs.api_group
    details["kind"] = attrs.resource
    return ApiError(errors.status(403, "Forbidden", f"{subject} is forbidden: {why}", details))
