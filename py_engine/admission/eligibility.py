"""Asking the subset policy which subsets a pod may go to.

The policy reads only a few pod fields; sending just those keeps the Rego
input small (input conversion dominates evaluation time for large pods).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.policy import PolicyEngine, PolicyError

SUBSET_DECISION_RULE = "data.spreadgate.subset.decision"


@dataclass(frozen=True)
class EligibilityDecision:
    """Eligible subset names in spec order, and why the others were skipped."""

    eligible: tuple[str, ...]
    rejected: Mapping[str, tuple[str, ...]]


def trim_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod the subset policy reads: node selection and container resources."""
    spec = pod.get("spec") or {}
    trimmed: dict[str, Any] = {
        "containers": [
            {"name": c.get("name"), "resources": c.get("resources") or {}}
            for c in spec.get("containers") or []
            if isinstance(c, Mapping)
        ]
    }
    for key in ("nodeSelector", "affinity", "tolerations"):
        if spec.get(key):
            trimmed[key] = spec[key]
    return {"spec": trimmed}


def build_eligibility_input(
    pod: Mapping[str, Any],
    spread: Mapping[str, Any],
    subset_statuses: Sequence[Mapping[str, Any]] = (),
    nodes: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The subset policy's input; `nodes` (compact node facts) enables node-fit simulation."""
    spec = spread.get("spec") or {}
    policy_input: dict[str, Any] = {
        "pod": trim_pod(pod),
        "workloadSpread": {"spec": {"subsets": spec.get("subsets") or []}},
        "subsetStatuses": [
            {"name": s.get("name"), "conditions": s.get("conditions") or []} for s in subset_statuses
        ],
    }
    if nodes is not None:
        policy_input["nodes"] = list(nodes)
    return policy_input


def decide_eligibility(engine: PolicyEngine, policy_input: Mapping[str, Any]) -> EligibilityDecision:
    """Run the subset policy; raises PolicyError when it answers something unexpected."""
    result = engine.evaluate(SUBSET_DECISION_RULE, policy_input)
    if not isinstance(result, Mapping) or not isinstance(result.get("eligible"), list):
        raise PolicyError(f"{SUBSET_DECISION_RULE} returned {result!r}, expected an object with 'eligible'")
    rejected: dict[str, list[str]] = {}
    for item in result.get("rejected") or []:
        rejected.setdefault(str(item.get("subset")), []).append(str(item.get("reason")))
    return EligibilityDecision(
        eligible=tuple(str(name) for name in result["eligible"]),
        rejected={name: tuple(reasons) for name, reasons in rejected.items()},
    )
