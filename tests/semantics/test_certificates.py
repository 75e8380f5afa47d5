"""Every certificate the project issues passes OpenSSL's strict verification (issue 23).

Python 3.13's `ssl.create_default_context()` sets `VERIFY_X509_STRICT`, which refuses a
chain whose server certificate has no Authority Key Identifier or whose CA has no Subject
Key Identifier; `spreadgate demo` failed on 3.13 that way ("caches did not sync"). Both
issuers are checked here on any Python: the embedded cluster's CA (py_engine/sim/tls.py)
and the webhook's self-managed CA (webhook/certs.py), by their extensions and by a TLS
handshake, in memory, with the strict flag set explicitly.
"""

from __future__ import annotations

import datetime as dt
import ssl
import tempfile
from pathlib import Path

import pytest
from cryptography import x509

from py_engine.sim.tls import CertificateAuthority
from webhook.certs import issue_serving, new_ca


def embedded_cluster_chain() -> tuple[str, str, str]:
    ca = CertificateAuthority()
    pair = ca.issue(["localhost"], ["127.0.0.1"])
    return ca.cert_pem, pair.cert_pem, pair.key_pem


def webhook_chain() -> tuple[str, str, str]:
    now = dt.datetime.now(dt.UTC)
    ca_cert, ca_key = new_ca(now)
    cert, key = issue_serving(ca_cert, ca_key, ["localhost"], now)
    return ca_cert, cert, key


CHAINS = pytest.mark.parametrize(
    "make_chain", [embedded_cluster_chain, webhook_chain], ids=["embedded-cluster", "webhook"]
)


def _extension(cert: x509.Certificate, kind: type[x509.ExtensionType]) -> x509.Extension[x509.ExtensionType]:
    return cert.extensions.get_extension_for_class(kind)


@CHAINS
def test_certificates_carry_what_strict_verification_needs(make_chain: object) -> None:
    ca_pem, leaf_pem, _ = make_chain()  # type: ignore[operator]
    ca = x509.load_pem_x509_certificate(ca_pem.encode())
    leaf = x509.load_pem_x509_certificate(leaf_pem.encode())
    ca_constraints = _extension(ca, x509.BasicConstraints)
    assert ca_constraints.critical and ca_constraints.value.ca
    ca_usage = _extension(ca, x509.KeyUsage)
    assert ca_usage.critical and ca_usage.value.key_cert_sign
    ca_ski = _extension(ca, x509.SubjectKeyIdentifier).value
    assert ca_ski.digest == x509.SubjectKeyIdentifier.from_public_key(ca.public_key()).digest  # type: ignore[arg-type]
    leaf_constraints = _extension(leaf, x509.BasicConstraints)
    assert leaf_constraints.critical and not leaf_constraints.value.ca
    leaf_usage = _extension(leaf, x509.KeyUsage)
    assert leaf_usage.critical and leaf_usage.value.digital_signature and not leaf_usage.value.key_cert_sign
    assert _extension(leaf, x509.AuthorityKeyIdentifier).value.key_identifier == ca_ski.digest
    assert (
        _extension(leaf, x509.SubjectKeyIdentifier).value.digest
        == x509.SubjectKeyIdentifier.from_public_key(leaf.public_key()).digest
    )  # type: ignore[arg-type]


@CHAINS
def test_a_strict_client_completes_the_handshake(make_chain: object) -> None:
    ca_pem, leaf_pem, key_pem = make_chain()  # type: ignore[operator]
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "tls.crt").write_text(leaf_pem)
        (Path(tmp) / "tls.key").write_text(key_pem)
        server.load_cert_chain(Path(tmp) / "tls.crt", Path(tmp) / "tls.key")
    client = ssl.create_default_context(cadata=ca_pem)
    client.verify_flags |= ssl.VERIFY_X509_STRICT
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    client_side = client.wrap_bio(c_in, c_out, server_hostname="localhost")
    server_side = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):  # a TLS 1.3 handshake takes two round trips; bounded
        for name, side in (("client", client_side), ("server", server_side)):
            if not done[name]:
                try:
                    side.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
        if all(done.values()):
            break
    assert all(done.values())
    assert client_side.getpeercert()["subject"] == ((("commonName", "localhost"),),)
