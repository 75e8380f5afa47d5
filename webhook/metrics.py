"""The webhook's metrics: request latency, requests and decisions, Rego
evaluation time and the committer's writes, conflicts, retries, applies and batch sizes.

Names follow controller-runtime's webhook metrics with a `spreadgate_` prefix
(docs/conventions.md §2.9); each webhook instance owns its registry
(`py_engine.metrics.MetricSet`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from py_engine.metrics import LATENCY_BUCKETS, MetricSet

BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
EVAL_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1)

COMMITTER_COUNTERS = (
    ("spreadgate_status_writes_total", "writes", "WorkloadSpread status writes."),
    (
        "spreadgate_status_update_conflicts_total",
        "conflicts",
        "409 Conflicts on WorkloadSpread status writes (re-read and retried).",
    ),
    ("spreadgate_commit_timeouts_total", "timeouts", "Reservations not committed before their deadline."),
    (
        "spreadgate_commit_errors_total",
        "errors",
        "Failed WorkloadSpread reads or writes other than conflicts.",
    ),
    (
        "spreadgate_status_write_retries_total",
        "retries",
        "WorkloadSpread status write attempts after a batch's first (after a 409 or a 429).",
    ),
    (
        "spreadgate_status_conflict_refreshes_total",
        "refreshed",
        "Retries after a 409 that took the newer WorkloadSpread from the watch cache (no GET).",
    ),
    (
        "spreadgate_status_reads_total",
        "reads",
        "WorkloadSpreads read from the API server by the committer (no usable cached copy).",
    ),
    (
        "spreadgate_commit_backoffs_total",
        "backoffs",
        "Pauses before a retry (a 429, or a 409 that no newer WorkloadSpread explains).",
    ),
    (
        "spreadgate_commit_stale_skips_total",
        "stale_skips",
        "Batches applied again instead of sent: the watch cache showed a newer WorkloadSpread.",
    ),
    (
        "spreadgate_commit_overtaken_total",
        "overtaken",
        "Status writes given up while on the wire: another writer's WorkloadSpread in the watch "
        "cache could only make them a 409, so the batch went again at once.",
    ),
    (
        "spreadgate_commit_committed_total",
        "committed",
        "Reservations committed (their WorkloadSpread status written, or nothing to write).",
    ),
    (
        "spreadgate_commit_applies_total",
        "applied",
        "Reservations applied to a WorkloadSpread, each re-application after a conflict counted.",
    ),
)
"""The committer's counters exposed as counters: name, key in `CommitterStats.snapshot`, help."""


class WebhookMetrics(MetricSet):
    """Every metric the webhook exposes on `/metrics`."""

    def __init__(self) -> None:
        super().__init__()
        self.latency = self.histogram(
            "spreadgate_webhook_latency_seconds",
            "Time to answer an admission request, by webhook path.",
            LATENCY_BUCKETS,
            ("webhook",),
        )
        self.requests = self.counter(
            "spreadgate_webhook_requests_total",
            "Admission HTTP requests by webhook and code.",
            ("webhook", "code"),
        )
        self.decisions = self.counter(
            "spreadgate_webhook_decisions_total",
            "Admission decisions by webhook and outcome.",
            ("webhook", "outcome"),
        )
        self.policy_eval = self.histogram(
            "spreadgate_policy_eval_seconds", "Rego evaluation time by rule.", EVAL_BUCKETS, ("rule",)
        )
        self.committer: Callable[[], Mapping[str, Any]] | None = None
        """Reads the committer's counters (`CommitterStats.snapshot`) at scrape time; until it
        is set (an app without a committer) they read 0."""
        for name, key, help_text in COMMITTER_COUNTERS:
            self.add_counter_reading(name, help_text, self._committer_count(key))
        self.add_histogram_reading(
            "spreadgate_commit_batch_size",
            "Reservations carried by one WorkloadSpread status write.",
            BATCH_BUCKETS,
            self._batch_sizes,
        )

    def _committer_stats(self) -> Mapping[str, Any]:
        return self.committer() if self.committer is not None else {}

    def _committer_count(self, key: str) -> Callable[[], float]:
        return lambda: float(self._committer_stats().get(key, 0))

    def _batch_sizes(self) -> dict[float, int]:
        sizes = self._committer_stats().get("batch_sizes") or {}
        return {float(size): int(count) for size, count in sizes.items()}
