"""Every kustomization renders with `kubectl kustomize`, every rendered object validates
against the Kubernetes 1.37 OpenAPI schemas (kubernetes-validate, strict: unknown fields are
errors), and the objects say what docs/operations.md promises.

Why 1.37: the `kubernetes` 37 client the product uses speaks Kubernetes 1.37, and 1.37 is the
newest schema set kubernetes-validate 1.37.0 ships (offline, inside the wheel).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

import kubernetes_validate
import pytest
from manifest_support import KUSTOMIZATIONS, NAMESPACE, OVERLAYS, container, find, render

from py_engine.cli import build_parser

K8S_VERSION = "1.37"
CERT_MANAGER_KINDS = {("cert-manager.io/v1", "Issuer"), ("cert-manager.io/v1", "Certificate")}
SYSTEM_NAMESPACES = {"kube-system", "kube-node-lease", NAMESPACE}
OPT_OUT = ("spreadgate.dev/admission", "disabled")
WS_CRD, UD_CRD = "workloadspreads.spreadgate.dev", "uniteddeployments.spreadgate.dev"


def test_kubernetes_validate_ships_the_pinned_version() -> None:
    assert kubernetes_validate.latest_version().startswith(K8S_VERSION + ".")


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_every_object_validates_against_the_kubernetes_schemas(path: str) -> None:
    docs = render(path)
    assert docs, f"{path} rendered nothing"
    for doc in docs:
        what = f"{path}: {doc['kind']} {doc['metadata'].get('name')}"
        if (doc["apiVersion"], doc["kind"]) in CERT_MANAGER_KINDS:
            # Not a Kubernetes schema: check the fields cert-manager requires.
            assert doc["spec"], what
            if doc["kind"] == "Certificate":
                assert {"secretName", "issuerRef", "dnsNames"} <= set(doc["spec"]), what
            continue
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{what}: {exc.message} at {list(exc.path)}")


def test_a_malformed_object_is_caught_by_the_schema_check() -> None:
    deployment = find(render("base"), "Deployment", "spreadgate-webhook")
    deployment["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
    deployment["spec"]["replicas"] = 2
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessprobe"] = {}  # unknown field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


def test_base_holds_every_component_once() -> None:
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in render("base"))
    assert kinds == sorted(
        [
            ("Namespace", NAMESPACE),
            ("CustomResourceDefinition", "workloadspreads.spreadgate.dev"),
            ("CustomResourceDefinition", "uniteddeployments.spreadgate.dev"),
            ("ServiceAccount", "spreadgate-webhook"),
            ("ServiceAccount", "spreadgate-controller"),
            ("ClusterRole", "spreadgate-webhook"),
            ("ClusterRoleBinding", "spreadgate-webhook"),
            ("ClusterRole", "spreadgate-controller"),
            ("ClusterRoleBinding", "spreadgate-controller"),
            ("Role", "spreadgate-controller-leader-election"),
            ("RoleBinding", "spreadgate-controller-leader-election"),
            ("Deployment", "spreadgate-webhook"),
            ("PodDisruptionBudget", "spreadgate-webhook"),
            ("Service", "spreadgate-webhook"),
            ("NetworkPolicy", "spreadgate-webhook"),
            ("Deployment", "spreadgate-controller"),
            ("MutatingWebhookConfiguration", "spreadgate"),
            ("ValidatingWebhookConfiguration", "spreadgate"),
        ]
    )
    for doc in render("base"):
        if (
            doc["kind"] not in ("Namespace", "CustomResourceDefinition")
            and not doc["kind"].startswith("Cluster")
            and "WebhookConfiguration" not in doc["kind"]
        ):
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]


def _rules(hook: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (op, group, res)
        for rule in hook["rules"]
        for op in rule["operations"]
        for group in rule["apiGroups"]
        for res in rule["resources"]
    }


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_webhook_configurations(path: str) -> None:
    docs = render(path)
    service = find(docs, "Service", "spreadgate-webhook")
    mutating = find(docs, "MutatingWebhookConfiguration", "spreadgate")["webhooks"]
    validating = find(docs, "ValidatingWebhookConfiguration", "spreadgate")["webhooks"]
    assert [h["name"] for h in mutating] == ["mpod.spreadgate.dev"]
    assert [h["name"] for h in validating] == [
        "vpod.spreadgate.dev",
        "vws.spreadgate.dev",
        "vud.spreadgate.dev",
    ]
    assert _rules(mutating[0]) == {("CREATE", "", "pods")}
    assert _rules(validating[0]) == {("DELETE", "", "pods"), ("CREATE", "", "pods/eviction")}
    assert _rules(validating[1]) == {
        ("CREATE", "spreadgate.dev", "workloadspreads"),
        ("UPDATE", "spreadgate.dev", "workloadspreads"),
    }
    assert _rules(validating[2]) == {
        ("CREATE", "spreadgate.dev", "uniteddeployments"),
        ("UPDATE", "spreadgate.dev", "uniteddeployments"),
    }
    paths = {
        "mpod.spreadgate.dev": "/mutate/pods",
        "vpod.spreadgate.dev": "/validate/pods",
        "vws.spreadgate.dev": "/validate/workloadspreads",
        "vud.spreadgate.dev": "/validate/uniteddeployments",
    }
    policies = {
        "mpod.spreadgate.dev": "Fail",
        "vpod.spreadgate.dev": "Ignore",
        "vws.spreadgate.dev": "Fail",
        "vud.spreadgate.dev": "Fail",
    }
    for hook in mutating + validating:
        assert hook["timeoutSeconds"] <= 5
        assert hook["sideEffects"] == ("None" if hook["name"] == "vud.spreadgate.dev" else "NoneOnDryRun")
        assert hook["matchPolicy"] == "Equivalent"
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["failurePolicy"] == policies[hook["name"]]
        ref = hook["clientConfig"]["service"]
        assert (ref["namespace"], ref["name"], ref["path"]) == (
            NAMESPACE,
            service["metadata"]["name"],
            paths[hook["name"]],
        )
        assert ref["port"] in [p["port"] for p in service["spec"]["ports"]]
        assert "caBundle" not in hook["clientConfig"]  # injected at run time, by cert-manager or the webhook
        expressions = hook["namespaceSelector"]["matchExpressions"]
        excluded = next(e for e in expressions if e["key"] == "kubernetes.io/metadata.name")
        assert excluded["operator"] == "NotIn" and set(excluded["values"]) == SYSTEM_NAMESPACES
        opt_out = next(e for e in expressions if e["key"] == OPT_OUT[0])
        assert opt_out == {"key": OPT_OUT[0], "operator": "NotIn", "values": [OPT_OUT[1]]}
    # The commit deadline stays below the webhook timeout (the flag's own rule).
    args = _parsed(find(docs, "Deployment", "spreadgate-webhook"), "webhook")
    assert args.commit_timeout < min(h["timeoutSeconds"] for h in mutating + validating)
    # Our namespace opts out by label too, not only by name.
    assert find(docs, "Namespace", NAMESPACE)["metadata"]["labels"][OPT_OUT[0]] == OPT_OUT[1]


def _parsed(deployment: dict[str, Any], name: str) -> argparse.Namespace:
    """The container's command line through the product's real argument parser."""
    c = container(deployment, name)
    assert c["command"] == ["spreadgate"]
    argv = [a.replace("$(POD_NAMESPACE)", NAMESPACE) for a in c["args"]]
    try:
        return build_parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"{name} args rejected by the CLI: {shlex.join(argv)}")


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_webhook_deployment_service_and_pdb(path: str) -> None:
    docs = render(path)
    deployment = find(docs, "Deployment", "spreadgate-webhook")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["replicas"] == 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert anti["podAffinityTerm"]["labelSelector"]["matchLabels"].items() <= labels.items()
    assert pod["serviceAccountName"] == "spreadgate-webhook"
    c = container(deployment, "webhook")
    args = _parsed(deployment, "webhook")
    port = next(p for p in c["ports"] if p["name"] == "https")["containerPort"]
    assert args.port == port
    assert (c["readinessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["path"]) == (
        "/readyz",
        "/healthz",
    )
    for probe in (c["readinessProbe"], c["livenessProbe"]):
        assert probe["httpGet"]["scheme"] == "HTTPS" and probe["httpGet"]["port"] == "https"
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    assert args.cert.startswith("/tls/") and args.key.startswith("/tls/") and mounts["/tls"] == "tls"
    service = find(docs, "Service", "spreadgate-webhook")
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "https"
    pdb = find(docs, "PodDisruptionBudget", "spreadgate-webhook")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_webhook_network_policy_admits_only_the_https_port(path: str) -> None:
    docs = render(path)
    deployment = find(docs, "Deployment", "spreadgate-webhook")
    policy = find(docs, "NetworkPolicy", "spreadgate-webhook")["spec"]
    assert (
        policy["podSelector"]["matchLabels"].items()
        <= deployment["spec"]["template"]["metadata"]["labels"].items()
    )
    assert policy["policyTypes"] == ["Ingress"]
    port = next(p for p in container(deployment, "webhook")["ports"] if p["name"] == "https")["containerPort"]
    assert [rule["ports"] for rule in policy["ingress"]] == [[{"port": port, "protocol": "TCP"}]]
    # The sources to fill in (docs/operations.md, "Authenticating the API server"): ipBlocks, as shipped.
    assert [list(peer) for peer in policy["ingress"][0]["from"]] == [["ipBlock"], ["ipBlock"]]
    assert port == _parsed(deployment, "webhook").port == 9443
    # No other workload of the namespace is selected by it (it would cut the controller off).
    controller = find(docs, "Deployment", "spreadgate-controller")["spec"]["template"]["metadata"]["labels"]
    assert not policy["podSelector"]["matchLabels"].items() <= controller.items()


@pytest.mark.parametrize("path", KUSTOMIZATIONS)
def test_controller_deployment_elects_a_leader(path: str) -> None:
    deployment = find(render(path), "Deployment", "spreadgate-controller")
    args = _parsed(deployment, "controller")
    assert deployment["spec"]["replicas"] == 2
    assert (
        args.leader_elect and args.lease_namespace == NAMESPACE and args.lease_name == "spreadgate-controller"
    )
    c = container(deployment, "controller")
    assert (c["readinessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["path"]) == (
        "/readyz",
        "/healthz",
    )
    assert c["readinessProbe"]["httpGet"]["port"] == c["livenessProbe"]["httpGet"]["port"] == "metrics"
    metrics_port = next(p for p in c["ports"] if p["name"] == "metrics")["containerPort"]
    assert args.metrics_port == metrics_port
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "spreadgate-controller"


def _tls_volume(docs: list[dict[str, Any]]) -> dict[str, Any]:
    volumes = find(docs, "Deployment", "spreadgate-webhook")["spec"]["template"]["spec"]["volumes"]
    return next(v for v in volumes if v["name"] == "tls")


@pytest.mark.parametrize("path", ["overlays/cert-manager", "overlays/opa-sidecar"])
def test_cert_manager_overlay_wires_certificate_secret_and_injection(path: str) -> None:
    docs = render(path)
    cert = find(docs, "Certificate")
    issuer = find(docs, "Issuer")
    service = find(docs, "Service", "spreadgate-webhook")
    assert cert["spec"]["issuerRef"] == {"kind": "Issuer", "name": issuer["metadata"]["name"]}
    svc_name = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert svc_name in cert["spec"]["dnsNames"]
    volume = _tls_volume(docs)
    assert volume == {
        "name": "tls",
        "secret": {"secretName": cert["spec"]["secretName"], "defaultMode": 0o440},
    }
    inject = f"{cert['metadata']['namespace']}/{cert['metadata']['name']}"
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        assert (
            find(docs, kind, "spreadgate")["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
            == inject
        )
    assert not _parsed(find(docs, "Deployment", "spreadgate-webhook"), "webhook").self_signed_ca


def test_self_signed_overlay_wires_secret_configs_and_service() -> None:
    docs = render("overlays/self-signed-ca")
    args = _parsed(find(docs, "Deployment", "spreadgate-webhook"), "webhook")
    assert args.self_signed_ca
    secret = find(docs, "Secret", args.secret_name)
    assert "data" not in secret and secret["metadata"]["namespace"] == NAMESPACE
    assert args.service_name == find(docs, "Service", "spreadgate-webhook")["metadata"]["name"]
    names = args.webhook_configs.split(",")
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        config = find(docs, kind, names[0])
        assert "cert-manager.io/inject-ca-from" not in (config["metadata"].get("annotations") or {})
    assert "emptyDir" in _tls_volume(docs)
    assert not [d for d in docs if d["apiVersion"].startswith("cert-manager.io")]


@pytest.mark.parametrize("path", OVERLAYS)
def test_overlays_keep_the_crd_unchanged(path: str) -> None:
    for name in (WS_CRD, UD_CRD):
        assert find(render(path), "CustomResourceDefinition", name) == find(
            render("base"), "CustomResourceDefinition", name
        )


def test_crd_printer_columns() -> None:
    crd = find(render("base"), "CustomResourceDefinition", WS_CRD)
    version = crd["spec"]["versions"][0]
    columns = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert columns == {
        "Workload-Kind": ".spec.targetRef.kind",
        "Workload": ".spec.targetRef.name",
        "Strategy": ".spec.scheduleStrategy.type",
        "Adaptive-Reschedule-Seconds": ".spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
        "First-Subset-Pods": ".status.subsetStatuses[0].replicas",
        "Age": ".metadata.creationTimestamp",
    }
    assert crd["spec"]["names"]["shortNames"] == ["sgws"]
    assert version["subresources"] == {"status": {}}
