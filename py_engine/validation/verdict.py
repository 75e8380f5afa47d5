"""What validating one object decides: a `Verdict`, before it becomes an AdmissionReview answer.

Both kinds answer with it (py_engine/validation/service.py), so the webhook turns a
WorkloadSpread's and a UnitedDeployment's review into a response the same way
(webhook/endpoints.py). `outcome` is the webhook's metrics label: allowed, skipped, invalid
(the policy found violations, 422), forbidden (the author lacks a right, 403) or error (a bad
request, the engine failed or the rights could not be checked).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """Allowed (with `warnings` for the user) or denied with `code`, `message` and `reason`."""

    allowed: bool
    outcome: str
    code: int = 200
    message: str = ""
    reason: str = ""
    warnings: tuple[str, ...] = ()


def admitted(outcome: str = "allowed", message: str = "") -> Verdict:
    return Verdict(True, outcome, message=message)


def refused(code: int, message: str, outcome: str, reason: str = "") -> Verdict:
    return Verdict(False, outcome, code, message, reason)


def screened(request: Mapping[str, Any], of_kind: Callable[[Any], bool], kind: str) -> Verdict | None:
    """What a review of a `kind` object gets before its policy runs, the same for both kinds:
    skipped unless it is a CREATE or UPDATE, 400 when its object is not `of_kind`; None when
    the policy is to run."""
    if request.get("operation") not in ("CREATE", "UPDATE"):
        return admitted("skipped", "not a CREATE or UPDATE")
    if not of_kind(request.get("object")):
        return refused(400, f"request.object must be a {kind}", "error", "BadRequest")
    return None


def unconfigured(kind: str) -> Verdict:
    return refused(500, f"no policy engine configured for {kind} validation", "error")
