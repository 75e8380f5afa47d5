"""A webhook front end to attack, in its own process: `python tests/attack_target.py CONFIG_JSON`.

Serves the real Flask app (`webhook.app.create_app`) over stub admission and validation services on
127.0.0.1, through either server the attack tests compare (docs/operations.md, "The server
itself"): `spreadgate` (the webhook's own front end, `webhook.server.TLSServer`, with the
`ServerLimits` fields given in the config) or `hypercorn` (the maintained ASGI/WSGI server,
when installed). Prints one JSON line `{"port": N}` once it listens and serves until its
standard input closes, so the parent can read its RSS from /proc.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from py_engine.validation.verdict import Verdict
from py_engine.workloadspread.admission.service import Decision
from webhook.app import create_app
from webhook.limits import ServerLimits
from webhook.metrics import WebhookMetrics


class StubService:
    """Allows every review at once: the front end is under test, not the decisions."""

    class _View:
        def ready(self) -> bool:
            return True

    def __init__(self) -> None:
        self.view = self._View()

    def mutate_pod(self, request: Any) -> Decision:
        return Decision(True, "allowed")

    def validate_pod(self, request: Any) -> Decision:
        return Decision(True, "allowed")

    def mutate_pod_async(self, request: Any, answer: Any) -> None:
        answer(lambda: self.mutate_pod(request))

    def validate_pod_async(self, request: Any, answer: Any) -> None:
        answer(lambda: self.validate_pod(request))


class AllowingValidation:
    """Allows every WorkloadSpread and UnitedDeployment review at once."""

    def review_workloadspread(self, request: Any) -> Verdict:
        return Verdict(True, "allowed")

    def review_uniteddeployment(self, request: Any) -> Verdict:
        return Verdict(True, "allowed")


def serve_spreadgate(app: Any, config: dict[str, Any]) -> None:
    from webhook.server import TLSServer

    server = TLSServer(
        app,
        cert_file=config["cert"],
        key_file=config["key"],
        host="127.0.0.1",
        port=0,
        threads=int(config.get("threads", 32)),
        limits=ServerLimits(**config.get("limits", {})),
    )
    server.start()
    print(json.dumps({"port": server.port}), flush=True)
    sys.stdin.read()
    server.stop()


def serve_hypercorn(app: Any, config: dict[str, Any]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's benchmarks/
    from benchmarks.hypercorn_serve import serve_in_thread

    port, stop = serve_in_thread(
        app,
        cert=config["cert"],
        key=config["key"],
        threads=int(config.get("threads", 32)),
        limits=ServerLimits(**config.get("limits", {})),
    )
    print(json.dumps({"port": port}), flush=True)
    sys.stdin.read()
    stop()


def main() -> int:
    config = json.loads(sys.argv[1])
    app = create_app(StubService(), AllowingValidation(), metrics=WebhookMetrics())  # type: ignore[arg-type]
    if config.get("server", "spreadgate") == "hypercorn":
        serve_hypercorn(app, config)
    else:
        serve_spreadgate(app, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
