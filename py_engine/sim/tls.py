"""A throwaway certificate authority for the emulator and for test webhooks.

The API server serves HTTPS with a certificate from a CA generated at start,
and writes that CA into the kubeconfig, so clients verify TLS exactly as they
would against a real cluster (no `insecure-skip-tls-verify`). Tests use the
same CA to issue webhook certificates, including for service DNS names
(`name.namespace.svc`) that the admission client verifies against.

EC P-256 keys keep handshakes cheap; certificates are valid for a day and carry the
extensions strict verification needs (py_engine/semantics/certificates.py).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from py_engine.semantics.certificates import ca_certificate, server_certificate


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@dataclass(frozen=True)
class CertKey:
    """A PEM certificate and its PEM private key."""

    cert_pem: str
    key_pem: str

    def server_context(self) -> ssl.SSLContext:
        """A server-side SSLContext presenting this certificate (TLS 1.2+)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # load_cert_chain only reads files: write them to a private temp dir briefly.
        with tempfile.TemporaryDirectory(prefix="spreadgate-tls-") as tmp:
            cert_path = os.path.join(tmp, "tls.crt")
            key_path = os.path.join(tmp, "tls.key")
            with open(cert_path, "w", encoding="ascii") as f:
                f.write(self.cert_pem)
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(self.key_pem)
            ctx.load_cert_chain(cert_path, key_path)
        return ctx


class CertificateAuthority:
    """A self-signed CA that issues server certificates."""

    def __init__(self, common_name: str = "spreadgate-emulator-ca") -> None:
        self._key = _key()
        now = dt.datetime.now(dt.UTC)
        self._cert = ca_certificate(
            self._key, common_name, now - dt.timedelta(minutes=5), now + dt.timedelta(days=1)
        )
        self.cert_pem = self._cert.public_bytes(serialization.Encoding.PEM).decode()

    def issue(
        self,
        dns_names: Iterable[str] = ("localhost",),
        ip_addresses: Iterable[str] = ("127.0.0.1",),
        common_name: str | None = None,
    ) -> CertKey:
        """A server certificate for the given DNS names and IP addresses."""
        dns = list(dns_names)
        ips = list(ip_addresses)
        key = _key()
        now = dt.datetime.now(dt.UTC)
        cn = common_name or (dns[0] if dns else ips[0] if ips else "server")
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        cert = server_certificate(
            self._cert,
            self._key,
            key.public_key(),
            cn,
            sans,
            now - dt.timedelta(minutes=5),
            now + dt.timedelta(days=1),
        )
        return CertKey(cert.public_bytes(serialization.Encoding.PEM).decode(), _key_pem(key))
