"""The front end's per-connection bounds, in-process (issue 23; docs/operations.md, "How the
webhook protects itself from its clients"): no reference cycle per failed handshake, lengths
and `Expect` handled, connections displaced oldest first at the cap, refusals counted and
summed in the log, bytes charged as they arrive, a minimum body rate.
"""

from __future__ import annotations

import asyncio.sslproto
import contextlib
import gc
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until
from webhook_testkit import ReadyView, StubValidation, shared_ca, write_cert

from py_engine.workloadspread.admission.service import Decision
from webhook.app import create_app
from webhook.frontend import Connection
from webhook.limits import ServerLimits
from webhook.metrics import WebhookMetrics
from webhook.server import TLSServer

HALF_CLIENT_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x11" * 32


class Stub:
    """An admission service that allows at once, or waits for `release` when `hold` is set."""

    def __init__(self) -> None:
        self.view = ReadyView()
        self.hold = False
        self.release = threading.Event()
        self.seen: list[str] = []

    def mutate_pod(self, request: Any) -> Decision:
        self.seen.append(str(request.get("uid")))
        if self.hold:
            self.release.wait(10)
        return Decision(True, "allowed")

    validate_pod = mutate_pod

    def mutate_pod_async(self, request: Any, answer: Any) -> None:
        answer(lambda: self.mutate_pod(request))

    validate_pod_async = mutate_pod_async


class Served:
    def __init__(self, server: TLSServer, stub: Stub) -> None:
        self.server = server
        self.stub = stub
        front = server.front
        assert front is not None
        self.front = front
        self.port = server.port

    def tls(self, timeout: float = 5.0) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return ssl.create_default_context(cadata=shared_ca().cert_pem).wrap_socket(
            raw, server_hostname="127.0.0.1"
        )


def start(tmp_path: Path, **limits: Any) -> Served:
    cert, key = write_cert(tmp_path)
    stub = Stub()
    app = create_app(stub, StubValidation(), metrics=WebhookMetrics())  # type: ignore[arg-type]
    server = TLSServer(
        app, cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=4, limits=ServerLimits(**limits)
    ).start()
    return Served(server, stub)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    running = start(tmp_path, handshake_timeout=0.5, header_timeout=2.0, body_timeout=5.0)
    try:
        yield running
    finally:
        running.stub.release.set()
        running.server.stop()


def read_all(sock: ssl.SSLSocket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionError, ssl.SSLError, TimeoutError):
        pass
    return data


def closed(sock: socket.socket) -> bool:
    return sock.recv(1) == b""


def live(kind: type) -> int:
    return sum(isinstance(obj, kind) for obj in gc.get_objects())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["timed-out", "half-hello-timed-out", "reset", "completed-request"])
def test_failed_handshakes_leave_no_protocol_alive_without_the_collector(served: Served, how: str) -> None:
    attempts = 40
    gc.collect()
    gc.disable()
    try:
        before = (live(asyncio.sslproto.SSLProtocol), live(Connection))
        for _ in range(attempts):
            if how == "completed-request":
                with served.tls() as client:
                    client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    assert read_all(client).startswith(b"HTTP/1.1 200")
                continue
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            if how != "timed-out":
                sock.sendall(HALF_CLIENT_HELLO)
            if how == "reset":
                wait_until(lambda: served.front.handshaking, 5, "the handshake started")
                sock.close()
            else:
                wait_until(partial(closed, sock), 5, "closed at the handshake deadline")
                sock.close()
        wait_until(lambda: not served.front.connections, 5, "every connection forgotten")
        after = wait_until(
            lambda: (
                (live(asyncio.sslproto.SSLProtocol) <= before[0] and live(Connection) <= before[1])
                and (live(asyncio.sslproto.SSLProtocol), live(Connection))
            ),
            5,
            "protocol objects freed by reference counting",
        )
        assert after[0] <= before[0] and after[1] <= before[1]
    finally:
        gc.enable()


