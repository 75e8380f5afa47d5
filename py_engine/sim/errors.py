"""Kubernetes `Status` errors, built exactly as the real API server shapes them.

Clients (the official Python client, kubectl, client-go style controllers)
branch on `reason` and `code`, and print `message`, so these mirror
`k8s.io/apimachinery/pkg/api/errors`: the message formats, reasons and
`details` (`name`, `group`, `kind` = the resource plural, `causes`).
"""

from __future__ import annotations

from typing import Any

from py_engine.sim.interface import JSON, ApiError


def status(code: int, reason: str, message: str, details: JSON | None = None) -> JSON:
    out: JSON = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        out["details"] = details
    return out


def _details(name: str, group: str, plural: str, **extra: Any) -> JSON:
    d: JSON = {"name": name} if name else {}
    if group:
        d["group"] = group
    d["kind"] = plural
    d.update(extra)
    return d


def _qualified(group: str, plural: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        status(
            404, "NotFound", f'{_qualified(group, plural)} "{name}" not found', _details(name, group, plural)
        )
    )


def already_exists(group: str, plural: str, name: str) -> ApiError:
    return ApiError(
        status(
            409,
            "AlreadyExists",
            f'{_qualified(group, plural)} "{name}" already exists',
            _details(name, group, plural),
        )
    )


def conflict(group: str, plural: str, name: str, why: str | None = None) -> ApiError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return ApiError(
        status(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {_qualified(group, plural)} "{name}": {why}',
            _details(name, group, plural),
        )
    )


def invalid(group: str, kind: str, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """`causes`: (field, reason e.g. FieldValueRequired, message). The message names the
    group-qualified kind (`WorkloadSpread.spreadgate.dev`, `Deployment.apps`, `Pod`)."""
    parts = [f"{f}: {m}" if f else m for f, _, m in causes]
    body = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    d: JSON = {"name": name} if name else {}
    if group:
        d["group"] = group
    d["kind"] = kind
    d["causes"] = [{"reason": r, "message": m, "field": f} for f, r, m in causes]
    qualified = f"{kind}.{group}" if group else kind
    return ApiError(status(422, "Invalid", f'{qualified} "{name}" is invalid: {body}', d))


def bad_request(message: str) -> ApiError:
    return ApiError(status(400, "BadRequest", message))


def forbidden(group: str, plural: str, name: str, why: str) -> ApiError:
    q = _qualified(group, plural)
    return ApiError(
        status(403, "Forbidden", f'{q} "{name}" is forbidden: {why}', _details(name, group, plural))
    )


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> ApiError:
    return ApiError(status(405, "MethodNotAllowed", message))


def gone(message: str) -> ApiError:
    return ApiError(status(410, "Expired", message))


def too_large(limit: int) -> ApiError:
    return ApiError(status(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}"))


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(
        status(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format ({content_type}) - accepted media types "
            f"include: {', '.join(accepted)}",
        )
    )


def unprocessable(message: str) -> ApiError:
    return ApiError(status(422, "Invalid", message))


def too_many_requests(message: str, retry_after: int = 1) -> ApiError:
    return ApiError(status(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after}))


def internal(message: str) -> ApiError:
    return ApiError(
        status(
            500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
        )
    )


def timeout(message: str) -> ApiError:
    return ApiError(status(504, "Timeout", message, {"retryAfterSeconds": 1}))


def success(code: int = 200, details: JSON | None = None) -> JSON:
    out: JSON = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        out["details"] = details
    return out
