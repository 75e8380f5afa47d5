"""The metrics a deployment exposes are the ones docs/operations.md ("Metrics") lists: the
webhook of the embedded stack and a `spreadgate controller --metrics-port` process, scraped
while they work, expose exactly the documented names, with the documented types and labels."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from metrics_kit import exposed_types, label_names, value
from polling import wait_until
from united_kit import UDS, controller_process, pools, term, united

from py_engine.assembled_stack import Stack
from py_engine.metrics import CONTENT_TYPE

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
SUBSETS: list[dict[str, Any]] = [
    {"name": "a", "maxReplicas": 1, "nodeSelectorTerm": term("a")},
    {"name": "b", "nodeSelectorTerm": term("b")},
]
CONTROLLER_PREFIXES = ("spreadgate_controller_", "spreadgate_united_", "leader_election_")


def documented() -> dict[str, tuple[str, frozenset[str]]]:
    """Name -> (type, label names) from the table under "## Metrics"."""
    section = OPERATIONS.read_text(encoding="utf-8").split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, tuple[str, frozenset[str]]] = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            name, kind, labels = (cell.strip() for cell in line.strip("|").split("|")[:3])
            table[name.strip("`")] = (
                kind.split()[0],
                frozenset(filter(None, (x.strip() for x in labels.split(",")))),
            )
    return table


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def scrape(url: str) -> tuple[str, str]:
    """Content type and body of one GET (urllib raises on anything but 2xx)."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.headers["Content-Type"], answer.read().decode()


def test_the_exposed_metrics_are_the_documented_ones(tmp_path: Path) -> None:
    table = documented()
    assert len(table) > 20, "the Metrics table of docs/operations.md was not found"
    port = free_port()
    with Stack(pools("a", "b"), virtual=False, with_controller=False, workdir=tmp_path) as stack:
        stack.create(UDS, united("web", 3, SUBSETS))
        log = tmp_path / "controller.log"
        metrics_flags = ["--metrics-port", str(port), "--metrics-host", "127.0.0.1"]
        with controller_process(stack, log, *metrics_flags) as proc:
            try:
                url = f"http://127.0.0.1:{port}/metrics"

                def synced() -> bool:
                    try:
                        body = scrape(url)[1]
                    except OSError:
                        return False  # not listening yet
                    return (value(body, "spreadgate_united_syncs_total", result="success") or 0) >= 1

                try:
                    wait_until(synced, 60, "a successful UnitedDeployment sync on the controller's /metrics")
                except TimeoutError:
                    raise AssertionError(log.read_text(encoding="utf-8")) from None
                content_type, controller_text = scrape(url)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        assert stack.hook is not None
        hook_client = stack.hook.app.test_client()
        wait_until(
            lambda: (
                (
                    value(
                        hook_client.get("/metrics").get_data(as_text=True),
                        "spreadgate_webhook_requests_total",
                        webhook="/mutate/pods",
                        code="200",
                    )
                    or 0
                )
                >= 1
            ),
            60,
            "the webhook to admit a pod",
        )
        page = hook_client.get("/metrics")
        webhook_text = page.get_data(as_text=True)
    assert content_type == page.content_type == CONTENT_TYPE
    controller, hook = exposed_types(controller_text), exposed_types(webhook_text)
    assert all(name.startswith(CONTROLLER_PREFIXES) for name in controller), sorted(controller)
    assert not any(name.startswith(CONTROLLER_PREFIXES) for name in hook), sorted(hook)
    assert {**controller, **hook} == {name: kind for name, (kind, _) in table.items()}
    labelled = set()
    for name, label_sets in {**label_names(controller_text), **label_names(webhook_text)}.items():
        assert label_sets <= {table[name][1]}, (name, label_sets, table[name])
        labelled |= {name for labels in label_sets if labels}
    # the labelled families were seen with their labels, not only by name
    assert {
        "spreadgate_united_syncs_total",
        "spreadgate_united_writes_total",
        "spreadgate_webhook_requests_total",
        "spreadgate_webhook_decisions_total",
        "spreadgate_webhook_latency_seconds",
    } <= labelled
