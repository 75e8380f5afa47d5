"""Running the Rego validation policy on one WorkloadSpread.

The policy input has Gatekeeper's shape (`review.object`, `review.oldObject`,
`review.operation`), plus `context` with what only Spreadgate can see: the
other spreads of the namespace, the target workload, allowed custom kinds and
the fields an operator added to the subset patch allowlist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from py_engine.policy import PolicyEngine, PolicyError

VALIDATION_RULE = "data.spreadgate.validation.violation"


@dataclass(frozen=True)
class Violation:
    """One broken rule: the field path and the full message (which starts with the path)."""

    field: str
    message: str


def build_review_input(
    spread: Mapping[str, Any],
    *,
    operation: str = "CREATE",
    old: Mapping[str, Any] | None = None,
    other_spreads: Sequence[Mapping[str, Any]] = (),
    workload: Mapping[str, Any] | None = None,
    custom_workloads: Sequence[Mapping[str, str]] = (),
    allowed_patch_fields: Sequence[str] = (),
) -> dict[str, Any]:
    """The policy input for validating `spread` (Gatekeeper-compatible `review`);
    `allowed_patch_fields` widens the subset patch allowlist (`patch_fields`)."""
    review: dict[str, Any] = {"object": spread, "operation": operation}
    if old is not None:
        review["oldObject"] = old
    context: dict[str, Any] = {
        "workloadSpreads": list(other_spreads),
        "customWorkloads": list(custom_workloads),
        "allowedPatchFields": list(allowed_patch_fields),
    }
    if workload is not None:
        context["workload"] = workload
    return {"review": review, "context": context}


def validate_spread(engine: PolicyEngine, policy_input: Mapping[str, Any]) -> list[Violation]:
    """Violations of the validation policy, sorted by field path; raises PolicyError on engine failure."""
    result = engine.evaluate(VALIDATION_RULE, policy_input)
    if result is None:
        return []
    if not isinstance(result, list):
        raise PolicyError(f"{VALIDATION_RULE} returned {type(result).__name__}, expected a set")
    violations = []
    for item in result:
        details = item.get("details", {}) if isinstance(item, dict) else {}
        violations.append(Violation(field=str(details.get("field", "")), message=str(item.get("msg", item))))
    return sorted(violations, key=lambda v: (v.field, v.message))
