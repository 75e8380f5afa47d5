"""API failures as a small exception hierarchy keyed by HTTP status.

Callers branch on what Kubernetes means (409 Conflict: re-read and retry; 404:
the object is gone; 410: relist), not on the client library's exception type,
so the official client's `ApiException` never leaves `py_engine.apiclient`.
"""

from __future__ import annotations

import json
from typing import Any


class KubeError(Exception):
    """An API call failed: `status` is the HTTP code (0 when no response arrived),
    `reason` the Kubernetes Status reason, `message` the human text."""

    def __init__(self, status: int, reason: str, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}


class BadRequest(KubeError):
    """400: the request was malformed."""


class Unauthorized(KubeError):
    """401: credentials missing or rejected."""


class Forbidden(KubeError):
    """403: RBAC (or an admission webhook) said no."""


class NotFound(KubeError):
    """404: the object (or the resource type) does not exist."""


class Conflict(KubeError):
    """409 Conflict: stale resourceVersion on a write; re-read and try again."""


class AlreadyExists(Conflict):
    """409 AlreadyExists: create of a name that is taken."""


class Gone(KubeError):
    """410: the resourceVersion is too old for a watch; relist."""


class Invalid(KubeError):
    """422: the object failed validation."""


class TooManyRequests(KubeError):
    """429: throttled; back off."""


class ServerError(KubeError):
    """5xx, or no response at all (status 0): transient as far as callers can tell."""


_BY_STATUS: dict[int, type[KubeError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


def error_for(status: int, reason: str, message: str, body: dict[str, Any] | None = None) -> KubeError:
    """The most specific `KubeError` subclass for an HTTP status and Status reason."""
    if status == 409 and reason == "AlreadyExists":
        return AlreadyExists(status, reason, message, body)
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 or status == 0 else KubeError
    return cls(status, reason, message, body)


def error_from_response(status: int, data: bytes, http_reason: str = "") -> KubeError:
    """Map a non-2xx response body (a Kubernetes `Status`, or anything else) to a `KubeError`."""
    body: dict[str, Any] | None = None
    try:
        parsed = json.loads(data) if data else None
        body = parsed if isinstance(parsed, dict) else None
    except ValueError:
        body = None
    if body is not None and body.get("kind") == "Status":
        reason = str(body.get("reason") or http_reason)
        message = str(body.get("message") or http_reason)
    else:
        reason = http_reason
        message = data[:500].decode("utf-8", "replace") if data else http_reason
    return error_for(status, reason, message, body)
