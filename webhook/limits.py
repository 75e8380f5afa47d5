"""The front end's limits: deadlines, connection and byte budgets.

One frozen value, filled from the `spreadgate webhook` flags (docs/operations.md,
"Tuning"). Every figure bounds what one client, or all of them together, can
take from the webhook: a TLS handshake or a request head that does not arrive
in time closes the connection; a body larger than the API server's own request
limit (3 MiB) is refused with 413 before it is read; requests beyond the worker
pool's queue, or bodies beyond the in-flight byte budget, are refused at once
with 503 instead of waiting.

Fair shares: one peer (remote IP address) may hold at most `peer_share` of the
connections (at the cap), of the TLS handshakes in progress and of the
in-flight bytes; at the connection cap the oldest connection that has not
completed a request (or the oldest idle one) of the peer holding the most is
closed to admit a new one from another peer.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
API_SERVER_REQUEST_LIMIT = 3 * MIB
"""The Kubernetes API server refuses request bodies above 3 MiB, so no real review is larger."""


@dataclass(frozen=True)
class ServerLimits:
    handshake_timeout: float = 5.0
    """Seconds for a new connection's TLS handshake."""
    header_timeout: float = 5.0
    """Seconds for a request head to arrive.

    From the handshake (first request) or its first byte (later ones)."""
    body_timeout: float = 10.0
    """Seconds for a request body to arrive once its head is read."""
    idle_timeout: float = 60.0
    """Seconds a keep-alive connection may wait for its next request."""
    write_timeout: float = 10.0
    """Seconds a response may wait for a client that does not read it."""
    max_connections: int = 1024
    """Open connections (handshaking included). At the cap a new connection takes the place of the
    oldest one that has not completed a request, or the oldest idle one, of the busiest peer; it is
    refused when its peer holds its share already, or when none can be displaced."""
    max_handshakes: int = 256
    """TLS handshakes in progress. Each holds asyncio's 256 KiB TLS read buffer, so this bounds the
    handshake stage's memory (64 MiB). A peer holding its share waits for one of its own to end;
    another, at the cap, takes the place of the busiest peer's oldest handshake."""
    peer_share: float = 0.5
    """The fraction of connections (at the cap), handshakes and in-flight bytes one peer (remote IP)
    may hold: beyond it new connections are refused, handshakes wait, bytes get 503. 1 disables."""
    min_body_rate: int = 64 * 1024
    """Bytes per second a request body must keep arriving at: each second after the head, at least
    this many new bytes (or the rest of the body) must have come, else 408. 0 disables."""
    max_header_bytes: int = 32 * 1024
    """Largest request head (request line and headers): more gets 431."""
    max_body_bytes: int = API_SERVER_REQUEST_LIMIT
    """Largest request body: more gets 413 without being read."""
    max_inflight_bytes: int = 8 * MIB
    """Request bytes held at once, charged as they arrive (heads and bodies being read, bodies until
    their answer is written): more gets 503."""
    large_body_bytes: int = MIB
    """A body at least this large is "large": decoding it holds the interpreter lock for a long stretch."""
    max_large_bodies: int = 1
    """Large bodies decoded at once; more complete large requests wait their turn (taken in turn by
    peer), counted against `max_queued`. No storable pod is that large (etcd takes 1.5 MiB per object)."""
    max_queued: int = 256
    """Complete requests waiting for a worker thread beyond those running: more gets 503."""
    grace: float = 10.0
    """Seconds `stop()` lets running requests finish."""

    def __post_init__(self) -> None:
        for name in ("handshake_timeout", "header_timeout", "body_timeout", "idle_timeout", "write_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        for name in (
            "max_connections",
            "max_handshakes",
            "max_header_bytes",
            "max_body_bytes",
            "max_inflight_bytes",
            "max_large_bodies",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 0 < self.peer_share <= 1:
            raise ValueError("peer_share must be in (0, 1]")
        if self.min_body_rate < 0:
            raise ValueError("min_body_rate must not be negative")
        if self.max_queued < 0:
            raise ValueError("max_queued must not be negative")
        if self.max_inflight_bytes < self.max_body_bytes:
            raise ValueError("max_inflight_bytes must hold at least one body of max_body_bytes")

    def share(self, total: int) -> int:
        """One peer's fair share of `total` (at least 1)."""
        return max(1, int(total * self.peer_share))
