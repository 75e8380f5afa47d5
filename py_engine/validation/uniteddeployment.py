"""Validating UnitedDeployments with the Rego policy in `policies/uniteddeployment/`.

Shared by `spreadgate validate`, the webhook's `/validate/uniteddeployments`
and the tests. The policy input has the same Gatekeeper shape as the
WorkloadSpread validation (`review.object`, `review.oldObject`,
`review.operation`); Kruise's `apps.kruise.io` v1alpha1 and v1beta1 objects
are validated like Spreadgate's `spreadgate.dev/v1beta1` ones, since their
specs convert one to one (docs/uniteddeployment-validation.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from py_engine.model.constants import GROUP, KRUISE_GROUP
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.validation.validator import Violation, violations_of
from py_engine.validation.verdict import Verdict, admitted, refused, screened, unconfigured

UD_VALIDATION_RULE = "data.spreadgate.uniteddeployment.violation"
UD_KIND = "UnitedDeployment"
UD_API_GROUPS = frozenset({GROUP, KRUISE_GROUP})
UD_API_VERSIONS = frozenset({"v1alpha1", "v1beta1"})


def is_validated_uniteddeployment(obj: Any) -> bool:
    """True for a UnitedDeployment of a group and version the policy validates."""
    if not isinstance(obj, Mapping) or obj.get("kind") != UD_KIND:
        return False
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str):
        return False
    group, _, version = api_version.rpartition("/")
    return group in UD_API_GROUPS and version in UD_API_VERSIONS


def build_ud_review_input(
    obj: Mapping[str, Any],
    *,
    operation: str = "CREATE",
    old: Mapping[str, Any] | None = None,
    allowed_patch_fields: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The policy input for validating one UnitedDeployment (Gatekeeper-compatible `review`)."""
    review: dict[str, Any] = {"object": obj, "operation": operation}
    if old is not None:
        review["oldObject"] = old
    return {"review": review, "context": {"allowedPatchFields": list(allowed_patch_fields)}}


def validate_uniteddeployment(engine: PolicyEngine, policy_input: Mapping[str, Any]) -> list[Violation]:
    """Violations of the UnitedDeployment policy, sorted by field path.

    Raises PolicyError on engine failure."""
    return violations_of(engine, UD_VALIDATION_RULE, policy_input)


def _object(request: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = request.get(key)
    return value if isinstance(value, Mapping) else None


def review_uniteddeployment(
    engine: PolicyEngine | None, request: Mapping[str, Any], *, allowed_patch_fields: tuple[str, ...] = ()
) -> Verdict:
    """Decide one admission request for a UnitedDeployment (CREATE and UPDATE; others pass).

    Like Kruise's webhook: any violation is a denial with HTTP 422 listing them all;
    UPDATE checks the create rules on the new object and the update rules against the old.
    `allowed_patch_fields` widens the subset patch allowlist (the webhook's `--allow-patch-field`).
    """
    early = screened(request, is_validated_uniteddeployment, UD_KIND)
    if early is not None:
        return early
    if engine is None:
        return unconfigured(UD_KIND)
    operation = str(request.get("operation"))
    obj = request["object"]
    old = _object(request, "oldObject") if operation == "UPDATE" else None
    try:
        policy_input = build_ud_review_input(
            obj, operation=operation, old=old, allowed_patch_fields=allowed_patch_fields
        )
        violations = validate_uniteddeployment(engine, policy_input)
    except PolicyError as exc:
        return refused(500, f"UnitedDeployment validation failed to run: {exc}", "error", "InternalError")
    if violations:
        return refused(422, "; ".join(v.message for v in violations), "invalid", "Invalid")
    return admitted()
