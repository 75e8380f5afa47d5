"""RFC 3339 timestamps as Kubernetes writes them.

Kubernetes serialises `metav1.Time` as second-precision UTC (`2024-06-01T12:00:00Z`)
and `metav1.MicroTime` with microseconds; both are parsed here. Naive datetimes are
never produced: every value is timezone-aware UTC so comparisons cannot mix kinds.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime


class TimestampError(ValueError):
    """A timestamp string that is not RFC 3339."""


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (with `Z` or an offset) into an aware UTC datetime."""
    if not isinstance(value, str) or not value:
        raise TimestampError(f"timestamp must be a non-empty RFC 3339 string, got {value!r}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise TimestampError(f"not an RFC 3339 timestamp: {value!r}") from exc
    if parsed.tzinfo is None:
        raise TimestampError(f"timestamp has no time zone: {value!r}")
    return parsed.astimezone(UTC)


_last_second: tuple[int, str] = (0, "1970-01-01T00:00:00Z")
"""The last second `format_time` formatted, and its text (one tuple: read and replaced whole)."""


def format_time(moment: datetime) -> str:
    """Format as Kubernetes `metav1.Time`: whole seconds, UTC, `Z` suffix.

    Every admission in a burst records the same second (`creatingPods`), and `strftime` cost
    about a twentieth of a reservation: the text of the last second formatted is reused."""
    global _last_second
    second = math.floor(moment.timestamp())
    last = _last_second
    if last[0] == second:
        return last[1]
    text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_second = (second, text)
    return text


def format_micro_time(moment: datetime) -> str:
    """Format as Kubernetes `metav1.MicroTime` (events, leases): microseconds, `Z` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
