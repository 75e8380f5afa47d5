"""Every known attack on the webhook's network front end, against a real server process
(issue 23; docs/operations.md, "Threat model"): during each one a fresh client's `/healthz`
and `/mutate/pods` are answered 200 within 1 s on at least 95 % of probes, and the server's
RSS stays under 512 MiB.

Each attack has a short variant (seconds) in the default suite and a long one (the issue's
sizes, about a minute) behind SPREADGATE_STRESS=1. `SPREADGATE_ATTACK_SERVER=hypercorn`
runs the same attacks against hypercorn serving the same app (`benchmarks/compare_servers.py`).
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from attack_kit import (
    GOOD_SHARE,
    HALF_CLIENT_HELLO,
    RSS_BOUND,
    SERVER,
    Attack,
    Target,
    held,
    padded_review,
    post_head,
    review,
    run_attack,
    target,
)

LONG = os.environ.get("SPREADGATE_STRESS") == "1"

if SERVER == "hypercorn":
    pytest.importorskip("hypercorn", reason="SPREADGATE_ATTACK_SERVER=hypercorn needs hypercorn installed")


def unread_pipeline_then_junk(served: Target, stop: threading.Event, requests: int = 3000) -> None:
    """Finding 1: pipeline `GET /metrics` without reading the answers (a small receive buffer),
    then stream junk; reconnect whenever cut off."""
    pipeline = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * requests
    junk = b"J" * 65536
    deadline = time.monotonic() + 300
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            with served.tls(rcvbuf=4096, timeout=0.5) as sock:
                sock.sendall(pipeline)
                while not stop.is_set() and time.monotonic() < deadline:
                    try:
                        sock.sendall(junk)
                    except TimeoutError:
                        continue
        except (OSError, ssl.SSLError):
            stop.wait(0.01)


def never_finished_handshakes(served: Target, stop: threading.Event, count: int, half: bool) -> None:
    """Finding 2: `count` plain TCP connections (or half ClientHellos) held until the server
    closes them, and reopened at once."""

    def opener() -> socket.socket:
        sock = served.connect(timeout=2)
        if half:
            sock.sendall(HALF_CLIENT_HELLO)
        return sock

    held(served, stop, count, opener)


def aborted_handshakes(served: Target, stop: threading.Event, batch: int = 100) -> None:
    """Finding 2, fast: half a ClientHello then a close, about 1,000 a second: each is a failed
    handshake (paced: an unpaced loop measures the two shared cores, not the server's bounds)."""
    deadline = time.monotonic() + 300
    while not stop.is_set() and time.monotonic() < deadline:
        socks = []
        for _ in range(batch):
            try:
                sock = served.connect(timeout=2)
                sock.sendall(HALF_CLIENT_HELLO)
                socks.append(sock)
            except OSError:
                break
        stop.wait(0.02)  # let the server start their handshakes
        for sock in socks:
            sock.close()
        stop.wait(0.08)


def announced_never_sent(served: Target, stop: threading.Event) -> None:
    """Finding 3: eight heads announcing 1,048,575 bytes and one announcing 3,000,000, no body."""

    def opener(length: int) -> socket.socket:
        sock = served.tls(timeout=2)
        sock.sendall(post_head("/mutate/pods", length))
        return sock

    on_threads(
        [
            partial(held, served, stop, 8, partial(opener, 1_048_575)),
            partial(held, served, stop, 1, partial(opener, 3_000_000)),
        ]
    )


def idle_keep_alive(served: Target, stop: threading.Event, count: int) -> None:
    """Finding 4: `count` TLS connections that made one request and stay idle (keep-alive)."""

    def opener() -> socket.socket:
        sock = served.tls(timeout=2)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.recv(65536)
        return sock

    held(served, stop, count, opener)


def slow_loris(served: Target, stop: threading.Event, clients: int = 40) -> None:
    """Earlier: heads dripped one byte at a time by more clients than workers."""

    def drip() -> None:
        deadline = time.monotonic() + 300
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                with served.tls(timeout=2) as sock:
                    for byte in b"POST /mutate/pods HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 500:
                        sock.sendall(bytes([byte]))
                        if stop.wait(0.2):
                            return
            except (OSError, ssl.SSLError):
                stop.wait(0.05)

    on_threads([drip] * clients)


def large_bodies(served: Target, stop: threading.Event, clients: int = 16) -> None:
    """Earlier: many clients posting 2.9 MiB reviews of small objects at once, again and again."""
    labels = {f"k{i:06d}": "v" for i in range(180_000)}
    body = review(obj={"metadata": {"labels": labels}})
    on_threads([partial(post_repeatedly, served, stop, body, 10.0)] * clients)


def deep_nesting(served: Target, stop: threading.Event) -> None:
    """Earlier: reviews nested 600 deep (a recursion bomb for a naive decoder), one after another."""
    nested: Any = {}
    for _ in range(600):
        nested = {"a": nested}
    post_repeatedly(served, stop, review(obj={"metadata": {}, "spec": nested}), 2.0)


def post_repeatedly(served: Target, stop: threading.Event, body: bytes, timeout: float) -> None:
    """Post `body` to /mutate/pods on a fresh connection, read the answer's start, again until `stop`."""
    deadline = time.monotonic() + 300
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            with served.tls(timeout=timeout) as sock:
                sock.sendall(post_head("/mutate/pods", len(body)) + body)
                sock.recv(1024)
        except (OSError, ssl.SSLError):
            stop.wait(0.05)


def on_threads(jobs: list[Callable[[], None]]) -> None:
    """Run each job on its own thread and wait for all (each ends at its attack's `stop`)."""
    threads = [threading.Thread(target=job, daemon=True) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)


@dataclass(frozen=True)
class Case:
    attack: Attack
    seconds: float
    workers: int = 1
    limits: dict[str, Any] = field(default_factory=dict)
    large_probe: bool = False


SHORT = {
    "unread-pipeline-then-junk": Case(unread_pipeline_then_junk, 5, workers=3),
    "aborted-handshakes": Case(aborted_handshakes, 6),
    "never-finished-handshakes": Case(
        partial(never_finished_handshakes, count=500, half=True), 5, limits={"handshake_timeout": 0.5}
    ),
    "announced-bytes-never-sent": Case(announced_never_sent, 4, large_probe=True),
    "idle-keep-alive-at-the-cap": Case(partial(idle_keep_alive, count=80), 4, limits={"max_connections": 64}),
    "idle-plain-tcp": Case(
        partial(never_finished_handshakes, count=50, half=False), 3, limits={"handshake_timeout": 1.5}
    ),
    "slow-loris": Case(slow_loris, 4, limits={"header_timeout": 1.5}),
    "large-bodies": Case(partial(large_bodies, clients=8), 6),
    "deep-nesting": Case(deep_nesting, 3),
}
LONG_CASES = {
    "unread-pipeline-then-junk": Case(unread_pipeline_then_junk, 30, workers=4),
    "aborted-handshakes": Case(aborted_handshakes, 60, workers=2),
    "never-finished-handshakes": Case(partial(never_finished_handshakes, count=1100, half=False), 60),
    "half-client-hellos": Case(partial(never_finished_handshakes, count=1100, half=True), 60),
    "announced-bytes-never-sent": Case(announced_never_sent, 40, large_probe=True),
    "idle-keep-alive-at-the-cap": Case(partial(idle_keep_alive, count=1100), 70),
    "slow-loris": Case(partial(slow_loris, clients=200), 30),
    "large-bodies": Case(large_bodies, 30),
    "deep-nesting": Case(deep_nesting, 20),
}


def check(tmp_path: Path, name: str, case: Case) -> None:
    with target(tmp_path, case.limits) as served:
        outcome = run_attack(
            served,
            case.attack,
            case.seconds,
            workers=case.workers,
            large_probe=padded_review(1_200_000) if case.large_probe else None,
        )
    print(f"\n[{name}] {outcome.summary()}")  # read by benchmarks/compare_servers.py
    assert outcome.probes >= 5, outcome.summary()
    assert outcome.share >= GOOD_SHARE, outcome.summary()
    assert outcome.peak_rss < RSS_BOUND, outcome.summary()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("name", list(SHORT))
def test_attack_short(tmp_path: Path, name: str) -> None:
    check(tmp_path, name, SHORT[name])


@pytest.mark.stress
@pytest.mark.timeout(300)
@pytest.mark.skipif(not LONG, reason="set SPREADGATE_STRESS=1")
@pytest.mark.parametrize("name", list(LONG_CASES))
def test_attack_long(tmp_path: Path, name: str) -> None:
    check(tmp_path, name, LONG_CASES[name])
