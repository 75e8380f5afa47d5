"""The webhook as the cluster grows, and three webhook replicas behind one address.

Processes as in `benchmarks/bench_webhook.py`: this one runs the embedded API server over
HTTPS; each webhook runs as `python -m benchmarks.webhook_proc` (the real wiring, node
simulation on as `spreadgate webhook` ships, so it watches every pod and node); load comes
from `python -m benchmarks.loadgen`; three replicas share one port (SO_REUSEPORT: the kernel
spreads the connections, as kube-proxy's iptables rules spread a Service's), and, as a reference,
sit behind `python -m benchmarks.rr_proxy` (round robin per connection, TLS end to end).

1. Cluster size. The API server is pre-loaded with N pods and S spreads elsewhere in the
   cluster (S namespaces' worth of workloads, 10 spreads a namespace, each spread with its
   Deployment, ReplicaSet and N/S Running pods bound over 100 nodes) at (1,000, 10),
   (10,000, 100) and (50,000, 1,000); the webhook lists and watches all of it. Measured per
   size, with a pod elsewhere updated every 20 ms (so the pod cache changes under load, as in
   a live cluster): webhook CPU per admission and p99 of `/mutate/pods` beside `/noop` (the
   same-run baseline), the API server requests per admission, the API server requests per
   second the idle webhook sends (watches only), and the webhook's RSS after its caches
   synced. One more point, (1,000 pods, 1,000 spreads), separates memory per spread from
   memory per pod.
2. Replicas. A spread with caps 400 / 400 / none and a 1,500-pod burst at 10 ms injected
   status-write latency: one webhook process with 66 threads on its own port (baseline) and
   three with 22 each on one port (the target), both driven by the load generator's lighter
   client (`stdlib`: the client shares the two cores, and CPU it takes is taken from the three,
   not from one process bound by its own lock); then the same two under the urllib3 client
   and the two behind the proxy (references: the heavier client, and what a process copying
   the bytes in between costs), bursts alternated three times (each keeps its best
   throughput; writes, conflicts, requests, GETs, applies and CPU per pod over all three,
   the webhooks' CPU split by thread (workers, event loop, spread watch); the ratios of every
   round and each side's CPU per pod printed to show their spread; each
   process's share of the requests, to show the load really spread); then the three on one
   port again with one replica killed (SIGKILL) once a third of the burst is reserved. Every
   allowed answer's patch is read back: pods per subset against its cap. After the kill run,
   every admitted pod is created in the API server and the real controller syncs once
   (`spreadgate controller --once`): each created pod must be counted exactly once in the
   spread's status (subset replicas; its creatingPods entry gone).
3. The controller's steady state: `spreadgate controller` running against the smallest
   cluster for a few seconds after its first sync: API server requests per second.

Targets: at the largest size, admission CPU and p99 within 1.2x of the smallest (each
normalised by the same size's /noop, so machine load cancels); replicas: 0 pods over a cap,
<= 0.1 writes per pod, throughput >= one process's; after the kill: 0 over cap, 0 lost; 0
non-watch requests per second in steady state.

Run: `python -m benchmarks bench_scale` (about 6 minutes on a loaded 2-core machine; `--quick`
at 1,000 / 5,000 pods and a 600-pod burst, about 2 minutes). The replicas part alone:
`python -m benchmarks.bench_scale --replicas` (about 75 s; with `--quick`, the 600-pod burst).
"""

from __future__ import annotations

import base64
import copy
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import jsonpatch

from benchmarks.bench_webhook import (
    CLIENTS,
    SPREADS,
    Bench,
    WebhookProcess,
    finish_load,
    load,
    pct,
    start_load,
)
from benchmarks.common import Target, machine_description, print_table
from py_engine.model.constants import MATCHED_ANNOTATION

FULL_SIZES = ((1_000, 10), (10_000, 100), (50_000, 1_000))
QUICK_SIZES = ((1_000, 10), (5_000, 100))
MEMORY_POINT = (1_000, 1_000)
SPREADS_PER_NAMESPACE = 10
NODES = 100
FLAT_TARGET = 1.2
WRITES_TARGET = 0.1
BURST = 1_500
QUICK_BURST = 600
BURST_ROUNDS = 3
CAPS = {"a": 400, "b": 400, "c": None}
TOTAL_THREADS = 66
REPLICAS = 3
JSON = dict[str, Any]
API_TIMEOUT = 120.0
"""The webhooks' client timeout here: the embedded API server answers a LIST in one piece, built
before its first byte (no pagination, no streaming), and 50,000 pods of 4.4 KB take longer than
the shipped 10 s read timeout on a loaded machine; a real API server streams the list."""


