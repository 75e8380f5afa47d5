"""Node placement predicates exactly as the default Kubernetes scheduler applies them.

These are pure functions of plain pod and node dicts. The embedded scheduler
uses them to place pods, and the Spreadgate controller uses the same functions
to decide whether an existing pod could belong to a subset, so the two can never
disagree about what "matches a node" means.

Semantics follow the upstream plugins:

* `NodeAffinity`: `spec.nodeSelector` (every pair must match) AND the required
  node-affinity terms (terms are ORed; inside a term, `matchExpressions` and
  `matchFields` are ANDed; a term with neither matches nothing; a malformed
  requirement makes its term match nothing).
* `TaintToleration`: a `NoSchedule`/`NoExecute` taint blocks the node unless a
  toleration tolerates it; `PreferNoSchedule` taints only lower the score.
* `NodeUnschedulable`: a cordoned node admits only pods tolerating the
  `node.kubernetes.io/unschedulable:NoSchedule` taint.
* `NodeResourcesFit`: pod count and each requested resource against the node's
  allocatable minus what the pods already bound there request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from py_engine.semantics.quantity import QuantityError, parse_quantity

__all__ = [
    "UNSCHEDULABLE_TAINT_KEY",
    "insufficient_resources",
    "intolerable_prefer_no_schedule_count",
    "node_allocatable",
    "node_selector_requirement_matches",
    "node_selector_term_matches",
    "node_selector_terms_match",
    "pod_matches_node_selector_and_affinity",
    "pod_requests",
    "preferred_affinity_score",
    "tolerates_taint",
    "tolerates_unschedulable",
    "untolerated_taint",
]

Obj = Mapping[str, Any]

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
_FILTER_EFFECTS = ("NoSchedule", "NoExecute")
_SUPPORTED_FIELDS = ("metadata.name",)


_INTEGER = re.compile(r"-?[0-9]+")
_INT64 = range(-(2**63), 2**63)


def _int_or_none(text: Any) -> int | None:
    """A Gt/Lt value or label as an integer the way Kubernetes reads it (`strconv.ParseInt`,
    base 10, 64 bits): ASCII digits after an optional minus, leading zeros allowed. Python's
    `int()` is laxer (spaces, `+`, `_`, non-ASCII digits, any size); those are not integers."""
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        return None
    value = int(text)
    return value if value in _INT64 else None


def node_selector_requirement_matches(requirement: Obj, labels: Mapping[str, str]) -> bool:
    """One `matchExpressions` entry against a label map (operators In, NotIn,
    Exists, DoesNotExist, Gt, Lt). Malformed requirements match nothing, as the
    upstream selector parser rejects them."""
    key = requirement.get("key")
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    if not isinstance(key, str) or not key or not isinstance(values, list):
        return False
    present = key in labels
    if operator == "In":
        return bool(values) and present and labels[key] in values
    if operator == "NotIn":
        return bool(values) and (not present or labels[key] not in values)
    if operator == "Exists":
        return not values and present
    if operator == "DoesNotExist":
        return not values and not present
    if operator in ("Gt", "Lt"):
        if len(values) != 1 or not present:
            return False
        bound = _int_or_none(values[0])
        actual = _int_or_none(labels[key])
        if bound is None or actual is None:
            return False
        return actual > bound if operator == "Gt" else actual < bound
    return False


def _field_requirement_matches(requirement: Obj, node: Obj) -> bool:
    """A `matchFields` entry: only `metadata.name` with In/NotIn is legal upstream."""
    key = requirement.get("key")
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    if key not in _SUPPORTED_FIELDS or operator not in ("In", "NotIn") or len(values) != 1:
        return False
    fields = {"metadata.name": str(node.get("metadata", {}).get("name", ""))}
    return node_selector_requirement_matches(requirement, fields)


def node_selector_term_matches(term: Obj, node: Obj) -> bool:
    """A `NodeSelectorTerm`: every expression and every field requirement must hold;
    an empty term matches no node."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node.get("metadata", {}).get("labels") or {}
    return all(node_selector_requirement_matches(e, labels) for e in expressions) and all(
        _field_requirement_matches(f, node) for f in fields
    )


def node_selector_terms_match(terms: Sequence[Obj], node: Obj) -> bool:
    """A `NodeSelector`: the terms are ORed; no terms matches no node."""
    return any(node_selector_term_matches(term, node) for term in terms)


def _node_affinity(pod: Obj) -> Obj:
    affinity = pod.get("spec", {}).get("affinity") or {}
    node_affinity: Obj = affinity.get("nodeAffinity") or {}
    return node_affinity


def pod_matches_node_selector_and_affinity(pod: Obj, node: Obj) -> bool:
    """The NodeAffinity filter: `spec.nodeSelector` and required node affinity."""
    labels = node.get("metadata", {}).get("labels") or {}
    selector = pod.get("spec", {}).get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return node_selector_terms_match(required.get("nodeSelectorTerms") or [], node)


