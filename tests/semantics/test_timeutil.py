"""`format_time` gives what `strftime` gives for the moment in UTC, whatever the moment's time
zone; `parse_time` reads RFC 3339 with `Z` or an offset."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from py_engine.semantics.timeutil import (
    TimestampError,
    format_micro_time,
    format_time,
    parse_time,
    parse_time_or_none,
)

pytestmark = pytest.mark.timeout(60)

ZONES = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))])


@given(
    st.lists(
        st.tuples(st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2200, 1, 1)), ZONES),
        min_size=1,
        max_size=20,
    )
)
def test_every_moment_formats_as_strftime_in_utc(moments: list[tuple[datetime, timezone]]) -> None:
    for naive, zone in moments:
        moment = naive.replace(tzinfo=zone)
        utc = moment.astimezone(UTC)
        literal = (
            f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"
        )
        assert format_time(moment) == utc.strftime("%Y-%m-%dT%H:%M:%SZ") == literal


def test_neighbouring_seconds_and_zones_each_format_as_themselves() -> None:
    first = datetime(2024, 6, 1, 12, 0, 0, 100_000, tzinfo=UTC)
    assert format_time(first) == "2024-06-01T12:00:00Z"
    assert format_time(first.replace(microsecond=900_000)) == "2024-06-01T12:00:00Z"
    assert format_time(datetime(2024, 6, 1, 11, 59, 59, tzinfo=UTC)) == "2024-06-01T11:59:59Z"
    assert format_time(first.astimezone(timezone(timedelta(hours=-8)))) == "2024-06-01T12:00:00Z"
    assert (
        format_time(datetime(2024, 6, 1, 4, 0, 0, tzinfo=timezone(timedelta(hours=-8))))
        == "2024-06-01T12:00:00Z"
    )


def test_the_same_second_in_another_zone_or_microsecond_gives_the_same_text() -> None:
    moment = datetime(2024, 6, 1, 12, 0, 0, 999_999, tzinfo=UTC)
    assert format_time(moment) == "2024-06-01T12:00:00Z"
    assert format_time(moment.astimezone(timezone(timedelta(hours=2)))) == "2024-06-01T12:00:00Z"
    assert format_time(moment + timedelta(microseconds=1)) == "2024-06-01T12:00:01Z"
    assert format_time(datetime(1969, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC)) == "1969-12-31T23:59:59Z"
    assert parse_time(format_time(moment)) == moment.replace(microsecond=0)


# ------------------------------------------- what mutation testing found unpinned (docs/testing.md)


@pytest.fixture
def far_east_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone set to UTC+05:30, so a conversion to local time shows."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_formatting_and_parsing_are_utc_whatever_the_local_zone(far_east_local_time: None) -> None:
    format_time(datetime(2000, 1, 1, tzinfo=UTC))  # another second first: no reused text below
    moment = datetime(2031, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(moment) == "2031-03-04T03:06:07Z"
    assert format_micro_time(moment.replace(microsecond=123456)) == "2031-03-04T03:06:07.123456Z"
    parsed = parse_time("2024-06-01T12:00:00+02:00")
    assert parsed.utcoffset() == timedelta(0) and parsed.hour == 10


@pytest.mark.parametrize(
    "text", ["2024-06-01T10:00:00Z", "2024-06-01T10:00:00z", "2024-06-01T12:00:00+02:00"]
)
def test_both_zulu_spellings_and_offsets_parse(text: str) -> None:
    assert parse_time(text) == datetime(2024, 6, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5, "timestamp must be a non-empty RFC 3339 string, got 5"),
        ("", "timestamp must be a non-empty RFC 3339 string, got ''"),
        ("yesterday", "not an RFC 3339 timestamp: 'yesterday'"),
        ("2024-06-01T10:00:00", "timestamp has no time zone: '2024-06-01T10:00:00'"),
    ],
)
def test_unreadable_timestamps_say_why(value: object, message: str) -> None:
    with pytest.raises(TimestampError) as caught:
        parse_time(value)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.parametrize("value", [None, "", 0, 1.5, "yesterday", "2024-06-01T12:00:00", {"t": 1}])
def test_a_missing_or_unreadable_time_reads_as_none(value: object) -> None:
    assert parse_time_or_none(value) is None


def test_a_readable_time_reads_as_parse_time_reads_it() -> None:
    assert parse_time_or_none("2024-06-01T14:00:00+02:00") == datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_time_or_none("2024-06-01T12:00:00Z") == parse_time("2024-06-01T12:00:00Z")
