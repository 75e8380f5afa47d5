"""HTTP/1.1 on the wire: parsing a request head, writing a response head.

Pure functions over bytes, so the front end (`webhook.frontend`) only moves
bytes and the rules are tested alone. Only what the webhook's clients send is
accepted: the API server posts AdmissionReviews with a `Content-Length`, and
probes and Prometheus send bodiless GETs. A chunked or otherwise
transfer-encoded body is refused with 411 (the API server never sends one),
which also rules out request smuggling between `Content-Length` and
`Transfer-Encoding`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus

HEAD_END = b"\r\n\r\n"
_TOKEN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class HttpError(Exception):
    """The request cannot be served: answer `status` with `message` and close the connection."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class RequestHead:
    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]
    """(lower-case name, value) in arrival order."""
    content_length: int
    keep_alive: bool
    expect_continue: bool = False
    """The client waits for `100 Continue` before sending its body (`Expect: 100-continue`)."""


def parse_head(raw: bytes) -> RequestHead:
    """The request line and headers of `raw` (without the blank line); raises HttpError."""
    try:
        text = raw.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise HttpError(400, "request head is not latin-1") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise HttpError(400, "malformed request line")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(505, f"unsupported protocol {version[:20]!r}")
    if method not in _TOKEN_METHODS:
        raise HttpError(405, f"method {method[:20]!r} not allowed")
    if not target.startswith("/"):
        raise HttpError(400, "request target must be a path")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise HttpError(400, "malformed header line")
        headers.append((name.lower(), value.strip(" \t")))
    found = dict(headers)
    if "transfer-encoding" in found:
        raise HttpError(411, "transfer-encoded bodies are not accepted; send Content-Length")
    lengths = {value for name, value in headers if name == "content-length"}
    if len(lengths) > 1:
        raise HttpError(400, "conflicting Content-Length headers")
    content_length = 0
    if lengths:
        value = lengths.pop()
        # isdigit() alone accepts superscripts and other Unicode digits that int() refuses.
        if not (value.isascii() and value.isdigit()) or len(value) > 18:
            raise HttpError(400, "Content-Length must be a decimal number")
        content_length = int(value)
    expect = found.get("expect", "").lower()
    if expect and expect != "100-continue":
        raise HttpError(417, "only Expect: 100-continue is supported")
    connection = found.get("connection", "").lower()
    keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection
    return RequestHead(
        method,
        target,
        version,
        tuple(headers),
        content_length,
        keep_alive,
        expect_continue=bool(expect) and version == "HTTP/1.1",
    )


def response_head(status: int, headers: list[tuple[str, str]], body_length: int, keep_alive: bool) -> bytes:
    """The status line and headers of a response carrying `body_length` bytes."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [
        f"{name}: {value}"
        for name, value in headers
        if name.lower() not in ("content-length", "connection", "transfer-encoding")
    ]
    lines.append(f"Content-Length: {body_length}")
    lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
"""The interim answer to `Expect: 100-continue` (RFC 9110, section 10.1.1)."""


def problem_response(status: int, message: str, *, retry_after: int | None = None) -> bytes:
    """A complete `Status` response that closes the connection (the front end's own refusals)."""
    body = json.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status, "message": message},
        separators=(",", ":"),
    ).encode("utf-8")
    headers = [("Content-Type", "application/json")]
    if retry_after is not None:
        headers.append(("Retry-After", str(retry_after)))
    return response_head(status, headers, len(body), keep_alive=False) + body
