"""A subset's placement applied to a pod template: node affinity and tolerations.

The subset's `nodeSelectorTerm` requirements are ANDed into every required
node-affinity term of the template (one empty term is added when there is none),
so each OR branch keeps its own constraints. Kruise uses only `matchExpressions`;
`matchFields` are ANDed in the same way here (docs/kruise-compatibility.md,
"UnitedDeployment"). Tolerations are appended.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.model.uniteddeployment import UdSubset
from py_engine.semantics.jsoncopy import json_copy
from py_engine.semantics.objects import dict_at
from py_engine.uniteddeployment.controller.jsonview import as_list

JSON = dict[str, Any]


def attach_node_affinity(pod_spec: JSON, term: Mapping[str, Any] | None) -> None:
    """AND the term's requirements into every required term of `pod_spec` (in place)."""
    if not term:
        return
    expressions = list(term.get("matchExpressions") or [])
    fields = list(term.get("matchFields") or [])
    if not expressions and not fields:
        return
    required = dict_at(
        dict_at(dict_at(pod_spec, "affinity"), "nodeAffinity"),
        "requiredDuringSchedulingIgnoredDuringExecution",
    )
    terms = required.get("nodeSelectorTerms")
    if not isinstance(terms, list) or not terms:
        terms = [{}]
    merged = []
    for existing in terms:
        entry = dict(existing) if isinstance(existing, Mapping) else {}
        if expressions:
            entry["matchExpressions"] = as_list(entry.get("matchExpressions")) + json_copy(expressions)
        if fields:
            entry["matchFields"] = as_list(entry.get("matchFields")) + json_copy(fields)
        merged.append(entry)
    required["nodeSelectorTerms"] = merged


def attach_tolerations(pod_spec: JSON, subset: UdSubset) -> None:
    if subset.tolerations:
        current = pod_spec.get("tolerations")
        base = list(current) if isinstance(current, list) else []
        pod_spec["tolerations"] = base + [json_copy(dict(t)) for t in subset.tolerations]
