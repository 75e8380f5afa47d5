"""Validation of Roles, ClusterRoles and their bindings: the 422s kube-apiserver gives.

A rule the authorizer could not read the way its author meant is refused when it is
written, not silently ignored when a request comes: rules need verbs; a rule grants
either resources (with API groups) or non-resource URLs, never both, and a namespaced
Role cannot grant URLs; a binding's `roleRef` names a `Role` or `ClusterRole` (a
ClusterRoleBinding only a ClusterRole) in `rbac.authorization.k8s.io` and cannot change
once written; subjects are `User`, `Group` or `ServiceAccount`, and a ServiceAccount in a
ClusterRoleBinding needs its namespace.

Escalation prevention (a user may only grant what they hold) is py_engine/sim/rbac_escalation.py.
"""

from __future__ import annotations

from typing import Any

from py_engine.sim.interface import JSON

Cause = tuple[str, str, str]
RBAC_GROUP = "rbac.authorization.k8s.io"
_SUBJECT_KINDS = ("User", "Group", "ServiceAccount")


def _rule_causes(rule: Any, path: str, namespaced: bool) -> list[Cause]:
    if not isinstance(rule, dict):
        return [(path, "FieldValueInvalid", "Invalid value: must be an object")]
    causes: list[Cause] = []
    for key in ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"):
        value = rule.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            causes.append((f"{path}.{key}", "FieldValueInvalid", "Invalid value: must be a list of strings"))
    if causes:
        return causes
    if not rule.get("verbs"):
        causes.append(
            (f"{path}.verbs", "FieldValueRequired", "Required value: verbs must contain at least one value")
        )
    urls, resources = rule.get("nonResourceURLs"), rule.get("resources")
    if urls:
        if namespaced:
            causes.append(
                (
                    f"{path}.nonResourceURLs",
                    "FieldValueInvalid",
                    f"Invalid value: {urls!r}: namespaced rules cannot apply to non-resource URLs",
                )
            )
        if resources or rule.get("apiGroups"):
            causes.append(
                (
                    f"{path}.nonResourceURLs",
                    "FieldValueInvalid",
                    f"Invalid value: {urls!r}: rules cannot apply to both regular resources and "
                    "non-resource URLs",
                )
            )
    elif not resources:
        causes.append(
            (
                f"{path}.resources",
                "FieldValueRequired",
                "Required value: resource rules must supply at least one resource",
            )
        )
    elif not rule.get("apiGroups"):
        causes.append(
            (
                f"{path}.apiGroups",
                "FieldValueRequired",
                "Required value: resource rules must supply at least one api group",
            )
        )
    return causes


def _role_causes(obj: JSON, namespaced: bool) -> list[Cause]:
    rules = obj.get("rules")
    if rules is None:
        return []
    if not isinstance(rules, list):
        return [("rules", "FieldValueInvalid", "Invalid value: must be a list")]
    out: list[Cause] = []
    for i, rule in enumerate(rules):
        out += _rule_causes(rule, f"rules[{i}]", namespaced)
    return out


def _binding_causes(obj: JSON, old: JSON | None, cluster: bool) -> list[Cause]:
    ref = obj.get("roleRef")
    if not isinstance(ref, dict):
        return [("roleRef", "FieldValueRequired", "Required value")]
    causes: list[Cause] = []
    kinds = ("ClusterRole",) if cluster else ("Role", "ClusterRole")
    if ref.get("kind") not in kinds:
        causes.append(
            (
                "roleRef.kind",
                "FieldValueNotSupported",
                f"Unsupported value: {ref.get('kind')!r}: supported values: "
                + ", ".join(f'"{k}"' for k in kinds),
            )
        )
    if ref.get("apiGroup") != RBAC_GROUP:
        causes.append(
            (
                "roleRef.apiGroup",
                "FieldValueNotSupported",
                f'Unsupported value: {ref.get("apiGroup")!r}: supported values: "{RBAC_GROUP}"',
            )
        )
    if not isinstance(ref.get("name"), str) or not ref.get("name"):
        causes.append(("roleRef.name", "FieldValueRequired", "Required value"))
    subjects = obj.get("subjects") or []
    if not isinstance(subjects, list):
        return [*causes, ("subjects", "FieldValueInvalid", "Invalid value: must be a list")]
    for i, subject in enumerate(subjects):
        path = f"subjects[{i}]"
        if not isinstance(subject, dict):
            causes.append((path, "FieldValueInvalid", "Invalid value: must be an object"))
            continue
        if subject.get("kind") not in _SUBJECT_KINDS:
            causes.append(
                (
                    f"{path}.kind",
                    "FieldValueNotSupported",
                    f"Unsupported value: {subject.get('kind')!r}: supported values: "
                    '"ServiceAccount", "User", "Group"',
                )
            )
        if not isinstance(subject.get("name"), str) or not subject.get("name"):
            causes.append((f"{path}.name", "FieldValueRequired", "Required value"))
        if cluster and subject.get("kind") == "ServiceAccount" and not subject.get("namespace"):
            causes.append((f"{path}.namespace", "FieldValueRequired", "Required value"))
    if old is not None and old.get("roleRef") != ref:
        causes.append(("roleRef", "FieldValueInvalid", f"Invalid value: {ref!r}: cannot change roleRef"))
    return causes


def rbac_causes(kind: str, obj: JSON, old: JSON | None) -> list[Cause]:
    """Causes for a 422 on an RBAC object, empty when it is acceptable (or not an RBAC kind)."""
    if kind in ("Role", "ClusterRole"):
        return _role_causes(obj, kind == "Role")
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        return _binding_causes(obj, old, kind == "ClusterRoleBinding")
    return []
