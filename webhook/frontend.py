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

Bounds (`webhook.limits.ServerLimits`, docs/operations.md "How the webhook
protects itself from its clients"):
- connections: at `max_connections` a new connection takes the place of the
  oldest one that has not completed a request, or the oldest idle one, of the
  peer (remote IP) holding the most; it is refused when its own peer already
  holds its share, or when every connection is answering a request (counted,
  and logged once per interval with the count).
- handshakes: at most `max_handshakes` at once (each holds asyncio's 256 KiB
  TLS buffer); a peer holding its share waits for its own to end, another
  peer displaces the oldest of the busiest. A failed handshake leaves no
  reference cycle (`_drop_traceback`), so its memory returns at once,
  without the cyclic garbage collector.
- bytes: every byte read is charged to the in-flight budget as it arrives
  (never as announced) until it is consumed (a head) or answered (a body); one
  peer holds at most its share of the budget; more gets 503. A connection's
  buffer never exceeds one head plus one body, in any state, and a client that
  does not read its answers is not read either.
- time: handshake, head and body deadlines; a body must keep arriving at
  `min_body_rate` bytes per second (408 otherwise).
- work: request head size (431), body size (413 from `Content-Length`, before
  the body is read), requests waiting for a worker (503). Large bodies are
  decoded one at a time (decoding a multi-megabyte review holds the
  interpreter lock): complete ones wait their turn, taken in turn by peer, so
  holding the slot needs the bytes actually sent; after each, the slot rests
  three times the CPU it took, so large bodies get a quarter of the time.

Logging: one line per client that goes away or is cut off, without a
traceback; a connection that closes cleanly between requests logs nothing;
refused and displaced connections are summed into one line per interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from webhook.http1 import (
    CONTINUE,
    HEAD_END,
    HttpError,
    RequestHead,
    parse_head,
    problem_response,
    response_head,
)
from webhook.limits import ServerLimits
from webhook.wsgi_call import DEFER_KEY, Answer, Deferral, WSGIApp, call_app, environ_for

log = logging.getLogger(__name__)

SERVER_HEADER = ("Server", "spreadgate-webhook")
Posted = tuple[Callable[..., None], tuple[Any, ...]]
REFUSAL_LOG_INTERVAL = 10.0
"""Seconds between two summary lines of refused and displaced connections."""
RATE_WINDOW = 1.0
"""Seconds per minimum-body-rate check (`ServerLimits.min_body_rate`)."""
LARGE_BODY_REST = 3.0
"""After a large body's answer, its slot rests this many times the CPU the worker spent on it."""
LARGE_BODY_REST_MAX = 5.0
READ_SLACK = 256 * 1024
"""Bytes one TLS read may deliver past what a connection asked for (asyncio's read buffer)."""
OWN_BYTES = 64 * 1024
"""Bytes every connection may hold outside the shared in-flight budget: a head and a small body
(an ordinary pod's review is a few KiB), so large uploads from one peer never refuse the small
reviews of others. 1,024 connections hold at most 64 MiB of them."""
EVICTABLE = frozenset({"handshake", "head", "body", "draining"})
"""States in which a connection that never completed a request may be displaced at the cap."""


class FrontEndStats:
    """Counters of refusals and cut-off clients (read by tests and metrics; loop thread writes)."""

    def __init__(self) -> None:
        self.connections = 0
        self.peak_connections = 0
        self.refused_connections = 0
        self.evicted_connections = 0
        """Connections closed to admit a newer one (connection or handshake cap, peer share)."""
        self.slow_bodies = 0
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

    def __init__(
        self,
        app: WSGIApp,
        context: ssl.SSLContext,
        sock: socket.socket,
        *,
        threads: int,
        limits: ServerLimits,
    ) -> None:
        self.app = app
        self.context = context
        self.sock = sock
        self.limits = limits
        self.threads = threads
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="webhook-worker")
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(_one_line_exception_handler)
        self.stats = FrontEndStats()
        self.connections: dict[Connection, None] = {}
        """Open connections, oldest first."""
        self.by_peer: dict[str, dict[Connection, None]] = {}
        self.handshaking: dict[Connection, None] = {}
        self.handshake_queue: dict[Connection, None] = {}
        """Connections waiting for their peer's share of handshakes, oldest first."""
        self.peer_handshakes: dict[str, int] = {}
        self.peer_bytes: dict[str, int] = {}
        self.pending = 0
        """Requests handed to the worker pool and not answered yet (running + queued)."""
        self.large_bodies = 0
        """Large bodies being decoded and answered (at most `max_large_bodies`)."""
        self.large_waiting: deque[Callable[[], None]] = deque()
        self.large_waiting_peers: deque[str] = deque()
        self.last_large_peer = ""
        self.refusal_log = RefusalLog()
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
                self.loop.create_server(
                    lambda: Connection(self), sock=self.sock, backlog=self.limits.max_connections
                )
            )
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

    def take_bytes(self, peer: str, count: int) -> bool:
        """Charge `count` bytes that arrived from `peer`; False past the budget or the peer's share."""
        held = self.peer_bytes.get(peer, 0)
        if (
            self.stats.inflight_bytes + count > self.limits.max_inflight_bytes
            or held + count > self.limits.share(self.limits.max_inflight_bytes)
        ):
            return False
        self.peer_bytes[peer] = held + count
        self.stats.inflight_bytes += count
        self.stats.peak_inflight_bytes = max(self.stats.peak_inflight_bytes, self.stats.inflight_bytes)
        return True

    def give_bytes(self, peer: str, count: int) -> None:
        self.stats.inflight_bytes -= count
        left = self.peer_bytes.get(peer, 0) - count
        if left > 0:
            self.peer_bytes[peer] = left
        else:
            self.peer_bytes.pop(peer, None)

    def admit(self, connection: Connection) -> bool:
        """Make room for a new connection at the cap; False when it must be refused.

        Below `max_connections` every connection is admitted. At the cap, a connection from a
        peer that already holds its share is refused (it may retry once its own connections
        end: displacing its own older ones would let a reconnecting client churn the server);
        any other takes the place of the oldest connection that has not completed a request,
        or the oldest idle one, of the peer holding the most, so a fresh client always gets
        in. With every connection answering a request, it is refused too."""
        if len(self.connections) < self.limits.max_connections:
            return self._add(connection)
        mine = self.by_peer.get(connection.peer[0], {})
        if self.limits.peer_share < 1 and len(mine) >= self.limits.share(self.limits.max_connections):
            self._displace(None, "its peer holds its share of the connections")
            return False
        busiest = max(self.by_peer.values(), key=len)
        victim = _oldest_evictable(busiest) or _oldest_evictable(self.connections)
        if not self._displace(victim, f"{len(self.connections)} connections open"):
            return False
        return self._add(connection)

    def _add(self, connection: Connection) -> bool:
        peer = connection.peer[0]
        self.connections[connection] = None
        self.by_peer.setdefault(peer, {})[connection] = None
        self.stats.connections += 1
        self.stats.peak_connections = max(self.stats.peak_connections, len(self.connections))
        return True

    def start_handshake(self, connection: Connection) -> None:
        """Begin `connection`'s handshake now, or queue it while its peer holds its share of the
        handshakes (it waits with its socket unread, at the cost of a socket and a timer, until
        one of them ends or its deadline passes: displacing the peer's own handshakes instead
        would only make a reconnecting client churn). A peer under its share is never queued:
        at the cap the oldest handshake of the peer holding the most makes room."""
        peer = connection.peer[0]
        if self.peer_handshakes.get(peer, 0) >= self.limits.share(self.limits.max_handshakes):
            self.handshake_queue[connection] = None
            connection.wait_for_handshake()
            return
        if len(self.handshaking) >= self.limits.max_handshakes:
            busiest = max(self.peer_handshakes, key=lambda p: self.peer_handshakes[p])
            self._displace(next(c for c in self.handshaking if c.peer[0] == busiest), "handshakes full")
        self._begin_handshake(connection)

    def _begin_handshake(self, connection: Connection) -> None:
        peer = connection.peer[0]
        self.handshaking[connection] = None
        self.peer_handshakes[peer] = self.peer_handshakes.get(peer, 0) + 1
        connection.begin_handshake()

    def end_handshake(self, connection: Connection) -> None:
        self.handshake_queue.pop(connection, None)
        if self.handshaking.pop(connection, 0) is None:
            peer = connection.peer[0]
            left = self.peer_handshakes.get(peer, 0) - 1
            if left > 0:
                self.peer_handshakes[peer] = left
            else:
                self.peer_handshakes.pop(peer, None)
            self._start_queued()

    def _start_queued(self) -> None:
        """Begin the oldest queued handshake whose peer is under its share, if there is room."""
        if len(self.handshaking) >= self.limits.max_handshakes:
            return
        share = self.limits.share(self.limits.max_handshakes)
        for waiting in self.handshake_queue:
            if self.peer_handshakes.get(waiting.peer[0], 0) < share:
                del self.handshake_queue[waiting]
                self._begin_handshake(waiting)
                return

    def forget(self, connection: Connection) -> None:
        if self.connections.pop(connection, 0) is None:
            peer = connection.peer[0]
            mine = self.by_peer.get(peer)
            if mine is not None:
                mine.pop(connection, None)
                if not mine:
                    del self.by_peer[peer]
        self.end_handshake(connection)

    def _displace(self, victim: Connection | None, why: str) -> bool:
        if victim is None:
            self.stats.refused_connections += 1
            self.refusal_log.note(self.loop, "connections refused", why)
            return False
        self.stats.evicted_connections += 1
        self.refusal_log.note(self.loop, "connections displaced", why)
        victim.evict()
        return True

    def run_large(self, peer: str, start: Callable[[], None]) -> None:
        """Start a complete large request now if a large-body slot is free, else when one frees
        (`large_done`), taking waiting requests in turn by peer."""
        if self.large_bodies < self.limits.max_large_bodies:
            self.large_bodies += 1
            self.last_large_peer = peer
            start()
            return
        self.large_waiting.append(start)
        self.large_waiting_peers.append(peer)

    def large_done(self, spent: float) -> None:
        """A large request's answer is out; `spent`: the worker's CPU seconds on it. The slot rests
        `LARGE_BODY_REST` times that long before the next: decoding a large review holds the
        interpreter lock throughout (json's C decoder does not release it), so back-to-back large
        bodies would starve every other request; resting keeps them to a quarter of the time.
        No storable pod is that large, so the API server's own reviews never wait for it."""
        rest = min(spent * LARGE_BODY_REST, LARGE_BODY_REST_MAX)
        if rest > 0.001:
            self.loop.call_later(rest, self._large_free)
        else:
            self._large_free()

    def _large_free(self) -> None:
        self.large_bodies -= 1
        if not self.large_waiting or self.large_bodies >= self.limits.max_large_bodies:
            return
        index = next(
            (i for i, peer in enumerate(self.large_waiting_peers) if peer != self.last_large_peer), 0
        )
        start = self.large_waiting[index]
        peer = self.large_waiting_peers[index]
        del self.large_waiting[index]
        del self.large_waiting_peers[index]
        self.large_bodies += 1
        self.last_large_peer = peer
        start()

    def queue_full(self) -> bool:
        return self.pending >= self.threads + self.limits.max_queued

    # -- worker thread ------------------------------------------------------------------------

    def answer(
        self, head: RequestHead, body: bytes, peer: tuple[str, int], deliver: Callable[[bytes, bool], None]
    ) -> tuple[bytes, bool] | None:
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
        started = time.thread_time()
        try:
            result = self.answer(
                head, body, connection.peer, partial(self.post, connection.answered, exchange)
            )
        except Exception as exc:
            exchange.spent = time.thread_time() - started
            self.post(connection.failed, exchange, exc)
            return
        exchange.spent = time.thread_time() - started  # read by the loop after the post below
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


