"""A tiny HTTPS AdmissionReview server on loopback, for tests and benchmarks.

It lets the emulator's admission path be exercised for real (TLS with a CA
bundle, AdmissionReview v1 round trips, JSONPatch responses, denials,
warnings, timeouts) without the Spreadgate webhook. `decide(request)` returns
the `response` fields (`allowed`, `patch` as a list of JSONPatch operations,
`status`, `warnings`); the default allows everything unchanged.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from py_engine.sim.interface import JSON
from py_engine.sim.threaded import ThreadedServer
from py_engine.sim.tls import CertificateAuthority
from py_engine.sim.tls_http import TLSThreadingHTTPServer

Decide = Callable[[JSON], JSON]


def allow_all(request: JSON) -> JSON:
    return {"allowed": True}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    server: _StubServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        review = json.loads(self.rfile.read(length))
        request = review["request"]
        self.server.calls.append(request)
        result = dict(self.server.decide(request))
        patch = result.pop("patch", None)
        response: JSON = {"uid": request["uid"], **result}
        if patch is not None:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        body = json.dumps(
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        ).encode()
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )


class _StubServer(TLSThreadingHTTPServer):
    def __init__(self, decide: Decide, ssl_ctx: ssl.SSLContext) -> None:
        self.decide = decide
        self.calls: deque[JSON] = deque(maxlen=10_000)
        super().__init__(("127.0.0.1", 0), _Handler, ssl_ctx, thread_name="webhook-stub-conn")


class WebhookStub(ThreadedServer):
    """A running stub. `url` is the base URL; `ca_bundle` the base64 CA for
    `clientConfig.caBundle`; `calls` the AdmissionReview requests received.
    The certificate covers 127.0.0.1, localhost and any `service_names`
    (e.g. `spreadgate-webhook.spreadgate-system.svc`)."""

    _server: _StubServer

    def __init__(
        self,
        decide: Decide = allow_all,
        *,
        ca: CertificateAuthority | None = None,
        service_names: tuple[str, ...] = (),
    ) -> None:
        self.ca = ca or CertificateAuthority("webhook-stub-ca")
        cert = self.ca.issue(dns_names=["localhost", *service_names], ip_addresses=["127.0.0.1"])
        self._server = _StubServer(decide, cert.server_context())
        self.port = int(self._server.server_address[1])
        self.url = f"https://127.0.0.1:{self.port}"
        self.ca_bundle = base64.b64encode(self.ca.cert_pem.encode()).decode()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True, name="webhook-stub"
        )
        self._thread.start()

    @property
    def calls(self) -> deque[JSON]:
        return self._server.calls

    def set_decide(self, decide: Decide) -> None:
        self._server.decide = decide


def webhook_configuration(
    name: str,
    stub_url: str,
    ca_bundle: str,
    *,
    mutating: bool = True,
    rules: list[JSON] | None = None,
    path: str = "/admit",
    **webhook: Any,
) -> JSON:
    """A (Mutating|Validating)WebhookConfiguration with one webhook calling `stub_url + path`."""
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    wh: JSON = {
        "name": f"{name}.spreadgate.dev",
        "clientConfig": {"url": stub_url + path, "caBundle": ca_bundle},
        "rules": rules
        or [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "failurePolicy": "Fail",
        "timeoutSeconds": 5,
    }
    wh.update(webhook)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [wh],
    }


def main() -> None:
    """Run an allow-all stub in this process: prints `{"url", "ca_bundle"}` as one JSON
    line, then serves until stdin closes (benchmarks run it as a subprocess so its
    CPU is not mixed with the API server's)."""
    import sys

    stub = WebhookStub()
    try:
        print(json.dumps({"url": stub.url, "ca_bundle": stub.ca_bundle}), flush=True)
        sys.stdin.read()
    finally:
        stub.stop()


if __name__ == "__main__":
    main()
