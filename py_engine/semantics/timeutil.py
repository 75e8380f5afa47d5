"""RFC 3339 timestamps as Kubernetes writes them.

Kubernetes serialises `metav1.Time` as second-precision UTC (`2024-06-01T12:00:00Z`)
and `metav1.MicroTime` with microseconds; both are parsed here. Naive datetimes are
never produced: every value is timezone-aware UTC so comparisons cannot mix kinds.
"""

from __future__ import annotations

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


def parse_time_or_none(value: object) -> datetime | None:
    """`parse_time` for fields read from objects others wrote: None when the value is missing,
    not a string or not RFC 3339 (a condition without a time is treated as having none)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except TimestampError:
        return None


def format_time(moment: datetime) -> str:
    """Format as Kubernetes `metav1.Time`: whole seconds, UTC, `Z` suffix.

    Built field by field rather than with `strftime`, which cost about a twentieth of a
    reservation (every admission records its second in `creatingPods`); nothing is cached."""
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"


def format_micro_time(moment: datetime) -> str:
    """Format as Kubernetes `metav1.MicroTime` (events, leases): microseconds, `Z` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
