"""Kubernetes quantity parsing: every suffix family, exponents, rounding, rejects."""

from __future__ import annotations

from fractions import Fraction

import pytest

from py_engine.semantics.quantity import QuantityError, milli_value, parse_quantity, value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", Fraction(1)),
        ("500m", Fraction(1, 2)),
        ("250m", Fraction(1, 4)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("+2", Fraction(2)),
        ("-1", Fraction(-1)),
        ("100n", Fraction(1, 10**7)),
        ("3u", Fraction(3, 10**6)),
        ("1k", Fraction(1000)),
        ("2M", Fraction(2 * 10**6)),
        ("32G", Fraction(32 * 10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        ("1Ki", Fraction(1024)),
        ("128Mi", Fraction(128 * 2**20)),
        ("32Gi", Fraction(32 * 2**30)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1Ti", Fraction(2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("5e-1", Fraction(1, 2)),
        ("2.5e+2", Fraction(250)),
    ],
)
def test_parses_every_suffix_family(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


def test_numbers_are_accepted_as_is() -> None:
    assert parse_quantity(110) == 110
    assert parse_quantity(0.25) == Fraction(1, 4)


@pytest.mark.parametrize("text", ["", "abc", "1Z", "1 Gi", "Gi", "1ki", "1.2.3", "1e", "--1", "1e999", "m"])
def test_rejects_malformed(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("bad", [True, None, float("inf"), [1]])
def test_rejects_non_quantities(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)  # type: ignore[arg-type]


def test_integer_views_round_up_like_kubernetes() -> None:
    assert milli_value(parse_quantity("0.1m")) == 1
    assert milli_value(parse_quantity("1.5")) == 1500
    assert milli_value(parse_quantity("250m")) == 250
    assert value(parse_quantity("1.5")) == 2
    assert value(parse_quantity("1Ki")) == 1024
    assert value(parse_quantity("100m")) == 1


# ------------------------------------------- what mutation testing found unpinned (docs/testing.md)


@pytest.mark.parametrize(
    "raw", ["", "abc", "1.2.3", "5Zi", "--1", True, float("nan"), float("inf"), [1], None]
)
def test_what_is_not_a_quantity_is_named(raw: object) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(raw)
    assert str(caught.value) == f"not a quantity: {raw!r}"


def test_decimal_exponents_up_to_60_either_way() -> None:
    assert parse_quantity("1e60") == Fraction(10) ** 60
    assert parse_quantity("1e-60") == Fraction(1, 10**60)
    for raw in ("1e61", "1e-61"):
        with pytest.raises(QuantityError) as caught:
            parse_quantity(raw)
        assert str(caught.value) == f"quantity exponent out of range: {raw!r}"
