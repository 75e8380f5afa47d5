"""`spreadgate cluster ...` as a subprocess: started, read until it says it is up, stopped with
SIGINT (exit code 0 asserted), killed if it is still there after a failure."""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def cluster_process(
    args: list[str], up: Callable[[list[str]], bool], *, timeout: float, stop_timeout: float
) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """Runs `spreadgate cluster <args>` and yields it with the output lines read so far once
    `up(lines)` holds (within `timeout` seconds; an exit before that fails the test)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "py_engine.cli", "cluster", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        while not up(seen):
            assert time.monotonic() < deadline, (
                f"spreadgate cluster did not come up within {timeout} s: {seen}"
            )
            try:
                seen.append(lines.get(timeout=0.2))
            except queue.Empty:
                assert proc.poll() is None, f"spreadgate cluster exited early: {seen}"
        yield proc, seen
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=stop_timeout) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        stdout.close()
        reader.join(timeout=5)
