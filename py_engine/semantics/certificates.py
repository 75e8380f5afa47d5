"""The X.509 certificates Spreadgate issues: a CA and the server certificates it signs.

One profile for every issuer in the project (the webhook's self-managed CA,
webhook/certs.py, and the embedded cluster's throwaway CA, py_engine/sim/tls.py), shaped
to pass OpenSSL's strict verification (`ssl.VERIFY_X509_STRICT`, which Python 3.13's
`ssl.create_default_context()` turns on; the versions the README names, 3.11 to 3.13):

* the CA: basicConstraints CA critical, keyUsage keyCertSign/cRLSign critical, a Subject
  Key Identifier (and an Authority Key Identifier naming itself);
* a server certificate: basicConstraints not-CA critical, keyUsage digitalSignature
  critical (ECDSA signs the handshake), extendedKeyUsage serverAuth, the names in a
  subjectAltName, a Subject Key Identifier, and an Authority Key Identifier equal to its
  issuer's Subject Key Identifier, so a verifier finds the issuer by key, not only by name.

Without the two key identifiers strict verification fails ("Missing Authority Key
Identifier"), which is how `spreadgate demo` failed on Python 3.13 (issue 23).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _key_usage(*, digital_signature: bool, key_cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature,
        key_cert_sign=key_cert_sign,
        crl_sign=key_cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )


def ca_certificate(
    key: ec.EllipticCurvePrivateKey, common_name: str, not_before: dt.datetime, not_after: dt.datetime
) -> x509.Certificate:
    """A self-signed CA certificate for `key` that may sign server certificates only (path length 0)."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    public = key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(digital_signature=True, key_cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )


def server_certificate(
    issuer: x509.Certificate,
    issuer_key: ec.EllipticCurvePrivateKey,
    public: ec.EllipticCurvePublicKey,
    common_name: str,
    names: Sequence[x509.GeneralName],
    not_before: dt.datetime,
    not_after: dt.datetime,
) -> x509.Certificate:
    """A server certificate for `public` and `names`, signed by `issuer` (with `issuer_key`)."""
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(issuer.subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True, key_cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(_authority_key_identifier(issuer), critical=False)
        .sign(issuer_key, hashes.SHA256())
    )


def _authority_key_identifier(issuer: x509.Certificate) -> x509.AuthorityKeyIdentifier:
    """The issuer's own Subject Key Identifier, or one computed from its key when it has none
    (a CA made before the identifiers were added, still in a webhook's Secret)."""
    try:
        ski = issuer.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    except x509.ExtensionNotFound:
        public = issuer.public_key()
        if not isinstance(public, ec.EllipticCurvePublicKey):
            raise ValueError("the issuer's key is not an EC key") from None
        return x509.AuthorityKeyIdentifier.from_issuer_public_key(public)
    return x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski)
