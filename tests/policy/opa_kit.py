"""The fake OPA servers' answer: a JSON body with its length (http.server handlers)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def reply_json(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    """Sends `body` as JSON with `status` on `handler`'s connection."""
    payload = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)
