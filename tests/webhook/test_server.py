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


def test_servers_with_reuse_port_share_one_port_and_the_kernel_spreads_connections(
    tmp_path: Path,
) -> None:
    """`reuse_port`: a second server listens on the first one's port (SO_REUSEPORT) and new
    connections reach both (the replica benchmark's one address, docs/scale.md); a server
    without it still fails on a busy port."""
    ca = CertificateAuthority("ca")
    cert, key = write_cert(tmp_path, ca)
    servers: list[TLSServer] = []
    try:
        for n in range(2):
            app = Flask(f"t{n}")
            app.add_url_rule("/who", view_func=lambda n=n: f"server-{n}")
            port = servers[0].port if servers else 0
            servers.append(
                TLSServer(
                    app, cert_file=cert, key_file=key, host="127.0.0.1", port=port, threads=2, reuse_port=True
                ).start()
            )
        assert servers[0].port == servers[1].port
        seen: set[str] = set()
        for _ in range(200):  # each a new connection: the kernel picks a listener per connection
            http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_cert_data=ca.cert_pem, retries=False)
            try:
                seen.add(http.request("GET", servers[0].url + "/who", timeout=5).data.decode())
            finally:
                http.clear()
            if len(seen) == 2:
                break
        assert seen == {"server-0", "server-1"}
        alone = TLSServer(Flask("t"), cert_file=cert, key_file=key, host="127.0.0.1", port=servers[0].port)
        try:
            alone.start()
            raise AssertionError("a server without reuse_port must not bind a busy port")
        except OSError:
            pass
    finally:
        for server in servers:
            server.stop()
