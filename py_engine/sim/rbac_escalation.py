"""RBAC escalation prevention: nobody grants, through a Role or a binding, what they do not hold.

kube-apiserver refuses to store a Role / ClusterRole whose rules the writer does not already
hold (in that namespace, or cluster-wide), unless the writer may `escalate` that role, and a
RoleBinding / ClusterRoleBinding to a role whose rules the writer does not hold, unless the
writer may `bind` it. `system:masters` may do both. A ClusterRole with an `aggregationRule`
needs `escalate` (or `system:masters`): what it aggregates is not known when it is written.
Without this, anyone allowed to edit Roles in a namespace would own the namespace; issue 24's
"a spread never lends its author powers they do not have" would be moot on the embedded
cluster.

"Holds" is checked as upstream's `Covers`: each rule to grant is broken into atoms (one verb,
one API group, one resource, one name or URL) and every atom must be allowed by one of the
writer's rules, where a `*` in the atom is matched only by a `*` the writer holds.

Pure: the writer's rules come in compiled (py_engine/sim/rbac.py), the refusal goes out as
kube-apiserver words it (`user "alice" (groups=["devs" "system:authenticated"]) is attempting
to grant RBAC permissions not currently held:` and one line per missing rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from py_engine.sim import errors
from py_engine.sim.identity import MASTERS, UserInfo
from py_engine.sim.interface import ApiError
from py_engine.sim.rbac import RBAC_GROUP, CompiledRule
from py_engine.sim.request_info import RequestAttributes

MAX_ATOMS = 100_000
"""A rule is a product of lists; one that expands beyond this is refused rather than walked."""


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _atoms(rule: Mapping[str, Any]) -> Iterable[tuple[RequestAttributes, str]]:
    """(atom, compact description of the one-value rule it came from)."""
    verbs = _strings(rule.get("verbs"))
    for url in _strings(rule.get("nonResourceURLs")):
        for verb in verbs:
            yield RequestAttributes(verb=verb, path=url), f'{{NonResourceURLs:["{url}"], Verbs:["{verb}"]}}'
    names = _strings(rule.get("resourceNames")) or [""]
    for group in _strings(rule.get("apiGroups")):
        for combined in _strings(rule.get("resources")):
            resource, _, sub = combined.partition("/")
            for name in names:
                for verb in verbs:
                    named = f', ResourceNames:["{name}"]' if name else ""
                    yield (
                        RequestAttributes.on_resource(verb, group, resource, name=name, subresource=sub),
                        f'{{APIGroups:["{group}"], Resources:["{combined}"]{named}, Verbs:["{verb}"]}}',
                    )


def _size(rules: Sequence[Any]) -> int:
    total = 0
    for r in rules:
        if not isinstance(r, Mapping):
            continue
        verbs = len(_strings(r.get("verbs")))
        total += verbs * len(_strings(r.get("nonResourceURLs")))
        total += (
            verbs
            * len(_strings(r.get("apiGroups")))
            * len(_strings(r.get("resources")))
            * max(1, len(_strings(r.get("resourceNames"))))
        )
    return total


def not_held(held: Sequence[CompiledRule], granted: Sequence[Any]) -> list[str]:
    """Descriptions of the atoms of `granted` that no rule in `held` covers (sorted, unique)."""
    if _size(granted) > MAX_ATOMS:
        return [f"more than {MAX_ATOMS} verb/group/resource/name combinations"]
    missing: set[str] = set()
    for rule in granted:
        if not isinstance(rule, Mapping):
            continue
        for atom, description in _atoms(rule):
            if not any(h.allows(atom) for h in held):
                missing.add(description)
    return sorted(missing)


def escalation_refused(
    user: UserInfo, resource: str, name: str, missing: list[str], errs: list[str]
) -> ApiError:
    groups = " ".join(f'"{g}"' for g in user.groups)
    why = (
        f'user "{user.username}" (groups=[{groups}]) is attempting to grant RBAC permissions not currently '
        "held:\n" + "\n".join(missing)
    )
    if errs:
        why += "; resolution errors: [" + ", ".join(errs) + "]"
    return errors.forbidden(RBAC_GROUP, resource, name, why)


def is_superuser(user: UserInfo) -> bool:
    return MASTERS in user.groups
