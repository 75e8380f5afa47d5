"""The certificate profile of py_engine/semantics/certificates.py field by field: the exact key
usages of a CA and of a server certificate, and the Authority Key Identifier of a server
certificate whose CA has no Subject Key Identifier (a CA made before issue 23)."""

from __future__ import annotations

import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID

from py_engine.semantics.certificates import ca_certificate, server_certificate

pytestmark = pytest.mark.timeout(30)

START = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)
END = START + dt.timedelta(days=30)
NAMES = [x509.DNSName("localhost")]


def usage(*, signs_certificates: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def test_the_ca_and_the_server_certificate_carry_exactly_their_key_usages() -> None:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = ca_certificate(ca_key, "ca", START, END)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = server_certificate(ca, ca_key, server_key.public_key(), "server", NAMES, START, END)
    ca_usage = ca.extensions.get_extension_for_class(x509.KeyUsage)
    server_usage = server.extensions.get_extension_for_class(x509.KeyUsage)
    assert ca_usage.critical and ca_usage.value == usage(signs_certificates=True)
    assert server_usage.critical and server_usage.value == usage(signs_certificates=False)
    ca_constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    server_constraints = server.extensions.get_extension_for_class(x509.BasicConstraints)
    assert ca_constraints.critical and ca_constraints.value == x509.BasicConstraints(ca=True, path_length=0)
    assert server_constraints.critical and server_constraints.value == x509.BasicConstraints(
        ca=False, path_length=None
    )


def test_only_the_constraints_and_the_key_usage_are_critical() -> None:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = ca_certificate(ca_key, "ca", START, END)
    server = server_certificate(
        ca, ca_key, ec.generate_private_key(ec.SECP256R1()).public_key(), "server", NAMES, START, END
    )
    assert {type(e.value).__name__: e.critical for e in ca.extensions} == {
        "BasicConstraints": True,
        "KeyUsage": True,
        "SubjectKeyIdentifier": False,
        "AuthorityKeyIdentifier": False,
    }
    assert {type(e.value).__name__: e.critical for e in server.extensions} == {
        "SubjectAlternativeName": False,
        "BasicConstraints": True,
        "KeyUsage": True,
        "ExtendedKeyUsage": False,
        "SubjectKeyIdentifier": False,
        "AuthorityKeyIdentifier": False,
    }
    assert server.extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    ).value == x509.SubjectAlternativeName(NAMES)


def _self_issued(
    common_name: str, key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
) -> x509.CertificateBuilder:
    """A certificate of `key` issued by itself, valid START..END, without extensions (no
    subject key identifier): what an old or hand-made CA looks like."""
    return (
        x509.CertificateBuilder()
        .subject_name(name(common_name))
        .issuer_name(name(common_name))
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(START)
        .not_valid_after(END)
    )


def test_a_ca_without_a_subject_key_identifier_is_named_by_its_key() -> None:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    old_ca = (
        _self_issued("old-ca", ca_key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = server_certificate(old_ca, ca_key, server_key.public_key(), "server", NAMES, START, END)
    aki = server.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki == x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key())
    assert aki.key_identifier == x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()).digest


def test_a_ca_without_a_subject_key_identifier_and_an_other_key_type_is_refused() -> None:
    ca_key = ed25519.Ed25519PrivateKey.generate()
    other_ca = _self_issued("ed-ca", ca_key).sign(ca_key, None)
    server_key = ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(ValueError, match=r"^the issuer's key is not an EC key$"):
        server_certificate(
            other_ca,
            ec.generate_private_key(ec.SECP256R1()),
            server_key.public_key(),
            "server",
            NAMES,
            START,
            END,
        )
