"""Issue 24, finding 3: with `--client-ca`, only callers presenting a certificate signed by that CA
reach the webhook. A real TLS client on loopback against the real TLS server and front end:
without a certificate refused, with one from another CA refused, with a good one 200, and the
app never runs for a refused caller (the TLS handshake refuses it before any work)."""

from __future__ import annotations

import datetime as dt
import http.client
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from flask import Flask
from webhook_testkit import shared_ca, write_cert

from webhook.certs import new_ca
from webhook.server import TLSServer
from webhook.tls import server_context


def _client_pair(ca_cert_pem: str, ca_key_pem: str, directory: Path, name: str) -> tuple[str, str]:
    """A client certificate (clientAuth) for `name`, signed by the CA, as files."""
    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem.encode())
    ca_key = serialization.load_pem_private_key(ca_key_pem.encode(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return str(cert_file), str(key_file)


def _post(url: str, client_pair: tuple[str, str] | None, version: ssl.TLSVersion) -> int:
    context = ssl.create_default_context(cadata=shared_ca().cert_pem)
    context.minimum_version = context.maximum_version = version
    if client_pair is not None:
        context.load_cert_chain(*client_pair)
    host, port = url.removeprefix("https://").rsplit(":", 1)
    connection = http.client.HTTPSConnection(host, int(port), context=context, timeout=5)
    try:
        connection.request("POST", "/review", body=b"{}", headers={"Content-Type": "application/json"})
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.mark.parametrize(
    "version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3], ids=["tls1.2", "tls1.3"]
)
def test_only_callers_with_a_certificate_from_the_client_ca_get_through(
    tmp_path: Path, version: ssl.TLSVersion
) -> None:
    calls: list[str] = []
    app = Flask("t")

    def review() -> str:
        calls.append("review")
        return "ok"

    app.add_url_rule("/review", view_func=review, methods=["POST"])
    now = dt.datetime.now(dt.UTC)
    trusted, other = new_ca(now), new_ca(now)
    ca_file = tmp_path / "client-ca.crt"
    ca_file.write_text(trusted[0])
    good = _client_pair(*trusted, tmp_path, "kube-apiserver")
    forged = _client_pair(*other, tmp_path, "attacker")
    cert, key = write_cert(tmp_path)
    server = TLSServer(
        app, cert_file=cert, key_file=key, host="127.0.0.1", port=0, threads=2, client_ca=str(ca_file)
    ).start()
    try:
        for pair in (None, forged):
            with pytest.raises((ssl.SSLError, ConnectionError)):
                _post(server.url, pair, version)
        assert calls == [], "a refused caller never reaches the app"
        assert _post(server.url, good, version) == 200
        assert calls == ["review"]
    finally:
        server.stop()


def test_without_a_client_ca_no_certificate_is_asked_for(tmp_path: Path) -> None:
    cert, key = write_cert(tmp_path)
    assert server_context(cert, key).verify_mode == ssl.CERT_NONE
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(new_ca(dt.datetime.now(dt.UTC))[0])
    assert server_context(cert, key, str(ca_file)).verify_mode == ssl.CERT_REQUIRED
