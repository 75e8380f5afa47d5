"""End to end with exactly the rendered objects: the embedded cluster accepts the rendered
CRD, Namespace and webhook configurations; the real webhook (configured from the rendered
Deployment's command line, parsed by the product's CLI parser) and the real controller
(leader election with the rendered Lease settings) run against it, and every request they
send is checked against the rendered RBAC for their ServiceAccount.

What stands in for the cluster: the Service reference `spreadgate-webhook.spreadgate-system:443`
is resolved to the loopback webhook by the API server's service resolver (TLS is still
verified against `spreadgate-webhook.spreadgate-system.svc`). With cert-manager, the test
plays cainjector (caBundle = the test CA that signed the served certificate); with the
self-managed CA, the webhook fills the shipped Secret and patches caBundle itself.
"""

from __future__ import annotations

import argparse
import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from manifest_support import (
    CONTROLLER_SA,
    MANIFESTS,
    NAMESPACE,
    WEBHOOK_SA,
    RecordingClient,
    allowed,
    find,
    render,
    rendered_grants,
)
from polling import wait_until
from webhook_testkit import ZONE, shared_ca, write_cert

from benchmarks.kube_objects import workload_spread
from py_engine.cli import build_parser
from py_engine.model import MATCHED_ANNOTATION
from py_engine.runtime.leader import LeaderConfig
from py_engine.runtime.manager import Manager
from py_engine.semantics.clock import RealClock
from py_engine.sim.cluster import Cluster
from py_engine.sim.interface import ApiError
from py_engine.sim.nodepool import nodes_from_description
from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller
from webhook.certs import SelfSignedOptions
from webhook.runtime import Webhook, WebhookOptions

pytestmark = pytest.mark.e2e

CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"
RESOURCES = {
    "MutatingWebhookConfiguration": "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
}
SPREADS = "spreadgate.dev/v1alpha1/workloadspreads"
UDS = "spreadgate.dev/v1beta1/uniteddeployments"
RBAC_KINDS = {
    "ServiceAccount": "v1/serviceaccounts",
    "Role": "rbac.authorization.k8s.io/v1/roles",
    "RoleBinding": "rbac.authorization.k8s.io/v1/rolebindings",
    "ClusterRole": "rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1/clusterrolebindings",
}


def _args(docs: list[dict[str, Any]], deployment: str) -> argparse.Namespace:
    c = find(docs, "Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]
    return build_parser().parse_args([a.replace("$(POD_NAMESPACE)", NAMESPACE) for a in c["args"]])


def _nodes() -> list[dict[str, Any]]:
    cap = {"cpu": "32", "memory": "64Gi", "pods": 110}
    return nodes_from_description(
        {
            "pools": [
                {"name": f"zone-{z}", "count": 2, "labels": {ZONE: f"zone-{z}"}, "capacity": cap}
                for z in "ab"
            ]
        }
    )


def _term(zone: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [f"zone-{zone}"]}]}


def _deployment(namespace: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    }


def _spread(namespace: str, name: str, subsets: list[dict[str, Any]]) -> dict[str, Any]:
    return workload_spread(name, subsets, namespace=namespace)


SUBSETS = [
    {"name": "a", "maxReplicas": 2, "requiredNodeSelectorTerm": _term("a")},
    {"name": "b", "requiredNodeSelectorTerm": _term("b")},
]


