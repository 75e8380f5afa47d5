"""The validation service: one WorkloadSpread or UnitedDeployment admission request in, one
`Verdict` out.

Both kinds are validated here, side by side and the same way, so the webhook's two validating
endpoints are alike (webhook/endpoints.py) and no validation lives in the web layer or in the
WorkloadSpread admission package:

1. the operation: only CREATE and UPDATE are validated, anything else is skipped;
2. the object: a review whose object is not of the kind is a 400;
3. the Rego policy, with what only the API can tell (`ValidationReader`): for a WorkloadSpread
   the namespace's other spreads (one spread per workload), the old object (immutable
   targetRef) and the target workload (subset patch checks, `policy_workload`); a
   UnitedDeployment needs only its own review (py_engine/validation/uniteddeployment.py).
   Violations are one 422 listing them all; an engine that fails is a 500;
4. the author's rights, with an `AuthorGate` (py_engine/validation/authorization.py;
   which rights, py_engine/validation/authorship.py): `update` on a spread's target workload,
   `create` and `update` on a UnitedDeployment's template kind. An UPDATE that leaves `spec`
   as it was lends nothing and is not checked. Without a gate (`--authorize-authors=false`)
   nothing is checked.

Errors are values: every path returns a `Verdict`; the webhook logs and answers it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from py_engine.model import is_workloadspread
from py_engine.policy import PolicyEngine, PolicyError
from py_engine.semantics import objects
from py_engine.semantics.objects import JSON_OBJECT
from py_engine.validation.authorization import AuthorGate
from py_engine.validation.authorship import (
    ResourceCheck,
    UserInfoError,
    read_user_info,
    spread_checks,
    uniteddeployment_checks,
)
from py_engine.validation.uniteddeployment import review_uniteddeployment
from py_engine.validation.validator import build_review_input, policy_workload, validate_spread
from py_engine.validation.verdict import Verdict, admitted, refused, screened, unconfigured


class ValidationReader(Protocol):
    """The port: what validating a WorkloadSpread reads of the cluster (the webhook's watch
    caches, py_engine/workloadspread/admission/runtime/service_view.py; a fake in the tests)."""

    def spreads_in(self, namespace: str) -> Sequence[dict[str, Any]]: ...

    def lookup(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class ValidationConfig:
    custom_workloads: tuple[Mapping[str, Any], ...] = ()
    """Custom workload kinds a WorkloadSpread may target (`--custom-workload`)."""
    allowed_patch_fields: tuple[str, ...] = ()
    """Pod fields a subset patch may set beyond the default allowlist (`--allow-patch-field`)."""


def _object(request: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    value = request.get(key)
    return value if isinstance(value, dict) else None


def _is_workloadspread(obj: Any) -> bool:
    return isinstance(obj, dict) and is_workloadspread(obj)


def _namespace(request: Mapping[str, Any], obj: Mapping[str, Any]) -> str:
    return str(request.get("namespace") or objects.meta(obj).get("namespace") or "")


class ValidationService:
    """See the module docstring. Thread-safe: the webhook calls it from many threads."""

    def __init__(
        self,
        reader: ValidationReader,
        engine: PolicyEngine | None,
        *,
        config: ValidationConfig | None = None,
        author_gate: AuthorGate | None = None,
    ) -> None:
        """`engine` evaluates the policies (the webhook's runs in worker processes under a
        deadline, py_engine/policy/isolated.py); None answers every review with a 500."""
        self.reader = reader
        self.engine = engine
        self.config = config or ValidationConfig()
        self.author_gate = author_gate

    def review_workloadspread(self, request: Mapping[str, Any]) -> Verdict:
        """A WorkloadSpread CREATE or UPDATE, decided (see the module docstring)."""
        early = screened(request, _is_workloadspread, "WorkloadSpread")
        if early is not None:
            return early
        if self.engine is None:
            return unconfigured("WorkloadSpread")
        operation = str(request.get("operation"))
        obj: dict[str, Any] = request["object"]
        namespace = _namespace(request, obj)
        name = str(objects.meta(obj).get("name") or request.get("name") or "")
        obj = dict(obj, metadata={**objects.meta(obj), "namespace": namespace})
        others = [s for s in self.reader.spreads_in(namespace) if objects.meta(s).get("name") != name]
        policy_input = build_review_input(
            obj,
            operation=operation,
            old=_object(request, "oldObject") if operation == "UPDATE" else None,
            other_spreads=others,
            workload=self._target_workload(obj, namespace),
            custom_workloads=[dict(c) for c in self.config.custom_workloads],
            allowed_patch_fields=self.config.allowed_patch_fields,
        )
        try:
            violations = validate_spread(self.engine, policy_input)
        except PolicyError as exc:
            return refused(500, f"WorkloadSpread validation failed to run: {exc}", "error", "InternalError")
        if violations:
            return refused(422, "; ".join(v.message for v in violations), "invalid", "Invalid")
        return self._authorized(request, spread_checks(obj, namespace)) or admitted()

    def review_uniteddeployment(self, request: Mapping[str, Any]) -> Verdict:
        """A UnitedDeployment CREATE or UPDATE, decided (see the module docstring)."""
        verdict = review_uniteddeployment(
            self.engine, request, allowed_patch_fields=tuple(self.config.allowed_patch_fields)
        )
        if verdict.outcome != "allowed":
            return verdict
        obj = _object(request, "object") or {}
        return self._authorized(request, uniteddeployment_checks(obj, _namespace(request, obj))) or verdict

    def _authorized(self, request: Mapping[str, Any], checks: Sequence[ResourceCheck]) -> Verdict | None:
        """None when the review's user may make this change (or nobody checks); else the denial."""
        gate = self.author_gate
        if gate is None or not checks:
            return None
        old, new = _object(request, "oldObject"), _object(request, "object")
        if (
            request.get("operation") == "UPDATE"
            and old is not None
            and new is not None
            and old.get("spec") == new.get("spec")
        ):
            return None
        try:
            user = read_user_info(request.get("userInfo"))
        except UserInfoError as exc:
            return refused(400, str(exc), "error", "BadRequest")
        refusal = gate.refusal(user, checks)
        if refusal is None:
            return None
        return refused(
            refusal.code, refusal.message, "forbidden" if refusal.code == 403 else "error", refusal.reason
        )

    def _target_workload(self, obj: Mapping[str, Any], namespace: str) -> dict[str, Any] | None:
        """What the policy reads of the spread's target workload; None when it cannot be found."""
        spec = obj.get("spec")
        ref = spec.get("targetRef") if isinstance(spec, JSON_OBJECT) else None
        if not isinstance(ref, JSON_OBJECT):
            return None
        api_version, kind, name = (str(ref.get(k) or "") for k in ("apiVersion", "kind", "name"))
        if not (api_version and kind and name):
            return None
        try:
            workload = self.reader.lookup(api_version, kind, namespace, name)
        except Exception:  # a lookup failure only skips the patch checks, as for a missing workload
            return None
        return policy_workload(workload) if workload is not None else None