def exchange(served: Served, data: bytes, timeout: float = 5.0) -> bytes:
    with served.tls(timeout) as sock:
        sock.sendall(data)
        return read_all(sock)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("length", ["\u00b2", "1\u00b9", "-1", "0x10", "1 2", ""])
def test_a_malformed_content_length_gets_400(served: Served, length: str) -> None:
    answer = exchange(
        served, f"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode("latin-1")
    )  # a superscript is one latin-1 byte, as an attacker sends it
    assert answer.startswith(b"HTTP/1.1 400"), answer[:80]
    assert b"Content-Length" in answer


@pytest.mark.timeout(20)
def test_expect_100_continue_is_answered_before_the_body(served: Served) -> None:
    body = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":{}}}'
    with served.tls(timeout=2) as sock:
        sock.sendall(
            f"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
            "Content-Type: application/json\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n".encode()
        )
        interim = sock.recv(65536)  # a 2 s socket timeout fails the test if nothing comes
        assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        answer = interim[len(b"HTTP/1.1 100 Continue\r\n\r\n") :] + read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:80]
    refused = exchange(
        served, b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: magic\r\n\r\n"
    )
    assert refused.startswith(b"HTTP/1.1 417")


@pytest.mark.timeout(30)
def test_at_the_cap_the_oldest_connection_without_a_request_makes_room(tmp_path: Path) -> None:
    running = start(tmp_path, handshake_timeout=10.0, header_timeout=10.0, max_connections=4, peer_share=1.0)
    try:
        idle = [socket.create_connection(("127.0.0.1", running.port), timeout=5) for _ in range(4)]
        wait_until(lambda: len(running.front.connections) == 4, 5, "four connections held")
        answer = exchange(running, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200")
        assert idle[0].recv(1) == b""  # the oldest one was closed to admit the new client
        assert running.front.stats.evicted_connections >= 1
        for sock in idle:
            sock.close()
    finally:
        running.server.stop()


@pytest.mark.timeout(30)
def test_at_the_cap_a_peer_holding_its_share_is_refused_and_another_peer_gets_in(tmp_path: Path) -> None:
    running = start(tmp_path, handshake_timeout=10.0, max_connections=4, peer_share=0.5)

    def from_other_peer() -> socket.socket:
        sock = socket.socket()
        sock.settimeout(5)
        sock.bind(("127.0.0.2", 0))  # another loopback address: another peer
        sock.connect(("127.0.0.1", running.port))
        return sock

    try:
        idle = [from_other_peer() for _ in range(4)]  # below the cap a peer may take every slot
        wait_until(lambda: len(running.front.connections) == 4, 5, "four connections held")
        with running.tls() as fresh:  # 127.0.0.1 displaces 127.0.0.2's oldest, and stays
            fresh.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert fresh.recv(65536).startswith(b"HTTP/1.1 200")
            assert idle[0].recv(1) == b""
            extra = from_other_peer()  # at the cap, 127.0.0.2 holds more than its share: refused
            assert extra.recv(1) == b""
        assert running.front.stats.refused_connections == 1 and running.front.stats.evicted_connections == 1
        for sock in [*idle, extra]:
            sock.close()
    finally:
        running.server.stop()


@pytest.mark.timeout(30)
def test_refused_connections_are_counted_and_logged_once_per_interval(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="webhook")
    running = start(tmp_path, max_connections=2, peer_share=1.0)
    running.stub.hold = True
    body = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":{}}}'
    busy = [running.tls() for _ in range(2)]
    try:
        for sock in busy:  # both answering a request: nothing may be displaced
            sock.sendall(
                f"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
        wait_until(lambda: running.front.pending == 2, 5, "two requests running")
        refused = 30
        for _ in range(refused):
            extra = socket.create_connection(("127.0.0.1", running.port), timeout=5)
            assert extra.recv(1) == b""
            extra.close()
        wait_until(lambda: running.front.stats.refused_connections == refused, 5, "every refusal counted")
        lines = [r.getMessage() for r in caplog.records if "connections refused" in r.getMessage()]
        assert 1 <= len(lines) <= 2, lines  # the first at once; the rest summed at the interval's end
        assert "connections refused: 1" in lines[0]
    finally:
        running.stub.release.set()
        for sock in busy:
            sock.close()
        running.server.stop()


@pytest.mark.timeout(20)
def test_announced_bytes_are_not_charged_and_a_stalled_body_is_cut(served: Served) -> None:
    with served.tls() as sock:
        sock.sendall(
            b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Length: 3000000\r\n\r\n" + b" " * 1000
        )
        wait_until(lambda: any(c.state == "body" for c in served.front.connections), 5, "body started")
        assert served.front.stats.inflight_bytes <= 1000  # what arrived, not what was announced
        started = time.monotonic()
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408") and b"slower than" in answer
    assert time.monotonic() - started < 3.0  # the rate check, long before the 5 s body deadline
    assert served.front.stats.slow_bodies == 1
    wait_until(lambda: served.front.stats.inflight_bytes == 0, 5, "bytes released")


@pytest.mark.timeout(20)
def test_one_peer_holds_at_most_its_share_of_the_in_flight_bytes(tmp_path: Path) -> None:
    running = start(tmp_path, max_body_bytes=1024 * 1024, max_inflight_bytes=2 * 1024 * 1024, peer_share=0.5)
    socks = [running.tls() for _ in range(3)]
    try:
        for sock in socks:
            sock.sendall(b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n\r\n")
        statuses = []
        for sock in socks:
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                sock.sendall(b" " * 600_000)
        wait_until(
            lambda: running.front.stats.refused_requests.get(503, 0) >= 1,
            5,
            "a 503 for the peer over its share",
        )
        assert running.front.stats.peak_inflight_bytes <= 1024 * 1024 + 256 * 1024
        statuses.append(running.front.stats.refused_requests.get(503, 0))
        assert statuses[0] >= 1
    finally:
        for sock in socks:
            sock.close()
        running.server.stop()


def large_review(uid: str, size: int = 1_100_000) -> bytes:
    body = (
        b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",'
        b'"operation":"CREATE","object":{"metadata":{}}}}' % uid.encode()
    )
    head = (
        b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n" % size
    )
    return head + b" " * (size - len(body)) + body


@pytest.mark.timeout(30)
def test_the_large_body_slot_is_taken_in_turn_by_peer(tmp_path: Path) -> None:
    running = start(tmp_path)
    running.stub.hold = True

    def from_peer(address: str) -> ssl.SSLSocket:
        raw = socket.socket()
        raw.settimeout(10)
        raw.bind((address, 0))
        raw.connect(("127.0.0.1", running.port))
        return ssl.create_default_context(cadata=shared_ca().cert_pem).wrap_socket(
            raw, server_hostname="127.0.0.1"
        )

    socks = []
    try:
        for address, uid, waiting in (("127.0.0.2", "a1", 0), ("127.0.0.2", "a2", 1), ("127.0.0.1", "b1", 2)):
            sock = from_peer(address)
            socks.append(sock)
            sock.sendall(large_review(uid))
            if waiting:
                wait_until(
                    partial(lambda n: len(running.front.large_waiting) == n, waiting), 10, f"{uid} waiting"
                )
            else:
                wait_until(lambda: running.stub.seen == ["a1"], 10, "a1 being answered")
        running.stub.release.set()
        for sock in socks:
            assert read_all(sock).startswith(b"HTTP/1.1 200")
        # Peer 127.0.0.1's request went before 127.0.0.2's second: one peer cannot keep the slot.
        assert running.stub.seen == ["a1", "b1", "a2"]
    finally:
        running.stub.release.set()
        for sock in socks:
            sock.close()
        running.server.stop()
