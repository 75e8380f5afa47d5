"""Isolated backend: regorus in child processes, each evaluation under a deadline.

Why a process and not a thread: regorus keeps Python's global interpreter lock for the
whole of an evaluation (measured: a thread ticking every millisecond ticked once during a
3.4 s evaluation), and offers no execution limit to stop one. An evaluation in the webhook's
own process therefore stalls every thread, `/healthz` included, for as long as it runs,
and nothing can cut it short. In a child process it holds only the child's lock: the
webhook thread that waits for the answer blocks in `poll`, which releases the parent's lock,
and other requests are served meanwhile; when the deadline passes, the child is killed
(the only way to stop regorus) and replaced, and the evaluation fails with
`PolicyDeadlineExceeded`.

What it bounds: the WorkloadSpread and UnitedDeployment validation policies are linear in
the size of the object, and the CRDs and policies bound the number of subsets
(`MAX_SUBSETS`), but a 3 MiB object (the API server's limit) of tolerations or node
selector terms still validates for seconds (4.6 s measured for 80,000 tolerations). The
webhook evaluates those two reviews here
(docs/operations.md, "Validation cost: the subset bound and the evaluation deadline"); the per-pod
decisions stay in-process (`EmbeddedEngine`), where a few microseconds must not pay
for a round trip to another process.

A worker costs one Python process with the policies loaded (36 MB resident, measured) and a
start of under a second (0.7 s measured on a loaded machine); `workers` of them serve at once,
and a request waiting for a free one counts that wait against its deadline. Workers start on
first use, or all at once with `start()` (the webhook's command does, so the first reviews do
not wait); a start is not counted against the deadline (it has its own bound,
`START_TIMEOUT_SECONDS`), and a worker stopped at its deadline is replaced at once.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

from py_engine.policy.interface import PolicyError
from py_engine.policy.sources import PolicySource

UNDEFINED_JSON = '"<undefined>"'
DEFAULT_DEADLINE_SECONDS = 3.0
"""Below the webhook configurations' timeoutSeconds (5), leaving time to answer."""
DEFAULT_WORKERS = 2
START_TIMEOUT_SECONDS = 30.0
"""How long a worker may take to start (import regorus, load the policies): not part of the deadline."""


class PolicyDeadlineExceeded(PolicyError):
    """An evaluation did not finish within its deadline (the evaluating process was stopped)."""


def _serve(conn: Connection) -> None:
    """A worker's loop: read the sources, build one engine, say "ready", then answer each
    [rule, input JSON] with ["ok", result JSON] or ["error", message] until the parent
    closes its end. Messages are JSON texts, length-prefixed by `Connection`."""
    from py_engine.policy.embedded import build_regorus_engine, error_summary

    try:
        sources = tuple(PolicySource(path, text) for path, text in json.loads(conn.recv_bytes()))
        engine = build_regorus_engine(sources)
    except (PolicyError, EOFError, OSError, ValueError) as exc:
        _reply(conn, "error", str(exc))
        return
    _reply(conn, "ready", "")
    while True:
        try:
            rule, input_json = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        try:
            engine.set_input_json(input_json)
            _reply(conn, "ok", engine.eval_rule_as_json(rule))
        except RuntimeError as exc:
            _reply(conn, "error", f"evaluating {rule}: {error_summary(str(exc))}")


def _reply(conn: Connection, status: str, payload: str) -> None:
    with contextlib.suppress(OSError):  # the parent went away; the next receive ends the loop
        conn.send_bytes(json.dumps([status, payload]).encode())


