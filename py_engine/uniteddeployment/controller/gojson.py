"""JSON bytes as Go's encoding/json writes a generic map, and Kubernetes' history hash.

The revision name must be byte-identical to Kruise's for the same template, so the
data is encoded as Go does it for `map[string]interface{}`: keys sorted, no
spaces, `<`, `>`, `&`, U+2028 and U+2029 escaped, numbers as float64 in Go's
shortest form. The hash is 32-bit FNV-1 (not 1a) of the data followed by the
decimal collision count, rendered with Kubernetes' SafeEncodeString alphabet.
docs/uniteddeployment.md, "Revisions".
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class EncodingError(ValueError):
    """A value that JSON cannot carry (NaN, infinity, a non-JSON type)."""


def _number(value: float) -> str:
    """Go's float64 formatting (ES6's): the shortest digits (Python's repr has the same), in
    fixed form inside [1e-6, 1e21), padded with zeros when the digits end before the point
    (2**60 is 1152921504606847000); outside it in exponent form, a negative exponent without
    leading zeros (1e-7) and a positive one with at least two digits (1e+21)."""
    if math.isnan(value) or math.isinf(value):
        raise EncodingError(f"{value!r} is not representable in JSON")
    magnitude = abs(value)
    if value == int(value) and magnitude < _SAFE_INT:
        return str(int(value))  # below 2**53 a whole float's shortest digits are all its digits
    if 1e-6 <= magnitude < 1e21:
        text = repr(value)
        if "e" in text:  # Python switches to exponent form earlier than Go: same digits, fixed form
            text = format(Decimal(text), "f")
        return text.removesuffix(".0")
    mantissa, _, exponent = repr(value).partition("e")
    sign = "-" if exponent.startswith("-") else "+"
    digits = exponent.lstrip("+-").lstrip("0")
    return f"{mantissa}e{sign}{digits if sign == '-' else digits.rjust(2, '0')}"


def _string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


_SAFE_INT = 2**53


def _plain(value: Any) -> bool:
    """Is `value` a tree `json.dumps` writes as Go does: dicts with string keys, lists, strings,
    booleans, None and integers below 2**53 (no float: Go's float formatting is not Python's)?"""
    pending = [value]
    for _ in range(1_000_000):
        if not pending:
            return True
        item = pending.pop()
        if isinstance(item, dict):
            if not all(type(key) is str for key in item):
                return False
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, int):  # bool included
            if not -_SAFE_INT < item < _SAFE_INT:
                return False
        elif item is not None and not isinstance(item, str):
            return False
    return False


def go_json(value: Any) -> str:
    """`value` encoded as Go encodes the equivalent `interface{}` tree.

    A plain tree (`_plain`: what a pod template nearly always is) is written by the C encoder,
    then Go's HTML escapes are applied to the whole text (`<`, `>`, `&`, U+2028 and U+2029 can
    only stand inside its strings): the revision hash is taken on every pass of every
    UnitedDeployment, and this was a tenth of a steady pass over 1,000 (docs/scale.md).
    """
    if _plain(value):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        for raw, escaped in _GO_ESCAPES.items():
            if raw in text:
                text = text.replace(raw, escaped)
        return text
    return _encode(value)


def _encode(value: Any) -> str:
    """`go_json` one value at a time: floats, integers past 2**53, keys that are not strings."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) < 2**53:
            return str(value)
        try:
            return _number(float(value))
        except OverflowError:  # beyond float64: Go cannot decode it either
            raise EncodingError(f"the number {str(value)[:20]}... is out of range") from None
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_string(k)}:{_encode(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    raise EncodingError(f"cannot encode {type(value).__name__} as JSON")


def fnv1_32(data: bytes) -> int:
    digest = _FNV_OFFSET
    for byte in data:
        digest = (digest * _FNV_PRIME) & 0xFFFFFFFF
        digest ^= byte
    return digest


def safe_encode(text: str) -> str:
    """Kubernetes' SafeEncodeString: each byte mapped into a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[ord(ch) % len(_SAFE_ALPHABET)] for ch in text)


def history_hash(data: bytes, collision_count: int) -> str:
    return safe_encode(str(fnv1_32(data + str(collision_count).encode())))