COMMITTER_COUNTERS = (
    "writes",
    "conflicts",
    "reads",
    "retries",
    "backoffs",
    "refreshed",
    "stale_skips",
    "overtaken",
    "applied",
    "committed",
)
"""The committers' counters a burst reports (`CommitterStats`)."""
THREAD_CPU = {
    "workers_cpu": "webhook-worker",
    "loop_cpu": "webhook-server",
    "watch_cpu": "watch-cache-workloadspreads",
}
"""Where the webhooks' CPU goes: CPU seconds of their threads by name (`webhook_proc`): the
request workers (decisions; the committer's applies and writes run on them), the front end's
event loop (TLS, HTTP), the spreads' watch (decoding every status write, its own and the
peers')."""
COUNTED = (*COMMITTER_COUNTERS, *THREAD_CPU, "requests", "cpu", "proxy_cpu", "api_cpu", "load_cpu")
"""What a burst counts, summed over rounds (per pod in the report)."""


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (/proc; 0 where absent)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for (the load
    generators, each reaped when its burst ends)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load_averages() -> str:
    """The machine's 1/5/15-minute load averages, printed beside every figure (shared machine)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def populate(bench: Bench, pods: int, spreads: int) -> None:
    """`spreads` spreads with their workloads and `pods` Running pods, 10 spreads a namespace,
    none in `default` (where the measured admissions happen), written in process (no HTTPS)."""
    api = bench.api
    for n in range(NODES):
        api.create(
            "v1/nodes",
            None,
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"node-{n}",
                    "labels": {
                        "topology.kubernetes.io/zone": f"zone-{n % 3}",
                        "kubernetes.io/hostname": f"node-{n}",
                    },
                },
                "status": {
                    "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "1000"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            },
        )
    per_spread = pods // spreads
    serial = 0
    for k in range(spreads):
        namespace = f"scale-{k // SPREADS_PER_NAMESPACE}"
        if k % SPREADS_PER_NAMESPACE == 0:
            api.create(
                "v1/namespaces",
                None,
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            )
        app = f"app-{k}"
        template = {
            "metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
        dep = api.create(
            "apps/v1/deployments",
            namespace,
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": app},
                "spec": {
                    "replicas": per_spread,
                    "selector": {"matchLabels": {"app": app}},
                    "template": template,
                },
            },
        )
        rs = api.create(
            "apps/v1/replicasets",
            namespace,
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{app}-h",
                    "labels": {"app": app, "pod-template-hash": "h"},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": app,
                            "uid": dep["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "replicas": per_spread,
                    "selector": {"matchLabels": {"app": app}},
                    "template": template,
                },
            },
        )
        api.create(
            "spreadgate.dev/v1alpha1/workloadspreads",
            namespace,
            {
                "apiVersion": "spreadgate.dev/v1alpha1",
                "kind": "WorkloadSpread",
                "metadata": {"name": f"ws-{k}"},
                "spec": {
                    "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": app},
                    "subsets": [{"name": "a", "maxReplicas": per_spread // 2}, {"name": "b"}],
                },
            },
        )
        for i in range(per_spread):
            subset = "a" if i < per_spread // 2 else "b"
            api.create(
                "v1/pods",
                namespace,
                realistic_pod(app, i, f"ws-{k}", subset, rs["metadata"]["uid"], f"node-{serial % NODES}"),
            )
            serial += 1


def realistic_pod(app: str, i: int, spread: str, subset: str, rs_uid: str, node: str) -> JSON:
    """A Running pod the size of a typical one in a watch cache (about 3.5 KB of JSON: two
    containers with env, ports, probes and mounts, managedFields, container statuses), so
    memory per pod is not flattered by toy objects."""
    name = f"{app}-h-{i}"
    container = {
        "image": "registry.example/team/service:1.27.3",
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": f"SETTING_{n}", "value": f"value-{n}"} for n in range(6)],
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 10},
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/app"},
            {
                "name": "kube-api-access",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            },
        ],
    }
    stamp = "2026-06-01T12:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": app, "pod-template-hash": "h", "team": "payments", "tier": "backend"},
            "annotations": {
                MATCHED_ANNOTATION: json.dumps({"name": spread, "subset": subset}),
                "kubectl.kubernetes.io/restartedAt": stamp,
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-h",
                    "uid": rs_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": stamp,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}}},
                        "f:spec": {"f:containers": {'k:{"name":"app"}': {}}},
                    },
                },
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": stamp,
                    "fieldsType": "FieldsV1",
                    "subresource": "status",
                    "fieldsV1": {"f:status": {"f:conditions": {}, "f:podIP": {}}},
                },
            ],
        },
        "spec": {
            "nodeName": node,
            "serviceAccountName": "default",
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "containers": [dict(container, name="app"), dict(container, name="sidecar")],
            "volumes": [
                {"name": "config", "configMap": {"name": f"{app}-config"}},
                {
                    "name": "kube-api-access",
                    "projected": {
                        "sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]
                    },
                },
            ],
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {
            "phase": "Running",
            "podIP": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
            "hostIP": "192.168.0.1",
            "startTime": stamp,
            "qosClass": "Burstable",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": stamp}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": c,
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "image": "registry.example/team/service:1.27.3",
                    "imageID": "registry.example/team/service@sha256:" + "0" * 64,
                    "containerID": "containerd://" + "1" * 64,
                    "state": {"running": {"startedAt": stamp}},
                }
                for c in ("app", "sidecar")
            ],
        },
    }


class Churn:
    """A pod elsewhere relabelled every `period` seconds (in process), so the webhook's pod
    cache keeps changing under load as it does in a live cluster."""

    def __init__(self, bench: Bench, namespace: str, name: str, period: float = 0.02) -> None:
        self.bench, self.namespace, self.name, self.period = bench, namespace, name, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.updates = 0

    def _run(self) -> None:
        deadline = time.monotonic() + 1800
        while not self._stop.wait(self.period) and time.monotonic() < deadline:
            self.bench.api.patch(
                "v1/pods",
                self.namespace,
                self.name,
                {"metadata": {"labels": {"churn": str(self.updates)}}},
                "merge",
            )
            self.updates += 1

    def __enter__(self) -> Churn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def start_webhook(
    bench: Bench,
    *,
    threads: int,
    sync_timeout: float = 300,
    node_simulation: bool = True,
    port: int = 0,
    reuse_port: bool = False,
) -> WebhookProcess:
    return WebhookProcess(
        {
            "port": port,
            "reuse_port": reuse_port,
            "kubeconfig": bench.kubeconfig,
            "cert": str(bench.cert),
            "key": str(bench.key),
            "batching": True,
            "threads": threads,
            "commit_timeout": 8.0,
            "node_simulation": node_simulation,
            "sync_timeout": sync_timeout,
            "api_timeout": API_TIMEOUT,
        }
    )


# ----------------------------------------------------------------- 1. cluster size


def measure_size(
    pods: int,
    spreads: int,
    rounds: int,
    per_round: int,
    *,
    memory_only: bool = False,
    controller: bool = False,
    without_simulation: bool = False,
) -> JSON:
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        bench = Bench(Path(tmp))
        hook: WebhookProcess | None = None
        try:
            started = time.perf_counter()
            populate(bench, pods, spreads)
            loaded = time.perf_counter() - started
            started = time.perf_counter()
            hook = start_webhook(bench, threads=CLIENTS)
            synced = time.perf_counter() - started
            time.sleep(1.0)
            rss = hook.stats()["rss"]
            out: JSON = {"pods": pods, "spreads": spreads, "rss": rss, "load_s": loaded, "sync_s": synced}
            if memory_only:
                return out
            # Steady state: the idle webhook's non-watch requests over a few seconds.
            before = bench.server.requests
            time.sleep(3.0)
            out["idle_rps"] = (bench.server.requests - before) / 3.0
            if controller:  # the controller's steady state on this cluster, the webhook idle beside it
                out["controller_rps"] = controller_steady(bench)
            template = bench.template()
            lat: dict[str, list[float]] = {"/noop": [], "/mutate/pods": []}
            cpu = {"/noop": 0.0, "/mutate/pods": 0.0}
            requests = 0
            with Churn(bench, "scale-0", "app-0-h-0"):
                for _ in range(rounds):
                    bench.new_spread()
                    time.sleep(0.5)
                    for path in lat:
                        before_stats = hook.stats()
                        before_requests = bench.server.requests
                        result = load(
                            hook.url + path,
                            bench.ca.cert_pem,
                            template,
                            per_round,
                            warm=CLIENTS,
                            warm_path="/noop",
                        )
                        after_stats = hook.stats()
                        lat[path] += result["latencies"]
                        cpu[path] += after_stats["cpu"] - before_stats["cpu"]
                        if path == "/mutate/pods":
                            requests += bench.server.requests - before_requests
            admissions = rounds * per_round
            out |= {
                "cpu_noop": cpu["/noop"] / (admissions + rounds * CLIENTS),
                "cpu_mutate": cpu["/mutate/pods"] / admissions,
                "p99_noop": pct(lat["/noop"], 99),
                "p99_mutate": pct(lat["/mutate/pods"], 99),
                "requests_per_admission": requests / admissions,
                "rss_after": hook.stats()["rss"],
            }
            if without_simulation:  # `--disable-node-simulation`: no pod or node cache
                hook.close()
                hook = start_webhook(bench, threads=CLIENTS, node_simulation=False)
                time.sleep(1.0)
                out["rss_without_simulation"] = hook.stats()["rss"]
            return out
        finally:
            if hook is not None:
                hook.close()
            bench.close()


# ----------------------------------------------------------------- 2. replicas


FRONTS = ("direct", "kernel", "proxy")
"""How a setup's processes share one address: `direct` (one process, its own port), `kernel`
(every process listens on one port with SO_REUSEPORT and the kernel spreads the connections by
a hash of their addresses, as kube-proxy's iptables rules pick a Service's backend at random
per connection; no process in between) or `proxy` (`benchmarks.rr_proxy`, round robin per
connection, copying the TLS bytes in a Python process of its own)."""


class Replicas:
    """`count` webhook processes behind one address (`front`, one of `FRONTS`); `url` is it."""

    def __init__(self, bench: Bench, count: int, threads: int, *, front: str = "kernel") -> None:
        if front not in FRONTS or (front == "direct" and count != 1):
            raise ValueError(f"front {front!r} for {count} processes")
        self.front = front
        self.proxy: subprocess.Popen[str] | None = None
        self.hooks: list[WebhookProcess] = []
        if front == "kernel":
            # The first one binds a free port; the others join it (SO_REUSEPORT on every one).
            self.hooks.append(start_webhook(bench, threads=threads, reuse_port=True))
            port = int(self.hooks[0].url.rsplit(":", 1)[1])
            self.hooks += [
                start_webhook(bench, threads=threads, reuse_port=True, port=port) for _ in range(count - 1)
            ]
            self.url = self.hooks[0].url
            return
        self.hooks = [start_webhook(bench, threads=threads) for _ in range(count)]
        if front == "direct":
            self.url = self.hooks[0].url
            return
        backends = [
            [u.removeprefix("https://").rsplit(":", 1)[0], int(u.rsplit(":", 1)[1])]
            for u in (h.url for h in self.hooks)
        ]
        self.proxy = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.rr_proxy"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proxy.stdin is not None and self.proxy.stdout is not None
        self.proxy.stdin.write(json.dumps({"backends": backends}) + "\n")
        self.proxy.stdin.flush()
        self.url = f"https://127.0.0.1:{json.loads(self.proxy.stdout.readline())['port']}"

    def committer(self) -> JSON:
        """The committers' counters summed over the live replicas, their CPU seconds (`cpu`) and
        the proxy's (`proxy_cpu`), to see where a burst's time goes."""
        total: JSON = {key: 0.0 for key in (*COMMITTER_COUNTERS, *THREAD_CPU)} | {"cpu": 0.0, "batches": 0}
        total["answered"] = [0] * len(self.hooks)
        for n, hook in enumerate(self.hooks):
            if hook.proc.poll() is None:
                stats = hook.stats()
                total["cpu"] += stats["cpu"]
                for key in COMMITTER_COUNTERS:
                    total[key] += stats["committer"].get(key, 0)
                for key, thread in THREAD_CPU.items():
                    total[key] += stats["thread_cpu"].get(thread, 0.0)
                total["batches"] += sum(stats["committer"]["batch_sizes"].values())
                total["answered"][n] = stats["answered"]
        total["proxy_cpu"] = process_cpu(self.proxy.pid) if self.proxy is not None else 0.0
        return total

    def close(self) -> None:
        for hook in self.hooks:
            hook.close()
        if self.proxy is not None:
            assert self.proxy.stdin is not None
            self.proxy.stdin.close()
            try:
                self.proxy.wait(10)
            except subprocess.TimeoutExpired:
                self.proxy.kill()
                self.proxy.wait(5)
            if self.proxy.stdout is not None:
                self.proxy.stdout.close()


def capped_spread(bench: Bench) -> str:
    if bench.spread_no:
        bench.client.delete(SPREADS, "default", f"ws-{bench.spread_no}")
    bench.spread_no += 1
    name = f"ws-{bench.spread_no}"
    subsets = [{"name": s} | ({"maxReplicas": cap} if cap is not None else {}) for s, cap in CAPS.items()]
    bench.client.create(
        SPREADS,
        "default",
        {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": name},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "subsets": subsets,
            },
        },
    )
    time.sleep(1.0)  # the spread reaches every replica's watch cache
    return name


def admitted_pods(template: JSON, patches: list[str]) -> list[JSON]:
    """Each allowed answer's pod: the review's pod with the answer's patch applied."""
    out = []
    for patch in patches:
        pod = copy.deepcopy(template["request"]["object"])
        if patch:
            pod = jsonpatch.apply_patch(pod, json.loads(base64.b64decode(patch)))
        out.append(pod)
    return out


