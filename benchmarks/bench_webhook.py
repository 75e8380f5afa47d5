"""The webhook under load: `/mutate/pods` latency beside a no-op endpoint, and
burst throughput with group commit beside one status write per pod.

Setup: the embedded API server over HTTPS (no controllers), a Deployment and
its ReplicaSet, one WorkloadSpread; the webhook runs in this process (cheroot,
64 threads) and the load generator too (64 client threads over keep-alive TLS),
so both share one interpreter's GIL: figures are upper bounds on latency.

1. Latency: 64 concurrent clients send AdmissionReviews to `/mutate/pods`
   (every pod takes a counted slot: a status write, group-committed) and to
   `/noop` on the same server (parse + answer, no decision): p50/p99 of each.
2. Burst: the same pod creates with 10 ms injected latency on every status
   write, once with group commit and once with `batching=False` (one write per
   pod): throughput and status writes per pod.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import urllib3

from benchmarks.common import print_table
from py_engine.admission.service import Decision
from py_engine.kube import DEPLOYMENTS, REPLICASETS, KubeClient, Resource
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.http_server import serve_https
from py_engine.sim.tls import CertificateAuthority
from webhook.runtime import Webhook, WebhookOptions

SPREADS = Resource.custom("spreadgate.dev", "v1alpha1", "workloadspreads", kind="WorkloadSpread")
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "workloadspreads.spreadgate.dev"},
       "spec": {"group": "spreadgate.dev", "scope": "Namespaced",
                "names": {"plural": "workloadspreads", "singular": "workloadspread", "kind": "WorkloadSpread"},
                "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                              "schema": {"openAPIV3Schema": {"type": "object",
                                                             "x-kubernetes-preserve-unknown-fields": True}},
                              "subresources": {"status": {}}}]}}
CLIENTS = 64


def noop(request: Any) -> Decision:
    return Decision(True, "allowed")


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
        template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        dep = self.client.create(DEPLOYMENTS, "default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "web"}}, "template": template}})
        self.rs = self.client.create(REPLICASETS, "default", {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-h", "labels": {"app": "web", "pod-template-hash": "h"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                              "uid": dep["metadata"]["uid"], "controller": True}]},
            "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "web"}}, "template": template}})
        self.http = urllib3.PoolManager(maxsize=CLIENTS, block=True, cert_reqs="CERT_REQUIRED",
                                        ca_cert_data=self.ca.cert_pem, retries=False)
        self.spread_no = 0

    def close(self) -> None:
        self.http.clear()
        self.client.close()
        self.server.stop()
        self.api.close()

    def new_spread(self) -> str:
        """A fresh spread (the previous one deleted) with room for every pod in counted subsets."""
        if self.spread_no:
            self.client.delete(SPREADS, "default", f"ws-{self.spread_no}")
        self.spread_no += 1
        name = f"ws-{self.spread_no}"
        self.client.create(SPREADS, "default", {
            "apiVersion": "spreadgate.dev/v1alpha1", "kind": "WorkloadSpread", "metadata": {"name": name},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "subsets": [{"name": "a", "maxReplicas": 1_000_000}, {"name": "b", "maxReplicas": 1_000_000}]}})
        return name

    def review(self) -> bytes:
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"generateName": "web-h-", "namespace": "default",
                            "labels": {"app": "web", "pod-template-hash": "h"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-h",
                                                 "uid": self.rs["metadata"]["uid"], "controller": True}]},
               "spec": {"containers": [{"name": "c", "image": "i"}]}}
        return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "request": {"uid": str(uuid.uuid4()), "operation": "CREATE", "namespace": "default",
                                       "resource": {"group": "", "version": "v1", "resource": "pods"},
                                       "object": pod}}).encode()

    def webhook(self, *, batching: bool) -> Webhook:
        hook = Webhook(WebhookOptions(cert_file=str(self.cert), key_file=str(self.key), kubeconfig=self.kubeconfig,
                                      host="127.0.0.1", port=0, threads=CLIENTS, node_simulation=False,
                                      batching=batching, commit_timeout=8.0, extra_routes={"/noop": noop}))
        hook.start()
        if not hook.view.wait_ready(10):
            raise RuntimeError("webhook caches did not sync")
        return hook

    def fire(self, url: str, count: int) -> tuple[list[float], float]:
        bodies = [self.review() for _ in range(count)]

        def one(body: bytes) -> float:
            started = time.perf_counter()
            resp = self.http.request("POST", url, body=body, headers={"Content-Type": "application/json"},
                                     timeout=30)
            if resp.status != 200 or not json.loads(resp.data)["response"]["allowed"]:
                raise RuntimeError(f"unexpected answer {resp.status}: {resp.data[:200]!r}")
            return time.perf_counter() - started

        started = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            latencies = list(pool.map(one, bodies))
        return latencies, time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main(quick: bool = False) -> None:
    n_latency = 600 if quick else 3000
    n_burst = 300 if quick else 1500
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as tmp:
        bench = Bench(Path(tmp))
        try:
            rows: list[list[object]] = []
            hook = bench.webhook(batching=True)
            try:
                bench.new_spread()
                time.sleep(0.3)  # let the spread reach the watch cache before timing
                bench.fire(hook.url + "/noop", 100)  # warm connections
                noop_lat, _ = bench.fire(hook.url + "/noop", n_latency)
                mutate_lat, _ = bench.fire(hook.url + "/mutate/pods", n_latency)
                writes = hook.committer.stats.snapshot()["writes"]
            finally:
                hook.stop()
            for name, lat in (("/noop (parse + answer)", noop_lat), ("/mutate/pods (reserve + commit)", mutate_lat)):
                rows.append([name, len(lat), f"{pct(lat, 50) * 1000:.1f}", f"{pct(lat, 99) * 1000:.1f}"])
            print_table(f"Webhook latency, {CLIENTS} concurrent clients (ms)", ["endpoint", "requests", "p50", "p99"],
                        rows)
            print(f"  /mutate/pods status writes: {writes} for {n_latency} pods "
                  f"({writes / n_latency:.3f} per pod)")

            burst_rows: list[list[object]] = []
            results: dict[bool, float] = {}
            bench.api.faults.set_spec("workloadspreads/status:update:latency=10ms")
            for batching in (True, False):
                hook = bench.webhook(batching=batching)
                try:
                    bench.new_spread()
                    time.sleep(0.3)
                    lat, elapsed = bench.fire(hook.url + "/mutate/pods", n_burst)
                    stats = hook.committer.stats.snapshot()
                finally:
                    hook.stop()
                results[batching] = n_burst / elapsed
                burst_rows.append(["group commit" if batching else "one write per pod", n_burst,
                                   f"{n_burst / elapsed:.0f}", stats["writes"], f"{stats['writes'] / n_burst:.3f}",
                                   f"{pct(lat, 50) * 1000:.0f}", f"{pct(lat, 99) * 1000:.0f}"])
            bench.api.faults.clear()
            print_table("Burst of pod creates, 10 ms injected status-write latency",
                        ["committer", "pods", "pods/s", "writes", "writes/pod", "p50 ms", "p99 ms"], burst_rows)
            print(f"  group commit / one-write-per-pod throughput: {results[True] / results[False]:.1f}x")
        finally:
            bench.close()


if __name__ == "__main__":
    main()
