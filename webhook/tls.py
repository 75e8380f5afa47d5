"""The webhook's server-side TLS context.

TLS 1.2 and 1.3 only. TLS 1.2 is limited to forward-secret AEAD suites
(ECDHE with AES-GCM or ChaCha20-Poly1305): the CBC suites OpenSSL's default
list still offers are left out. TLS 1.3 suites are all AEAD and are not
affected by the cipher string. Renegotiation, a client-triggered CPU cost, is
switched off.
"""

from __future__ import annotations

import ssl

TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"


def server_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A server context presenting cert_file/key_file (reloaded later by `CertReloader`)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(TLS12_CIPHERS)
    context.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_CIPHER_SERVER_PREFERENCE | ssl.OP_NO_COMPRESSION
    context.load_cert_chain(cert_file, key_file)
    return context
