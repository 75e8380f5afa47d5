"""The one eviction rule of bounded caches (the placement query's eligibility decisions and subset
inputs, spread views, patch verdicts): least recently used entries leave first."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def put_recent(entries: OrderedDict[K, V], key: K, value: V, maxsize: int) -> None:
    """Store `value` under `key` as the most recently used entry, then drop the least recently
    used ones beyond `maxsize`. The caller holds the cache's lock."""
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > maxsize:
        entries.popitem(last=False)
