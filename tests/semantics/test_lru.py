"""`put_recent`: the bounded caches' eviction rule."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from py_engine.semantics.lru import put_recent

pytestmark = pytest.mark.timeout(30)


def test_least_recently_used_entries_leave_first() -> None:
    entries: OrderedDict[str, int] = OrderedDict()
    for i, key in enumerate("abc"):
        put_recent(entries, key, i, maxsize=3)
    entries.move_to_end("a")  # a read
    put_recent(entries, "d", 3, maxsize=3)
    assert list(entries) == ["c", "a", "d"]
    put_recent(entries, "c", 9, maxsize=3)  # a re-put is the most recent
    assert list(entries.items()) == [("a", 0), ("d", 3), ("c", 9)]
    put_recent(entries, "e", 4, maxsize=1)
    assert list(entries) == ["e"]
