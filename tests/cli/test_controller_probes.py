"""`spreadgate controller --metrics-port`: `/metrics` is the Manager's body, `/healthz` answers
while the process serves, `/readyz` is 503 until the watch caches have their first lists."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from py_engine.cli.controller import _serve_metrics

pytestmark = pytest.mark.timeout(30)


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_readyz_follows_the_caches_and_healthz_does_not() -> None:
    synced = [False]
    server = _serve_metrics("127.0.0.1", 0, lambda: "m_total 1\n", lambda: synced[0])
    port = server.server_address[1]
    try:
        assert get(port, "/readyz") == (503, "caches not synced\n")
        assert get(port, "/healthz") == (200, "ok\n")
        assert get(port, "/metrics") == (200, "m_total 1\n")
        synced[0] = True
        assert get(port, "/readyz") == (200, "ok\n")
        assert get(port, "/other")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
