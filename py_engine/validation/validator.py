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
from py_engine.semantics.objects import JSON_OBJECT

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


def violations_of(engine: PolicyEngine, rule: str, policy_input: Mapping[str, Any]) -> list[Violation]:
    """The `violation` set `rule` yields (`{msg, details: {field}}` items, or bare messages),
    sorted by field path; raises PolicyError on engine failure or an answer that is no set."""
    result = engine.evaluate(rule, policy_input)
    if result is None:
        return []
    if not isinstance(result, list):
        raise PolicyError(f"{rule} returned {type(result).__name__}, expected a set")
    violations = []
    for item in result:
        details = item.get("details", {}) if isinstance(item, dict) else {}
        message = item.get("msg", item) if isinstance(item, dict) else item
        violations.append(Violation(field=str(details.get("field", "")), message=str(message)))
    return sorted(violations, key=lambda v: (v.field, v.message))


def validate_spread(engine: PolicyEngine, policy_input: Mapping[str, Any]) -> list[Violation]:
    """Violations of the validation policy, sorted by field path; raises PolicyError on engine failure."""
    return violations_of(engine, VALIDATION_RULE, policy_input)


def container_names(containers: Any) -> tuple[str, ...]:
    """The names of a pod spec's container list, skipping what is not a named container."""
    if not isinstance(containers, list):
        return ()
    return tuple(c["name"] for c in containers if isinstance(c, dict) and isinstance(c.get("name"), str))


def policy_workload(workload: Mapping[str, Any]) -> dict[str, Any]:
    """What the validation policy reads of a target workload: its selector and its pod template's
    container names, each of the type the policy expects (a custom kind's stored object may hold
    anything: a `containers` that is not a list would be a Rego type error). A workload without
    a pod template stays without one, so container names are not checked against it."""
    spec = workload.get("spec")
    spec = spec if isinstance(spec, JSON_OBJECT) else {}
    view: dict[str, Any] = {}
    if isinstance(spec.get("selector"), JSON_OBJECT):
        view["selector"] = spec["selector"]
    template = spec.get("template")
    pod_spec = template.get("spec") if isinstance(template, JSON_OBJECT) else None
    if isinstance(pod_spec, JSON_OBJECT):
        view["template"] = {
            "spec": {
                key: [{"name": n} for n in container_names(pod_spec.get(key))]
                for key in ("containers", "initContainers")
            }
        }
    return {"spec": view}
