"""The webhook as deployed: `/readyz` over HTTPS with a dead OPA and with the embedded engine,
and `spreadgate webhook --log-format json --log-level debug` writing one JSON object per line."""

from __future__ import annotations

import json
import logging
import signal
import socket
from pathlib import Path
from typing import Any

import pytest
import urllib3
import webhook_testkit
from polling import wait_until
from webhook_testkit import SPREADS, KubeEnv, WebhookProcess, spread, webhook_https, write_cert

from benchmarks.kube_objects import admission_review, controller_ref, pod_create_request
from py_engine.apiclient import REPLICASETS
from py_engine.logsetup import record_fields
from webhook.runtime import Webhook, WebhookOptions

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


kube_env = webhook_testkit.kube_env  # the fixture, used by name


env = webhook_testkit.env  # the fixture, used by name


def dead_opa_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def https() -> urllib3.PoolManager:
    return webhook_https(timeout=10.0)


def local_webhook(env: KubeEnv, tmp_path: Path, **options: Any) -> Webhook:
    """A webhook (not started) on `env`'s kubeconfig with 4 threads and no node simulation."""
    cert, key = write_cert(tmp_path)
    return Webhook(
        WebhookOptions(
            cert_file=cert,
            key_file=key,
            kubeconfig=env.kubeconfig,
            host="127.0.0.1",
            port=0,
            threads=4,
            node_simulation=False,
            watch_timeout_seconds=30,
            **options,
        )
    )


@pytest.mark.parametrize("opa", [False, True], ids=["embedded", "dead-opa"])
def test_readyz_follows_the_caches_and_the_policy_engine(env: KubeEnv, tmp_path: Path, opa: bool) -> None:
    url = dead_opa_url() if opa else None
    hook = local_webhook(env, tmp_path, opa_url=url)
    http = https()
    try:
        hook.start()
        assert hook.view.wait_ready(20)
        resp = http.request("GET", hook.url + "/readyz")
        if opa:
            assert resp.status == 503
            assert f"policy engine unreachable: OPA at {url} unreachable" in resp.data.decode()
        else:
            assert (resp.status, resp.data) == (200, b"ok\n")
        assert http.request("GET", hook.url + "/healthz").status == 200
    finally:
        http.clear()
        hook.stop()


def pod_review(uid: str) -> dict[str, Any]:
    return admission_review(
        pod_create_request({"metadata": {"name": f"p-{uid}", "namespace": "default"}}, uid)
    )


def test_json_logs_parse_and_show_every_admission_at_debug(env: KubeEnv, tmp_path: Path) -> None:
    cert, key = write_cert(tmp_path)
    proc = WebhookProcess(
        env.kubeconfig,
        cert,
        key,
        tmp_path / "webhook.log",
        "--log-format",
        "json",
        "--log-level",
        "debug",
        "--opa-url",
        dead_opa_url(),
    )
    http = https()
    try:
        reason = "not ready: policy engine unreachable: OPA at http://127.0.0.1:"
        wait_until(
            lambda: http.request("GET", proc.url + "/readyz").data.decode().startswith(reason) or None,
            30,
            "readyz to name the dead OPA only",
        )
        for i in range(3):
            resp = http.request(
                "POST",
                proc.url + "/mutate/pods",
                body=json.dumps(pod_review(f"u{i}")),
                headers={"Content-Type": "application/json"},
            )
            assert resp.status == 200  # answered after its record was written
        proc.proc.send_signal(signal.SIGTERM)  # a clean exit, so the "stopping" line is written too
        assert proc.proc.wait(15) == 0
        text = proc.text()
    finally:
        http.clear()
        proc.stop()
    entries = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert all({"ts", "level", "logger", "msg"} <= e.keys() for e in entries)
    assert (
        any(e["msg"].startswith("serving on https://") for e in entries) and entries[-1]["msg"] == "stopping"
    )
    admissions = [e for e in entries if e.get("uid", "").startswith("u")]
    assert [(e["level"], e["operation"], e["pod"], e["decision"]) for e in admissions] == [
        ("debug", "CREATE", f"p-u{i}", "skipped") for i in range(3)
    ]
    assert all(isinstance(e["duration_ms"], float) for e in admissions)
    readiness = [e for e in entries if e["logger"] == "webhook.readiness"]
    assert {e["level"] for e in readiness} == {"warning"} and "OPA at http://127.0.0.1:" in readiness[-1][
        "reason"
    ]


def test_a_failed_status_write_is_one_record_per_pod_naming_the_spread(
    env: KubeEnv, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    rs = env.client.create(
        REPLICASETS,
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template},
        },
    )
    env.client.create(
        SPREADS, "default", spread("ws", [{"name": "a", "maxReplicas": 2}, {"name": "b"}], kind="ReplicaSet")
    )
    env.faults.set_spec("workloadspreads/status:update:error500=1")
    hook = local_webhook(env, tmp_path, commit_timeout=5.0)
    body = pod_review("c1")
    body["request"]["object"]["metadata"]["ownerReferences"] = [
        controller_ref("ReplicaSet", "web", rs["metadata"]["uid"])
    ]
    http = https()
    caplog.set_level(logging.DEBUG)
    try:
        hook.start()
        assert hook.view.wait_ready(20)
        resp = http.request(
            "POST",
            hook.url + "/mutate/pods",
            body=json.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        answer = json.loads(resp.data)["response"]
        assert answer["allowed"] is False and answer["status"]["code"] == 500
    finally:
        http.clear()
        hook.stop()
    ours = [
        r
        for r in caplog.records
        if r.name.startswith(("webhook", "py_engine"))
        and "500" in r.getMessage() + str(record_fields(r).get("cause"))
    ]
    [record] = ours
    got = record_fields(record)
    assert record.levelno == logging.ERROR and record.getMessage() == "admission denied"
    assert (got["namespace"], got["pod"], got["spread"], got["decision"], got["operation"], got["uid"]) == (
        "default",
        "p-c1",
        "ws",
        "commit-failed",
        "CREATE",
        "c1",
    )
    assert "InternalError" in got["cause"] and got["reason"] == "CommitError"
