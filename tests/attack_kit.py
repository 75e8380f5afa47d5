"""The attack harness: a webhook front end in its own process, attacked from one loopback
address while a fresh client probes it from another (issue 23; docs/operations.md,
"Threat model").

`Target` starts `tests/attack_target.py` (the real Flask app over a stub service, behind
the webhook's own front end or hypercorn: `SPREADGATE_ATTACK_SERVER=hypercorn`) and samples
its RSS every 50 ms from /proc. `run_attack` runs an attack on threads for a bounded time
while `Probes` opens a fresh TLS connection every `PROBE_EVERY` seconds for `/healthz` and
another for `/mutate/pods`; it returns the share of probes answered 200 within
`PROBE_BUDGET` and the peak RSS. Attackers connect from 127.0.0.2 (another peer, as a
hostile pod is), probes from 127.0.0.1. Every attack loop is bounded in count and time.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webhook_testkit import shared_ca, write_cert

from benchmarks.common import close_stdin_process, resident_bytes
from benchmarks.kube_objects import admission_review, pod_create_request

MIB = 1024 * 1024
ATTACKER = "127.0.0.2"
PROBER = "127.0.0.1"
PROBE_EVERY = 0.25
PROBE_BUDGET = 1.0
RSS_BOUND = 512 * MIB
GOOD_SHARE = 0.95
SERVER = os.environ.get("SPREADGATE_ATTACK_SERVER", "spreadgate")
TARGET_SCRIPT = Path(__file__).with_name("attack_target.py")


def review(uid: str = "probe", obj: Any = None) -> bytes:
    pod = obj if obj is not None else {"metadata": {}}
    return json.dumps(admission_review(pod_create_request(pod, uid))).encode()


def padded_review(size: int) -> bytes:
    """A valid review of exactly `size` bytes (whitespace before it)."""
    body = review()
    return b" " * (size - len(body)) + body


def post_head(path: str, length: int, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode("latin-1")


class Target:
    """The server under attack, in a subprocess; its peak RSS sampled every 50 ms."""

    def __init__(self, tmp: Path, limits: dict[str, Any] | None = None, threads: int = 32) -> None:
        cert, key = write_cert(tmp)
        config = {"server": SERVER, "cert": cert, "key": key, "threads": threads, "limits": limits or {}}
        self.log = tmp / "attack-target.log"
        with open(self.log, "w", encoding="utf-8") as log:  # the server's own lines, read on failure
            self.proc = subprocess.Popen(
                [sys.executable, str(TARGET_SCRIPT), json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.close()
            raise AssertionError("the attack target did not start")
        self.port = int(json.loads(line)["port"])
        self.ca_pem = shared_ca().cert_pem
        self.peak_rss = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def rss(self) -> int:
        return resident_bytes(self.proc.pid)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak_rss = max(self.peak_rss, self.rss())

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca_pem)

    def connect(self, source: str = ATTACKER, timeout: float = 5.0, rcvbuf: int = 0) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(timeout)
        sock.bind((source, 0))
        try:
            sock.connect(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            raise
        return sock

    def tls(self, source: str = ATTACKER, timeout: float = 5.0, rcvbuf: int = 0) -> ssl.SSLSocket:
        raw = self.connect(source, timeout, rcvbuf)
        try:
            return self.context().wrap_socket(raw, server_hostname="127.0.0.1")
        except OSError:
            raw.close()
            raise

    def request(
        self, method: str, path: str, body: bytes = b"", timeout: float = PROBE_BUDGET, source: str = PROBER
    ) -> int:
        """One request on a fresh connection; its status."""
        with self.tls(source, timeout) as sock:
            sock.sendall(
                post_head(path, len(body), "Connection: close\r\n").replace(b"POST", method.encode(), 1)
                + body
            )
            data = b""
            while b"\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else -1

    def close(self) -> None:
        self._stop.set()
        close_stdin_process(self.proc, 15)


@contextmanager
def target(tmp: Path, limits: dict[str, Any] | None = None) -> Iterator[Target]:
    served = Target(tmp, limits)
    try:
        yield served
    finally:
        served.close()


@dataclass
class Outcome:
    probes: int = 0
    good: int = 0
    failures: list[str] = field(default_factory=list)
    peak_rss: int = 0

    @property
    def share(self) -> float:
        return self.good / self.probes if self.probes else 0.0

    def summary(self) -> str:
        return (
            f"{SERVER}: {self.good}/{self.probes} probes answered 200 within {PROBE_BUDGET:g} s "
            f"({self.share:.0%}); peak RSS {self.peak_rss / MIB:.0f} MiB; first failures {self.failures[:4]}"
        )


def probe_once(served: Target, large: bytes | None) -> str | None:
    """One probe: None when every answer was 200 within the budget, else what went wrong."""
    asks: list[tuple[str, str, bytes]] = [("GET", "/healthz", b""), ("POST", "/mutate/pods", review())]
    if large is not None:
        asks.append(("POST", "/mutate/pods", large))
    for method, path, body in asks:
        started = time.monotonic()
        try:
            status = served.request(method, path, body, timeout=PROBE_BUDGET)
        except (OSError, ValueError) as exc:
            return f"{path} ({len(body)} B): {type(exc).__name__}"
        elapsed = time.monotonic() - started
        if status != 200 or elapsed > PROBE_BUDGET:
            return f"{path} ({len(body)} B): {status} in {elapsed:.2f} s"
    return None


Attack = Callable[[Target, threading.Event], None]


def run_attack(
    served: Target,
    attack: Attack,
    seconds: float,
    *,
    workers: int = 1,
    warmup: float = 0.5,
    large_probe: bytes | None = None,
) -> Outcome:
    """`attack` on `workers` threads for `seconds` (after `warmup`), probing throughout."""
    stop = threading.Event()
    threads = [threading.Thread(target=attack, args=(served, stop), daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    outcome = Outcome()
    stop.wait(warmup)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and outcome.probes < 2000:
            started = time.monotonic()
            failure = probe_once(served, large_probe)
            outcome.probes += 1
            if failure is None:
                outcome.good += 1
            else:
                outcome.failures.append(failure)
            stop.wait(max(0.0, PROBE_EVERY - (time.monotonic() - started)))
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    outcome.peak_rss = max(served.peak_rss, served.rss())
    return outcome


def held(
    served: Target,
    stop: threading.Event,
    count: int,
    opener: Callable[[], socket.socket | None],
    limit: float = 300.0,
) -> None:
    """Keep `count` connections made by `opener` open until `stop`, reopening each one the server
    closes (read as EOF or an error)."""
    selector = selectors.DefaultSelector()
    deadline = time.monotonic() + limit

    def open_one() -> None:
        try:
            sock = opener()
        except OSError:
            return
        if sock is not None:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)

    try:
        for _ in range(count):
            if stop.is_set():
                return
            open_one()
        while not stop.is_set() and time.monotonic() < deadline:
            for key, _ in selector.select(0.05):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    if sock.recv(65536):
                        continue
                except (BlockingIOError, ssl.SSLWantReadError):
                    continue
                except OSError:
                    pass
                selector.unregister(sock)
                sock.close()
                open_one()
            missing = count - len(selector.get_map())
            for _ in range(min(missing, 64)):
                open_one()
    finally:
        for key in list(selector.get_map().values()):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            sock.close()
        selector.close()


HALF_CLIENT_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x11" * 32
"""The first bytes of a TLS ClientHello announcing 512 bytes: the server waits for the rest."""
