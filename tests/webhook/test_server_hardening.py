"""The HTTPS front end under hostile clients (issue 13): nobody can stall the webhook.

Each test attacks a real `TLSServer` on loopback (the real Flask app over a stub
admission service) while a fresh client keeps asking `/healthz` and
`/mutate/pods`; every answer must come within `PROBE_BUDGET`. Attack loops are
bounded in count and time; waits poll with a deadline.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from attack_kit import review as attack_review
from polling import wait_until
from webhook_testkit import AnswersAtOnce, StubValidation, shared_ca, write_cert

from py_engine.workloadspread.admission.service import Decision
from webhook.app import create_app
from webhook.limits import MIB, ServerLimits
from webhook.metrics import WebhookMetrics
from webhook.server import TLSServer

PROBE_BUDGET = 1.0
WORKERS = 4
LIMITS = ServerLimits(
    handshake_timeout=1.5, header_timeout=1.5, body_timeout=3.0, idle_timeout=5.0, max_inflight_bytes=8 * MIB
)
RSS_GROWTH_BOUND = 320 * MIB
"""Peak RSS growth allowed while 16 clients post 2.9 MiB reviews at once (docs/security.md)."""


class StubService(AnswersAtOnce):
    """Answers like the real service, without a cluster: the server is under test here."""

    def mutate_pod(self, request: dict[str, Any]) -> Decision:
        return Decision(True, "allowed")

    def validate_pod(self, request: dict[str, Any]) -> Decision:
        return Decision(True, "allowed")


class Served:
    def __init__(self, server: TLSServer, ca_pem: str) -> None:
        self.server = server
        self.ca_pem = ca_pem
        self.port = server.port

    def context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cadata=self.ca_pem)
        return ctx

    def tls(self, ctx: ssl.SSLContext | None = None, timeout: float = 5.0) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return (ctx or self.context()).wrap_socket(raw, server_hostname="127.0.0.1")

    def request(self, method: str, path: str, body: bytes = b"", timeout: float = 5.0) -> tuple[int, bytes]:
        """One request on a fresh connection: (status, body)."""
        with self.tls(timeout=timeout) as sock:
            head = (
                f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode()
            sock.sendall(head + body)
            return read_response(sock)


def read_response(sock: ssl.SSLSocket) -> tuple[int, bytes]:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def review(uid: str = "u-1", obj: Any = None) -> bytes:
    return attack_review(uid, obj)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    cert, key = write_cert(tmp_path)
    app = create_app(StubService(), StubValidation(), metrics=WebhookMetrics())  # type: ignore[arg-type]
    server = TLSServer(
        app, cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=WORKERS, limits=LIMITS
    ).start()
    try:
        yield Served(server, shared_ca().cert_pem)
    finally:
        server.stop()


def probe(served: Served) -> float:
    """A fresh client's /healthz and /mutate/pods; the slower answer's seconds."""
    slowest = 0.0
    for method, path, body in (("GET", "/healthz", b""), ("POST", "/mutate/pods", review())):
        started = time.monotonic()
        status, _ = served.request(method, path, body, timeout=PROBE_BUDGET * 3)
        elapsed = time.monotonic() - started
        assert status == 200, f"{path} answered {status}"
        assert elapsed < PROBE_BUDGET, f"{path} took {elapsed:.2f} s under attack"
        slowest = max(slowest, elapsed)
    return slowest


def probe_while(served: Served, attacking: Callable[[], bool], seconds: float, max_probes: int = 200) -> int:
    """Probe until `attacking()` is false or `seconds` pass (and at least 3 times); the probe count."""
    deadline = time.monotonic() + seconds
    count = 0
    while count < max_probes and (count < 3 or (attacking() and time.monotonic() < deadline)):
        probe(served)
        count += 1
    return count


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except (ConnectionResetError, ssl.SSLError):
        return True


@pytest.mark.timeout(30)
def test_idle_plain_tcp_connections_neither_stall_others_nor_stay(served: Served) -> None:
    idle = [socket.create_connection(("127.0.0.1", served.port), timeout=0.05) for _ in range(50)]
    try:
        # Past the handshake deadline, so the probes overlap the idle connections' whole life.
        probes = probe_while(served, lambda: True, LIMITS.handshake_timeout + 0.5)
        assert probes >= 3
        for sock in idle:
            wait_until(partial(closed_by_server, sock), LIMITS.handshake_timeout + 5, "idle socket closed")
        wait_until(
            lambda: served.server.front is not None and not served.server.front.connections,
            5,
            "connection count back to zero",
        )
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.timeout(40)
def test_slow_header_drip_from_more_clients_than_workers(served: Served) -> None:
    clients = WORKERS * 10
    stop = threading.Event()
    cut_off: list[int] = []
    lock = threading.Lock()

    def drip() -> None:
        try:
            with served.tls(timeout=10) as sock:
                line = b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
                for byte in line:  # one byte every 0.2 s, far slower than the header deadline allows
                    sock.sendall(bytes([byte]))
                    if stop.wait(0.2):
                        return
                raise AssertionError("the server let a dripping head run past its deadline")
        except (ConnectionError, ssl.SSLError, TimeoutError, OSError):
            with lock:
                cut_off.append(1)

    threads = [threading.Thread(target=drip, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    try:
        wait_until(
            lambda: served.server.front is not None and len(served.server.front.connections) >= clients,
            10,
            "every dripping client connected",
        )
        probe_while(served, lambda: len(cut_off) < clients, LIMITS.header_timeout + 5)
        wait_until(
            lambda: len(cut_off) == clients, LIMITS.header_timeout + 10, "every dripping client cut off"
        )
        assert served.server.front is not None and served.server.front.stats.timeouts >= clients
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)


def rss_bytes(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/self/status")


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc peak-RSS reset")
# In the stress variants since the issue-23 front end: 16 in-process clients that read only after
# sending their last byte sometimes meet the close that ends a refused upload's bounded drain
# instead of its 503 (about 1 run in 5 alone). The same attack runs in the default suite as
# tests/webhook/test_attacks.py::test_attack_short[large-bodies], from a separate process.
@pytest.mark.skipif(
    os.environ.get("SPREADGATE_STRESS") != "1",
    reason="set SPREADGATE_STRESS=1 (in-process clients race the drain; see the comment)",
)
@pytest.mark.timeout(60)
def test_concurrent_large_bodies_stay_within_the_memory_bound(served: Served) -> None:
    # 2.9 MiB of small objects, the costliest shape to decode (many Python objects per byte).
    labels = {f"k{i:06d}": "v" for i in range(180_000)}
    body = review(obj={"metadata": {"labels": labels}})
    assert 2.5 * MIB < len(body) < 3 * MIB
    baseline = rss_bytes("VmRSS")
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")  # reset the peak (VmHWM) to the current RSS
    statuses: list[int] = []
    lock = threading.Lock()

    def post() -> None:
        try:
            status, _ = served.request("POST", "/mutate/pods", body, timeout=30)
        except (ConnectionError, ssl.SSLError, OSError):
            status = -1
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=post, daemon=True) for _ in range(16)]
    for thread in threads:
        thread.start()
    probe_while(served, lambda: len(statuses) < len(threads), 30)
    for thread in threads:
        thread.join(30)
    peak = rss_bytes("VmHWM")
    assert len(statuses) == 16 and set(statuses) <= {200, 503}, statuses
    assert statuses.count(200) >= 1
    assert peak - baseline < RSS_GROWTH_BOUND, f"peak RSS grew by {(peak - baseline) / MIB:.0f} MiB"
    front = served.server.front
    assert front is not None and front.stats.peak_inflight_bytes <= LIMITS.max_inflight_bytes
    wait_until(lambda: front.stats.inflight_bytes == 0, 5, "in-flight bytes released")


@pytest.mark.timeout(20)
def test_a_body_over_3_mib_is_refused_before_it_is_read(served: Served) -> None:
    with served.tls() as sock:
        started = time.monotonic()
        sock.sendall(
            b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % (3 * MIB + 1)
        )
        status, body = read_response(sock)
        assert time.monotonic() - started < PROBE_BUDGET
    assert status == 413 and b"exceeds" in body
    # Exactly at the limit is read (and then judged by the app).
    status, _ = served.request("POST", "/mutate/pods", b" " * (3 * MIB - len(review())) + review())
    assert status == 200


@pytest.mark.timeout(20)
def test_a_deeply_nested_review_gets_400_with_a_message(served: Served) -> None:
    nested: Any = {}
    for _ in range(600):
        nested = {"a": nested}
    status, body = served.request("POST", "/mutate/pods", review(obj={"metadata": {}, "spec": nested}))
    assert status == 400
    message = json.loads(body)["message"]
    assert "nested deeper than" in message and "RecursionError" not in message


@pytest.mark.timeout(20)
def test_each_client_disconnect_is_one_log_line_without_traceback(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="webhook")
    front = served.server.front
    assert front is not None
    cuts = 5
    for _ in range(cuts):
        sock = served.tls()
        sock.sendall(b'POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a"')
        wait_until(lambda: any(c.state == "body" for c in front.connections), 5, "body started")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # reset mid-body
    wait_until(lambda: front.stats.disconnects == cuts, 5, "every disconnect noticed")
    records = [r for r in caplog.records if r.name.startswith("webhook")]
    assert len([r for r in records if "client 127.0.0.1" in r.getMessage()]) == cuts
    assert not [r for r in records if r.exc_info or "Traceback" in r.getMessage()]
    assert probe(served) < PROBE_BUDGET


@pytest.mark.timeout(20)
def test_tls12_offers_only_aead_suites_and_tls13_is_unaffected(served: Served) -> None:
    def handshake(ctx: ssl.SSLContext) -> tuple[str, str]:
        with served.tls(ctx) as sock:
            cipher = sock.cipher()
            assert cipher is not None
            return str(sock.version()), cipher[0]

    cbc = served.context()
    cbc.maximum_version = ssl.TLSVersion.TLSv1_2
    cbc.set_ciphers("HIGH:!AESGCM:!CHACHA20:!aNULL")
    with pytest.raises(ssl.SSLError):
        handshake(cbc)
    tls12 = served.context()
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    version, cipher = handshake(tls12)
    assert version == "TLSv1.2" and cipher.startswith("ECDHE-") and ("GCM" in cipher or "CHACHA20" in cipher)
    version, cipher = handshake(served.context())
    assert version == "TLSv1.3" and cipher.startswith("TLS_")


@pytest.mark.timeout(20)
def test_keep_alive_and_pipelined_requests_are_answered_in_order(served: Served) -> None:
    with served.tls() as sock:
        one = review("first")
        two = review("second")
        post = (
            "POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: {}\r\n\r\n"
        )
        sock.sendall(post.format(len(one)).encode() + one + post.format(len(two)).encode() + two)
        received = b""
        deadline = time.monotonic() + 5
        while received.count(b'"uid"') < 2 and time.monotonic() < deadline:
            received += sock.recv(65536)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status, body = read_response(sock)
    assert received.count(b"HTTP/1.1 200 OK") == 2 and received.index(b"first") < received.index(b"second")
    assert status == 200 and body == b"ok\n"


@pytest.mark.timeout(30)
def test_connections_beyond_the_limit_displace_the_oldest_idle_ones(tmp_path: Path) -> None:
    cert, key = write_cert(tmp_path)
    limits = ServerLimits(handshake_timeout=1.0, max_connections=4, peer_share=1.0)
    app = create_app(StubService(), StubValidation(), metrics=WebhookMetrics())  # type: ignore[arg-type]
    server = TLSServer(
        app, cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=2, limits=limits
    ).start()
    served = Served(server, shared_ca().cert_pem)
    idle = [socket.create_connection(("127.0.0.1", served.port), timeout=2) for _ in range(4)]
    try:
        front = server.front
        assert front is not None
        wait_until(lambda: len(front.connections) == 4, 5, "four connections held")
        assert probe(served) < PROBE_BUDGET  # a fresh client always gets in: the oldest make room
        assert front.stats.evicted_connections >= 1 and front.stats.refused_connections == 0
        wait_until(lambda: not front.connections, limits.handshake_timeout + 5, "idle connections closed")
    finally:
        for sock in idle:
            sock.close()
        server.stop()
