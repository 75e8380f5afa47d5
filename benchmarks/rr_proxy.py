"""A round-robin TCP proxy on loopback, in its own process: `python -m benchmarks.rr_proxy`.

What a Kubernetes Service does to the API server's webhook calls, reduced to the part the
replica benchmark needs: every new connection goes to the next backend in turn (kube-proxy
picks a backend per connection, not per request), and bytes are copied both ways untouched,
so TLS stays end to end between the client and the webhook replica (every replica serves the
same certificate, as behind a Service). A backend that refuses the connection (a killed
replica) is skipped for the next one, as endpoints drop a replica that stopped being ready.

Protocol: one JSON line on stdin `{"backends": [[host, port], ...]}`; it answers
`{"port": N}` once it listens on 127.0.0.1:N. Then per stdin line: `stats` -> a JSON line
with the connections sent to each backend and the refused attempts; EOF -> exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any

CHUNK = 65536
MAX_CONNECTIONS = 1024


class Proxy:
    def __init__(self, backends: list[tuple[str, int]]) -> None:
        self.backends = backends
        self.next = 0
        self.sent = [0] * len(backends)
        self.refused = 0
        self.open = 0

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        for _ in range(len(self.backends)):
            index = self.next % len(self.backends)
            self.next += 1
            host, port = self.backends[index]
            try:
                pair = await asyncio.wait_for(asyncio.open_connection(host, port), 5)
            except (OSError, TimeoutError):
                self.refused += 1
                continue
            self.sent[index] += 1
            return pair
        return None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open >= MAX_CONNECTIONS:
            writer.close()
            return
        self.open += 1
        try:
            upstream = await self._connect()
            if upstream is None:
                return
            up_reader, up_writer = upstream
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            self.open -= 1
            writer.close()

    def stats(self) -> dict[str, Any]:
        return {"sent": list(self.sent), "refused": self.refused, "open": self.open}


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy until EOF or an error on either side, then close the sink (both ways end)."""
    try:
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            sink.close()


async def serve() -> int:
    config = json.loads(sys.stdin.readline())
    proxy = Proxy([(str(h), int(p)) for h, p in config["backends"]])
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"port": port}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line or line.strip() == "quit":
            break
        if line.strip() == "stats":
            print(json.dumps(proxy.stats()), flush=True)
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(serve()))
