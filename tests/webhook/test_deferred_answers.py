"""Answers given later (`webhook.wsgi_call.DEFER_KEY`): the front end writes a deferred answer
whenever it comes, from any thread, without a worker waiting for it; the Flask app answers an
admission the same way whether it is deferred or not.
"""

from __future__ import annotations

import json
import queue
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from metrics_kit import value
from polling import wait_until
from webhook_testkit import AnswersAtOnce, StubValidation, shared_ca, write_cert

from py_engine.workloadspread.admission.service import Answer, Decision
from webhook.app import create_app
from webhook.metrics import WebhookMetrics
from webhook.server import TLSServer
from webhook.wsgi_call import DEFER_KEY, Reply

pytestmark = pytest.mark.timeout(60)

Held = queue.SimpleQueue[Reply]


def deferring_app(held: Held) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    """/later: the reply goes to `held` (the test answers); /at-once: replies before returning;
    /crash: defers, then raises; /twice: replies twice; anything else: an ordinary answer."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ["PATH_INFO"]
        if path != "/plain":
            reply: Reply = environ[DEFER_KEY]()
            if path == "/later":
                held.put(reply)
            elif path == "/at-once":
                reply(200, [("Content-Type", "text/plain")], b"at once")
            elif path == "/twice":
                reply(200, [("Content-Type", "text/plain")], b"first")
                reply(200, [("Content-Type", "text/plain")], b"second")
            elif path == "/crash":
                raise RuntimeError("after deferring")
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"plain"]

    return app


class Client:
    def __init__(self, port: int) -> None:
        self.port = port
        self.context = ssl.create_default_context(cadata=shared_ca().cert_pem)

    def connect(self, timeout: float = 5.0) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return self.context.wrap_socket(raw, server_hostname="127.0.0.1")

    @staticmethod
    def send(sock: ssl.SSLSocket, path: str, keep_alive: bool = False) -> None:
        connection = "keep-alive" if keep_alive else "close"
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: {connection}\r\n\r\n".encode())

    @staticmethod
    def read_one(sock: ssl.SSLSocket) -> tuple[int, bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, "connection closed before an answer"
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(
            next(
                line.split(b":")[1]
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
        )
        while len(body) < length:
            body += sock.recv(65536)
        return int(head.split(b" ", 2)[1]), body

    def get(self, path: str) -> tuple[int, bytes]:
        with self.connect() as sock:
            self.send(sock, path)
            return self.read_one(sock)


@pytest.fixture
def held() -> Held:
    return queue.SimpleQueue()


@pytest.fixture
def server(tmp_path: Path, held: Held) -> Iterator[TLSServer]:
    cert, key = write_cert(tmp_path)
    running = TLSServer(
        deferring_app(held), cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=1
    ).start()
    try:
        yield running
    finally:
        running.stop()


def test_a_deferred_answer_holds_no_worker_and_arrives_whenever_it_comes(
    server: TLSServer, held: Held
) -> None:
    client = Client(server.port)
    with client.connect() as waiting:
        client.send(waiting, "/later")
        reply = held.get(timeout=5)
        # The only worker is free again: other requests are answered meanwhile.
        assert client.get("/plain") == (200, b"plain")
        assert client.get("/at-once") == (200, b"at once")
        threading.Thread(target=reply, args=(200, [("Content-Type", "text/plain")], b"later")).start()
        assert client.read_one(waiting) == (200, b"later")
    front = server.front
    assert front is not None
    wait_until(lambda: front.pending == 0 and front.stats.inflight_bytes == 0, 5, "the front end to settle")


def test_keep_alive_goes_on_after_a_deferred_answer(server: TLSServer, held: Held) -> None:
    client = Client(server.port)
    with client.connect() as sock:
        client.send(sock, "/later", keep_alive=True)
        held.get(timeout=5)(200, [], b"one")
        assert client.read_one(sock) == (200, b"one")
        client.send(sock, "/at-once", keep_alive=True)
        assert client.read_one(sock) == (200, b"at once")


def test_only_the_first_answer_counts_and_a_crash_after_deferring_is_a_500(server: TLSServer) -> None:
    client = Client(server.port)
    assert client.get("/twice") == (200, b"first")
    status, body = client.get("/crash")
    assert status == 500 and b"internal error" in body


def test_an_answer_for_a_client_that_left_is_dropped_and_frees_its_place(
    server: TLSServer, held: Held
) -> None:
    client = Client(server.port)
    sock = client.connect()
    client.send(sock, "/later")
    reply = held.get(timeout=5)
    sock.close()
    front = server.front
    assert front is not None
    wait_until(lambda: not front.connections, 5, "the server to see the client go")
    assert front.pending == 1  # still counted until answered
    reply(200, [], b"nobody reads this")
    wait_until(lambda: front.pending == 0, 5, "the late answer to settle the request")
    assert client.get("/plain") == (200, b"plain")


def test_answers_posted_inside_posts_held_reach_the_loop_together(server: TLSServer, held: Held) -> None:
    client = Client(server.port)
    front = server.front
    assert front is not None
    socks = [client.connect() for _ in range(3)]
    try:
        replies = []
        for sock in socks:
            client.send(sock, "/later")
            replies.append(held.get(timeout=5))
        answered = front.stats.answered
        with front.posts_held():
            for i, reply in enumerate(replies):
                reply(200, [], f"r{i}".encode())
            marker = threading.Event()  # the loop ran everything posted before it
            front.loop.call_soon_threadsafe(marker.set)
            assert marker.wait(5)
            assert front.stats.answered == answered
        assert [client.read_one(sock) for sock in socks] == [(200, b"r0"), (200, b"r1"), (200, b"r2")]
        assert front.stats.answered == answered + 3
    finally:
        for sock in socks:
            sock.close()


# ------------------------------------------------------------------ the Flask app, deferred


class LaterService(AnswersAtOnce):
    """Decides like a stub; the asynchronous form answers from another thread."""

    def __init__(self) -> None:
        self.view = self
        self.fail_before_answering = False

    def ready(self) -> bool:
        return True

    def mutate_pod(self, request: Any) -> Decision:
        return Decision(
            True,
            "patched",
            patch=[{"op": "add", "path": "/metadata/labels/x", "value": "y"}],
            audit={"workloadspread": "ws", "subset": "a"},
        )

    def validate_pod(self, request: Any) -> Decision:
        return Decision(True, "released", audit={"workloadspread": "ws", "subset": "a"})

    def mutate_pod_async(self, request: Any, answer: Answer) -> None:
        if self.fail_before_answering:
            raise RuntimeError("before answering")
        thread = threading.Thread(target=answer, args=(lambda: self.mutate_pod(request),))
        thread.start()
        thread.join(5)


def review() -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-7",
            "operation": "CREATE",
            "namespace": "default",
            "name": "p",
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "object": {"metadata": {}},
        },
    }


def deferred_post(client: Any, path: str) -> list[tuple[int, list[tuple[str, str]], bytes]]:
    replies: list[tuple[int, list[tuple[str, str]], bytes]] = []

    def defer() -> Reply:
        return lambda status, headers, body: replies.append((status, headers, body))

    client.post(path, json=review(), environ_base={DEFER_KEY: defer})
    return replies


def test_the_app_answers_the_same_deferred_or_not() -> None:
    service = LaterService()
    metrics = WebhookMetrics()
    client = create_app(service, StubValidation(), metrics=metrics).test_client()  # type: ignore[arg-type]
    for path in ("/mutate/pods", "/validate/pods"):
        direct = client.post(path, json=review())
        replies = deferred_post(client, path)
        assert len(replies) == 1
        status, headers, body = replies[0]
        assert status == 200 and ("Content-Type", "application/json") in headers
        assert json.loads(body) == direct.get_json()
    rendered = metrics.render()
    assert value(rendered, "spreadgate_webhook_requests_total", code="200", webhook="/mutate/pods") == 2
    assert (
        value(rendered, "spreadgate_webhook_decisions_total", outcome="patched", webhook="/mutate/pods") == 2
    )


def test_a_deferred_handler_that_raises_before_answering_gets_the_panic_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = LaterService()
    service.fail_before_answering = True
    client = create_app(service, StubValidation(), metrics=WebhookMetrics()).test_client()  # type: ignore[arg-type]
    replies = deferred_post(client, "/mutate/pods")
    assert len(replies) == 1
    answer = json.loads(replies[0][2])["response"]
    assert answer["uid"] == "u-7" and answer["allowed"] is False and answer["status"]["code"] == 500
    assert "before answering" in answer["status"]["message"]
    assert len([r for r in caplog.records if "handler crashed" in r.getMessage()]) == 1
