"""A load generator in its own process: `python -m benchmarks.loadgen`.

Reads one JSON job on stdin: `url`, `ca_pem`, `template` (an AdmissionReview
whose `request.uid` is replaced per request), `count`, `clients`, `warm`
(requests sent first and not measured, to `warm_path` when given: a burst
measured on warm connections without its warm-up reserving slots). `clients` threads, each with its own
keep-alive TLS connection (urllib3, certificate verified), send the bodies as
fast as they are answered (a closed loop, like the API server's admission
calls during a burst). Answers one JSON line: per-request latencies in
seconds, wall time, and the answers that were not an HTTP 200 allowing the
request (count and the first few); with `record`, every allowed answer's patch too.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
import time
import uuid
from typing import Any

import urllib3


def _bodies(template: dict[str, Any], count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        review = copy.deepcopy(template)
        review["request"]["uid"] = str(uuid.uuid4())
        out.append(json.dumps(review).encode())
    return out


def connections(url: str, ca_pem: str, clients: int) -> tuple[list[urllib3.HTTPSConnectionPool], str]:
    """One keep-alive TLS connection per client (reused by the warm-up and the measured run), and the path."""
    rest = url.removeprefix("https://")
    hostport, _, path = rest.partition("/")
    host, port = hostport.rsplit(":", 1)
    pools = [
        urllib3.HTTPSConnectionPool(
            host,
            int(port),
            maxsize=1,
            cert_reqs="CERT_REQUIRED",
            ca_cert_data=ca_pem,
            retries=False,
            timeout=urllib3.Timeout(total=60),
        )
        for _ in range(clients)
    ]
    return pools, "/" + path


def fire(
    pools: list[urllib3.HTTPSConnectionPool], path: str, bodies: list[bytes], record: bool = False
) -> dict[str, Any]:
    """Send every body, one thread per connection; latencies in seconds, in completion order
    (with `record`, also every allowed answer's JSON patch, base64 as sent, or "" without one)."""
    lock = threading.Lock()
    pending = iter(range(len(bodies)))
    latencies: list[float] = []
    bad: list[str] = []
    patches: list[str] = []

    def worker(pool: urllib3.HTTPSConnectionPool) -> None:
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
                resp = pool.request(
                    "POST", path, body=bodies[index], headers={"Content-Type": "application/json"}
                )
            except urllib3.exceptions.HTTPError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            mine.append(time.perf_counter() - started)
            if resp.status != 200:
                errors.append(f"HTTP {resp.status}: {resp.data[:200]!r}")
            elif not json.loads(resp.data)["response"]["allowed"]:
                errors.append(f"denied: {resp.data[:300]!r}")
            elif record:
                answers.append(str(json.loads(resp.data)["response"].get("patch") or ""))
        with lock:
            latencies.extend(mine)
            bad.extend(errors)
            patches.extend(answers)

    threads = [threading.Thread(target=worker, args=(pool,)) for pool in pools]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    out = {"latencies": latencies, "wall": time.perf_counter() - started, "bad": len(bad), "errors": bad[:5]}
    return out | ({"patches": patches} if record else {})


def main() -> int:
    job = json.loads(sys.stdin.read())
    pools, path = connections(job["url"], job["ca_pem"], int(job["clients"]))
    try:
        if job.get("warm"):
            fire(pools, job.get("warm_path") or path, _bodies(job["template"], int(job["warm"])))
        result = fire(pools, path, _bodies(job["template"], int(job["count"])), bool(job.get("record")))
    finally:
        for pool in pools:
            pool.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
