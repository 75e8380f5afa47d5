"""The self-managed CA (webhook/certs.py) against the embedded API server over HTTPS."""

from __future__ import annotations

import base64
import datetime as dt
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest
import webhook_testkit
from cryptography import x509
from webhook_testkit import KubeEnv, webhook_configs

from py_engine.apiclient import KubeClient
from webhook.certs import (
    CA_BUNDLE,
    CA_CERT,
    MUTATING_CONFIGS,
    SECRETS,
    VALIDATING_CONFIGS,
    SelfManagedCA,
    SelfSignedOptions,
    TLSMaterial,
    plan,
    service_dns_names,
)
from webhook.server import TLSServer

NS = "spreadgate-system"
SVC_NAME = "spreadgate-webhook.spreadgate-system.svc"
MUTATING = "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
NOW = dt.datetime.now(dt.UTC)
kube_env = webhook_testkit.kube_env  # the embedded API server fixture


def _setup(env: KubeEnv, *, configs: bool = True, placeholder: bool = False) -> None:
    env.api.create("v1/namespaces", None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    if configs:
        for cfg in webhook_configs("https://127.0.0.1:1"):
            env.api.create(MUTATING if cfg["kind"].startswith("Mutating") else VALIDATING, None, cfg)
    if placeholder:
        env.api.create(
            "v1/secrets",
            NS,
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "Opaque",
                "metadata": {"name": "spreadgate-webhook-ca", "namespace": NS},
            },
        )


def _ca(
    env: KubeEnv, tmp_path: Path, *, client: KubeClient | None = None, now: dt.datetime = NOW, tag: str = "a"
) -> SelfManagedCA:
    return SelfManagedCA(
        client or env.client,
        SelfSignedOptions(namespace=NS),
        cert_file=str(tmp_path / f"{tag}.crt"),
        key_file=str(tmp_path / f"{tag}.key"),
        now=lambda: now,
    )


def _bundles(env: KubeEnv) -> list[str]:
    out = []
    for resource in (MUTATING, VALIDATING):
        for hook in env.api.get(resource, None, "spreadgate")["webhooks"]:
            out.append(base64.b64decode(hook["clientConfig"]["caBundle"]).decode())
    return out


def _secret(env: KubeEnv) -> dict[str, Any]:
    return env.api.get("v1/secrets", NS, "spreadgate-webhook-ca")


