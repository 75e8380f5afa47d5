"""Serving a WSGI app with hypercorn, for measurements only (docs/operations.md, "The server itself").

Hypercorn is not a dependency of Spreadgate: `benchmarks.compare_servers`, the benchmark
webhook (`SPREADGATE_BENCH_SERVER=hypercorn`) and the attack target import this module only
when asked to measure it, and it imports hypercorn only when called. Its settings follow the
webhook's limits where hypercorn has one (handshake, idle and read deadlines, head and body
sizes); what it has no setting for (connection and handshake caps, in-flight bytes, fair
shares, a minimum body rate) is left at its defaults.
"""

from __future__ import annotations

import asyncio
import importlib
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from webhook.limits import ServerLimits


def serve_in_thread(
    app: Any, *, cert: str, key: str, threads: int, limits: ServerLimits | None = None
) -> tuple[int, Callable[[], None]]:
    """Start hypercorn on 127.0.0.1 (any free port) on its own thread: (port, stop)."""
    # Imported by name: hypercorn is not installed where the project's checks run (mypy included).
    serve = importlib.import_module("hypercorn.asyncio").serve
    Config = importlib.import_module("hypercorn.config").Config

    limits = limits or ServerLimits()
    sock = socket.create_server(("127.0.0.1", 0), backlog=1024)
    config = Config()
    config.certfile, config.keyfile = cert, key
    config.bind = [f"fd://{sock.fileno()}"]
    config.ssl_handshake_timeout = limits.handshake_timeout
    config.keep_alive_timeout = limits.idle_timeout
    config.read_timeout = int(limits.body_timeout)
    config.h11_max_incomplete_size = limits.max_header_bytes
    config.wsgi_max_body_size = limits.max_body_bytes
    config.backlog = 1024
    config.accesslog = None
    config.errorlog = None
    loop = asyncio.new_event_loop()
    loop.set_default_executor(ThreadPoolExecutor(threads, thread_name_prefix="hypercorn-wsgi"))
    stopping = asyncio.Event()
    started = threading.Event()

    async def main() -> None:
        started.set()
        await serve(app, config, shutdown_trigger=stopping.wait, mode="wsgi")

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True, name="hypercorn")
    thread.start()
    started.wait(10)

    def stop() -> None:
        loop.call_soon_threadsafe(stopping.set)
        thread.join(10)
        sock.close()

    return int(sock.getsockname()[1]), stop
