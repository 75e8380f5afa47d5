"""A server the emulator runs on a thread of its own, stopped the same way whatever it serves.

The HTTPS front end of the API server (`http_server.RunningServer`) and the admission webhook
stub (`webhook_stub.WebhookStub`) both hold such a server: `stop()` ends it and waits (boundedly)
for its thread, and either is usable as a context manager that stops it on exit.
"""

from __future__ import annotations

import threading
from typing import Protocol, Self

__all__ = ["ThreadedServer"]

JOIN_SECONDS = 5.0
"""How long `stop()` waits for the serving thread (its loops poll well within this)."""


class _Stoppable(Protocol):
    def stop(self) -> None: ...


class ThreadedServer:
    """Holds a server (`_server`) running on `_thread`; subclasses set both when they start it."""

    _server: _Stoppable
    _thread: threading.Thread

    def stop(self) -> None:
        """Stop the server (it ends its watches and connections), then join its thread."""
        self._server.stop()
        self._thread.join(JOIN_SECONDS)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