def subset_of(pod: JSON) -> str | None:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED_ANNOTATION)
    return json.loads(raw).get("subset") if raw else None


def over_caps(pods: list[JSON]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pod in pods:
        subset = subset_of(pod)
        if subset is not None:
            counts[subset] = counts.get(subset, 0) + 1
    return {s: counts.get(s, 0) for s in CAPS} | {
        "over": sum(max(0, counts.get(s, 0) - cap) for s, cap in CAPS.items() if cap is not None)
    }


def burst(
    bench: Bench, replicas: Replicas, count: int, *, client: str = "stdlib", kill_after: float | None = None
) -> JSON:
    bench.api.faults.set_spec("workloadspreads/status:update:latency=10ms")
    try:
        name = capped_spread(bench)
        template = bench.template()
        before = replicas.committer()
        before_requests = bench.server.requests
        before_api_cpu = time.process_time()
        before_children = children_cpu()
        proc = start_load(
            replicas.url + "/mutate/pods",
            bench.ca.cert_pem,
            template,
            count,
            warm=CLIENTS,
            warm_path="/noop",
            record=True,
            client=client,
        )
        killed_at = None
        if kill_after is not None:
            # Mid-burst: once the spread's status holds a third of the burst's reservations.
            deadline = time.monotonic() + 120
            while reserved(bench, name) < kill_after * count and time.monotonic() < deadline:
                time.sleep(0.01)
            killed_at = reserved(bench, name)
            replicas.hooks[0].proc.send_signal(signal.SIGKILL)
        result = finish_load(proc, strict=kill_after is None)
        requests = bench.server.requests - before_requests
        api_cpu = time.process_time() - before_api_cpu
        load_cpu = children_cpu() - before_children  # the load generator, reaped by finish_load
        after = replicas.committer()
    finally:
        bench.api.faults.clear()
    pods = admitted_pods(template, result["patches"])
    out: JSON = {
        "spread": name,
        "wall": result["wall"],
        "admitted": len(pods),
        "errors": result["bad"],
        "error_samples": result["errors"][:2],
        "subsets": over_caps(pods),
        "requests": requests,
        "p99": pct(result["latencies"], 99),
        "pods": pods,
        "killed_at": killed_at,
        "api_cpu": api_cpu,
        "load_cpu": load_cpu,
    }
    if kill_after is None:  # every replica answered: the counters cover the whole burst
        out |= {
            key: after[key] - before[key]
            for key in (*COMMITTER_COUNTERS, *THREAD_CPU, "batches", "cpu", "proxy_cpu")
        }
        # How the one address spread the burst: each process's share of the requests it answered
        # (the warm-up's included).
        answered = [a - b for a, b in zip(after["answered"], before["answered"], strict=True)]
        out["shares"] = [n / max(sum(answered), 1) for n in answered]
    return out


def reserved(bench: Bench, spread: str) -> int:
    """Reservations (creatingPods entries) in the spread's stored status, read in process."""
    status = bench.api.get("spreadgate.dev/v1alpha1/workloadspreads", "default", spread).get("status") or {}
    versioned = status.get("versionedSubsetStatuses") or {}
    entries = [e for bucket in versioned.values() for e in bucket] or list(status.get("subsetStatuses") or [])
    return sum(len(e.get("creatingPods") or {}) for e in entries)


def finalise(bench: Bench, tmp: Path, spread: str, pods: list[JSON]) -> JSON:
    """Create every admitted pod, sync the spread once with the real controller, and check each
    created pod is counted exactly once in its status."""
    for n, pod in enumerate(pods):
        pod = copy.deepcopy(pod)
        pod["metadata"]["name"] = f"web-h-burst-{n}"
        pod["metadata"].pop("generateName", None)
        bench.api.create("v1/pods", "default", pod)
    done = subprocess.run(
        [
            "spreadgate",
            "controller",
            "--kubeconfig",
            bench.kubeconfig,
            "--once",
            "--namespace",
            "default",
            "--no-united-deployments",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"controller --once failed: {done.stderr[-2000:]}")
    status = bench.api.get("spreadgate.dev/v1alpha1/workloadspreads", "default", spread).get("status") or {}
    entries = {e["name"]: e for e in status.get("subsetStatuses") or []}
    expected = over_caps(pods)
    uids = {
        json.loads(p["metadata"]["annotations"][MATCHED_ANNOTATION]).get("uid")
        for p in pods
        if MATCHED_ANNOTATION in (p["metadata"].get("annotations") or {})
    }
    every_entry = [
        *entries.values(),
        *(e for bucket in (status.get("versionedSubsetStatuses") or {}).values() for e in bucket),
    ]
    still_creating = sum(1 for e in every_entry for key in (e.get("creatingPods") or {}) if key in uids)
    counted = {s: int((entries.get(s) or {}).get("replicas", 0)) for s in CAPS}
    mismatched = sum(abs(counted[s] - expected[s]) for s in CAPS)
    return {
        "counted": counted,
        "expected": {s: expected[s] for s in CAPS},
        "lost": mismatched + still_creating,
        "still_creating": still_creating,
    }


SETUPS = (
    ("one", 1, "direct", "stdlib"),
    ("three", REPLICAS, "kernel", "stdlib"),
    # References: the same two under the heavier client (the earlier rounds' figures), and what a
    # user-space proxy in front costs, with one process and with three.
    ("one_urllib3", 1, "direct", "urllib3"),
    ("three_urllib3", REPLICAS, "kernel", "urllib3"),
    ("one_proxied", 1, "proxy", "stdlib"),
    ("three_proxied", REPLICAS, "proxy", "stdlib"),
)
"""The replica bursts' setups: key, processes (`TOTAL_THREADS` threads between them), front, the
load generator's client (`benchmarks.loadgen.CLIENT_KINDS`). Setups with the same processes and
front share them."""
RATIOS = (
    ("three", "one"),
    ("three_urllib3", "one_urllib3"),
    ("three_proxied", "one_proxied"),
    ("three_proxied", "one"),
)
"""Throughput ratios reported round by round and best of each: the target (three replicas on one
address spread by the kernel against one process on its own, the lean client), then the same
under urllib3, then the proxied pair."""


def replicas_run(quick: bool) -> JSON:
    """One process and three replicas side by side, bursts alternated `BURST_ROUNDS` times (the
    machine's load shifts between bursts: each configuration keeps its least disturbed burst,
    by throughput, as `common.best_of`); then the three with one killed mid-burst."""
    count = QUICK_BURST if quick else BURST
    out: JSON = {"burst": count, "rounds": BURST_ROUNDS}
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as tmp:
        bench = Bench(Path(tmp))
        started: dict[tuple[int, str], Replicas] = {}
        try:
            setups: dict[str, tuple[Replicas, str]] = {}
            for key, processes, front, client in SETUPS:
                if (processes, front) not in started:
                    started[(processes, front)] = Replicas(
                        bench, processes, TOTAL_THREADS // processes, front=front
                    )
                setups[key] = (started[(processes, front)], client)
            three, three_client = setups["three"]
            runs: dict[str, list[JSON]] = {key: [] for key in setups}
            for _ in range(BURST_ROUNDS):
                for key, (setup, client) in setups.items():
                    runs[key].append(burst(bench, setup, count, client=client))
            # Each round's bursts run back to back: the spread of the ratios round by round.
            for top, base in RATIOS:
                out[f"ratios_{top}_{base}"] = [
                    (t["admitted"] / t["wall"]) / (o["admitted"] / o["wall"])
                    for o, t in zip(runs[base], runs[top], strict=True)
                ]
            for key, done in runs.items():
                best = dict(max(done, key=lambda r: r["admitted"] / r["wall"]))
                best["rates"] = [r["admitted"] / r["wall"] for r in done]
                best["all_shares"] = [r["shares"] for r in done]
                # Caps and counters over every round: any pod over a cap in any burst counts.
                best["subsets"] = dict(best["subsets"], over=sum(r["subsets"]["over"] for r in done))
                for counter in (*COUNTED, "batches"):
                    best[counter] = (
                        sum(r[counter] for r in done) * best["admitted"] / sum(r["admitted"] for r in done)
                    )
                out[key] = best
            out["killed"] = burst(bench, three, count, client=three_client, kill_after=1 / 3)
            out["finalised"] = finalise(bench, Path(tmp), out["killed"]["spread"], out["killed"]["pods"])
        finally:
            for replicas in started.values():
                replicas.close()
            bench.close()
    for run in (*(key for key, *_ in SETUPS), "killed"):
        out[run].pop("pods")
    return out


def controller_steady(bench: Bench, window: float = 4.0) -> float:
    """`spreadgate controller` against the cluster: non-watch requests per second after its first
    sync (every spread's status written, then two seconds without a request)."""
    proc = subprocess.Popen(
        [
            "spreadgate",
            "controller",
            "--kubeconfig",
            bench.kubeconfig,
            "--no-united-deployments",
            "--metrics-port",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not all(  # first sync: every spread's status written
            (ws.get("status") or {}).get("observedGeneration")
            for ws in bench.api.list("spreadgate.dev/v1alpha1/workloadspreads")["items"]
        ):
            time.sleep(0.5)
        last = -1
        while time.monotonic() < deadline:  # then settled: two seconds without a request
            time.sleep(2.0)
            now = bench.server.requests
            if now == last:
                break
            last = now
        before = bench.server.requests
        time.sleep(window)
        return (bench.server.requests - before) / window
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


# ----------------------------------------------------------------- report


def main(quick: bool = False) -> dict[str, Any]:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    rounds, per_round = (2, 400) if quick else (2, 1500)
    print(f"  load average before: {load_averages()}")
    by_size = [
        measure_size(p, s, rounds, per_round, controller=n == 0, without_simulation=n == len(sizes) - 1)
        for n, (p, s) in enumerate(sizes)
    ]
    memory_point = measure_size(*MEMORY_POINT, 0, 0, memory_only=True)
    print(f"  load average after the cluster sizes: {load_averages()}")
    rows = []
    for r in by_size:
        rows.append(
            [
                f"{r['pods']:,}",
                f"{r['spreads']:,}",
                f"{r['cpu_mutate'] * 1e3:.2f}",
                f"{r['cpu_noop'] * 1e3:.2f}",
                f"{r['cpu_mutate'] / r['cpu_noop']:.2f}",
                f"{r['p99_mutate'] * 1e3:.0f}",
                f"{r['p99_noop'] * 1e3:.0f}",
                f"{r['p99_mutate'] / r['p99_noop']:.2f}",
                f"{r['requests_per_admission']:.3f}",
                f"{r['idle_rps']:.2f}",
                f"{r['rss'] / 2**20:.0f}",
                f"{r['sync_s']:.1f}",
            ]
        )
    print_table(
        f"Webhook per admission by cluster size ({rounds} x {per_round} admissions a size, "
        f"{CLIENTS} clients, "
        "a pod elsewhere updated every 20 ms)",
        [
            "pods",
            "spreads",
            "CPU/adm ms",
            "noop CPU ms",
            "CPU ratio",
            "p99 ms",
            "noop p99",
            "p99 ratio",
            "API req/adm",
            "idle req/s",
            "RSS MiB",
            "sync s",
        ],
        rows,
    )
    small, large = by_size[0], by_size[-1]
    cpu_growth = (large["cpu_mutate"] / large["cpu_noop"]) / (small["cpu_mutate"] / small["cpu_noop"])
    p99_growth = (large["p99_mutate"] / large["p99_noop"]) / (small["p99_mutate"] / small["p99_noop"])
    raw_cpu_growth = large["cpu_mutate"] / small["cpu_mutate"]
    per_spread = (memory_point["rss"] - small["rss"]) / (MEMORY_POINT[1] - small["spreads"])
    per_pod = ((large["rss"] - small["rss"]) - per_spread * (large["spreads"] - small["spreads"])) / (
        large["pods"] - small["pods"]
    )
    base = small["rss"] - per_pod * small["pods"] - per_spread * small["spreads"]
    after = " / ".join(f"{r['rss_after'] / 2**20:.0f}" for r in by_size)
    print(
        f"  RSS after the admissions: {after} MiB; "
        f"at {large['pods']:,} pods / {large['spreads']:,} spreads "
        f"with --disable-node-simulation (no pod or node "
        f"cache): {large['rss_without_simulation'] / 2**20:.0f} MiB"
    )
    print(
        f"  largest / smallest: admission CPU {cpu_growth:.2f}x normalised by /noop "
        f"({raw_cpu_growth:.2f}x raw), "
        f"p99 {p99_growth:.2f}x normalised"
    )
    print(
        f"  RSS: {per_pod * 1000 / 2**20:.1f} MiB per 1,000 pods, "
        f"{per_spread * 100 / 2**20:.1f} MiB per 100 spreads "
        f"(each with its Deployment and ReplicaSet), {base / 2**20:.0f} MiB with an empty cluster "
        f"(memory point: {MEMORY_POINT[0]:,} pods / {MEMORY_POINT[1]:,} spreads = "
        f"{memory_point['rss'] / 2**20:.0f} MiB)"
    )

    rep = replicas_run(quick)
    report_replicas(rep)
    print(
        f"  controller steady state ({small['pods']:,} pods / {small['spreads']} spreads): "
        f"{small['controller_rps']:.2f} non-watch requests/s; "
        f"idle webhook: {max(r['idle_rps'] for r in by_size):.2f} requests/s at most"
    )
    return {
        "sizes": by_size,
        "memory_point": memory_point,
        "cpu_growth": cpu_growth,
        "p99_growth": p99_growth,
        "raw_cpu_growth": raw_cpu_growth,
        "rss_per_1000_pods": per_pod * 1000,
        "rss_per_100_spreads": per_spread * 100,
        "rss_base": base,
        "rss_without_simulation": large["rss_without_simulation"],
        "replicas": rep,
        "quick": quick,
        "load": load_averages(),
    }


LABELS = {
    "one": "1 process x {threads} threads",
    "three": "{replicas} replicas x {each} threads, one port (kernel)",
    "one_urllib3": "1 process, urllib3 client (reference)",
    "three_urllib3": "{replicas} replicas, one port, urllib3 client (reference)",
    "one_proxied": "1 process behind the proxy (reference)",
    "three_proxied": "{replicas} replicas behind the proxy (reference)",
}


def _label(key: str) -> str:
    return LABELS[key].format(threads=TOTAL_THREADS, replicas=REPLICAS, each=TOTAL_THREADS // REPLICAS)


def report_replicas(rep: JSON) -> None:
    """The replicas' tables: the bursts, then where their time goes (per admitted pod)."""
    print(f"  load average after the replicas: {load_averages()}")
    rep_rows = []
    for key, label in (
        *((key, f"{_label(key)} (best of {rep['rounds']})") for key, *_ in SETUPS),
        ("killed", f"{REPLICAS} replicas, one port, one killed at 1/3 of the burst"),
    ):
        r = rep[key]
        subsets = r["subsets"]
        rep_rows.append(
            [
                label,
                r["admitted"],
                r["errors"],
                f"{r['wall']:.2f}",
                f"{r['admitted'] / r['wall']:.0f}",
                " / ".join(f"{subsets[s]}" for s in CAPS),
                subsets["over"],
                f"{r['writes']:.0f}" if "writes" in r else "-",
                f"{r['writes'] / r['admitted']:.3f}" if "writes" in r else "-",
                f"{r['conflicts'] / r['admitted']:.3f}" if "conflicts" in r else "-",
                f"{r['requests'] / r['admitted']:.3f}",
                f"{r['p99'] * 1e3:.0f}",
            ]
        )
    print_table(
        f"Burst of {rep['burst']:,} pods at 10 ms status-write latency, caps "
        + " / ".join(f"{s}={c if c is not None else 'none'}" for s, c in CAPS.items())
        + " (load generator: the stdlib client unless marked urllib3)",
        [
            "webhooks",
            "admitted",
            "errors",
            "wall s",
            "pods/s",
            "a / b / c",
            "over cap",
            "writes",
            "writes/pod",
            "conflicts/pod",
            "API req/pod",
            "p99 ms",
        ],
        rep_rows,
    )
    fin = rep["finalised"]
    print(
        f"  replica killed with {rep['killed']['killed_at']} pods reserved; "
        f"{rep['killed']['errors']} requests cut off (the API server would fail those creates; the "
        "ReplicaSet controller retries them)"
    )
    print(
        f"  after the kill: {fin['counted']} counted by the controller "
        f"for {fin['expected']} admitted and created; "
        f"lost or double-counted: {fin['lost']} (first errors: {rep['killed']['error_samples']})"
    )
    rows = []
    for key, *_ in SETUPS:
        r = rep[key]
        per_pod = r["admitted"]
        rows.append(
            [
                _label(key),
                " / ".join(f"{rate:.0f}" for rate in r["rates"]),
                f"{r['cpu'] / per_pod * 1e3:.2f}",
                " / ".join(f"{r[k] / per_pod * 1e3:.2f}" for k in THREAD_CPU),
                f"{r['proxy_cpu'] / per_pod * 1e3:.2f}",
                f"{r['api_cpu'] / per_pod * 1e3:.2f}",
                f"{r['load_cpu'] / per_pod * 1e3:.2f}",
                f"{r['reads'] / per_pod:.3f}",
                f"{r['retries'] / per_pod:.3f}",
                f"{r['backoffs'] / per_pod:.3f}",
                f"{r['refreshed'] / per_pod:.3f}",
                f"{r['stale_skips'] / per_pod:.3f}",
                f"{r['overtaken'] / per_pod:.3f}",
                f"{r['applied'] / per_pod:.2f}",
                f"{r['committed'] / max(r['batches'], 1):.1f}",
            ]
        )
    print_table(
        "Where a burst's time goes, per admitted pod (all rounds)",
        [
            "webhooks",
            "pods/s each round",
            "webhook CPU ms",
            "of it workers / loop / watch",
            "proxy CPU ms",
            "API server CPU ms",
            "load generator CPU ms",
            "GETs",
            "retries",
            "backoffs",
            "from cache",
            "not sent",
            "overtaken",
            "applies",
            "mean batch",
        ],
        rows,
    )
    for key, *_ in SETUPS:
        if len(rep[key]["all_shares"][0]) > 1:
            print(
                f"  {_label(key)}: share of the requests per process, round by round: "
                + "; ".join(" / ".join(f"{x:.0%}" for x in shares) for shares in rep[key]["all_shares"])
            )
    for top, base in RATIOS:
        hooks = {k: (rep[k]["cpu"] + rep[k]["proxy_cpu"]) / rep[k]["admitted"] * 1e3 for k in (top, base)}
        others = {k: (rep[k]["api_cpu"] + rep[k]["load_cpu"]) / rep[k]["admitted"] * 1e3 for k in (top, base)}
        machine = {k: hooks[k] + others[k] for k in (top, base)}
        print(
            f"  {_label(top)} / {_label(base)}: throughput round by round "
            + ", ".join(f"{ratio:.2f}x" for ratio in rep[f"ratios_{top}_{base}"])
            + f"; best of each {_best_ratio(rep, top, base):.2f}x; CPU per pod, webhooks + proxy "
            f"{hooks[top]:.2f} vs {hooks[base]:.2f} ms, with the API server and the load generator "
            f"{machine[top]:.2f} vs {machine[base]:.2f} ms"
        )


def _best_ratio(rep: JSON, top: str, base: str) -> float:
    return float(rep[top]["admitted"] / rep[top]["wall"]) / float(rep[base]["admitted"] / rep[base]["wall"])


def targets(result: dict[str, Any], quick: bool) -> list[Target]:
    small, large = result["sizes"][0], result["sizes"][-1]
    span = f"{small['pods']:,}/{small['spreads']} -> {large['pods']:,}/{large['spreads']}"
    rep = result["replicas"]
    one, three, killed, fin = rep["one"], rep["three"], rep["killed"], rep["finalised"]
    rate_one, rate_three = one["admitted"] / one["wall"], three["admitted"] / three["wall"]
    applies = None if quick else True
    return [
        Target(
            f"admission CPU growth, pods/spreads {span} (÷ /noop)",
            f"{result['cpu_growth']:.2f}x "
            f"({large['cpu_mutate'] * 1e3:.2f} vs {small['cpu_mutate'] * 1e3:.2f} ms)",
            f"<= {FLAT_TARGET}x",
            applies and result["cpu_growth"] <= FLAT_TARGET,
        ),
        Target(
            f"admission p99 growth, {span} (÷ /noop)",
            f"{result['p99_growth']:.2f}x "
            f"({large['p99_mutate'] * 1e3:.0f} vs {small['p99_mutate'] * 1e3:.0f} ms)",
            f"<= {FLAT_TARGET}x",
            applies and result["p99_growth"] <= FLAT_TARGET,
        ),
        Target(
            "webhook RSS per 1,000 pods / per 100 spreads",
            f"{result['rss_per_1000_pods'] / 2**20:.1f} / {result['rss_per_100_spreads'] / 2**20:.1f} MiB",
            "stated",
            True,
        ),
        Target(
            "idle webhook / controller non-watch requests/s",
            f"{max(r['idle_rps'] for r in result['sizes']):.2f} / {small['controller_rps']:.2f}",
            "0 (watches only)",
            max(r["idle_rps"] for r in result["sizes"]) == 0 and small["controller_rps"] == 0,
        ),
        Target(
            f"{REPLICAS} replicas, {rep['burst']:,}-pod burst at 10 ms: pods over a cap",
            str(three["subsets"]["over"]),
            "0",
            three["subsets"]["over"] == 0,
        ),
        Target(
            f"{REPLICAS} replicas: writes per pod (conflicts per pod)",
            f"{three['writes'] / three['admitted']:.3f} ({three['conflicts'] / three['admitted']:.3f})",
            f"<= {WRITES_TARGET}",
            three["writes"] / three["admitted"] <= WRITES_TARGET,
        ),
        Target(
            f"{REPLICAS} replicas on one port vs 1 process, same {TOTAL_THREADS} threads: throughput",
            f"{rate_three / rate_one:.2f}x ({rate_three:.0f} / {rate_one:.0f} pods/s; webhook CPU per pod "
            f"{three['cpu'] / three['admitted'] * 1e3:.2f} / {one['cpu'] / one['admitted'] * 1e3:.2f} ms; "
            f"urllib3 client, both: {_best_ratio(rep, 'three_urllib3', 'one_urllib3'):.2f}x; "
            f"behind the proxy, both: {_best_ratio(rep, 'three_proxied', 'one_proxied'):.2f}x)",
            ">= 1.0x",
            applies and rate_three >= rate_one,
        ),
        Target(
            "one replica killed mid-burst: over cap / lost",
            f"{killed['subsets']['over']} / {fin['lost']} "
            f"({killed['admitted']} admitted, {killed['errors']} cut off)",
            "0 / 0",
            killed["subsets"]["over"] == 0 and fin["lost"] == 0 and killed["admitted"] > 0,
        ),
    ]


if __name__ == "__main__":
    print(machine_description())
    if "--replicas" in sys.argv:  # the replicas part alone: `python -m benchmarks.bench_scale --replicas`
        print(f"  load average before: {load_averages()}")
        report_replicas(replicas_run(quick="--quick" in sys.argv))
        print(f"  load average after: {load_averages()}")
    else:
        main(quick="--quick" in sys.argv)
