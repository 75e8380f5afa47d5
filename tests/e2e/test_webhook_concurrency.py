"""A burst of concurrent pod CREATEs on one WorkloadSpread, answered by two webhook
processes (real subprocesses running `spreadgate webhook`) with 10 % injected
409s on status writes: no subset ever exceeds its cap and every reservation
is accounted for in the status.

The test plays the API server's admission client itself (AdmissionReview
requests straight to the two processes, alternating), so the burst is exactly
as concurrent as asked; the pods' owner ReplicaSet exists in the API server.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import urllib3
import webhook_testkit
from metrics_kit import value
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, WebhookProcess, spread, webhook_https, write_cert

from benchmarks.kube_objects import (
    admission_review,
    create_deployment_and_replicaset,
    pod_create_request,
    replicaset_pod,
)
from py_engine.apiclient import DEPLOYMENTS, REPLICASETS
from py_engine.model import MATCHED_ANNOTATION

pytestmark = pytest.mark.e2e
CAPS = {"a": 100, "b": 120, "c": 80}


env = webhook_testkit.env  # the fixture, used by name


kube_env = webhook_testkit.kube_env  # the fixture, used by name
# The fixture; the tests ask for it after `env`, so its processes stop first.
processes = webhook_testkit.webhook_processes


def owner_objects(env: KubeEnv) -> dict[str, Any]:
    return create_deployment_and_replicaset(
        env.client, DEPLOYMENTS, REPLICASETS, replicas=500, template_hash="abc"
    )


def review(rs: dict[str, Any]) -> dict[str, Any]:
    pod = replicaset_pod(rs["metadata"]["uid"], template_hash="abc")
    return admission_review(pod_create_request(pod, str(uuid.uuid4())))


def metric(http: urllib3.PoolManager, url: str, name: str) -> float:
    found = value(http.request("GET", url + "/metrics").data.decode(), name)
    assert found is not None, f"{url}/metrics has no {name}"
    return found


def run_burst(env: KubeEnv, procs: list[WebhookProcess], pods: int, tmp_path: Path, n_procs: int) -> None:
    cert, key = write_cert(tmp_path)
    rs = owner_objects(env)
    subsets = [{"name": n, "maxReplicas": cap} for n, cap in CAPS.items()]
    env.client.create(SPREADS, "default", spread("ws", subsets))
    env.faults.set_spec("workloadspreads/status:update:conflict=0.1", seed=11)
    env.faults.force_errors(409)  # ~40 writes at 10 % could see none; the first one conflicts for certain
    for i in range(n_procs):
        procs.append(WebhookProcess(env.kubeconfig, cert, key, tmp_path / f"webhook-{i}.log"))
    http = webhook_https(maxsize=64, block=True, timeout=120.0)
    try:
        for p in procs:
            wait_until(lambda p=p: http.request("GET", p.url + "/readyz").status == 200, 30, "webhook ready")
        reviews = [review(rs) for _ in range(pods)]

        def send(i: int) -> dict[str, Any]:
            resp = http.request(
                "POST",
                procs[i % len(procs)].url + "/mutate/pods",
                body=json.dumps(reviews[i]),
                headers={"Content-Type": "application/json"},
                timeout=30,
            )
            assert resp.status == 200, resp.data[:300]
            out: dict[str, Any] = json.loads(resp.data)["response"]
            assert out["uid"] == reviews[i]["request"]["uid"]
            return out

        with ThreadPoolExecutor(64) as pool:
            answers = list(pool.map(send, range(pods)))
        writes = sum(metric(http, p.url, "spreadgate_status_writes_total") for p in procs)
        # 64 legitimate clients stay inside every front-end limit: nothing refused, the gauges exported.
        assert sum(metric(http, p.url, "spreadgate_webhook_refused_total") for p in procs) == 0
        assert all(metric(http, p.url, "spreadgate_webhook_open_connections") >= 1 for p in procs)
    finally:
        http.clear()
    env.faults.clear()
    admitted: Counter[str] = Counter()
    uids: dict[str, set[str]] = {n: set() for n in CAPS}
    for answer in answers:
        assert answer["allowed"] is True, answer
        if "patch" not in answer:
            continue
        ops = json.loads(base64.b64decode(answer["patch"]))
        value = next(op["value"] for op in ops if op["path"].startswith("/metadata/annotations"))
        raw = value[MATCHED_ANNOTATION] if isinstance(value, dict) else value
        matched = json.loads(raw)
        admitted[matched["subset"]] += 1
        uids[matched["subset"]].add(matched["uid"])
    # Never more than the cap in any subset, and with 500 > 300 pods every slot is taken.
    assert admitted == Counter(CAPS), admitted
    status = env.client.get(SPREADS, "default", "ws")["status"]["versionedSubsetStatuses"]["abc"]
    for entry in status:
        # Every reservation is in the status under the uid the pod was annotated with, and nothing else.
        assert set(entry.get("creatingPods") or {}) == uids[entry["name"]]
        assert entry["missingReplicas"] == 0
    conflicts = env.faults.counts["409"]
    print(
        f"\n{pods} pods, {n_procs} webhook processes: {int(writes)} status writes "
        f"({writes / pods:.3f} per pod), {conflicts} injected 409s"
    )
    assert conflicts > 0
    assert writes / pods <= 0.1, writes


def test_500_concurrent_creates_two_processes(
    env: KubeEnv, processes: list[WebhookProcess], tmp_path: Path
) -> None:
    run_burst(env, processes, 500, tmp_path, 2)


@pytest.mark.stress
def test_2000_concurrent_creates_four_processes(
    env: KubeEnv, processes: list[WebhookProcess], tmp_path: Path
) -> None:
    run_burst(env, processes, 2000, tmp_path, 4)
