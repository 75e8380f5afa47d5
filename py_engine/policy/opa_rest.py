"""OPA backend: the REST Data API of an OPA server (e.g. a sidecar on localhost:8181).

`POST /v1/data/<package path>/<rule>` with `{"input": ...}` answers
`{"result": ...}`, or `{}` when the rule is undefined. The server loads the
same `policies/` tree (from a ConfigMap or bundle), so decisions match the
embedded backend; a contract test checks that against recorded exchanges.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import urllib3

from py_engine.policy.interface import PolicyError, normalise_result


def rule_to_data_path(rule: str) -> str:
    """`data.spreadgate.validation.violation` -> `spreadgate/validation/violation`."""
    parts = rule.split(".")
    if len(parts) < 2 or parts[0] != "data" or not all(parts[1:]):
        raise PolicyError(f"rule must be a data reference like data.pkg.rule, got {rule!r}")
    return "/".join(parts[1:])


class OpaRestEngine:
    """`PolicyEngine` that asks an OPA server; connections are pooled and reused."""

    def __init__(self, base_url: str, *, timeout_seconds: float = 2.0, pool_size: int = 16) -> None:
        self._base_url = base_url.rstrip("/")
        self._http = urllib3.PoolManager(
            maxsize=pool_size,
            timeout=urllib3.Timeout(total=timeout_seconds),
            retries=False,
        )

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        url = f"{self._base_url}/v1/data/{rule_to_data_path(rule)}"
        body = json.dumps({"input": input_document}).encode()
        try:
            response = self._http.request(
                "POST", url, body=body, headers={"Content-Type": "application/json"}
            )
        except urllib3.exceptions.HTTPError as exc:
            raise PolicyError(f"OPA at {self._base_url} unreachable: {exc}") from exc
        if response.status != 200:
            raise PolicyError(f"OPA answered {response.status} for {rule}: {response.data[:300]!r}")
        try:
            payload = json.loads(response.data)
        except ValueError as exc:
            raise PolicyError(f"OPA answered non-JSON for {rule}") from exc
        if not isinstance(payload, dict):
            raise PolicyError(f"OPA answered an unexpected document for {rule}")
        return normalise_result(payload.get("result"))

    def health(self, timeout: float = 1.0) -> str | None:
        """None when OPA answers `GET /health` with 200 within `timeout` seconds, else why not
        (the webhook's readiness check, webhook/readiness.py)."""
        try:
            response = self._http.request(
                "GET",
                f"{self._base_url}/health",
                timeout=urllib3.Timeout(total=timeout),
                preload_content=True,
            )
        except urllib3.exceptions.HTTPError as exc:
            return f"OPA at {self._base_url} unreachable: {exc}"
        if response.status != 200:
            return f"OPA at {self._base_url} answered {response.status} to GET /health"
        return None

    def close(self) -> None:
        self._http.clear()
