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
  names none); the allow reason names the binding's first subject that applies;
- a ClusterRole with an `aggregationRule` has the rules of every other ClusterRole whose
  labels match one of its selectors, transitively (what the aggregation controller converges
  to), not the rules stored in it;
- the group `system:masters` is allowed everything before RBAC is consulted;
- a binding whose role does not exist grants nothing, and the denial reason names it
  (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`), as kube-apiserver does.

Nothing is ever denied explicitly: RBAC only adds permissions.
"""

from __future__ import annotations

import json
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


@dataclass(frozen=True)
class CompiledRule:
    """A PolicyRule read once (malformed fields read as empty), matched many times."""

    verbs: frozenset[str]
    groups: frozenset[str]
    resources: tuple[str, ...]
    names: frozenset[str]
    urls: tuple[str, ...]

    @classmethod
    def from_json(cls, rule: Mapping[str, Any]) -> CompiledRule:
        return cls(
            frozenset(_strings(rule.get("verbs"))),
            frozenset(_strings(rule.get("apiGroups"))),
            _strings(rule.get("resources")),
            frozenset(_strings(rule.get("resourceNames"))),
            _strings(rule.get("nonResourceURLs")),
        )

    def allows(self, attrs: RequestAttributes) -> bool:
        if "*" not in self.verbs and attrs.verb not in self.verbs:
            return False
        if not attrs.resource_request:
            return non_resource_url_matches(self.urls, attrs.path)
        if "*" not in self.groups and attrs.api_group not in self.groups:
            return False
        if not resource_matches(self.resources, attrs.resource, attrs.subresource):
            return False
        return not self.names or attrs.name in self.names


def rule_allows(rule: Mapping[str, Any], attrs: RequestAttributes) -> bool:
    """Whether one PolicyRule grants the request."""
    return CompiledRule.from_json(rule).allows(attrs)


# ------------------------------------------------------------- aggregation


def _selectors(agg: Mapping[str, Any]) -> list[Any]:
    """The aggregation rule's label selectors, compiled; malformed or empty ones select nothing."""
    out = []
    raw = agg.get("clusterRoleSelectors")
    for sel in raw if isinstance(raw, list) else ():
        if not isinstance(sel, Mapping):
            continue
        try:
            compiled = selector_from_label_selector(dict(sel))
        except SelectorError:
            continue
        if not compiled.empty():
            out.append(compiled)
    return out


def _rule_key(rule: Mapping[str, Any]) -> str:
    return json.dumps(rule, sort_keys=True, default=str)


def aggregated_rules(cluster_roles: Iterable[Mapping[str, Any]]) -> dict[str, list[JSON]]:
    """Each ClusterRole's effective rules by name. An aggregated role has the union of the
    rules of the other roles its selectors pick (in name order, duplicates dropped), computed
    as the aggregation controller converges: passes until nothing changes, at most one per
    aggregated role plus one, so chains (view -> edit -> admin) and cycles both settle in
    bounded time. The rules stored in an aggregated role are not used (the controller would
    overwrite them)."""
    by_name = {_name(r): r for r in cluster_roles if _name(r)}
    effective: dict[str, list[JSON]] = {}
    picks: dict[str, list[str]] = {}
    for name in sorted(by_name):
        role = by_name[name]
        agg = role.get("aggregationRule")
        if isinstance(agg, Mapping):
            selectors = _selectors(agg)
            picks[name] = [
                other
                for other in sorted(by_name)
                if other != name and any(sel.matches(_labels(by_name[other])) for sel in selectors)
            ]
            effective[name] = []
        else:
            rules = role.get("rules")
            effective[name] = (
                [dict(r) for r in rules if isinstance(r, Mapping)] if isinstance(rules, list) else []
            )
    for _ in range(len(picks) + 1):
        changed = False
        for name, others in picks.items():
            union: list[JSON] = []
            seen: set[str] = set()
            for other in others:
                for rule in effective[other]:
                    key = _rule_key(rule)
                    if key not in seen:
                        seen.add(key)
                        union.append(rule)
            if union != effective[name]:
                effective[name], changed = union, True
        if not changed:
            break
    return effective


def _labels(role: Mapping[str, Any]) -> Mapping[str, str]:
    labels = _meta(role).get("labels")
    return labels if isinstance(labels, Mapping) else {}


# ------------------------------------------------------------------ policy


@dataclass(frozen=True)
class _Binding:
    """One binding, read once when the snapshot is built."""

    order: int
    kind: str  # ClusterRoleBinding or RoleBinding
    name: str
    namespace: str  # "" for a ClusterRoleBinding
    role_ref: Any


@dataclass(frozen=True)
class _Grant:
    binding: _Binding
    subject: Mapping[str, Any]
    rules: list[JSON]
    compiled: tuple[CompiledRule, ...]

    @property
    def source(self) -> str:
        """How kube-apiserver names what allowed a request (formatted only when one is)."""
        b, ref = self.binding, self.binding.role_ref
        label = b.name + (f"/{b.namespace}" if b.namespace else "")
        subject = _describe(self.subject, b.namespace)
        return f'{b.kind} "{label}" of {ref.get("kind")} "{ref.get("name")}" to {subject}'


def _subject_key(subject: Any, binding_namespace: str) -> tuple[str, str] | None:
    """The index key a subject is found under: ("user", user name) or ("group", group)."""
    if not isinstance(subject, Mapping):
        return None
    kind, name = subject.get("kind"), str(subject.get("name") or "")
    if kind == "User":
        return "user", name
    if kind == "Group":
        return "group", name
    if kind == "ServiceAccount":
        namespace = str(subject.get("namespace") or binding_namespace)
        return ("user", service_account_username(namespace, name)) if namespace and name else None
    return None


_Index = dict[tuple[str, str], list[tuple[_Binding, int, Mapping[str, Any]]]]


def _index(bindings: Iterable[Mapping[str, Any]], kind: str, start: int) -> _Index:
    index: _Index = {}
    for order, binding in enumerate(sorted(bindings, key=_name), start):
        entry = _Binding(
            order,
            kind,
            _name(binding),
            _namespace(binding) if kind == "RoleBinding" else "",
            binding.get("roleRef"),
        )
        subjects = binding.get("subjects")
        seen: set[tuple[str, str]] = set()
        for position, subject in enumerate(subjects if isinstance(subjects, list) else ()):
            key = _subject_key(subject, entry.namespace)
            if key is not None and key not in seen:
                seen.add(key)
                index.setdefault(key, []).append((entry, position, subject))
    return index


@dataclass
class Policy:
    """A snapshot of the stored RBAC objects, evaluated without further reads. Bindings are
    indexed by the user and group names their subjects name, so a decision looks only at the
    bindings of the asking user and groups, not at every binding of the cluster."""

    roles: Mapping[tuple[str, str], list[JSON]] = field(default_factory=dict)
    cluster_rules: Mapping[str, list[JSON]] = field(default_factory=dict)
    role_bindings: Mapping[str, _Index] = field(default_factory=dict)
    cluster_role_bindings: _Index = field(default_factory=dict)
    compiled: Mapping[tuple[str, str, str], tuple[CompiledRule, ...]] = field(
        default_factory=dict, repr=False
    )
    """(kind, namespace, name) of every role -> its rules, compiled when the snapshot is built."""

    @classmethod
    def from_objects(
        cls,
        roles: Iterable[Mapping[str, Any]],
        cluster_roles: Iterable[Mapping[str, Any]],
        role_bindings: Iterable[Mapping[str, Any]],
        cluster_role_bindings: Iterable[Mapping[str, Any]],
    ) -> Policy:
        cluster_list = list(cluster_role_bindings)
        by_ns: dict[str, list[Mapping[str, Any]]] = {}
        for rb in role_bindings:
            by_ns.setdefault(_namespace(rb), []).append(rb)
        role_rules = {
            (_namespace(r), _name(r)): [dict(x) for x in r.get("rules") or [] if isinstance(x, Mapping)]
            if isinstance(r.get("rules"), list)
            else []
            for r in roles
        }
        cluster_rules = aggregated_rules(cluster_roles)
        compiled = {
            ("Role", ns, name): tuple(CompiledRule.from_json(x) for x in rules)
            for (ns, name), rules in role_rules.items()
        }
        compiled.update(
            {
                ("ClusterRole", "", name): tuple(CompiledRule.from_json(x) for x in rules)
                for name, rules in cluster_rules.items()
            }
        )
        # RoleBindings come after every ClusterRoleBinding, as kube-apiserver visits them.
        return cls(
            role_rules,
            cluster_rules,
            {ns: _index(rbs, "RoleBinding", len(cluster_list)) for ns, rbs in by_ns.items()},
            _index(cluster_list, "ClusterRoleBinding", 0),
            compiled,
        )

    def _role_rules(self, ref: Any, namespace: str) -> tuple[list[JSON] | None, str]:
        """(rules, error): the rules a binding's roleRef points at."""
        if not isinstance(ref, Mapping):
            return None, "roleRef is missing"
        kind, name = ref.get("kind"), str(ref.get("name") or "")
        if kind == "ClusterRole":
            rules = self.cluster_rules.get(name)
            return (
                (rules, "") if rules is not None else (None, f'clusterrole.{RBAC_GROUP} "{name}" not found')
            )
        if kind == "Role" and namespace:
            rules = self.roles.get((namespace, name))
            return (rules, "") if rules is not None else (None, f'role.{RBAC_GROUP} "{name}" not found')
        return None, f"unsupported roleRef kind {kind!r}"

    def _grants(self, user: UserInfo, namespace: str) -> tuple[list[_Grant], list[str]]:
        """Every (source, rules) that applies to `user` in `namespace` ("" = cluster scope),
        ClusterRoleBindings first (each group by name), and the errors met on the way."""
        keys = [("user", user.username), *(("group", g) for g in user.groups)]
        found: dict[int, tuple[_Binding, int, Mapping[str, Any]]] = {}
        indexes = [self.cluster_role_bindings] + (
            [self.role_bindings.get(namespace, {})] if namespace else []
        )
        for index in indexes:
            for key in keys:
                for entry in index.get(key, ()):
                    known = found.get(entry[0].order)
                    if known is None or entry[1] < known[1]:  # the binding's first subject that applies
                        found[entry[0].order] = entry
        grants: list[_Grant] = []
        errs: list[str] = []
        for order in sorted(found):
            binding, _, subject = found[order]
            rules, err = self._role_rules(binding.role_ref, binding.namespace)
            if rules is None:
                errs.append(err)
                continue
            ref = binding.role_ref
            role = (
                str(ref.get("kind")),
                binding.namespace if ref.get("kind") == "Role" else "",
                str(ref.get("name")),
            )
            grants.append(_Grant(binding, subject, rules, self.compiled.get(role, ())))
        return grants, errs

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        if MASTERS in user.groups:
            return Decision(True, "")
        namespace = attrs.namespace if attrs.resource_request else ""
        grants, errs = self._grants(user, namespace)
        for grant in grants:
            if any(rule.allows(attrs) for rule in grant.compiled):
                return Decision(True, f"RBAC: allowed by {grant.source}")
        return Decision(False, f"RBAC: {_aggregate(errs)}" if errs else "")

    def held_rules(self, user: UserInfo, namespace: str) -> tuple[list[CompiledRule], list[str]]:
        """Every rule `user` holds in `namespace` ("" = cluster-wide), compiled, and the errors
        met resolving them (what escalation prevention compares a new grant with)."""
        grants, errs = self._grants(user, namespace)
        return [rule for grant in grants for rule in grant.compiled], errs

    def role_rules(self, ref: Any, namespace: str) -> tuple[list[JSON] | None, str]:
        """The (effective) rules a `roleRef` names, or None and why."""
        return self._role_rules(ref, namespace)

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], list[str]]:
        """(resourceRules, nonResourceRules, errors) as a SelfSubjectRulesReview lists them."""
        grants, errs = self._grants(user, namespace)
        resource_rules: list[JSON] = []
        url_rules: list[JSON] = []
        for grant in grants:
            for rule in grant.rules:
                verbs = list(_strings(rule.get("verbs")))
                if _strings(rule.get("resources")):
                    entry: JSON = {
                        "verbs": verbs,
                        "apiGroups": list(_strings(rule.get("apiGroups"))),
                        "resources": list(_strings(rule.get("resources"))),
                    }
                    if _strings(rule.get("resourceNames")):
                        entry["resourceNames"] = list(_strings(rule.get("resourceNames")))
                    resource_rules.append(entry)
                if _strings(rule.get("nonResourceURLs")):
                    url_rules.append(
                        {"verbs": verbs, "nonResourceURLs": list(_strings(rule.get("nonResourceURLs")))}
                    )
        return resource_rules, url_rules, errs


def _describe(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def _aggregate(errs: list[str]) -> str:
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