def _subsets_of(api: Any, namespace: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for pod in api.list("v1/pods", namespace, label_selector="app=web")["items"]:
        raw = (pod["metadata"].get("annotations") or {}).get(MATCHED_ANNOTATION)
        out[json.loads(raw)["subset"] if raw else "-"] += 1
    return out


@pytest.mark.parametrize("overlay", ["overlays/cert-manager", "overlays/self-signed-ca"])
def test_rendered_manifests_end_to_end(overlay: str, tmp_path: Path) -> None:
    docs = render(overlay)
    self_signed = overlay.endswith("self-signed-ca")
    hook_args, ctl_args = _args(docs, "spreadgate-webhook"), _args(docs, "spreadgate-controller")
    service = find(docs, "Service", "spreadgate-webhook")
    svc_key = (
        service["metadata"]["namespace"],
        service["metadata"]["name"],
        service["spec"]["ports"][0]["port"],
    )
    cluster = Cluster(clock=RealClock(), nodes=_nodes())
    api = cluster.api
    hook: Webhook | None = None
    runtime: Manager | None = None
    hook_url: dict[str, str] = {}
    try:
        cluster.serve_https(kubeconfig_out=tmp_path / "kubeconfig")
        api.create(CRDS, None, find(docs, "CustomResourceDefinition", "workloadspreads.spreadgate.dev"))
        api.create(CRDS, None, find(docs, "CustomResourceDefinition", "uniteddeployments.spreadgate.dev"))
        api.create("v1/namespaces", None, find(docs, "Namespace"))
        # The rendered ServiceAccounts and RBAC, enforced by the embedded cluster: each component
        # below authenticates as its own ServiceAccount, so a missing grant is a 403 here.
        for doc in docs:
            if doc["kind"] in RBAC_KINDS:
                namespace = doc["metadata"].get("namespace")
                api.create(RBAC_KINDS[doc["kind"]], namespace, doc)
        hook_kubeconfig = str(
            cluster.service_account_kubeconfig(tmp_path / "webhook", *WEBHOOK_SA.split("/"))
        )
        ctl_kubeconfig = str(
            cluster.service_account_kubeconfig(tmp_path / "controller", *CONTROLLER_SA.split("/"))
        )
        if self_signed:
            api.create("v1/secrets", NAMESPACE, find(docs, "Secret", hook_args.secret_name))
            cert, key = str(tmp_path / "tls.crt"), str(tmp_path / "tls.key")
        else:
            cert, key = write_cert(tmp_path)  # for spreadgate-webhook.spreadgate-system.svc, by the test CA
        for kind, resource in RESOURCES.items():
            config = find(docs, kind, "spreadgate")
            if not self_signed:  # what cert-manager's cainjector does with inject-ca-from
                for webhook in config["webhooks"]:
                    webhook["clientConfig"]["caBundle"] = base64.b64encode(
                        shared_ca().cert_pem.encode()
                    ).decode()
            api.create(resource, None, config)
        api.set_service_resolver(
            lambda ns, name, port: hook_url.get("url") if (ns, name, port) == svc_key else None
        )

        ca_options = SelfSignedOptions(
            namespace=NAMESPACE,
            secret_name=hook_args.secret_name,
            service_name=hook_args.service_name,
            webhook_configs=tuple(hook_args.webhook_configs.split(",")),
        )
        webhook_client = RecordingClient.load(hook_kubeconfig, timeout=10, pool_size=32)
        hook = Webhook(
            WebhookOptions(
                cert_file=cert,
                key_file=key,
                kubeconfig=hook_kubeconfig,
                host="127.0.0.1",
                port=0,
                threads=8,
                commit_timeout=hook_args.commit_timeout,
                on_commit_failure=hook_args.on_commit_failure,
                watch_timeout_seconds=30,
                self_signed=ca_options if hook_args.self_signed_ca else None,
            ),
            client=webhook_client,
        )
        hook.start()
        hook_url["url"] = hook.url
        assert hook.view.wait_ready(15)
        controller_client = RecordingClient.load(ctl_kubeconfig, timeout=10)
        runtime = Manager(
            controller_client,
            leader=LeaderConfig(name=ctl_args.lease_name, namespace=ctl_args.lease_namespace, identity="e2e"),
            watch_timeout_seconds=30,
            owns_client=True,
        )
        add_spread_controller(runtime)
        runtime.start()
        assert runtime.wait_leading(15), "the controller did not acquire its Lease"
        cluster.start()

        if self_signed:
            stored = api.get("v1/secrets", NAMESPACE, hook_args.secret_name)["data"]
            for resource in RESOURCES.values():
                for webhook in api.get(resource, None, "spreadgate")["webhooks"]:
                    assert webhook["clientConfig"]["caBundle"] == stored["ca-bundle.crt"]

        # A spread in an opted-in namespace: pods are injected, the controller writes status.
        api.create(SPREADS, "default", _spread("default", "ws", SUBSETS))
        wait_until(
            lambda: hook is not None and hook.view.spreads.get("default", "ws") is not None,
            10,
            "spread cached",
        )
        api.create("apps/v1/deployments", "default", _deployment("default", 4))
        wait_until(lambda: sum(_subsets_of(api, "default").values()) == 4, 30, "4 pods")
        assert _subsets_of(api, "default") == Counter({"a": 2, "b": 2})
        wait_until(
            lambda: (
                [
                    s.get("replicas")
                    for s in (api.get(SPREADS, "default", "ws").get("status") or {}).get("subsetStatuses")
                    or []
                ]
                == [2, 2]
            ),
            30,
            "subset status from the controller",
        )
        # A broken rule the schema cannot express (percentages over 100%) is rejected by the
        # validating webhook (a duplicate subset name is the schema's: list-map keys).
        with pytest.raises(ApiError) as denied:
            api.create(
                SPREADS,
                "default",
                _spread(
                    "default",
                    "over",
                    [{**SUBSETS[0], "maxReplicas": "40%"}, {**SUBSETS[1], "maxReplicas": "70%"}],
                ),
            )
        assert "vws.spreadgate.dev" in str(denied.value) and "denied" in str(denied.value)
        # UnitedDeployments go through vud.spreadgate.dev (policies/uniteddeployment).
        ud = yaml.safe_load((MANIFESTS / "examples" / "ud-cpu-platforms.yaml").read_text(encoding="utf-8"))
        api.create(UDS, "default", ud)
        with pytest.raises(ApiError) as denied_ud:
            api.create(
                UDS,
                "default",
                {
                    **ud,
                    "metadata": {"name": "negative", "namespace": "default"},
                    "spec": {**ud["spec"], "replicas": -1},
                },
            )
        assert "vud.spreadgate.dev" in str(denied_ud.value) and "spec.replicas" in str(denied_ud.value)
        # A namespace labelled spreadgate.dev/admission=disabled is not sent to the webhook.
        api.create(
            "v1/namespaces",
            None,
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "opted-out", "labels": {"spreadgate.dev/admission": "disabled"}},
            },
        )
        api.create(SPREADS, "opted-out", _spread("opted-out", "ws", SUBSETS))
        api.create("apps/v1/deployments", "opted-out", _deployment("opted-out", 2))
        wait_until(lambda: sum(_subsets_of(api, "opted-out").values()) == 2, 30, "2 opted-out pods")
        # Created without the webhook: no subset's node term injected. (The controller may adopt
        # them afterwards, annotating a subset as Kruise's does; that is not admission.)
        opted_out = api.list("v1/pods", "opted-out", label_selector="app=web")["items"]
        assert [pod["spec"].get("affinity") for pod in opted_out] == [None, None]
        refused = cluster.refusals
    finally:
        if runtime is not None:
            runtime.stop()
        if hook is not None:
            hook.stop()
        cluster.close()

    assert refused == [], "the embedded cluster's RBAC refused requests of the product's ServiceAccounts"

    grants = rendered_grants(docs)
    for account, client in ((WEBHOOK_SA, webhook_client), (CONTROLLER_SA, controller_client)):
        requests = client.classified()
        assert requests, account
        denied_requests = sorted({str(r) for r in requests if not allowed(grants, account, r)})
        assert denied_requests == [], f"{account} made requests its RBAC does not allow"
    verbs = {(r.resource, r.verb) for r in webhook_client.classified()}
    assert ("workloadspreads/status", "update") in verbs
    if self_signed:
        assert {
            ("secrets", "get"),
            ("secrets", "update"),
            ("mutatingwebhookconfigurations", "patch"),
        } <= verbs
    ctl_verbs = {(r.resource, r.verb) for r in controller_client.classified()}
    assert {("leases", "create"), ("workloadspreads/status", "update")} <= ctl_verbs