class RefusalLog:
    """Refused and displaced connections and failed handshakes, summed into at most one log line
    per interval (a flood of them is one line per 10 s with the counts, not one per connection)."""

    def __init__(self, interval: float = REFUSAL_LOG_INTERVAL) -> None:
        self.interval = interval
        self.counts: dict[str, int] = {}
        self.last_reason = ""
        self._timer: asyncio.TimerHandle | None = None

    def note(self, loop: asyncio.AbstractEventLoop, what: str, why: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        self.last_reason = why
        if self._timer is None:  # the first of a quiet interval is told at once
            self.flush(loop)

    def flush(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self.counts:
            self._timer = None
            return
        told = ", ".join(f"{what}: {count}" for what, count in sorted(self.counts.items()))
        log.info("%s (last: %s)", told, self.last_reason)
        self.counts = {}
        self._timer = loop.call_later(self.interval, self.flush, loop)


def _oldest_evictable(connections: dict[Connection, None]) -> Connection | None:
    """The oldest connection that has not completed a request, or that is idle."""
    for connection in connections:
        if connection.state == "idle" or (connection.state in EVICTABLE and not connection.completed):
            return connection
    return None


def _drop_traceback(exc: BaseException) -> None:
    """Break the reference cycle a failed `start_tls` leaves (its frame holds the protocol, which
    holds the waiter, which holds the exception, whose traceback holds the frame), so the 256 KiB
    TLS buffer is freed by reference counting, not whenever the cyclic collector runs."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__traceback__ = None
        current = current.__cause__ or current.__context__


def _one_line_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's own error reports, in one log line each (a client's failure is not a crash)."""
    exc = context.get("exception")
    detail = f"{type(exc).__name__}: {exc}" if exc is not None else ""
    if isinstance(exc, OSError) and "never retrieved" in str(context.get("message", "")):
        # A TLS handshake's waiter failing after its connection was displaced or reset: the client's
        # departure, already counted; one line per connection would flood the log under attack.
        log.debug("event loop: %s %s", context.get("message", ""), detail)
        return
    log.warning("event loop: %s %s", context.get("message", ""), detail)


class _Exchange:
    """One request from dispatch to answer (loop thread only)."""

    __slots__ = ("answered", "large", "spent")

    def __init__(self) -> None:
        self.answered = False
        self.large = False
        self.spent = 0.0
        """The worker's CPU seconds on the request (set by the worker before it posts the answer)."""


class Connection(asyncio.Protocol):
    """One client connection: handshake, then requests one at a time (keep-alive)."""

    def __init__(self, front: FrontEnd) -> None:
        self.front = front
        self.limits = front.limits
        self.transport: asyncio.Transport | None = None
        self.raw: asyncio.Transport | None = None
        """The TCP transport while the handshake runs (aborted to displace the connection)."""
        self.buffer = bytearray()
        self.state = "handshake"
        """handshake -> head -> body -> busy -> idle -> head ... ; closed at the end (draining
        first when a refused client is still sending its body)."""
        self.head: RequestHead | None = None
        self.charged = 0
        """Bytes of this connection charged to the in-flight budget: its buffer, plus the body
        being answered (`answering`)."""
        self.answering = 0
        self.completed = 0
        """Requests answered on this connection."""
        self.body_seen = 0
        self._rate_timer: asyncio.TimerHandle | None = None
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
        if not self.front.admit(self):
            transport.abort()
            return
        self._counted = True
        self.raw = transport
        transport.pause_reading()  # the ClientHello waits in the socket until start_tls reads it
        self.front.start_handshake(self)

    def begin_handshake(self) -> None:
        self._cancel_deadline()
        if self.raw is not None:
            self.front.loop.create_task(self._handshake(self.raw))

    def wait_for_handshake(self) -> None:
        self._deadline_call(self.limits.handshake_timeout, self._handshake_expired)

    def _handshake_expired(self) -> None:
        """Queued for a handshake slot past the handshake deadline: closed, counted as a failure."""
        self._timer = None
        self._handshake_failed(f"no handshake slot for its peer within {self.limits.handshake_timeout:g} s")
        raw = self.raw
        self.state = "closed"
        self._forget()
        if raw is not None:
            raw.abort()

    def _handshake_failed(self, why: str) -> None:
        self.front.stats.handshake_failures += 1
        self.front.refusal_log.note(self.front.loop, "failed TLS handshakes", f"{self.peer[0]}: {why}")

    async def _handshake(self, raw: asyncio.Transport) -> None:
        if self.state == "closed" or raw.is_closing():  # displaced before its handshake began
            self.raw = None
            self.front.end_handshake(self)
            return
        try:
            tls = await self.front.loop.start_tls(
                raw,
                self,
                self.front.context,
                server_side=True,
                ssl_handshake_timeout=self.limits.handshake_timeout,
                ssl_shutdown_timeout=self.limits.handshake_timeout,
            )
        except Exception as exc:  # SSLError, ConnectionError, TimeoutError; anything else alike
            _drop_traceback(exc)
            if self.state != "closed":  # a displaced connection was already counted and told
                self._handshake_failed(_reason(exc))
            raw.abort()
            self.state = "closed"
            self._forget()
            return
        finally:
            self.raw = None
            self.front.end_handshake(self)
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
        if self.state == "closed":
            return
        if (
            len(self.buffer) + len(data)
            > self.limits.max_header_bytes + self.limits.max_body_bytes + READ_SLACK
        ):
            self.abort("sent more than one request ahead")
            return
        if not self._charge(len(data)):
            unread = (
                self.head.content_length - len(self.buffer) - len(data)
                if self.state == "body" and self.head
                else 0
            )
            self._refuse(503, "too many request bytes in flight; retry", retry_after=1, unread=max(unread, 0))
            return
        self.buffer += data
        if self.state == "idle":
            self.state = "head"
            self._deadline(self.limits.header_timeout, "request head")
        if self.state in ("head", "body"):
            self._advance()

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
        """The client does not read its answers: read nothing more from it until it does."""
        self.write_paused = True
        if self.transport is not None:
            self.transport.pause_reading()
        self._write_timer = self.front.loop.call_later(self.limits.write_timeout, self._write_expired)

    def resume_writing(self) -> None:
        self.write_paused = False
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        if self.state in ("head", "idle", "body") and self.transport is not None:
            self.transport.resume_reading()
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
            del self.buffer[: end + len(HEAD_END)]
            self._uncharge(end + len(HEAD_END))
            try:
                head = parse_head(raw)
            except HttpError as exc:
                self._refuse(exc.status, exc.message)
                return
            if head.content_length > self.limits.max_body_bytes:
                self._refuse(
                    413,
                    f"request body of {head.content_length} bytes exceeds the "
                    f"{self.limits.max_body_bytes}-byte limit",
                )
                return
            self.head = head
            self.state = "body"
            self._deadline(self.limits.body_timeout, "request body")
            if len(self.buffer) < head.content_length:
                if head.expect_continue and not self.buffer:
                    self.transport.write(CONTINUE)
                self._watch_rate()
        if self.state == "body":
            assert self.head is not None
            length = self.head.content_length
            if len(self.buffer) < length:
                return
            body = bytes(self.buffer[:length])
            del self.buffer[:length]
            self._dispatch(self.head, body)

    def _watch_rate(self) -> None:
        """Check, every `RATE_WINDOW` seconds while the body is incomplete, that it keeps coming."""
        if self.limits.min_body_rate:
            self.body_seen = len(self.buffer)
            self._rate_timer = self.front.loop.call_later(RATE_WINDOW, self._check_rate)

    def _check_rate(self) -> None:
        self._rate_timer = None
        if self.state != "body" or self.head is None:
            return
        needed = min(int(self.limits.min_body_rate * RATE_WINDOW), self.head.content_length - self.body_seen)
        if len(self.buffer) - self.body_seen < needed:
            self.front.stats.slow_bodies += 1
            self.front.stats.timeouts += 1
            self._refuse(408, f"request body arrived slower than {self.limits.min_body_rate} bytes/s")
            return
        self._watch_rate()

    def _dispatch(self, head: RequestHead, body: bytes) -> None:
        assert self.transport is not None
        self._cancel_deadline()
        if self.front.queue_full():
            self._refuse(503, "the webhook is busy; retry", retry_after=1)
            return
        self.state = "busy"
        self.answering = len(body)
        self.transport.pause_reading()
        self.front.pending += 1
        exchange = _Exchange()
        if len(body) < self.limits.large_body_bytes:
            self.front.executor.submit(self.front.serve, self, exchange, head, body)
            return
        exchange.large = True
        self.front.run_large(self.peer[0], partial(self._start_large, exchange, head, body))

    def _start_large(self, exchange: _Exchange, head: RequestHead, body: bytes) -> None:
        """A large request's turn (loop thread): skipped, its slot passed on, if its client left."""
        if self.state != "busy":
            self._settle(exchange)
            return
        self.front.executor.submit(self.front.serve, self, exchange, head, body)

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
        self._uncharge(self.answering)
        self.answering = 0
        if exchange.large:
            exchange.large = False
            self.front.large_done(exchange.spent)

    def _answer(self, exchange: _Exchange, data: bytes, keep_alive: bool) -> None:
        self._settle(exchange)
        self.front.stats.answered += 1
        if self.state == "closed" or self.transport is None or self.transport.is_closing():
            return
        self.completed += 1
        self.transport.write(data)
        if not keep_alive:
            self.state = "closed"
            self.transport.close()
            return
        self.state = "idle"
        self.head = None
        if not self.write_paused:
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
        self._release_buffer()
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
        if self.limits.min_body_rate:
            self._watch_drain()
        else:
            self._timer = self.front.loop.call_later(self.limits.body_timeout, self._drained)

    def _watch_drain(self) -> None:
        """Keep dropping a refused body while it arrives at `min_body_rate` (it holds no memory),
        so a client that is still sending reads the refusal instead of a reset."""
        self.body_seen = self.unread
        self._rate_timer = self.front.loop.call_later(RATE_WINDOW, self._check_drain)

    def _check_drain(self) -> None:
        self._rate_timer = None
        if self.state != "draining":
            return
        if self.body_seen - self.unread < min(int(self.limits.min_body_rate * RATE_WINDOW), self.body_seen):
            self._drained()
            return
        self._watch_drain()

    def _drain(self, count: int) -> None:
        self.unread -= count
        if self.unread <= 0:
            self._drained()

    def _drained(self) -> None:
        self._cancel_deadline()
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

    def evict(self) -> None:
        """Close this connection to admit a newer one (counted and logged by the front end)."""
        busy = self.state == "busy"
        self.state = "closed"
        self._cancel_deadline()
        transport = self.transport or self.raw
        self._forget(release=not busy)
        if transport is not None:
            transport.abort()

    def _deadline(self, seconds: float, what: str) -> None:
        self._deadline_call(seconds, self._expired, what, seconds)

    def _deadline_call(self, seconds: float, callback: Callable[..., None], *args: Any) -> None:
        self._cancel_deadline()
        self._timer = self.front.loop.call_later(seconds, callback, *args)

    def _cancel_deadline(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._rate_timer is not None:
            self._rate_timer.cancel()
            self._rate_timer = None

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

    def _charge(self, count: int) -> bool:
        """Charge `count` arrived bytes: those past `OWN_BYTES` to the shared budget (False when
        it, or this peer's share of it, is full)."""
        over = max(0, self.charged + count - OWN_BYTES) - max(0, self.charged - OWN_BYTES)
        if over and not self.front.take_bytes(self.peer[0], over):
            return False
        self.charged += count
        return True

    def _uncharge(self, count: int) -> None:
        if count:
            over = max(0, self.charged - OWN_BYTES) - max(0, self.charged - count - OWN_BYTES)
            self.charged -= count
            if over:
                self.front.give_bytes(self.peer[0], over)

    def _release_buffer(self) -> None:
        """Give back every charged byte but those of a body being answered (its answer does)."""
        self.buffer.clear()
        self._uncharge(self.charged - self.answering)

    def _forget(self, release: bool = True) -> None:
        self._cancel_deadline()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        self._release_buffer()
        if release:
            self._uncharge(self.answering)
            self.answering = 0
        if self._counted:
            self._counted = False
            self.front.forget(self)

    def _log_cut(self, why: str) -> None:
        self.front.stats.disconnects += 1
        log.info("client %s %s", self.peer[0], why)


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def bind(host: str, port: int, backlog: int, *, reuse_port: bool = False) -> socket.socket:
    """The listening socket (bound now, so a busy port fails `start()` with OSError). With
    `reuse_port`, other processes that set it too may listen on the same port (SO_REUSEPORT):
    the kernel spreads new connections among them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=backlog, reuse_port=reuse_port)
    sock.setblocking(False)
    return sock
