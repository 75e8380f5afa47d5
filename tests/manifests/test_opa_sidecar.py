"""The OPA sidecar overlay: the policies ConfigMap is current with policies/, and the webhook
is wired to the sidecar (URL, port, mounted policies)."""

from __future__ import annotations

import importlib.util
from typing import Any
from urllib.parse import urlsplit

import yaml
from manifest_support import MANIFESTS, REPO, container, find, render

from py_engine.cli import build_parser

COMPONENT = MANIFESTS / "components" / "opa-sidecar"


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "generate_policies_configmap", COMPONENT / "generate_policies_configmap.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_policies_configmap_is_current() -> None:
    generator = _generator()
    assert (COMPONENT / "policies-configmap.yaml").read_text(encoding="utf-8") == generator.render(), (
        "run: python manifests/components/opa-sidecar/generate_policies_configmap.py"
    )


def test_configmap_holds_every_policy_file_verbatim_and_no_tests() -> None:
    data = yaml.safe_load((COMPONENT / "policies-configmap.yaml").read_text(encoding="utf-8"))["data"]
    files = sorted(p for p in (REPO / "policies").rglob("*.rego") if not p.name.endswith("_test.rego"))
    assert sorted(data) == sorted(f"{p.parent.name}_{p.name}" for p in files)
    for p in files:
        assert data[f"{p.parent.name}_{p.name}"] == p.read_text(encoding="utf-8")


def test_webhook_asks_the_sidecar_that_loads_the_configmap() -> None:
    docs = render("overlays/opa-sidecar")
    deployment = find(docs, "Deployment", "spreadgate-webhook")
    pod = deployment["spec"]["template"]["spec"]
    opa = next(c for c in pod["initContainers"] if c["name"] == "opa")
    assert opa["restartPolicy"] == "Always"  # native sidecar: up before the webhook starts
    args = build_parser().parse_args(container(deployment, "webhook")["args"])
    addr = next(a for a in opa["args"] if a.startswith("--addr=")).split("=", 1)[1]
    url = urlsplit(args.opa_url)
    assert (url.scheme, f"{url.hostname}:{url.port}") == ("http", addr)
    assert url.hostname == "localhost"
    mount = next(m for m in opa["volumeMounts"] if m["name"] == "policies")
    assert mount["mountPath"] in opa["args"]
    volume = next(v for v in pod["volumes"] if v["name"] == "policies")
    find(docs, "ConfigMap", volume["configMap"]["name"])
    diag = next(p for p in opa["ports"] if p["name"] == "opa-diag")["containerPort"]
    assert f"--diagnostic-addr=0.0.0.0:{diag}" in opa["args"]
    assert opa["startupProbe"]["httpGet"]["port"] == "opa-diag"
    # The other overlays evaluate in-process.
    for path in ("overlays/cert-manager", "overlays/self-signed-ca"):
        other = find(render(path), "Deployment", "spreadgate-webhook")
        assert build_parser().parse_args(container(other, "webhook")["args"]).opa_url is None
