"""What authentication, impersonation and RBAC cost the emulator per request.

Setup: an `ApiServer` served by `serve_https` in this process, with its default ClusterRoles
plus 200 extra RoleBindings and 50 aggregated ClusterRoles' worth of labelled roles (a busy
cluster's RBAC); one client thread with a keep-alive HTTPS connection GETs one ConfigMap
`n` times as each identity:

- `AlwaysAllow` (the baseline: the same server with authorization off);
- the administrator (`system:masters`: allowed before RBAC is consulted);
- a ServiceAccount allowed through a RoleBinding to the aggregated `view` (full RBAC walk);
- the administrator impersonating that ServiceAccount (two RBAC decisions per request).

Reported: the emulator's own CPU per request (`time.thread_time()` of the handler threads,
as in bench_apiserver) and its ratio to the baseline. No RBAC write happens during a run, so
the policy snapshot is built once per identity run (what a steady cluster sees).
"""

from __future__ import annotations

import sys
from typing import Any

from benchmarks.common import loopback_pool, machine_description, print_table
from benchmarks.kube_objects import role_binding
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import RunningServer, serve_https

RBAC = "rbac.authorization.k8s.io/v1"
SA = "system:serviceaccount:bench:reader"


def _populate(api: ApiServer) -> None:
    api.create("v1/namespaces", None, {"metadata": {"name": "bench"}})
    api.create("v1/configmaps", "bench", {"metadata": {"name": "cfg"}, "data": {"k": "v"}})
    for i in range(50):
        api.create(
            f"{RBAC}/clusterroles",
            None,
            {
                "metadata": {
                    "name": f"extra-{i}",
                    "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
                },
                "rules": [
                    {"apiGroups": [f"g{i}.example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}
                ],
            },
        )
    for i in range(200):
        api.create(
            f"{RBAC}/rolebindings",
            "bench",
            role_binding(f"other-{i}", "edit", f"user-{i}"),
        )
    api.create(
        f"{RBAC}/rolebindings",
        "bench",
        role_binding("zz-reader", "view", "reader", subject_kind="ServiceAccount", namespace="bench"),
    )


def _cpu_per_get(server: RunningServer, headers: dict[str, str], n: int) -> float:
    pool = loopback_pool(server.port, server.ca_pem, timeout=30)
    try:
        for _ in range(20):  # warm up the connection and the policy snapshot
            assert (
                pool.request("GET", "/api/v1/namespaces/bench/configmaps/cfg", headers=headers).status == 200
            )
        server.reset_stats()
        for _ in range(n):
            resp = pool.request("GET", "/api/v1/namespaces/bench/configmaps/cfg", headers=headers)
            if resp.status != 200:
                raise RuntimeError(f"GET refused ({resp.status}): {resp.data[:200]!r}")
        return server.cpu_seconds / max(server.requests, 1)
    finally:
        pool.close()


def _run(mode: str, n: int) -> dict[str, float]:
    api = ApiServer(authorization_mode=mode)
    server = serve_https(api)
    try:
        _populate(api)
        admin = {"Authorization": f"Bearer {server.token}"}
        sa_token = server.authenticator.issue_service_account_token("bench", "reader")
        out = {"admin": _cpu_per_get(server, admin, n)}
        if mode == "RBAC":
            out["service account"] = _cpu_per_get(server, {"Authorization": f"Bearer {sa_token}"}, n)
            out["admin as service account"] = _cpu_per_get(server, {**admin, "Impersonate-User": SA}, n)
        return out
    finally:
        server.stop()
        api.close()


def main(quick: bool = False) -> dict[str, Any]:
    n = 300 if quick else 2000
    print(
        f"\nAuthorization: {n} GETs of one ConfigMap over HTTPS per identity, "
        "250 extra RoleBindings/ClusterRoles"
    )
    baseline = _run("AlwaysAllow", n)["admin"]
    rbac = _run("RBAC", n)
    rows = [["AlwaysAllow (baseline)", f"{baseline * 1e6:.0f} µs", "1.00"]]
    rows += [[who, f"{cpu * 1e6:.0f} µs", f"{cpu / baseline:.2f}"] for who, cpu in rbac.items()]
    print_table("server CPU per GET", ["identity", "CPU/req", "ratio to baseline"], rows)
    return {"n": n, "baseline_cpu_s": baseline, **{f"{k}_ratio": v / baseline for k, v in rbac.items()}}


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
