"""The webhook's server-side TLS context.

TLS 1.2 and 1.3 only. TLS 1.2 is limited to forward-secret AEAD suites
(ECDHE with AES-GCM or ChaCha20-Poly1305): the CBC suites OpenSSL's default
list still offers are left out. TLS 1.3 suites are all AEAD and are not
affected by the cipher string. Renegotiation, a client-triggered CPU cost, is
switched off.

With a client CA (`--client-ca`), every caller must present a certificate
signed by it: the handshake of a client without one, or with one from another
CA, fails (`CERT_REQUIRED`), so an unauthenticated review is refused before a
byte of it is read (issue 24; docs/operations.md, "Authenticating the API
server"). The CA file is read once at start: restart the webhook to trust a
new CA (during a rotation, put both CAs in the file).
"""

from __future__ import annotations

import ssl

TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


def server_context(cert_file: str, key_file: str, client_ca: str | None = None) -> ssl.SSLContext:
    """A server context presenting cert_file/key_file (reloaded later by `CertReloader`); with
    `client_ca` (a PEM file of CA certificates), one that requires a client certificate signed by it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(TLS12_CIPHERS)
    context.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_CIPHER_SERVER_PREFERENCE | ssl.OP_NO_COMPRESSION
    context.load_cert_chain(cert_file, key_file)
    if client_ca is not None:
        context.load_verify_locations(cafile=client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    return context