def preferred_affinity_score(pod: Obj, node: Obj) -> int:
    """Sum of the weights of the preferred node-affinity terms the node matches."""
    total = 0
    for preferred in _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        weight = preferred.get("weight", 0)
        if isinstance(weight, int) and node_selector_term_matches(preferred.get("preference") or {}, node):
            total += weight
    return total


def tolerates_taint(toleration: Obj, taint: Obj) -> bool:
    """`Toleration.ToleratesTaint`: empty effect matches every effect, empty key
    with `Exists` matches every key, the default operator is `Equal`."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def _tolerated(taint: Obj, tolerations: Iterable[Obj]) -> bool:
    return any(tolerates_taint(t, taint) for t in tolerations)


def untolerated_taint(
    taints: Sequence[Obj], tolerations: Sequence[Obj], effects: Sequence[str] = _FILTER_EFFECTS
) -> Obj | None:
    """The first taint with one of `effects` that no toleration tolerates, or None."""
    for taint in taints:
        if taint.get("effect") in effects and not _tolerated(taint, tolerations):
            return taint
    return None


def intolerable_prefer_no_schedule_count(taints: Sequence[Obj], tolerations: Sequence[Obj]) -> int:
    """How many `PreferNoSchedule` taints the pod does not tolerate (lower is better)."""
    prefer = [t for t in tolerations if (t.get("effect") or "") in ("", "PreferNoSchedule")]
    return sum(
        1 for taint in taints if taint.get("effect") == "PreferNoSchedule" and not _tolerated(taint, prefer)
    )


def tolerates_unschedulable(pod: Obj) -> bool:
    """Whether the pod may land on a cordoned (`spec.unschedulable`) node."""
    taint = {"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"}
    return _tolerated(taint, pod.get("spec", {}).get("tolerations") or [])


def _map(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one: snapshots read by the offline
    commands are not checked by an API server, and a field of the wrong type counts for nothing."""
    return value if isinstance(value, Mapping) else {}


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """The JSON objects of a list field; anything else in it (or a non-list) is left out."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _quantities(raw: Mapping[str, Any]) -> dict[str, Fraction]:
    """Parse a resource-name -> quantity map, leaving out what does not parse
    (the API server would have refused it; here it simply counts for nothing)."""
    out: dict[str, Fraction] = {}
    for name, value in raw.items():
        try:
            out[name] = parse_quantity(value)
        except QuantityError:
            continue
    return out


def _container_requests(container: Obj) -> dict[str, Fraction]:
    """A container's requests; a resource with only a limit requests its limit,
    which is what API-server defaulting does."""
    resources = _map(container.get("resources"))
    merged: dict[str, Any] = dict(_map(resources.get("limits")))
    merged.update(_map(resources.get("requests")))
    return _quantities(merged)


def _add(into: dict[str, Fraction], more: Mapping[str, Fraction]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Fraction(0)) + amount


def pod_requests(pod: Obj) -> dict[str, Fraction]:
    """Effective requests of a pod (`resourcehelper.PodRequests`): the sum over app
    containers and restartable (sidecar) init containers, raised to the largest
    single init container (plus the sidecars started before it), plus overhead."""
    spec = _map(pod.get("spec"))
    total: dict[str, Fraction] = {}
    for container in _objects(spec.get("containers")):
        _add(total, _container_requests(container))
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in _objects(spec.get("initContainers")):
        requests = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            _add(sidecars, requests)
            _add(total, requests)
            continue
        step = dict(sidecars)
        _add(step, requests)
        for name, amount in step.items():
            init_peak[name] = max(init_peak.get(name, Fraction(0)), amount)
    for name, amount in init_peak.items():
        total[name] = max(total.get(name, Fraction(0)), amount)
    _add(total, _quantities(_map(spec.get("overhead"))))
    return total


def node_allocatable(node: Obj) -> dict[str, Fraction]:
    """`status.allocatable`, falling back to `status.capacity` per resource."""
    status = _map(node.get("status"))
    merged: dict[str, Any] = dict(_map(status.get("capacity")))
    merged.update(_map(status.get("allocatable")))
    return _quantities(merged)


_RESOURCE_ORDER = {"cpu": 0, "memory": 1, "ephemeral-storage": 2}


def insufficient_resources(
    request: Mapping[str, Fraction],
    allocatable: Mapping[str, Fraction],
    used: Mapping[str, Fraction],
    pods_on_node: int,
) -> list[str]:
    """NodeResourcesFit reasons: "Too many pods" and "Insufficient <resource>"
    for every requested resource the node cannot fit (empty list: it fits)."""
    reasons: list[str] = []
    max_pods = allocatable.get("pods")
    if max_pods is not None and pods_on_node + 1 > max_pods:
        reasons.append("Too many pods")
    names = sorted(
        (n for n, amount in request.items() if amount > 0 and n != "pods"),
        key=lambda n: (_RESOURCE_ORDER.get(n, 3), n),
    )
    for name in names:
        free = allocatable.get(name, Fraction(0)) - used.get(name, Fraction(0))
        if request[name] > free:
            reasons.append(f"Insufficient {name}")
    return reasons
