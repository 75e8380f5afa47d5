"""What recording `metadata.managedFields` costs the emulator's writes (docs/server-side-apply.md).

Every create, update and patch computes which fields its writer changed and updates the
object's field managers (py_engine/sim/apply.py `update`). Measured: pod creates and pod status
writes (the kubelet's most frequent write) in process, and pod creates over HTTPS (one client,
the emulator's handler CPU per request), each run twice in the same process: as served, and as
a baseline with the bookkeeping replaced by a function that keeps the managers unchanged (so no
entry is written, as before server-side apply). Best of three rounds; reported as ratios.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchmarks.common import loopback_pool, machine_description, print_table
from py_engine.sim import apply as ssa
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import serve_https


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "labels": {"app": "bench", "i": str(i % 10)}},
        "spec": {
            "containers": [{"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m"}}}]
        },
    }


@contextlib.contextmanager
def _untracked() -> Iterator[None]:
    """The baseline: writes keep whatever managers they found (none: no entry is ever written)."""
    real = ssa.update

    def keep(
        live: Any, new: Any, schema: Any, managers: list[ssa.Manager], *args: Any, **kwargs: Any
    ) -> list[ssa.Manager]:
        return managers

    ssa.update = keep  # type: ignore[assignment]
    try:
        yield
    finally:
        ssa.update = real  # type: ignore[assignment]


def _in_process(n: int) -> tuple[float, float]:
    api = ApiServer(history_size=4 * n)
    try:
        t0 = time.process_time()
        for i in range(n):
            api.create("v1/pods", "default", _pod(i))
        t1 = time.process_time()
        for i in range(n):
            pod = api.get("v1/pods", "default", f"p{i}")
            pod["status"] = {
                "phase": "Running",
                "podIP": "10.0.0.1",
                "conditions": [{"type": "Ready", "status": "True"}],
            }
            api.update("v1/pods", "default", f"p{i}", pod, subresource="status")
        return t1 - t0, time.process_time() - t1
    finally:
        api.close()


def _https(n: int) -> float:
    api = ApiServer(history_size=4 * n)
    server = serve_https(api)
    pool = loopback_pool(server.port, server.ca_pem)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {server.token}"}
    try:
        pool.request("GET", "/api/v1/namespaces/default/pods", headers=headers)  # warm the connection
        server.reset_stats()
        for i in range(n):
            resp = pool.request(
                "POST", "/api/v1/namespaces/default/pods", body=json.dumps(_pod(i)).encode(), headers=headers
            )
            assert resp.status == 201, resp.data
        return server.cpu_seconds / max(server.requests, 1)
    finally:
        pool.close()
        server.stop()
        api.close()


def _best(rounds: int, run: Callable[[], Any]) -> Any:
    results = [run() for _ in range(rounds)]
    if isinstance(results[0], tuple):
        return tuple(min(r[i] for r in results) for i in range(len(results[0])))
    return min(results)


def main(quick: bool = False) -> dict[str, Any]:
    n = 300 if quick else 2000
    print(
        f"\nmanagedFields bookkeeping: {n} pod creates and status writes in process, {n} creates over HTTPS"
    )
    tracked = _best(3, lambda: _in_process(n))
    tracked_http = _best(3, lambda: _https(n // 2))
    with _untracked():
        base = _best(3, lambda: _in_process(n))
        base_http = _best(3, lambda: _https(n // 2))
    rows = [
        [
            "create, in process",
            f"{tracked[0] / n * 1e6:.0f} us",
            f"{base[0] / n * 1e6:.0f} us",
            f"{tracked[0] / base[0]:.2f}",
        ],
        [
            "status write, in process",
            f"{tracked[1] / n * 1e6:.0f} us",
            f"{base[1] / n * 1e6:.0f} us",
            f"{tracked[1] / base[1]:.2f}",
        ],
        [
            "create over HTTPS (server CPU)",
            f"{tracked_http * 1e6:.0f} us",
            f"{base_http * 1e6:.0f} us",
            f"{tracked_http / base_http:.2f}",
        ],
    ]
    print_table(
        "CPU per write", ["write", "managedFields recorded", "baseline (not recorded)", "ratio"], rows
    )
    return {
        "create_ratio": tracked[0] / base[0],
        "status_ratio": tracked[1] / base[1],
        "https_ratio": tracked_http / base_http,
    }


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
