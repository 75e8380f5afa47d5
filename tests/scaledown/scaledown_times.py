"""The fixed "now" of the scale-down tests, as a datetime and in Go's Unix nanoseconds."""

from __future__ import annotations

from datetime import UTC, datetime

from py_engine.scaledown.timekeys import to_unix_nanos

NOW = datetime(2024, 6, 1, tzinfo=UTC)
_NOW_NS = to_unix_nanos(NOW)
assert _NOW_NS is not None
NOW_NS: int = _NOW_NS
