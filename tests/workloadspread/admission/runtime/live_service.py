"""The admission service as `spreadgate webhook` wires it, on watch caches of the embedded API
server (no HTTP layer): one way for the runtime tests to build it."""

from __future__ import annotations

from typing import Any

from polling import wait_until
from webhook_testkit import SPREADS

from py_engine.apiclient import KubeClient
from py_engine.policy import PolicyEngine
from py_engine.semantics.clock import RealClock
from py_engine.workloadspread.admission.runtime.committer import Committer, KubeStatusStore
from py_engine.workloadspread.admission.runtime.service_view import LiveAdmissionView
from py_engine.workloadspread.admission.service import AdmissionService, ServiceConfig


def start_live_service(
    client: KubeClient,
    engine: PolicyEngine,
    *,
    spread: tuple[str, str] | None = ("default", "ws"),
    view_options: dict[str, Any] | None = None,
    **config: Any,
) -> tuple[AdmissionService, LiveAdmissionView]:
    """A started view (ready, and holding `spread` = (namespace, name) when given) and the
    service over it; the caller stops the view. `config`: `ServiceConfig` fields."""
    clock = RealClock()
    options = {"node_simulation": False, **(view_options or {})}
    view = LiveAdmissionView(client, clock, watch_timeout_seconds=30, **options).start()
    try:
        assert view.wait_ready(10)
        if spread is not None:
            wait_until(lambda: view.spreads.get(*spread) is not None, 5, "spread cached")
    except BaseException:
        view.stop()
        raise
    committer = Committer(KubeStatusStore(client, SPREADS, view.spreads), clock)
    service = AdmissionService(view, committer, clock, engine=engine, config=ServiceConfig(**config))
    return service, view
