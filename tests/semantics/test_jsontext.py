"""`compact` (py_engine/semantics/jsontext.py): the exact text `json.dumps` gives with compact
separators, which patches and annotation values are compared by."""

from __future__ import annotations

import pytest

from py_engine.semantics.jsontext import compact

pytestmark = pytest.mark.timeout(30)


def test_compact_text_has_no_spaces_and_keeps_key_order() -> None:
    assert compact({"name": "ws", "subset": "a b", "n": [1, 2.5, None, True]}) == (
        '{"name":"ws","subset":"a b","n":[1,2.5,null,true]}'
    )
    assert compact({"b": 1, "a": {}}) == '{"b":1,"a":{}}'


def test_compact_escapes_as_json_dumps_does() -> None:
    assert compact('é"\n') == '"\\u00e9\\"\\n"'
