"""The TLS server: serves the app over HTTPS and picks up a rotated certificate."""

from __future__ import annotations

import ssl
from pathlib import Path

import urllib3
from flask import Flask
from polling import wait_until
from webhook_testkit import write_cert

from py_engine.sim.tls import CertificateAuthority
from webhook.server import TLSServer


def get(url: str, ca_pem: str) -> int:
    http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_cert_data=ca_pem, retries=False)
    try:
        return http.request("GET", url + "/healthz", timeout=5).status
    finally:
        http.clear()


def test_serves_tls_and_reloads_a_rotated_certificate(tmp_path: Path) -> None:
    app = Flask("t")
    app.add_url_rule("/healthz", view_func=lambda: "ok")
    first, second = CertificateAuthority("first"), CertificateAuthority("second")
    cert, key = write_cert(tmp_path, first)
    server = TLSServer(
        app, cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=4, reload_interval=0.05
    ).start()
    try:
        assert get(server.url, first.cert_pem) == 200
        write_cert(tmp_path, second)
        wait_until(lambda: server.reloader.reloads == 1, 5, "certificate reload")
        assert get(server.url, second.cert_pem) == 200
        try:
            get(server.url, first.cert_pem)
            raise AssertionError("the old CA must no longer verify")
        except urllib3.exceptions.SSLError:
            pass
        except urllib3.exceptions.MaxRetryError as exc:
            assert isinstance(exc.reason, (urllib3.exceptions.SSLError, ssl.SSLError))
        # A broken pair keeps the current certificate.
        Path(key).write_text("garbage")
        wait_until(lambda: server.reloader.failures >= 1, 5, "failed reload noticed")
        assert get(server.url, second.cert_pem) == 200
    finally:
        server.stop()
