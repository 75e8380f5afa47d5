"""1,000 pod creates through the emulator's HTTPS API with a no-op webhook registered.

Setup: an `ApiServer` served by `serve_https` in this process; an allow-all
AdmissionReview server (`py_engine.sim.webhook_stub`) in a *separate process*,
registered by a MutatingWebhookConfiguration for pod CREATE (failurePolicy
Fail, so every create really waits for the HTTPS round trip); 8 client threads
in this process, each with its own keep-alive HTTPS connection (raw urllib3,
verified with the emulator's CA), POSTing pods to one namespace.

Reported: wall time, requests/s, client latency p50/p99, webhook calls, and the
emulator's own CPU per request. CPU method: every API request handler adds
`time.thread_time()` spent in its thread (HTTP parsing, admission including
its webhook HTTPS call, storage, JSON, TLS writes) to a counter, so the figure
excludes the client threads and the webhook process. Baseline in the same run:
the same creates in-process (`ApiServer.create`, same webhook), i.e. without
the HTTP front end.

Target: 1,000 creates in a few seconds on a 2-core machine.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

from benchmarks.common import loopback_pool, machine_description, print_table
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import serve_https
from py_engine.sim.webhook_stub import webhook_configuration

THREADS = 8


def _pod(i: int, prefix: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "labels": {"app": "bench", "i": str(i % 10)}},
            "spec": {
                "containers": [
                    {"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m"}}}
                ]
            },
        }
    ).encode()


def _start_webhook() -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "py_engine.sim.webhook_stub"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    return proc, info["url"], info["ca_bundle"]


def _http_creates(port: int, ca_pem: str, token: str, n: int) -> tuple[float, list[float], int]:
    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()
    counter = iter(range(n))

    def worker() -> None:
        nonlocal failures
        pool = loopback_pool(port, ca_pem, timeout=30)
        mine: list[float] = []
        bad = 0
        try:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    break
                t0 = time.perf_counter()
                resp = pool.request(
                    "POST",
                    "/api/v1/namespaces/bench/pods",
                    body=_pod(i, "http"),
                    headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
                )
                mine.append(time.perf_counter() - t0)
                if resp.status != 201:
                    bad += 1
        finally:
            pool.close()
        with lock:
            latencies.extend(mine)
            failures += bad

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return time.perf_counter() - start, latencies, failures


def _in_process_creates(api: ApiServer, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        api.create("v1/pods", "bench", json.loads(_pod(i, "inproc")))
    return time.perf_counter() - start


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main(quick: bool = False) -> dict[str, Any]:
    n = 200 if quick else 1000
    print(
        f"\nAPI server: {n} pod creates over HTTPS, {THREADS} client threads, no-op mutating webhook "
        "(separate process)"
    )
    proc, url, ca_bundle = _start_webhook()
    api = ApiServer(history_size=4 * n)
    server = serve_https(api)
    try:
        api.create("v1/namespaces", None, {"metadata": {"name": "bench"}})
        api.create(
            "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
            None,
            webhook_configuration("noop", url, ca_bundle),
        )
        # warm up connections and code paths (not measured)
        _http_creates(server.port, server.ca_pem, server.token, 0)
        api.create("v1/pods", "bench", json.loads(_pod(0, "warm")))
        server.reset_stats()
        calls_before = api.admission.calls_total
        wall, latencies, failures = _http_creates(server.port, server.ca_pem, server.token, n)
        requests, cpu = server.requests, server.cpu_seconds
        webhook_calls = api.admission.calls_total - calls_before
        inproc = _in_process_creates(api, n)
        stored = len(api.list("v1/pods", "bench")["items"])
    finally:
        server.stop()
        api.close()
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    rows = [
        [
            "HTTPS + webhook",
            f"{wall:.2f} s",
            f"{n / wall:,.0f}",
            f"{_pct(latencies, 0.5) * 1000:.1f} ms",
            f"{_pct(latencies, 0.99) * 1000:.1f} ms",
            f"{cpu / max(requests, 1) * 1000:.2f} ms",
        ],
        ["in-process + webhook (baseline)", f"{inproc:.2f} s", f"{n / inproc:,.0f}", "-", "-", "-"],
    ]
    print_table("pod creates", ["path", "wall", "req/s", "p50", "p99", "server CPU/req"], rows)
    print(
        f"  failures: {failures}; webhook calls during the HTTPS run: {webhook_calls}; "
        f"pods stored (both paths + warm-up): {stored}"
    )
    print(
        "  server CPU/req = sum of time.thread_time() in API handler threads / requests handled "
        "(includes the admission HTTPS call, excludes client threads and the webhook process)"
    )
    return {
        "n": n,
        "wall_s": wall,
        "req_per_s": n / wall,
        "server_cpu_ms_per_req": cpu / max(requests, 1) * 1000,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else None,
        "failures": failures,
        "in_process_s": inproc,
    }


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
