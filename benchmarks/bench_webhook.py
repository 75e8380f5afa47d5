"""The webhook under load: `/mutate/pods` latency beside a no-op endpoint, burst
throughput with group commit beside one status write per pod, and Rego's
share of the admission CPU.

Three kinds of process, so no two share a GIL: this one runs the embedded API
server over HTTPS (a Deployment, its ReplicaSet, one WorkloadSpread); the
webhook runs as `python -m benchmarks.webhook_proc` (the real wiring:
asyncio TLS front end, 64 worker threads, watch caches, group committer, embedded Rego, plus a
`/noop` route on the same server); load comes from `python -m
benchmarks.loadgen` (64 client threads, one keep-alive TLS connection each,
closed loop).

1. Latency: interleaved rounds of AdmissionReviews to `/noop` (parse +
   answer) and to `/mutate/pods` (trace, decide, reserve a counted slot
   through the group committer, patch), each round on a fresh spread:
   p50/p99 over every round, and the webhook's CPU per request.
2. Burst: 500 pod creates (64 in flight) at 0, 10 and 50 ms injected latency
   on every status write, with group commit and with one write per pod
   (`batching=False`): throughput and status writes per pod. Connections are
   warmed on `/noop` first, as the API server's keep-alive connections are.
3. Rego share: CPU inside Rego evaluations / webhook process CPU during the
   `/mutate/pods` rounds, with the eligibility decision cache (as shipped)
   and without it (every admission evaluates the subset decision; measured
   after a warm-up in which every server thread built its regorus engine).

Targets: /mutate/pods p99 <= 1.5x /noop p99, and its webhook CPU per request <= 1.5x
/noop's; at 10 ms, <= 0.1 writes per pod and >= 5x the one-write-per-pod throughput;
Rego <= 20 % of admission CPU.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Target, close_stdin_process, machine_description, print_table
from benchmarks.kube_objects import (
    admission_review,
    create_deployment_and_replicaset,
    pod_create_request,
    replicaset_pod,
)
from py_engine.apiclient import DEPLOYMENTS, REPLICASETS, KubeClient, Resource
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import serve_https
from py_engine.sim.tls import CertificateAuthority

SPREADS = Resource.custom("spreadgate.dev", "v1alpha1", "workloadspreads", kind="WorkloadSpread")
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "workloadspreads.spreadgate.dev"},
    "spec": {
        "group": "spreadgate.dev",
        "scope": "Namespaced",
        "names": {"plural": "workloadspreads", "singular": "workloadspread", "kind": "WorkloadSpread"},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
                "subresources": {"status": {}},
            }
        ],
    },
}
CLIENTS = 64
SERVER = os.environ.get("SPREADGATE_BENCH_SERVER", "spreadgate")
"""`hypercorn` serves the same app through hypercorn instead (docs/operations.md, "The server itself")."""
LATENCY_TARGET = 1.5
CPU_TARGET = 1.5
WRITES_TARGET = 0.1
SPEEDUP_TARGET = 5.0
REGO_TARGET = 0.20


class WebhookProcess:
    """`benchmarks.webhook_proc` in a subprocess, driven over its stdin line protocol."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.webhook_proc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        answer = self._ask(json.dumps(config))
        if "url" not in answer:
            self.close()
            raise RuntimeError(f"benchmark webhook failed to start: {answer}")
        self.url = str(answer["url"])

    def _ask(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("benchmark webhook exited")
        return json.loads(reply)  # type: ignore[no-any-return]

    def stats(self) -> dict[str, Any]:
        return self._ask("stats")

    def drop_decision_cache(self) -> None:
        self._ask("nocache")

    def close(self) -> None:
        close_stdin_process(self.proc, 20)


def start_load(
    url: str,
    ca_pem: str,
    template: dict[str, Any],
    count: int,
    *,
    warm: int = 0,
    warm_path: str | None = None,
    record: bool = False,
    client: str = "urllib3",
) -> subprocess.Popen[str]:
    """Start `benchmarks.loadgen` on one job (`CLIENTS` connections of the `client` kind) and
    return at once: a caller may act during the load (bench_scale kills a replica mid-burst);
    `finish_load` reads it."""
    job = {
        "url": url,
        "ca_pem": ca_pem,
        "template": template,
        "count": count,
        "clients": CLIENTS,
        "warm": warm,
        "warm_path": warm_path,
        "record": record,
        "client": client,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.loadgen"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(job))
    proc.stdin.close()
    return proc


def finish_load(proc: subprocess.Popen[str], *, strict: bool = True) -> dict[str, Any]:
    """The load generator's result; with `strict`, raises when any answer was not an allowed 200."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()  # its stdin is closed: no communicate()
    proc.wait(900)
    if proc.returncode != 0:
        raise RuntimeError(f"load generator failed: {err[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    if strict and result["bad"]:
        raise RuntimeError(f"{result['bad']} unexpected answers, e.g. {result['errors']}")
    return result


def load(
    url: str, ca_pem: str, template: dict[str, Any], count: int, *, strict: bool = True, **options: Any
) -> dict[str, Any]:
    """Run `benchmarks.loadgen` once to the end: `start_load` (with its keyword `options`: warm,
    warm_path, record), then `finish_load`."""
    return finish_load(start_load(url, ca_pem, template, count, **options), strict=strict)


class Bench:
    def __init__(self, tmp: Path) -> None:
        self.api = ApiServer(history_size=10_000)
        self.ca = CertificateAuthority("bench-ca")
        self.server = serve_https(self.api, ca=self.ca)
        self.kubeconfig = self.server.write_kubeconfig(str(tmp / "kubeconfig"))
        pair = self.ca.issue(dns_names=["localhost"], ip_addresses=["127.0.0.1"])
        self.cert, self.key = tmp / "tls.crt", tmp / "tls.key"
        self.cert.write_text(pair.cert_pem)
        self.key.write_text(pair.key_pem)
        self.api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, CRD)
        self.client = KubeClient.load(self.kubeconfig)
        self.rs = create_deployment_and_replicaset(self.client, DEPLOYMENTS, REPLICASETS, replicas=10)
        self.spread_no = 0

    def close(self) -> None:
        self.client.close()
        self.server.stop()
        self.api.close()

    def new_spread(self) -> str:
        """A fresh spread (the previous one deleted) with room for every pod in counted subsets."""
        if self.spread_no:
            self.client.delete(SPREADS, "default", f"ws-{self.spread_no}")
        self.spread_no += 1
        name = f"ws-{self.spread_no}"
        self.client.create(
            SPREADS,
            "default",
            {
                "apiVersion": "spreadgate.dev/v1alpha1",
                "kind": "WorkloadSpread",
                "metadata": {"name": name},
                "spec": {
                    "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "subsets": [
                        {"name": "a", "maxReplicas": 1_000_000},
                        {"name": "b", "maxReplicas": 1_000_000},
                    ],
                },
            },
        )
        return name

    def template(self) -> dict[str, Any]:
        """An AdmissionReview for one pod of the ReplicaSet.

        The load generator sets a fresh uid per request."""
        pod = replicaset_pod(self.rs["metadata"]["uid"])
        container = pod["spec"]["containers"][0]
        container["image"] = "nginx:1.27"
        container["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
        return admission_review(pod_create_request(pod, ""))

    def webhook(self, *, batching: bool) -> WebhookProcess:
        return WebhookProcess(
            {
                "kubeconfig": self.kubeconfig,
                "cert": str(self.cert),
                "key": str(self.key),
                "batching": batching,
                "threads": CLIENTS,
                "commit_timeout": 8.0,
                "server": SERVER,
            }
        )


def pct(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]
    )


def latency(bench: Bench, hook: WebhookProcess, rounds: int, per_round: int) -> dict[str, Any]:
    """Interleaved /noop and /mutate/pods rounds; CPU per request of each, Rego CPU during /mutate/pods."""
    template = bench.template()
    lat: dict[str, list[float]] = {"/noop": [], "/mutate/pods": []}
    cpu = {"/noop": 0.0, "/mutate/pods": 0.0}
    rego = 0.0
    writes = 0
    for _ in range(rounds):
        # A fresh spread per round: its creatingPods grows by one entry per admitted pod (nothing
        # creates the pods here, so no controller prunes them), and every reservation copies the
        # status; one round is a burst of `per_round` creates, not an ever-growing backlog.
        bench.new_spread()
        time.sleep(0.5)
        for path in lat:
            before = hook.stats()
            result = load(hook.url + path, bench.ca.cert_pem, template, per_round, warm=CLIENTS)
            after = hook.stats()
            lat[path] += result["latencies"]
            cpu[path] += after["cpu"] - before["cpu"]
            if path == "/mutate/pods":
                rego += after["rego_cpu"] - before["rego_cpu"]
                writes += after["committer"]["writes"] - before["committer"]["writes"]
    return {
        "latencies": lat,
        "cpu": cpu,
        "rego": rego,
        "writes": writes,
        "requests": rounds * (per_round + CLIENTS),
    }


def rego_without_cache(
    bench: Bench, hook: WebhookProcess, count: int
) -> tuple[float, float, int, int, float]:
    """Rego CPU share with the decision cache dropped: every admission evaluates the subset decision.

    Returns Rego CPU, webhook CPU, evaluations, and the interpreter builds that fell in the
    window with their CPU (a server thread's first evaluation; see benchmarks/webhook_proc.py).
    """
    hook.drop_decision_cache()
    # Warm-up, not measured: each server thread builds its own regorus engine on its first
    # evaluation (engines are bound to their thread); with the cache on most threads never did.
    load(hook.url + "/mutate/pods", bench.ca.cert_pem, bench.template(), 4 * CLIENTS, warm=CLIENTS)
    before = hook.stats()
    load(hook.url + "/mutate/pods", bench.ca.cert_pem, bench.template(), count, warm=CLIENTS)
    after = hook.stats()
    return (
        after["rego_cpu"] - before["rego_cpu"],
        after["cpu"] - before["cpu"],
        after["rego_calls"] - before["rego_calls"],
        after["rego_builds"] - before["rego_builds"],
        after["rego_build_cpu"] - before["rego_build_cpu"],
    )


def burst(
    bench: Bench, hooks: dict[bool, WebhookProcess], pods: int, latencies_ms: tuple[int, ...]
) -> list[dict[str, Any]]:
    """`pods` creates, 64 in flight, per injected status-write latency, with and without group commit."""
    out = []
    template = bench.template()
    for ms in latencies_ms:
        if ms:
            bench.api.faults.set_spec(f"workloadspreads/status:update:latency={ms}ms")
        else:
            bench.api.faults.clear()
        for batching in (True, False):
            hook = hooks[batching]
            bench.new_spread()
            time.sleep(0.5)  # the spread reaches both webhooks' watch caches
            before = hook.stats()["committer"]
            result = load(
                hook.url + "/mutate/pods", bench.ca.cert_pem, template, pods, warm=CLIENTS, warm_path="/noop"
            )
            after = hook.stats()["committer"]
            out.append(
                {
                    "latency_ms": ms,
                    "batching": batching,
                    "pods": pods,
                    "wall": result["wall"],
                    "writes": after["writes"] - before["writes"],
                    "p50": pct(result["latencies"], 50),
                    "p99": pct(result["latencies"], 99),
                }
            )
    bench.api.faults.clear()
    return out


def main(quick: bool = False) -> dict[str, Any]:
    if SERVER == "hypercorn" and importlib.util.find_spec("hypercorn") is None:
        raise SystemExit(
            "SPREADGATE_BENCH_SERVER=hypercorn needs hypercorn installed (pip install hypercorn)"
        )
    rounds, per_round = (2, 500) if quick else (4, 1500)
    n_burst = 200 if quick else 500
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as tmp:
        bench = Bench(Path(tmp))
        hooks: dict[bool, WebhookProcess] = {}
        try:
            hooks[True] = bench.webhook(batching=True)
            hooks[False] = bench.webhook(batching=False)
            bench.new_spread()
            time.sleep(0.5)
            lat = latency(bench, hooks[True], rounds, per_round)
            bursts = burst(bench, hooks, n_burst, (0, 10, 50))
            bench.new_spread()
            time.sleep(0.5)
            nocache_rego, nocache_cpu, nocache_calls, nocache_builds, nocache_build_cpu = rego_without_cache(
                bench, hooks[True], per_round
            )
        finally:
            for hook in hooks.values():
                hook.close()
            bench.close()

    noop, mutate = lat["latencies"]["/noop"], lat["latencies"]["/mutate/pods"]
    rows: list[list[object]] = []
    for name, values in (("/noop (parse + answer)", noop), ("/mutate/pods (reserve + commit)", mutate)):
        path = "/noop" if name.startswith("/noop") else "/mutate/pods"
        rows.append(
            [
                name,
                len(values),
                f"{pct(values, 50) * 1000:.1f}",
                f"{pct(values, 99) * 1000:.1f}",
                f"{lat['cpu'][path] / lat['requests'] * 1000:.2f}",
            ]
        )
    p99_ratio = pct(mutate, 99) / pct(noop, 99)
    cpu_noop, cpu_mutate = (lat["cpu"][path] / lat["requests"] for path in ("/noop", "/mutate/pods"))
    print_table(
        f"Webhook latency, {CLIENTS} concurrent clients, {rounds} interleaved rounds (ms)",
        ["endpoint", "requests", "p50", "p99", "webhook CPU/req"],
        rows,
    )
    print(
        f"  /mutate/pods vs /noop: p50 {pct(mutate, 50) / pct(noop, 50):.2f}x, p99 {p99_ratio:.2f}x "
        f"(target p99 <= {LATENCY_TARGET}x: {'met' if p99_ratio <= LATENCY_TARGET else 'NOT met'}); "
        f"status writes {lat['writes']} for {lat['requests']} pods "
        f"({lat['writes'] / lat['requests']:.3f} per pod)"
    )
    print(
        f"  webhook CPU per request: /mutate/pods {cpu_mutate / cpu_noop:.2f}x /noop "
        f"(target <= {CPU_TARGET}x: {'met' if cpu_mutate / cpu_noop <= CPU_TARGET else 'NOT met'})"
    )

    burst_rows: list[list[object]] = []
    speedups: dict[int, float] = {}
    per_pod: dict[int, float] = {}
    for row in bursts:
        rate = row["pods"] / row["wall"]
        burst_rows.append(
            [
                f"{row['latency_ms']} ms",
                "group commit" if row["batching"] else "one write per pod",
                row["pods"],
                f"{row['wall']:.2f}",
                f"{rate:.0f}",
                row["writes"],
                f"{row['writes'] / row['pods']:.3f}",
                f"{row['p50'] * 1000:.0f}",
                f"{row['p99'] * 1000:.0f}",
            ]
        )
        if row["batching"]:
            speedups[row["latency_ms"]] = rate
            per_pod[row["latency_ms"]] = row["writes"] / row["pods"]
        else:
            speedups[row["latency_ms"]] /= rate
    print_table(
        f"Burst of {n_burst} pod creates, {CLIENTS} in flight, injected status-write latency",
        ["latency", "committer", "pods", "wall s", "pods/s", "writes", "writes/pod", "p50 ms", "p99 ms"],
        burst_rows,
    )
    print(
        "  group commit / one-write-per-pod throughput: "
        + ", ".join(f"{ms} ms {ratio:.1f}x" for ms, ratio in speedups.items())
    )
    met = per_pod[10] <= WRITES_TARGET and speedups[10] >= SPEEDUP_TARGET
    print(
        f"  target at 10 ms: <= {WRITES_TARGET} writes/pod and >= {SPEEDUP_TARGET:.0f}x: "
        f"{'met' if met else 'NOT met'} ({per_pod[10]:.3f} writes/pod, {speedups[10]:.1f}x)"
    )

    share = lat["rego"] / lat["cpu"]["/mutate/pods"]
    # A server thread's first evaluation builds its interpreter: a one-off, not an admission's
    # cost, so it leaves both the numerator and the denominator.
    nocache_cpu -= nocache_build_cpu
    share_nocache = nocache_rego / nocache_cpu
    print_table(
        "Rego share of the webhook's CPU during /mutate/pods",
        ["configuration", "Rego CPU s", "webhook CPU s", "share"],
        [
            [
                "decision cache on (shipped)",
                f"{lat['rego']:.3f}",
                f"{lat['cpu']['/mutate/pods']:.2f}",
                f"{share:.1%}",
            ],
            [
                f"decision cache off ({nocache_calls} evaluations)",
                f"{nocache_rego:.3f}",
                f"{nocache_cpu:.2f}",
                f"{share_nocache:.1%}",
            ],
        ],
    )
    print(
        f"  interpreter builds in the cache-off window, counted apart: {nocache_builds} "
        f"({nocache_build_cpu:.3f} s CPU)"
    )
    print(
        f"  target Rego <= {REGO_TARGET:.0%} of admission CPU: "
        f"{'met' if max(share, share_nocache) <= REGO_TARGET else 'NOT met'} "
        f"(worst case {max(share, share_nocache):.1%})"
    )
    return {
        "cpu_noop": cpu_noop,
        "cpu_mutate": cpu_mutate,
        "n_burst": n_burst,
        "per_pod": per_pod,
        "noop_p50": pct(noop, 50),
        "noop_p99": pct(noop, 99),
        "mutate_p50": pct(mutate, 50),
        "mutate_p99": pct(mutate, 99),
        "p99_ratio": p99_ratio,
        "bursts": bursts,
        "speedups": speedups,
        "rego_share": share,
        "rego_share_nocache": share_nocache,
    }


def targets(result: dict[str, Any], quick: bool) -> list[Target]:
    worst = max(result["rego_share"], result["rego_share_nocache"])
    return [
        Target(
            "admission p99 / no-op p99",
            f"{result['p99_ratio']:.2f}x "
            f"({result['mutate_p99'] * 1e3:.0f} / {result['noop_p99'] * 1e3:.0f} ms)",
            f"<= {LATENCY_TARGET}x",
            result["p99_ratio"] <= LATENCY_TARGET,
        ),
        Target(
            "admission CPU / no-op CPU (webhook process)",
            f"{result['cpu_mutate'] / result['cpu_noop']:.2f}x "
            f"({result['cpu_mutate'] * 1e3:.2f} / {result['cpu_noop'] * 1e3:.2f} ms)",
            f"<= {CPU_TARGET}x",
            result["cpu_mutate"] / result["cpu_noop"] <= CPU_TARGET,
        ),
        Target(
            f"burst writes per pod at 10 ms ({result['n_burst']} pods)",
            f"{result['per_pod'][10]:.3f}",
            f"<= {WRITES_TARGET}",
            result["per_pod"][10] <= WRITES_TARGET,
        ),
        Target(
            "burst throughput vs one write per pod, 10 ms",
            f"{result['speedups'][10]:.1f}x",
            f">= {SPEEDUP_TARGET:.0f}x",
            result["speedups"][10] >= SPEEDUP_TARGET,
        ),
        Target(
            "Rego share of admission CPU (cache on / off)",
            f"{result['rego_share']:.1%} / {result['rego_share_nocache']:.1%}",
            f"<= {REGO_TARGET:.0%}",
            worst <= REGO_TARGET,
        ),
    ]


if __name__ == "__main__":
    print(machine_description())
    main(quick="--quick" in sys.argv)
