"""A threaded HTTPS server that stops cleanly: the base of the emulator's API
front end and of the loopback webhook stub.

`http.server.ThreadingHTTPServer` neither speaks TLS nor lets go of its
connections on shutdown. Here every accepted connection gets its own tracked
thread that performs the TLS handshake (bounded by a socket timeout, so a
client that never handshakes cannot pin a thread), and `stop()` shuts the
listener, closes any stream a subclass keeps open, shuts every live connection
and joins the threads within a deadline: tests leave no socket or thread behind.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANDSHAKE_TIMEOUT_SECONDS = 10


class TLSThreadingHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        addr: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        ssl_ctx: ssl.SSLContext,
        *,
        thread_name: str,
    ) -> None:
        self.ssl_ctx = ssl_ctx
        self.stopping = threading.Event()
        self._thread_name = thread_name
        self._track_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._conn_threads: set[threading.Thread] = set()
        super().__init__(addr, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.stopping.is_set():
            self.shutdown_request(request)
            return
        t = threading.Thread(
            target=self._serve_connection, args=(request, client_address), name=self._thread_name, daemon=True
        )
        with self._track_lock:
            self._conn_threads.add(t)
        t.start()

    def _serve_connection(self, request: socket.socket, client_address: Any) -> None:
        try:
            request.settimeout(HANDSHAKE_TIMEOUT_SECONDS)
            try:
                tls = self.ssl_ctx.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                request.close()
                return
            with self._track_lock:
                self._conns.add(tls)
            try:
                self.finish_request(tls, client_address)
            except (OSError, ssl.SSLError):
                pass  # the client went away
            except Exception as exc:
                self.connection_failed(exc)
            finally:
                with self._track_lock:
                    self._conns.discard(tls)
                with contextlib.suppress(OSError):
                    tls.close()
        finally:
            with self._track_lock:
                self._conn_threads.discard(threading.current_thread())

    def connection_failed(self, exc: Exception) -> None:
        """An unexpected error escaped a request handler (the connection is closed)."""

    def close_streams(self) -> None:
        """Ends long-lived responses (watches) before connections are shut; subclasses override."""

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, end streams, shut live connections, join their threads. Idempotent."""
        if self.stopping.is_set():  # shutdown() would block on a loop that is not running
            return
        self.stopping.set()
        self.shutdown()
        self.server_close()
        self.close_streams()
        with self._track_lock:
            conns, threads = list(self._conns), list(self._conn_threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
