"""Shared helpers for benchmarks: machine description, timing, table printing."""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import urllib3


def machine_description() -> str:
    """One line naming the machine, so published figures say where they came from."""
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()} ({platform.python_implementation()})"
    )


def time_per_call(func: Callable[[], object], *, repeat: int, rounds: int = 5) -> float:
    """Median over `rounds` of the mean seconds per call of `func` over `repeat` calls."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            func()
        samples.append((time.perf_counter() - start) / repeat)
    return statistics.median(samples)


def best_of(rounds: int, func: Callable[[], float]) -> float:
    """The smallest of `rounds` timings `func` returns, each after a garbage collection (the
    least disturbed run, as `timeit` reports)."""
    samples = []
    for _ in range(rounds):
        gc.collect()
        samples.append(func())
    return min(samples)


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain aligned text table."""
    cells = [list(map(str, header))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


@dataclass(frozen=True)
class Target:
    """One figure against its target: `met` None when this run's sizes do not apply (quick)."""

    figure: str
    measured: str
    target: str
    met: bool | None

    @property
    def verdict(self) -> str:
        return "n/a at quick sizes" if self.met is None else "met" if self.met else "NOT met"


def loopback_pool(port: int, ca_pem: str, timeout: float = 60.0) -> urllib3.HTTPSConnectionPool:
    """One verified, keep-alive TLS connection to a server on 127.0.0.1:`port`, no retries,
    each request bounded by `timeout` seconds."""
    return urllib3.HTTPSConnectionPool(
        "127.0.0.1",
        port,
        maxsize=1,
        cert_reqs="CERT_REQUIRED",
        ca_cert_data=ca_pem,
        retries=False,
        timeout=urllib3.Timeout(total=timeout),
    )


def resident_bytes(pid: int | str = "self") -> int:
    """The resident set size (VmRSS) of process `pid` now, 0 where /proc is absent or it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def close_stdin_process(proc: subprocess.Popen[Any], wait: float) -> None:
    """Stops a child that runs until its stdin closes: closes stdin, waits up to `wait` seconds,
    kills it if it is still there, and closes its stdout."""
    if proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):  # it exited with input unread
            proc.stdin.close()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()
