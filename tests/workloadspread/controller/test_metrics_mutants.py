"""The controller's own metric families as a scraper reads them from `render()`
(py_engine.workloadspread.controller.metrics): name, type, labels and help text of each.
The names, types and labels are the rows of docs/operations.md ("Metrics"), which
`tests/e2e/test_metrics_endpoints.py` checks against a running controller; the help texts
are the `# HELP` lines an operator sees. The queue depth and leadership gauges are the
loop's (`runtime/`) and not registered here. Written for what mutation testing found
unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import pytest
from metrics_kit import value
from prometheus_client.parser import text_string_to_metric_families

from py_engine.workloadspread.controller.metrics import ControllerMetrics

pytestmark = pytest.mark.timeout(30)

EXPECTED = {
    "spreadgate_controller_sync_duration_seconds": (
        "histogram",
        frozenset(),
        "Time one sync of one WorkloadSpread took.",
    ),
    "spreadgate_controller_syncs_total": (
        "counter",
        frozenset({"result"}),
        "Syncs by result (success, error, conflict).",
    ),
    "spreadgate_controller_writes_total": (
        "counter",
        frozenset({"kind"}),
        "API writes by kind (status, deletion_cost, adoption, pod_delete, event).",
    ),
    "spreadgate_controller_status_update_conflicts_total": (
        "counter",
        frozenset(),
        "Status writes refused with 409 Conflict (retried by requeue).",
    ),
}


def test_every_family_has_its_documented_name_type_labels_and_help() -> None:
    metrics = ControllerMetrics()
    metrics.sync_duration.observe(0.2)
    metrics.syncs.inc(result="success")
    metrics.writes.inc(kind="status")
    metrics.conflicts.inc()
    found = {
        (family.name + "_total" if family.type == "counter" else family.name): (
            family.type,
            frozenset(label for sample in family.samples for label in sample.labels) - {"le"},
            family.documentation,
        )
        for family in text_string_to_metric_families(metrics.render())
    }
    assert found == EXPECTED


def test_each_handle_counts_in_its_own_family() -> None:
    metrics = ControllerMetrics()
    metrics.conflicts.inc()
    metrics.conflicts.inc()
    metrics.syncs.inc(result="conflict")
    metrics.writes.inc(kind="event")
    metrics.sync_duration.observe(0.003)
    text = metrics.render()
    assert value(text, "spreadgate_controller_status_update_conflicts_total") == 2
    assert value(text, "spreadgate_controller_syncs_total", result="conflict") == 1
    assert value(text, "spreadgate_controller_writes_total", kind="event") == 1
    assert value(text, "spreadgate_controller_sync_duration_seconds_count") == 1
    assert value(text, "spreadgate_controller_sync_duration_seconds_bucket", le="0.0025") == 0
    assert value(text, "spreadgate_controller_sync_duration_seconds_bucket", le="0.005") == 1