class _Worker:
    """One child process (a fresh interpreter running `_serve`) and the parent's end of its socket.

    A subprocess, not multiprocessing's spawn: spawn re-imports the parent's main module in
    the child, which fails for any embedder whose main module is not import-safe."""

    def __init__(self, sources: tuple[PolicySource, ...]) -> None:
        parent_end, child_end = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(child_end.fileno())],
                pass_fds=(child_end.fileno(),),
                stdin=subprocess.DEVNULL,
                close_fds=True,
            )
        finally:
            child_end.close()
        self.conn = Connection(parent_end.detach())
        self.conn.send_bytes(json.dumps([[s.path, s.text] for s in sources]).encode())
        self.ready = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, rule: str, input_json: str) -> None:
        try:
            self.conn.send_bytes(json.dumps([rule, input_json]).encode())
        except OSError as exc:
            raise PolicyError(f"the policy worker exited (code {self.process.poll()})") from exc

    def receive(self, until: float) -> tuple[str, str]:
        """The next message, or raises PolicyDeadlineExceeded at `until` (monotonic)."""
        if not self.conn.poll(max(0.0, until - time.monotonic())):
            raise PolicyDeadlineExceeded("timed out")
        try:
            status, payload = json.loads(self.conn.recv_bytes())
        except (EOFError, OSError) as exc:
            raise PolicyError(f"the policy worker exited (code {self.process.poll()})") from exc
        return str(status), str(payload)

    def stop(self) -> None:
        self.conn.close()
        if self.alive():
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # not reaped yet; the kill stands
            self.process.wait(timeout=5)


class IsolatedEngine:
    """`PolicyEngine` evaluating in `workers` child processes, each call under `deadline_seconds`."""

    def __init__(
        self,
        sources: tuple[PolicySource, ...],
        *,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        if deadline_seconds <= 0 or workers < 1:
            raise ValueError("an isolated engine needs a positive deadline and at least one worker")
        self._sources = sources
        self.deadline_seconds = deadline_seconds
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(workers):
            self._idle.put(None)  # a slot whose worker starts on first use
        self._closed = False

    def start(self) -> IsolatedEngine:
        """Start every worker now (in the background: this returns at once), so the first
        evaluations do not pay the start."""
        slots = [self._idle.get_nowait() for _ in range(self._idle.qsize())]
        for slot in slots:
            self._idle.put(slot if slot is not None else _Worker(self._sources))
        return self

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        started = time.monotonic()
        try:
            slot = self._idle.get(timeout=self.deadline_seconds)
        except queue.Empty:
            raise PolicyDeadlineExceeded(
                f"policy evaluation deadline of {self.deadline_seconds:g} s passed while every policy "
                "worker was busy"
            ) from None
        worker = slot if slot is not None and slot.alive() else _Worker(self._sources)
        try:
            starting = self._await_start(worker)
            until = started + starting + self.deadline_seconds
            worker.send(rule, json.dumps(dict(input_document)))
            status, payload = worker.receive(until)
        except PolicyDeadlineExceeded:
            worker.stop()
            worker = _Worker(self._sources)  # its replacement starts now, not on the next request
            raise PolicyDeadlineExceeded(
                f"policy evaluation of {rule} did not finish within its deadline of "
                f"{self.deadline_seconds:g} s "
                "(the object is too costly to validate; it was stopped)"
            ) from None
        except PolicyError:
            worker.stop()
            worker = _Worker(self._sources)
            raise
        finally:
            if self._closed:
                worker.stop()
                self._idle.put(None)
            else:
                self._idle.put(worker)
        if status != "ok":
            raise PolicyError(payload)
        return None if payload == UNDEFINED_JSON else json.loads(payload)

    @staticmethod
    def _await_start(worker: _Worker) -> float:
        """Seconds spent waiting for `worker` to load the policies (0 when it already has). A start
        is not an evaluation, so it does not count against the deadline; it has its own bound."""
        if worker.ready:
            return 0.0
        begun = time.monotonic()
        try:
            status, payload = worker.receive(begun + START_TIMEOUT_SECONDS)
        except PolicyDeadlineExceeded:
            raise PolicyError(f"the policy worker did not start within {START_TIMEOUT_SECONDS:g} s") from None
        if status != "ready":
            raise PolicyError(f"the policy worker could not start: {payload}")
        worker.ready = True
        return time.monotonic() - begun

    def worker_pids(self) -> list[int]:
        """The process ids of the idle workers (the benchmark reads their CPU time)."""
        slots = [self._idle.get_nowait() for _ in range(self._idle.qsize())]
        for slot in slots:
            self._idle.put(slot)
        return [slot.process.pid for slot in slots if slot is not None]

    def health(self, timeout: float = 1.0) -> str | None:
        """None: the policies loaded when the workers' sources were read (a worker that cannot
        build its engine fails its first evaluation with the reason)."""
        return "the isolated policy engine is closed" if self._closed else None

    def close(self) -> None:
        """Stop every idle worker; one busy now is stopped when its evaluation returns."""
        self._closed = True
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            if worker is not None:
                worker.stop()


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])))
