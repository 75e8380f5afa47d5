"""The webhook's HTTPS front end: one asyncio event loop that no client can stall.

Every connection lives on the event loop until a complete request has arrived:
the TLS handshake (`loop.start_tls` with a handshake deadline), the request
head (a header deadline) and the body (a body deadline) are waited for without
holding a thread, so an idle TCP connection or a client dripping one byte at a
time costs a socket and a timer, never a worker. Only a complete request goes
to the bounded worker pool that runs the WSGI app (`webhook.wsgi_call`). An
answer the app defers (an admission waiting for the group committer's write)
is posted back to the loop by whichever thread produces it, so no worker
waits for it; until then the request still counts against the queue bound.

Bounds (`webhook.limits.ServerLimits`): open connections (more are closed as
they arrive, before any handshake), request head size (431), body size (413,
refused from `Content-Length` before the body is read), bytes of bodies held at
once and large bodies held at once (503 with `Retry-After`, refused before
they are read: decoding a multi-megabyte review holds the interpreter lock, so
two at once would delay every other answer) and requests waiting for a worker
(503). A connection is read no further while its request
is being answered (flow control), so a pipelining client holds one request's
bytes at most.

Logging: one line per client that goes away or is cut off, without a
traceback; a connection that closes cleanly between requests logs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from webhook.http1 import HEAD_END, HttpError, RequestHead, parse_head, problem_response, response_head
from webhook.limits import ServerLimits
from webhook.wsgi_call import DEFER_KEY, Answer, Deferral, WSGIApp, call_app, environ_for

log = logging.getLogger(__name__)

SERVER_HEADER = ("Server", "spreadgate-webhook")
Posted = tuple[Callable[..., None], tuple[Any, ...]]


class FrontEndStats:
    """Counters of refusals and cut-off clients (read by tests and metrics; loop thread writes)."""

    def __init__(self) -> None:
        self.connections = 0
        self.peak_connections = 0
        self.refused_connections = 0
        self.handshake_failures = 0
        self.timeouts = 0
        self.refused_requests: dict[int, int] = {}
        self.disconnects = 0
        self.answered = 0
        self.inflight_bytes = 0
        self.peak_inflight_bytes = 0

    def refused(self, status: int) -> None:
        self.refused_requests[status] = self.refused_requests.get(status, 0) + 1


class FrontEnd:
    """Accepts TLS connections on `sock` and runs `app` for each complete request."""

    def __init__(self, app: WSGIApp, context: ssl.SSLContext, sock: socket.socket, *, threads: int,
                 limits: ServerLimits) -> None:
        self.app = app
        self.context = context
        self.sock = sock
        self.limits = limits
        self.threads = threads
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="webhook-worker")
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(_one_line_exception_handler)
        self.stats = FrontEndStats()
        self.connections: set[Connection] = set()
        self.pending = 0
        self.large_bodies = 0
        """Requests handed to the worker pool and not answered yet (running + queued)."""
        bound = sock.getsockname()
        self.server_address = (str(bound[0]), int(bound[1]))
        self._server: asyncio.base_events.Server | None = None
        self.serving = threading.Event()
        """Set once the loop accepts connections (`stop()` before that would race the start)."""
        self._stopped = threading.Event()
        self._posted: list[Posted] = []
        self._posted_lock = threading.Lock()
        self._wake_pending = False
        self._held = threading.local()

    # -- lifecycle (any thread) ---------------------------------------------------------------

    def run(self) -> None:
        """Serve until `stop()`; runs the event loop on the calling thread."""
        asyncio.set_event_loop(self.loop)
        try:
            self._server = self.loop.run_until_complete(
                self.loop.create_server(lambda: Connection(self), sock=self.sock, backlog=self.limits.max_connections))
            self.serving.set()
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()
            self.executor.shutdown(wait=False, cancel_futures=True)
            self._stopped.set()

    def stop(self, grace: float | None = None) -> None:
        """Stop accepting, let running requests finish within `grace` seconds, close everything."""
        if self.loop.is_closed():
            return
        wait = self.limits.grace if grace is None else grace
        done = threading.Event()

        async def shut_down() -> None:
            if self._server is not None:
                self._server.close()
            deadline = self.loop.time() + wait
            while self.pending and self.loop.time() < deadline:
                await asyncio.sleep(0.02)
            for connection in list(self.connections):
                connection.abort("server stopping", quiet=True)
            done.set()
            self.loop.stop()

        try:
            asyncio.run_coroutine_threadsafe(shut_down(), self.loop)
        except RuntimeError:  # the loop already stopped
            return
        done.wait(wait + 5)

    # -- budgets (loop thread) ----------------------------------------------------------------

    def take_bytes(self, count: int) -> bool:
        """Reserve `count` body bytes; False when the byte budget or the large-body slots are taken."""
        if self.stats.inflight_bytes + count > self.limits.max_inflight_bytes:
            return False
        if count >= self.limits.large_body_bytes:
            if self.large_bodies >= self.limits.max_large_bodies:
                return False
            self.large_bodies += 1
        self.stats.inflight_bytes += count
        self.stats.peak_inflight_bytes = max(self.stats.peak_inflight_bytes, self.stats.inflight_bytes)
        return True

    def give_bytes(self, count: int) -> None:
        if count >= self.limits.large_body_bytes:
            self.large_bodies -= 1
        self.stats.inflight_bytes -= count

    def queue_full(self) -> bool:
        return self.pending >= self.threads + self.limits.max_queued

    # -- worker thread ------------------------------------------------------------------------

    def answer(self, head: RequestHead, body: bytes, peer: tuple[str, int],
               deliver: Callable[[bytes, bool], None]) -> tuple[bytes, bool] | None:
        """Run the app on one complete request: (response bytes, keep the connection open), or
        None when the app deferred its answer, which then goes to `deliver` from whichever
        thread replies (`webhook.wsgi_call.Deferral`)."""
        environ = environ_for(head, body, server=self.server_address, peer=peer)
        deferral = Deferral(lambda later: deliver(*self._encode(head, later)))
        environ[DEFER_KEY] = deferral.defer
        result = call_app(self.app, environ)
        if deferral.taken and not result.crashed:
            return None
        if not deferral.claim():  # crashed after its deferred answer went out
            return None
        return self._encode(head, result)

    @staticmethod
    def _encode(head: RequestHead, result: Answer) -> tuple[bytes, bool]:
        keep_alive = head.keep_alive and result.status < 500
        payload = b"" if head.method == "HEAD" else result.body
        headers = [*result.headers, SERVER_HEADER]
        return response_head(result.status, headers, len(result.body), keep_alive) + payload, keep_alive

    def serve(self, connection: Connection, exchange: _Exchange, head: RequestHead, body: bytes) -> None:
        """A worker's whole part in one request: run the app, post its answer to the loop (unless
        the app deferred it: then whoever replies posts it)."""
        try:
            result = self.answer(head, body, connection.peer, partial(self.post, connection.answered, exchange))
        except Exception as exc:
            self.post(connection.failed, exchange, exc)
            return
        if result is not None:
            self.post(connection.answered, exchange, *result)

    def post(self, callback: Callable[..., None], *args: Any) -> None:
        """Run `callback(*args)` on the loop thread, from any thread. Posts are queued and the loop
        is woken once per run of them (`_run_posted`), and posts made inside `posts_held` wait
        for the block's end: a commit batch answers dozens of admissions at once, and waking
        the loop per answer cost each a context switch on both sides. Dropped once the loop is
        closed (the server stopped and its connections are gone)."""
        held: list[Posted] | None = getattr(self._held, "posts", None)
        if held is not None:
            held.append((callback, args))
            return
        self._post_all([(callback, args)])

    @contextlib.contextmanager
    def posts_held(self) -> Iterator[None]:
        """Hold this thread's posts until the block ends, then hand them to the loop at once."""
        if getattr(self._held, "posts", None) is not None:  # nested: the outer block sends
            yield
            return
        held: list[Posted] = []
        self._held.posts = held
        try:
            yield
        finally:
            self._held.posts = None
            if held:
                self._post_all(held)

    def _post_all(self, posts: list[Posted]) -> None:
        with self._posted_lock:
            self._posted.extend(posts)
            if self._wake_pending:
                return
            self._wake_pending = True
        try:
            self.loop.call_soon_threadsafe(self._run_posted)
        except RuntimeError:
            log.debug("an answer arrived after the server stopped")

    def _run_posted(self) -> None:
        with self._posted_lock:
            posted, self._posted = self._posted, []
            self._wake_pending = False
        for callback, args in posted:
            try:
                callback(*args)
            except Exception as exc:  # one connection's bug must not drop the other answers
                log.error("answering a request failed on the event loop: %s", _reason(exc))


