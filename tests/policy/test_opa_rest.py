"""The OPA REST backend against a loopback server that answers like OPA's Data API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from opa_kit import reply_json

from py_engine.policy import PolicyError, create_engine
from py_engine.policy.opa_rest import OpaRestEngine, rule_to_data_path

# Recorded shape of OPA's answers: POST /v1/data/<path> {"input": ...}.
RECORDED = {
    "/v1/data/spreadgate/validation/violation": {
        "result": [
            {"msg": "spec.subsets[0].name: Invalid value", "details": {"field": "spec.subsets[0].name"}}
        ]
    },
    "/v1/data/spreadgate/validation/undefined_rule": {},
}


class FakeOpa(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpa.seen.append({"path": self.path, "body": body})
        if self.path not in RECORDED:
            self.send_response(404)
            self.end_headers()
            return
        reply_json(self, 200, RECORDED[self.path])

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def opa_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpa)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_rule_paths() -> None:
    assert rule_to_data_path("data.spreadgate.validation.violation") == "spreadgate/validation/violation"
    with pytest.raises(PolicyError):
        rule_to_data_path("spreadgate.validation")


def test_query_sends_input_and_reads_result(opa_url: str) -> None:
    engine = create_engine(opa_url)
    try:
        assert isinstance(engine, OpaRestEngine)
        result = engine.evaluate("data.spreadgate.validation.violation", {"kind": "WorkloadSpread"})
        assert result[0]["details"]["field"] == "spec.subsets[0].name"
        assert FakeOpa.seen[-1]["body"] == {"input": {"kind": "WorkloadSpread"}}
        assert engine.evaluate("data.spreadgate.validation.undefined_rule", {}) is None
        with pytest.raises(PolicyError, match="404"):
            engine.evaluate("data.other.rule", {})
    finally:
        engine.close()


def test_unreachable_server_is_a_policy_error() -> None:
    engine = OpaRestEngine("http://127.0.0.1:9", timeout_seconds=0.5)
    try:
        with pytest.raises(PolicyError, match="unreachable"):
            engine.evaluate("data.x.y", {})
    finally:
        engine.close()
