"""A load generator in its own process: `python -m benchmarks.loadgen`.

Reads one JSON job on stdin: `url`, `ca_pem`, `template` (an AdmissionReview
whose `request.uid` is replaced per request), `count`, `clients`, `warm`
(requests sent first and not measured, to `warm_path` when given: a burst
measured on warm connections without its warm-up reserving slots), `client` (`CLIENT_KINDS`,
default "urllib3"). `clients` threads, each with its own keep-alive TLS connection
(certificate verified), send the bodies as fast as they are answered (a closed loop, like the
API server's admission calls during a burst). Answers one JSON line: per-request latencies in
seconds, wall time, and the answers that were not an HTTP 200 allowing the
request (count and the first few); with `record`, every allowed answer's patch too.

Two clients, one loop. "urllib3" (a pool of one connection per thread) is the benchmarks'
default. "stdlib" (`http.client`) sends the same bodies for about half the CPU (0.42-0.52 ms
per request against 0.8-0.9, start-up included): the load generator shares the two cores with
what it measures, and `bench_scale` compares three webhook processes, which can use both
cores, with one bound by its own interpreter lock; CPU the client takes is taken from the
three (docs/scale.md, "A leaner load generator"). A connection that fails is opened again for
the next request, so a killed replica's clients move to the others.
"""

from __future__ import annotations

import copy
import http.client
import json
import ssl
import sys
import threading
import time
import uuid
from typing import Any, Protocol

import urllib3

CLIENT_KINDS = ("urllib3", "stdlib")
_UID = "loadgen-uid-placeholder"
_HEADERS = {"Content-Type": "application/json"}


class Client(Protocol):
    """One keep-alive TLS connection to the server."""

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """Send `body`, return the answer's status and body; raises `OSError` or
        `http.client.HTTPException` (urllib3's `HTTPError` for urllib3) on a failed exchange."""
        ...

    def close(self) -> None: ...


class Urllib3Client:
    """urllib3's pool of one connection (it reconnects by itself)."""

    def __init__(self, host: str, port: int, ca_pem: str) -> None:
        self.pool = urllib3.HTTPSConnectionPool(
            host,
            port,
            maxsize=1,
            cert_reqs="CERT_REQUIRED",
            ca_cert_data=ca_pem,
            retries=False,
            timeout=urllib3.Timeout(total=60),
        )

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        response = self.pool.request("POST", path, body=body, headers=_HEADERS)
        return response.status, response.data

    def close(self) -> None:
        self.pool.close()


class StdlibClient:
    """The standard library's HTTPS connection; closed after a failure, reopened by the next
    request."""

    def __init__(self, host: str, port: int, ca_pem: str) -> None:
        context = ssl.create_default_context(cadata=ca_pem)
        self.conn = http.client.HTTPSConnection(host, port, context=context, timeout=60)

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        try:
            self.conn.request("POST", path, body=body, headers=_HEADERS)
            response = self.conn.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            raise

    def close(self) -> None:
        self.conn.close()


_FAILURES = (OSError, http.client.HTTPException, urllib3.exceptions.HTTPError)


def _bodies(template: dict[str, Any], count: int) -> list[bytes]:
    """`count` encodings of `template`, each with a fresh `request.uid` (encoded once, the uid
    put in by replacing a placeholder)."""
    review = copy.deepcopy(template)
    review["request"]["uid"] = _UID
    head, tail = json.dumps(review).split(_UID, 1)
    return [f"{head}{uuid.uuid4()}{tail}".encode() for _ in range(count)]


def connections(url: str, ca_pem: str, clients: int, kind: str = "urllib3") -> tuple[list[Client], str]:
    """One keep-alive TLS connection per client (reused by the warm-up and the measured run), and the path."""
    if kind not in CLIENT_KINDS:
        raise ValueError(f"client {kind!r}: one of {', '.join(CLIENT_KINDS)}")
    rest = url.removeprefix("https://")
    hostport, _, path = rest.partition("/")
    host, port = hostport.rsplit(":", 1)
    make = Urllib3Client if kind == "urllib3" else StdlibClient
    return [make(host, int(port), ca_pem) for _ in range(clients)], "/" + path


def fire(conns: list[Client], path: str, bodies: list[bytes], record: bool = False) -> dict[str, Any]:
    """Send every body, one thread per connection; latencies in seconds, in completion order
    (with `record`, also every allowed answer's JSON patch, base64 as sent, or "" without one)."""
    lock = threading.Lock()
    pending = iter(range(len(bodies)))
    latencies: list[float] = []
    bad: list[str] = []
    patches: list[str] = []

    def worker(conn: Client) -> None:
        mine: list[float] = []
        errors: list[str] = []
        answers: list[str] = []
        while True:
            with lock:
                index = next(pending, None)
            if index is None:
                break
            started = time.perf_counter()
            try:
                status, data = conn.post(path, bodies[index])
            except _FAILURES as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            mine.append(time.perf_counter() - started)
            if status != 200:
                errors.append(f"HTTP {status}: {data[:200]!r}")
                continue
            answer = json.loads(data)["response"]
            if not answer["allowed"]:
                errors.append(f"denied: {data[:300]!r}")
            elif record:
                answers.append(str(answer.get("patch") or ""))
        with lock:
            latencies.extend(mine)
            bad.extend(errors)
            patches.extend(answers)

    threads = [threading.Thread(target=worker, args=(conn,)) for conn in conns]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    out = {"latencies": latencies, "wall": time.perf_counter() - started, "bad": len(bad), "errors": bad[:5]}
    return out | ({"patches": patches} if record else {})


def main() -> int:
    job = json.loads(sys.stdin.read())
    conns, path = connections(job["url"], job["ca_pem"], int(job["clients"]), job.get("client") or "urllib3")
    try:
        if job.get("warm"):
            fire(conns, job.get("warm_path") or path, _bodies(job["template"], int(job["warm"])))
        result = fire(conns, path, _bodies(job["template"], int(job["count"])), bool(job.get("record")))
    finally:
        for conn in conns:
            conn.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
