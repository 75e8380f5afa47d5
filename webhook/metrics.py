"""The webhook's metrics: request latency, requests and decisions, Rego
evaluation time and the committer's writes, conflicts and batch sizes.

Names follow controller-runtime's webhook metrics with a `spreadgate_` prefix
(docs/conventions.md §2.9); the primitives are in `py_engine.metrics`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from py_engine.metrics import Counter, Gauge, Histogram, format_number

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
EVAL_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1)


class WebhookMetrics:
    """Every metric the webhook exposes on `/metrics`."""

    def __init__(self) -> None:
        self.latency = Histogram("spreadgate_webhook_latency_seconds",
                                 "Time to answer an admission request, by webhook path.", LATENCY_BUCKETS)
        self.requests = Counter("spreadgate_webhook_requests_total", "Admission HTTP requests by webhook and code.")
        self.decisions = Counter("spreadgate_webhook_decisions_total", "Admission decisions by webhook and outcome.")
        self.committer: Callable[[], Mapping[str, Any]] | None = None
        """Reads the committer's counters (`CommitterStats.snapshot`) at scrape time."""
        self.policy_eval = Histogram("spreadgate_policy_eval_seconds", "Rego evaluation time by rule.", EVAL_BUCKETS)
        self.extra: list[Gauge] = []

    def render(self) -> str:
        lines: list[str] = []
        metrics: list[Counter | Histogram | Gauge] = [self.latency, self.requests, self.decisions,
                                                       self.policy_eval, *self.extra]
        for metric in metrics:
            lines.extend(metric.render())
        if self.committer is not None:
            lines.extend(render_committer(self.committer()))
        return "\n".join(lines) + "\n"


def render_committer(stats: Mapping[str, Any]) -> list[str]:
    """Status writes, conflicts, timeouts and the batch-size histogram from committer counters."""
    batches = Histogram("spreadgate_commit_batch_size",
                        "Reservations carried by one WorkloadSpread status write.", BATCH_BUCKETS)
    for size, count in sorted((stats.get("batch_sizes") or {}).items()):
        batches.observe(float(size), times=int(count))
    lines: list[str] = []
    for name, key, text in (
        ("spreadgate_status_writes_total", "writes", "WorkloadSpread status writes."),
        ("spreadgate_status_update_conflicts_total", "conflicts",
         "409 Conflicts on WorkloadSpread status writes (re-read and retried)."),
        ("spreadgate_commit_timeouts_total", "timeouts", "Reservations not committed before their deadline."),
        ("spreadgate_commit_errors_total", "errors", "Failed WorkloadSpread reads or writes other than conflicts."),
    ):
        lines += [f"# HELP {name} {text}", f"# TYPE {name} counter", f"{name} {format_number(float(stats.get(key, 0)))}"]
    return lines + batches.render()
