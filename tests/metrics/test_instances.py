"""Every instance owns its registry: two webhooks (or two controllers) in one process, as in
the tests, the embedded stack and the benchmarks, count apart and never clash on a name."""

from __future__ import annotations

import prometheus_client
from attack_target import AllowingValidation, StubService
from metrics_kit import exposed_types, value

from benchmarks.kube_objects import admission_review, pod_create_request
from py_engine.metrics import CONTENT_TYPE
from py_engine.uniteddeployment.controller.runtime.metrics import UnitedMetrics
from py_engine.workloadspread.controller.metrics import ControllerMetrics
from webhook.app import create_app
from webhook.metrics import WebhookMetrics

REVIEW = admission_review(pod_create_request({"metadata": {}}, "u-1"))


def test_two_webhook_apps_in_one_process_count_apart() -> None:
    busy, idle = WebhookMetrics(), WebhookMetrics()
    busy_client = create_app(StubService(), AllowingValidation(), metrics=busy).test_client()  # type: ignore[arg-type]
    idle_client = create_app(StubService(), AllowingValidation(), metrics=idle).test_client()  # type: ignore[arg-type]
    for _ in range(3):
        assert busy_client.post("/mutate/pods", json=REVIEW).status_code == 200
    busy_page, idle_page = busy_client.get("/metrics"), idle_client.get("/metrics")
    assert busy_page.content_type == idle_page.content_type == CONTENT_TYPE
    busy_text, idle_text = busy_page.get_data(as_text=True), idle_page.get_data(as_text=True)
    assert value(busy_text, "spreadgate_webhook_requests_total", webhook="/mutate/pods", code="200") == 3
    assert (
        value(busy_text, "spreadgate_webhook_decisions_total", webhook="/mutate/pods", outcome="allowed") == 3
    )
    assert value(busy_text, "spreadgate_webhook_latency_seconds_count", webhook="/mutate/pods") == 3
    assert value(idle_text, "spreadgate_webhook_requests_total", webhook="/mutate/pods", code="200") is None
    assert value(idle_text, "spreadgate_webhook_latency_seconds_count", webhook="/mutate/pods") is None
    assert exposed_types(busy_text) == exposed_types(idle_text)  # same families, each on its own registry


def test_two_controllers_of_each_kind_in_one_process_count_apart() -> None:
    spreads = [ControllerMetrics(), ControllerMetrics()]
    uniteds = [UnitedMetrics(), UnitedMetrics()]
    spreads[0].writes.inc(kind="status")
    uniteds[1].syncs.inc(result="success")
    assert value(spreads[0].render(), "spreadgate_controller_writes_total", kind="status") == 1
    assert value(spreads[1].render(), "spreadgate_controller_writes_total", kind="status") is None
    assert value(uniteds[1].render(), "spreadgate_united_syncs_total", result="success") == 1
    assert value(uniteds[0].render(), "spreadgate_united_syncs_total", result="success") is None
    for metrics in (*spreads, *uniteds):  # the loop's gauge on each instance: no "duplicated timeseries"
        metrics.add_gauge("x_queue_depth", "Depth.", lambda: 0.0)
    default = {family.name for family in prometheus_client.REGISTRY.collect()}
    assert not {name for name in default if name.startswith(("spreadgate_", "leader_election", "x_"))}
