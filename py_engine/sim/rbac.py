"""RBAC evaluation: may this user do this request, given these Roles, ClusterRoles and bindings?

A pure function of a `Policy` snapshot (the stored `rbac.authorization.k8s.io/v1` objects)
and `RequestAttributes` (py_engine/sim/request_info.py), with the semantics of
kube-apiserver's RBAC authorizer so tests on the embedded cluster catch the RBAC mistakes
a real cluster would:

- a rule matches when its verbs, API groups, resources and resource names (or, for a
  request that is not for a resource, its non-resource URLs) all match; `*` matches any
  verb, group, resource or URL; `*/scale` matches the `scale` subresource of any resource;
  `pods` does not match `pods/status`; a URL rule ending in `*` matches by prefix; empty
  `resourceNames` matches any name (and unnamed requests such as list and create only
  match rules without names);
- ClusterRoleBindings apply everywhere, RoleBindings only to requests in their namespace
  (a RoleBinding to a ClusterRole grants its rules in that namespace alone); requests
  that are not for a resource are only granted through ClusterRoleBindings;
- subjects: `User` by name, `Group` by any of the user's groups, `ServiceAccount` by the
  user name `system:serviceaccount:<ns>:<name>` (the binding's namespace when the subject
  names none);
- a ClusterRole with an `aggregationRule` has the rules of every other ClusterRole whose
  labels match one of its selectors, transitively (what the aggregation controller would
  have written into it), not the rules stored in it;
- the group `system:masters` is allowed everything before RBAC is consulted;
- a binding whose role does not exist grants nothing, and the denial reason names it
  (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`), as kube-apiserver does.

Nothing is ever denied explicitly: RBAC only adds permissions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from py_engine.semantics.labels import SelectorError, selector_from_label_selector
from py_engine.sim.identity import MASTERS, UserInfo, service_account_username
from py_engine.sim.interface import JSON
from py_engine.sim.request_info import RequestAttributes

RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Decision:
    """The answer; `reason` says which binding allowed it, or what broke (missing roles)."""

    allowed: bool
    reason: str = ""


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name") or "")


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("namespace") or "")


# ------------------------------------------------------------------ one rule

def resource_matches(rule_resources: Sequence[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for granted in rule_resources:
        if granted in ("*", combined):
            return True
        if subresource and granted == f"*/{subresource}":
            return True
    return False


def non_resource_url_matches(rule_urls: Sequence[str], path: str) -> bool:
    for granted in rule_urls:
        if granted in ("*", path):
            return True
        if granted.endswith("*") and path.startswith(granted.rstrip("*")):
            return True
    return False


def rule_allows(rule: Mapping[str, Any], attrs: RequestAttributes) -> bool:
    """Whether one PolicyRule grants the request."""
    verbs = _strings(rule.get("verbs"))
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if not attrs.resource_request:
        return non_resource_url_matches(_strings(rule.get("nonResourceURLs")), attrs.path)
    groups = _strings(rule.get("apiGroups"))
    if "*" not in groups and attrs.api_group not in groups:
        return False
    if not resource_matches(_strings(rule.get("resources")), attrs.resource, attrs.subresource):
        return False
    names = _strings(rule.get("resourceNames"))
    return not names or attrs.name in names


# ------------------------------------------------------------- aggregation

def _selected_by(role: Mapping[str, Any], selectors: Iterable[Any]) -> bool:
    labels = _meta(role).get("labels")
    labels = labels if isinstance(labels, Mapping) else {}
    for sel in selectors:
        if not isinstance(sel, Mapping):
            continue
        try:
            compiled = selector_from_label_selector(dict(sel))
        except SelectorError:
            continue
        if not compiled.empty() and compiled.matches(labels):
            return True
    return False


def aggregated_rules(cluster_roles: Iterable[Mapping[str, Any]]) -> dict[str, list[JSON]]:
    """Each ClusterRole's effective rules by name; aggregated roles get the union of the
    rules of the roles their selectors pick (sorted by name, duplicates dropped), followed
    transitively and never through a cycle."""
    by_name = {_name(r): r for r in cluster_roles if _name(r)}
    done: dict[str, list[JSON]] = {}

    def resolve(name: str, visiting: frozenset[str]) -> list[JSON]:
        if name in done:
            return done[name]
        role = by_name[name]
        agg = role.get("aggregationRule")
        if not isinstance(agg, Mapping):
            rules = [dict(r) for r in role.get("rules") or [] if isinstance(r, Mapping)]
        else:
            selectors = agg.get("clusterRoleSelectors")
            selectors = selectors if isinstance(selectors, list) else []
            rules = []
            for other in sorted(by_name):
                if other == name or other in visiting or not _selected_by(by_name[other], selectors):
                    continue
                for rule in resolve(other, visiting | {name}):
                    if rule not in rules:
                        rules.append(rule)
        if not visiting:
            done[name] = rules
        return rules

    return {name: resolve(name, frozenset()) for name in sorted(by_name)}


# ------------------------------------------------------------------ policy

def subject_applies(subject: Any, user: UserInfo, binding_namespace: str) -> bool:
    if not isinstance(subject, Mapping):
        return False
    kind, name = subject.get("kind"), str(subject.get("name") or "")
    if kind == "User":
        return name == user.username
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = str(subject.get("namespace") or binding_namespace)
        return bool(namespace and name) and user.username == service_account_username(namespace, name)
    return False


@dataclass(frozen=True)
class _Grant:
    source: str
    rules: list[JSON]


@dataclass
class Policy:
    """A snapshot of the stored RBAC objects, evaluated without further reads."""

    roles: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    cluster_rules: Mapping[str, list[JSON]] = field(default_factory=dict)
    role_bindings: Mapping[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    cluster_role_bindings: list[Mapping[str, Any]] = field(default_factory=list)

    @classmethod
    def from_objects(cls, roles: Iterable[Mapping[str, Any]], cluster_roles: Iterable[Mapping[str, Any]],
                     role_bindings: Iterable[Mapping[str, Any]],
                     cluster_role_bindings: Iterable[Mapping[str, Any]]) -> Policy:
        by_ns: dict[str, list[Mapping[str, Any]]] = {}
        for rb in sorted(role_bindings, key=_name):
            by_ns.setdefault(_namespace(rb), []).append(rb)
        return cls({(_namespace(r), _name(r)): r for r in roles}, aggregated_rules(cluster_roles), by_ns,
                   sorted(cluster_role_bindings, key=_name))

    def _role_rules(self, ref: Any, namespace: str) -> tuple[list[JSON] | None, str]:
        """(rules, error): the rules a binding's roleRef points at."""
        if not isinstance(ref, Mapping):
            return None, "roleRef is missing"
        kind, name = ref.get("kind"), str(ref.get("name") or "")
        if kind == "ClusterRole":
            rules = self.cluster_rules.get(name)
            return (rules, "") if rules is not None else (None, f'clusterrole.{RBAC_GROUP} "{name}" not found')
        if kind == "Role" and namespace:
            role = self.roles.get((namespace, name))
            if role is None:
                return None, f'role.{RBAC_GROUP} "{name}" not found'
            return [dict(r) for r in role.get("rules") or [] if isinstance(r, Mapping)], ""
        return None, f"unsupported roleRef kind {kind!r}"

    def _grants(self, user: UserInfo, namespace: str) -> tuple[list[_Grant], list[str]]:
        """Every (source, rules) that applies to `user` in `namespace` ("" = cluster scope),
        ClusterRoleBindings first, and the errors met on the way."""
        grants: list[_Grant] = []
        errs: list[str] = []
        bindings: list[tuple[str, Mapping[str, Any]]] = [("ClusterRoleBinding", b) for b in self.cluster_role_bindings]
        if namespace:
            bindings += [("RoleBinding", b) for b in self.role_bindings.get(namespace, [])]
        for kind, binding in bindings:
            binding_ns = _namespace(binding) if kind == "RoleBinding" else ""
            subjects = binding.get("subjects")
            subject = next((s for s in subjects if subject_applies(s, user, binding_ns)), None) \
                if isinstance(subjects, list) else None
            if subject is None:
                continue
            rules, err = self._role_rules(binding.get("roleRef"), binding_ns)
            if rules is None:
                errs.append(err)
                continue
            label = _name(binding) + (f"/{binding_ns}" if binding_ns else "")
            ref = binding.get("roleRef") or {}
            grants.append(_Grant(f'{kind} "{label}" of {ref.get("kind")} "{ref.get("name")}" to '
                                 f'{_describe(subject, binding_ns)}', rules))
        return grants, errs

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        if MASTERS in user.groups:
            return Decision(True, "")
        namespace = attrs.namespace if attrs.resource_request else ""
        grants, errs = self._grants(user, namespace)
        for grant in grants:
            if any(rule_allows(rule, attrs) for rule in grant.rules):
                return Decision(True, f"RBAC: allowed by {grant.source}")
        return Decision(False, f"RBAC: {_aggregate(errs)}" if errs else "")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], list[str]]:
        """(resourceRules, nonResourceRules, errors) as a SelfSubjectRulesReview lists them."""
        grants, errs = self._grants(user, namespace)
        resource_rules: list[JSON] = []
        url_rules: list[JSON] = []
        for grant in grants:
            for rule in grant.rules:
                verbs = list(_strings(rule.get("verbs")))
                if _strings(rule.get("resources")):
                    entry: JSON = {"verbs": verbs, "apiGroups": list(_strings(rule.get("apiGroups"))),
                                   "resources": list(_strings(rule.get("resources")))}
                    if _strings(rule.get("resourceNames")):
                        entry["resourceNames"] = list(_strings(rule.get("resourceNames")))
                    resource_rules.append(entry)
                if _strings(rule.get("nonResourceURLs")):
                    url_rules.append({"verbs": verbs, "nonResourceURLs": list(_strings(rule.get("nonResourceURLs")))})
        return resource_rules, url_rules, errs


def _describe(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def _aggregate(errs: list[str]) -> str:
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
