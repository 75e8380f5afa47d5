"""A JSON Patch (RFC 6902) between two decoded JSON documents, for admission answers.

The mutating webhook answers with the operations turning the pod it received
into the pod it admits. Most of a pod is unchanged, so the diff compares
members with `==` (in C) and descends only where they differ. Operations:
`remove` and `add` for object members, `add` at the end for items appended to
an array (tolerations, node selector terms), and `replace` for any other
change, arrays included (the result is the same document, with fewer
operations than an item-by-item array diff). Values compare as JSON does:
`1` and `true` differ.
"""

from __future__ import annotations

import json
from typing import Any


def escape(token: str) -> str:
    """A JSON Pointer reference token (RFC 6901): `~` -> `~0`, `/` -> `~1`."""
    return token.replace("~", "~0").replace("/", "~1")


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON documents (`==` alone takes `1` for `true`)."""
    if a != b:
        return False
    if type(a) is type(b) and not isinstance(a, (dict, list)):
        return True
    return json.dumps(a) == json.dumps(b)


def diff(source: Any, target: Any, path: str = "") -> list[dict[str, Any]]:
    """Operations that turn `source` into `target` (empty when they are equal)."""
    operations: list[dict[str, Any]] = []
    _diff(source, target, path, operations)
    return operations


def _diff(source: Any, target: Any, path: str, out: list[dict[str, Any]]) -> None:
    if source is target or json_equal(source, target):  # a member shared by both sides is unchanged
        return
    if isinstance(source, dict) and isinstance(target, dict):
        for key in source:
            if key not in target:
                out.append({"op": "remove", "path": f"{path}/{escape(str(key))}"})
        for key, value in target.items():
            member = f"{path}/{escape(str(key))}"
            if key in source:
                _diff(source[key], value, member, out)
            else:
                out.append({"op": "add", "path": member, "value": value})
        return
    if (isinstance(source, list) and isinstance(target, list) and len(target) > len(source)
            and json_equal(source, target[:len(source)])):
        for index in range(len(source), len(target)):
            out.append({"op": "add", "path": f"{path}/{index}", "value": target[index]})
        return
    out.append({"op": "replace", "path": path, "value": target})
