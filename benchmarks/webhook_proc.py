"""A benchmark webhook in its own process: `python -m benchmarks.webhook_proc`.

The real wiring (`webhook.runtime.Webhook`: asyncio TLS front end, Flask, watch caches,
group committer, embedded Rego) plus a `/noop` route that parses the
AdmissionReview and allows it without a decision: the baseline served by the
same server, threads and TLS. Running it apart from the load generator and
the API server keeps their work off this interpreter's GIL, so latency is the
webhook's own.

Protocol: one JSON line on stdin configures it (kubeconfig, cert, key, batching, threads,
commit_timeout, port (default 0: any free one), reuse_port (listen with SO_REUSEPORT, so that
several of these share one port), node_simulation (default off), sync_timeout (seconds for the
first sync, default 30), api_timeout (the client's, default 10 s as shipped), server:
"spreadgate" or "hypercorn", the latter serving the same app through
`benchmarks.hypercorn_serve` to compare the servers' CPU); it answers one JSON line
`{"url": ...}` once its caches are synced. Then, per stdin line: `stats` -> a JSON line with
the process CPU seconds, the CPU seconds spent inside Rego evaluation (thread
CPU time around every `evaluate`), the number of evaluations and the
committer's counters, the resident set size (`rss`, bytes), the view's direct GETs, the CPU
seconds of the live threads by name (`thread_cpu`), the requests answered and the open connections;
`nocache` -> drop the eligibility decision cache (every
admission then evaluates Rego); EOF or `quit` -> stop and exit.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from benchmarks.common import resident_bytes
from py_engine.policy import PolicyEngine, create_engine
from py_engine.workloadspread.admission.service import Decision
from webhook.collector import YOUNG_THRESHOLD, freeze_when_ready, tune_collector
from webhook.runtime import Webhook, WebhookOptions


def noop(request: Mapping[str, Any]) -> Decision:
    """The baseline endpoint: the review was parsed by the app; allow without deciding."""
    return Decision(True, "allowed")


class CpuTimedEngine:
    """Counts the CPU time of this thread inside every Rego evaluation (the profile's numerator).

    A thread's first evaluation also builds its interpreter (regorus engines are bound to
    their thread: py_engine/policy/embedded.py), a one-off per server thread that is not an
    admission's cost; it is counted apart (`build_cpu`, `builds`).
    """

    def __init__(self, engine: PolicyEngine) -> None:
        self.engine = engine
        self.cpu = 0.0
        self.calls = 0
        self.build_cpu = 0.0
        self.builds = 0
        self._lock = threading.Lock()
        self._built = threading.local()

    def evaluate(self, rule: str, input_document: Mapping[str, Any]) -> Any:
        first = not getattr(self._built, "done", False)
        self._built.done = True
        started = time.thread_time()
        try:
            return self.engine.evaluate(rule, input_document)
        finally:
            spent = time.thread_time() - started
            with self._lock:
                if first:
                    self.build_cpu += spent
                    self.builds += 1
                else:
                    self.cpu += spent
                    self.calls += 1

    def close(self) -> None:
        self.engine.close()


def thread_cpu() -> dict[str, float]:
    """CPU seconds of the live threads, by name without its number (`webhook-worker_12` ->
    `webhook-worker`): where a process's CPU goes. Threads that ended are not in it."""
    out: dict[str, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        try:
            spent = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except OSError:  # ended meanwhile
            continue
        name = re.sub(r"[_-]?\d+$", "", thread.name)
        out[name] = out.get(name, 0.0) + spent
    return out


def main() -> int:
    config = json.loads(sys.stdin.readline())
    tune_collector(YOUNG_THRESHOLD)  # as `spreadgate webhook` does by default
    engine = CpuTimedEngine(create_engine())
    hook = Webhook(
        WebhookOptions(
            cert_file=config["cert"],
            key_file=config["key"],
            kubeconfig=config["kubeconfig"],
            host="127.0.0.1",
            port=int(config.get("port", 0)),
            reuse_port=bool(config.get("reuse_port", False)),
            threads=int(config.get("threads", 64)),
            node_simulation=bool(config.get("node_simulation", False)),
            batching=bool(config.get("batching", True)),
            commit_timeout=float(config.get("commit_timeout", 8.0)),
            api_timeout=float(config.get("api_timeout", 10.0)),
            extra_routes={"/noop": noop},
        ),
        engine=engine,
    )
    stop_other: Callable[[], None] | None = None
    if config.get("server", "spreadgate") == "hypercorn":  # the same app behind hypercorn (measurement only)
        from benchmarks.hypercorn_serve import serve_in_thread

        hook.view.start()
        port, stop_other = serve_in_thread(
            hook.app, cert=config["cert"], key=config["key"], threads=int(config.get("threads", 64))
        )
        url = f"https://127.0.0.1:{port}"
    else:
        hook.start()
        url = hook.url
    try:
        if not hook.view.wait_ready(float(config.get("sync_timeout", 30))):
            print(json.dumps({"error": "caches did not sync"}), flush=True)
            return 1
        freeze_when_ready(hook.view.wait_ready).join()  # as `spreadgate webhook` does once synced
        print(json.dumps({"url": url}), flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "stats":
                front = hook.server.front
                with engine._lock:
                    rego_cpu, calls, build_cpu, builds = (
                        engine.cpu,
                        engine.calls,
                        engine.build_cpu,
                        engine.builds,
                    )
                print(
                    json.dumps(
                        {
                            "cpu": time.process_time(),
                            "thread_cpu": thread_cpu(),
                            "rego_cpu": rego_cpu,
                            "rego_calls": calls,
                            "rego_build_cpu": build_cpu,
                            "rego_builds": builds,
                            "committer": hook.committer.stats.snapshot(),
                            "rss": resident_bytes(),
                            "direct_gets": hook.view.direct_gets,
                            "answered": front.stats.answered if front is not None else 0,
                            "connections": len(front.connections) if front is not None else 0,
                        }
                    ),
                    flush=True,
                )
            elif command == "nocache":
                hook.service.decision_cache = None
                print(json.dumps({"ok": True}), flush=True)
            elif command == "quit":
                break
    finally:
        if stop_other is not None:
            stop_other()
        hook.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
