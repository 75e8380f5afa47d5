"""What validating one object decides: a `Verdict`, before it becomes an AdmissionReview answer.

Both kinds answer with it (py_engine/validation/service.py), so the webhook turns a
WorkloadSpread's and a UnitedDeployment's review into a response the same way
(webhook/endpoints.py). `outcome` is the webhook's metrics label: allowed, skipped, invalid
(the policy found violations, 422), forbidden (the author lacks a right, 403) or error (a bad
request, the engine failed or the rights could not be checked).
"""

from __future__ import annotations

from dataclasses import dataclass


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
