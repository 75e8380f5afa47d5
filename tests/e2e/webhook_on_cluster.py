"""An in-process webhook registered on an embedded cluster, and the pods it placed: the setup
the webhook end-to-end tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from webhook_testkit import CRD, webhook_configs, write_cert

from py_engine.model import MATCHED_ANNOTATION
from py_engine.sim.apiserver import ApiServer
from py_engine.sim.cluster import Cluster
from webhook.runtime import Webhook, WebhookOptions


def webhook_for(cluster: Cluster, tmp_path: Path, threads: int) -> Webhook:
    """Serves `cluster` over HTTPS with the WorkloadSpread CRD, starts a webhook on its
    kubeconfig and registers it (mutating and validating); the caller stops the webhook,
    also when this raises after the start."""
    cluster.serve_https(kubeconfig_out=tmp_path / "kubeconfig")
    cluster.api.create("apiextensions.k8s.io/v1/customresourcedefinitions", None, CRD)
    cert, key = write_cert(tmp_path)
    options = WebhookOptions(
        cert_file=cert,
        key_file=key,
        kubeconfig=str(cluster.kubeconfig_path),
        host="127.0.0.1",
        port=0,
        threads=threads,
        watch_timeout_seconds=30,
    )
    return Webhook(options)


def register(cluster: Cluster, hook: Webhook) -> None:
    """Starts `hook`, waits for its caches and registers it with the cluster's API server."""
    hook.start()
    assert hook.view.wait_ready(10)
    for cfg in webhook_configs(hook.url):
        kind = "mutating" if cfg["kind"].startswith("Mutating") else "validating"
        cluster.api.create(f"admissionregistration.k8s.io/v1/{kind}webhookconfigurations", None, cfg)


def live_pods(api: ApiServer, app: str = "web") -> list[dict[str, Any]]:
    """The pods of `app` in `default` that are not being deleted."""
    return [
        p
        for p in api.list("v1/pods", "default", label_selector=f"app={app}")["items"]
        if not p["metadata"].get("deletionTimestamp")
    ]


def subset_of(pod: dict[str, Any]) -> str:
    """The subset the webhook placed `pod` in, "-" for none."""
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED_ANNOTATION)
    return str(json.loads(raw)["subset"]) if raw else "-"
