"""Serving the Flask app over TLS, reloading the certificate when it changes.

The front end is `webhook.frontend` (asyncio: handshakes and request reads
under deadlines, bounded connections and bytes) with `threads` workers running
the app on complete requests; see its docstring for why. The certificate
and key files are polled (mtime and size) every `reload_interval` seconds and
loaded into the live `SSLContext`, so a rotated certificate (cert-manager,
a mounted Secret) is served to new connections without a restart. A pair that
fails to load (a half-written rotation) keeps the old certificate and is
retried at the next poll.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from typing import Any

from webhook.frontend import FrontEnd, bind
from webhook.limits import ServerLimits
from webhook.tls import server_context

log = logging.getLogger(__name__)


def _stamp(path: str) -> tuple[float, int]:
    st = os.stat(path)
    return st.st_mtime, st.st_size


class CertReloader:
    """Polls the certificate files and reloads them into `context` when they change."""

    def __init__(self, context: ssl.SSLContext, cert_file: str, key_file: str, interval: float = 2.0) -> None:
        self.context = context
        self.cert_file = cert_file
        self.key_file = key_file
        self.interval = interval
        self.reloads = 0
        self.failures = 0
        self._stamps = self._current()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="cert-reloader")

    def _current(self) -> tuple[tuple[float, int], tuple[float, int]] | None:
        try:
            return _stamp(self.cert_file), _stamp(self.key_file)
        except OSError:
            return None

    def check(self) -> bool:
        """Reload if the files changed; True when a new certificate was loaded."""
        stamps = self._current()
        if stamps is None or stamps == self._stamps:
            return False
        try:
            self.context.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            self.failures += 1
            log.warning("certificate reload failed (keeping the old one): %s", exc)
            return False
        self._stamps = stamps
        self.reloads += 1
        log.info("reloaded TLS certificate from %s", self.cert_file)
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)


class TLSServer:
    """The webhook's HTTPS server for `app` on host:port (0 = any free port).

    An asyncio front end (`webhook.frontend`) on its own thread does every TLS
    handshake and request read under deadlines; `threads` workers run the WSGI
    app on complete requests only. The certificate is reloaded into the live
    context by `CertReloader`. With `client_ca`, callers must present a certificate
    signed by it (webhook/tls.py).
    """

    def __init__(
        self,
        app: Any,
        *,
        cert_file: str,
        key_file: str,
        host: str = "0.0.0.0",
        port: int = 9443,
        threads: int = 32,
        reload_interval: float = 2.0,
        request_queue_size: int = 128,
        limits: ServerLimits | None = None,
        client_ca: str | None = None,
        reuse_port: bool = False,
    ) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self.app = app
        self.limits = limits or ServerLimits()
        self.context = server_context(cert_file, key_file, client_ca)
        self.reloader = CertReloader(self.context, cert_file, key_file, reload_interval)
        self.threads = threads
        self.backlog = request_queue_size
        self.host = host
        self.port = port
        self.reuse_port = reuse_port
        self.front: FrontEnd | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> TLSServer:
        sock = bind(self.host, self.port, self.backlog, reuse_port=self.reuse_port)
        self.port = int(sock.getsockname()[1])
        self.front = FrontEnd(self.app, self.context, sock, threads=self.threads, limits=self.limits)
        self._thread = threading.Thread(target=self.front.run, daemon=True, name="webhook-server")
        self._thread.start()
        if not self.front.serving.wait(10):
            raise OSError(f"the HTTPS front end on {self.host}:{self.port} did not start")
        self.reloader.start()
        return self

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"https://{host}:{self.port}"

    def serve_forever(self) -> None:
        """Block until `stop()` (from a signal handler or another thread)."""
        if self._thread is None:
            self.start()
        assert self._thread is not None
        while self._thread.is_alive():
            self._thread.join(0.5)

    def stop(self) -> None:
        self.reloader.stop()
        if self.front is not None:
            self.front.stop()
        if self._thread is not None:
            self._thread.join(10)
