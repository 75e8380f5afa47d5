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
    """Go's float64 formatting: shortest repr, exponent form outside [1e-6, 1e21)."""
    if math.isnan(value) or math.isinf(value):
        raise EncodingError(f"{value!r} is not representable in JSON")
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = repr(value)
        if "e" in text:  # Python switches to exponent form earlier than Go: same digits, fixed form
            text = format(Decimal(text), "f")
        return text
    mantissa, _, exponent = repr(value).partition("e")
    sign = "-" if exponent.startswith("-") else "+"
    digits = exponent.lstrip("+-").lstrip("0").rjust(2, "0")
    return f"{mantissa}e{sign}{digits}"


def _string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def go_json(value: Any) -> str:
    """`value` encoded as Go encodes the equivalent `interface{}` tree."""
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
        return "{" + ",".join(f"{_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
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
