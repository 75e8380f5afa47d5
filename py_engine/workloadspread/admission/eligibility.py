"""A WorkloadSpread's subsets asked of the placement query (`py_engine.placement.eligibility`).

Admission asks, for each new pod, which of the spread's subsets it may go to; the subsets are
the spread's `spec.subsets` list as stored (already in the policy's subset shape), passed on
as that very list object so the placement query's `SubsetInputs` reuses their trimmed form for
every pod until the spread changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from py_engine.placement import eligibility as placement
from py_engine.placement.eligibility import EligibilityCache, EligibilityDecision, SubsetInputs
from py_engine.policy import PolicyEngine
from py_engine.semantics.objects import JSON_OBJECT


def spread_subsets(spread: Mapping[str, Any]) -> Any:
    """The spread's `spec.subsets` as stored (None when the spec is not an object)."""
    spec = spread.get("spec")
    return spec.get("subsets") if isinstance(spec, JSON_OBJECT) else None


def decide_subsets(
    engine: PolicyEngine,
    pod: Mapping[str, Any],
    spread: Mapping[str, Any],
    subset_statuses: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]] | None,
    cache: EligibilityCache | None,
    inputs: SubsetInputs | None,
    *,
    nodes_version: str | None = None,
) -> EligibilityDecision:
    """`py_engine.placement.eligibility.decide_subsets` over the spread's subsets."""
    return placement.decide_subsets(
        engine,
        pod,
        spread_subsets(spread),
        subset_statuses,
        nodes,
        cache,
        inputs,
        nodes_version=nodes_version,
    )
