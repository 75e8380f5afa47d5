"""`json_copy` (py_engine/semantics/jsoncopy.py): a copy of decoded JSON that shares no dict or
list with the original, and shares everything else."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from py_engine.semantics.jsoncopy import json_copy

pytestmark = pytest.mark.timeout(30)


def _containers(value: Any) -> list[int]:
    """The ids of every dict and list inside `value`, itself included."""
    found: list[int] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(id(node))
            stack.extend(node.values())
        elif isinstance(node, list):
            found.append(id(node))
            stack.extend(node)
    return found


def test_a_copy_is_equal_and_shares_no_container() -> None:
    original: dict[str, Any] = {
        "metadata": {"name": "ws", "labels": {"a": "1"}},
        "spec": {"subsets": [{"name": "a", "values": ["x", ["y"]]}, 3, None]},
        "status": {"creatingPods": {"p1": "t"}},
        "n": 1.5,
        "ok": True,
    }
    copied = json_copy(original)
    assert copied == original
    assert not set(_containers(copied)) & set(_containers(original))
    copied["spec"]["subsets"][0]["values"][1].append("z")
    assert original["spec"]["subsets"][0]["values"][1] == ["y"]


def test_scalars_and_tuples_are_shared_not_copied() -> None:
    text, pair = "a" * 50, (1, [2])
    assert json_copy(text) is text
    assert json_copy(5) == 5 and json_copy(None) is None
    assert json_copy(pair) is pair
    assert json_copy({"t": pair})["t"] is pair and json_copy([text])[0] is text


def test_subclasses_are_copied_as_plain_containers_with_their_items() -> None:
    ordered = OrderedDict([("b", {"x": 1}), ("a", [1, {"y": 2}])])
    copied = json_copy(ordered)
    assert copied == {"b": {"x": 1}, "a": [1, {"y": 2}]} and list(copied) == ["b", "a"]
    assert copied["b"] is not ordered["b"]

    class Items(list[Any]):
        pass

    items = Items([{"k": "v"}, "s", 4])
    copied_items = json_copy(items)
    assert copied_items == [{"k": "v"}, "s", 4] and copied_items[0] is not items[0]