def _one_line_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's own error reports, in one log line each (a client's failure is not a crash)."""
    exc = context.get("exception")
    detail = f"{type(exc).__name__}: {exc}" if exc is not None else ""
    log.warning("event loop: %s %s", context.get("message", ""), detail)


class _Exchange:
    """One request from dispatch to answer (loop thread only)."""

    __slots__ = ("answered",)

    def __init__(self) -> None:
        self.answered = False


class Connection(asyncio.Protocol):
    """One client connection: handshake, then requests one at a time (keep-alive)."""

    def __init__(self, front: FrontEnd) -> None:
        self.front = front
        self.limits = front.limits
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.state = "handshake"
        """handshake -> head -> body -> busy -> idle -> head ... ; closed at the end (draining
        first when a refused client is still sending its body)."""
        self.head: RequestHead | None = None
        self.reserved = 0
        self.unread = 0
        """Body bytes still to drop after a refusal (state "draining")."""
        self.peer: tuple[str, int] = ("", 0)
        self.write_paused = False
        self._timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._counted = False

    # -- asyncio callbacks ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        self.peer = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else ("", 0)
        stats = self.front.stats
        if len(self.front.connections) >= self.limits.max_connections:
            stats.refused_connections += 1
            log.info("refused a connection from %s: %d connections open", self.peer[0], len(self.front.connections))
            transport.abort()
            return
        self.front.connections.add(self)
        self._counted = True
        stats.connections += 1
        stats.peak_connections = max(stats.peak_connections, len(self.front.connections))
        transport.pause_reading()  # the ClientHello waits in the socket until start_tls reads it
        self.front.loop.create_task(self._handshake(transport))

    async def _handshake(self, raw: asyncio.Transport) -> None:
        try:
            tls = await self.front.loop.start_tls(raw, self, self.front.context, server_side=True,
                                                  ssl_handshake_timeout=self.limits.handshake_timeout,
                                                  ssl_shutdown_timeout=self.limits.handshake_timeout)
        except OSError as exc:  # SSLError, ConnectionError and TimeoutError are OSErrors
            self.front.stats.handshake_failures += 1
            log.info("TLS handshake with %s failed: %s", self.peer[0], _reason(exc))
            raw.abort()
            self._forget()
            return
        if tls is None or self.state == "closed":  # pragma: no cover - closed while handshaking
            raw.abort()
            self._forget()
            return
        self.transport = tls
        self.state = "head"
        self._deadline(self.limits.header_timeout, "request head")
        self._advance()

    def data_received(self, data: bytes) -> None:
        if self.state == "draining":
            self._drain(len(data))
            return
        self.buffer += data
        if self.state == "idle":
            self.state = "head"
            self._deadline(self.limits.header_timeout, "request head")
        if self.state in ("head", "body"):
            self._advance()
        elif len(self.buffer) > self.limits.max_header_bytes + self.limits.max_body_bytes:
            self.abort("sent more than one request ahead")

    def eof_received(self) -> bool | None:
        if self.state in ("head", "body") and self.buffer:
            self._log_cut("closed its side mid-request")
        return None  # close our side too (a pending answer has nowhere to go)

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and self.state not in ("closed", "idle", "draining"):
            self._log_cut(f"disconnected: {_reason(exc)}")
        elif exc is not None:
            log.debug("client %s disconnected: %s", self.peer[0], _reason(exc))
        busy = self.state == "busy"
        self.state = "closed"
        self._forget(release=not busy)  # a running request releases its bytes when answered

    def pause_writing(self) -> None:
        self.write_paused = True
        self._write_timer = self.front.loop.call_later(self.limits.write_timeout, self._write_expired)

    def resume_writing(self) -> None:
        self.write_paused = False
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        if self.state in ("head", "idle") and self.buffer:
            self._advance()

    # -- the request cycle ------------------------------------------------------------------

    def _advance(self) -> None:
        """Read as far as the buffered bytes allow; hand a complete request to the worker pool."""
        if self.write_paused or self.transport is None:
            return
        if self.state == "head":
            end = self.buffer.find(HEAD_END, 0, self.limits.max_header_bytes + len(HEAD_END))
            if end < 0:
                if len(self.buffer) > self.limits.max_header_bytes:
                    self._refuse(431, f"request head exceeds {self.limits.max_header_bytes} bytes")
                return
            raw = bytes(self.buffer[:end])
            del self.buffer[:end + len(HEAD_END)]
            try:
                head = parse_head(raw)
            except HttpError as exc:
                self._refuse(exc.status, exc.message)
                return
            if head.content_length > self.limits.max_body_bytes:
                self._refuse(413, f"request body of {head.content_length} bytes exceeds the "
                                  f"{self.limits.max_body_bytes}-byte limit")
                return
            if not self.front.take_bytes(head.content_length):
                self._refuse(503, "too many request bytes in flight; retry", retry_after=1,
                             unread=head.content_length - len(self.buffer))
                return
            self.reserved = head.content_length
            self.head = head
            self.state = "body"
            self._deadline(self.limits.body_timeout, "request body")
        if self.state == "body":
            assert self.head is not None
            length = self.head.content_length
            if len(self.buffer) < length:
                return
            body = bytes(self.buffer[:length])
            del self.buffer[:length]
            self._dispatch(self.head, body)

    def _dispatch(self, head: RequestHead, body: bytes) -> None:
        assert self.transport is not None
        self._cancel_deadline()
        if self.front.queue_full():
            self._refuse(503, "the webhook is busy; retry", retry_after=1)
            return
        self.state = "busy"
        self.transport.pause_reading()
        self.front.pending += 1
        self.front.executor.submit(self.front.serve, self, _Exchange(), head, body)

    def answered(self, exchange: _Exchange, data: bytes, keep_alive: bool) -> None:
        """The request's answer (loop thread): from the worker, or later from whoever the app
        deferred it to; a second answer to the same request is dropped."""
        if not exchange.answered:
            self._answer(exchange, data, keep_alive)

    def failed(self, exchange: _Exchange, failure: BaseException) -> None:
        """The front end's own bug while answering (call_app turns app crashes into a 500)."""
        log.error("answering %s failed: %s", self.peer[0], _reason(failure))
        if not exchange.answered:
            self._settle(exchange)
            self.abort("internal error")

    def _settle(self, exchange: _Exchange) -> None:
        """The request is over (answered or abandoned): its place in the queue and its bytes are free."""
        exchange.answered = True
        self.front.pending -= 1
        self._release()

    def _answer(self, exchange: _Exchange, data: bytes, keep_alive: bool) -> None:
        self._settle(exchange)
        self.front.stats.answered += 1
        if self.state == "closed" or self.transport is None or self.transport.is_closing():
            return
        self.transport.write(data)
        if not keep_alive:
            self.state = "closed"
            self.transport.close()
            return
        self.state = "idle"
        self.head = None
        self.transport.resume_reading()
        if self.buffer:
            self.state = "head"
            self._deadline(self.limits.header_timeout, "request head")
            self._advance()
        else:
            self._deadline(self.limits.idle_timeout, "next request")

    # -- endings ----------------------------------------------------------------------------

    def _refuse(self, status: int, message: str, retry_after: int | None = None, unread: int = 0) -> None:
        """Answer `status` and close: the rest of the connection's bytes are not read.

        `unread`: body bytes the client announced and is still sending. They are received and
        dropped until they have all come, for at most `body_timeout`, before closing: a socket
        closed with data still arriving is reset by the kernel, and a client still writing its
        body would then see the reset instead of this answer."""
        self._release()
        self.front.stats.refused(status)
        log.info("refused a request from %s with %d: %s", self.peer[0], status, message)
        self.state = "closed"
        self._cancel_deadline()
        if self.transport is None or self.transport.is_closing():
            return
        self.transport.write(problem_response(status, message, retry_after=retry_after))
        self.buffer.clear()
        if unread <= 0:
            self.transport.close()
            return
        self.state = "draining"
        self.unread = unread
        self._timer = self.front.loop.call_later(self.limits.body_timeout, self._drained)

    def _drain(self, count: int) -> None:
        self.unread -= count
        if self.unread <= 0:
            self._drained()

    def _drained(self) -> None:
        self._timer = None
        self.state = "closed"
        if self.transport is not None:
            self.transport.close()

    def abort(self, why: str, quiet: bool = False) -> None:
        """Drop the connection now (no answer)."""
        if not quiet:
            self._log_cut(why)
        self.state = "closed"
        self._cancel_deadline()
        if self.transport is not None:
            self.transport.abort()

    def _deadline(self, seconds: float, what: str) -> None:
        self._cancel_deadline()
        self._timer = self.front.loop.call_later(seconds, self._expired, what, seconds)

    def _cancel_deadline(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, what: str, seconds: float) -> None:
        self._timer = None
        if self.state == "idle" and not self.buffer:
            self.state = "closed"
            if self.transport is not None:
                self.transport.close()  # an idle keep-alive connection ends quietly
            return
        self.front.stats.timeouts += 1
        self._refuse(408, f"{what} not complete within {seconds:g} s")

    def _write_expired(self) -> None:
        self._write_timer = None
        self.front.stats.timeouts += 1
        self.abort(f"did not read its answer within {self.limits.write_timeout:g} s")

    def _release(self) -> None:
        if self.reserved:
            self.front.give_bytes(self.reserved)
            self.reserved = 0

    def _forget(self, release: bool = True) -> None:
        self._cancel_deadline()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        if release:
            self._release()
        if self._counted:
            self._counted = False
            self.front.connections.discard(self)

    def _log_cut(self, why: str) -> None:
        self.front.stats.disconnects += 1
        log.info("client %s %s", self.peer[0], why)


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def bind(host: str, port: int, backlog: int) -> socket.socket:
    """The listening socket (bound now, so a busy port fails `start()` with OSError)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=backlog, reuse_port=False)
    sock.setblocking(False)
    return sock