def _serve_and_verify(cert: str, key: str, bundle: str) -> x509.Certificate:
    """Serve the written pair with the product's TLS server; verify it as the API server does."""

    def app(environ: Any, start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    server = TLSServer(app, cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=2).start()
    try:
        ctx = ssl.create_default_context(cadata=bundle)
        with (
            socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
            ctx.wrap_socket(raw, server_hostname=SVC_NAME) as tls,
        ):
            der = tls.getpeercert(binary_form=True)
            assert der is not None
            return x509.load_der_x509_certificate(der)
    finally:
        server.stop()


def test_first_start_creates_secret_writes_files_patches_bundles_and_serves(
    kube_env: KubeEnv, tmp_path: Path
) -> None:
    _setup(kube_env)
    ca = _ca(kube_env, tmp_path)
    material = ca.sync()
    data = _secret(kube_env)["data"]
    assert base64.b64decode(data[CA_CERT]).decode() == material.ca_cert_pem
    assert _bundles(kube_env) == [material.ca_bundle_pem] * 3  # mpod, vpod, vws
    assert ca.missing_configs == [] and ca.rotations == 1
    assert (tmp_path / "a.crt").read_text() == material.cert_pem
    assert oct((tmp_path / "a.key").stat().st_mode & 0o777) == "0o600"
    served = _serve_and_verify(str(tmp_path / "a.crt"), str(tmp_path / "a.key"), material.ca_bundle_pem)
    names = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == set(service_dns_names("spreadgate-webhook", NS))
    # A wrong name does not verify: the check above really looked at the name.
    with pytest.raises(ssl.SSLCertVerificationError):
        server_ctx = ssl.create_default_context(cadata=material.ca_bundle_pem)
        server = TLSServer(
            lambda e, s: [],
            cert_file=str(tmp_path / "a.crt"),
            key_file=str(tmp_path / "a.key"),
            host="127.0.0.1",
            port=0,
            threads=1,
        ).start()
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
                server_ctx.wrap_socket(raw, server_hostname="other.default.svc")
        finally:
            server.stop()


def test_second_start_reuses_the_secret(kube_env: KubeEnv, tmp_path: Path) -> None:
    _setup(kube_env)
    first = _ca(kube_env, tmp_path, tag="a").sync()
    rv = _secret(kube_env)["metadata"]["resourceVersion"]
    again = _ca(kube_env, tmp_path, tag="b")
    second = again.sync()
    assert second == first and again.rotations == 0
    assert _secret(kube_env)["metadata"]["resourceVersion"] == rv  # not rewritten
    assert (tmp_path / "b.crt").read_text() == first.cert_pem


def test_shipped_placeholder_is_filled_by_update(kube_env: KubeEnv, tmp_path: Path) -> None:
    _setup(kube_env, placeholder=True)
    material = _ca(kube_env, tmp_path).sync()
    assert base64.b64decode(_secret(kube_env)["data"][CA_BUNDLE]).decode() == material.ca_bundle_pem


def test_replicas_starting_together_converge_on_one_ca(kube_env: KubeEnv, tmp_path: Path) -> None:
    _setup(kube_env, placeholder=True)
    clients = [kube_env.new_client(timeout=10) for _ in range(4)]
    results: list[TLSMaterial] = []
    barrier = threading.Barrier(len(clients))

    def start(i: int) -> None:
        ca = _ca(kube_env, tmp_path, client=clients[i], tag=str(i))
        barrier.wait(10)
        results.append(ca.ensure())

    threads = [threading.Thread(target=start, args=(i,)) for i in range(len(clients))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        for c in clients:
            c.close()
    assert len(results) == len(clients)
    stored = TLSMaterial.from_secret_data(_secret(kube_env)["data"])
    assert stored is not None and {r.ca_cert_pem for r in results} == {stored.ca_cert_pem}


def test_serving_certificate_is_renewed_from_the_same_ca_before_expiry(
    kube_env: KubeEnv, tmp_path: Path
) -> None:
    _setup(kube_env)
    first = _ca(kube_env, tmp_path).sync()
    later = _ca(kube_env, tmp_path, now=NOW + dt.timedelta(days=340))  # 25 days left of 365
    renewed = later.sync()
    assert later.rotations == 1
    assert renewed.ca_cert_pem == first.ca_cert_pem and renewed.cert_pem != first.cert_pem
    assert _bundles(kube_env) == [first.ca_bundle_pem] * 3  # the bundle did not change
    assert (tmp_path / "a.crt").read_text() == renewed.cert_pem
    not_after = x509.load_pem_x509_certificate(renewed.cert_pem.encode()).not_valid_after_utc
    assert not_after > NOW + dt.timedelta(days=700)


def test_ca_rotation_keeps_trusting_the_old_ca_until_it_expires() -> None:
    names = service_dns_names("spreadgate-webhook", NS)
    first, why = plan(None, names, NOW)
    assert first is not None and why == "no CA yet"
    assert plan(first, names, NOW) == (None, "up to date")
    soon = NOW + dt.timedelta(days=3650 - 10)
    rotated, why = plan(first, names, soon)
    assert rotated is not None and why == "the CA expires soon"
    assert rotated.ca_cert_pem != first.ca_cert_pem
    assert rotated.ca_bundle_pem == rotated.ca_cert_pem + first.ca_cert_pem
    after_expiry, why = plan(rotated, names, NOW + dt.timedelta(days=3651))
    assert after_expiry is not None and why == "an expired CA was dropped from the bundle"
    assert after_expiry.ca_bundle_pem == rotated.ca_cert_pem


def test_a_certificate_for_other_names_or_a_foreign_key_is_replaced() -> None:
    names = service_dns_names("spreadgate-webhook", NS)
    material, _ = plan(None, names, NOW)
    assert material is not None
    fresh, why = plan(material, service_dns_names("renamed", NS), NOW)
    assert fresh is not None and why == "the serving certificate is for other names"
    other, _ = plan(None, names, NOW)
    assert other is not None
    mixed = TLSMaterial(
        material.ca_cert_pem, material.ca_key_pem, material.cert_pem, other.key_pem, material.ca_bundle_pem
    )
    assert plan(mixed, names, NOW)[1] == "the serving key does not match the certificate"
    foreign = TLSMaterial(
        material.ca_cert_pem, material.ca_key_pem, other.cert_pem, other.key_pem, material.ca_bundle_pem
    )
    assert "not issued by the CA" in plan(foreign, names, NOW)[1]


def test_missing_configuration_is_reported_and_patched_once_it_exists(
    kube_env: KubeEnv, tmp_path: Path
) -> None:
    _setup(kube_env, configs=False)
    ca = _ca(kube_env, tmp_path)
    material = ca.sync()
    assert ca.missing_configs == ["spreadgate"]
    for cfg in webhook_configs("https://127.0.0.1:1"):
        kube_env.api.create(MUTATING if cfg["kind"].startswith("Mutating") else VALIDATING, None, cfg)
    assert ca.sync() == material
    assert ca.missing_configs == [] and _bundles(kube_env) == [material.ca_bundle_pem] * 3
    # Up to date: a further pass patches nothing.
    assert ca.patch_configs(material.ca_bundle_pem) == 0


def test_resources_are_the_ones_rbac_names() -> None:
    assert (SECRETS.plural, MUTATING_CONFIGS.plural, VALIDATING_CONFIGS.plural) == (
        "secrets",
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    )
