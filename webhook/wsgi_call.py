"""Running a WSGI app (the Flask app) on one complete request.

The front end hands a worker thread only requests whose head and body have
fully arrived, so the app never waits on a client: `wsgi.input` is an
in-memory buffer and the answer is collected whole (admission answers are a
few kilobytes) before the event loop writes it.

An app may also answer later, from any thread: `environ[DEFER_KEY]()` returns a
`Reply` function, and what the app then returns is ignored. The webhook's
admissions answer this way once the group committer has written their batch,
so a worker thread is not parked per admission (webhook/app.py). A server
without this key (Flask's test client, any WSGI server) gets the ordinary
answer, computed on the request's own thread.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from webhook.http1 import RequestHead

log = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
DEFER_KEY = "spreadgate.defer"
"""environ key of the function an app calls to answer later (see the module docstring)."""
Reply = Callable[[int, list[tuple[str, str]], bytes], None]
"""`reply(status, headers, body)`: a deferred answer; only the first one counts."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    crashed: bool = False
    """The app raised: this is the server's own 500."""


class Deferral:
    """One request's way to be answered later (`environ[DEFER_KEY]` is its `defer`).

    Exactly one answer reaches `deliver`: the first `reply`, or the app's immediate answer when
    the app did not defer or crashed before replying (`claim`)."""

    def __init__(self, deliver: Callable[[Answer], None]) -> None:
        self.deliver = deliver
        self.taken = False
        self._answered = False
        self._lock = threading.Lock()

    def defer(self) -> Reply:
        self.taken = True
        return self.reply

    def claim(self) -> bool:
        """Take the right to answer; False when an answer already went out."""
        with self._lock:
            if self._answered:
                return False
            self._answered = True
            return True

    def reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        if self.claim():
            self.deliver(Answer(status, headers, body))


def environ_for(
    head: RequestHead, body: bytes, *, server: tuple[str, int], peer: tuple[str, int]
) -> dict[str, Any]:
    """The PEP 3333 environ of a request (`https`, body in memory)."""
    path, _, query = head.target.partition("?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": head.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
        "QUERY_STRING": query,
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": head.version,
        "REMOTE_ADDR": peer[0],
        "REMOTE_PORT": str(peer[1]),
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in head.headers:
        if name == "content-type":
            environ["CONTENT_TYPE"] = value
        elif name != "content-length":
            key = "HTTP_" + name.upper().replace("-", "_")
            environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ


def call_app(app: WSGIApp, environ: dict[str, Any]) -> Answer:
    """Run `app` on `environ` and collect its answer; a crash becomes a 500 (logged once)."""
    started: list[Any] = []

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        started[:] = [status, headers]
        return _no_write

    try:
        result = app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        return Answer(int(str(status).split(" ", 1)[0]), list(headers), body)
    except Exception:
        log.exception("the WSGI app failed on %s %s", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO"))
        body = b'{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"message":"internal error"}'
        return Answer(500, [("Content-Type", "application/json")], body, crashed=True)


def _no_write(data: bytes) -> None:
    raise RuntimeError("the webhook's front end does not support the WSGI write() callable")
