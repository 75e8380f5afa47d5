"""Timestamps as the workload controllers compare them.

Go compares `metav1.Time` values at nanosecond resolution and has a distinct
*zero* time (`0001-01-01T00:00:00Z`, also what a JSON `null` decodes to) that the
controllers treat specially. Here a timestamp is an `int` of nanoseconds since
the Unix epoch and the zero time is `None`; both sort rules that involve time
are expressed on those two shapes.

Two comparisons exist upstream:

* `afterOrZero(t1, t2)`: a zero time sorts before any real time, otherwise the
  later time sorts first ("newest is deleted first").
* `LogarithmicScaleDown`: times are replaced by `floor(log2(now - t))` buckets
  (age in integer nanoseconds), so pods of similar age count as equally old.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from py_engine.semantics.timeutil import TimestampError, parse_time

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_GO_ZERO = datetime(1, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_SECOND = timedelta(seconds=1)

# Go's math.Log2 multiplies ln(frac) by the float64 nearest to 1/ln(2).
_INV_LN2 = 1.4426950408889634

# Offset that turns "later first, zero time before everything" into an ascending
# integer: zero time -> 0, a real time t -> NEWEST_FIRST - t (always >= 1 for
# any datetime Python can represent, whose ns value stays far below 2**70).
NEWEST_FIRST = 2**70


def to_unix_nanos(moment: datetime) -> int | None:
    """Nanoseconds since the Unix epoch, or None for Go's zero time."""
    moment = moment.astimezone(UTC)
    if moment == _GO_ZERO:
        return None
    return ((moment - _EPOCH) // _MICROSECOND) * 1000


class TimeReader:
    """Parses API timestamps (`str` or JSON `null`) into nanoseconds, caching by string.

    Pods created by one ReplicaSet share many second-resolution timestamps, and a
    100,000-pod ranking parses up to 200,000 of them, so each distinct string is
    parsed once, and the canonical `YYYY-MM-DDTHH:MM:SSZ` form the API server
    writes takes a short path through `datetime.fromisoformat` (the parser
    `py_engine.semantics.timeutil.parse_time` uses too, so both accept the same
    strings). One reader belongs to one ranking call; nothing is global.
    """

    __slots__ = ("cache",)

    def __init__(self) -> None:
        self.cache: dict[str, int | None] = {}

    def __call__(self, value: object) -> int | None:
        """Parse one timestamp; raises TimestampError for anything but null or RFC 3339."""
        if value is None:
            return None
        if type(value) is not str:
            raise TimestampError(f"timestamp must be an RFC 3339 string or null, got {value!r}")
        if value in self.cache:
            return self.cache[value]
        return self.parse(value)

    def parse(self, value: str) -> int | None:
        """Parse and cache a timestamp string that is not cached yet."""
        nanos: int | None
        if len(value) == 20 and value[10] == "T" and value[19] == "Z" and value != _GO_ZERO_TEXT:
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                raise TimestampError(f"not an RFC 3339 timestamp: {value!r}") from None
            nanos = ((moment - _EPOCH) // _SECOND) * 1_000_000_000
        else:
            nanos = to_unix_nanos(parse_time(value))
        self.cache[value] = nanos
        return nanos


_GO_ZERO_TEXT = "0001-01-01T00:00:00Z"


def after_or_zero(t1: int | None, t2: int | None) -> bool:
    """Go's `afterOrZero`: True when t1 should be deleted before t2.

    A zero time counts as newer than any real time; otherwise the later time wins.
    """
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def go_log2_bucket(age_nanos: int) -> int:
    """`int64(math.Log2(float64(age)))` for a positive age, -1 for age <= 0.

    Computed the way Go's `math.Log2` does it (frexp, exact for powers of two,
    otherwise ln(frac)/ln 2 + exponent) rather than with `int.bit_length`, which
    disagrees with Go just below powers of two: 2**50 - 1 ns rounds up to 50.0 in
    float64, so Go says 50 where the exact answer is 49. Go's `math.Log` and the C
    library's `log` may differ in the last ulp, which could only matter for ages
    within a few nanoseconds of a power of two.
    """
    if age_nanos <= 0:
        return -1
    frac, exp = math.frexp(float(age_nanos))
    if frac == 0.5:
        return exp - 1
    return int(math.log(frac) * _INV_LN2 + exp)


# Below SAFE_BELOW_NEXT_POWER[k] an age with bit length k+1 is far enough from
# 2**(k+1) (relative gap >= 2**-40, against float64 errors of ~2**-46 at most)
# that Go's float computation and the exact floor(log2) agree: the bucket is k.
SAFE_BELOW_NEXT_POWER: tuple[int, ...] = tuple(2 ** (k + 1) - (2 ** (k + 1) >> 40) for k in range(256))


def log2_bucket(age_nanos: int) -> int:
    """The LogarithmicScaleDown bucket of an age in nanoseconds, exactly as Go computes it.

    Integer `bit_length` answers almost every age; ages just below a power of two
    (or beyond the table) take Go's float formula, `go_log2_bucket`.
    """
    if age_nanos <= 0:
        return -1
    k = age_nanos.bit_length() - 1
    if k < 256 and age_nanos < SAFE_BELOW_NEXT_POWER[k]:
        return k
    return go_log2_bucket(age_nanos)


def newest_first_key(t: int | None) -> int:
    """Ascending sort key equivalent to `afterOrZero`: zero time first, then newest first."""
    return 0 if t is None else NEWEST_FIRST - t


__all__ = [
    "NEWEST_FIRST",
    "SAFE_BELOW_NEXT_POWER",
    "TimeReader",
    "TimestampError",
    "after_or_zero",
    "go_log2_bucket",
    "log2_bucket",
    "newest_first_key",
    "to_unix_nanos",
]
