"""Go's encoding of numbers and the encoder's errors, literally (mutation run U1 found them unpinned).

Go's encoding/json writes a float64 as ES6 does (golang.org/issue/14135): the shortest digits
that read back to the same float, in fixed form when 1e-6 <= |x| < 1e21 (padded with zeros
when the digits end before the decimal point), in exponent form otherwise, and it cleans a
negative exponent's leading zero ("e-07" becomes "e-7") while a positive one keeps two digits
("e+21"). A JSON number decoded into Go's `interface{}` is a float64, so an integer past 2**53
is written as that float64 is. docs/uniteddeployment.md, "Revisions".
"""

from __future__ import annotations

import re

import pytest

from py_engine.uniteddeployment.controller.gojson import EncodingError, go_json

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e-6, "0.000001"),  # the lower end of the fixed form is inside it
        (-1e-6, "-0.000001"),
        (1.5e-5, "0.000015"),
        (1.2345678901234567e-6, "0.0000012345678901234567"),
        (9.99e-7, "9.99e-7"),
        (1e-7, "1e-7"),
        (-2.5e-9, "-2.5e-9"),
        (1.5e-20, "1.5e-20"),
        (1e-100, "1e-100"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (0.5, "0.5"),
        (2**53, "9007199254740992"),
        (float(2**60), "1152921504606847000"),
        (2**60, "1152921504606847000"),
        (2**64, "18446744073709552000"),
        (10**23, "1e+23"),
    ],
)
def test_numbers_are_written_as_go_writes_a_float64(value: float, expected: str) -> None:
    assert go_json(value) == expected
    assert go_json({"v": [value]}) == '{"v":[' + expected + "]}"


def test_what_cannot_be_encoded_is_refused_with_its_cause() -> None:
    with pytest.raises(EncodingError) as huge:
        go_json({"n": 10**400})
    assert str(huge.value) == "the number 10000000000000000000... is out of range"
    with pytest.raises(EncodingError) as nan:
        go_json([float("nan")])
    assert str(nan.value) == "nan is not representable in JSON"
    with pytest.raises(EncodingError) as infinite:
        go_json(float("-inf"))
    assert str(infinite.value) == "-inf is not representable in JSON"
    with pytest.raises(EncodingError, match=re.escape("cannot encode set as JSON")):
        go_json({"a": {1, 2}})


def test_keys_that_are_not_strings_are_sorted_as_the_strings_go_writes() -> None:
    # Go sorts a map's keys as strings: "10" before "9" (not 9 before 10).
    assert go_json({10: "a", 9: "b"}) == '{"10":"a","9":"b"}'
    assert go_json({10: "a", "9": "b"}) == '{"10":"a","9":"b"}'


def test_a_tree_too_large_to_check_quickly_is_still_written_as_go_does() -> None:
    # The fast path's check gives up after 1,000,000 values; a float it never reached must
    # still be written in Go's form.
    tree = [1e-7, *([None] * 1_000_000)]
    text = go_json(tree)
    assert text.startswith("[1e-7,null,") and len(text) == len("[1e-7]") + 5 * 1_000_000
