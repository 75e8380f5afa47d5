"""The fixed "now" of the scale-down tests, as a datetime and in Go's Unix nanoseconds, and the
plain pod the pairwise rule tests vary one field of."""

from __future__ import annotations

from datetime import UTC, datetime

from py_engine.scaledown import PodFacts
from py_engine.scaledown.timekeys import to_unix_nanos

NOW = datetime(2024, 6, 1, tzinfo=UTC)
_NOW_NS = to_unix_nanos(NOW)
assert _NOW_NS is not None
NOW_NS: int = _NOW_NS

SECOND = 1_000_000_000
HOUR = 3600 * SECOND

BASE = PodFacts(
    name="p",
    namespace="default",
    uid="u",
    node_name="n1",
    phase="Running",
    terminating=False,
    ready=True,
    ready_time=NOW_NS - 5 * HOUR,
    restarts=0,
    created=NOW_NS - 9 * HOUR,
    cost=0,
    lifecycle_state="",
    specified_delete=False,
    revision=None,
    in_place_update_ready=None,
)
"""A running, Ready pod on node n1, created 9 hours and Ready 5 hours before NOW."""
