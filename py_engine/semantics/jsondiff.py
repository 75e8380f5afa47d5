"""A JSON Patch (RFC 6902) between two decoded JSON documents, for admission answers.

The mutating webhook answers with the operations turning the pod it received
into the pod it admits. Most of a pod is unchanged, and the admitted pod shares
its unchanged members with the received one (`py_engine.workloadspread.admission.inject` copies
only what it writes), so the diff skips a shared member on an identity check and
descends only where the two differ. Operations:
`remove` and `add` for object members, `add` at the end for items appended to
an array (tolerations, node selector terms), and `replace` for any other
change, arrays included (the result is the same document, with fewer
operations than an item-by-item array diff). Values compare as JSON does:
`1` and `true` differ.
"""

from __future__ import annotations

from typing import Any


def escape(token: str) -> str:
    """A JSON Pointer reference token (RFC 6901): `~` -> `~0`, `/` -> `~1`."""
    return token.replace("~", "~0").replace("/", "~1")


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON documents: the same members, with numbers and booleans of the same type
    (`==` alone takes `1` for `true`). Members shared by both sides are equal at once, so
    comparing a shallow copy with its original costs one identity check per member."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return len(a) == len(b) and all(key in b and json_equal(value, b[key]) for key, value in a.items())
    if kind is list:
        return len(a) == len(b) and all(map(json_equal, a, b))
    return bool(a == b)


def diff(source: Any, target: Any, path: str = "") -> list[dict[str, Any]]:
    """Operations that turn `source` into `target` (empty when they are equal)."""
    operations: list[dict[str, Any]] = []
    _diff(source, target, path, operations)
    return operations


def _diff(source: Any, target: Any, path: str, out: list[dict[str, Any]]) -> None:
    if source is target:  # a member shared by both sides is unchanged
        return
    if type(source) is dict and type(target) is dict:
        for key in source:
            if key not in target:
                out.append({"op": "remove", "path": f"{path}/{escape(str(key))}"})
        for key, value in target.items():
            if key not in source:
                out.append({"op": "add", "path": f"{path}/{escape(str(key))}", "value": value})
            elif source[key] is not value:
                _diff(source[key], value, f"{path}/{escape(str(key))}", out)
        return
    if json_equal(source, target):
        return
    if (
        type(source) is list
        and type(target) is list
        and len(target) > len(source)
        and json_equal(source, target[: len(source)])
    ):
        for index in range(len(source), len(target)):
            out.append({"op": "add", "path": f"{path}/{index}", "value": target[index]})
        return
    out.append({"op": "replace", "path": path, "value": target})
