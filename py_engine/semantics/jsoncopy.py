"""A deep copy for decoded JSON (dicts, lists and scalars), several times faster than `copy.deepcopy`.

Objects read from the API server are trees of dicts, lists, strings, numbers,
booleans and None: no cycles, no shared sub-objects that must stay shared, no
custom classes. `copy.deepcopy` pays for all of those (a memo dict, a dispatch
per value), which made it the largest single cost of a status write on the
admission path (docs/performance.md, "Costs found, and what changed"). Anything that is not a
dict or a list is treated as immutable and shared (tuples included).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

T = TypeVar("T")
_CONTAINERS = frozenset({dict, list})


def json_copy(value: T) -> T:
    """A copy of `value` sharing no dict or list with it."""
    return cast(T, _copy(value))


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        # Copied at C speed, then only the containers replaced: a map of scalars (a status's
        # creatingPods, hundreds of entries) costs a fraction of rebuilding it item by item.
        copied = value.copy()
        for key, item in value.items():
            if type(item) in _CONTAINERS:
                copied[key] = _copy(item)
        return copied
    if kind is list:
        return [item if type(item) not in _CONTAINERS else _copy(item) for item in value]
    if isinstance(value, dict):  # subclasses: rare, copied as plain containers
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value
