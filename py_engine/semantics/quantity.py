"""Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`, `64M`).

The scheduler compares a pod's requests against a node's allocatable, and the
Spreadgate controller does the same when it decides whether an existing pod
could have landed in a subset, so parsing must follow `resource.Quantity`
exactly: binary suffixes (Ki..Ei), decimal suffixes (n, u, m, "", k..E) and
decimal exponents (`1e3`, `5E-1`). Values are kept as exact `Fraction`s; the
integer views round *up* like `Quantity.Value()` / `MilliValue()` do, so a
request of `0.1m` cpu still counts as one millicore.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

__all__ = ["QuantityError", "milli_value", "parse_quantity", "value"]

_BINARY: dict[str, int] = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_DECIMAL: dict[str, Fraction] = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# Number: optional sign, digits with an optional fraction (".5" and "5." are legal).
# Suffix: a binary or decimal SI suffix, or a decimal exponent. "E" alone is exa.
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE]?)$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(raw: str | int | float) -> Fraction:
    """Parse a quantity into its exact value in base units (cores, bytes, pods)."""
    if isinstance(raw, bool):
        raise QuantityError(f"not a quantity: {raw!r}")
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(f"not a quantity: {raw!r}")
        return Fraction(Decimal(repr(raw)))
    if not isinstance(raw, str):
        raise QuantityError(f"not a quantity: {raw!r}")
    match = _QUANTITY.match(raw.strip())
    if match is None:
        raise QuantityError(f"not a quantity: {raw!r}")
    try:
        number = Fraction(Decimal(match.group("num")))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise QuantityError(f"not a quantity: {raw!r}") from exc
    suffix = match.group("suffix")
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    exponent = int(suffix[1:])
    if abs(exponent) > 60:
        raise QuantityError(f"quantity exponent out of range: {raw!r}")
    return number * Fraction(10) ** exponent


def value(quantity: Fraction) -> int:
    """Whole base units, rounded up (`Quantity.Value()`): bytes, pods."""
    return math.ceil(quantity)


def milli_value(quantity: Fraction) -> int:
    """Thousandths of a unit, rounded up (`Quantity.MilliValue()`): millicores."""
    return math.ceil(quantity * 1000)
