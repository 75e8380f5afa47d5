"""Go's JSON encoding of numbers and its error messages: what mutation testing (run U1) found
unpinned. Go's `encoding/json` writes a float64 in fixed form when 1e-6 <= |x| < 1e21 and in
exponent form (at least two exponent digits, `e-07`, `e+21`) outside; NaN and infinities and
other types cannot be encoded."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.uniteddeployment.controller.gojson import EncodingError, go_json

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-6, "0.000001"),  # the smallest fixed-form magnitude, which Python writes as 1e-06
        (-1.5e-5, "-0.000015"),
        (9.99e-7, "9.99e-07"),
        (1e-10, "1e-10"),
        (1e30, "1e+30"),
        (1.25e21, "1.25e+21"),
        (1e20, "100000000000000000000"),
        (0.5, "0.5"),
    ],
)
def test_floats_are_written_as_go_writes_them(value: float, text: str) -> None:
    assert go_json([value]) == f"[{text}]"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "nan is not representable in JSON"),
        (float("-inf"), "-inf is not representable in JSON"),
        (10**400, "the number 10000000000000000000... is out of range"),
        ({1, 2}, "cannot encode set as JSON"),
        (object(), "cannot encode object as JSON"),
    ],
)
def test_what_cannot_be_encoded_is_named(value: Any, message: str) -> None:
    with pytest.raises(EncodingError) as caught:
        go_json({"a": [value]})
    assert str(caught.value) == message
